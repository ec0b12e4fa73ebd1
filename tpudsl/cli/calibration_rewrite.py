"""run_calibration --sq / --we: the module rewritten before its calibration, written as a new file
(also the file of --bc's corrected module, cli/bias_correction.py).

TPU-MLIR rewrites the user's weight npz (and for --sq its .mlir) in place; tpudsl writes the
rewritten module beside it instead (X_sq.mlir, X_we.mlir, X_sq_we_bc.mlir, ..., or --rewritten_mlir) and
says so on stderr, so that the original stays what model_transform made and running the command
twice does not smooth twice. The table is the rewritten module's: its rewritten tensors have
derived names (`_smoothed`, `_equalized`), so importing it into the original module is an error
naming the missing tensor, never a silent mismatch. docs/quantization.md, "Rewrites before
calibration".
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, save_module
from tpudsl.lowering.calibration import calibrate
from tpudsl.lowering.equalize import equalize_weights
from tpudsl.lowering.smooth_quant import plan_smoothing, smooth


def rewritten_path(args: argparse.Namespace) -> Path:
    """Where the rewritten module goes; never the input itself (a second run would rewrite again)."""
    given = Path(args.mlir)
    tag = "_".join(flag for flag in ("sq", "we", "bc") if getattr(args, flag, False))
    path = Path(args.rewritten_mlir) if args.rewritten_mlir else given.with_name(f"{given.stem}_{tag}.mlir")
    if path.exists() and os.path.samefile(path, given):
        raise TpudslError(f"run_calibration: --rewritten_mlir '{path}' is the input module; the rewrite goes to a new file")
    return path


def rewrite_for_calibration(args: argparse.Namespace, mod: TopModule, samples: Sequence[str], load_sample,
                            progress: Callable[[str, int], Callable[[int], None] | None]) -> list[str]:
    """SmoothQuant (first, as TPU-MLIR's run_calibration) and weight equalization on `mod`, in
    place; the lines that tell the user what was done and skipped. `progress(what, total)` gives a
    progress callback for the maxima pass."""
    notes: list[str] = []
    if args.sq:
        alpha = args.sq_alpha  # None: searched per LayerNorm, as TPU-MLIR
        planned, skipped = plan_smoothing(mod)
        done = []
        if planned:  # one interpreter run per sample for the maxima: the smoothed tensors' statistics depend on them
            names = [loc_name(op) for op in planned]
            result = calibrate(args.mlir, samples, load_sample, workers=args.workers,
                               progress=progress("smoothquant maxima", len(samples)), need_histograms=False,
                               mod=mod, scheduler=args.scheduler, channels=names, keep=names if alpha is None else ())
            done = smooth(mod, planned, result.channel_max, alpha, result.kept)
        how = "searched" if alpha is None else f"{alpha:g}"
        notes.append(f"--sq: {len(done)} LayerNorm(s) smoothed into their MatMuls (alpha {how})"
                     + "".join(f"; '{d.layer_norm}'" + (f": {d.searched}" if d.searched else "") for d in done))
        notes += [f"--sq: {s}" for s in skipped]
    if args.we:
        pairs, skipped = equalize_weights(mod)
        notes.append(f"--we: {len(pairs)} Conv pair(s) equalized" + "".join(f"; '{p.first}' -> '{p.second}'" for p in pairs))
        notes += [f"--we: {s}" for s in skipped]
    return notes


def save_rewritten(mod: TopModule, path: Path, also: Sequence[tuple[Path | str, Callable[[IO[bytes]], object]]] = ()) -> None:
    """The rewritten module at `path`, its weights beside it as `<stem>_top_f32_all_weight.npz`
    (never the original's npz, which its module.weight_file still names), with the `also` files,
    all written atomically together."""
    save_module(mod, path, path.with_name(f"{path.stem}_top_f32_all_weight.npz"), also)


def tell(notes: Sequence[str], path: Path) -> None:
    for line in [*notes, f"the table is for {path}: give it to model_deploy --mlir"]:
        print(f"run_calibration: {line}", file=sys.stderr)
