"""Concat chains in one buffer (docs/backend.md "Concats merged in place", "Chains"): the small
DenseNet of tests/models/cnn.py (two dense blocks, x_k = Concat(x_(k-1), y_k)) deployed by
model_deploy (bm1684x) in F16 and INT8.

* Every dense block's Concats are only_merge and one buffer: each Concat's result at the address of
  the block's input, each new feature y_k right behind x_(k-1) (offsets computed here from the
  shapes, not read from the pass).
* No Concat has an instruction: the bmodel's debug info gives none of them a record (the convs,
  the control, have theirs).
* The bmodel is bit-exact to the Tpu interpreter (model_deploy's rule, assert_dump_equal), every
  tensor of model_runner --dump_all_tensors included, the same names in the same order (each
  Concat's result and feature read at its address during the run: the buffer reused while a member
  is still read changes them; a feature at a wrong offset already fails the deploy, codegen's check
  of an only_merge Concat's inputs).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from tests.backend_support import assert_dump_equal
from tests.cli_support import run_main, run_model
from tests.models import densenet, random_inputs
from tpudsl.backend import isa
from tpudsl.backend.address_assign import address_of, nbytes
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.cmodel.engine import op_names
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.module import load_module

_SUFFIX = {"INT8": "int8_sym", "F16": "f16"}  # model_deploy's file names
BLOCKS = (3, 2)


@pytest.fixture(scope="module")
def deploy(tmp_path_factory):
    """model_deploy once per mode (its bmodel check passed): (out dir, bmodel, final module)."""
    d = tmp_path_factory.mktemp("concat_chain")
    (d / "cali").mkdir()
    model = densenet(input_size=16, num_classes=4, growth=4, blocks=BLOCKS, init_channels=8)
    onnx.save(model, d / "m.onnx")
    for seed in range(3):
        np.savez(d / "cali" / f"s{seed}.npz", **random_inputs(model, seed=seed))
    r = run_main("model_transform", "--model_name", "m", "--model_def", d / "m.onnx", "--mlir", d / "m.mlir",
                 "--test_input", d / "cali" / "s0.npz", cwd=d)
    assert r.returncode == 0, r.stderr
    done = {}

    def deployed(mode: str):
        if mode not in done:
            if mode == "INT8":
                r = run_main("run_calibration", d / "m.mlir", "--dataset", d / "cali", "--input_num", "3",
                             "-o", d / "table", cwd=d)
                assert r.returncode == 0, r.stderr
            out = d / mode
            out.mkdir()
            r = run_main("model_deploy", "--mlir", d / "m.mlir", "--quantize", mode, "--processor", "bm1684x",
                         *(["--calibration_table", d / "table"] if mode == "INT8" else []),
                         "--test_input", d / "m_in_f32.npz", "--model", out / "m.bmodel", cwd=out)
            assert r.returncode == 0 and "bmodel check passed" in r.stderr, r.stderr
            final = load_module(out / f"m_bm1684x_{_SUFFIX[mode]}_final.mlir")
            done[mode] = (out, read_bmodel(out / "m.bmodel"), final)
        return done[mode]

    return deployed


@pytest.mark.parametrize("mode", ["F16", "INT8"])
def test_each_block_one_buffer_and_no_instruction(deploy, mode):
    _, bm, final = deploy(mode)
    concats = [op for op in final.main_func().walk() if op.name == "tpu.Concat"]
    assert len(concats) == sum(BLOCKS) and all(op.attributes["only_merge"].value.data for op in concats)
    by_name = {loc_name(op): op for op in concats}
    for b, layers in enumerate(BLOCKS):
        chain = [by_name[f"features.denseblock{b + 1}.layer{k + 1}.concat"] for k in range(layers)]
        base = address_of(chain[0].operands[0])
        end = base + nbytes(chain[0].operands[0])
        for op in chain:  # x_k = Concat(x_(k-1), y_k): the prefix, and y_k behind it
            assert address_of(op.results[0]) == base and address_of(op.operands[0]) == base
            assert address_of(op.operands[1]) == end
            end += nbytes(op.operands[1])
            assert end == base + nbytes(op.results[0])
    records = isa.decode(bm.commands)
    per_op = op_names(bm.debug, len(records))
    assert not set(by_name) & set(per_op)
    assert "features.denseblock1.layer1.conv2" in set(per_op)  # the debug info names ops' records


@pytest.mark.parametrize("mode", ["F16", "INT8"])
def test_bit_exact_to_the_tpu_interpreter_every_tensor(deploy, mode):
    out, _, _ = deploy(mode)
    tpu = run_model(out / f"m_bm1684x_{_SUFFIX[mode]}_tpu.mlir", out.parent / "m_in_f32.npz", out / "tpu_all.npz",
                    all_tensors=True)
    ours = run_model(out / "m.bmodel", out.parent / "m_in_f32.npz", out / "bm_all.npz", all_tensors=True)
    chain = [k for k in tpu if ".concat" in k or ".conv2" in k]
    assert len(chain) >= 2 * sum(BLOCKS), sorted(tpu)
    assert_dump_equal(ours, tpu, mode)
