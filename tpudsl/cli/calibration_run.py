"""What run_calibration does once its arguments are parsed: samples, statistics, the table
(docs in tpudsl/cli/run_calibration.py). Kept apart from the argument parser so that
`run_calibration --help` imports nothing heavy."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tpudsl.backend.chips import chip_for
from tpudsl.cli.model_runner import input_shapes
from tpudsl.cli.model_score import scoring_of
from tpudsl.cli.post_process import PostProcess, load_post_process
from tpudsl.dialects.opdef import SPECS, AttrView
from tpudsl.frontend.preprocess import Preprocess, is_image
from tpudsl.frontend.test_inputs import load_test_inputs
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, load_module, write_atomically
from tpudsl.lowering.calibration import CalibrationResult, calibrate
from tpudsl.lowering.calibration_table import TableEntry, table_text

SAMPLE_SUFFIXES = (".npz", ".npy")
SELECTED_LIST = "selected_image_list.txt"  # TPU-MLIR's names, in the working directory
SELECTED_TUNE_LIST = "selected_tune_image_list.txt"
TUNE_LIST_DEFAULT = 5  # TPU-MLIR's --tune_num default, which tpudsl keeps for --tune_list only


@dataclass(frozen=True)
class SampleLoader:
    """One sample (comma-separated files) -> the model's inputs; picklable for worker processes."""

    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    preprocess: Preprocess | None

    def __call__(self, spec: str) -> dict[str, np.ndarray]:
        try:
            return load_test_inputs([f.strip() for f in spec.split(",") if f.strip()], self.names, self.shapes, self.preprocess)
        except TpudslError as e:  # name the sample: a worker may meet it long after the start
            raise TpudslError(f"sample '{spec}': {e.message}") from None


def sample_loader(mod: TopModule) -> SampleLoader:
    shapes = input_shapes(mod)
    for name, shape in shapes.items():
        if shape is None or None in shape:
            raise TpudslError(f"input '{name}' has no static shape; calibration needs one")
    return SampleLoader(tuple(shapes), tuple(tuple(s) for s in shapes.values()), recorded_preprocess(mod))


def recorded_preprocess(mod: TopModule) -> Preprocess | None:
    """The preprocessing model_transform recorded on the (first) `top.Input` that has one."""
    for op in mod.main_func().body.block.ops:
        if op.name != "top.Input":
            continue
        a = AttrView(op.attributes, SPECS["top.Input"])
        if a.get("do_preprocess", False):
            resize = a.get("resize_dims")
            return Preprocess(
                mean=tuple(a.get("mean", [0.0])), scale=tuple(a.get("scale", [1.0])),
                pixel_format=a.get("pixel_format", "bgr"), channel_format=a.get("channel_format", "nchw"),
                resize_dims=tuple(resize) if resize else None, keep_aspect_ratio=bool(a.get("keep_aspect_ratio", False)),
                keep_ratio_mode=a.get("keep_ratio_mode", "letterbox"), pad_type=a.get("pad_type", "center"),
                pad_value=int(a.get("pad_value", 0)),
            )
    return None


def list_samples(dataset: str | None, data_list: str | None, input_num: int, flag: str = "--data_list") -> list[str]:
    """The samples of --dataset DIR, or of the list file `data_list` (given by `flag`), the first `input_num` (0: all)."""
    if dataset is not None:
        if not os.path.isdir(dataset):
            raise TpudslError(f"--dataset '{dataset}' is not a directory")
        samples = sorted(str(p) for p in Path(dataset).iterdir()
                         if p.is_file() and (p.suffix.lower() in SAMPLE_SUFFIXES or is_image(p)))
        where = f"--dataset '{dataset}' has no .npz, .npy or image files"
    else:
        try:
            with open(data_list, encoding="utf-8") as f:
                samples = [line.strip() for line in f if line.strip() and not line.lstrip().startswith("#")]
        except OSError as e:
            raise TpudslError(f"cannot read {flag} '{data_list}': {e.strerror or e}") from None
        where = f"{flag} '{data_list}' lists no samples"
        for number, line in enumerate(samples, start=1):
            for f in line.split(","):
                if f.strip() and not os.path.isfile(f.strip()):
                    raise TpudslError(f"{data_list}: sample {number}: cannot open '{f.strip()}': No such file")
    if not samples:
        raise TpudslError(where)
    return samples[:input_num] if input_num > 0 else samples


