"""Converters of ONNX nodes that move data without computing on it: reshapes, slices, gathers...

Shape-like operands (Reshape's shape, Slice's starts, Pad's pads, ...) must be constant: after
folding they are, for any model whose input shapes are fixed. They become attributes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tpudsl.frontend.onnx_node import Node, norm_axes, norm_axis

if TYPE_CHECKING:
    from xdsl.ir import SSAValue

    from tpudsl.frontend.onnx_import import Converter


def const_ints(n: Node, c: Converter, i: int, what: str) -> list[int] | None:
    """Input #i as a list of ints (None when absent); an error when it is computed at run time."""
    value = c.const_input(n, i, what)
    return None if value is None else [int(v) for v in value.reshape(-1)]


def identity(n: Node, c: Converter) -> None:
    """Identity and inference-mode Dropout: the output is the input, no op. Dropout's mask is then
    all true (ONNX), a constant."""
    training = c.const(n.input(2)) if n.op_type == "Dropout" and n.input(2) else None
    ratio = c.const(n.input(1)) if n.op_type == "Dropout" and n.input(1) else None
    drops = ratio is None or ratio.any()  # training with ratio 0 keeps everything, like inference
    if n.input(2) and (training is None or training.any()) and drops:
        raise n.error("training-mode Dropout draws a random mask; only inference mode is supported")
    c.alias(n.out, n.input(0))
    if len(n.outputs) > 1 and n.outputs[1]:
        c.define_const(n.outputs[1], np.ones(c.shape(n.input(0)), np.float32))


def reshape(n: Node, c: Converter) -> None:
    """Reshape and Flatten: the target is the inferred output shape (0 and -1 already resolved)."""
    if n.op_type == "Reshape":
        const_ints(n, c, 1, "shape")
    c.emit("top.Reshape", [n.input(0)], n.out, {"shape": _reshape_target(n, c.shape(n.input(0)), c.shape(n.out))})


def _reshape_target(n: Node, in_shape: tuple[int, ...], out: tuple[int, ...]) -> list[int]:
    """top.Reshape's `shape` reads 0 as "copy the input dim" (ONNX allowzero=0), so an empty
    output dim is written as that copy where the input dim is 0 there, else as the one -1."""
    target = list(out)
    uncopied = [i for i, d in enumerate(out) if d == 0 and not (i < len(in_shape) and in_shape[i] == 0)]
    if not uncopied:
        return target
    if len(uncopied) > 1 or out.count(0) > 1:  # -1 is inferred from the other dims: none may be 0
        raise n.error(f"output shape {list(out)}: top.Reshape's shape cannot write these empty dims")
    target[uncopied[0]] = -1
    return target


def transpose(n: Node, c: Converter) -> None:
    rank = len(c.shape(n.input(0)))
    order = n.attr("perm", list(range(rank))[::-1])
    c.emit("top.Permute", [n.input(0)], n.out, {"order": norm_axes(order, rank, n)})


def _axes(n: Node, c: Converter) -> list[int] | None:
    """Squeeze/Unsqueeze axes: an attribute before opset 13, an optional input from 13 on."""
    return const_ints(n, c, 1, "axes") if n.opset >= 13 else n.attr("axes")


def squeeze(n: Node, c: Converter) -> None:
    shape = c.shape(n.input(0))
    axes = _axes(n, c)
    axes = norm_axes(axes, len(shape), n) if axes else [i for i, d in enumerate(shape) if d == 1]
    c.emit("top.Squeeze", [n.input(0)], n.out, {"axes": sorted(axes)})


def unsqueeze(n: Node, c: Converter) -> None:
    axes = _axes(n, c) or []
    rank = len(c.shape(n.input(0))) + len(axes)
    c.emit("top.Unsqueeze", [n.input(0)], n.out, {"axes": sorted(norm_axes(axes, rank, n))})


def concat(n: Node, c: Converter) -> None:
    """An empty input adds nothing to the result, so it is left out (as TPU-MLIR's converter does):
    the backend has no zero-sized tensors, and the ops that only fed it become dead. When every
    input is empty the result is too, and all of them stay."""
    ins = [i for i in n.inputs if i]
    axis = norm_axis(n.attr("axis", 1 if n.opset < 4 else 0), len(c.shape(ins[0])), n)
    filled = [i for i in ins if 0 not in c.shape(i)]
    c.emit("top.Concat", filled or ins, n.out, {"axis": axis})


def _slice_bounds(dim: int, start: int, end: int, step: int) -> tuple[int, int]:
    """ONNX Slice clamping. With a negative step an end before index 0 is written -dim-1, so
    that it stays "before 0" after the usual negative-index normalization (end + dim = -1)."""
    start = start + dim if start < 0 else start
    end = end + dim if end < 0 else end
    if step > 0:
        return min(max(start, 0), dim), min(max(end, 0), dim)
    start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    return start, (-dim - 1 if end == -1 else end)


