"""Whole models, ONNX to numbers: tests/models builders -> convert_onnx -> Top interpreter == onnxruntime.

Each model is built at a small input size (a few seconds each), converted with `convert_onnx` and
run by `ModuleInterpreter`; onnxruntime (one thread, tests.models.onnx_inference) is the reference.
Each model is checked as converted and again after canonicalize (the module model_transform writes);
five of them also go through the files (model_transform -> .mlir + npz -> ModuleInterpreter.from_file),
comparing every tensor name both sides compute, not only the outputs.
Every output must have onnxruntime's shape, cosine similarity >= 0.99999 and max relative error
<= 1e-4, where max relative error = max|a - b| / max(max|b|, 1e-6) with b the onnxruntime output
(relative to the output's largest magnitude; see tests/onnx_node/harness.py).

The StyleGAN2 block also checks the DragGAN fix: after canonicalize, every top.Deconv whose filter
is computed (not a top.Weight) has dynweight_reorderd = true, the export's Transpose of that filter
is gone (no top.Permute left between the filter computation and the Deconv), a second canonicalize
changes nothing (the reorder happens exactly once), and the numbers still match onnxruntime.
"""

from __future__ import annotations

import numpy as np
import pytest

from onnx_node.harness import apply_canonicalize, convert_onnx, cosine, max_rel_err, run_tpudsl
from tests.models import (
    convnext,
    densenet,
    east_decoder,
    efficientnet,
    mobilenetv2,
    onnx_inference,
    random_inputs,
    resnet18,
    shufflenet,
    stylegan2_block,
    transformer_block,
    vit,
)
from tpudsl.interp import run_module

COS_MIN = 0.99999
REL_MAX = 1e-4

MODELS = {
    "resnet18": lambda: resnet18(input_size=64, num_classes=10, width=16),
    "mobilenetv2": lambda: mobilenetv2(input_size=64, num_classes=10, width_mult=0.35),
    "transformer_block_erf_gelu": lambda: transformer_block(seq_len=16, d_model=64, num_heads=4, d_ff=128, gelu="none"),
    "transformer_block_tanh_gelu": lambda: transformer_block(seq_len=8, d_model=32, num_heads=2, d_ff=64, gelu="tanh"),
    "stylegan2_block": lambda: stylegan2_block(),
    "east_decoder_linear": lambda: east_decoder(channels=(32, 32, 16, 8), merge_channels=(16, 8, 8), base_size=4, mode="linear"),
    "east_decoder_nearest": lambda: east_decoder(channels=(32, 32, 16, 8), merge_channels=(16, 8, 8), base_size=4, mode="nearest"),
    # the architectures bench/interp_zoo.py times, at test sizes
    "efficientnet_silu": lambda: efficientnet(input_size=32, num_classes=10, max_repeats=1, width=0.25),
    "efficientnet_hardswish": lambda: efficientnet(input_size=32, num_classes=10, max_repeats=1, width=0.25,
                                                   act="hardswish"),
    "convnext": lambda: convnext(input_size=32, num_classes=10, dims=(16, 32), depths=(1, 2)),
    "shufflenet": lambda: shufflenet(input_size=32, num_classes=10, stage_channels=(16, 32), repeats=(2, 2),
                                     last_channels=64),
    "vit": lambda: vit(input_size=32, patch=8, d_model=32, depth=2, num_heads=2, num_classes=10),
    "densenet": lambda: densenet(input_size=32, num_classes=10, growth=8, blocks=(2, 2), init_channels=16),
}


