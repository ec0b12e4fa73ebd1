"""run_qtable's work: the search and the two tables it writes (the command: tpudsl/cli/run_qtable.py;
the scheme: docs/quantization.md, "Mixed precision")."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from tpudsl.backend.chips import chip_for
from tpudsl.cli.calibration_run import list_samples, sample_loader
from tpudsl.cli.model_score import dequantized_runs, scored_part, scoring
from tpudsl.cli.post_process import PostProcess, load_post_process
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import loc_name
from tpudsl.interp.module_interpreter import run_samples
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, load_module, write_files_atomically
from tpudsl.lowering.calibration import tensor_names
from tpudsl.lowering.calibration_table import TableEntry, read_table
from tpudsl.lowering.import_calibration import import_table
from tpudsl.lowering.top_to_tpu_int8 import INT8_LOWERINGS, lower_int8
from tpudsl.passes import pass_class


def check_cos(flag: str, value: float) -> None:
    if not 0.0 < value <= 1.0:
        raise TpudslError(f"{flag} must be in (0, 1], not {value:g}")


def chip_and_float_mode(processor: str, fp_type: str) -> tuple[str, str]:
    """(the chip's name, the float mode of the kept layers) for --processor and --fp_type (AUTO:
    F16 where the chip has it, else F32); the chip must have INT8 and that mode."""
    chip = chip_for(processor, "--processor")
    fp = fp_type if fp_type != "AUTO" else ("F16" if "F16" in chip.modes else "F32")
    for mode in ("INT8", fp):
        if mode not in chip.modes:
            raise TpudslError(f"chip '{chip.name}' has no {mode} mode (it has {', '.join(chip.modes)})")
    return chip.name, fp


class Int8Search:
    """Lowers fresh copies of the calibrated module with a qtable and scores them against Top
    (run_qtable's layers; run_calibration --search search_threshold's tables, given per call).
    `where`: the file `table` was read from, named in its errors. The .mlir is read and cut to its
    scored part once; each score lowers a clone of that."""

    def __init__(self, mlir: str, table: Mapping[str, TableEntry], chip: str, samples: list[dict[str, np.ndarray]],
                 asymmetric: bool, where: str | None = None, compare_layers: str = "",
                 post_process: PostProcess | None = None):
        self.table, self.where, self.chip = table, where, chip
        self.samples, self.asymmetric = samples, asymmetric
        self.top = scored_part(load_module(mlir))
        self.layers = [loc_name(op) for op in self.top.main_func().body.block.ops if op.name in INT8_LOWERINGS]
        self.scoring = scoring(self.top, compare_layers, post_process)
        self.reference = self.scoring.reference(self.runs(self.top, "float"))
        self.lowered({})  # a bad table or chip, or a scored tensor it fuses away, fails here, before any search

    def lowered(self, qtable: Mapping[str, str], table: Mapping[str, TableEntry] | None = None) -> TopModule:
        """A clone of the scored module lowered with `qtable` (the lowering rewrites in place),
        checked to keep the scored tensors: each lowering, as the calibration tables of
        run_sensitive_layer's and search_threshold's calls decide which clamps it drops."""
        clone = self.top.clone()
        lowered = lowered_int8(clone, self.table if table is None else table, self.chip, self.asymmetric, qtable,
                               self.where)
        self.scoring.check_lowered(lowered)
        return lowered

    def runs(self, top: TopModule, which: str) -> Sequence[Mapping[str, np.ndarray]]:
        """What is compared of `top`'s runs on the samples (`which`: "float" or "INT8"): the scored
        tensors, the quantized ones dequantized, or --post_process's arrays of them."""
        if not self.scoring.layers:  # the outputs: float in every lowering
            runs = run_samples(top.module, top.weights, self.samples)[0]
        else:
            runs = dequantized_runs(top, self.samples, self.scoring.layers)
        return self.scoring.compared(runs, which)

    def cosine(self, qtable: Mapping[str, str], table: Mapping[str, TableEntry] | None = None) -> float:
        """The model's cosine with Top (`self.scoring`'s: cli/model_score.py), lowered with
        `qtable` and the calibration `table` (default: the one given at init)."""
        return self.scoring.cosine(self.runs(self.lowered(qtable, table), "INT8"), self.reference)


