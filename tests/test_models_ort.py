"""The bundled ONNX test models: valid, run in onnxruntime, have the advertised structure, and
(for the subtle ones) compute what a separately written numpy version computes."""

import math
from collections import Counter

import numpy as np
import pytest
from onnx import numpy_helper

from tests.models import (
    east_decoder,
    mobilenetv2,
    onnx_inference,
    random_inputs,
    resnet18,
    stylegan2_block,
    transformer_block,
)

SMALL_EAST = dict(channels=(32, 32, 16, 8), merge_channels=(16, 8, 8), base_size=4)


def op_counts(model):
    return Counter(n.op_type for n in model.graph.node)


def weights(model):
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def producer(model, tensor):
    return next(n for n in model.graph.node if tensor in n.output)


def run(model, seed=0, all_tensors=False):
    return onnx_inference(model, random_inputs(model, seed), all_tensors=all_tensors)


def assert_healthy(outputs, shapes):
    """Right shapes, finite, and not collapsed to a constant."""
    assert {k: v.shape for k, v in outputs.items()} == shapes
    for v in outputs.values():
        assert np.isfinite(v).all() and v.std() > 1e-3


@pytest.mark.parametrize(
    "build, kwargs, shapes",
    [
        (resnet18, dict(input_size=64, width=8, num_classes=10), {"output": (1, 10)}),
        (mobilenetv2, dict(input_size=64, width_mult=0.25, num_classes=10), {"output": (1, 10)}),
        (transformer_block, {}, {"output": (1, 16, 64)}),
        (transformer_block, dict(gelu="tanh", batch=2, seq_len=5), {"output": (2, 5, 64)}),
        (stylegan2_block, {}, {"features": (1, 8, 16, 16), "img": (1, 3, 16, 16)}),
        (east_decoder, SMALL_EAST, {"score": (1, 1, 32, 32), "geo": (1, 5, 32, 32)}),
        (east_decoder, dict(SMALL_EAST, mode="nearest"), {"score": (1, 1, 32, 32), "geo": (1, 5, 32, 32)}),
        (east_decoder, dict(SMALL_EAST, coord_mode="half_pixel"), {"score": (1, 1, 32, 32), "geo": (1, 5, 32, 32)}),
    ],
)
def test_models_run_in_onnxruntime(build, kwargs, shapes):
    model = build(**kwargs)
    assert model.opset_import[0].version == 17
    assert_healthy(run(model), shapes)


def test_full_size_resnet18_input():
    model = resnet18()
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == [1, 3, 224, 224]


def test_seed_decides_the_weights():
    assert resnet18(64, 10, 8, seed=1).SerializeToString() == resnet18(64, 10, 8, seed=1).SerializeToString()
    assert resnet18(64, 10, 8, seed=1).SerializeToString() != resnet18(64, 10, 8, seed=2).SerializeToString()


def test_resnet18_structure():
    model = resnet18(input_size=64, width=8, num_classes=10)
    counts = op_counts(model)
    # 1 stem + 8 blocks x 2 convs + 3 downsample convs; a BN after each.
    assert counts["Conv"] == 20 and counts["BatchNormalization"] == 20
    assert counts["Add"] == 8 and counts["MaxPool"] == 1 and counts["GlobalAveragePool"] == 1
    assert counts["Gemm"] == 1 and counts["Flatten"] == 1
    stem = {a.name: list(a.ints) for a in producer(model, "conv1.conv").attribute}
    assert stem["kernel_shape"] == [7, 7] and stem["strides"] == [2, 2]
    w = weights(model)
    assert w["conv1.conv.weight"].shape == (8, 3, 7, 7)
    assert w["layer4.0.downsample.conv.weight"].shape == (64, 32, 1, 1)


def test_resnet18_pooling_semantics():
    # GlobalAveragePool is the spatial mean of the last block's output; Gemm is x @ W^T + b.
    model = resnet18(input_size=64, width=8, num_classes=10)
    t = run(model, all_tensors=True)
    np.testing.assert_allclose(t["avgpool"], t["layer4.1.relu2"].mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-5)
    w = weights(model)
    expect = t["flatten"] @ w["output.weight"].T + w["output.bias"]
    np.testing.assert_allclose(t["output"], expect, rtol=1e-4, atol=1e-3)


