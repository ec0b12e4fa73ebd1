"""What a kernel is, and the attribute view it reads.

A kernel computes one op on numpy arrays: `run(inputs, attrs) -> array | [arrays]`.
`inputs[i]` is the array of operand i, or None for a `none` operand (`top.None`).
`attrs` (`KernelAttrs`) maps TPU-MLIR attribute names to Python values and also knows the
result shapes and dtypes from the op's result types, because several TPU-MLIR kernels take
their output shape from the IR (Reshape, MatMul keep_dims, Interp) rather than recomputing it.

Some kernels can do work once, before inference, from operands that are `top.Weight`s
(e.g. reshape a conv filter into GEMM layout). They provide `prepare(static, attrs) -> run`:
`static[i]` is the weight array of operand i, or None when operand i is NOT a weight.
A prepare function therefore cannot see a computed operand at all: TPU-MLIR's DragGAN port
copied a dynamic Deconv filter during init, while it was still all zeros; here that bug
cannot be written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Array = np.ndarray
Inputs = Sequence[Array | None]
Run = Callable[[Inputs, "KernelAttrs"], "Array | list[Array]"]
Prepare = Callable[[Inputs, "KernelAttrs"], Run]


@dataclass(frozen=True)
class Kernel:
    run: Run
    prepare: Prepare | None = None
    # True: run applies `do_relu`/`relu_limit` itself (in place, on the fresh array it returns),
    # so finish_output skips it. Only for kernels whose result never aliases an input.
    fuses_relu: bool = False
    # True, or true of the reading op's attributes: run takes operands that are strided views as they
    # are, at no extra cost (MatMul: BLAS reads a transposed matrix through its leading dimension;
    # a Winograd conv copies its input into channels-last tiles anyway).
    strided_operands: bool | Callable[[KernelAttrs], bool] = False
    # A `prepare` whose run may return a view (of its operand, or of a fresh array in another layout)
    # instead of a contiguous array; the interpreter takes it over `prepare` when every reader of
    # the result has `strided_operands`.
    view: Prepare | None = None


class KernelAttrs(Mapping[str, Any]):
    """Attribute values (spec defaults filled in) plus the op's result shapes and dtypes (and
    quantized scales, see `scales`; operand shapes, see `in_shapes`).

    `get(key, default)` returns `default` when the attribute is absent or None, so a kernel
    keeps working on IR whose op spec lacks an optional attribute."""

    __slots__ = ("_values", "out_shapes", "out_dtypes", "scales", "in_shapes", "zero_points")

    def __init__(
        self,
        values: Mapping[str, Any],
        out_shapes: Sequence[tuple[int, ...] | None] = (),
        out_dtypes: Sequence[np.dtype | None] = (),
        scales: tuple[float | None, float | None] = (None, None),
        in_shapes: Sequence[tuple[int, ...] | None] = (),
        zero_points: tuple[tuple[int, ...], int] = ((), 0),
    ):
        self._values = values
        self.out_shapes = list(out_shapes)
        self.out_dtypes = list(out_dtypes)
        # (operand 0, result 0) scale of an int8 `!quant.uniform` type: INT8 Casts convert with them.
        self.scales = scales
        # Operand shapes from the operand types (None where unknown), for a `prepare` that needs
        # more than its weights' shapes (a reordered Tpu filter hides its input channel count).
        self.in_shapes = list(in_shapes)
        # (every operand's, result 0's) zero point of a `!quant.uniform` type, 0 for other types:
        # asymmetric INT8 kernels subtract and add them.
        self.zero_points = zero_points

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            value = self._values[key]
        except KeyError:
            return default
        return default if value is None else value

    def out_shape(self, i: int = 0) -> tuple[int, ...] | None:
        return self.out_shapes[i] if i < len(self.out_shapes) else None

    def out_dtype(self, i: int = 0) -> np.dtype | None:
        return self.out_dtypes[i] if i < len(self.out_dtypes) else None


class ReplacedAttrs(KernelAttrs):
    """An op's attributes with some replaced (a Tpu op's for the Top kernel it runs: Active's
    mode, a Pool2D's ceil_overhang as ceil_mode), its shapes, dtypes and scales kept."""

    def __init__(self, attrs: KernelAttrs, extra: Mapping[str, object]):
        super().__init__({**attrs, **extra}, attrs.out_shapes, attrs.out_dtypes, attrs.scales, attrs.in_shapes)


