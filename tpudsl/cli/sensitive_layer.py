"""run_sensitive_layer's work: every method's thresholds, the per-layer search, the float layers and
the three files (the command: tpudsl/cli/run_sensitive_layer.py; the scheme: docs/quantization.md,
"Sensitive layers")."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from tpudsl.cli.calibration_run import ProgressBars, SampleLoader, list_samples, sample_loader, tuning_samples
from tpudsl.cli.post_process import load_post_process
from tpudsl.cli.qtable_search import Int8Search, check_cos, chip_and_float_mode, float_until
from tpudsl.dialects.opdef import loc_name, result_names
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, load_module, write_files_atomically
from tpudsl.lowering.calibration import calibrate, tensor_names
from tpudsl.lowering.calibration_table import TableEntry, as_written, read_table, table_text
from tpudsl.lowering.threshold_tune import pairs, tune

# TPU-MLIR's quantize_method_list of the search, in its order (max, percentile9999, kl, mse): a
# later method wins only with a strictly smaller loss.
METHODS = ("minmax", "percentile9999", "kld", "mse")
Table = dict[str, TableEntry]


@dataclass(frozen=True)
class LayerLoss:
    """One layer alone in INT8: each method's loss (1 - the output cosine) and the one chosen."""

    layer: str
    op_type: str
    tensors: tuple[str, ...]
    losses: tuple[float, ...]  # in METHODS' order

    @property
    def method(self) -> str:
        return METHODS[self.losses.index(min(self.losses))]  # the first of the least

    @property
    def loss(self) -> float:
        return min(self.losses)


def with_thresholds(table: Mapping[str, TableEntry], source: Mapping[str, TableEntry], tensors: Sequence[str]) -> Table:
    """`table` with the thresholds of `tensors` taken from `source` (min and max kept, as TPU-MLIR's update_to)."""
    return {n: replace(e, threshold=source[n].threshold) if n in tensors else e for n, e in table.items()}


def layer_losses(s: Int8Search, top: TopModule, base: Table, tables: Mapping[str, Table], fp: str,
                 progress: Callable[[LayerLoss], None]) -> tuple[list[LayerLoss], Table]:
    """Every layer's losses in op order and the table with each layer's best thresholds: a layer is
    measured alone in INT8 (the others `fp`) with the thresholds chosen for the earlier layers."""
    ops = {loc_name(op): op for op in top.main_func().body.block.ops}
    current, found = dict(base), []
    for layer in s.layers:
        # The given table has every tensor (Int8Search's first lowering checked it); the methods' have the float ones.
        tensors = tuple(n for n in result_names(ops[layer]) if n in tables[METHODS[0]])
        alone = {other: fp for other in s.layers if other != layer}
        by_thresholds: dict[tuple[float, ...], float] = {}  # equal thresholds of two methods: one run
        losses = []
        for m in METHODS:
            key = tuple(tables[m][n].threshold for n in tensors)
            if key not in by_thresholds:
                by_thresholds[key] = 1.0 - s.cosine(alone, with_thresholds(current, tables[m], tensors))
            losses.append(by_thresholds[key])
        found.append(LayerLoss(layer, ops[layer].name, tensors, tuple(losses)))
        current = with_thresholds(current, tables[found[-1].method], tensors)
        progress(found[-1])
    return found, current


def method_tables(args: argparse.Namespace, top: TopModule, loader: SampleLoader, bars: ProgressBars,
                  say: Callable[[str], None]) -> tuple[dict[str, Table], int, int]:
    """(every method's table from one calibration pass, each tuned when --tune_num asks; the
    calibration samples; the tuning samples)."""
    samples = list_samples(args.dataset, args.data_list, args.input_num)
    tune_inputs = [loader(spec) for spec in tuning_samples(args, samples)]
    result = calibrate(args.mlir, samples, loader, args.histogram_bin_num, 1,
                       bars.new("calibration", len(samples)), True, top)
    tables = {m: result.table(m) for m in METHODS}
    for m in METHODS if tune_inputs else ():
        tables[m], _ = tune(top, tables[m], tune_inputs, bars.new(f"tuning {m}", len(pairs(top)), "tensor"))
    tables = {m: as_written(t) for m, t in tables.items()}  # the thresholds the new table will hold
    bars.close()
    say(f"{len(METHODS)} methods' thresholds from {len(samples)} samples"
        + (f", tuned on {len(tune_inputs)}" if tune_inputs else ""))
    return tables, len(samples), len(tune_inputs)


def _check(args: argparse.Namespace) -> None:
    check_cos("--expected_cos", args.expected_cos)
    for flag, value, least in (("--input_num", args.input_num, 0), ("--inference_num", args.inference_num, 1),
                               ("--max_float_layers", args.max_float_layers, 0), ("--tune_num", args.tune_num, 0)):
        if value < least:
            raise TpudslError(f"{flag} must be at least {least}, not {value}")
    if args.histogram_bin_num < 128:
        raise TpudslError(f"--histogram_bin_num must be at least 128, not {args.histogram_bin_num}")


