"""--trunc-layer's debugging flow (TPU-MLIR's "final.mlir 截断方式"): deploy a model keeping its final
.mlir, cut it to some layers, compile the cut and run it on the cmodel with its inputs taken by name
from the Tpu interpreter's tensors of the whole model; its outputs, by name, must be those tensors
(F32 within 1e-5 of each tensor's largest magnitude, INT8 bit for bit). The reference is the previous
level of the flow, the Tpu interpreter on the whole (uncut, ungrouped) Tpu module."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.backend_support import assert_bit_exact, assert_f32_close
from tests.models import resnet18
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.layer_group.region import members
from tpudsl.cli import model_deploy, model_runner, model_transform
from tpudsl.cli.run_calibration import main as run_calibration
from tpudsl.cli.tpuc_opt import main as tpuc_opt
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.module import load_module
from tpudsl.passes import pass_class


def _exits_0(main, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in argv])
    assert info.value.code == 0


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """ResNet-18 (32x32, width 8) deployed for the tiny chip in F32 and INT8 (several layer groups,
    some prefetched, then Reshape and MatMul alone), and the Tpu interpreter's tensors of each mode."""
    d = tmp_path_factory.mktemp("trunc")
    onnx.save(resnet18(input_size=32, num_classes=10, width=8), d / "r.onnx")
    rng = np.random.default_rng(0)
    np.savez(d / "in.npz", input=rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    (d / "cali").mkdir()
    for i in range(2):
        np.savez(d / "cali" / f"{i}.npz", input=rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
    model_transform.run(["--model_name", "r", "--model_def", str(d / "r.onnx"), "--mlir", str(d / "r.mlir"),
                         "--test_input", str(d / "in.npz")])
    _exits_0(run_calibration, [d / "r.mlir", "--dataset", d / "cali", "--input_num", "2", "-o", d / "table", "--quiet"])
    for mode, extra in (("F32", []), ("INT8", ["--calibration_table", str(d / "table")])):
        model_deploy.run(["--mlir", str(d / "r.mlir"), "--quantize", mode, "--processor", "tiny", *extra,
                          "--model", str(d / f"r_{mode}.bmodel")])
    for prefix in ("r_tiny_f32", "r_tiny_int8_sym"):
        model_runner.run(["--input", str(d / "r_in_f32.npz"), "--model", str(d / f"{prefix}_tpu.mlir"),
                          "--dump_all_tensors", "--output", str(d / f"{prefix}_all.npz")])
    return d


def _groups(final) -> list[list[str]]:
    """The layer names of each top-level op of the final module that computes (a group: its members)."""
    out = []
    for op in load_module(final).main_func().body.block.ops:
        if op.name == "tpu.Group":
            prefetched = ["(prefetched)"] if "other_up_overlap_op" in op.attributes else []
            out.append([loc_name(m) for m in members(op)] + prefetched)
        elif op.name.startswith("tpu."):
            out.append([loc_name(op)])
    return out


def _cut_and_run(d, prefix: str, cut: str, name: str) -> tuple[dict, dict, dict]:
    """Cut PREFIX_final.mlir to `cut`, compile, run on the Tpu interpreter's tensors: (header,
    outputs, the whole model's tensors)."""
    _exits_0(tpuc_opt, [d / f"{prefix}_final.mlir", f"--trunc-layer=cutLocs={cut}", "--address-assign",
                        "-o", d / f"{name}.mlir"])
    _exits_0(tpuc_opt, [d / f"{name}.mlir", f"--codegen=model_file={d / name}.bmodel", "-o", "/dev/null"])
    header = read_bmodel(d / f"{name}.bmodel").header
    everything = dict(np.load(d / f"{prefix}_all.npz"))
    np.savez(d / f"{name}_in.npz", **{t["name"]: everything[t["name"]] for t in header["inputs"]})
    model_runner.run(["--input", str(d / f"{name}_in.npz"), "--model", str(d / f"{name}.bmodel"), "--out_fixed",
                      "--output", str(d / f"{name}_out.npz")])
    return header, dict(np.load(d / f"{name}_out.npz")), everything


def test_f32_cut_of_groups_and_a_plain_op_computes_the_tpu_interpreters_tensors(deployed):
    groups = _groups(deployed / "r_tiny_f32_final.mlir")
    # the shape of the model this test relies on: groups 0-3 in a row, 1-3 prefetched, Reshape and MatMul alone
    assert groups[0][0] == "relu" and "(prefetched)" not in groups[0]
    assert groups[1][0] == "layer2.0.relu1" and groups[1][-1] == "(prefetched)"
    assert groups[2][0] == "layer2.1.relu1" and groups[2][-1] == "(prefetched)"
    assert groups[3][0] == "layer2.1.relu2" and groups[3][-1] == "(prefetched)"
    assert groups[-2:] == [["flatten"], ["output"]]
    # groups 0 and 1 and 3 (named by an op inside), and the MatMul with the Reshape it reads: group 3
    # now comes right after group 1, which never loaded its weights (it is built without the prefetch)
    header, got, want = _cut_and_run(deployed, "r_tiny_f32", "relu,layer2.0.relu1,layer2.1.relu2,output", "f32_cut")
    assert [t["name"] for t in header["inputs"]] == ["input", "layer2.1.2.bn", "avgpool"]
    outputs = [t["name"] for t in header["outputs"]]
    # group 0's result is read only by group 1 (kept); group 1's by group 2 (dropped) and group 3;
    # group 3's by group 4 (dropped); the MatMul's by the return
    assert outputs == ["layer2.0.relu2", "layer2.1.relu2", "layer3.0.relu1", "output"]
    for name in outputs:
        assert got[name].dtype == np.float32
        assert_f32_close(got[name], want[name], name)


def test_int8_cut_is_bit_exact_to_the_tpu_interpreter(deployed):
    groups = _groups(deployed / "r_tiny_int8_sym_final.mlir")
    assert groups[2][:2] == ["layer3.1.relu1", "layer3.1.2.bn"] and groups[2][-1] == "(prefetched)"
    assert groups[-3:] == [["flatten"], ["output_int8"], ["output"]]  # the MatMul, then its dequantizing Cast
    header, got, want = _cut_and_run(deployed, "r_tiny_int8_sym", "layer3.1.2.bn,output_int8", "int8_cut")
    assert [(t["name"], t["dtype"]) for t in header["inputs"]] == [("layer3.0.relu2", "i8"), ("avgpool", "i8")]
    outputs = [t["name"] for t in header["outputs"]]
    assert outputs == ["layer3.1.2.bn", "output_int8"]
    for name in outputs:
        assert got[name].dtype == want[name].dtype == np.int8
        assert_bit_exact(got[name], want[name], name)


# The chain of lit_tests/driver/tpu_mlir_trunc_layer.mlir: x -> a -> b -> c -> d -> e -> r (Reshape)
# -> f, a and f returned; on tiny its final module is a alone, groups (b, c) and (d, e) (two H slices,
# (d, e) prefetched during (b, c)), r, f. Written here apart from the pass: what each cut must give.
_LIT = Path(__file__).parent.parent / "lit_tests" / "driver" / "tpu_mlir_trunc_layer.mlir"
_UNITS = (("a",), ("b", "c"), ("d", "e"), ("r",), ("f",))  # the final module's top-level ops, in order
_READS = {"a": "x", "b": "a", "c": "b", "d": "c", "e": "d", "r": "e", "f": "r"}
_RETURNED = ("a", "f")


def _expected(cut: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The cut's inputs and outputs by name, from the chain above and TruncLayer's rules."""
    kept = [u for u in _UNITS if set(u) & set(cut)]
    if ("f",) in kept and ("r",) not in kept:  # the Reshape f reads comes along
        kept.insert(kept.index(("f",)), ("r",))
    members = {n for u in kept for n in u}
    inputs = [_READS[n] for u in kept for n in u if _READS[n] not in members]
    read_outside = {_READS[n] for n in _READS if n not in members}
    outputs = [n for u in kept for n in u if n in read_outside or n in _RETURNED]
    return inputs, outputs


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """The lit test's final module (TPU-MLIR's order: --layer-group, then --address-assign) and the
    Tpu interpreter's tensors of the whole module."""
    d = tmp_path_factory.mktemp("chain")
    (d / "m.mlir").write_text(_LIT.read_text())
    rng = np.random.default_rng(0)
    np.savez(d / "w.npz", **{f"w{i}": rng.standard_normal((8, 8, 3, 3)).astype(np.float32) for i in range(5)})
    feed = {"x": rng.standard_normal((1, 8, 48, 16)).astype(np.float32)}
    _exits_0(tpuc_opt, [d / "m.mlir", "--processor-assign=chip=tiny mode=F32", "--convert-top-to-tpu",
                        "-o", d / "tpu.mlir"])
    _exits_0(tpuc_opt, [d / "tpu.mlir", "--layer-group", "--address-assign", "-o", d / "final.mlir"])
    assert [tuple(g) for g in _groups(d / "final.mlir")] == [*_UNITS[:2], (*_UNITS[2], "(prefetched)"), *_UNITS[3:]]
    return d, model_runner.mlir_inference(feed, d / "tpu.mlir", dump_all_tensors=True)


@pytest.mark.parametrize("cut", [c for k in (1, 2) for c in itertools.combinations(sorted(_READS), k)],
                         ids=lambda c: ",".join(c))
def test_every_cut_of_one_or_two_layers_computes_the_tpu_interpreters_tensors(chain, cut):
    """Each layer and each pair: the inputs and outputs the rules give, the prefetch of (d, e) kept
    exactly when (b, c) is, and the cmodel's outputs those of the Tpu interpreter on the whole module."""
    from tpudsl.backend import isa
    from tpudsl.backend.bmodel import read_bmodel, write_bmodel
    from tpudsl.backend.cmodel import run_bmodel
    from tpudsl.backend.codegen import generate

    d, want = chain
    top = load_module(d / "final.mlir")
    ctx = make_context()
    pass_class("trunc-layer")(cutLocs=cut).apply(ctx, top.module)
    pass_class("address-assign")().apply(ctx, top.module)
    top.module.verify()
    prefetched = [g for g in top.module.walk() if g.name == "tpu.Group" and "other_up_overlap_op" in g.attributes]
    assert len(prefetched) == int(bool({"b", "c"} & set(cut)) and bool({"d", "e"} & set(cut)))
    header, coeffs, prog = generate(top)
    inputs, outputs = _expected(cut)
    assert [t["name"] for t in header["inputs"]] == inputs
    assert [t["name"] for t in header["outputs"]] == outputs
    path = d / f"cut_{'_'.join(cut)}.bmodel"
    write_bmodel(path, header, coeffs, isa.encode(prog.records), [])
    got, _ = run_bmodel(read_bmodel(path), {name: want[name] for name in inputs})
    for name in outputs:
        assert_f32_close(got[name], want[name], name)
