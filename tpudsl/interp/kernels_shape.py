"""Data-movement kernels: reshapes, permutes, concat/split/slice, pad, tile/expand, gather, depth2space.

Pure reshapes (Reshape, Flatten, Squeeze, Unsqueeze, View) trust the result type when it is
ranked, as TPU-MLIR's kernels do; the attributes are only the fallback for unranked results.
Where TPU-MLIR lets a dynamic operand (`shapeT`, `offsetT`, ...) replace an attribute, the
operand wins, and is read at inference time like every computed operand."""

from __future__ import annotations

import math

import numpy as np

from tpudsl.dialects.geometry.permute import fold
from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs


def _operand(ins: Inputs, i: int) -> list[int] | None:
    """The values of optional operand i (a shape-like tensor), or None when it is absent."""
    if i < len(ins) and ins[i] is not None:
        return [int(v) for v in np.asarray(ins[i]).reshape(-1)]
    return None


def _onnx_shape(x: Array, shape: list[int]) -> tuple[int, ...]:
    """ONNX Reshape targets: 0 copies the input dim, -1 is inferred."""
    dims = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return tuple(dims)


def _reshape(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    shape = _operand(ins, 1)
    if shape is not None:
        return x.reshape(_onnx_shape(x, shape))
    if a.out_shape() is not None:
        return x.reshape(a.out_shape())
    return x.reshape(_onnx_shape(x, list(a["shape"])))


def _flatten(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    start, end = a.get("start_dim", 0) % max(x.ndim, 1), a.get("end_dim", -1) % max(x.ndim, 1)
    return x.reshape(x.shape[:start] + (-1,) + x.shape[end + 1 :])


def _squeeze(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    axes = a.get("axes") or [i for i, d in enumerate(x.shape) if d == 1]
    return np.squeeze(x, axis=tuple(ax % x.ndim for ax in axes))


def _unsqueeze(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    axes = list(a["axes"])
    rank = x.ndim + len(axes)
    return x.reshape(_unsqueezed_shape(x.shape, sorted(ax % rank for ax in axes)))


def _unsqueezed_shape(shape: tuple[int, ...], axes: list[int]) -> tuple[int, ...]:
    dims = list(shape)
    for ax in axes:
        dims.insert(ax, 1)
    return tuple(dims)


# A tall matrix (rows >= TALL x columns) larger than TILED_BYTES is transposed in blocks of
# TILE_ROWS rows: each block's transpose stays in L1/L2, where numpy's one strided copy walks the
# whole output per source row. ConvNeXt's first NHWC -> NCHW permute (3136x96) 1.4x faster (one
# thread, best CPU time, alternating); 784x192 the same either way, a wide matrix (NCHW -> NHWC)
# or a smaller one no faster blocked.
TALL, TILE_ROWS, TILED_BYTES = 4, 64, 512 * 1024


def _tiled(shape: tuple[int, ...], order: list[int], itemsize: int) -> tuple[int, ...] | None:
    """(batch, rows, columns) when the permutation is a batch of tall transposes worth tiling (size-1
    axes kept in the fold: the tiled cases stay the ones measured)."""
    merged, perm = fold(shape, order, drop_ones=False)
    if perm not in ([1, 0], [0, 2, 1]):
        return None
    rows, cols = merged[-2:]
    if rows < TALL * cols or rows * cols * itemsize < TILED_BYTES:
        return None
    return (math.prod(merged[:-2]), rows, cols)


def _transpose_tiled(x: Array, order: list[int], batch: tuple[int, int, int]) -> Array:
    src = x.reshape(batch)
    out = np.empty((batch[0], batch[2], batch[1]), x.dtype)
    for i in range(0, batch[1], TILE_ROWS):
        out[:, :, i : i + TILE_ROWS] = src[:, i : i + TILE_ROWS].transpose(0, 2, 1)
    return out.reshape(tuple(x.shape[ax] for ax in order))


def _permute(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    order = [ax % x.ndim for ax in a["order"]] if x.ndim else []
    batch = _tiled(x.shape, order, x.itemsize) if x.flags.c_contiguous else None
    if batch is not None:
        return _transpose_tiled(x, order, batch)
    return np.ascontiguousarray(np.transpose(x, order))


def _permute_prepare(static: Inputs, a: KernelAttrs):
    """The copy decided once from the input type (most Permutes are small: the decision costs
    as much as their copy); per call without a static input shape."""
    shape = a.in_shapes[0] if a.in_shapes else None
    dtype = a.out_dtype()
    if shape is None or dtype is None:
        return _permute
    order = [ax % len(shape) for ax in a["order"]] if shape else []
    batch = _tiled(shape, order, dtype.itemsize)

    def run(ins: Inputs, a: KernelAttrs) -> Array:
        x = ins[0]
        if batch is not None and x.shape == shape and x.flags.c_contiguous:
            return _transpose_tiled(x, order, batch)
        # a strided x (a view from a producer, see `strided_operands`) is copied once, or not at
        # all where its permutation is contiguous (LayerNorm's NHWC view of an NCHW array -> NCHW)
        return np.ascontiguousarray(np.transpose(x, order))

    return run


def _permute_view(static: Inputs, a: KernelAttrs):
    """For readers that take strides (attention's Q, K, V -> MatMul): the transposed view, no copy,
    when the input's last axis stays one of the last two (each matrix then has a unit stride, which
    BLAS reads as it is; otherwise numpy's matmul would take its slow non-BLAS loop)."""
    copy = _permute_prepare(static, a)
    shape = a.in_shapes[0] if a.in_shapes else None
    if shape is None or len(shape) < 2:
        return copy
    order = [ax % len(shape) for ax in a["order"]]
    if len(shape) - 1 not in order[-2:]:
        return copy

    def run(ins: Inputs, a: KernelAttrs) -> Array:
        x = ins[0]
        return np.transpose(x, order) if x.shape == shape and x.flags.c_contiguous else copy(ins, a)

    return run


def _moves_last_axis(a: KernelAttrs) -> bool:
    """Whether a Permute moves its input's last axis (from its attributes): its copy then gathers
    strided values anyway, so a strided input (a LayerNorm's or MatMul's view, see `Kernel.view`)
    costs it about the same, and saves its producer a transposing copy; where that view is the
    Permute's own result transposed (ConvNeXt's NHWC view of NCHW data -> NCHW) there is no copy at
    all. A Permute that keeps the last axis copies whole rows, which a strided input would break up."""
    order = a.get("order") or []
    return bool(order) and order[-1] % len(order) != len(order) - 1


def _concat(ins: Inputs, a: KernelAttrs) -> Array:
    return np.concatenate([x for x in ins if x is not None], axis=a.get("axis", 1))


def _split(ins: Inputs, a: KernelAttrs) -> list[Array]:
    x = ins[0]
    axis = a["axis"] % x.ndim
    sizes = a.get("split_size")
    if not sizes:
        num = int(a["num"])
        sizes = [x.shape[axis] // num] * num
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


def _slice_bounds(size: int, start: int, end: int, step: int) -> slice:
    """ONNX Slice clamping; unlike Python, an end of -1 with a negative step means 'past the front'."""
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    if step > 0:
        return slice(min(max(start, 0), size), min(max(end, 0), size), step)
    start = min(max(start, -1), size - 1)
    end = min(max(end, -1), size - 1)
    return slice(start, end if end >= 0 else None, step)


def _slice(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    offset = _operand(ins, 1) or list(a.get("offset") or [])
    ends = _operand(ins, 2) or list(a.get("ends") or [])
    steps = _operand(ins, 3) or list(a.get("steps") or [1] * len(offset))
    axes = list(a.get("axes") or [])
    if not axes or (len(offset) == x.ndim and len(axes) != len(offset)):
        axes = list(range(len(offset)))  # TPU-MLIR's full-rank offset/ends/steps
    index = [slice(None)] * x.ndim
    for ax, start, end, step in zip(axes, offset, ends, steps, strict=True):
        ax %= x.ndim
        index[ax] = _slice_bounds(x.shape[ax], start, end, step)
    return x[tuple(index)]


def _pad(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    pads = _operand(ins, 1) or list(a["paddings"])
    begins, ends = pads[: x.ndim], pads[x.ndim :]
    mode = a.get("mode", "constant")  # TPU-MLIR's mode names (and ONNX's wrap) are numpy's: constant/reflect/symmetric/edge/wrap
    widths = [(max(b, 0), max(e, 0)) for b, e in zip(begins, ends, strict=True)]
    extra = {"constant_values": np.float32(a.get("val", 0.0))} if mode == "constant" else {}
    y = np.pad(x, widths, mode=mode, **extra)
    # Negative pads crop (ONNX).
    crop = tuple(slice(-min(b, 0), y.shape[i] + min(e, 0)) for i, (b, e) in enumerate(zip(begins, ends, strict=True)))
    return y[crop]


def _tile(ins: Inputs, a: KernelAttrs) -> Array:
    reps = _operand(ins, 1) or list(a["tile"])
    return np.tile(ins[0], reps)


def _expand(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    shape = _operand(ins, 1) or list(a["shape"])
    return np.ascontiguousarray(np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(shape))))


def _gather(ins: Inputs, a: KernelAttrs) -> Array:
    x, indices = ins
    axis = a.get("axis", 0) % x.ndim
    # Frontends store index tensors as float weights; negative indices count from the end.
    idx = np.asarray(indices).astype(np.int64)
    y = np.take(x, np.where(idx < 0, idx + x.shape[axis], idx), axis=axis)
    shape = a.out_shape()
    return y.reshape(shape) if shape is not None else y


def _gather_elements(ins: Inputs, a: KernelAttrs) -> Array:
    x, indices = ins
    axis = a.get("axis", 2) % x.ndim
    idx = np.asarray(indices).astype(np.int64)
    return np.take_along_axis(x, np.where(idx < 0, idx + x.shape[axis], idx), axis=axis)


def _depth2space(ins: Inputs, a: KernelAttrs) -> Array:
    """NCHW depth-to-space (DCR or CRD) and its inverse, space-to-depth."""
    x = ins[0]
    if not a.get("in_is_NCHW", True) or not a.get("out_is_NCHW", True) or a.get("swap_cr", False):
        raise NotImplementedError("top.Depth2Space: only NCHW without swap_cr")
    bh, bw = int(a["block_h"]), int(a["block_w"])
    crd = bool(a.get("is_CRD", False))
    n, c, h, w = x.shape
    if a.get("is_inversed", False):
        y = x.reshape(n, c, h // bh, bh, w // bw, bw)
        y = y.transpose(0, 1, 3, 5, 2, 4) if crd else y.transpose(0, 3, 5, 1, 2, 4)
        return y.reshape(n, c * bh * bw, h // bh, w // bw)
    c_out = c // (bh * bw)
    if crd:
        y = x.reshape(n, c_out, bh, bw, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        y = x.reshape(n, bh, bw, c_out, h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c_out, h * bh, w * bw)


def _shuffle_channel(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    g = int(a["group"])
    y = x.reshape(x.shape[0], g, x.shape[1] // g, *x.shape[2:]).swapaxes(1, 2)
    return y.reshape(x.shape)


def _trilu(ins: Inputs, a: KernelAttrs) -> Array:
    k = int(a.get("diagonal", 0))
    return np.triu(ins[0], k) if a.get("upper", True) else np.tril(ins[0], k)


KERNELS: dict[str, Kernel] = {
    # TPU-MLIR's Input inference is a copy: preprocessing happens in the tools, before the model.
    "top.Input": Kernel(lambda ins, a: ins[0]),
    "top.Reshape": Kernel(_reshape),
    "top.View": Kernel(_reshape),
    "top.Flatten": Kernel(_flatten),
    "top.Squeeze": Kernel(_squeeze),
    "top.Unsqueeze": Kernel(_unsqueeze),
    "top.Permute": Kernel(_permute, _permute_prepare, strided_operands=_moves_last_axis, view=_permute_view),
    "top.Transpose": Kernel(lambda ins, a: np.ascontiguousarray(np.swapaxes(ins[0], a["dim0"], a["dim1"]))),
    "top.Reverse": Kernel(lambda ins, a: np.ascontiguousarray(np.flip(ins[0], axis=a["axis"]))),
    "top.Concat": Kernel(_concat),
    "top.Split": Kernel(_split),
    "top.Slice": Kernel(_slice),
    "top.Pad": Kernel(_pad),
    "top.Tile": Kernel(_tile),
    "top.Expand": Kernel(_expand),
    "top.Gather": Kernel(_gather),
    "top.GatherElements": Kernel(_gather_elements),
    "top.Depth2Space": Kernel(_depth2space),
    "top.ShuffleChannel": Kernel(_shuffle_channel),
    "top.Trilu": Kernel(_trilu),
}
