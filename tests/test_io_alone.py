"""model_deploy --addr_mode io_alone (docs/backend.md, "IO region"): the inputs and outputs in an IO
region of their own, judged from the written files: the final module's addresses and the .bmodel's
header (every IO tensor inside the region, no activation overlapping it, the region as large as the
IO tensors need), and the outputs of the bmodel's run (model_runner, the cmodel) bit-identical to the
default mode's bmodel and to the Tpu interpreter's.

The model: the input `data` is read by two ops (the Conv and the Add), the output `sum` is read by a
later op (the second Conv, whose result `y` is the other output)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from cli_support import run_main
from frontend_support import make_model
from onnx import helper as h
from xdsl.dialects.func import ReturnOp

from tpudsl.backend.address_assign import address_of, align, nbytes
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.chips import chip_named
from tpudsl.dialects.opdef import loc_name, value_name
from tpudsl.ir.module import load_module


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """The model deployed twice, with the default addr_mode (auto) and with io_alone, each run by model_runner."""
    d = tmp_path_factory.mktemp("io_alone")
    rng = np.random.default_rng(5)
    nodes = [h.make_node("Conv", ["data", "w"], ["conv"], pads=[1, 1, 1, 1]),
             h.make_node("Add", ["data", "conv"], ["sum"]),
             h.make_node("Conv", ["sum", "w"], ["y"], pads=[1, 1, 1, 1])]
    w = rng.standard_normal((3, 3, 3, 3)).astype(np.float32)
    onnx.save(make_model(nodes, {"data": [1, 3, 16, 16]}, ["sum", "y"], {"w": w}), d / "m.onnx")
    np.savez(d / "in.npz", data=rng.standard_normal((1, 3, 16, 16)).astype(np.float32))
    r = run_main("model_transform", "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir",
                 "--test_input", "in.npz", cwd=d)
    assert r.returncode == 0, r.stderr
    # opt=1: each op its own group, so `sum` is stored to the IO region and loaded back from it by
    # the second Conv; the default grouping (one group) keeps it in local memory for the Conv.
    for out, flags in (("auto", ("--opt", "1")), ("io_alone", ("--opt", "1")), ("io_alone_grouped", ())):
        (d / out).mkdir()
        r = run_main("model_deploy", "--mlir", d / "m.mlir", "--processor", "bm1684x", "--addr_mode",
                     out.removesuffix("_grouped"), *flags, "--test_input", d / "m_in_f32.npz",
                     "--model", d / out / "m.bmodel")
        assert r.returncode == 0, r.stderr
        r = run_main("model_runner", "--input", d / "m_in_f32.npz", "--model", d / out / "m.bmodel",
                     "--output", d / out / "out.npz")
        assert r.returncode == 0, r.stderr
    return d


def test_outputs_bit_identical_to_the_default_mode_and_the_tpu_interpreter(deployed):
    auto = np.load(deployed / "auto" / "out.npz")
    interp = np.load(deployed / "io_alone" / "m_bm1684x_f32_tpu_outputs.npz")
    for out in ("io_alone", "io_alone_grouped"):
        alone = np.load(deployed / out / "out.npz")
        assert sorted(alone) == sorted(auto) == ["sum", "y"]
        for name in ("sum", "y"):
            assert alone[name].tobytes() == auto[name].tobytes() == interp[name].astype(np.float32).tobytes(), name


@pytest.mark.parametrize("out", ["io_alone", "io_alone_grouped"])
def test_io_tensors_in_their_own_region_activations_outside_it(deployed, out):
    final = load_module(deployed / out / "m_bm1684x_f32_final.mlir")
    attrs = final.module.attributes
    io_addr, io_size = attrs["module.io_addr"].value.data, attrs["module.io_size"].value.data
    assert attrs["module.addr_mode"].data == "io_alone"
    ops = list(final.main_func().walk())
    inputs = [o.results[0] for o in ops if o.name == "top.Input"]
    (ret,) = [o for o in ops if isinstance(o, ReturnOp)]
    io = {*inputs, *ret.operands}
    dma_align = chip_named("bm1684x").dma_align
    # As large as the IO tensors need: each its own aligned block, nothing else.
    assert io_size == sum(align(nbytes(v), dma_align) for v in io)
    for v in io:
        assert io_addr <= address_of(v) and address_of(v) + nbytes(v) <= io_addr + io_size, v
    # The tensors computed (a group's Loads, Stores and results are the tensors they move): those
    # named as an output are in the region at the output's address, every other outside it.
    at = {loc_name(o): address_of(o.results[0]) for o in ops if o.name == "top.Input"}
    at.update((value_name(v), address_of(v)) for v in ret.operands)
    computed = [o for o in ops if o.name.startswith("tpu.") and o.name not in ("tpu.Load", "tpu.Store", "tpu.Group")]
    activations = [r for o in computed for r in o.results if address_of(r) is not None and value_name(r) not in at]
    assert {value_name(r): address_of(r) for o in computed for r in o.results if value_name(r) in at} == {
        "sum": at["sum"], "y": at["y"]}
    assert activations
    for v in activations:
        assert address_of(v) + nbytes(v) <= io_addr or address_of(v) >= io_addr + io_size, value_name(v)
    header = read_bmodel(deployed / out / "m.bmodel").header
    assert (header["addr_mode"], header["io_addr"], header["io_size"]) == ("io_alone", io_addr, io_size)
    assert {t["name"]: t["address"] for t in header["inputs"] + header["outputs"]} == {
        "data": address_of(inputs[0]), "sum": address_of(ret.operands[0]), "y": address_of(ret.operands[1])}
    assert "addr_mode" not in read_bmodel(deployed / "auto" / "m.bmodel").header


def test_model_tool_info_shows_the_io_region(deployed):
    header = read_bmodel(deployed / "io_alone" / "m.bmodel").header
    r = run_main("model_tool", "--info", deployed / "io_alone" / "m.bmodel")
    assert r.returncode == 0, r.stderr
    assert f"address mode: io_alone, IO memory: {header['io_size']} bytes at {header['io_addr']:#x}" in r.stdout