def relu(y: Array, limit: float = -1.0, out: Array | None = None) -> Array:
    """max(y, 0), clamped at `limit` too when it is > 0. A float array goes through np.clip with an
    infinite upper bound: numpy's clip has a SIMD loop that np.maximum lacks for float32 (2.6-3.8x
    faster, measured; NaN stays NaN, -0.0 stays -0.0). Integers keep np.maximum (an inf bound
    would promote them to float)."""
    if limit > 0:
        return np.clip(y, 0, limit, out=out)
    return np.clip(y, 0, np.inf, out=out) if y.dtype.kind == "f" else np.maximum(y, 0, out=out)


def apply_fused_relu(y: Array, attrs: KernelAttrs, out: Array | None = None) -> Array:
    """TPU-MLIR's fused activation: `do_relu` clamps at 0, and at `relu_limit` when it is > 0.
    With `out=y` it works in place (for a kernel's own fresh result)."""
    if not attrs.get("do_relu", False):
        return y
    return relu(y, attrs.get("relu_limit", -1.0), out=out)


def as_outputs(result: Array | Sequence[Array]) -> list[Array]:
    """A kernel's return value as a list of arrays (numpy reductions may return a bare scalar)."""
    if isinstance(result, np.ndarray | np.generic):
        return [np.asarray(result)]
    return list(result)


class ResultMismatch(ValueError):
    """A kernel's result disagrees with the op's result type (the caller names the op)."""


def carrier(dtype: np.dtype) -> np.dtype:
    """The numpy dtype a value of `dtype` is held in. numpy has no bf16, float8/float6/float4 or
    4/2-bit integers: ml_dtypes rounds to them, and the value is kept in float32 (floats) or
    int8/uint8 (integers), which hold every value of those types exactly."""
    if dtype.kind != "V":
        return dtype
    if dtype.name.startswith(("int", "uint")):  # ml_dtypes' int4, uint4, int2, uint2
        return np.dtype(np.int8 if dtype.name.startswith("int") else np.uint8)
    return np.dtype(np.float32)


def hold(y: Array, dtype: np.dtype | None) -> Array:
    """`y` as a value of type `dtype`: cast (rounded through the narrow type when there is one)
    and kept in its carrier dtype."""
    if dtype is None or y.dtype == dtype:
        return y
    held = carrier(dtype)
    # A value beyond the type's range becomes inf (the modelled overflow), NaN in a type without
    # NaN what ml_dtypes gives: neither is a warning.
    with np.errstate(over="ignore", invalid="ignore"):
        if held != dtype:
            y = np.asarray(y).astype(dtype)
        return y.astype(held, copy=False)


def check_result(y: Array, attrs: KernelAttrs, i: int) -> None:
    """Result i of a kernel must have the result type's shape, and a dtype that converts to the
    result's without changing kind (a float result silently truncated to an integer type, or a
    number read as a boolean, is a kernel bug; float64 -> float32 is the result's rounding)."""
    shape, dtype = attrs.out_shape(i), attrs.out_dtype(i)
    if shape is not None and y.shape != shape:
        raise ResultMismatch(f"kernel result {i} has shape {list(y.shape)}, the result type has {list(shape)}")
    if dtype is not None and not np.can_cast(y.dtype, carrier(dtype), casting="same_kind"):
        raise ResultMismatch(f"kernel result {i} has dtype {y.dtype}, the result type's is {dtype}")


def finish_output(y: Array, attrs: KernelAttrs, i: int, relu: bool = True) -> Array:
    """Result i of a kernel as the op defines it: checked against the result type, fused
    activation (unless the kernel applied it: `relu` false), then the result type's dtype."""
    y = np.asarray(y)
    check_result(y, attrs, i)
    if relu:
        y = apply_fused_relu(y, attrs)
    return hold(y, attrs.out_dtype(i))


def run_kernel(kernel: Kernel, inputs: Inputs, attrs: KernelAttrs) -> list[Array]:
    """Run `kernel` once, without preparation, and finish every result (IEEE's inf and NaN, as in
    ModuleInterpreter.inference: no numpy warning)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        outs = as_outputs(kernel.run(inputs, attrs))
        return [finish_output(y, attrs, i, not kernel.fuses_relu) for i, y in enumerate(outs)]
