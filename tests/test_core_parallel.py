"""`--core-parallel` on bm1688 with two cores (docs/backend.md "Several cores"): each weight-only
A16MatMul split into one part per core on its output columns, joined by a Concat keeping its name.

* model_deploy --quantize W4BF16 (per group) and W8BF16 (per channel) --num_core 2 of three MatMuls
  (two of the input, the first with a bias, and one of its result): the bmodel check passes
  (bit-exact to the Tpu interpreter of the unsplit module); each Concat keeps its MatMul's name and
  is merged in place (its parts' addresses are its runs); the two independent MatMuls' parts share
  one phase, each core one part of each, the third's the next; the cost model's overlapped cycles
  are fewer than the same model's own --num_core 1 run.
* The parts' stored integers, scales, zero points and biases, put back together along the columns,
  are the unsplit module's (the lowering's output, an independent reference for the cut).
* bmodel_checker against the Tpu interpreter's dump of the unsplit module compares each Concat by
  the MatMul's name (the parts' derived names are not in the dump).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.cli_support import run_main
from xdsl.dialects.builtin import BoolAttr, i1

from tpudsl.backend import isa
from tpudsl.backend.address_assign import address_of
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.cores import phase_bounds, streams_of
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.module import load_module

K, N = 128, 256  # decode: one row of K in, N columns out, and back to K


def _matmuls(path) -> None:
    """y = (x @ w1 + b) @ w2 and z = x @ w3 for x [1, 1, K]: three constant-weight MatMuls, the
    first with a bias, the third independent of the first two."""
    rng = np.random.default_rng(5)
    w1, w2, w3 = (rng.standard_normal(s).astype(np.float32) for s in ((K, N), (N, K), (K, N)))
    b = rng.standard_normal(N).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["a"]), helper.make_node("MatMul", ["x", "w3"], ["z"]),
         helper.make_node("Add", ["a", "b"], ["h"]), helper.make_node("MatMul", ["h", "w2"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, K]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 1, N])],
        [numpy_helper.from_array(w, n) for w, n in ((w1, "w1"), (w2, "w2"), (w3, "w3"), (b, "b"))])
    import onnx

    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    np.savez(path.with_name("in.npz"), x=rng.standard_normal((1, 1, K)).astype(np.float32))


@pytest.fixture(scope="module")
def deploy(tmp_path_factory):
    """model_deploy (mode, cores, flags) on bm1688, each once per module: the bmodel check passed;
    (bmodel, the lowered Tpu module, the final one)."""
    d = tmp_path_factory.mktemp("core_parallel")
    _matmuls(d / "m.onnx")
    r = run_main("model_transform", "--model_name", "m", "--model_def", d / "m.onnx", "--mlir", d / "m.mlir",
                 "--test_input", d / "in.npz", cwd=d)
    assert r.returncode == 0, r.stderr
    done = {}

    def deployed(mode: str, cores: int, *flags: str):
        if (mode, cores) not in done:
            out = d / f"{mode}_{cores}"
            out.mkdir()
            r = run_main("model_deploy", "--mlir", d / "m.mlir", "--quantize", mode, "--processor", "bm1688",
                         "--num_core", str(cores), *flags, "--test_input", d / "m_in_f32.npz",
                         "--model", out / "m.bmodel", cwd=out)
            assert r.returncode == 0 and f"bmodel check passed: 2 outputs of the cmodel equal the Tpu interpreter's " \
                f"({mode}, bit-exact)" in r.stderr, r.stderr
            modules = (load_module(out / f"m_bm1688_{mode.lower()}_{what}.mlir") for what in ("tpu", "final"))
            done[mode, cores] = (read_bmodel(out / "m.bmodel"), *modules)
        return done[mode, cores]

    return deployed


@pytest.mark.parametrize("mode, flags", [("W4BF16", ("--q_group_size", "32")), ("W8BF16", ())])
def test_split_parts_run_on_both_cores_bit_exact_and_faster_than_one_core(deploy, mode, flags):
    one, _, _ = deploy(mode, 1, *flags)
    two, _, final = deploy(mode, 2, *flags)
    ops = list(final.main_func().body.block.ops)
    parts = [op for op in ops if op.name == "tpu.A16MatMul"]
    names = ["z_bf16", "h", "y_bf16"]  # in ONNX order, the Add fused as h's bias
    assert [(loc_name(p), p.attributes["core_id"].value.data) for p in parts] == [
        (f"{name}_core{k}", k) for name in names for k in range(2)]
    # each Concat keeps the MatMul's name and is merged in place: its parts write their runs of it
    concats = [op for op in ops if op.name == "tpu.Concat"]
    assert [loc_name(c) for c in concats] == names
    for c in concats:
        assert c.attributes["only_merge"] == BoolAttr(True, i1)
        at = address_of(c.results[0])
        columns = c.results[0].type.get_shape()[-1]
        assert [address_of(v) for v in c.operands] == [at, at + columns // 2 * 2], loc_name(c)  # bf16: 2 bytes
    # h's and z's parts in one phase (independent), y's in the next, each core one part of each
    streams = streams_of(isa.decode(two.commands), two.header["core_instructions"])
    phases = [[sum(isinstance(r, isa.BdcMatMulA16) for r in s[begin:end]) for s, (begin, end) in
               zip(streams, bounds, strict=True)] for bounds in zip(*(phase_bounds(s) for s in streams), strict=True)]
    assert [p for p in phases if any(p)] == [[2, 2], [1, 1]], phases
    o1, o2 = one.header["overlapped_cycles"], two.header["overlapped_cycles"]
    assert o2 < o1, (o1, o2)


def test_split_constants_put_together_are_the_unsplit_ones(deploy):
    """The lowered module's A16MatMul constants (model_deploy's PREFIX_tpu.mlir, before the backend)
    against the final module's parts, concatenated along the columns."""
    _, tpu, final = deploy("W4BF16", 2, "--q_group_size", "32")
    whole = {loc_name(op): op for op in tpu.main_func().walk() if op.name == "tpu.A16MatMul"}
    parts = {loc_name(op): op for op in final.main_func().walk() if op.name == "tpu.A16MatMul"}
    assert whole.keys() == {"h", "z_bf16", "y_bf16"}
    for name, op in whole.items():
        halves = [parts[f"{name}_core{k}"] for k in range(2)]
        for i, axis in ((1, 0), (2, 0), (3, 0), (4, -1)):  # weight, scale, zero point: rows; bias: last axis
            if op.operands[i].owner.name == "top.None":
                assert all(h.operands[i].owner.name == "top.None" for h in halves)
                continue
            want = tpu.weight_of(op.operands[i].owner)
            got = np.concatenate([final.weight_of(h.operands[i].owner) for h in halves], axis=axis)
            assert got.dtype == want.dtype and np.array_equal(got, want), (name, i)