def tuning_samples(args: argparse.Namespace, samples: list[str]) -> list[str]:
    """TPU-MLIR's tuning samples: the first --tune_num lines of --tune_list (5 when not given, 0:
    all), else the first --tune_num calibration samples (none when not given: no tuning)."""
    if args.tune_list:
        return list_samples(None, args.tune_list, TUNE_LIST_DEFAULT if args.tune_num is None else args.tune_num,
                            "--tune_list")
    return samples[:args.tune_num] if args.tune_num else []


def run_calibration(args: argparse.Namespace) -> None:
    """run_calibration's work, once its arguments are parsed (tpudsl/cli/run_calibration.py)."""
    if args.histogram_bin_num < 128:
        raise TpudslError(f"--histogram_bin_num must be at least 128 (the int8 levels KLD merges into), not {args.histogram_bin_num}")
    if args.input_num < 0:
        raise TpudslError(f"--input_num must be 0 (all samples) or more, not {args.input_num}")
    if args.workers < 1:
        raise TpudslError(f"--workers must be at least 1, not {args.workers}")
    post_process = load_post_process(args.post_process)  # before any calibration work
    mod = load_module(args.mlir)
    if args.global_compare_layers:  # before any calibration, against the tensors --search and --bc score
        scoring_of(mod, args.global_compare_layers)
    loader = sample_loader(mod)
    samples = list_samples(args.dataset, args.data_list, args.input_num)
    loader(samples[0])  # a bad first sample fails here, before any worker starts
    tune_specs = tuning_samples(args, samples)
    tune_inputs = [loader(spec) for spec in tune_specs]  # a bad tuning sample fails before the calibration
    search_inputs = []
    if args.search == "search_threshold":  # its samples: the first --inference_num of the calibration's
        chip_for(args.processor, "run_calibration: --search search_threshold deploys for --processor")
        search_inputs = [loader(spec) for spec in samples[:args.inference_num]]
    bc = getattr(args, "bc", False)
    if bc:  # its samples: the first --bc_inference_num of the calibration's, as TPU-MLIR's input_num
        chip_for(args.processor, "run_calibration: --bc deploys for --processor")
        bc_inputs = [loader(spec) for spec in samples[:args.bc_inference_num]]
    rewritten = None
    if getattr(args, "sq", False) or getattr(args, "we", False) or bc:
        from tpudsl.cli import calibration_rewrite as rw

        rewritten = rw.rewritten_path(args)
    bars = ProgressBars(args.quiet)
    ranges: dict[str, tuple[float, float]] = {}
    try:
        notes = rw.rewrite_for_calibration(args, mod, samples, loader, bars.new) if rewritten is not None else []

        def table() -> tuple[dict[str, TableEntry], str]:
            if rewritten is not None and args.scheduler:  # the cluster's workers read the module from its path
                rw.save_rewritten(mod, rewritten)
            result = calibrate(str(rewritten or args.mlir), samples, loader, args.histogram_bin_num, args.workers,
                               bars.new("calibration", len(samples)), args.method != "minmax", mod, args.scheduler)
            ranges.update(result.ranges)
            entries, tuned = _thresholds(args, mod, result, tune_inputs, search_inputs, bars, post_process)
            return entries, table_text(entries, args.histogram_bin_num, len(samples),
                                       tuned=len(tune_inputs) if tuned else 0)

        entries, text = table()
        if bc:  # after the table, as TPU-MLIR; a corrected module is calibrated again, as TPU-MLIR's
            from tpudsl.cli.bias_correction import correct_biases

            bars.close()
            corrected, lines = correct_biases(args, mod, entries, bc_inputs)
            notes += lines
            if corrected:
                _, text = table()
    finally:
        bars.close()
    table = (args.output, lambda f: f.write(text.encode()))
    if rewritten is not None and not args.scheduler:  # the module and its table appear together, or neither
        rw.save_rewritten(mod, rewritten, [table])
    else:
        write_atomically(*table)
    if rewritten is not None:
        rw.tell(notes, rewritten)
    _tell_masks(mod, ranges)
    if getattr(args, "dump_list", False):  # --debug_cmd dump_list: one sample per line, as TPU-MLIR's DataSelector.dump
        write_atomically(SELECTED_LIST, lambda f: f.write("".join(f"{s}\n" for s in samples).encode()))
        if args.tune_list:
            write_atomically(SELECTED_TUNE_LIST, lambda f: f.write("".join(f"{s}\n" for s in tune_specs).encode()))


