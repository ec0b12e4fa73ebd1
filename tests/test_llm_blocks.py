"""LLaMA/Qwen2 decoder blocks as sophgo/LLM-TPU exports them (tests/models/lm.py: block_N.onnx
prefill, block_cache_N.onnx decode; hidden 64, 4 heads, 2 kv heads, seq 16), through the flow with
LLM-TPU's own command lines (its compile.sh: `--quant_input --quant_output`, the prefill with
`--disable_layer_group`, decode with `--addr_mode io_alone`, W4BF16 with `--q_group_size 64`).

* Top vs onnxruntime on every tensor both name (model_runner --dump_all_tensors on the .mlir):
  cosine >= 0.99999 and max relative error <= 1e-4.
* model_deploy in the modes that take distinct code (F32 prefill: repeat_kv's rank-5 Expand; BF16
  and W4BF16 decode: the rank-5 Tile, bf16 IO, W4BF16's 4-bit A16MatMuls) with its own checks, then
  here: the bmodel equals the Tpu interpreter (F32 within 1e-5 of the largest value, the others bit
  for bit) and follows Top (cosine per mode).
* INT8 (the prefill, run_calibration on 3 samples, no qtable): the masked scores and Softmax stay
  F32 by themselves (LLM-TPU's -10000 mask at the Softmax's input), named by run_calibration and
  model_deploy; bmodel == Tpu bit for bit, cosine vs Top >= 0.995.
* The cache, checked against the prefill (an independent reference: no tensor of decode's run):
  decode fed the prefill's past_k/past_v as its history and the prefill's input row of the last real
  token gives that row's hidden state, at Top (1e-5) and from bmodel to bmodel (the F32 prefill's
  outputs into the BF16 decode bmodel)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from onnx_node.harness import cosine, max_rel_err
from tests.cli_support import run_main, run_model
from tests.models import onnx_inference
from tests.models.lm import llama_block, llama_inputs
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.module import load_module

TOKENS = 11  # real tokens of the prompt; the 5 positions after them are padding the masks hide
DEPLOYS = {  # case: (block, mode, model_deploy flags after LLM-TPU's, cosine of the outputs vs Top)
    "block_F32": ("block", "F32", ["--disable_layer_group"], 0.99999),
    "block_cache_BF16": ("block_cache", "BF16", ["--addr_mode", "io_alone"], 0.9995),
    "block_cache_W4BF16": ("block_cache", "W4BF16", ["--addr_mode", "io_alone", "--q_group_size", "64"], 0.98),
}


def _run(model, feed, d, out: str, all_tensors: bool = False) -> dict[str, np.ndarray]:
    """model_runner on `feed` (saved as OUT_in.npz) into OUT.npz."""
    np.savez(d / f"{out}_in.npz", **feed)
    return run_model(model, d / f"{out}_in.npz", d / f"{out}.npz", all_tensors)


@pytest.fixture(scope="module")
def blocks(tmp_path_factory):
    """Both blocks (the same weights: one seed, drawn in the same order) through model_transform
    (its own Top vs onnxruntime check on the feed); name: (model, feed), and the directory."""
    d = tmp_path_factory.mktemp("llm")
    built = {}
    for name in ("block", "block_cache"):
        # the two spellings torch's exporters give rsqrt, and both of repeat_kv's
        model = llama_block(cache=name == "block_cache", rsqrt="div" if name == "block_cache" else "reciprocal",
                            repeat="tile" if name == "block_cache" else "expand")
        feed = llama_inputs(model, TOKENS, seed=1)
        onnx.save(model, d / f"{name}.onnx")
        np.savez(d / f"{name}_in.npz", **feed)
        r = run_main("model_transform", "--model_name", name, "--model_def", d / f"{name}.onnx", "--mlir",
                     d / f"{name}.mlir", "--test_input", d / f"{name}_in.npz", "--test_result", d / f"{name}_top.npz")
        assert r.returncode == 0, r.stderr
        built[name] = (model, feed)
    weights = [{t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer if t.name.endswith("weight")}
               for m, _ in built.values()]
    assert weights[0].keys() == weights[1].keys() and all(np.array_equal(w, weights[1][k])
                                                          for k, w in weights[0].items())
    return built, d


@pytest.mark.parametrize("name", ["block", "block_cache"])
def test_top_matches_onnxruntime_tensor_by_tensor(blocks, name):
    (model, feed), d = blocks[0][name], blocks[1]
    norms = [loc_name(op) for op in load_module(d / f"{name}.mlir").main_func().body.block.ops
             if op.name == "top.RMSNorm"]  # canonicalize's fuse-rms-norm, both rsqrt spellings
    assert norms == ["input_layernorm", "post_attention_layernorm"], norms
    ours = _run(d / f"{name}.mlir", feed, d, f"{name}_all", all_tensors=True)
    want = onnx_inference(model, feed, all_tensors=True)
    common = sorted((set(ours) & set(want)) - set(feed))
    assert {o.name for o in model.graph.output} <= set(common) and len(common) > 40, common
    for tensor in common:
        got, ref = ours[tensor].astype(np.float64), want[tensor].astype(np.float64)
        assert got.shape == ref.shape, tensor
        assert cosine(got, ref) >= 0.99999 and max_rel_err(got, ref) <= 1e-4, tensor


def _output_key(name: str, mode: str) -> str:
    """An output's name after --quant_output: a half mode's is the bf16 op's, `<name>_bf16`
    (the f32 cast before the return goes, docs/tpuc-opt.md, strip-io-quant)."""
    return name if mode == "F32" else f"{name}_bf16"


def _deploy(blocks, case: str):
    """model_deploy as LLM-TPU's compile.sh runs it; the Tpu module written."""
    name, mode, flags, _ = DEPLOYS[case]
    d = blocks[1]
    r = run_main("model_deploy", "--mlir", d / f"{name}.mlir", "--quantize", mode, "--quant_input", "--quant_output",
                 "--chip", "bm1684x", *flags, "--model", d / f"{case}.bmodel", "--test_input", d / f"{name}_in.npz",
                 "--test_reference", d / f"{name}_top.npz")
    assert r.returncode == 0 and "bmodel check passed" in r.stderr, r.stderr
    return load_module(d / f"{name}_bm1684x_{mode.lower()}_tpu.mlir")


