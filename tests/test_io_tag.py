"""model_deploy --addr_mode io_tag and io_tag_fuse on bm1688 (docs/backend.md, "Memory tags"): the
inputs and outputs in memory tags, judged from the written files. The header's tags hold exactly the
IO tensors, computed here from the final module's IO types (io_tag: tensor i alone at byte 0 of tag
3 + i; io_tag_fuse: the inputs packed in tag 3, the outputs in tag 4); model_deploy's third check
passes and the bmodel's outputs (model_runner, the cmodel with each tag's memory its own) are the Tpu
interpreter's bit for bit, in F32 and INT8; a tag made too small by hand is refused on load, and a
read past a tag's end is a fault naming the tag and its tensor.

The model: inputs `a` and `b`; `sum` = Conv(a) + b is an output read by a later op (the second
Conv, whose result `y` is the other output)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import onnx
import pytest
from cli_support import run_main, run_model
from frontend_support import make_model
from onnx import helper as h
from xdsl.dialects.builtin import StringAttr
from xdsl.dialects.func import ReturnOp

from tests.test_bmodel import assemble, canonical
from tpudsl.backend import isa
from tpudsl.backend.bmodel import read_bmodel, write_bmodel
from tpudsl.backend.codegen import generate
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import load_module

SHAPE = [1, 3, 8, 8]
# BF16 and F16 (with f16 inputs: --quant_input, packed in tag 3 at half the bytes) besides F32 and INT8
DEPLOYS = [(addr, mode) for addr in ("io_tag", "io_tag_fuse") for mode in ("F32", "INT8")] + [
    ("io_tag", "BF16"), ("io_tag_fuse", "F16")]


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """The model deployed for bm1688 with each tag mode in F32 and INT8, each run by model_runner;
    {(addr_mode, mode): (directory, model_deploy's stderr)}."""
    d = tmp_path_factory.mktemp("io_tag")
    rng = np.random.default_rng(7)
    nodes = [h.make_node("Conv", ["a", "w"], ["conv"], pads=[1, 1, 1, 1]),
             h.make_node("Add", ["conv", "b"], ["sum"]),
             h.make_node("Conv", ["sum", "w"], ["y"], pads=[1, 1, 1, 1])]
    w = rng.standard_normal((3, 3, 3, 3)).astype(np.float32)
    onnx.save(make_model(nodes, {"a": SHAPE, "b": SHAPE}, ["sum", "y"], {"w": w}), d / "m.onnx")
    (d / "cali").mkdir()
    for i in range(2):
        np.savez(d / "cali" / f"{i}.npz", **{x: rng.standard_normal(SHAPE).astype(np.float32) for x in "ab"})
    r = run_main("model_transform", "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir",
                 "--test_input", d / "cali" / "0.npz", cwd=d)
    assert r.returncode == 0, r.stderr
    r = run_main("run_calibration", d / "m.mlir", "--dataset", d / "cali", "--input_num", "2", "-o", d / "table",
                 "--quiet")
    assert r.returncode == 0, r.stderr
    out = {}
    for addr, mode in DEPLOYS:
        o = d / f"{addr}_{mode}"
        o.mkdir()
        table = {"INT8": ["--calibration_table", d / "table"], "F16": ["--quant_input"]}.get(mode, [])
        r = run_main("model_deploy", "--mlir", d / "m.mlir", "--quantize", mode, *table, "--processor", "bm1688",
                     "--addr_mode", addr, "--test_input", d / "m_in_f32.npz", "--model", o / "m.bmodel", cwd=o)
        assert r.returncode == 0, r.stderr
        out[addr, mode] = (o, r.stderr)
        r = run_main("model_runner", "--input", d / "m_in_f32.npz", "--model", o / "m.bmodel", "--output",
                     o / "out.npz")
        assert r.returncode == 0, r.stderr
    return d, out


@pytest.mark.parametrize("addr, mode", DEPLOYS)
def test_bmodel_check_passes_and_outputs_are_the_tpu_interpreters(deployed, addr, mode):
    _, out = deployed
    o, stderr = out[addr, mode]
    assert "model_deploy: bmodel check passed" in stderr
    (interp_file,) = o.glob("*_tpu_outputs.npz")
    ran, interp = np.load(o / "out.npz"), np.load(interp_file)
    assert sorted(ran) == ["sum", "y"]
    for name in ran:
        assert ran[name].tobytes() == interp[name].astype(ran[name].dtype).tobytes(), name


def _io_bytes(o) -> tuple[list[int], list[int]]:
    """The bytes of the final module's inputs and of its outputs, from their types: the element's
    bit width as xDSL gives it, not address_assign.nbytes (which placed them: the code under test)."""
    (final,) = o.glob("*_final.mlir")
    ops = list(load_module(final).main_func().walk())

    def size(v) -> int:
        return v.type.element_type.bitwidth // 8 * math.prod(v.type.get_shape())

    (ret,) = [op for op in ops if isinstance(op, ReturnOp)]
    return [size(op.results[0]) for op in ops if op.name == "top.Input"], [size(v) for v in ret.operands]


@pytest.mark.parametrize("addr, mode", DEPLOYS)
def test_the_tags_hold_exactly_the_io_tensors(deployed, addr, mode):
    _, out = deployed
    o, _ = out[addr, mode]
    inputs, outputs = _io_bytes(o)
    header = read_bmodel(o / "m.bmodel").header
    tensors = header["inputs"] + header["outputs"]
    assert [t["name"] for t in tensors] == ["a", "b", "sum", "y"]
    assert header["addr_mode"] == addr and "io_addr" not in header
    assert [t["dtype"] for t in header["inputs"]] == ["f16" if mode == "F16" else "f32"] * 2
    if addr == "io_tag":  # tensor i alone at byte 0 of tag 3 + i
        sizes = inputs + outputs
        assert header["io_tags"] == [{"tag": 3 + i, "size": s} for i, s in enumerate(sizes)]
        assert [t["address"] for t in tensors] == [(3 + i) << 36 for i in range(len(sizes))]
    else:  # the inputs one after another in tag 3, the outputs in tag 4
        assert header["io_tags"] == [{"tag": 3, "size": sum(inputs)}, {"tag": 4, "size": sum(outputs)}]
        offsets = [sum(inputs[:i]) for i in range(len(inputs))] + [sum(outputs[:i]) for i in range(len(outputs))]
        bases = [3 << 36] * len(inputs) + [4 << 36] * len(outputs)
        assert [t["address"] for t in tensors] == [b + off for b, off in zip(bases, offsets)]


def test_model_tool_info_shows_each_tag(deployed):
    _, out = deployed
    for addr, tags in (("io_tag", ["3", "4", "5", "6"]), ("io_tag_fuse", ["3", "4"])):
        o, _ = out[addr, "F32"]
        header = read_bmodel(o / "m.bmodel").header
        r = run_main("model_tool", "--info", o / "m.bmodel")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert f"address mode: {addr}, IO memory: {len(tags)} tags" in lines
        held = {"io_tag": ["input 'a'", "input 'b'", "output 'sum'", "output 'y'"],
                "io_tag_fuse": ["input 'a', input 'b'", "output 'sum', output 'y'"]}[addr]
        for tag, size, names in zip(tags, [r["size"] for r in header["io_tags"]], held, strict=True):
            assert f"tag {tag}: {size} bytes at {int(tag) << 36:#x} ({names})" in lines


def test_a_tag_too_small_is_refused_on_load(deployed, tmp_path):
    _, out = deployed
    o, _ = out["io_tag_fuse", "F32"]
    m = read_bmodel(o / "m.bmodel")
    outputs = m.header["io_tags"][1]["size"]
    m.header["io_tags"][1]["size"] -= 4
    # assembled by the container layout docs/bmodel.md gives (tests/test_bmodel.py's assembler):
    # write_bmodel would refuse the header
    debug = canonical([list(e) for e in m.debug]) if m.debug else b""
    (tmp_path / "small.bmodel").write_bytes(assemble([canonical(m.header), m.coeffs, m.commands, debug]))
    r = run_main("model_runner", "--input", deployed[0] / "m_in_f32.npz", "--model", tmp_path / "small.bmodel",
                 "--output", tmp_path / "out.npz")
    y_bytes = 4 * math.prod(SHAPE)  # the last output, f32: it ends where the tag's memory did
    assert (r.returncode, r.stderr.splitlines()) == (1, [
        f"{tmp_path / 'small.bmodel'}: error: bmodel header: 'outputs[1]' ('y', {y_bytes} bytes at "
        f"{(4 << 36) + outputs - y_bytes:#x}) is not inside tag 4's memory [{4 << 36:#x}, {(4 << 36) + outputs - 4:#x}) "
        f"('io_tags[1]')"])
    assert not (tmp_path / "out.npz").exists()


def test_a_read_past_a_tags_end_is_a_fault_naming_the_tag_and_its_tensor(deployed, tmp_path):
    """The first load of input `b` (alone in tag 4) moved 64 bytes on: it reads past tag 4's memory,
    which is its own array in the cmodel, not the next tag's bytes."""
    _, out = deployed
    o, _ = out["io_tag", "F32"]
    m = read_bmodel(o / "m.bmodel")
    records = isa.decode(m.commands)
    i = next(i for i, r in enumerate(records) if isinstance(r, isa.GdmaLoad) and r.gaddr >> 36 == 4)
    records[i] = dataclasses.replace(records[i], gaddr=records[i].gaddr + 64)
    write_bmodel(tmp_path / "stray.bmodel", m.header, m.coeffs, isa.encode(records), m.debug)
    r = run_main("model_runner", "--input", deployed[0] / "m_in_f32.npz", "--model", tmp_path / "stray.bmodel",
                 "--output", tmp_path / "out.npz")
    assert r.returncode == 1, r.stderr
    assert (f"src_address {(4 << 36) + 64:#x}..{(4 << 36) + 64 + 4 * math.prod(SHAPE):#x} is outside tag 4's memory "
            f"[{4 << 36:#x}, {(4 << 36) + 4 * math.prod(SHAPE):#x}) (input 'b')") in r.stderr


def test_every_tensor_of_the_run_reads_as_the_tpu_interpreters(deployed, tmp_path):
    """model_runner --dump_all_tensors (the cmodel's capture, reading tagged addresses too) on the
    INT8 io_tag_fuse bmodel: every tensor the Tpu interpreter dumps for the Tpu module, bit for bit."""
    d, out = deployed
    o, _ = out["io_tag_fuse", "INT8"]
    (tpu,) = o.glob("*_tpu.mlir")
    got = run_model(o / "m.bmodel", d / "m_in_f32.npz", tmp_path / "bmodel_all.npz", all_tensors=True)
    want = run_model(tpu, d / "m_in_f32.npz", tmp_path / "tpu_all.npz", all_tensors=True)
    assert {"a", "b", "sum", "y"} < set(got) <= set(want), sorted(got)  # the IO and more
    for name, v in got.items():
        assert v.dtype == want[name].dtype and np.array_equal(v, want[name]), name


def test_codegen_refuses_a_tag_mode_on_a_chip_without_tags(deployed):
    """codegen reads module.addr_mode through address_assign.addr_mode, which checks it against the
    module's chip as processor-assign does: the io_tag final module relabelled bm1684x by hand is
    one error naming the mode and the chip."""
    _, out = deployed
    (final,) = out["io_tag", "F32"][0].glob("*_final.mlir")
    top = load_module(final)
    top.module.attributes["module.chip"] = StringAttr("bm1684x")
    with pytest.raises(TpudslError) as info:
        generate(top)
    assert str(info.value) == ("error: backend: module.addr_mode 'io_tag' needs a chip with memory tags; bm1684x "
                               "has none (chips with memory tags: bm1688, tiny)")
