"""The pass registry: every pass tpuc-opt knows, by its command-line name.

A pass joins with one line in PASSES. The value is a factory that imports the pass class only
when it is used, so `tpuc-opt --help` does not import every rewrite (and a pass whose module
is not written yet only fails when someone asks for it).

Rewrite passes report each applied pattern to PATTERN_LOG (`PATTERN_LOG.applied(name, loc)`);
the driver turns it on for `--debug-only=pattern-application`, which TPU-MLIR's regression
scripts use to count pattern applications.
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.passes import ModulePass

from tpudsl.ir.diagnostics import TpudslError


def _load(module: str, cls: str) -> type[ModulePass]:
    return getattr(importlib.import_module(module), cls)


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "shape-infer": lambda: _load("tpudsl.rewrites.shape_infer", "ShapeInferPass"),
    "canonicalize": lambda: _load("tpudsl.rewrites.canonicalize", "CanonicalizePass"),
    "reorder-dyn-weight": lambda: _load("tpudsl.rewrites.reorder_dyn_weight", "ReorderDynWeightPass"),
    "cast-cleanup": lambda: _load("tpudsl.rewrites.cast_cleanup", "CastCleanupPass"),
    "permute-reshape-cleanup": lambda: _load("tpudsl.rewrites.permute_reshape", "PermuteReshapeCleanupPass"),
    "fuse-conv-bn": lambda: _load("tpudsl.rewrites.fuse_conv_bn", "FuseConvBnPass"),
    "fuse-relu": lambda: _load("tpudsl.rewrites.fuse_relu", "FuseReluPass"),
    "fuse-matmul-bias": lambda: _load("tpudsl.rewrites.fuse_matmul_bias", "FuseMatMulBiasPass"),
    "scalar-to-const": lambda: _load("tpudsl.rewrites.scalar_to_const", "ScalarToConstPass"),
    "fold-constants": lambda: _load("tpudsl.rewrites.fold_constants", "FoldConstantsPass"),
    "fold-mulconst-one": lambda: _load("tpudsl.rewrites.example_mulconst_one", "FoldMulConstOnePass"),
    "processor-assign": lambda: _load("tpudsl.lowering.processor_assign", "ProcessorAssignPass"),
    "convert-top-to-tpu": lambda: _load("tpudsl.lowering.top_to_tpu", "ConvertTopToTpuPass"),
    "init": lambda: _load("tpudsl.rewrites.init_deinit", "InitPass"),
    "deinit": lambda: _load("tpudsl.rewrites.init_deinit", "DeinitPass"),
    "struct-optimize": lambda: _load("tpudsl.rewrites.optimize_groups", "StructOptimizePass"),
    "extra-optimize": lambda: _load("tpudsl.rewrites.optimize_groups", "ExtraOptimizePass"),
    "import-calibration-table": lambda: _load("tpudsl.lowering.import_calibration", "ImportCalibrationTablePass"),
    "cse": lambda: _load("xdsl.transforms.common_subexpression_elimination", "CommonSubexpressionElimination"),
    "dce": lambda: _load("xdsl.transforms.dead_code_elimination", "DeadCodeElimination"),
}


def pass_class(name: str) -> type[ModulePass]:
    """The class of pass `name`; TpudslError naming the known passes when there is none."""
    factory = PASSES.get(name)
    if factory is None:
        raise TpudslError(f"unknown pass '{name}'; known passes: {', '.join(sorted(PASSES))}")
    try:
        return factory()
    except (ImportError, AttributeError) as e:
        raise TpudslError(f"pass '{name}' is registered but cannot be loaded: {e}") from None


# xDSL's pass classes without a docstring of their own.
_XDSL_SUMMARIES = {
    "cse": "Eliminate common subexpressions (xDSL).",
    "dce": "Erase side-effect-free ops whose results are unused (xDSL).",
}


def pass_summary(name: str, cls: type[ModulePass]) -> str:
    """The first line of the pass class's docstring, else of its module's (not the one dataclasses invent)."""
    doc = (cls.__doc__ or "").strip()
    if not doc or doc.startswith(cls.__name__ + "("):
        doc = (sys.modules[cls.__module__].__doc__ or "").strip()  # one pass per file: the file's doc
    return doc.splitlines()[0] if doc else _XDSL_SUMMARIES.get(name, "")


@dataclass
class PatternLog:
    """Which rewrite patterns applied where; printed by `--debug-only=pattern-application`."""

    enabled: bool = False
    counts: Counter[str] = field(default_factory=Counter)

    def reset(self, enabled: bool) -> None:
        self.enabled = enabled
        self.counts.clear()

    def applied(self, pattern: str, op_name: str) -> None:
        """Record that `pattern` rewrote the op whose loc name is `op_name`."""
        if self.enabled:
            self.counts[pattern] += 1
            print(f'pattern {pattern} applied at "{op_name}"', file=sys.stderr)

    def summary(self) -> str:
        total = sum(self.counts.values())
        parts = ", ".join(f"{name} x{n}" for name, n in sorted(self.counts.items()))
        return f"pattern-application: {total} applied" + (f" ({parts})" if parts else "")


PATTERN_LOG = PatternLog()
