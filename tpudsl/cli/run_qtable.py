"""run_qtable: the fewest layers to keep in a float type so that INT8 reaches an output cosine.

  run_qtable X.mlir (--dataset DIR | --data_list FILE) --calibration_table T --processor bm1684x
      [--input_num 10] [--expected_cos 0.99] [--min_layer_cos 0.99] [--fp_type auto|F16|F32|BF16]
      [--loss_table full_loss_table.txt] [--quiet] -o X_qtable

TPU-MLIR's mixed-precision search (python/calibration/search_qtable.py), in its cheap form:

1. each layer that has an INT8 form is lowered alone in INT8, every other one in --fp_type, and
   its loss is the model's output cosine against Top on the samples (the loss table, worst first);
2. the layers whose cosine is below --min_layer_cos go to --fp_type at once; then, worst first,
   one more layer at a time until the whole INT8 model's cosine reaches --expected_cos.

A model's cosine is the smallest, over its outputs, of the mean over samples of the cosine with
Top's output. The qtable (`name MODE` lines, tpudsl/lowering/qtable.py) is what model_deploy
--quantize INT8 --quantize_table reads. docs/quantization.md, "Mixed precision".
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from tpudsl.backend.chips import chip_named
from tpudsl.cli.compare import cosine_similarity
from tpudsl.cli.errors import CliArgumentParser, run_cli
from tpudsl.cli.run_calibration import list_samples, sample_loader
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import loc_name
from tpudsl.interp import ModuleInterpreter
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, load_module, write_files_atomically
from tpudsl.lowering.qtable import QTABLE_MODES
from tpudsl.lowering.top_to_tpu_int8 import INT8_LOWERINGS, lower_int8
from tpudsl.passes import pass_class

FP_TYPES = ("auto", *(m for m in QTABLE_MODES if m != "INT8"))


def _parser() -> CliArgumentParser:
    p = CliArgumentParser(prog="run_qtable", description=__doc__.split("\n\n")[0])
    p.add_argument("mlir", help="the Top .mlir (after model_transform)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", help="a directory of samples (.npz, .npy or images)")
    source.add_argument("--data_list", help="a file with one sample per line (comma-separated files per input)")
    p.add_argument("--calibration_table", required=True, help="run_calibration's table")
    p.add_argument("--processor", "--chip", dest="processor", required=True, help="the chip, e.g. bm1684x")
    p.add_argument("--input_num", type=int, default=10, help="how many samples to use (0: all); default 10")
    p.add_argument("--expected_cos", type=float, default=0.99, help="the output cosine to reach; default 0.99")
    p.add_argument("--min_layer_cos", type=float, default=0.99,
                   help="a layer whose INT8-alone cosine is below this is kept float at once; default 0.99")
    p.add_argument("--fp_type", type=str.upper, default="AUTO", choices=[t.upper() for t in FP_TYPES],
                   help="the float type of the kept layers; auto: F16 where the chip has it, else F32")
    p.add_argument("--loss_table", default="full_loss_table.txt", help="where to write every layer's cosine")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("-o", dest="output", required=True, help="the qtable to write")
    return p


def _check_cos(flag: str, value: float) -> None:
    if not 0.0 < value <= 1.0:
        raise TpudslError(f"{flag} must be in (0, 1], not {value:g}")


class _Search:
    """Lowers fresh copies of the calibrated module with a qtable and scores them against Top."""

    def __init__(self, mlir: str, table: str, chip: str, samples: list[dict[str, np.ndarray]]):
        self.mlir, self.table, self.chip, self.samples = mlir, table, chip, samples
        top = load_module(mlir)
        self.layers = [loc_name(op) for op in top.main_func().body.block.ops if op.name in INT8_LOWERINGS]
        self.reference = [_run(top, s) for s in samples]
        self.lowered(top, {})  # a bad table or chip fails here, before any search

    def lowered(self, top: TopModule, qtable: Mapping[str, str]) -> TopModule:
        ctx = make_context()
        pass_class("import-calibration-table")(file=self.table, asymmetric=False).apply(ctx, top.module)
        pass_class("processor-assign")(chip=self.chip, mode="INT8").apply(ctx, top.module)
        lower_int8(top, qtable)  # not the pass: it reads its qtable from a file
        return top

    def cosine(self, qtable: Mapping[str, str]) -> float:
        top = self.lowered(load_module(self.mlir), qtable)
        runs = [_run(top, s) for s in self.samples]
        return min(float(np.mean([cosine_similarity(r[name], want[name]) for r, want in zip(runs, self.reference)]))
                   for name in self.reference[0])


def _run(top: TopModule, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    interp = ModuleInterpreter(top.module, top.weights)
    interp.init()
    try:
        return interp.inference(inputs)
    finally:
        interp.deinit()


def search(s: _Search, fp: str, expected_cos: float, min_layer_cos: float,
           progress: Callable[[str], None]) -> tuple[list[tuple[str, float]], list[str], float]:
    """(every layer's INT8-alone cosine, worst first; the layers to keep in `fp`; the final cosine)."""
    losses = []
    for i, layer in enumerate(s.layers):
        losses.append((layer, s.cosine({other: fp for other in s.layers if other != layer})))
        progress(f"layer {i + 1}/{len(s.layers)} '{layer}' alone in INT8: cosine {losses[-1][1]:.6f}")
    losses.sort(key=lambda lc: lc[1])
    kept = [layer for layer, cos in losses if cos < min_layer_cos]
    rest = [layer for layer, cos in losses if cos >= min_layer_cos]
    cos = s.cosine({layer: fp for layer in kept})
    progress(f"{len(kept)} layers in {fp} (below --min_layer_cos): cosine {cos:.6f}")
    while cos < expected_cos and rest:
        kept.append(rest.pop(0))
        cos = s.cosine({layer: fp for layer in kept})
        progress(f"+ '{kept[-1]}' in {fp}: cosine {cos:.6f}")
    return losses, kept, cos


def _main(argv: Sequence[str]) -> None:
    args = _parser().parse_args(argv)
    _check_cos("--expected_cos", args.expected_cos)
    _check_cos("--min_layer_cos", args.min_layer_cos)
    if args.input_num < 0:
        raise TpudslError(f"--input_num must be 0 (all samples) or more, not {args.input_num}")
    try:
        chip = chip_named(args.processor)
    except KeyError as e:
        raise TpudslError(e.args[0]) from None
    fp = args.fp_type if args.fp_type != "AUTO" else ("F16" if "F16" in chip.modes else "F32")
    for mode in ("INT8", fp):
        if mode not in chip.modes:
            raise TpudslError(f"chip '{chip.name}' has no {mode} mode (it has {', '.join(chip.modes)})")
    mod = load_module(args.mlir)
    loader = sample_loader(mod)
    samples = [loader(spec) for spec in list_samples(args.dataset, args.data_list, args.input_num)]
    s = _Search(args.mlir, args.calibration_table, chip.name, samples)
    progress = (lambda line: None) if args.quiet else (lambda line: print(f"run_qtable: {line}", file=sys.stderr))
    losses, kept, cos = search(s, fp, args.expected_cos, args.min_layer_cos, progress)
    if cos < args.expected_cos:
        raise TpudslError(f"every layer in {fp} reaches only cosine {cos:.6f} < --expected_cos {args.expected_cos:g} "
                          "(the calibration table or the float type limits it); nothing written")
    loss_text = f"# chip: {chip.name}  mix_mode: {fp}\n" + "".join(
        f"No.{i:<4}: Layer: {layer:<40} Cos: {c:.6f}\n" for i, (layer, c) in enumerate(losses))
    qtable_text = f"# op_name   quantize_mode\n# output cosine {cos:.6f} vs Top\n" + "".join(f"{n} {fp}\n" for n in kept)
    write_files_atomically([(args.loss_table, lambda f: f.write(loss_text.encode())),
                            (args.output, lambda f: f.write(qtable_text.encode()))])
    progress(f"wrote {args.output} ({len(kept)} of {len(s.layers)} layers in {fp}, cosine {cos:.6f}) "
             f"and {args.loss_table}")


def main(argv: Sequence[str] | None = None):
    run_cli(_main, argv)
