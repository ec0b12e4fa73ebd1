"""A StyleGAN2 synthesis block as torch exports it with noise_mode='const' and batch 1.

The filters of its convolutions are computed at run time from the style vector (modulation and
demodulation), so Conv and ConvTranspose take a computed tensor, not a weight, as their filter:
the case DragGAN needed TPU-MLIR to support."""

from __future__ import annotations

import numpy as np
import onnx

from tests.models.builder import GraphBuilder

LRELU_ALPHA = 0.2
LRELU_GAIN = float(np.sqrt(2.0))
# upfirdn2d's default resampling filter [1, 3, 3, 1], as a 2-D separable kernel.
FIR_1D = np.array([1.0, 3.0, 3.0, 1.0])


def _blur_kernel(channels: int) -> np.ndarray:
    """The depthwise FIR filter after 2x upsampling; the factor 4 restores the up-sampled gain."""
    k = np.outer(FIR_1D, FIR_1D)
    k = k / k.sum() * 4
    return np.broadcast_to(k, (channels, 1, 4, 4)).astype(np.float32)


def _modulated_filter(
    g: GraphBuilder, ws: str, name: str, w_dim: int, cin: int, cout: int, k: int, demodulate: bool,
) -> str:
    """style = Gemm(ws); w = weight * style; w *= rsqrt(sum(w^2) + 1e-8); reshape to a conv filter."""
    f32 = np.float32
    affine_w = g.weight(f"{name}.affine.weight", (cin, w_dim), fan_in=w_dim)
    affine_b = g.const(f"{name}.affine.bias", np.ones(cin, f32))  # StyleGAN's bias_init=1
    styles = g.node("Gemm", [ws, affine_w, affine_b], f"{name}.affine", transB=1)
    if not demodulate:
        # toRGB scales styles by the weight gain instead of demodulating.
        styles = g.node("Mul", [styles, g.const(f"{name}.weight_gain", f32(1 / np.sqrt(cin * k * k)))], f"{name}.styles")
    styles = g.node("Reshape", [styles, g.shape_const(f"{name}.styles_shape", (1, 1, cin, 1, 1))], f"{name}.styles_5d")
    weight = g.const(f"{name}.weight", g.rng.standard_normal((1, cout, cin, k, k)).astype(f32))
    w = g.node("Mul", [weight, styles], f"{name}.modulate")
    if demodulate:
        sq = g.node("Mul", [w, w], f"{name}.square")
        total = g.node("ReduceSum", [sq, g.shape_const(f"{name}.sum_axes", (2, 3, 4))], f"{name}.sum", keepdims=1)
        total = g.node("Add", [total, g.const(f"{name}.eps", f32(1e-8))], f"{name}.sum_eps")
        root = g.node("Sqrt", [total], f"{name}.sqrt")
        dcoefs = g.node("Div", [g.const(f"{name}.one", f32(1.0)), root], f"{name}.dcoefs")
        w = g.node("Mul", [w, dcoefs], f"{name}.demodulate")
    return g.node("Reshape", [w, g.shape_const(f"{name}.filter_shape", (cout, cin, k, k))], f"{name}.filter")


def _bias_noise_act(g: GraphBuilder, y: str, name: str, c: int, size: int) -> str:
    """Constant noise, bias, LeakyReLU(0.2) times sqrt(2) (StyleGAN's bias_act 'lrelu')."""
    noise = g.small(f"{name}.noise_const", (1, 1, size, size), scale=0.05)  # noise_const * noise_strength, folded
    y = g.node("Add", [y, noise], f"{name}.noise")
    y = g.node("Add", [y, g.small(f"{name}.bias", (1, c, 1, 1))], f"{name}.bias_add")
    y = g.node("LeakyRelu", [y], f"{name}.lrelu", alpha=LRELU_ALPHA)
    return g.node("Mul", [y, g.const(f"{name}.gain", np.float32(LRELU_GAIN))], name)


def stylegan2_block(
    in_channels: int = 8, out_channels: int = 8, w_dim: int = 16, resolution: int = 8, seed: int = 0,
) -> onnx.ModelProto:
    """conv0 (2x up), conv1 and toRGB of one synthesis block.

    conv0: computed filter [cout, cin, 3, 3] -> Transpose(perm=[1,0,2,3]) -> ConvTranspose
    stride 2 -> depthwise 4x4 FIR blur -> noise, bias, lrelu. conv1: computed filter -> Conv
    3x3 -> noise, bias, lrelu. toRGB: modulated (not demodulated) 1x1 Conv + bias.
    Inputs "x" [1, in_channels, R, R], "ws" [1, w_dim]; outputs "features" [1, out_channels,
    2R, 2R] and "img" [1, 3, 2R, 2R]."""
    g = GraphBuilder("stylegan2_block", seed)
    x = g.input("x", (1, in_channels, resolution, resolution))
    ws = g.input("ws", (1, w_dim))
    size = 2 * resolution

    w0 = _modulated_filter(g, ws, "conv0", w_dim, in_channels, out_channels, 3, demodulate=True)
    w0 = g.node("Transpose", [w0], "conv0.filter_transpose", perm=[1, 0, 2, 3])
    y = g.node("ConvTranspose", [x, w0], "conv0.up", kernel_shape=[3, 3], strides=[2, 2])  # 2R+1
    blur = g.const("conv0.blur.kernel", _blur_kernel(out_channels))
    y = g.node("Conv", [y, blur], "conv0.blur", kernel_shape=[4, 4], pads=[1, 1, 1, 1], group=out_channels)
    y = _bias_noise_act(g, y, "conv0", out_channels, size)

    w1 = _modulated_filter(g, ws, "conv1", w_dim, out_channels, out_channels, 3, demodulate=True)
    y = g.node("Conv", [y, w1], "conv1.conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    y = _bias_noise_act(g, y, "features", out_channels, size)
    g.output(y)

    wr = _modulated_filter(g, ws, "torgb", w_dim, out_channels, 3, 1, demodulate=False)
    img = g.node("Conv", [y, wr], "torgb.conv", kernel_shape=[1, 1])
    g.output(g.node("Add", [img, g.small("torgb.bias", (1, 3, 1, 1))], "img"))
    return g.model()
