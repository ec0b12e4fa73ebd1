"""Resize (opsets 10, 11, 13, 18, 19) and Upsample (opsets 7 to 9).

Where the scale comes from matters (TVM once read `sizes` as `scales`): with `scales` ONNX uses
the given factor in the coordinate transform and the output size is floor(in * scale); with
`sizes` the factor is out/in computed in float32 (as onnxruntime does).

- linear and cubic (with antialias, exclude_outside, cubic_coeff_a): `top.Interp` with the
  coordinate mode and the factors (plus a `target_shape` weight when floor(in * factor) would
  not give the ONNX size, which float32 factors like 7/3 cause). tf_crop_and_resize adds the
  spatial `roi` and `extrapolation_value`.
- nearest, asymmetric coordinates, rounding down, integer factors: `top.Upsample`.
- other nearest resizes of H/W: `top.Interp` with mode nearest and the ONNX `nearest_mode`.
- nearest resizes Interp cannot express (resized N/C axes, legacy rounding that differs per
  axis): the converter computes the source index of every output index (as onnxruntime does,
  in float32) and emits one `top.Gather` per resized axis, which is exact for every mode.

The coordinate transforms, rounding and filters are `tpudsl/dialects/geometry/resize.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tpudsl.dialects.geometry import resize as geo
from tpudsl.frontend.onnx_node import Node, norm_axes
from tpudsl.frontend.ops_shape import const_ints

if TYPE_CHECKING:
    from tpudsl.frontend.onnx_import import Converter

F32 = np.float32


def _float_input(n: Node, c: Converter, i: int, what: str) -> list[float] | None:
    value = c.const_input(n, i, what)
    return None if value is None else [float(v) for v in value.astype(F32).reshape(-1)] or None


def _factors(n: Node, c: Converter, rank: int) -> list[F32]:
    """The per-axis scale factors ONNX uses in the coordinate transform (float32)."""
    in_shape = c.shape(n.input(0))
    if n.op_type == "Upsample":
        scales = n.attr("scales") if n.opset < 9 else _float_input(n, c, 1, "scales")
        sizes = None
    elif n.opset < 11:
        scales, sizes = _float_input(n, c, 1, "scales"), None
    else:
        scales, sizes = _float_input(n, c, 2, "scales"), const_ints(n, c, 3, "sizes")
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


def _rois(n: Node, c: Converter, rank: int) -> list[tuple[float, float]]:
    """tf_crop_and_resize's (start, end) per axis from the `roi` input ([starts..., ends...]
    over `axes`, or over every axis); (0, 1) for every axis in the other modes."""
    full = [geo.FULL_ROI] * rank
    if n.attr("coordinate_transformation_mode") != "tf_crop_and_resize":
        return full
    roi = _float_input(n, c, 1, "roi")
    axes = norm_axes(n.attr("axes", list(range(rank))), rank, n)
    if not roi or len(roi) != 2 * len(axes):
        raise n.error(f"tf_crop_and_resize needs a roi of {2 * len(axes)} values, got {roi}")
    for i, ax in enumerate(axes):
        full[ax] = (roi[i], roi[len(axes) + i])
    return full


@dataclass(frozen=True)
class Geometry:
    """What one Resize node does to its input, per axis."""

    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    factors: list[F32]
    resized: list[int]
    coord: str
    rois: list[tuple[float, float]]

    def spatial(self) -> bool:
        """Only H and W (or W) of an NCHW (NCW) tensor change: what top.Interp resizes."""
        return len(self.in_shape) in (3, 4) and min(self.resized, default=2) >= 2

    def crop_attrs(self, n: Node) -> dict[str, object]:
        if self.coord != "tf_crop_and_resize":
            return {}
        rois = self.rois[2:]
        return {"roi": [r[0] for r in rois] + [r[1] for r in rois],
                "extrapolation_value": float(F32(n.attr("extrapolation_value", 0.0)))}


def resize(n: Node, c: Converter) -> None:
    in_shape, out_shape = c.shape(n.input(0)), c.shape(n.out)
    rank = len(in_shape)
    mode = n.attr("mode", "nearest")
    legacy = n.op_type == "Upsample" or n.opset < 11
    coord = "asymmetric" if legacy else n.attr("coordinate_transformation_mode", "half_pixel")
    if coord not in geo.COORD_MODES:
        raise n.error(f"coordinate_transformation_mode {coord!r} is not one of {', '.join(geo.COORD_MODES)}")
    factors = _factors(n, c, rank)
    # Resampling a length-1 axis to length 1 copies it, whatever the factor.
    resized = [ax for ax in range(rank) if in_shape[ax] != out_shape[ax] or (factors[ax] != 1 and in_shape[ax] > 1)]
    geometry = Geometry(in_shape, out_shape, factors, resized, coord, _rois(n, c, rank))
    _reject_ambiguous(n, geometry, antialias=bool(n.attr("antialias", 0)) and mode != "nearest")
    if mode == "nearest":
        _nearest(n, c, geometry, None if legacy else n.attr("nearest_mode", "round_prefer_floor"))
    elif mode in ("linear", "bilinear", "cubic"):  # "bilinear" is Upsample-7's spelling
        _interpolate(n, c, geometry, "cubic" if mode == "cubic" else "linear")
    else:
        raise n.error(f"mode {mode!r} is not one of nearest, linear, cubic")


def _reject_ambiguous(n: Node, g: Geometry, antialias: bool) -> None:
    """Where onnxruntime takes a shortcut that ONNX does not, there is no one answer: an error."""
    scales = [float(f) for f in g.factors]
    if g.in_shape == g.out_shape and g.resized:
        raise n.error(f"scales {scales} keep the shape {list(g.in_shape)}: onnxruntime copies the input "
                      "there and ONNX resamples it")
    for ax in range(len(g.in_shape)):
        if g.factors[ax] == 1 and g.rois[ax] != geo.FULL_ROI and g.in_shape[ax] > 1:
            raise n.error(f"tf_crop_and_resize crops axis {ax} (roi {list(g.rois[ax])}) at scale 1: onnxruntime "
                          "ignores the roi there and ONNX crops")
        if antialias and g.in_shape[ax] == g.out_shape[ax] and ax in g.resized:
            raise n.error(f"antialias with scale {scales[ax]} keeps axis {ax}'s length: onnxruntime copies "
                          "that axis and ONNX resamples it")


def _nearest(n: Node, c: Converter, g: Geometry, nearest_mode: str | None) -> None:
    """nearest_mode None: Upsample/Resize-10's legacy rounding, which depends on each axis' factor."""
    if not g.resized:
        c.alias(n.out, n.input(0))
        return
    modes = {nearest_mode or geo.legacy_nearest_mode(g.factors[ax]) for ax in g.resized}
    integer = all(float(g.factors[ax]).is_integer() and g.factors[ax] >= 1 for ax in g.resized)
    if len(g.in_shape) == 4 and g.spatial() and g.coord == "asymmetric" and modes == {"floor"} and integer:
        c.emit("top.Upsample", [n.input(0)], n.out, {"scale_h": int(g.factors[2]), "scale_w": int(g.factors[3])})
    elif g.spatial() and len(modes) == 1:
        _interp(n, c, g, {"mode": "nearest", "coord_mode": g.coord, "nearest_mode": modes.pop(), **g.crop_attrs(n)})
    elif g.coord == "tf_crop_and_resize":
        raise n.error(f"nearest tf_crop_and_resize of axes {g.resized} is not supported (H and W of NCHW are)")
    else:
        _gathers(n, c, g, nearest_mode)


def _gathers(n: Node, c: Converter, g: Geometry, nearest_mode: str | None) -> None:
    """Nearest resize Interp cannot express (other axes, a rounding rule per axis): one Gather
    per resized axis with the source index of every output index."""
    value: object = n.input(0)
    for i, ax in enumerate(g.resized):
        size, scale = g.in_shape[ax], g.factors[ax]
        coords = geo.source_coords(size, g.out_shape[ax], scale, g.coord)
        index = geo.nearest_indices(coords, size, nearest_mode or geo.legacy_nearest_mode(scale))
        weight = c.weight(c.derived(n.out, f"axis{ax}_index"), index)
        loc = n.out if i == len(g.resized) - 1 else c.derived(n.out, f"axis{ax}")
        value = c.emit("top.Gather", [value, weight], loc, {"axis": ax})


def _interpolate(n: Node, c: Converter, g: Geometry, mode: str) -> None:
    """Linear or cubic resize of H/W: top.Interp with ONNX's filter attributes."""
    rank = len(g.in_shape)
    if not g.spatial():
        raise n.error(f"{mode} resize of axes {g.resized} of a rank-{rank} tensor is not supported (H and W of NCHW are)")
    attrs: dict[str, object] = {"mode": mode, "coord_mode": g.coord, **g.crop_attrs(n)}
    if mode == "cubic":
        attrs["cubic_coeff_a"] = float(F32(n.attr("cubic_coeff_a", geo.CUBIC_COEFF_A)))
    if n.attr("antialias", 0):
        attrs["antialias"] = True
    if n.attr("exclude_outside", 0):
        attrs["exclude_outside"] = True
    _interp(n, c, g, attrs)


