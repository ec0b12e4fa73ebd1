"""The pass registry: every pass tpuc-opt knows, by its command-line name.

A pass joins with one line in PASSES, and this is the only place it is registered: tpuc-opt
(`--<pass>`, `--list-passes`), the canonicalize table (`canonical=True`: its patterns are part of
`--canonicalize`, in registry order) and the shared rewrite property test
(tests/test_rewrites_property.py, which fails for a rewrite pattern it has no strategy for) all
read it. An entry names the module and class, which are imported only when the pass is used, so
`tpuc-opt --help` does not import every rewrite (and a pass whose module is not written yet only
fails when someone asks for it).

Rewrite passes report each applied pattern to PATTERN_LOG (`PATTERN_LOG.applied(name, loc)`);
the driver turns it on for `--debug-only=pattern-application`, which TPU-MLIR's regression
scripts use to count pattern applications.
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from dataclasses import dataclass, field

from xdsl.passes import ModulePass

from tpudsl.ir.diagnostics import TpudslError


@dataclass(frozen=True)
class Registered:
    """A registry entry: where the pass class lives, and whether `--canonicalize` runs its patterns."""

    module: str
    cls: str
    canonical: bool = False

    def load(self) -> type[ModulePass]:
        return getattr(importlib.import_module(self.module), self.cls)


# Order matters only among canonical passes: canonicalize tries their patterns in this order, and
# for one op name the first that applies wins (dead-op removal and folding before the families).
PASSES: dict[str, Registered] = {
    "shape-infer": Registered("tpudsl.rewrites.shape_infer", "ShapeInferPass"),
    "canonicalize": Registered("tpudsl.rewrites.canonicalize", "CanonicalizePass"),
    "fold-constants": Registered("tpudsl.rewrites.fold_constants", "FoldConstantsPass", canonical=True),
    "reorder-dyn-weight": Registered("tpudsl.rewrites.reorder_dyn_weight", "ReorderDynWeightPass", canonical=True),
    "cast-cleanup": Registered("tpudsl.rewrites.cast_cleanup", "CastCleanupPass", canonical=True),
    "permute-reshape-cleanup": Registered("tpudsl.rewrites.permute_reshape", "PermuteReshapeCleanupPass", canonical=True),
    "fuse-conv-bn": Registered("tpudsl.rewrites.fuse_conv_bn", "FuseConvBnPass", canonical=True),
    "fuse-matmul-bias": Registered("tpudsl.rewrites.fuse_matmul_bias", "FuseMatMulBiasPass", canonical=True),
    "fuse-relu": Registered("tpudsl.rewrites.fuse_relu", "FuseReluPass", canonical=True),
    "scalar-to-const": Registered("tpudsl.rewrites.scalar_to_const", "ScalarToConstPass", canonical=True),
    "fold-mulconst-one": Registered("tpudsl.rewrites.example_mulconst_one", "FoldMulConstOnePass", canonical=True),
    "fuse-activations": Registered("tpudsl.rewrites.fuse_activations", "FuseActivationsPass", canonical=True),
    "fuse-layer-norm": Registered("tpudsl.rewrites.fuse_layer_norm", "FuseLayerNormPass", canonical=True),
    "fuse-rms-norm": Registered("tpudsl.rewrites.fuse_rms_norm", "FuseRMSNormPass", canonical=True),
    "processor-assign": Registered("tpudsl.lowering.processor_assign", "ProcessorAssignPass"),
    "convert-top-to-tpu": Registered("tpudsl.lowering.top_to_tpu", "ConvertTopToTpuPass"),
    "weight-fold": Registered("tpudsl.rewrites.weight_fold", "WeightFoldPass"),
    "weight-reorder": Registered("tpudsl.backend.weight_reorder", "WeightReorderPass"),
    "address-assign": Registered("tpudsl.backend.address_assign", "AddressAssignPass"),
    "layer-group": Registered("tpudsl.backend.layer_group", "LayerGroupPass"),
    "codegen": Registered("tpudsl.backend.codegen", "CodegenPass"),
    "init": Registered("tpudsl.rewrites.init_deinit", "InitPass"),
    "deinit": Registered("tpudsl.rewrites.init_deinit", "DeinitPass"),
    "struct-optimize": Registered("tpudsl.rewrites.optimize_groups", "StructOptimizePass"),
    "extra-optimize": Registered("tpudsl.rewrites.optimize_groups", "ExtraOptimizePass"),
    "import-calibration-table": Registered("tpudsl.lowering.import_calibration", "ImportCalibrationTablePass"),
    "fuse-preprocess": Registered("tpudsl.rewrites.fuse_preprocess", "FusePreprocessPass"),
    "add-postprocess": Registered("tpudsl.rewrites.add_postprocess", "AddPostprocessPass"),
    # TPU-MLIR's deploy command lines (mlir_shell.py): passes tpudsl has no work for check their
    # preconditions (docs/tpuc-opt.md, "TPU-MLIR's deploy command lines").
    "processor-top-optimize": Registered("tpudsl.lowering.tpu_mlir_stages", "ProcessorTopOptimizePass"),
    "strip-io-quant": Registered("tpudsl.backend.tpu_mlir_stages", "StripIOQuantPass"),
    "processor-tpu-optimize": Registered("tpudsl.backend.tpu_mlir_stages", "ProcessorTpuOptimizePass"),
    "dev-parallel": Registered("tpudsl.backend.tpu_mlir_stages", "DevParallelPass"),
    "op-divide": Registered("tpudsl.backend.tpu_mlir_stages", "OpDividePass"),
    "subnet-divide": Registered("tpudsl.backend.tpu_mlir_stages", "SubnetDividePass"),
    "op-reorder": Registered("tpudsl.backend.tpu_mlir_stages", "OpReorderPass"),
    "topo-sort": Registered("tpudsl.backend.tpu_mlir_stages", "TopoSortPass"),
    "core-parallel": Registered("tpudsl.backend.core_parallel", "CoreParallelPass"),
    "opt-post-processor": Registered("tpudsl.backend.tpu_mlir_stages", "OptPostProcessorPass"),
    "after-layergroup-weight-reorder": Registered("tpudsl.backend.tpu_mlir_stages", "AfterLayerGroupWeightReorderPass"),
    "weight-deduplicate": Registered("tpudsl.backend.tpu_mlir_stages", "WeightDeduplicatePass"),
    "trunc-layer": Registered("tpudsl.backend.trunc_layer", "TruncLayerPass"),
    "cse": Registered("xdsl.transforms.common_subexpression_elimination", "CommonSubexpressionElimination"),
    "dce": Registered("xdsl.transforms.dead_code_elimination", "DeadCodeElimination"),
}


def canonical_passes() -> list[str]:
    """The passes whose patterns `--canonicalize` runs, in the order it tries them."""
    return [name for name, entry in PASSES.items() if entry.canonical]


def pass_class(name: str) -> type[ModulePass]:
    """The class of pass `name`; TpudslError naming the known passes when there is none."""
    entry = PASSES.get(name)
    if entry is None:
        raise TpudslError(f"unknown pass '{name}'; known passes: {', '.join(sorted(PASSES))}")
    try:
        return entry.load()
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
        """The count since the last summary, which it restarts: mlir-opt runs each
        `--split-input-file` chunk on its own, so each chunk gets its own summary."""
        total = sum(self.counts.values())
        parts = ", ".join(f"{name} x{n}" for name, n in sorted(self.counts.items()))
        self.counts.clear()
        return f"pattern-application: {total} applied" + (f" ({parts})" if parts else "")


PATTERN_LOG = PatternLog()