def assert_matches(got: dict[str, np.ndarray], want: dict[str, np.ndarray], what: str) -> None:
    for name, ref in want.items():
        assert name in got, f"{what}: output {name!r} missing; got {sorted(got)}"
        out = np.asarray(got[name])
        assert out.shape == ref.shape, f"{what}: {name} shape {out.shape} != onnxruntime {ref.shape}"
        assert np.isfinite(out).all(), f"{what}: {name} has non-finite values"
        cos, rel = cosine(out, ref), max_rel_err(out, ref)
        assert cos >= COS_MIN and rel <= REL_MAX, f"{what}: {name} cosine {cos:.8f}, max rel err {rel:.2e}"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_onnxruntime(name):
    model = MODELS[name]()
    feeds = random_inputs(model, seed=1)
    want = onnx_inference(model, feeds)
    got = run_tpudsl(model, feeds, name=name)
    assert_matches(got, want, name)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_canonicalized_model_matches_onnxruntime(name):
    """The module model_transform writes (after canonicalize: BatchNorm folded, ReLU fused, ...)."""
    model = MODELS[name]()
    feeds = random_inputs(model, seed=4)
    want = onnx_inference(model, feeds)
    got = run_tpudsl(model, feeds, name=name, canonicalize=True)
    assert_matches(got, want, f"{name} after canonicalize")


def _dynamic_deconvs(module) -> list:
    return [
        op for op in module.walk()
        if op.name == "top.Deconv" and getattr(op.operands[1].owner, "name", None) != "top.Weight"
    ]


def test_stylegan2_dynamic_deconv_filter_reordered_once_after_canonicalize():
    from tpudsl.ir.printer import print_module

    model = stylegan2_block()
    feeds = random_inputs(model, seed=2)
    want = onnx_inference(model, feeds)

    top = convert_onnx(model, "stylegan2_block")
    deconvs = _dynamic_deconvs(top.module)
    assert deconvs, "the StyleGAN2 block should convert to a top.Deconv with a computed filter"
    for op in deconvs:  # as exported: the filter goes through Transpose(perm=[1,0,2,3]) -> top.Permute
        before = op.operands[1].owner
        assert getattr(before, "name", None) == "top.Permute", "the export's filter Transpose should convert to top.Permute"
        flag = op.attributes.get("dynweight_reorderd")
        assert flag is None or not bool(flag.value.data), "dynweight_reorderd should start false"
    apply_canonicalize(top)
    deconvs = _dynamic_deconvs(top.module)
    assert len(deconvs) == 1
    for op in deconvs:
        flag = op.attributes.get("dynweight_reorderd")
        assert flag is not None and bool(flag.value.data), "dynweight_reorderd should be true"
        producer = op.operands[1].owner
        assert getattr(producer, "name", None) != "top.Permute", (
            "the export's filter Transpose should be cancelled, not kept or doubled")
    permutes = [op for op in top.module.walk() if op.name == "top.Permute"]
    assert not permutes, f"a top.Permute is left: {[str(p.location) for p in permutes]}"

    text = print_module(top.module, debuginfo=True)
    apply_canonicalize(top)
    assert print_module(top.module, debuginfo=True) == text, "a second canonicalize changed the module"

    assert_matches(run_module(top.module, top.weights, feeds), want, "stylegan2_block after canonicalize")


FILE_MODELS = ("resnet18", "mobilenetv2", "transformer_block_erf_gelu", "stylegan2_block", "east_decoder_linear")


@pytest.mark.parametrize("name", FILE_MODELS)
def test_model_transform_files_every_named_tensor_matches_onnxruntime(name, tmp_path):
    """Through the files: model_transform writes NAME.mlir + weight npz, ModuleInterpreter.from_file
    reads them back, and every tensor of the Top module whose name onnxruntime also computes (the
    outputs and every surviving intermediate, TPU-MLIR's npz compare) matches onnxruntime."""
    import onnx

    from tpudsl.cli import model_transform
    from tpudsl.interp import ModuleInterpreter

    model = MODELS[name]()
    onnx_path = tmp_path / f"{name}.onnx"
    onnx.save(model, onnx_path)
    mlir = tmp_path / f"{name}.mlir"
    rc = model_transform.run(["--model_name", name, "--model_def", str(onnx_path), "--mlir", str(mlir)])
    assert rc in (0, None)
    assert mlir.exists() and (tmp_path / f"{name}_top_f32_all_weight.npz").exists()

    feeds = random_inputs(model, seed=5)
    want = onnx_inference(model, feeds, all_tensors=True)
    interp = ModuleInterpreter.from_file(mlir)
    interp.init()
    try:
        got = interp.inference(feeds, keep_all=True)
    finally:
        interp.deinit()
    outputs = [o.name for o in model.graph.output]
    assert set(outputs) <= set(got), f"outputs missing from the interpreter: {sorted(set(outputs) - set(got))}"
    common = sorted((set(got) & set(want)) - set(feeds))
    assert len(common) > len(outputs), "no intermediate tensor kept its ONNX name"
    assert_matches({k: got[k] for k in common}, {k: want[k] for k in common}, f"{name} via files")