def test_mobilenetv2_structure():
    model = mobilenetv2(input_size=64, width_mult=0.25, num_classes=10)
    depthwise = [n for n in model.graph.node if n.op_type == "Conv" and next(a.i for a in n.attribute if a.name == "group") > 1]
    w = weights(model)
    assert len(depthwise) == 17  # one per inverted residual block
    for n in depthwise:
        assert w[n.input[1]].shape[1] == 1  # one input channel per group
    clips = [n for n in model.graph.node if n.op_type == "Clip"]
    assert clips and all(float(w[n.input[1]]) == 0.0 and float(w[n.input[2]]) == 6.0 for n in clips)
    # Residual Adds where stride is 1 and channels match: sum(n - 1) = 10 at full width,
    # plus the first block at width 0.25, whose 32 -> 16 channels both round up to 8.
    assert op_counts(mobilenetv2(width_mult=1.0))["Add"] == 10
    assert op_counts(model)["Add"] == 11


def test_mobilenetv2_clip_is_relu6():
    t = run(mobilenetv2(input_size=32, width_mult=0.25, num_classes=10), all_tensors=True)
    np.testing.assert_array_equal(t["features.1.dw.relu6"], np.clip(t["features.1.dw.bn"], 0, 6))


def _layernorm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def _numpy_transformer(x, w, heads, gelu):
    """A plain numpy transformer block, written from the textbook formulas."""
    b, s, d = x.shape
    dh = d // heads
    h = _layernorm(x, w["ln1.weight"], w["ln1.bias"])

    def lin(v, name):
        return v @ w[f"{name}.weight"] + w[f"{name}.bias"]

    def split(v):
        return v.reshape(b, s, heads, dh).transpose(0, 2, 1, 3)

    q, k, v = split(lin(h, "attn.q")), split(lin(h, "attn.k")), split(lin(h, "attn.v"))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    ctx = (p @ v).transpose(0, 2, 1, 3).reshape(b, s, d)
    x = x + lin(ctx, "attn.out")
    h = lin(_layernorm(x, w["ln2.weight"], w["ln2.bias"]), "ffn.fc1")
    if gelu == "none":
        h = 0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    else:
        h = 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
    return x + lin(h, "ffn.fc2")


@pytest.mark.parametrize("gelu", ["none", "tanh"])
def test_transformer_block_matches_numpy(gelu):
    model = transformer_block(seq_len=6, d_model=32, num_heads=4, d_ff=64, batch=2, gelu=gelu)
    counts = op_counts(model)
    assert counts["LayerNormalization"] == 2 and counts["Softmax"] == 1 and counts["Reshape"] == 4
    assert counts["Erf" if gelu == "none" else "Tanh"] == 1
    inputs = random_inputs(model)
    out = onnx_inference(model, inputs)["output"]
    expect = _numpy_transformer(inputs["x"].astype(np.float64), weights(model), 4, gelu)
    np.testing.assert_allclose(out, expect, rtol=1e-4, atol=1e-4)


def _numpy_conv_transpose(x, w, stride):
    """y[o, i*s+p, j*s+q] += x[c, i, j] * w[c, o, p, q] (batch 1, no padding)."""
    _, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    y = np.zeros((1, o, (h - 1) * stride + kh, (wd - 1) * stride + kw))
    for p in range(kh):
        for q in range(kw):
            y[0, :, p : p + stride * h : stride, q : q + stride * wd : stride] += np.einsum("chw,co->ohw", x[0], w[:, :, p, q])
    return y


def test_stylegan2_block_structure():
    model = stylegan2_block()
    w = weights(model)
    up = next(n for n in model.graph.node if n.op_type == "ConvTranspose")
    transpose = producer(model, up.input[1])
    assert transpose.op_type == "Transpose" and list(transpose.attribute[0].ints) == [1, 0, 2, 3]
    for conv in (n for n in model.graph.node if n.op_type == "Conv" and n.name != "conv0.blur"):
        assert conv.input[1] not in w  # filters computed at run time
    counts = op_counts(model)
    assert counts["ReduceSum"] == 2 and counts["Sqrt"] == 2 and counts["Div"] == 2
    assert counts["LeakyRelu"] == 2 and "RandomNormalLike" not in counts