def run_sensitive_layer(args: argparse.Namespace) -> None:
    """The command after its arguments are parsed (tpudsl/cli/run_sensitive_layer.py)."""
    _check(args)
    chip, fp = chip_and_float_mode(args.processor, args.fp_type)
    post_process = load_post_process(args.post_process)
    say = (lambda line: None) if args.quiet else (lambda line: print(f"run_sensitive_layer: {line}", file=sys.stderr))
    top = load_module(args.mlir)
    loader = sample_loader(top)
    inputs = [loader(spec) for spec in list_samples(args.dataset, args.data_list, args.inference_num)]
    base = read_table(args.calibration_table, set(tensor_names(top.module)))
    s = Int8Search(args.mlir, base, chip, inputs, asymmetric=False, where=args.calibration_table,
                   compare_layers=args.global_compare_layers, post_process=post_process)
    int8_cos = s.cosine({})
    if int8_cos > args.expected_cos:  # TPU-MLIR's first step: no search, nothing written
        print(f"run_sensitive_layer: INT8 with '{args.calibration_table}' reaches cosine {int8_cos:.6f} > "
              f"--expected_cos {args.expected_cos:g}: no float layers needed, nothing written", file=sys.stderr)
        return
    say(f"INT8 with '{args.calibration_table}': cosine {int8_cos:.6f} on {len(inputs)} samples")
    bars = ProgressBars(args.quiet)
    try:
        tables, calibrated, tuned = method_tables(args, top, loader, bars, say)
        bar = bars.new("layers", len(s.layers), "layer")

        def measured(r: LayerLoss) -> None:
            if bar:  # None with --quiet; a line above the bar (tqdm.write), not through it
                from tqdm import tqdm

                tqdm.write(f"run_sensitive_layer: '{r.layer}' alone in INT8: "
                           + ", ".join(f"{m} {loss:.6f}" for m, loss in zip(METHODS, r.losses)) + f": {r.method}",
                           file=sys.stderr)
                bar(1)

        found, new_table = layer_losses(s, top, base, tables, fp, measured)
        bars.close()
        ranked = sorted(found, key=lambda r: r.loss, reverse=True)
        # the worst layers (at most --max_float_layers) in fp, one at a time, until --expected_cos is reached
        kept, cos = float_until(s, [], [r.layer for r in ranked[:args.max_float_layers]], fp, args.expected_cos,
                                "INT8 with the new thresholds", say, new_table)
    finally:
        bars.close()
    texts = files_text(args, chip, fp, ranked, kept, new_table, (int8_cos, cos), (calibrated, tuned, len(inputs)))
    write_files_atomically([(path, lambda f, t=text: f.write(t.encode())) for path, text in texts])
    if cos < args.expected_cos:
        print(f"run_sensitive_layer: {len(kept)} float layers (--max_float_layers {args.max_float_layers}) reach "
              f"cosine {cos:.6f} < --expected_cos {args.expected_cos:g}", file=sys.stderr)
    say(f"wrote {args.output} ({len(kept)} of {len(s.layers)} layers in {fp}, cosine {int8_cos:.6f} -> {cos:.6f}), "
        f"{args.new_cali_table} and {args.loss_table}")


def files_text(args: argparse.Namespace, chip: str, fp: str, ranked: Sequence[LayerLoss], kept: Sequence[str],
               new_table: Table, cosines: tuple[float, float], counts: tuple[int, int, int]) -> list[tuple[str, str]]:
    """(path, text) of the qtable (TPU-MLIR's header), the new calibration table and the loss table."""
    (int8_cos, cos), (calibrated, tuned, inferred) = cosines, counts
    qtable = (f"# sample number: {inferred}\n# chip: {chip}  mix_mode: {fp}\n# number of {fp} layer: {len(kept)}\n"
              f"# output cosine {cos:.6f} vs Top with {args.new_cali_table} (all INT8 with the given table: "
              f"{int8_cos:.6f})\n"
              "###\n# op_name   quantize_mode\n" + "".join(f"{layer} {fp}\n" for layer in kept))
    header = ("# loss: 1 - the output cosine with only this layer in INT8 (the others " + fp
              + "), at the best method's threshold; then each method's loss\n")
    losses = header + "".join(
        f"No.{i:<4}: Layer: {r.layer:<40} Loss: {r.loss:.6f} Method: {r.method:<14} "
        f"Threshold: {' '.join(f'{new_table[n].threshold:.7f}' for n in r.tensors)} Type: {r.op_type} "
        + " ".join(f"{m}={loss:.6f}" for m, loss in zip(METHODS, r.losses)) + "\n"
        for i, r in enumerate(ranked))
    return [(args.output, qtable),
            (args.new_cali_table, table_text(new_table, args.histogram_bin_num, calibrated, tuned=tuned)),
            (args.loss_table, losses)]