def slice_(n: Node, c: Converter) -> None:
    """Slice: starts/ends/axes are attributes before opset 10 and inputs from 10 on. The Top op
    gets offset/ends/steps for every dim, already clamped."""
    shape = c.shape(n.input(0))
    if n.opset < 10:
        starts, ends, axes, steps = n.attr("starts"), n.attr("ends"), n.attr("axes"), None
    else:
        starts, ends = const_ints(n, c, 1, "starts"), const_ints(n, c, 2, "ends")
        axes, steps = const_ints(n, c, 3, "axes"), const_ints(n, c, 4, "steps")
    axes = norm_axes(axes if axes is not None else list(range(len(starts))), len(shape), n)
    steps = steps or [1] * len(axes)
    offset, stop, stride = [0] * len(shape), list(shape), [1] * len(shape)
    for ax, start, end, step in zip(axes, starts, ends, steps, strict=True):
        if step == 0:
            raise n.error("steps must not be 0")
        offset[ax], stop[ax] = _slice_bounds(shape[ax], start, end, step)
        stride[ax] = step
    c.emit("top.Slice", [n.input(0), "", "", ""], n.out, {"offset": offset, "ends": stop, "steps": stride})


def split(n: Node, c: Converter) -> None:
    """Split becomes one Slice per output, so that every output keeps its own ONNX name.
    Sizes: `split` attribute (before 13), `split` input (13 on), or `num_outputs` (18 on)."""
    shape = c.shape(n.input(0))
    axis = norm_axis(n.attr("axis", 0), len(shape), n)
    sizes = const_ints(n, c, 1, "split") if n.opset >= 13 else n.attr("split")
    count = len(n.outputs)
    if not sizes:
        # Equal parts; with num_outputs (opset 18) the last part may be smaller.
        part = -(-shape[axis] // count)
        sizes = [min(part, shape[axis] - i * part) for i in range(count)]
    if len(sizes) != count or sum(sizes) != shape[axis]:
        raise n.error(f"split sizes {sizes} do not cut axis {axis} of size {shape[axis]} into {count} outputs")
    start = 0
    for out, size in zip(n.outputs, sizes, strict=True):
        offset, ends = [0] * len(shape), list(shape)
        offset[axis], ends[axis] = start, start + size
        start += size
        if out:
            c.emit("top.Slice", [n.input(0), "", "", ""], out, {"offset": offset, "ends": ends, "steps": [1] * len(shape)})


def pad(n: Node, c: Converter) -> None:
    """Pad: pads/value are attributes before opset 11, inputs from 11 on (axes input from 18)."""
    rank = len(c.shape(n.input(0)))
    mode = n.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise n.error(f"mode {mode!r} is not supported (constant, reflect, edge, wrap are)")
    if n.opset < 11:
        pads, value = list(n.attr("pads" if n.opset >= 2 else "paddings")), float(n.attr("value", 0.0))
    else:
        pads = const_ints(n, c, 1, "pads")
        fill = c.const_input(n, 2, "constant_value")
        if fill is not None and fill.size != 1:
            # ONNX's constant_value is a scalar (onnxruntime refuses any other size; ONNX's reference
            # pads each side with its own value from a pair): no one value to pad with.
            raise n.error(f"constant_value '{n.input(2)}' has {fill.size} elements; it must be a scalar (one element)")
        value = 0.0 if fill is None else float(fill.reshape(()))
        axes = const_ints(n, c, 3, "axes")
        if axes is not None:
            full = [0] * (2 * rank)
            for j, ax in enumerate(norm_axes(axes, rank, n)):
                full[ax], full[rank + ax] = pads[j], pads[len(axes) + j]
            pads = full
    x: str | SSAValue = n.input(0)
    if any(p < 0 for p in pads):
        # Negative pads crop. With a constant fill, cropping first and padding after is the same.
        if mode != "constant":
            raise n.error(f"negative pads {pads} (cropping) are supported with mode constant only")
        shape = c.shape(n.input(0))
        offset = [max(0, -p) for p in pads[:rank]]
        ends = [d - max(0, -p) for d, p in zip(shape, pads[rank:], strict=True)]
        pads = [max(0, p) for p in pads]
        last = not any(pads)
        x = c.emit("top.Slice", [x, "", "", ""], n.out if last else c.derived(n.out, "crop"),
                   {"offset": offset, "ends": ends, "steps": [1] * rank})
        if last:
            return
    c.emit("top.Pad", [x, ""], n.out, {"paddings": pads, "val": value, "mode": mode})


def tile(n: Node, c: Converter) -> None:
    c.emit("top.Tile", [n.input(0), ""], n.out, {"tile": const_ints(n, c, 1, "repeats")})


def expand(n: Node, c: Converter) -> None:
    const_ints(n, c, 1, "shape")
    c.emit("top.Expand", [n.input(0), ""], n.out, {"shape": list(c.shape(n.out))})


def _gather_like(op_name: str):
    """Gather and GatherElements. Constant indices are made non-negative here (ONNX allows
    counting from the end; Top's kernels and the backend need not)."""

    def convert(n: Node, c: Converter) -> None:
        shape = c.shape(n.input(0))
        axis = norm_axis(n.attr("axis", 0), len(shape), n)
        indices = c.const(n.input(1))
        if indices is not None and (indices < 0).any():
            fixed = np.where(indices < 0, indices + shape[axis], indices)
            c.emit(op_name, [n.input(0), c.weight(c.derived(n.input(1), "nonneg"), fixed)], n.out, {"axis": axis})
            return
        c.emit(op_name, [n.input(0), n.input(1)], n.out, {"axis": axis})

    return convert


gather = _gather_like("top.Gather")
gather_elements = _gather_like("top.GatherElements")


def trilu(n: Node, c: Converter) -> None:
    k = const_ints(n, c, 1, "k")
    c.emit("top.Trilu", [n.input(0)], n.out, {"upper": bool(n.attr("upper", 1)), "diagonal": k[0] if k else 0})