@pytest.mark.parametrize("case", sorted(DEPLOYS))
def test_deploy_bmodel_equals_tpu_and_follows_top(blocks, case):
    name, mode, _, cos_min = DEPLOYS[case]
    (model, feed), d = blocks[0][name], blocks[1]
    ops = list(_deploy(blocks, case).main_func().body.block.ops)
    moves = [op for op in ops if op.name in ("tpu.Expand", "tpu.Tile")]  # repeat_kv, rank 5: the backend folds it
    assert len(moves) == 2 and all(len(op.results[0].type.get_shape()) == 5 for op in moves)
    if mode == "W4BF16":  # every projection a 4-bit weight-only MatMul
        a16 = [loc_name(op) for op in ops if op.name == "tpu.A16MatMul"]
        assert len(a16) == 7 and all(op.attributes["weight_bits"].value.data == 4
                                     for op in ops if op.name == "tpu.A16MatMul"), a16
    tpu = _run(d / f"{name}_bm1684x_{mode.lower()}_tpu.mlir", feed, d, f"{case}_tpu")
    got = _run(d / f"{case}.bmodel", feed, d, f"{case}_bmodel")
    top = dict(np.load(d / f"{name}_top.npz"))
    for out in (o.name for o in model.graph.output):
        key = _output_key(out, mode)
        if mode == "F32":
            np.testing.assert_allclose(got[key], tpu[key], rtol=0, atol=1e-5 * np.abs(tpu[key]).max(), err_msg=out)
        else:
            np.testing.assert_array_equal(got[key], tpu[key], err_msg=f"{out}: {mode} bmodel vs Tpu")
        c = cosine(got[key].astype(np.float64), top[out].astype(np.float64))
        assert c >= cos_min, f"{case}: {out} vs Top: cosine {c:.6f}"