def _tell_masks(mod: TopModule, ranges: dict[str, tuple[float, float]]) -> None:
    """The ops an INT8 deploy with this table keeps in F32 because tensors hold attention-mask fill values."""
    from tpudsl.lowering.overflow import fill_rule, int8_mask_ops

    keep = int8_mask_ops(list(mod.main_func().body.block.ops), ranges)
    if keep:
        print(f"run_calibration: some tensors hold attention-mask fill values ({fill_rule('INT8')}): no int8 "
              "scale keeps their other values, so model_deploy --quantize INT8 "
              "keeps the ops that compute or read them in F32 (a --quantize_table line naming one wins):",
              *(f"{name} F32" for name in keep), sep="\n", file=sys.stderr)


def _thresholds(args: argparse.Namespace, mod: TopModule, result: CalibrationResult, tune_inputs: list,
                search_inputs: list, bars: ProgressBars,
                post_process: PostProcess | None) -> tuple[dict[str, TableEntry], bool]:
    """The entries to write and whether they were tuned: the method's thresholds, tuned on
    `tune_inputs` when given; with --search search_threshold (`search_inputs`) every method's, the
    kld ones tuned (TPU-MLIR tunes its KL table only), and the best method's (scored through
    `post_process`, --post_process's function, if given)."""
    say = (lambda line: None) if args.quiet else (lambda line: print(f"run_calibration: {line}", file=sys.stderr))
    methods = (args.method,)
    if search_inputs:
        from tpudsl.cli.threshold_search import SEARCHED, best_method

        methods = SEARCHED
    tables = {m: result.table(m) for m in methods}
    tuned = "kld" if search_inputs else args.method
    if tune_inputs:
        from tpudsl.lowering.threshold_tune import pairs, tune

        untuned = tables[tuned]
        tables[tuned], tunings = tune(mod, untuned, tune_inputs, bars.new("tuning", len(pairs(mod)), "tensor"))
        bars.close()
        raised = sum(tables[tuned][n].threshold != e.threshold for n, e in untuned.items())
        say(f"tuned on {len(tune_inputs)} samples: {raised} of {len(untuned)} {tuned} thresholds raised "
            f"({len(tunings)} tensor-reader pairs tried)")
    if not search_inputs:
        return tables[args.method], bool(tune_inputs)
    bars.close()
    chosen, _ = best_method(args.mlir, tables, args.processor, search_inputs,
                            lambda line: say(f"search_threshold: {line}"), args.global_compare_layers, post_process)
    say(f"search_threshold: chose {chosen}")
    return tables[chosen], bool(tune_inputs) and chosen == tuned


class ProgressBars:
    """The progress bars of one run (none with --quiet): one per pass over the samples."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.open: list = []

    def new(self, what: str, total: int, unit: str = "sample") -> Callable[[int], object] | None:
        if self.quiet:
            return None
        from tqdm import tqdm

        self.close()
        self.open.append(tqdm(total=total, desc=what, unit=unit))
        return self.open[-1].update

    def close(self) -> None:
        while self.open:
            self.open.pop().close()