def test_the_metrics_mean_what_the_docstring_says():
    """cosine and max relative error (harness.py), on values worked out by hand."""
    a = np.array([1.0, 2.0, 3.0], np.float32)
    assert cosine(a, 2 * a) == pytest.approx(1.0)
    assert cosine(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(0.0)
    assert cosine(np.array([1.0, 1.0]), np.array([1.0, 0.0])) == pytest.approx(1 / np.sqrt(2))
    assert max_rel_err(np.array([1.0, 2.0]), np.array([1.0, 4.0])) == pytest.approx(0.5)  # |2-4| / 4
    assert max_rel_err(np.array([0.1, 0.0]), np.array([0.0, -10.0])) == pytest.approx(1.0)  # 10 / 10
    assert max_rel_err(np.array([1e-7]), np.array([0.0])) == pytest.approx(0.1)  # 1e-7 / 1e-6 floor


def _exported_chains():
    """torch's pre-opset-17 spellings: LayerNorm in ops (Pow 2, eps 1e-5, gamma, beta), then the
    erf GELU, x * Sigmoid(x) and x * clip(x + 3, 0, 6) / 6 (HardSwish) on three branches."""
    from tests.models.builder import GraphBuilder
    from tests.models.transformer import gelu_layer

    f32 = np.float32
    g = GraphBuilder("exported_chains")
    x = g.input("x", (2, 5, 16))
    mean = g.node("ReduceMean", [x], "ln.mean", axes=[-1], keepdims=1)
    d = g.node("Sub", [x, mean], "ln.sub")
    var = g.node("ReduceMean", [g.node("Pow", [d, g.const("ln.two", f32(2.0))], "ln.pow")], "ln.var", axes=[-1], keepdims=1)
    std = g.node("Sqrt", [g.node("Add", [var, g.const("ln.eps", f32(1e-5))], "ln.add_eps")], "ln.sqrt")
    y = g.node("Div", [d, std], "ln.div")
    y = g.node("Mul", [y, g.const("ln.gamma", g.rng.uniform(0.5, 1.5, 16).astype(f32))], "ln.mul_gamma")
    y = g.node("Add", [y, g.small("ln.beta", (16,))], "ln")
    g.output(gelu_layer(g, y, "gelu", "none"))
    g.output(g.node("Mul", [y, g.node("Sigmoid", [y], "silu.sigmoid")], "silu"))
    relu6 = g.node("Clip", [g.node("Add", [y, g.const("hs.three", f32(3.0))], "hs.add"),
                            g.const("hs.zero", f32(0.0)), g.const("hs.six", f32(6.0))], "hs.clip")
    g.output(g.node("Div", [g.node("Mul", [y, relu6], "hs.mul"), g.const("hs.six_div", f32(6.0))], "hardswish"))
    return g.model(opset=13)


def test_exported_chains_fuse_and_match_onnxruntime():
    """Canonicalize fuses the decomposed LayerNorm, the GELU, SiLU and HardSwish chains into one op
    each, named like the chain's last op, and the numbers still match onnxruntime on the model."""
    from tpudsl.dialects.opdef import loc_name

    model = _exported_chains()
    feeds = random_inputs(model, seed=3)
    want = onnx_inference(model, feeds)
    top = apply_canonicalize(convert_onnx(model, "exported_chains"))
    ops = {loc_name(op): op.name for op in top.module.walk() if op.name.startswith("top.") and op.name != "top.Weight"}
    assert ops == {"x": "top.Input", "ln": "top.LayerNorm", "gelu": "top.GELU", "silu": "top.SiLU",
                   "hardswish": "top.HardSwish", **{k: "top.None" for k, v in ops.items() if v == "top.None"}}, ops
    assert_matches(run_module(top.module, top.weights, feeds), want, "exported chains after canonicalize")
