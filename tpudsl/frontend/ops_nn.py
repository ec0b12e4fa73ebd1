"""Converters of convolution, matrix product, normalization and pooling ONNX nodes."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import onnx

from tpudsl.dialects.geometry.window import auto_pads, split_pad, transposed_out_size
from tpudsl.frontend.onnx_node import Convert, Node, norm_axis

if TYPE_CHECKING:
    from xdsl.ir import SSAValue

    from tpudsl.frontend.onnx_import import Converter


def _window(n: Node, c: Converter, kernel: list[int]) -> dict[str, list[int]]:
    """kernel_shape, strides, dilations and explicit pads (auto_pad resolved here, so that no
    later phase has to know ONNX's SAME_UPPER/SAME_LOWER rules)."""
    k = len(kernel)
    strides = list(n.attr("strides", [1] * k))
    dilations = list(n.attr("dilations", [1] * k))
    try:
        same = auto_pads(c.shape(n.input(0))[2:], kernel, strides, dilations, n.attr("auto_pad", "NOTSET"))
    except ValueError as e:
        raise n.error(str(e)) from None
    pads = same if same is not None else list(n.attr("pads", [0] * (2 * k)))
    return {"kernel_shape": kernel, "strides": strides, "pads": pads, "dilations": dilations}


def conv(n: Node, c: Converter) -> None:
    """Conv. The filter may be a weight or computed upstream (weight_is_coeff=0): it is looked up
    by name like any operand."""
    filter_shape = c.shape(n.input(1))
    kernel = list(n.attr("kernel_shape", filter_shape[2:]))
    attrs = {
        **_window(n, c, kernel),
        "group": n.attr("group", 1),
        "weight_is_coeff": 1 if c.const(n.input(1)) is not None else 0,
    }
    c.emit("top.Conv", [n.input(0), n.input(1), n.input(2)], n.out, attrs)


def conv_transpose(n: Node, c: Converter) -> None:
    """ConvTranspose -> Deconv with the filter kept in ONNX layout [ic, oc/g, *k]
    (dynweight_reorderd=false), whether it is a weight or computed upstream."""
    x_shape, filter_shape = c.shape(n.input(0)), c.shape(n.input(1))
    kernel = list(n.attr("kernel_shape", filter_shape[2:]))
    k = len(kernel)
    strides = list(n.attr("strides", [1] * k))
    dilations = list(n.attr("dilations", [1] * k))
    out_pad = list(n.attr("output_padding", [0] * k))
    pads = list(n.attr("pads", [0] * (2 * k)))
    auto_pad = n.attr("auto_pad", "NOTSET")
    output_shape = n.attr("output_shape")
    if output_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = [size * s for size, s in zip(x_shape[2:], strides, strict=True)]
    if auto_pad == "VALID":
        pads = [0] * (2 * k)
    elif output_shape is not None:
        # ONNX: total padding makes the output exactly `output_shape`; SAME_UPPER puts the odd
        # pixel at the end, anything else at the beginning.
        output_shape = list(output_shape)[-k:]
        begins, ends = [], []
        for i in range(k):
            full = transposed_out_size(x_shape[2 + i], kernel[i], strides[i], dilations[i], 0, 0, out_pad[i])
            total = full - output_shape[i]
            if total < 0:  # a larger output than the kernel reaches: rows of bias only, at the end
                out_pad[i] -= total
                total = 0
            begin, end = split_pad(total, auto_pad == "SAME_UPPER")
            begins.append(begin)
            ends.append(end)
        pads = begins + ends
    attrs = {
        "kernel_shape": kernel,
        "strides": strides,
        "pads": pads,
        "dilations": dilations,
        "output_padding": out_pad,
        "group": n.attr("group", 1),
        "dynweight_reorderd": False,
    }
    c.emit("top.Deconv", [n.input(0), n.input(1), n.input(2)], n.out, attrs)


def matmul(n: Node, c: Converter) -> None:
    c.emit("top.MatMul", [n.input(0), n.input(1), ""], n.out)


def gemm(n: Node, c: Converter) -> None:
    """Gemm: alpha * A' @ B' + beta * C. transB is MatMul's right_transpose (weights keep their
    names); transA is a Permute; a constant C is the MatMul bias (scaled by beta when needed)."""
    a, b, c_name = n.input(0), n.input(1), n.input(2)
    alpha, beta = float(n.attr("alpha", 1.0)), float(n.attr("beta", 1.0))
    if n.attr("transA", 0):
        a = c.emit("top.Permute", [a], c.derived(n.out, "transA"), {"order": [1, 0]})
    c_const = c.const(c_name) if c_name else None

    def beta_c() -> str | SSAValue:
        if beta == 1.0:
            return c_name
        if c_const is not None:
            return c.weight(c.derived(c_name, "beta"), c_const * np.float32(beta))
        return c.emit("top.MulConst", [c_name], c.derived(n.out, "beta"), {"const_val": beta})

    # Without alpha, a constant C folds into the MatMul and the MatMul is the whole Gemm.
    whole = alpha == 1.0 and (c_const is not None or not c_name)
    bias = beta_c() if whole and c_name else ""
    product = c.emit("top.MatMul", [a, b, bias], n.out if whole else c.derived(n.out, "matmul"),
                     {"right_transpose": bool(n.attr("transB", 0))})
    if whole:
        return
    if alpha != 1.0:
        product = c.emit("top.MulConst", [product], c.derived(n.out, "alpha") if c_name else n.out, {"const_val": alpha})
    if c_name:
        c.emit("top.Add", [product, beta_c()], n.out)


def batch_norm(n: Node, c: Converter) -> None:
    if len([o for o in n.outputs if o]) > 1:
        raise n.error("training mode (running mean/var outputs) is not supported")
    x, scale, bias, mean, var = (n.input(i) for i in range(5))
    c.emit("top.BatchNorm", [x, mean, var, scale, bias], n.out, {"epsilon": n.attr("epsilon", 1e-5)})


def layer_norm(n: Node, c: Converter) -> None:
    """LayerNormalization. The optional Mean and InvStdDev outputs (used by training graphs and
    the ONNX tests) are computed by Reduce ops beside the LayerNorm, each under its ONNX name."""
    shape = c.shape(n.input(0))
    axis = norm_axis(n.attr("axis", -1), len(shape), n)
    eps = float(n.attr("epsilon", 1e-5))
    attrs = {"axis": axis, "eps": eps, "normalized_shape": list(shape[axis:])}
    c.emit("top.LayerNorm", [n.input(0), n.input(1), n.input(2)], n.out, attrs)
    mean_name, inv_std_name = n.outputs[1:3] + [""] * (3 - len(n.outputs[:3]))
    if not mean_name and not inv_std_name:
        return
    axes = list(range(axis, len(shape)))
    mean = c.emit("top.Reduce", [n.input(0)], mean_name or c.derived(n.out, "mean"),
                  {"axes": axes, "keepdims": True, "mode": "ReduceMean"})
    if inv_std_name:
        centered = c.emit("top.Sub", [n.input(0), mean], c.derived(n.out, "centered"))
        square = c.emit("top.Mul", [centered, centered], c.derived(n.out, "square"))
        var = c.emit("top.Reduce", [square], c.derived(n.out, "var"), {"axes": axes, "keepdims": True, "mode": "ReduceMean"})
        var_eps = c.emit("top.AddConst", [var], c.derived(n.out, "var_eps"), {"const_val": eps})
        c.emit("top.Rsqrt", [var_eps], inv_std_name)


def rms_norm(n: Node, c: Converter) -> None:
    """RMSNormalization (opset 23) over the dims from `axis` on. top.RMSNorm normalizes the last
    dim, so several normalized dims are flattened into one around it (`<name>_flatten`, and the
    scale's `<name>_scale_flatten`)."""
    shape = c.shape(n.input(0))
    axis = norm_axis(n.attr("axis", -1), len(shape), n)
    if n.attr("stash_type", 1) != onnx.TensorProto.FLOAT:
        raise n.error(f"stash_type {n.attr('stash_type')} is not supported (Top computes in float32)")
    inner = math.prod(shape[axis:])
    if math.prod(c.shape(n.input(1))) != inner:
        raise n.error(f"scale of shape {list(c.shape(n.input(1)))} does not cover the normalized dims {list(shape[axis:])}")
    attrs = {"eps": float(n.attr("epsilon", 1e-5))}
    if axis == len(shape) - 1 and len(c.shape(n.input(1))) == 1:
        c.emit("top.RMSNorm", [n.input(0), n.input(1)], n.out, attrs)
        return
    flat = [math.prod(shape[:axis]), inner]
    x = c.emit("top.Reshape", [n.input(0)], c.derived(n.out, "flatten"), {"shape": flat})
    scale = c.emit("top.Reshape", [n.input(1)], c.derived(n.out, "scale_flatten"), {"shape": [inner]})
    y = c.emit("top.RMSNorm", [x, scale], c.derived(n.out, "rms_norm"), attrs)
    c.emit("top.Reshape", [y], n.out, {"shape": list(shape)})


def instance_norm(n: Node, c: Converter) -> None:
    c.emit("top.InstanceNorm", [n.input(0), n.input(1), n.input(2)], n.out, {"eps": n.attr("epsilon", 1e-5)})


def group_norm(n: Node, c: Converter) -> None:
    """GroupNormalization: opset 18 gives scale/bias per group, opset 21 per channel; Top wants
    per channel, so opset-18 constants are repeated over each group's channels."""
    groups = int(n.attr("num_groups"))
    channels = c.shape(n.input(0))[1]
    operands: list[object] = [n.input(0)]
    for i, what in ((1, "per-group scale"), (2, "per-group bias")):
        if n.opset >= 21 or channels == groups:
            operands.append(n.input(i))
        else:
            per_group = c.const_input(n, i, what)
            operands.append(c.weight(c.derived(n.input(i), "per_channel"), np.repeat(per_group, channels // groups)))
    c.emit("top.GroupNorm", operands, n.out, {"num_groups": groups, "eps": n.attr("epsilon", 1e-5)})


def pool_attrs(n: Node, c: Converter) -> dict[str, object]:
    """Window and ceil_mode; `dilations` only when dilated (TPU-MLIR's pools have no such attribute)."""
    attrs = {**_window(n, c, list(n.attr("kernel_shape"))), "ceil_mode": bool(n.attr("ceil_mode", 0))}
    if all(d == 1 for d in attrs["dilations"]):
        del attrs["dilations"]
    return attrs


def _spatial_axes_reversed(attrs: dict[str, object], rank: int) -> dict[str, object]:
    """Window attributes for the input with its spatial axes in reverse order."""
    flipped = {key: list(attrs[key])[::-1] for key in ("kernel_shape", "strides", "dilations") if key in attrs}
    pads = list(attrs["pads"])
    return {**attrs, **flipped, "pads": pads[:rank][::-1] + pads[rank:][::-1]}


def average_pool(n: Node, c: Converter) -> None:
    attrs = {**pool_attrs(n, c), "count_include_pad": bool(n.attr("count_include_pad", 0))}
    c.emit("top.AvgPool", [n.input(0)], n.out, attrs)


def max_pool(n: Node, c: Converter) -> None:
    """MaxPool; with its Indices output, MaxPoolWithMask, whose mask (TPU-MLIR's: the index within
    each (n, c) plane) plus the plane's offset is ONNX's flat index. storage_order=1 (column-major
    indices) is the row-major index of the input with its spatial axes reversed, so the pool then
    runs on that reversed view."""
    attrs = pool_attrs(n, c)
    indices = n.outputs[1] if len(n.outputs) > 1 else ""
    if not indices:
        c.emit("top.MaxPool", [n.input(0)], n.out, attrs)
        return
    shape = c.shape(n.input(0))
    if int(np.prod(shape)) > 2**24:
        raise n.error(f"Indices of an input of {int(np.prod(shape))} elements are not exact in float32 (Top's type)")
    rank = len(shape) - 2
    x, out = n.input(0), n.out
    column_major = bool(n.attr("storage_order", 0)) and rank > 1
    if column_major:
        reverse = [0, 1, *range(rank + 1, 1, -1)]
        x = c.emit("top.Permute", [x], c.derived(n.out, "spatial_reversed"), {"order": reverse})
        attrs = _spatial_axes_reversed(attrs, rank)
        out = c.derived(n.out, "pool_reversed")
    pooled = c.emit("top.MaxPoolWithMask", [x], out, attrs, like_first=1)
    mask = pooled.owner.results[1]
    if column_major:
        c.emit("top.Permute", [pooled], n.out, {"order": reverse})
        mask = c.emit("top.Permute", [mask], c.derived(indices, "mask"), {"order": reverse})
    plane = int(np.prod(shape[2:]))
    offsets = (np.arange(shape[0] * shape[1]) * plane).reshape(shape[0], shape[1], *[1] * rank)
    c.emit("top.Add", [mask, c.weight(c.derived(indices, "plane_offset"), offsets)], indices)


def global_pool(top: str) -> Convert:
    def convert(n: Node, c: Converter) -> None:
        spatial = list(c.shape(n.input(0))[2:])
        c.emit(top, [n.input(0)], n.out, {"kernel_shape": spatial, "strides": [1] * len(spatial)})

    return convert


def depth_to_space(n: Node, c: Converter) -> None:
    block = int(n.attr("blocksize"))
    mode = n.attr("mode", "DCR")
    attrs = {"block_h": block, "block_w": block, "is_CRD": mode == "CRD", "is_inversed": False}
    c.emit("top.Depth2Space", [n.input(0)], n.out, attrs)


def space_to_depth(n: Node, c: Converter) -> None:
    block = int(n.attr("blocksize"))
    attrs = {"block_h": block, "block_w": block, "is_CRD": n.attr("mode", "DCR") == "CRD", "is_inversed": True}
    c.emit("top.Depth2Space", [n.input(0)], n.out, attrs)


def lrn(n: Node, c: Converter) -> None:
    attrs = {"size": int(n.attr("size")), "alpha": n.attr("alpha", 1e-4), "beta": n.attr("beta", 0.75),
             "bias": n.attr("bias", 1.0)}
    c.emit("top.LRN", [n.input(0)], n.out, attrs)


def prelu(n: Node, c: Converter) -> None:
    """PRelu. Top's PRelu takes one slope per channel (or one in all); any other broadcasting
    slope is written as relu(x) + min(x, 0) * slope."""
    x_shape, slope_shape = c.shape(n.input(0)), c.shape(n.input(1))
    aligned = (1,) * (len(x_shape) - len(slope_shape)) + tuple(slope_shape)  # ONNX broadcasts from the right
    if all(d == 1 for i, d in enumerate(aligned) if i != 1):
        c.emit("top.PRelu", [n.input(0), n.input(1)], n.out)
        return
    pos = c.emit("top.Relu", [n.input(0)], c.derived(n.out, "pos"))
    neg = c.emit("top.MinConst", [n.input(0)], c.derived(n.out, "neg"), {"const_val": 0.0})
    scaled = c.emit("top.Mul", [neg, n.input(1)], c.derived(n.out, "neg_scaled"))
    c.emit("top.Add", [pos, scaled], n.out)