def _interp(n: Node, c: Converter, g: Geometry, attrs: dict[str, object]) -> None:
    """top.Interp with the factors ONNX uses; a `target_shape` weight when floor(in * factor)
    does not give the ONNX output size (float32 factors such as 7/5 round below)."""
    rank = len(g.in_shape)
    attrs = {**attrs, "scale_w": float(g.factors[-1])}
    if rank == 4:
        attrs["scale_h"] = float(g.factors[2])
    target: object = ""
    floor_sizes = [geo.output_length(g.in_shape[ax], float(g.factors[ax])) for ax in range(2, rank)]
    if floor_sizes != list(g.out_shape[2:]):
        target = c.weight(c.derived(n.out, "target_shape"), np.array(g.out_shape[2:], np.int64))
    c.emit("top.Interp", [n.input(0), target], n.out, attrs)


# ONNX GridSample's modes -> TPU-MLIR's GridSampler enums (opset 20 renamed bilinear/bicubic to
# linear/cubic).
GRID_MODES = {"bilinear": 0, "linear": 0, "nearest": 1, "bicubic": 2, "cubic": 2}
GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(n: Node, c: Converter) -> None:
    """GridSample of a 4-D or 5-D (volumetric) input -> top.GridSampler (a volumetric bicubic is the
    shape rule's error)."""
    mode, padding = n.attr("mode", "linear" if n.opset >= 20 else "bilinear"), n.attr("padding_mode", "zeros")
    if mode not in GRID_MODES:
        raise n.error(f"mode '{mode}' is not supported (bilinear/linear, nearest, bicubic/cubic)")
    if padding not in GRID_PADDING:
        raise n.error(f"padding_mode '{padding}' is not supported (zeros, border, reflection)")
    c.emit("top.GridSampler", [n.input(0), n.input(1)], n.out,
           {"mode": GRID_MODES[mode], "padding_mode": GRID_PADDING[padding],
            "align_corners": bool(n.attr("align_corners", 0))})