def lowered_int8(top: TopModule, table: Mapping[str, TableEntry], chip: str, asymmetric: bool,
                 qtable: Mapping[str, str] | None = None, where: str | None = None) -> TopModule:
    """`top` lowered in place to INT8 with the calibration `table` (read from the file `where`, if
    any), as model_deploy INT8 lowers it (cli/deploy.py), with the qtable given as a mapping."""
    import_table(top.module, table, asymmetric, where)
    pass_class("processor-assign")(chip=chip, mode="INT8").apply(make_context(), top.module)
    lower_int8(top, qtable or {}, asymmetric=asymmetric)  # not the pass: it reads its qtable from a file
    return top


def search(s: Int8Search, fp: str, expected_cos: float, min_layer_cos: float,
           progress: Callable[[str], None]) -> tuple[list[tuple[str, float]], list[str], float]:
    """(every layer's INT8-alone cosine, worst first; the layers to keep in `fp`; the final cosine)."""
    losses = []
    for i, layer in enumerate(s.layers):
        losses.append((layer, s.cosine({other: fp for other in s.layers if other != layer})))
        progress(f"layer {i + 1}/{len(s.layers)} '{layer}' alone in INT8: cosine {losses[-1][1]:.6f}")
    losses.sort(key=lambda lc: lc[1])
    below = [layer for layer, cos in losses if cos < min_layer_cos]
    kept, cos = float_until(s, below, [layer for layer, cos in losses if cos >= min_layer_cos], fp, expected_cos,
                            f"{len(below)} layers in {fp} (below --min_layer_cos)", progress)
    return losses, kept, cos


def float_until(s: Int8Search, kept: Sequence[str], worst_first: Sequence[str], fp: str, expected_cos: float,
                first: str, progress: Callable[[str], None],
                table: Mapping[str, TableEntry] | None = None) -> tuple[list[str], float]:
    """The model scored with `kept` in `fp` (the line `first` says so), then the next of
    `worst_first` added to them, one at a time, until it reaches `expected_cos` or none is left;
    (the layers in `fp`, the cosine reached). `table`: as Int8Search.cosine's."""
    kept = list(kept)
    cos = s.cosine({layer: fp for layer in kept}, table)
    progress(f"{first}: cosine {cos:.6f}")
    for layer in worst_first:
        if cos >= expected_cos:
            break
        kept.append(layer)
        cos = s.cosine({layer: fp for layer in kept}, table)
        progress(f"+ '{layer}' in {fp}: cosine {cos:.6f}")
    return kept, cos


def run_qtable(args: argparse.Namespace) -> None:
    """The command after its arguments are parsed (tpudsl/cli/run_qtable.py)."""
    check_cos("--expected_cos", args.expected_cos)
    check_cos("--min_layer_cos", args.min_layer_cos)
    if args.input_num < 0:
        raise TpudslError(f"--input_num must be 0 (all samples) or more, not {args.input_num}")
    chip, fp = chip_and_float_mode(args.processor, args.fp_type)
    post_process = load_post_process(args.post_process)
    top = load_module(args.mlir)
    loader = sample_loader(top)
    samples = [loader(spec) for spec in list_samples(args.dataset, args.data_list, args.input_num)]
    table = read_table(args.calibration_table, set(tensor_names(top.module)))
    s = Int8Search(args.mlir, table, chip, samples, args.asymmetric, args.calibration_table,
                   args.global_compare_layers, post_process)
    progress = (lambda line: None) if args.quiet else (lambda line: print(f"run_qtable: {line}", file=sys.stderr))
    losses, kept, cos = search(s, fp, args.expected_cos, args.min_layer_cos, progress)
    if cos < args.expected_cos:
        raise TpudslError(f"every layer in {fp} reaches only cosine {cos:.6f} < --expected_cos {args.expected_cos:g} "
                          "(the calibration table or the float type limits it); nothing written")
    int8 = "asymmetric" if args.asymmetric else "symmetric"
    loss_text = f"# chip: {chip}  mix_mode: {fp}  int8: {int8}\n" + "".join(
        f"No.{i:<4}: Layer: {layer:<40} Cos: {c:.6f}\n" for i, (layer, c) in enumerate(losses))
    qtable_text = f"# op_name   quantize_mode\n# output cosine {cos:.6f} vs Top ({int8} INT8)\n" + "".join(
        f"{n} {fp}\n" for n in kept)
    write_files_atomically([(args.loss_table, lambda f: f.write(loss_text.encode())),
                            (args.output, lambda f: f.write(qtable_text.encode()))])
    progress(f"wrote {args.output} ({len(kept)} of {len(s.layers)} layers in {fp}, cosine {cos:.6f}) "
             f"and {args.loss_table}")
