"""Transformer language models end to end, as a user runs them (tests/models/lm.py: BERT and GPT-2
as torch.onnx.export writes Hugging Face's models, opset 14 and 17, 2 layers, hidden 64).

* Top vs onnxruntime, every tensor both name (model_runner on the .mlir with the int64 input npz):
  cosine >= 0.99999 and max relative error <= 1e-4 on the finite part; where onnxruntime holds a
  mask value (|x| >= 1e30: finfo(float32).min, or -inf where GPT-2's two masks add up) Top holds
  the same value exactly.
* model_deploy with no qtable: F32 (both models), BF16 (BERT with a 1000-word vocabulary: ids above
  256, which bf16 does not hold), INT8 (GPT-2, and BERT at batch 2 --asymmetric; run_calibration on 3
  generated samples) and F16 (GPT-2): model_deploy's own checks (Tpu vs Top with --compare_all,
  bmodel vs Tpu), then again here through model_runner with the int64 inputs: the bmodel equals the
  Tpu interpreter (F32 within 1e-5 of the largest value, the others bit for bit) and the outputs
  follow Top (cosine per mode).
* The ops the lowering keeps in F32 for the masks (finfo.min is beyond bf16 and no int8 scale keeps
  it with the scores; docs/quantization.md, "Attention masks"): what model_deploy names equals a
  hand list and, in INT8, this file's walk from the mask input; in the written Tpu module they are
  f32 and the other ops with an INT8 form are not. A qtable line naming one wins.
* Token ids float32 does not hold (2^24 + 1): an error at model_transform, the .mlir and the bmodel."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import onnx
import pytest
from xdsl.ir import Operation

from onnx_node.harness import cosine, max_rel_err
from tests.cli_support import run_main, run_model
from tests.models import onnx_inference
from tests.models.lm import bert, gpt2, lm_inputs, vocab_size
from tpudsl.cli import model_deploy, model_transform
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.module import load_module
from tpudsl.lowering.overflow import MASK_FILL as MASK
from tpudsl.lowering.overflow import INT8_SOFTMAX_FILL, int8_mask_ops
from tpudsl.lowering.top_to_tpu_int8 import INT8_LOWERINGS

MODELS = {
    "bert_opset14": lambda: bert(opset=14),
    "bert_opset17": lambda: bert(opset=17),
    "gpt2_opset14": lambda: gpt2(opset=14),
    "gpt2_opset17": lambda: gpt2(opset=17),
}
BUILDS = MODELS | {  # the `transformed` fixture's models: MODELS and the deploy cases' own variants
    "bert_opset17_vocab1000": lambda: bert(opset=17, vocab=1000),
    "bert_opset17_batch2": lambda: bert(opset=17, batch=2),
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


@pytest.fixture(scope="module")
def transformed(tmp_path_factory):
    """get(name, d): BUILDS[name] and its feed, model_transform's files copied into directory d; each
    model transformed once per file (six of this file's tests read a model another one transforms)."""
    done = {}

    def get(name: str, d):
        if name not in done:
            model, src = BUILDS[name](), tmp_path_factory.mktemp(name)
            done[name] = model, src, _transform(model, name, src)
        model, src, feed = done[name]
        for f in src.iterdir():
            shutil.copy(f, d / f.name)
        return model, {k: v.copy() for k, v in feed.items()}

    return get


def assert_close(got: np.ndarray, want: np.ndarray, name: str, cos_min: float = 0.99999, rel_max: float = 1e-4) -> None:
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    masked = ~np.isfinite(want) | (np.abs(want) >= MASK)
    assert np.array_equal(got[masked], want[masked]), f"{name}: mask values differ"
    g, w = got[~masked].astype(np.float64), want[~masked].astype(np.float64)
    assert np.isfinite(g).all(), f"{name}: non-finite values where the reference has numbers"
    cos, rel = cosine(g, w), max_rel_err(g, w)
    assert cos >= cos_min and rel <= rel_max, f"{name}: cosine {cos:.7f}, max rel err {rel:.2e}"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_top_matches_onnxruntime_tensor_by_tensor(name, tmp_path, transformed):
    model, feed = transformed(name, tmp_path)
    assert feed["input_ids"].dtype == np.int64 and feed["attention_mask"].min() == 0  # padded: the mask acts
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # IEEE overflow to -inf is no warning
        ours = run_model(tmp_path / f"{name}.mlir", tmp_path / "in.npz", tmp_path / "top.npz", all_tensors=True)
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


def test_ids_float32_does_not_hold_are_an_error_at_every_level(tmp_path, transformed):
    """model_transform's test input, model_runner on the .mlir (the bmodel: the F32 deploy test)."""
    _, feed = transformed("bert_opset17", tmp_path)
    bad = _bad_ids(tmp_path, feed)
    _refused(run_main("model_runner", "--input", bad, "--model", tmp_path / "bert_opset17.mlir",
                      "--output", tmp_path / "o.npz"))
    r = run_main("model_transform", "--model_name", "b2", "--model_def", tmp_path / "bert_opset17.onnx", "--mlir",
                 tmp_path / "b2.mlir", "--test_input", bad)
    assert r.returncode == 1 and "error: input 'input_ids' holds the integer 16777217" in r.stderr, r.stderr
    assert not (tmp_path / "b2.mlir").exists() and not (tmp_path / "o.npz").exists()


def _mask_chain(name: str, int8: bool) -> list[str]:
    """The ops kept in F32 (by name, written by hand): the extended mask, per layer the masked scores
    (GPT-2: the causal Where too) and Softmax; INT8 also the mask's Reshape and 1 - mask, whose int8
    form reads 1 as 1.0005 (the table's threshold), which times finfo.min overflows."""
    if name.startswith("bert"):
        mask, layers = "extended_attention_mask", [f"encoder.layer.{i}.attention.self.{op}" for i in range(2)
                                                   for op in ("masked", "softmax")]
    else:
        mask, layers = "transformer.extended_mask", [f"transformer.h.{i}.attn.{op}" for i in range(2)
                                                     for op in ("causal", "masked", "softmax")]
    return [*([f"{mask}.unsqueeze2", f"{mask}.inverted"] if int8 else []), mask, *layers]


def _walk_from_mask(top_mlir) -> list[str]:
    """The test's own walk of the Top module: the ops downstream of the attention_mask input, or of
    a weight holding a fill (GPT-2's mask_value), up to and including each Softmax."""
    top = load_module(top_mlir)
    reached, names = set(), []
    for op in top.main_func().body.block.ops:
        if op.name == "top.Input" and loc_name(op) == "attention_mask":
            reached.add(op.results[0])
            continue
        fill = any(v.owner.name == "top.Weight" and np.abs(top.weights[loc_name(v.owner)]).max() >= MASK
                   for v in op.operands if isinstance(v.owner, Operation))
        if fill or any(v in reached for v in op.operands):
            names.append(loc_name(op))
            if op.name != "top.Softmax":
                reached.update(op.results)
    return names


def _kept(stderr: str) -> list[str]:
    """The qtable lines model_deploy (or run_calibration) printed, as op names."""
    return [line.removesuffix(" F32") for line in stderr.splitlines() if line.endswith(" F32")]


def test_f16_without_the_qtable_keeps_the_mask_ops_f32(tmp_path, transformed):
    """finfo.min is -inf in f16: model_deploy keeps exactly the ops computing or reading the fills in
    F32 and says so; every tensor compares (--compare_all: the masks hold Top's values), no op is
    reported for inf/NaN (the -inf of GPT-2's two masks added is Top's too), and no numpy warning."""
    transformed("gpt2_opset14", tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = run_main("model_deploy", "--mlir", tmp_path / "gpt2_opset14.mlir", "--quantize", "F16", "--processor",
                     "bm1684x", "--model", tmp_path / "m.bmodel", "--test_input", tmp_path / "in.npz", "--compare_all")
    assert r.returncode == 0, r.stderr
    assert _kept(r.stderr) == _mask_chain("gpt2", False), r.stderr
    assert "inf/NaN" not in r.stderr and "bmodel check passed" in r.stderr, r.stderr


def test_a_qtable_line_overrides_the_kept_mask_op(tmp_path, transformed):
    """The user's qtable wins: the Softmax it names runs in its mode, model_deploy no longer names it."""
    transformed("bert_opset17", tmp_path)
    softmax = "encoder.layer.0.attention.self.softmax"
    (tmp_path / "qtable").write_text(f"{softmax} F16\n")
    r = run_main("model_deploy", "--mlir", tmp_path / "bert_opset17.mlir", "--quantize", "BF16", "--processor",
                 "bm1684x", "--model", tmp_path / "m.bmodel", "--quantize_table", tmp_path / "qtable", "--not_gen_bmodel")
    assert r.returncode == 0, r.stderr
    assert _kept(r.stderr) == [n for n in _mask_chain("bert", False) if n != softmax], r.stderr
    types = {loc_name(op): str(op.results[0].type) for op in
             load_module(tmp_path / "bert_opset17_bm1684x_bf16_tpu.mlir").main_func().body.block.ops if op.results}
    assert types[softmax].endswith("xf16>") and types["encoder.layer.1.attention.self.softmax"].endswith("xf32>")


DEPLOYS = {  # case (BUILDS' model, then the mode): (mode, cosine of the outputs vs Top), no qtable
    "bert_opset14_F32": ("F32", 0.99999),
    "gpt2_opset17_F32": ("F32", 0.99999),
    "bert_opset17_vocab1000_BF16": ("BF16", 0.999),
    "gpt2_opset14_INT8": ("INT8", 0.99),
    "bert_opset17_batch2_INT8_asym": ("INT8", 0.99),
}


def _check_int8_kept(name: str, top_mlir, tpu_mlir, stderr: str) -> None:
    """The ops model_deploy kept in F32 are the test's walk from the mask input (and the hand list);
    in the written Tpu module they are f32, and every other op with an INT8 form is not (Gather's
    token-id indices stay f32, docs/lowering.md; outputs are cast back to f32 under their name)."""
    walk = _walk_from_mask(top_mlir)
    assert walk == _mask_chain(name, True) and _kept(stderr) == walk, stderr
    tpu = load_module(tpu_mlir)
    f32 = {loc_name(op) for op in tpu.main_func().body.block.ops
           if op.results and str(op.results[0].type).endswith("xf32>")}
    ops = load_module(top_mlir).main_func().body.block.ops
    checked = [loc_name(op) for op in ops if op.name in INT8_LOWERINGS and op.name != "top.Gather"
               and loc_name(op) in {loc_name(o) for o in tpu.main_func().body.block.ops}
               and loc_name(op) not in _output_names(tpu)]
    assert [n for n in walk if n not in f32] == []
    others = [n for n in checked if n not in walk]
    assert len(others) > 10 and [n for n in others if n in f32] == []


def _output_names(module) -> set[str]:
    ret = module.main_func().body.block.last_op
    return {loc_name(v.owner) for v in ret.operands}


@pytest.mark.parametrize("case", sorted(DEPLOYS))
def test_deploy_bmodel_equals_tpu_and_follows_top(case, tmp_path, capfd, transformed):
    mode, cos_min = DEPLOYS[case]
    name = case.split(f"_{mode}")[0]
    model, feed = transformed(name, tmp_path)
    if mode == "BF16":
        assert feed["input_ids"].max() > 256
    args = ["--mlir", str(tmp_path / f"{name}.mlir"), "--quantize", mode, "--processor", "bm1684x",
            "--model", str(tmp_path / "m.bmodel"), "--test_input", str(tmp_path / "in.npz"),
            "--test_reference", str(tmp_path / "top_outputs.npz"), "--compare_all"]
    if mode == "INT8":  # run_calibration names the ops model_deploy keeps (its note)
        (tmp_path / "samples").mkdir()
        for seed in (2, 3, 4):
            np.savez(tmp_path / "samples" / f"{seed}.npz", **_feed(model, seed))
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # the masks' huge values: no overflow in the thresholds
            r = run_main("run_calibration", tmp_path / f"{name}.mlir", "--dataset", tmp_path / "samples", "--quiet",
                         "-o", tmp_path / "table")
        assert r.returncode == 0, r.stderr
        assert _kept(r.stderr) == _mask_chain(name, True), r.stderr
        ops = list(load_module(tmp_path / f"{name}.mlir").main_func().body.block.ops)
        scores = {loc_name(op.operands[0].owner) for op in ops if op.name == "top.Softmax"}
        below = {loc_name(op): (-(INT8_SOFTMAX_FILL if loc_name(op) in scores else MASK) / 2, 1.0) for op in ops}
        assert int8_mask_ops(ops, below) == []  # below the fills (a Softmax's input: its own): none
        args += ["--calibration_table", str(tmp_path / "table"), *(["--asymmetric"] if "asym" in case else [])]
    capfd.readouterr()
    model_deploy.run(args)  # raises on a failed Tpu or bmodel check
    suffix = ("_asym" if "asym" in case else "_sym") if mode == "INT8" else ""
    tpu_mlir = tmp_path / f"{name}_bm1684x_{mode.lower()}{suffix}_tpu.mlir"
    if mode == "INT8":
        _check_int8_kept(name, tmp_path / f"{name}.mlir", tpu_mlir, capfd.readouterr().err)
    tpu = run_model(tpu_mlir, tmp_path / "in.npz", tmp_path / "tpu.npz")
    got = run_model(tmp_path / "m.bmodel", tmp_path / "in.npz", tmp_path / "bmodel.npz")
    top = dict(np.load(tmp_path / "top_outputs.npz"))
    if mode == "F32":
        _refused(run_main("model_runner", "--input", _bad_ids(tmp_path, feed), "--model", tmp_path / "m.bmodel",
                          "--output", tmp_path / "o.npz"))
    for out in (o.name for o in model.graph.output):
        assert got[out].shape[0] == feed["input_ids"].shape[0]
        if mode == "F32":
            np.testing.assert_allclose(got[out], tpu[out], rtol=0, atol=1e-5 * np.abs(tpu[out]).max(), err_msg=out)
        else:
            np.testing.assert_array_equal(got[out], tpu[out], err_msg=f"{out}: {mode} bmodel vs Tpu")
        assert_close(got[out], top[out], f"{case}: {out} vs Top", cos_min=cos_min, rel_max=1.0)
