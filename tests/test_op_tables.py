"""The tables an op joins (docs/adding-an-op.md), walked: a Top op or ONNX converter missing from one
of them fails here, naming the op and the table. Legitimate exceptions are allow-listed with reasons.

Covered here: the Top op table's shape rules, the frontend's use of every Top op, the tests that name
every Top op, the ONNX coverage doc's row for every converter, the Top -> Tpu lowering of every Top
op and a Tpu op spec and kernel for every lowering's target, that adding-an-op.md names every
table file, and that the data-movement ops (`moves`) keep the rule through lowering and include
every op the INT8 lowering and kernels move as int8 values. (Top interpreter kernels against the Top op table are checked by the semantics tests.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tpudsl.dialects.top  # noqa: F401  (fills SPECS)
import tpudsl.dialects.tpu  # noqa: F401
from tpudsl.dialects.opdef import SPECS
from tpudsl.frontend.onnx_ops import CONVERTERS
from tpudsl.interp.kernels_tpu import INT8_MOVES, TPU_KERNELS
from tpudsl.lowering.top_to_tpu import KEPT, LOWERINGS
from tpudsl.lowering.top_to_tpu_int8 import INT8_LOWERINGS, INT8_ONLY_OPS
from tpudsl.lowering.weight_only import A16_LOWERINGS

ROOT = Path(__file__).resolve().parent.parent
TOP_OPS = sorted(name for name in SPECS if name.startswith("top."))

# Top ops without a shape rule: their result type is all there is.
NO_SHAPE_RULE = {
    "top.None": "has no tensor result (the `none` value of an absent operand)",
}

# Top ops the ONNX frontend never produces, and why (TPU-MLIR has them for other frontends or
# creates them in its own passes; we keep them for reading TPU-MLIR's .mlir files).
NOT_FROM_ONNX = {
    "top.AdaptiveAvgPool": "PyTorch frontend op; ONNX GlobalAveragePool becomes top.AvgPool",
    "top.Flatten": "ONNX Flatten has a static result shape and becomes top.Reshape",
    "top.MaskedFill": "PyTorch masked_fill; ONNX exports it as Where",
    "top.Scale": "Caffe op and TPU-MLIR's BatchNorm lowering; ONNX BatchNormalization becomes top.BatchNorm",
    "top.ShuffleChannel": "Caffe op; ONNX exports channel shuffle as Reshape/Transpose",
    "top.SiLU": "ONNX has no SiLU: exporters write Sigmoid and Mul",
    "top.Split": "ONNX Split becomes one top.Slice per output, so each output keeps its ONNX name",
    "top.Transpose": "PyTorch two-axis transpose; ONNX Transpose becomes top.Permute",
    "top.View": "PyTorch view; ONNX Reshape becomes top.Reshape",
    "top.YoloDetection": "TPU-MLIR's post-processing: --add-postprocess appends it to a YOLO model's heads",
    "top.DetectionOutput": "TPU-MLIR's post-processing: --add-postprocess=type=ssd appends it to an SSD's outputs",
    "top.Yuv2rgbFormula": "TPU-MLIR's op for --fuse-preprocess of YUV frames (and tpulang); ONNX has no such op",
}

# Top ops convert-top-to-tpu does not lower (it fails on them, naming the op). A to-do list, not a
# design: an entry goes when its lowering lands (the test fails on a stale entry).
NOT_LOWERED = {
    **{op: "never produced from ONNX (NOT_FROM_ONNX)" for op in (
        "top.AdaptiveAvgPool", "top.ShuffleChannel", "top.Split", "top.View")},
}


def frontend_strings() -> set[str]:
    """Every string literal in tpudsl/frontend/*.py except dict keys (CONVERTERS is keyed by ONNX
    op type, which often equals a Top op's short name): the Top ops the converters emit, as
    `"top.X"` or as the short name `"X"` handed to a helper such as `m.unary("X")`."""
    found: set[str] = set()
    for path in (ROOT / "tpudsl/frontend").glob("*.py"):
        tree = ast.parse(path.read_text())
        keys = {id(k) for d in ast.walk(tree) if isinstance(d, ast.Dict) for k in d.keys if k is not None}
        found |= {n.value for n in ast.walk(tree)
                  if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in keys}
    return found


def test_every_top_op_has_a_shape_rule():
    missing = [op for op in TOP_OPS if SPECS[op].shape is None and op not in NO_SHAPE_RULE]
    assert missing == [], f"Top ops without a shape rule (OpSpec shape=, tpudsl/dialects/shapes*.py): {missing}"


def test_every_top_op_is_produced_by_the_frontend_or_listed():
    strings = frontend_strings()
    produced = {op for op in TOP_OPS if op in strings or op.removeprefix("top.") in strings}
    missing = [op for op in TOP_OPS if op not in produced and op not in NOT_FROM_ONNX]
    assert missing == [], (
        f"Top ops no ONNX converter emits (add a converter in tpudsl/frontend/onnx_ops.py, or list the "
        f"op in NOT_FROM_ONNX with the reason): {missing}")
    stale = sorted(op for op in NOT_FROM_ONNX if op in produced or op not in SPECS)
    assert stale == [], f"NOT_FROM_ONNX lists ops the frontend now emits, or that are not Top ops: {stale}"


def test_every_top_op_is_named_by_a_test():
    """Each Top op appears in a pytest file or a lit test, as "top.X", "X" (the interpreter tests'
    tables) or an f-string `top.{...}` row key."""
    text = "\n".join(p.read_text() for p in [*(ROOT / "tests").glob("*.py"), *(ROOT / "lit_tests").rglob("*.mlir")])
    quoted = set(re.findall(r'"([A-Za-z0-9_.]+)"', text))
    missing = [op for op in TOP_OPS if op not in quoted and op.removeprefix("top.") not in quoted]
    assert missing == [], f"Top ops no test names (tests/test_interp_*.py, lit_tests/): {missing}"


def test_every_converter_has_a_row_in_the_coverage_doc():
    doc = (ROOT / "docs/onnx-coverage.md").read_text()
    rows = set(re.findall(r"^\| ([A-Z]\w*) \| \d+ \|", doc, re.M))
    missing = sorted(set(CONVERTERS) - rows)
    assert missing == [], f"converters without a row in docs/onnx-coverage.md (run tests/onnx_node/report.py): {missing}"
    stale = sorted(rows - set(CONVERTERS))
    assert stale == [], f"docs/onnx-coverage.md has rows for ops without a converter: {stale}"


def test_adding_an_op_names_every_table():
    doc = (ROOT / "docs/adding-an-op.md").read_text()
    for path in ("tpudsl/dialects/top.py", "tpudsl/dialects/shapes.py", "tpudsl/interp/table.py",
                 "tpudsl/frontend/onnx_ops.py", "docs/onnx-coverage.md", "tests/onnx_node/skips.py",
                 "tpudsl/lowering/top_to_tpu.py", "tpudsl/dialects/tpu.py", "tpudsl/interp/kernels_tpu.py",
                 "tests/test_op_tables.py"):
        assert path in doc, f"docs/adding-an-op.md does not name {path}"
        assert (ROOT / path).exists(), f"docs/adding-an-op.md names {path}, which does not exist"


def test_every_top_op_is_lowered_or_listed():
    missing = [op for op in TOP_OPS if op not in LOWERINGS and op not in KEPT and op not in NOT_LOWERED]
    assert missing == [], f"Top ops without a rule in LOWERINGS (tpudsl/lowering/top_to_tpu.py): {missing}"
    stale = sorted(op for op in NOT_LOWERED if op in LOWERINGS or op not in SPECS)
    assert stale == [], f"NOT_LOWERED lists ops that are lowered now, or are not Top ops: {stale}"


def test_every_lowering_targets_a_tpu_op_with_a_kernel():
    targets = sorted({rule.tpu for rule in LOWERINGS.values()} | set(INT8_ONLY_OPS) | set(A16_LOWERINGS.values()))
    assert [t for t in targets if t not in SPECS] == [], "lowering targets without a Tpu op spec (tpudsl/dialects/tpu.py)"
    assert [t for t in targets if t not in TPU_KERNELS] == [], "lowering targets without a Tpu kernel (interp/kernels_tpu.py)"
    unused = sorted(name for name in TPU_KERNELS if name not in targets)
    assert unused == [], f"Tpu kernels no lowering produces: {unused}"




def test_data_movement_ops_keep_the_rule_when_lowered():
    """A Top op declared a data-movement op (`moves`, docs/dialect.md "Element types") lowers to a
    Tpu op that declares it too, naming the same operands and results, so the verifier keeps
    refusing a converting move after lowering (tpu.Pool2D: where its pool_mode is Max)."""

    def named(moves):
        return None if moves is None else (moves.operands, moves.results)

    lost = sorted(f"{name} -> {rule.tpu}" for name, rule in LOWERINGS.items()
                  if SPECS[name].moves is not None and named(SPECS[rule.tpu].moves) != named(SPECS[name].moves))
    assert lost == [], f"data-movement Top ops whose Tpu op does not declare the same `moves`: {lost}"


def test_the_int8_moves_are_data_movement_ops():
    """The ops the INT8 lowering gives no arithmetic (an input at another QType is requantized to
    the output's first) and the Top kernels the Tpu interpreter runs on stored int8 values are
    data-movement ops in the op table: the verifier then refuses one whose QType changes."""
    same_scale = INT8_LOWERINGS["top.Reshape"]
    moves = sorted({name for name, rule in INT8_LOWERINGS.items() if rule is same_scale} | set(INT8_MOVES))
    assert "top.Concat" in moves and "top.Gather" in moves
    undeclared = [name for name in moves if SPECS[name].moves is None]
    assert undeclared == [], f"ops moved as int8 values that the op table does not declare `moves`: {undeclared}"