def test_int8_keeps_the_masked_scores_and_softmax_f32_by_itself(blocks):
    """INT8 with no qtable: the masked scores reach -10000 at the Softmax's input, where one int8
    step would be 79 (overflow.INT8_SOFTMAX_FILL); run_calibration and model_deploy name the two
    ops kept F32, the bmodel equals the Tpu interpreter bit for bit and follows Top."""
    (model, feed), d = blocks[0]["block"], blocks[1]
    (d / "samples").mkdir()
    for seed in (2, 3, 4):
        np.savez(d / "samples" / f"{seed}.npz", **llama_inputs(model, TOKENS - seed, seed))
    r = run_main("run_calibration", d / "block.mlir", "--dataset", d / "samples", "--quiet", "-o", d / "table")
    kept = ["self_attn.masked F32", "self_attn.softmax F32"]
    assert r.returncode == 0 and r.stderr.splitlines()[1:] == kept, r.stderr
    r = run_main("model_deploy", "--mlir", d / "block.mlir", "--quantize", "INT8", "--calibration_table", d / "table",
                 "--chip", "bm1684x", "--model", d / "int8.bmodel", "--test_input", d / "block_in.npz",
                 "--test_reference", d / "block_top.npz")
    assert r.returncode == 0 and [line for line in r.stderr.splitlines() if line.endswith(" F32")] == kept, r.stderr
    tpu = _run(d / "block_bm1684x_int8_sym_tpu.mlir", feed, d, "int8_tpu")
    got = _run(d / "int8.bmodel", feed, d, "int8_bmodel")
    top = dict(np.load(d / "block_top.npz"))
    for out in (o.name for o in model.graph.output):
        np.testing.assert_array_equal(got[out], tpu[out], err_msg=f"{out}: INT8 bmodel vs Tpu")
        assert cosine(got[out].astype(np.float64), top[out].astype(np.float64)) >= 0.995, out


def _decode_feed(blocks, prefill: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """LLM-TPU's pipeline after the prefill: the last real token's input row, its position, and the
    prefill's past_k/past_v as the history (its rows from that token on are hidden by the mask)."""
    (_, block_feed), (cache_model, _) = blocks[0]["block"], blocks[0]["block_cache"]
    feed = llama_inputs(cache_model, TOKENS, seed=2)
    feed["input_states"] = block_feed["input_states"][:, TOKENS - 1:TOKENS]
    feed["history_k"], feed["history_v"] = prefill["past_k"], prefill["past_v"]
    return feed


def test_decode_with_the_prefill_cache_gives_the_prefill_hidden_state(blocks):
    """At Top (F32: the same sums in other orders), and from the F32 prefill bmodel's outputs
    through the BF16 decode bmodel (its history rounded to bf16 by model_runner, as --quant_input
    makes the input)."""
    d = blocks[1]
    top = dict(np.load(d / "block_top.npz"))
    want = top["hidden_states"][:, TOKENS - 1:TOKENS]
    got = _run(d / "block_cache.mlir", _decode_feed(blocks, top), d, "cache_top")
    np.testing.assert_allclose(got["hidden_states"], want, rtol=0, atol=1e-5 * np.abs(want).max())
    for case in ("block_F32", "block_cache_BF16"):
        if not (d / f"{case}.bmodel").exists():  # this test run alone
            _deploy(blocks, case)
    prefill = _run(d / "block_F32.bmodel", blocks[0]["block"][1], d, "prefill_bmodel")
    decode = _run(d / "block_cache_BF16.bmodel", _decode_feed(blocks, prefill), d, "decode_bmodel")
    want = prefill["hidden_states"][:, TOKENS - 1:TOKENS].astype(np.float64)
    assert cosine(decode[_output_key("hidden_states", "BF16")].astype(np.float64), want) >= 0.9995