def test_bmodel_checker_finds_each_split_matmul_by_its_name(deploy, tmp_path):
    """bmodel_checker against the Tpu interpreter's dump of the unsplit module: the Concats keep the
    MatMuls' names, so each is compared (bit-exact); the parts' derived names are not in the dump."""
    bm, tpu, _ = deploy("W4BF16", 2, "--q_group_size", "32")
    d = Path(tpu.path).parent
    r = run_main("model_runner", "--model", tpu.path, "--input", d.parent / "m_in_f32.npz",
                 "--output", tmp_path / "ref.npz", "--dump_all_tensors")
    assert r.returncode == 0, r.stderr
    r = run_main("bmodel_checker", d / "m.bmodel", tmp_path / "ref.npz", "--no_interactive")
    assert r.returncode == 0, r.stdout + r.stderr
    checked = {line.split()[0]: line.split()[1:3] for line in r.stdout.splitlines() if "PASSED  EQUAL" in line}
    assert {name: checked.get(name) for name in ("z_bf16", "h", "y_bf16")} == dict.fromkeys(
        ("z_bf16", "h", "y_bf16"), ["tpu.Concat", "PASSED"]), r.stdout
    assert "not in the reference (6): z_bf16_core0, z_bf16_core1, h_core0, h_core1, y_bf16_core0, y_bf16_core1" \
        in r.stdout and ", 0 failed" in r.stdout, r.stdout
