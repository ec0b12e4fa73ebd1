"""Shape rules shared by several ops: `(in_shapes, attrs) -> [out_shape, ...]`.

Rules are plain functions of shapes and attribute values so that the verifier, `--shape-infer`,
the frontend and tests all call the same code. They raise ShapeError on inconsistent input."""

from __future__ import annotations

from collections.abc import Sequence

from tpudsl.dialects.opdef import AttrView, Shape, ShapeError


def same_as_first(ins: Sequence[Shape | None], a: AttrView) -> list[Shape]:
    """Element-wise unary ops: the result has the input's shape."""
    if ins[0] is None:
        raise ShapeError("operand #0 must be a tensor")
    return [ins[0]]


def broadcast(*shapes: Shape) -> Shape:
    """Numpy/ONNX multidirectional broadcasting of `shapes`."""
    rank = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes], strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ShapeError(
                "operand shapes " + ", ".join("x".join(map(str, s)) or "scalar" for s in shapes)
                + " do not broadcast"
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_all(ins: Sequence[Shape | None], a: AttrView) -> list[Shape]:
    """Element-wise n-ary ops (Add, Mul, Max, ...): broadcast of all tensor operands."""
    shapes = [s for s in ins if s is not None]
    if not shapes:
        raise ShapeError("needs at least one tensor operand")
    return [broadcast(*shapes)]
