"""The decoder ("merge" and output heads) of EAST text detection, after SakuraRiven/EAST.

EAST up-samples with F.interpolate; torch exports that as Resize with explicit output `sizes`,
the operator that broke the TVM conversion described in the EAST seed article."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx

from tests.models.builder import GraphBuilder

# loc outputs are distances in pixels up to this scope; angles are in (-pi/2, pi/2).
TEXT_SCOPE = 512.0


def _resize2x(g: GraphBuilder, x: str, name: str, channels: int, size: int, mode: str, coord_mode: str | None) -> str:
    """Resize to twice the size with explicit `sizes`, as torch exports F.interpolate."""
    sizes = g.shape_const(f"{name}.sizes", (1, channels, 2 * size, 2 * size))
    if mode == "linear":
        attrs = {"mode": "linear", "coordinate_transformation_mode": coord_mode or "align_corners"}
    elif mode == "nearest":
        attrs = {"mode": "nearest", "coordinate_transformation_mode": coord_mode or "asymmetric", "nearest_mode": "floor"}
    else:
        raise ValueError(f"mode must be 'linear' or 'nearest', got {mode!r}")
    return g.node("Resize", [x, "", "", sizes], name, **attrs)


def _conv_bn_relu(g: GraphBuilder, x: str, name: str, cin: int, cout: int, k: int) -> str:
    y = g.conv(x, f"{name}.conv", cin, cout, k)
    return g.relu(g.batchnorm(y, f"{name}.bn", cout), f"{name}.relu")


def east_decoder(
    channels: Sequence[int] = (512, 512, 256, 128),
    merge_channels: Sequence[int] = (128, 64, 32),
    base_size: int = 16,
    mode: str = "linear",
    coord_mode: str | None = None,
    seed: int = 0,
) -> onnx.ModelProto:
    """Inputs "f1".."f4": backbone features from deepest (channels[0] x S x S) to shallowest
    (channels[3] x 8S x 8S). Three merge stages: Resize x2 -> Concat with the next feature ->
    1x1 conv+BN+Relu -> 3x3 conv+BN+Relu; then a 3x3 conv+BN+Relu. Heads: "score" =
    Sigmoid(1x1 conv), "geo" = Concat(Sigmoid(1x1 conv, 4 ch) * 512, (Sigmoid(1x1 conv) - 0.5) * pi).

    Resize: mode 'linear' (EAST's bilinear, align_corners by default) or 'nearest' (asymmetric,
    floor, torch's default); `coord_mode` overrides the coordinate transformation mode."""
    g = GraphBuilder("east_decoder", seed)
    feats = [g.input(f"f{i + 1}", (1, c, base_size * 2**i, base_size * 2**i)) for i, c in enumerate(channels)]
    y, cy, size = feats[0], channels[0], base_size
    for stage, (skip, cskip, cout) in enumerate(zip(feats[1:], channels[1:], merge_channels), start=1):
        y = _resize2x(g, y, f"merge{stage}.resize", cy, size, mode, coord_mode)
        y = g.node("Concat", [y, skip], f"merge{stage}.concat", axis=1)
        y = _conv_bn_relu(g, y, f"merge{stage}.reduce", cy + cskip, cout, 1)
        y = _conv_bn_relu(g, y, f"merge{stage}.fuse", cout, cout, 3)
        cy, size = cout, size * 2
    y = _conv_bn_relu(g, y, "merge.out", cy, cy, 3)

    f32 = np.float32
    score = g.node("Sigmoid", [g.conv(y, "score.conv", cy, 1, 1)], "score")
    loc = g.node("Sigmoid", [g.conv(y, "loc.conv", cy, 4, 1)], "loc.sigmoid")
    loc = g.node("Mul", [loc, g.const("loc.scope", f32(TEXT_SCOPE))], "loc")
    angle = g.node("Sigmoid", [g.conv(y, "angle.conv", cy, 1, 1)], "angle.sigmoid")
    angle = g.node("Sub", [angle, g.const("angle.half", f32(0.5))], "angle.center")
    angle = g.node("Mul", [angle, g.const("angle.pi", f32(np.pi))], "angle")
    geo = g.node("Concat", [loc, angle], "geo", axis=1)
    g.output(score)
    g.output(geo)
    return g.model()