def test_stylegan2_modulation_and_upsampling_match_numpy():
    model = stylegan2_block(in_channels=4, out_channels=6, w_dim=8, resolution=4)
    w = weights(model)
    inputs = random_inputs(model, seed=3)
    t = onnx_inference(model, inputs, all_tensors=True)
    ws = inputs["ws"].astype(np.float64)

    # conv0 filter: styles from the affine layer, modulate, demodulate per output channel.
    styles = ws @ w["conv0.affine.weight"].T + w["conv0.affine.bias"]
    filt = w["conv0.weight"][0] * styles[0][None, :, None, None]
    filt = filt / np.sqrt((filt**2).sum(axis=(1, 2, 3), keepdims=True) + 1e-8)
    np.testing.assert_allclose(t["conv0.filter"], filt, rtol=1e-4, atol=1e-5)
    # Demodulated filters have unit norm per output channel.
    np.testing.assert_allclose((t["conv0.filter"] ** 2).sum(axis=(1, 2, 3)), 1.0, rtol=1e-4)

    up = _numpy_conv_transpose(inputs["x"].astype(np.float64), filt.transpose(1, 0, 2, 3), 2)
    np.testing.assert_allclose(t["conv0.up"], up, rtol=1e-4, atol=1e-4)
    assert t["conv0.up"].shape == (1, 6, 9, 9) and t["features"].shape == (1, 6, 8, 8)

    pre = t["conv0.bias_add"]
    act = np.where(pre > 0, pre, 0.2 * pre) * math.sqrt(2)
    np.testing.assert_allclose(t["conv0"], act, rtol=1e-5, atol=1e-6)


def test_east_decoder_structure_and_heads():
    model = east_decoder(**SMALL_EAST)
    w = weights(model)
    resizes = [n for n in model.graph.node if n.op_type == "Resize"]
    assert len(resizes) == 3
    assert [list(w[n.input[3]]) for n in resizes] == [[1, 32, 8, 8], [1, 16, 16, 16], [1, 8, 32, 32]]
    assert op_counts(model)["Sigmoid"] == 3 and op_counts(model)["Concat"] == 4
    t = run(model, all_tensors=True)
    assert 0 < t["score"].min() and t["score"].max() < 1
    loc, angle = t["geo"][:, :4], t["geo"][:, 4]
    assert 0 < loc.min() and loc.max() < 512
    assert -math.pi / 2 < angle.min() and angle.max() < math.pi / 2
    # align_corners linear resize keeps the corner pixels.
    r = t["merge1.resize"]
    f1 = random_inputs(model)["f1"]
    np.testing.assert_allclose(r[..., [0, -1], :][..., [0, -1]], f1[..., [0, -1], :][..., [0, -1]], rtol=1e-5)


def test_east_coordinate_mode_is_a_parameter():
    modes = {
        a.s.decode()
        for n in east_decoder(**SMALL_EAST, coord_mode="half_pixel").graph.node
        if n.op_type == "Resize"
        for a in n.attribute
        if a.name == "coordinate_transformation_mode"
    }
    assert modes == {"half_pixel"}


def test_east_nearest_resize_repeats_pixels():
    model = east_decoder(**SMALL_EAST, mode="nearest")
    t = run(model, all_tensors=True)
    f1 = random_inputs(model)["f1"]
    np.testing.assert_array_equal(t["merge1.resize"], f1.repeat(2, axis=2).repeat(2, axis=3))


def test_onnx_inference_all_tensors_names_every_node_output():
    model = transformer_block(seq_len=4, d_model=16, num_heads=2, d_ff=32)
    t = run(model, all_tensors=True)
    assert set(t) == {o for n in model.graph.node for o in n.output}
    assert set(run(model)) == {"output"}


def test_builders_reject_bad_parameters():
    with pytest.raises(ValueError, match="divisible"):
        transformer_block(d_model=30, num_heads=4)
    with pytest.raises(ValueError, match="mode"):
        east_decoder(**SMALL_EAST, mode="cubic")
    with pytest.raises(ValueError, match="approximate"):
        transformer_block(gelu="fast")
