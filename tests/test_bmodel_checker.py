"""Per-layer tensors of a .bmodel run (`model_runner --dump_all_tensors X.bmodel`, `bmodel_checker`):
on small layer-grouped models in F32, INT8, F16 and BF16, the cmodel's run captures exactly the
tensors of the Tpu interpreter's `--dump_all_tensors` (the same set of names, in the same order),
each equal to it (INT8, F16, BF16 bit for bit, same dtype), including tensors that only lived in
local memory inside a group sliced along H, a Reshape's between two groups, and every result of the
multi-result ops (MaxPoolWithMask, TopK; LSTM with a result the model leaves out, which neither dump
holds); a bmodel broken on purpose (one weight byte, one record's operand) makes bmodel_checker name
exactly the first op that reads it; bad input is one error line and exit status 1."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.backend_support import (assert_bit_exact, assert_dump_equal, assert_f32_close, compile_for, compile_int8,
                                   int8_module, lowered)
from tests.cli_support import run_main
from tests.test_layer_group import _chain
from tpudsl.backend import codegen, isa
from tpudsl.backend.address_assign import address_of
from tpudsl.backend.bmodel import write_bmodel
from tpudsl.backend.cmodel.engine import op_names
from tpudsl.backend.tensor_locations import sliced_result
from tpudsl.cli.model_runner import save_npz
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import save_module
from tpudsl.ir.npz import read_npz
from tpudsl.interp.module_interpreter import run_module
from tpudsl.passes import pass_class


def _sliced_local(bm) -> set[str]:
    """The tensors that lived only in local memory, in more than one slice (the target case)."""
    return {t["name"] for t in bm.header["tensor_locations"]
            if len(t["pieces"]) > 1 and {p["space"] for p in t["pieces"]} == {"local"}}


def _deployed(d, top, feed, compile_):
    """The Tpu interpreter's dump (ref.npz), the inputs (in.npz) and the compiled .bmodel in `d`."""
    save_npz(d / "ref.npz", run_module(top.module, top.weights, feed, keep_all=True))
    np.savez(d / "in.npz", **feed)
    return top, compile_(top, str(d / "m.bmodel"))


@pytest.fixture(scope="module")
def int8_model(tmp_path_factory):
    """Conv, conv, Add in INT8 for the tiny chip: the second conv and the Add form a group sliced
    along H whose intermediates stay local (the first conv's group stores its slices)."""
    d = tmp_path_factory.mktemp("int8")
    shape = (1, 8, 192, 32)
    model, feed = _chain(shape)
    top, bm = _deployed(d, int8_module(model, shape, d), feed, compile_int8)
    return d, top, bm


def _dump(d, model: str = "m.bmodel") -> dict[str, np.ndarray]:
    r = run_main("model_runner", "--input", "in.npz", "--model", model, "--dump_all_tensors", "--output", "all.npz",
                 cwd=d)
    assert r.returncode == 0, r.stderr
    return read_npz(str(d / "all.npz"))


def test_f32_dump_equals_the_tpu_interpreter_including_local_tensors(tmp_path):
    """F32: two convs and an Add, one group in two H slices, the convs' results never stored: each
    dumped tensor is the interpreter's within 1e-5 relative, name for name."""
    model, feed = _chain((1, 4, 96, 16))
    _, bm = _deployed(tmp_path, lowered(model), feed, lambda top, path: compile_for(top, "tiny", path))
    assert _sliced_local(bm) == {"t0_conv", "t1_conv"}, bm.header["tensor_locations"]
    got, want = _dump(tmp_path), read_npz(str(tmp_path / "ref.npz"))
    assert list(got) == list(want)  # every name, in execution order
    for name, w in want.items():
        assert got[name].dtype == w.dtype, name
        assert_f32_close(got[name], w, name)


def test_int8_dump_equals_the_tpu_interpreter_exactly(int8_model):
    d, _, bm = int8_model
    assert {"t1_conv", "t2_add_int8"} <= _sliced_local(bm)
    stored = [t for t in bm.header["tensor_locations"] if t["name"] == "t0_conv"][0]["pieces"]
    assert len(stored) > 1 and {p["space"] for p in stored} == {"global"}  # a group's stored slices
    got, want = _dump(d), read_npz(str(d / "ref.npz"))
    assert set(got) == set(want)
    for name, w in want.items():
        assert got[name].dtype == w.dtype and np.array_equal(got[name], w), name
    r = run_main("npz_tool", "compare", "all.npz", "ref.npz", cwd=d)
    assert r.returncode == 0 and "not equal" in r.stdout and "0 failed" in r.stdout, r.stdout


