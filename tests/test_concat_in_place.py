"""Concats merged in place (docs/backend.md "Concats merged in place"): a small DenseNet-style
block deployed by model_deploy (bm1684x) in INT8 and F32, with merging on (the default) and off
(--no_concat_in_place).

* The Concats TPU-MLIR's conditions accept (c3) and the chain c1, c2 (torchvision's form: c2 reads
  c1's inputs again, docs/backend.md "Chains") are only_merge in the final module, each input's
  address its run of the result (c1's result the prefix of c2's).
* The bmodel check passes either way (INT8 bit-exact, F32 within its rule), and the merged bmodel
  moves fewer GDMA bytes than the unmerged one (the Concats' loads and stores are gone).
* Names survive: model_runner --dump_all_tensors on the merged bmodel has every tensor the Tpu
  interpreter's dump has, the merged Concats' inputs at their runs included, equal (INT8: exactly).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.cli_support import run_main, run_model
from tpudsl.backend import isa
from tpudsl.backend.address_assign import address_of, nbytes
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.layer_group.traffic import gdma_bytes
from tpudsl.backend.slicing import attrs_of
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.module import load_module

C = 4  # the growth: each layer adds C channels
_SUFFIX = {"INT8": "int8_sym", "F32": "f32"}  # model_deploy's file names


def _block(path) -> None:
    """s = relu(conv(x)); y1 = relu(conv(s)); c1 = cat(s, y1); y2 = relu(conv(c1)); c2 = cat(s, y1, y2)
    (torchvision's DenseNet: every earlier feature again); t = relu(conv(c2)); y3 = relu(conv(t));
    c3 = cat(t, y3); out = mean over H and W of c3."""
    rng = np.random.default_rng(7)
    nodes, weights = [], []

    def conv(name, src, cin):
        w = (rng.standard_normal((C, cin, 3, 3)) / math.sqrt(9 * cin)).astype(np.float32)
        weights.append(numpy_helper.from_array(w, f"{name}_w"))
        nodes.extend([helper.make_node("Conv", [src, f"{name}_w"], [f"{name}_conv"], pads=[1, 1, 1, 1]),
                      helper.make_node("Relu", [f"{name}_conv"], [name])])

    conv("s", "x", 3)
    conv("y1", "s", C)
    nodes.append(helper.make_node("Concat", ["s", "y1"], ["c1"], axis=1))
    conv("y2", "c1", 2 * C)
    nodes.append(helper.make_node("Concat", ["s", "y1", "y2"], ["c2"], axis=1))
    conv("t", "c2", 3 * C)
    conv("y3", "t", C)
    nodes += [helper.make_node("Concat", ["t", "y3"], ["c3"], axis=1),
              helper.make_node("GlobalAveragePool", ["c3"], ["out"])]
    graph = helper.make_graph(nodes, "dense", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 2 * C, 1, 1])], weights)
    import onnx

    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    for seed in range(3):
        np.savez(path.parent / "cali" / f"s{seed}.npz", x=rng.standard_normal((1, 3, 8, 8)).astype(np.float32))


@pytest.fixture(scope="module")
def deploy(tmp_path_factory):
    """model_deploy (mode, merged) once each: the bmodel check passed; (out dir, bmodel, final module)."""
    d = tmp_path_factory.mktemp("concat_in_place")
    (d / "cali").mkdir()
    _block(d / "m.onnx")
    r = run_main("model_transform", "--model_name", "m", "--model_def", d / "m.onnx", "--mlir", d / "m.mlir",
                 "--test_input", d / "cali" / "s0.npz", cwd=d)
    assert r.returncode == 0, r.stderr
    r = run_main("run_calibration", d / "m.mlir", "--dataset", d / "cali", "--input_num", "3", "-o", d / "table",
                 cwd=d)
    assert r.returncode == 0, r.stderr
    done = {}

    def deployed(mode: str, merged: bool):
        if (mode, merged) not in done:
            out = d / f"{mode}_{merged}"
            out.mkdir()
            r = run_main("model_deploy", "--mlir", d / "m.mlir", "--quantize", mode, "--processor", "bm1684x",
                         *(["--calibration_table", d / "table"] if mode == "INT8" else []),
                         *([] if merged else ["--no_concat_in_place"]),
                         "--test_input", d / "m_in_f32.npz", "--model", out / "m.bmodel", cwd=out)
            assert r.returncode == 0 and "bmodel check passed" in r.stderr, r.stderr
            if mode == "INT8":
                assert "(INT8, bit-exact)" in r.stderr, r.stderr
            final = load_module(out / f"m_bm1684x_{_SUFFIX[mode]}_final.mlir")
            done[mode, merged] = (out, read_bmodel(out / "m.bmodel"), final)
        return done[mode, merged]

    return deployed


@pytest.mark.parametrize("mode", ["INT8", "F32"])
def test_merged_where_tpu_mlir_merges_and_fewer_gdma_bytes(deploy, mode):
    _, merged_bm, final = deploy(mode, True)
    _, unmerged_bm, unmerged = deploy(mode, False)
    concats = {loc_name(op): op for op in final.main_func().walk() if op.name == "tpu.Concat"}
    merged = {name for name, op in concats.items() if attrs_of(op)["only_merge"]}
    # c2 reads s and y1 again after c1 (TPU-MLIR merges only c1): one buffer for both
    assert set(concats) == {"c1", "c2", "c3"} and merged == {"c1", "c2", "c3"}
    assert address_of(concats["c1"].results[0]) == address_of(concats["c2"].results[0])
    for name in merged:
        op = concats[name]
        at = address_of(op.results[0])
        for v in op.operands:  # each input is its run of the result, in order (independently of codegen's check)
            assert address_of(v) == at
            at += nbytes(v)
    assert not any(op.attributes.get("only_merge") for op in unmerged.main_func().walk() if op.name == "tpu.Concat")
    fewer, more = (gdma_bytes(isa.decode(bm.commands)) for bm in (merged_bm, unmerged_bm))
    assert fewer < more


@pytest.mark.parametrize("mode", ["INT8", "F32"])
def test_names_survive_in_the_dump_at_their_runs(deploy, mode):
    out, _, _ = deploy(mode, True)
    tpu = run_model(out / f"m_bm1684x_{_SUFFIX[mode]}_tpu.mlir", out.parent / "m_in_f32.npz", out / "tpu_all.npz",
                    all_tensors=True)
    ours = run_model(out / "m.bmodel", out.parent / "m_in_f32.npz", out / "bm_all.npz", all_tensors=True)
    for name in ("s", "y1", "c1", "y2", "c2", "t", "y3", "c3"):  # the merged Concats and their inputs
        key = next(k for k in tpu if k == name or k.startswith(f"{name}_"))
        assert key in ours, (key, sorted(ours))
        if mode == "INT8":
            np.testing.assert_array_equal(ours[key], tpu[key])
        else:
            np.testing.assert_allclose(ours[key], tpu[key], rtol=1e-5, atol=1e-5)
