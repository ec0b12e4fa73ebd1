"""Resize (opsets 10, 11, 13, 18, 19) and Upsample (opsets 7 to 9).

Where the scale comes from matters (TVM once read `sizes` as `scales`): with `scales` ONNX uses
the given factor in the coordinate transform and the output size is floor(in * scale); with
`sizes` the factor is out/in computed in float32 (as onnxruntime does).

- linear: `top.Interp` with the coordinate mode and the factors (plus a `target_shape` weight
  when floor(in * factor) would not give the ONNX size, which float32 factors like 7/3 cause).
- nearest, asymmetric coordinates, rounding down, integer factors: `top.Upsample`.
- other nearest resizes of H/W: `top.Interp` with mode nearest and the ONNX `nearest_mode`.
- nearest resizes Interp cannot express (tf_half_pixel_for_nn or half_pixel_symmetric
  coordinates, resized N/C axes, legacy rounding that differs per axis): the converter computes
  the source index of every output index (as onnxruntime does, in float32) and emits one
  `top.Gather` per resized axis, which is exact for every mode.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from tpudsl.frontend.onnx_node import Node, norm_axes
from tpudsl.frontend.ops_shape import const_ints

if TYPE_CHECKING:
    from tpudsl.frontend.onnx_import import Converter

F32 = np.float32
INTERP_COORD_MODES = ("align_corners", "half_pixel", "pytorch_half_pixel", "asymmetric")
# Rounding of Upsample and opset-10 Resize in onnxruntime ("simple"): truncate when enlarging,
# round up when shrinking.
SIMPLE = "simple"


def _float_input(n: Node, c: Converter, i: int) -> list[float] | None:
    name = n.input(i)
    if not name:
        return None
    value = c.const(name)
    if value is None:
        raise n.error(f"'{name}' is computed from input values; only constant scales/sizes are supported")
    return [float(v) for v in value.astype(F32).reshape(-1)] or None


def _factors(n: Node, c: Converter, rank: int) -> list[F32]:
    """The per-axis scale factors ONNX uses in the coordinate transform (float32)."""
    in_shape = c.shape(n.input(0))
    if n.op_type == "Upsample":
        scales = n.attr("scales") if n.opset < 9 else _float_input(n, c, 1)
        sizes = None
    elif n.opset < 11:
        scales, sizes = _float_input(n, c, 1), None
    else:
        scales, sizes = _float_input(n, c, 2), const_ints(n, c, 3, "sizes")
    axes = norm_axes(n.attr("axes", list(range(rank))), rank, n)
    given = scales if scales else sizes
    if not given or len(given) != len(axes):
        raise n.error(f"needs {len(axes)} scales or sizes, got scales={scales} sizes={sizes}")
    factors = [F32(1.0)] * rank
    for ax, v in zip(axes, given, strict=True):
        factors[ax] = F32(v) if scales else F32(v) / F32(in_shape[ax])
    policy = n.attr("keep_aspect_ratio_policy", "stretch")
    if sizes and not scales and policy != "stretch":
        # One factor for every listed axis: the largest that fits (not_larger) or covers (not_smaller).
        pick = {"not_larger": min, "not_smaller": max}.get(policy)
        if pick is None:
            raise n.error(f"keep_aspect_ratio_policy {policy!r} is not one of stretch, not_larger, not_smaller")
        common = pick(factors[ax] for ax in axes)
        for ax in axes:
            factors[ax] = common
    return factors


def _source(x_out: np.ndarray, scale: F32, in_len: int, out_len: int, coord: str) -> np.ndarray:
    """Input coordinate of each output index, in float32 as onnxruntime computes it."""
    half = F32(0.5)
    if coord == "asymmetric":
        return x_out / scale
    if coord == "half_pixel":
        return (x_out + half) / scale - half
    if coord == "pytorch_half_pixel":
        return (x_out + half) / scale - half if out_len > 1 else np.zeros_like(x_out)
    if coord == "align_corners":
        return x_out * F32(in_len - 1) / F32(out_len - 1) if out_len > 1 else np.zeros_like(x_out)
    if coord == "tf_half_pixel_for_nn":
        return (x_out + half) / scale
    if coord == "half_pixel_symmetric":
        adjustment = F32(out_len) / (scale * F32(in_len))
        offset = F32(in_len) / F32(2) * (F32(1) - adjustment)
        return offset + (x_out + half) / scale - half
    raise ValueError(coord)


def _round(x: np.ndarray, mode: str, downsample: bool) -> np.ndarray:
    tie = x == np.trunc(x) + F32(0.5)
    if mode == "round_prefer_floor":
        return np.where(tie, np.floor(x), np.round(x))
    if mode == "round_prefer_ceil":
        return np.where(tie, np.ceil(x), np.round(x))
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    return np.ceil(x) if downsample else np.trunc(x)  # SIMPLE


def nearest_indices(in_len: int, out_len: int, scale: F32, coord: str, mode: str) -> np.ndarray:
    """For each output index along one axis, the input index nearest resize copies."""
    x = _source(np.arange(out_len, dtype=F32), scale, in_len, out_len, coord)
    return np.clip(_round(x, mode, scale < 1), 0, in_len - 1).astype(np.int64)


def resize(n: Node, c: Converter) -> None:
    in_shape, out_shape = c.shape(n.input(0)), c.shape(n.out)
    rank = len(in_shape)
    mode = n.attr("mode", "nearest")
    legacy = n.op_type == "Upsample" or n.opset < 11
    coord = "asymmetric" if legacy else n.attr("coordinate_transformation_mode", "half_pixel")
    nearest_mode = SIMPLE if legacy else n.attr("nearest_mode", "round_prefer_floor")
    if coord == "tf_crop_and_resize":
        raise n.error("coordinate_transformation_mode 'tf_crop_and_resize' is not supported")
    factors = _factors(n, c, rank)
    resized = [ax for ax in range(rank) if in_shape[ax] != out_shape[ax] or factors[ax] != 1]
    if mode == "nearest":
        _nearest(n, c, in_shape, out_shape, factors, resized, coord, nearest_mode)
    elif mode in ("linear", "bilinear"):  # "bilinear" is Upsample-7's spelling
        _linear(n, c, in_shape, out_shape, factors, resized, coord)
    else:
        raise n.error(f"mode {mode!r} is not supported (nearest and linear are)")


def _nearest(n, c, in_shape, out_shape, factors, resized, coord, nearest_mode) -> None:
    if not resized:
        c.alias(n.out, n.input(0))
        return
    # SIMPLE rounds each axis by its own factor: down when enlarging, up when shrinking.
    modes = {("ceil" if factors[ax] < 1 else "floor") if nearest_mode == SIMPLE else nearest_mode for ax in resized}
    integer = all(float(factors[ax]).is_integer() and factors[ax] >= 1 for ax in resized)
    spatial = len(in_shape) in (3, 4) and min(resized) >= 2
    if len(in_shape) == 4 and spatial and coord == "asymmetric" and modes == {"floor"} and integer:
        c.emit("top.Upsample", [n.input(0)], n.out, {"scale_h": int(factors[2]), "scale_w": int(factors[3])})
    elif spatial and coord in INTERP_COORD_MODES and len(modes) == 1:
        _interp(n, c, in_shape, out_shape, factors, {"mode": "nearest", "coord_mode": coord, "nearest_mode": modes.pop()})
    else:
        _gathers(n, c, in_shape, out_shape, factors, resized, coord, nearest_mode)


def _gathers(n, c, in_shape, out_shape, factors, resized, coord, nearest_mode) -> None:
    """Nearest resize Interp cannot express (other coordinate modes, other axes, a rounding
    rule per axis): one Gather per resized axis with the source index of every output index."""
    value: object = n.input(0)
    for i, ax in enumerate(resized):
        index = nearest_indices(in_shape[ax], out_shape[ax], factors[ax], coord, nearest_mode)
        weight = c.weight(c.derived(n.out, f"axis{ax}_index"), index)
        loc = n.out if i == len(resized) - 1 else c.derived(n.out, f"axis{ax}")
        value = c.emit("top.Gather", [value, weight], loc, {"axis": ax})


def _linear(n, c, in_shape, out_shape, factors, resized, coord) -> None:
    rank = len(in_shape)
    if rank not in (3, 4) or any(ax < 2 for ax in resized):
        raise n.error(f"linear resize of axes {resized} of a rank-{rank} tensor is not supported (H and W of NCHW are)")
    if coord not in INTERP_COORD_MODES:
        raise n.error(f"coordinate_transformation_mode {coord!r} is not supported for linear mode")
    if n.attr("antialias", 0) and any(factors[ax] < 1 for ax in resized):
        raise n.error("antialiased downscaling is not supported")
    _interp(n, c, in_shape, out_shape, factors, {"mode": "linear", "coord_mode": coord})


def _interp(n, c, in_shape, out_shape, factors, attrs) -> None:
    """top.Interp with the factors ONNX uses; a `target_shape` weight when floor(in * factor)
    does not give the ONNX output size (float32 factors such as 7/5 round below)."""
    rank = len(in_shape)
    attrs = {**attrs, "scale_w": float(factors[-1])}
    if rank == 4:
        attrs["scale_h"] = float(factors[2])
    target: object = ""
    floor_sizes = [math.floor(in_shape[ax] * float(factors[ax])) for ax in range(2, rank)]
    if floor_sizes != list(out_shape[2:]):
        target = c.weight(c.derived(n.out, "target_shape"), np.array(out_shape[2:], np.int64))
    c.emit("top.Interp", [n.input(0), target], n.out, attrs)