def test_int8_quant_io_dump_is_the_tpu_interpreters_name_for_name(tmp_path):
    """model_deploy --quant_input --quant_output (strip-io-quant, then the backend, as model_deploy runs
    them): the .bmodel's dump holds the stripped Tpu module's dump (model_runner on its .mlir, the float
    input quantized by both) name for name, in order, each bit for bit with its dtype: the int8 input,
    not the float one the cast read, and the output under the int8 name the stripped cast leaves."""
    model, feed = _chain((1, 4, 24, 8))
    top = int8_module(model, (1, 4, 24, 8), tmp_path)
    pass_class("strip-io-quant")(quant_input=True, quant_output=True).apply(make_context(), top.module)
    save_module(top, tmp_path / "m_tpu.mlir", tmp_path / "m_tpu_weights.npz")
    compile_int8(top, str(tmp_path / "m.bmodel"))
    np.savez(tmp_path / "in.npz", **feed)
    r = run_main("model_runner", "--input", "in.npz", "--model", "m_tpu.mlir", "--dump_all_tensors", "--output",
                 "ref.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    got, want = _dump(tmp_path), read_npz(str(tmp_path / "ref.npz"))
    assert want["x"].dtype == np.int8 and "t2_add_int8" in want, list(want)
    assert_dump_equal(got, want, "INT8")
    r, verdicts = _checker(tmp_path, "m.bmodel")
    assert r.returncode == 0 and verdicts == dict.fromkeys(list(want)[1:], "PASSED"), r.stdout


def _onnx(nodes, shape, outs, inits):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(o, t, None) for o, t in outs],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _views_and_multi_results(rng):
    """conv, conv, Add x (one group sliced along H) -> Reshape (a global move: between groups) ->
    conv + relu -> MaxPool with its indices (tpu.MaxPoolWithMask: two results) -> TopK along W (two)."""
    shape = (1, 4, 192, 16)
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [helper.make_node("Conv", ["x", "w0"], ["c0"], **conv),
             helper.make_node("Conv", ["c0", "w1"], ["c1"], **conv),
             helper.make_node("Add", ["c1", "x"], ["a"]), helper.make_node("Reshape", ["a", "s"], ["r"]),
             helper.make_node("Conv", ["r", "w2"], ["c2"], **conv), helper.make_node("Relu", ["c2"], ["c2r"]),
             helper.make_node("MaxPool", ["c2r"], ["p", "pi"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("TopK", ["p", "k"], ["v", "i"], axis=3)]
    inits = {f"w{i}": rng.standard_normal((4, 4, 3, 3)).astype(np.float32) for i in range(3)}
    inits.update(k=np.array([3], np.int64), s=np.array([1, 4, 96, 32], np.int64))
    outs = [("v", TensorProto.FLOAT), ("i", TensorProto.INT64), ("pi", TensorProto.INT64)]
    return _onnx(nodes, shape, outs, inits), {"x": rng.standard_normal(shape).astype(np.float32)}


@pytest.mark.parametrize("mode", ["F16", "BF16"])
def test_half_dump_is_the_tpu_interpreters_bit_for_bit_name_for_name(tmp_path, mode):
    """F16/BF16: the dumped names are the interpreter's, as a set and in order (the Reshape between
    the groups, both results of MaxPoolWithMask and of TopK included), each tensor bit for bit (both
    npz widen f16/bf16 to float32, which keeps every value)."""
    model, feed = _views_and_multi_results(np.random.default_rng(3))
    top, bm = _deployed(tmp_path, lowered(model, mode), feed, lambda top, path: compile_for(top, "tiny", path))
    ops = {t["name"]: t["op"] for t in bm.header["tensor_locations"]}
    assert {ops[n] for n in ("p", "p_1")} == {"tpu.MaxPoolWithMask"} and ops["r"] == "tpu.Reshape", ops
    assert [ops[n] for n in ("i", f"v_{mode.lower()}")] == ["tpu.TopK"] * 2, ops
    assert {"c0", "c1"} <= _sliced_local(bm)  # the first group, sliced along H, keeps them local
    assert {t["dtype"] for t in bm.header["tensor_locations"] if t["name"] in ("c0", "r", "p")} == {mode.lower()}
    got, want = _dump(tmp_path), read_npz(str(tmp_path / "ref.npz"))
    assert set(got) == set(want) and list(got) == list(want)
    for name, w in want.items():
        assert got[name].dtype == w.dtype, name
        assert_bit_exact(got[name], w, name)
    r, verdicts = _checker(tmp_path, "m.bmodel")  # every tensor but the input checked, none missing
    assert r.returncode == 0 and verdicts == dict.fromkeys(list(want)[1:], "PASSED"), r.stdout
    assert f"{len(want) - 1} tensors checked ({mode}: bit-exact)" in r.stdout and "not in the reference" not in r.stdout


def test_an_lstm_result_the_model_leaves_out_is_in_neither_dump(tmp_path):
    """LSTM without Y (its first result `none`): its Y_h and Y_c are dumped, the absent Y by neither
    the interpreter nor the bmodel (no tensor of the module: nothing computes it into memory)."""
    rng = np.random.default_rng(4)
    steps, size, hidden = 3, 4, 5
    nodes = [helper.make_node("LSTM", ["x", "W", "R"], ["", "yh", "yc"], hidden_size=hidden),
             helper.make_node("Relu", ["yh"], ["r"])]
    inits = {"W": rng.standard_normal((1, 4 * hidden, size)).astype(np.float32),
             "R": rng.standard_normal((1, 4 * hidden, hidden)).astype(np.float32)}
    model = _onnx(nodes, (steps, 1, size), [("r", TensorProto.FLOAT), ("yc", TensorProto.FLOAT)], inits)
    feed = {"x": rng.standard_normal((steps, 1, size)).astype(np.float32)}
    top, _ = _deployed(tmp_path, lowered(model), feed, lambda top, path: compile_for(top, "tiny", path))
    lstm = next(op for op in top.module.walk() if op.name == "tpu.LSTM")
    assert [str(r.type) for r in lstm.results][0] == "none"
    got, want = _dump(tmp_path), read_npz(str(tmp_path / "ref.npz"))
    assert list(got) == list(want) == ["x", "yh", "yc", "r"]
    for name, w in want.items():
        assert_f32_close(got[name], w, name)


def test_an_op_without_instructions_or_a_group_member_with_two_results_is_refused(tmp_path, monkeypatch):
    """No silent gap in the tensor locations: an op codegen emits nothing for, or a layer-group member
    whose further results a group's records cannot write, is an error naming it."""
    model, _ = _views_and_multi_results(np.random.default_rng(3))
    top = lowered(model)
    topk = next(op for op in top.module.walk() if op.name == "tpu.TopK")
    with pytest.raises(TpudslError, match="codegen: layer-group member 'tpu.TopK' op \"v, i\" has 2 results; a group's "
                                          "records write only the first"):
        sliced_result(topk, (1, 4, 48, 3), [])
    emit = codegen._emit_op
    monkeypatch.setattr(codegen, "_emit_op", lambda op, *a: None if op.name == "tpu.Reshape" else emit(op, *a))
    with pytest.raises(TpudslError, match="codegen: 'tpu.Reshape' op \"r\" emitted no instruction: its result would "
                                          "never be written"):
        compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    assert not (tmp_path / "m.bmodel").exists()


def _checker(d, model: str, *flags: str):
    r = run_main("bmodel_checker", model, "ref.npz", *flags, cwd=d)
    lines = r.stdout.splitlines()
    verdicts = {line.split()[0]: line.split()[2] for line in lines if line.split()[1:2] and
                line.split()[1].startswith("tpu.")}
    return r, verdicts


def test_the_intact_bmodel_passes(int8_model):
    d, _, _ = int8_model
    r, verdicts = _checker(d, "m.bmodel")
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "bmodel_checker PASSED.", r.stdout
    assert verdicts == dict.fromkeys(["x_int8", "t0_conv", "t1_conv", "t2_add_int8", "t2_add"], "PASSED")
    assert list(verdicts) == ["x_int8", "t0_conv", "t1_conv", "t2_add_int8", "t2_add"]


def test_a_corrupt_weight_byte_fails_first_at_the_op_reading_it(int8_model):
    """One byte of the second conv's filter flipped in the file: t1_conv is the first failure, the
    ops before it pass."""
    d, top, bm = int8_model
    conv = next(op for op in top.module.walk() if loc_name(op) == "t1_conv")
    at = address_of(conv.operands[1]) - top.module.attributes["module.coeff_addr"].value.data
    coeffs = bytearray(bm.coeffs)
    coeffs[at] ^= 0x55
    write_bmodel(d / "w.bmodel", bm.header, bytes(coeffs), bm.commands, bm.debug)
    r, verdicts = _checker(d, "w.bmodel", "--report", "failed.npz")
    assert r.returncode == 1
    assert [verdicts[n] for n in ("x_int8", "t0_conv", "t1_conv")] == ["PASSED", "PASSED", "FAILED"], r.stdout
    assert "first failure: t1_conv (tpu.Conv2D)" in r.stdout.splitlines()
    assert {"t1_conv"} <= set(read_npz(str(d / "failed.npz"))) <= {"t1_conv", "t2_add_int8", "t2_add"}


def test_a_corrupt_record_operand_fails_first_at_its_op(int8_model):
    """The Add's first slice record reads its first operand in place of its second (one field of
    one record): t2_add_int8 is the first failure, the convs before it pass; --fail_fast stops there."""
    d, _, bm = int8_model
    records = isa.decode(bm.commands)
    names = op_names(bm.debug, len(records))
    i = next(i for i, (r, n) in enumerate(zip(records, names)) if n == "t2_add_int8" and r.ENGINE == "bdc")
    records[i] = dataclasses.replace(records[i], b_addr=records[i].a_addr)
    write_bmodel(d / "r.bmodel", bm.header, bm.coeffs, isa.encode(records), bm.debug)
    r, verdicts = _checker(d, "r.bmodel", "--fail_fast", "--dump_mode", "never")
    assert r.returncode == 1
    assert verdicts == {"x_int8": "PASSED", "t0_conv": "PASSED", "t1_conv": "PASSED", "t2_add_int8": "FAILED"}
    assert "first failure: t2_add_int8 (tpu.Add)" in r.stdout.splitlines()


def test_bad_input_is_one_error_line(int8_model, tmp_path):
    d, _, bm = int8_model
    cases = [
        (["bmodel_checker", d / "in.npz", d / "ref.npz"], f"{d / 'in.npz'}: error: not a bmodel: wrong magic"),
        (["bmodel_checker", d / "m.bmodel", d / "in.npz"],
         f"{d / 'in.npz'}: error: holds none of the 5 tensors of m.bmodel (e.g. 'x_int8'): not the Tpu module's dump"),
        (["bmodel_checker", tmp_path / "empty", d / "ref.npz"],
         f"{tmp_path / 'empty'}: error: a directory must hold one .bmodel to check; it holds none"),
    ]
    (tmp_path / "empty").mkdir()
    np.savez(tmp_path / "no_input.npz", y=np.zeros(1))
    cases.append((["bmodel_checker", d / "m.bmodel", tmp_path / "no_input.npz"],
                  f"{tmp_path / 'no_input.npz'}: error: holds no tensor 'x', an input of m.bmodel"))
    header = {k: v for k, v in bm.header.items() if k != "tensor_locations"}  # no debug info
    write_bmodel(tmp_path / "bare.bmodel", header, bm.coeffs, bm.commands, [])
    cases.append((["model_runner", "--input", d / "in.npz", "--model", tmp_path / "bare.bmodel", "--dump_all_tensors",
                   "--output", tmp_path / "o.npz"],
                  f"{tmp_path / 'bare.bmodel'}: error: the bmodel has no tensor locations (debug info)"))
    for argv, message in cases:
        r = run_main(*argv, cwd=tmp_path)
        assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr
        assert r.stderr.startswith(message), r.stderr
    assert {p.name for p in tmp_path.iterdir()} == {"empty", "no_input.npz", "bare.bmodel"}  # nothing written


def test_tensor_locations_are_checked(int8_model, tmp_path):
    """A piece past the instructions or outside its tensor's view is refused, naming it (the header's
    check, run on write and on read)."""
    _, _, bm = int8_model
    for key, value, message in (("after", 10**6, "'tensor_locations[0].pieces[0].after' is 1000000, past the"),
                                ("start", [0, 0, 10**6, 0], "'tensor_locations[0].pieces[0]' (start [0, 0, 1000000, 0]")):
        header = dict(bm.header, tensor_locations=[dict(bm.header["tensor_locations"][0])])
        header["tensor_locations"][0]["pieces"] = [dict(header["tensor_locations"][0]["pieces"][0], **{key: value})]
        with pytest.raises(TpudslError, match=re.escape(message)):
            write_bmodel(tmp_path / "x.bmodel", header, bm.coeffs, bm.commands, bm.debug)
    assert not (tmp_path / "x.bmodel").exists()
