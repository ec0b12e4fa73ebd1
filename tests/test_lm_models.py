"""Transformer language models end to end, as a user runs them (tests/models/lm.py: BERT and GPT-2
as torch.onnx.export writes Hugging Face's models, opset 14 and 17, 2 layers, hidden 64).

* Top vs onnxruntime, every tensor both name (model_runner on the .mlir with the int64 input npz):
  cosine >= 0.99999 and max relative error <= 1e-4 on the finite part; where onnxruntime holds a
  mask value (|x| >= 1e30: finfo(float32).min, or -inf where GPT-2's two masks add up) Top holds
  the same value exactly.
* model_deploy F32 (both models), BF16 (BERT with a 1000-word vocabulary: ids above 256, which
  bf16 does not hold) and INT8 (GPT-2, run_calibration on 3 generated samples): model_deploy's own
  checks (Tpu vs Top with --compare_all, bmodel vs Tpu), then again here through model_runner with
  the int64 inputs: the bmodel equals the Tpu interpreter (F32 within 1e-5 of the largest value,
  BF16 and INT8 bit for bit) and the outputs follow Top (cosine per mode). F16 without the qtable:
  the outputs still pass and model_deploy's overflow report names the mask chain.
* Token ids float32 does not hold (2^24 + 1): an error at model_transform, the .mlir and the bmodel.
The mask chain (the extended mask, the masked scores, Softmax; in INT8 from the mask input on)
stays F32 by qtable: finfo.min is beyond bf16 and no int8 scale keeps it with the scores
(docs/frontend.md, "Transformer language models")."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest

from onnx_node.harness import cosine, max_rel_err
from tests.cli_support import run_main
from tests.models import onnx_inference
from tests.models.lm import bert, gpt2, lm_inputs, vocab_size
from tpudsl.cli import model_deploy, model_runner, model_transform
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.module import load_module
from tpudsl.lowering.overflow import MASK_FILL as MASK
from tpudsl.lowering.overflow import int8_mask_ops

MODELS = {
    "bert_opset14": lambda: bert(opset=14),
    "bert_opset17": lambda: bert(opset=17),
    "gpt2_opset14": lambda: gpt2(opset=14),
    "gpt2_opset17": lambda: gpt2(opset=17),
}


def _feed(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    """lm_inputs with the first and last ids of the vocabulary in it, and padding."""
    feed = lm_inputs(model, seed)
    feed["input_ids"][0, :2] = (0, vocab_size(model) - 1)
    feed["attention_mask"][0, -3:] = 0
    return feed


def _transform(model: onnx.ModelProto, name: str, d) -> dict[str, np.ndarray]:
    """model_transform (its own Top vs onnxruntime check on the test input) into directory d; the feed."""
    onnx.save(model, d / f"{name}.onnx")
    feed = _feed(model, 1)
    np.savez(d / "in.npz", **feed)
    model_transform.run(["--model_name", name, "--model_def", str(d / f"{name}.onnx"),
                         "--mlir", str(d / f"{name}.mlir"), "--test_input", str(d / "in.npz"),
                         "--test_result", str(d / "top_outputs.npz")])
    return feed


def _run(model, d, out: str, all_tensors: bool = False) -> dict[str, np.ndarray]:
    model_runner.run(["--input", str(d / "in.npz"), "--model", str(model), "--output", str(d / out),
                      *(["--dump_all_tensors"] if all_tensors else [])])
    return dict(np.load(d / out))


def assert_close(got: np.ndarray, want: np.ndarray, name: str, cos_min: float = 0.99999, rel_max: float = 1e-4) -> None:
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    masked = ~np.isfinite(want) | (np.abs(want) >= MASK)
    assert np.array_equal(got[masked], want[masked]), f"{name}: mask values differ"
    g, w = got[~masked].astype(np.float64), want[~masked].astype(np.float64)
    assert np.isfinite(g).all(), f"{name}: non-finite values where the reference has numbers"
    cos, rel = cosine(g, w), max_rel_err(g, w)
    assert cos >= cos_min and rel <= rel_max, f"{name}: cosine {cos:.7f}, max rel err {rel:.2e}"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_top_matches_onnxruntime_tensor_by_tensor(name, tmp_path):
    model = MODELS[name]()
    feed = _transform(model, name, tmp_path)
    assert feed["input_ids"].dtype == np.int64 and feed["attention_mask"].min() == 0  # padded: the mask acts
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # IEEE overflow to -inf is no warning
        ours = _run(tmp_path / f"{name}.mlir", tmp_path, "top.npz", all_tensors=True)
    want = onnx_inference(model, feed, all_tensors=True)
    common = sorted((set(ours) & set(want)) - set(feed))
    outputs = [o.name for o in model.graph.output]
    assert set(outputs) <= set(common) and len(common) > 40, common
    for tensor in common:
        assert_close(ours[tensor], want[tensor], f"{name}: {tensor}")
    masked = [t for t in common if (np.abs(want[t]) >= MASK).any()]
    assert any("masked" in t for t in masked), masked  # the masks reached the scores


def _bad_ids(d, feed: dict[str, np.ndarray]):
    """The feed with one id that float32 (the model inputs' type) cannot hold: 2^24 + 1."""
    bad = {**feed, "input_ids": feed["input_ids"].copy()}
    bad["input_ids"][0, 3] = (1 << 24) + 1
    np.savez(d / "bad.npz", **bad)
    return d / "bad.npz"


def _refused(r, name: str = "input_ids") -> None:
    assert r.returncode == 1 and r.stderr.startswith(f"error: input '{name}' holds the integer 16777217, which "
                                                     "float32"), r.stderr


def test_ids_float32_does_not_hold_are_an_error_at_every_level(tmp_path):
    """model_transform's test input, model_runner on the .mlir (the bmodel: the F32 deploy test)."""
    model = bert(opset=17)
    feed = _transform(model, "bert", tmp_path)
    bad = _bad_ids(tmp_path, feed)
    _refused(run_main("model_runner", "--input", bad, "--model", tmp_path / "bert.mlir",
                      "--output", tmp_path / "o.npz"))
    r = run_main("model_transform", "--model_name", "b2", "--model_def", tmp_path / "bert.onnx", "--mlir",
                 tmp_path / "b2.mlir", "--test_input", bad)
    assert r.returncode == 1 and "error: input 'input_ids' holds the integer 16777217" in r.stderr, r.stderr
    assert not (tmp_path / "b2.mlir").exists() and not (tmp_path / "o.npz").exists()


def _mask_chain(name: str, int8: bool) -> list[str]:
    """The ops a user keeps in F32 (by name): the extended mask, per layer the masked scores (GPT-2:
    the causal Where too) and Softmax; INT8 also the mask's Reshape and 1 - mask, whose int8 form
    reads 1 as 1.0005 (the table's threshold), which times finfo.min overflows."""
    if name.startswith("bert"):
        mask, layers = "extended_attention_mask", [f"encoder.layer.{i}.attention.self.{op}" for i in range(2)
                                                   for op in ("masked", "softmax")]
    else:
        mask, layers = "transformer.extended_mask", [f"transformer.h.{i}.attn.{op}" for i in range(2)
                                                     for op in ("causal", "masked", "softmax")]
    return [*([f"{mask}.unsqueeze2", f"{mask}.inverted"] if int8 else []), mask, *layers]


def test_f16_without_the_qtable_reports_the_mask_ops_and_keeps_the_outputs(tmp_path):
    """finfo.min is -inf in f16 (IEEE; no numpy warning anywhere on the way): the outputs still follow
    Top (Softmax of -inf is 0), and model_deploy's overflow report names exactly the mask chain."""
    model = gpt2(opset=14)
    _transform(model, "gpt2", tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = run_main("model_deploy", "--mlir", tmp_path / "gpt2.mlir", "--quantize", "F16", "--processor", "bm1684x",
                     "--model", tmp_path / "m.bmodel", "--test_input", tmp_path / "in.npz")
    assert r.returncode == 0, r.stderr
    told = [line.removesuffix(" F32") for line in r.stderr.splitlines() if line.endswith(" F32")]
    assert told == _mask_chain("gpt2", False), r.stderr
    assert "'transformer.extended_mask' is the first op whose F16 result is inf/NaN" in r.stderr


DEPLOYS = {  # case: (model, mode, cosine of the outputs vs Top)
    "bert_opset14_F32": (lambda: bert(opset=14), "F32", 0.99999),
    "gpt2_opset17_F32": (lambda: gpt2(opset=17), "F32", 0.99999),
    "bert_opset17_vocab1000_BF16": (lambda: bert(opset=17, vocab=1000), "BF16", 0.999),
    "gpt2_opset14_INT8": (lambda: gpt2(opset=14), "INT8", 0.99),
}


@pytest.mark.parametrize("case", sorted(DEPLOYS))
def test_deploy_bmodel_equals_tpu_and_follows_top(case, tmp_path):
    build, mode, cos_min = DEPLOYS[case]
    name = case.rsplit("_", 1)[0]
    model = build()
    feed = _transform(model, name, tmp_path)
    if mode == "BF16":
        assert feed["input_ids"].max() > 256
    args = ["--mlir", str(tmp_path / f"{name}.mlir"), "--quantize", mode, "--processor", "bm1684x",
            "--model", str(tmp_path / "m.bmodel"), "--test_input", str(tmp_path / "in.npz"),
            "--test_reference", str(tmp_path / "top_outputs.npz"), "--compare_all"]
    if mode != "F32":
        (tmp_path / "qtable").write_text("".join(f"{op} F32\n" for op in _mask_chain(name, mode == "INT8")))
        args += ["--quantize_table", str(tmp_path / "qtable")]
    if mode == "INT8":  # run_calibration names the same ops (its note's qtable lines)
        (tmp_path / "samples").mkdir()
        for seed in (2, 3, 4):
            np.savez(tmp_path / "samples" / f"{seed}.npz", **_feed(model, seed))
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # the masks' huge values: no overflow in the thresholds
            r = run_main("run_calibration", tmp_path / f"{name}.mlir", "--dataset", tmp_path / "samples", "--quiet",
                         "-o", tmp_path / "table")
        assert r.returncode == 0, r.stderr
        told = [line.removesuffix(" F32") for line in r.stderr.splitlines() if line.endswith(" F32")]
        assert told == _mask_chain(name, True), r.stderr
        ops = list(load_module(tmp_path / f"{name}.mlir").main_func().body.block.ops)
        assert int8_mask_ops(ops, {loc_name(op): (-MASK / 2, 1.0) for op in ops}) == []  # below the fill: none
        args += ["--calibration_table", str(tmp_path / "table"), "--tolerance", "0.9,0.5"]
    model_deploy.run(args)  # raises on a failed Tpu or bmodel check
    suffix = "_sym" if mode == "INT8" else ""
    tpu = _run(tmp_path / f"{name}_bm1684x_{mode.lower()}{suffix}_tpu.mlir", tmp_path, "tpu.npz")
    got = _run(tmp_path / "m.bmodel", tmp_path, "bmodel.npz")
    top = dict(np.load(tmp_path / "top_outputs.npz"))
    if mode == "F32":
        _refused(run_main("model_runner", "--input", _bad_ids(tmp_path, feed), "--model", tmp_path / "m.bmodel",
                          "--output", tmp_path / "o.npz"))
    for out in (o.name for o in model.graph.output):
        if mode == "F32":
            np.testing.assert_allclose(got[out], tpu[out], rtol=0, atol=1e-5 * np.abs(tpu[out]).max(), err_msg=out)
        else:
            np.testing.assert_array_equal(got[out], tpu[out], err_msg=f"{out}: {mode} bmodel vs Tpu")
        assert_close(got[out], top[out], f"{case}: {out} vs Top", cos_min=cos_min, rel_max=1.0)
