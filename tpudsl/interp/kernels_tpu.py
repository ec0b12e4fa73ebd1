"""Kernels of the Tpu dialect in the float modes (F32, F16, BF16), keyed by op name.

A float Tpu op computes what the Top op it was lowered from computes, so each kernel here runs
that Top kernel (one arithmetic, written once in the Top tables) on its operands widened to
float32, and the interpreter rounds the result once to the op's result type (`finish_output`:
float16, or ml_dtypes' bfloat16, both round to nearest even, and a value beyond the type's range
becomes inf there, as on the chip). The INT8 kernels (integer arithmetic) are
kernels_tpu_int8.py's; an op with both forms runs the INT8 one on int8 operands.

`TPU_KERNELS` holds only `tpu.*` ops; `ALL_KERNELS` adds the Top table, since Tpu modules keep
`top.Input`, `top.Weight` and `top.None`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.dialects.geometry.conv_filter import ic_parallel_of
from tpudsl.dialects.tpu import ACTIVE_COEFFS, ACTIVE_MODES, AS_TOP, GELU_MODES
from tpudsl.interp import kernels_tpu_int8 as int8
from tpudsl.interp.half import F32, half_format
from tpudsl.interp.kernels_tpu_half import HALF_KERNELS, a16_matmul
from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs, ReplacedAttrs, Run
from tpudsl.interp.kernels_pool import as_ceil_mode
from tpudsl.interp.table import KERNELS, merge

# tpu.Active's mode -> (Top op, the attributes that select the function).
_ACTIVE: dict[str, tuple[str, dict[str, object]]] = {
    **{mode: (top, {}) for top, mode in ACTIVE_MODES.items()},
    **{mode: ("top.GELU", {"approx_mode": approx}) for approx, mode in GELU_MODES.items()},
}


def _wide(x: Array | None) -> Array | None:
    if x is None or x.dtype.name not in ("float16", "bfloat16"):
        return x
    return x.astype(np.float32)


# Ops whose Top kernel only moves values: on int8 operands (a !quant.uniform type) they give the
# int8 result the INT8 lowering means. Any other float kernel on such an operand is an error, not
# float arithmetic on stored integers.
INT8_MOVES = ("top.Permute", "top.Reshape", "top.Squeeze", "top.Unsqueeze", "top.Concat", "top.Gather", "top.Slice")
# Ops defined on stored uint8 pixel values (bytes to bytes): their Top kernel is their INT8 kernel.
ON_STORED_PIXELS = ("top.Yuv2rgbFormula",)
# Top ops a Tpu op may run on stored integers (built once: it is read on every kernel run).
_ON_STORED = frozenset((*INT8_MOVES, *ON_STORED_PIXELS))


def _via_top(choose: Callable[[KernelAttrs], tuple[str, dict[str, object]]]) -> Kernel:
    """A kernel that runs the Top kernel `choose(attrs)` names, on float32 operands."""

    def run(inputs: Inputs, attrs: KernelAttrs) -> Array | list[Array]:
        top, extra = choose(attrs)
        if attrs.scales[0] is not None and top not in _ON_STORED:
            raise ValueError(f"{top[4:]} on a quantized int8 operand has no INT8 kernel")
        return KERNELS[top].run([_wide(x) for x in inputs], ReplacedAttrs(attrs, extra) if extra else attrs)

    return Kernel(run)


def _prepare_via(top: str, run: Run, unpack: Callable[[Inputs, KernelAttrs], Inputs | None] = lambda w, a: w):
    """A `prepare` for a Tpu op that runs Top's `top`: the Top kernel's own prepare (a conv
    filter packed for GEMM or Winograd once) on the widened weights, after `unpack` (None: it
    cannot, and `run` packs on every call as before). An int8 operand keeps `run` (INT8 kernel)."""

    def prepare(static: Inputs, attrs: KernelAttrs) -> Run:
        if attrs.scales[0] is not None:
            return run
        weights = unpack([_wide(w) for w in static], attrs)
        if weights is None:
            return run
        top_run = KERNELS[top].prepare(weights, attrs)
        return lambda inputs, attrs: top_run([_wide(x) for x in inputs], attrs)

    return prepare


def _same(top: str) -> Kernel:
    kernel = _via_top(lambda attrs: (top, {}))
    if KERNELS[top].prepare is None:
        return kernel
    return Kernel(kernel.run, _prepare_via(top, kernel.run))


# tpu.Active's mode -> (Top op, the attributes its coeffs give, in order).
_ACTIVE_COEFFS = {mode: (top, names) for top, (mode, names) in ACTIVE_COEFFS.items()}


def _active(attrs: KernelAttrs) -> tuple[str, dict[str, object]]:
    mode = attrs["mode"]
    if mode in _ACTIVE_COEFFS:
        top, names = _ACTIVE_COEFFS[mode]
        coeffs = list(attrs.get("coeffs") or [])
        if len(coeffs) != len(names):
            raise ValueError(f"tpu.Active mode {mode} needs coeffs {list(names)}, has {coeffs}")
        return top, dict(zip(names, coeffs))
    if mode not in _ACTIVE:
        raise ValueError(f"tpu.Active mode {mode} has no kernel")
    return _ACTIVE[mode]


def _plain_filter(w: Array, in_channels: int, attrs: KernelAttrs) -> Array:
    """The [oc, ic/g, kh, kw] filter of a tpu.Conv2D, whatever layout --weight-reorder gave it
    (geometry/conv_filter.py): reordered[0, o, b, k*P + p] = filter[o, b*P + p, k]."""
    kernel = list(attrs["kernel_shape"])
    icg = in_channels // attrs.get("group", 1)
    ic_parallel = ic_parallel_of(w.shape, icg, kernel)
    if ic_parallel is None:
        return w
    oc, blocks = w.shape[1], w.shape[2]
    by_channel = w.reshape(oc, blocks, kernel[0] * kernel[1], ic_parallel).transpose(0, 1, 3, 2)
    return by_channel.reshape(oc, blocks * ic_parallel, *kernel)[:, :icg]


def _conv2d(inputs: Inputs, attrs: KernelAttrs) -> Array | list[Array]:
    x, w, *rest = [_wide(v) for v in inputs]
    return KERNELS["top.Conv"].run([x, _plain_filter(w, x.shape[1], attrs), *rest], attrs)


def _conv2d_weights(static: Inputs, attrs: KernelAttrs) -> Inputs | None:
    """A static filter in the plain layout for Top's prepare; the input channel count a reordered
    filter needs comes from the input's type. None (unpack on every call) for a computed filter
    or an input type without a static shape."""
    x_shape = attrs.in_shapes[0] if attrs.in_shapes else None
    if static[1] is None or x_shape is None:
        return None
    return [static[0], _plain_filter(static[1], x_shape[1], attrs), *static[2:]]


def _cast(inputs: Inputs, attrs: KernelAttrs) -> Array:
    # An INT8 Cast (float <-> a quantized type) converts with the type's scale; any other is Top's
    # Cast: a float becomes an integer by round_mode; a float result is rounded by finish_output.
    converted = int8.cast(inputs, attrs)
    if converted is not None:
        return converted
    return KERNELS["top.Cast"].run([_wide(inputs[0])], attrs)  # type: ignore[return-value]


def _scale(inputs: Inputs, attrs: KernelAttrs) -> Array | list[Array]:
    # The optional `lshift` operand is INT8's; the float modes leave it `none`.
    if len(inputs) > 3 and inputs[3] is not None:
        raise ValueError("tpu.Scale with an lshift operand has no float kernel")
    return _same("top.Scale").run(inputs[:3], attrs)


def _gather(inputs: Inputs, attrs: KernelAttrs) -> Array | list[Array]:
    # The optional `buffer` operand is the chip's scratch memory; Top's Gather takes two operands.
    return _same("top.Gather").run(inputs[:2], attrs)


def _gather_elements(inputs: Inputs, attrs: KernelAttrs) -> Array | list[Array]:
    # indices_coeff and buffer are the chip's (TpuOps.td); Top's GatherElements takes two operands.
    return _same("top.GatherElements").run(inputs[:2], attrs)


def _by_dtype(float_kernel: Kernel, int8_kernel: Callable[[Inputs, KernelAttrs], Array]) -> Kernel:
    def dispatch(float_run: Run) -> Run:
        def run(inputs: Inputs, attrs: KernelAttrs) -> Array | list[Array]:
            x = inputs[0]
            quantized = x is not None and x.dtype in (np.int8, np.uint8)  # uint8: asymmetric INT8
            return int8_kernel(inputs, attrs) if quantized else float_run(inputs, attrs)

        return run

    if float_kernel.prepare is None:
        return Kernel(dispatch(float_kernel.run))
    prepare = float_kernel.prepare
    return Kernel(dispatch(float_kernel.run), lambda static, attrs: dispatch(prepare(static, attrs)))


_SAME_AS_TOP = (
    "Add", "Sub", "Mul", "Div", "Max", "Min", "AddConst", "SubConst", "MulConst", "MaxConst", "MinConst",
    "MatMul", "Relu", "LeakyRelu", "Clip", "Reciprocal", "Permute", "Reshape", "Squeeze", "Unsqueeze",
    "Concat", "Softmax", "Slice", "Pad", "Upsample", "Depth2Space", "Deconv", "LRN", "Tile",
    "Interp", "Reduce", "Arg", "Where", "MaskedFill", "Compare", "CompareConst", "LayerNorm",
    "InstanceNorm", "GroupNorm", "Pow", "DivConst", *AS_TOP,
)

TPU_KERNELS: dict[str, Kernel] = {
    **{f"tpu.{name}": _same(f"top.{name}") for name in _SAME_AS_TOP},
    "tpu.Conv2D": Kernel(_conv2d, _prepare_via("top.Conv", _conv2d, _conv2d_weights)),
    "tpu.PReluOp": _same("top.PRelu"),
    "tpu.Pool2D": _via_top(lambda attrs: (f"top.{attrs['pool_mode']}Pool", as_ceil_mode(attrs))),
    "tpu.Active": _via_top(_active),
    "tpu.Cast": Kernel(_cast),
    "tpu.Scale": Kernel(_scale),
    "tpu.Gather": Kernel(_gather),
    "tpu.GatherElements": Kernel(_gather_elements),
    "tpu.Lut": Kernel(int8.lut),
    "tpu.RequantInt": Kernel(int8.requant_int),
    "tpu.RequantIntAxis": Kernel(int8.requant_int_axis),
    "tpu.A16MatMul": Kernel(a16_matmul),
}


def _plain_conv_operands(inputs: Inputs, attrs: KernelAttrs) -> Inputs:
    return [inputs[0], _plain_filter(inputs[1], inputs[0].shape[1], attrs), *inputs[2:]]


_HALF_OPERANDS = {"tpu.Conv2D": _plain_conv_operands}
# Their F32 result is the exact value rounded once as well (the cmodel's record computes it so): a
# softmax an F16/BF16 or INT8 model keeps in F32 (attention masks) is bit-exact on the cmodel
EXACT_F32 = ("tpu.Softmax",)
_HALF_WEIGHTS = {"tpu.Conv2D": _conv2d_weights}  # static operands -> plain ones (None: per call)


def _half_first(name: str, kernel: Kernel) -> Kernel:
    """`kernel`, except that an F16/BF16 result (of float operands) comes from
    kernels_tpu_half's exact reduction (decided at prepare, or per call without one)."""
    half_run, operands = HALF_KERNELS[name], _HALF_OPERANDS.get(name, lambda ins, a: ins)

    def choose(float_run: Run) -> Run:
        def run(inputs: Inputs, attrs: KernelAttrs) -> Array | list[Array]:
            fmt = half_format(attrs.out_dtype())
            if fmt is None and name in EXACT_F32 and attrs.out_dtype() == np.float32:
                fmt = F32
            if fmt is None or attrs.scales[0] is not None:
                return float_run(inputs, attrs)
            y = half_run(operands(inputs, attrs), attrs, fmt)
            return float_run(inputs, attrs) if y is None else y

        return run

    if kernel.prepare is None:
        return Kernel(choose(kernel.run))
    prepare = kernel.prepare

    def prepare_half(static: Inputs, attrs: KernelAttrs) -> Run:
        """F16/BF16: the static operands (plain layout) widened to float64 once, not per call."""
        fmt = half_format(attrs.out_dtype())
        if fmt is None:
            return prepare(static, attrs)
        plain = None if attrs.scales[0] is not None else _HALF_WEIGHTS.get(name, lambda w, a: w)(static, attrs)
        if plain is None:
            return choose(kernel.run)
        wide = [None if w is None else np.asarray(w, np.float64) for w in plain]

        def run(inputs: Inputs, attrs: KernelAttrs) -> Array | list[Array]:
            y = half_run([x if w is None else w for x, w in zip(inputs, wide, strict=False)], attrs, fmt)
            return kernel.run(inputs, attrs) if y is None else y

        return run

    return Kernel(choose(kernel.run), prepare_half)


TPU_KERNELS.update({name: _half_first(name, TPU_KERNELS[name]) for name in HALF_KERNELS})
TPU_KERNELS.update({name: _by_dtype(TPU_KERNELS[name], kernel) for name, kernel in int8.INT8_KERNELS.items()})

ALL_KERNELS: dict[str, Kernel] = merge(KERNELS, TPU_KERNELS)
