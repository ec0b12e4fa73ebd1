"""mlir_cut: the cut module computes the same tensors as the full one, and nothing more."""

import collections
import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import TensorType, f32

import tpudsl.dialects.top  # noqa: F401  (registers the op specs that `create` reads)
from tests.cli_support import run_main
from tests.models import random_inputs, stylegan2_block
from tpudsl.cli.mlir_cut import cut_module, trace_names
from tpudsl.dialects.opdef import create, loc_name
from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.interp import run_module
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import load_module, new_top_module, save_module

TOOLS = os.path.join(os.path.dirname(__file__), "..", "tools")


def script(name, *args):
    """The real tools/NAME.py in a new process: once per command (the entry point itself)."""
    return subprocess.run(
        [sys.executable, os.path.join(TOOLS, f"{name}.py"), *map(str, args)], capture_output=True, text=True, timeout=120
    )


def tool(name, *args):
    """The command's main in this process (tests/cli_support.py): the same status and streams."""
    return run_main(name, *args)


def toy_module():
    """x -> r1 = Relu -> e1 = Exp(r1); a1 = Add(r1, w); m1 = Mul(a1, e1, w2); return m1."""
    t = TensorType(f32, [1, 4])
    mod = new_top_module("toy", [t])
    block = mod.main_func().body.block

    def add(op):
        block.add_op(op)
        return op.results[0]

    def weight(name, value):
        op = mod.add_weight(name, np.full((1, 4), value, np.float32))
        op.detach()
        return add(op)

    x = add(create("top.Input", [block.args[0]], [t], loc="x"))
    r = add(create("top.Relu", [x], [t], loc="r1"))
    e = add(create("top.Exp", [r], [t], loc="e1"))
    a = add(create("top.Add", [r, weight("w", 1.0)], [t], loc="a1"))
    mod.set_outputs([add(create("top.Mul", [a, e, weight("w2", 2.0)], [t], loc="m1"))])
    return mod


def op_names(mod):
    return [loc_name(op) for op in mod.main_func().body.block.ops if op.name != "func.return"]


def run(mod, inputs, keep_all=False):
    return run_module(mod.module, mod.weights, inputs, keep_all=keep_all)


def test_cut_to_an_inner_tensor_drops_the_rest():
    mod = cut_module(toy_module(), ["a1"])
    assert op_names(mod) == ["x", "r1", "w", "a1"]
    assert set(mod.weights) == {"w"}
    x = np.array([[-1.0, 0.5, 2.0, -3.0]], np.float32)
    np.testing.assert_array_equal(run(mod, {"x": x})["a1"], np.maximum(x, 0) + 1)


def test_cut_with_a_new_input_replaces_its_producer():
    mod = cut_module(toy_module(), ["m1", "e1"], ["r1"])
    func = mod.main_func()
    assert [str(t) for t in func.function_type.inputs.data] == ["tensor<1x4xf32>"]  # x is gone
    assert "x" not in op_names(mod) and op_names(mod)[0] == "r1"
    r = np.array([[0.0, 1.0, 2.0, 3.0]], np.float32)  # any values: no Relu runs on them any more
    out = run(mod, {"r1": -r})
    np.testing.assert_allclose(out["m1"], (-r + 1) * np.exp(-r) * 2, rtol=1e-6)
    np.testing.assert_allclose(out["e1"], np.exp(-r), rtol=1e-6)


def test_naming_an_existing_input_keeps_it():
    mod = cut_module(toy_module(), ["a1"], ["x"])
    assert op_names(mod) == ["x", "r1", "w", "a1"]
    assert len(mod.main_func().body.block.args) == 1


def test_unknown_names_are_listed_in_one_error():
    with pytest.raises(TpudslError, match=r"unknown tensor names: output zz, yy; input q$"):
        cut_module(toy_module(), ["m1", "zz", "yy"], ["q"])
    with pytest.raises(TpudslError, match="no output names"):
        cut_module(toy_module(), [])


@pytest.fixture(scope="module")
def stylegan_files(tmp_path_factory):
    """The StyleGAN2 block as .mlir + npz, its inputs, and every tensor of a full run."""
    d = tmp_path_factory.mktemp("cut")
    model = stylegan2_block()
    inputs = random_inputs(model, seed=7)
    save_module(convert_onnx(model, "sg"), d / "sg.mlir")
    np.savez(d / "in.npz", **inputs)
    proc = tool("model_runner", "--input", d / "in.npz", "--model", d / "sg.mlir", "--output", d / "all.npz", "--dump_all_tensors")
    assert proc.returncode == 0, proc.stderr
    with np.load(d / "all.npz") as f:
        return d, {k: f[k] for k in f.files}


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_cut_as_in_the_draggan_debugging_session(stylegan_files):
    # As in the DragGAN post: the conv with a computed filter, fed by its data input and filter.
    d, full = stylegan_files
    weights_before = sha(d / "sg_top_f32_all_weight.npz")
    cut = d / "conv1_cut.mlir"
    proc = script("mlir_cut", "--mlir", d / "sg.mlir", "--output_names", "conv1.conv,features",
                "--input_names", "conv0,conv1.filter", "-o", cut)
    assert proc.returncode == 0, proc.stderr
    assert sha(d / "sg_top_f32_all_weight.npz") == weights_before  # the full model still works
    mod = load_module(cut)
    # Only the constants of the kept ops remain, in the cut's own npz.
    assert {"features.noise_const", "features.bias"} <= set(mod.weights)
    assert all(name.startswith("features.") for name in mod.weights)
    with np.load(d / "conv1_cut_weight.npz") as npz:
        assert sorted(npz.files) == sorted(mod.weights)
    assert not any(op.name == "top.ConvTranspose" or loc_name(op).startswith("torgb") for op in mod.module.walk())
    np.savez(d / "cut_in.npz", **{"conv0": full["conv0"], "conv1.filter": full["conv1.filter"]})
    proc = tool("model_runner", "--input", d / "cut_in.npz", "--model", cut, "--output", d / "cut_out.npz")
    assert proc.returncode == 0, proc.stderr
    with np.load(d / "cut_out.npz") as got:
        assert got.files == ["conv1.conv", "features"]
        for name in got.files:
            np.testing.assert_array_equal(got[name], full[name])


def test_cut_outputs_only_matches_the_full_run(stylegan_files, tmp_path):
    d, full = stylegan_files
    cut = tmp_path / "upsample.mlir"
    assert tool("mlir_cut", "--mlir", d / "sg.mlir", "--output_names", "conv0.up,torgb.filter", "-o", cut).returncode == 0
    mod = load_module(cut)
    assert [str(t) for t in mod.main_func().function_type.inputs.data] == [
        "tensor<1x8x8x8xf32>", "tensor<1x16xf32>"
    ]
    out = run(mod, {"x": full["x"], "ws": full["ws"]})
    np.testing.assert_array_equal(out["conv0.up"], full["conv0.up"])
    np.testing.assert_array_equal(out["torgb.filter"], full["torgb.filter"])
    assert (tmp_path / "upsample_weight.npz").exists()


def test_cli_errors(stylegan_files, tmp_path):
    d, _ = stylegan_files
    out = tmp_path / "cut.mlir"
    proc = tool("mlir_cut", "--mlir", d / "sg.mlir", "--output_names", "conv0.up,nope", "--input_names", "gone", "-o", out)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "error: unknown tensor names: output nope; input gone"
    assert not out.exists()
    proc = tool("mlir_cut", "--mlir", d / "sg.mlir", "--output_names", "img", "-o", d / "sg.mlir")
    assert proc.returncode == 1 and "overwrite the input" in proc.stderr
    proc = tool("mlir_cut", "--mlir", tmp_path / "none.mlir", "--output_names", "img")
    assert proc.returncode == 1 and "No such file" in proc.stderr and len(proc.stderr.splitlines()) == 1


# TPU-MLIR's backtrace (python/tools/mlir_cut.py) worked by hand on the toy module: a stack starts
# with the named op; each pop pushes the op's producers (bt: weights skipped) or users (ft) and
# counts them; at `num` counted, the ops left on the stack are the cut's inputs (bt) or outputs (ft).
#   bt m1: pop m1 -> [a1, e1] (2); pop e1 -> [a1, r1] (3); pop r1 -> [a1, x] (4); pop x -> [a1] (4);
#          pop a1 -> [r1] (5); pop r1 -> [x] (6); pop x -> [] at 6: the inputs are reached.
#   ft r1: pop r1 -> [e1, a1] (2, users in block order); pop a1 -> [e1, m1] (3); pop m1 -> [e1] (3);
#          pop e1 -> [m1] (4); pop m1 -> [] at 4: the outputs are reached.
TRACES = [("bt", "m1", 1, ["a1", "e1"]), ("bt", "m1", 2, ["a1", "e1"]), ("bt", "m1", 3, ["a1", "r1"]),
          ("bt", "m1", 5, ["r1"]), ("ft", "x", 1, ["r1"]), ("ft", "r1", 2, ["e1", "a1"]),
          ("ft", "r1", 3, ["e1", "m1"]), ("ft", "r1", 4, ["m1"])]


@pytest.mark.parametrize("mode, start, num, expected", TRACES)
def test_trace_finds_tpu_mlirs_names_and_the_cut_reproduces_the_full_run(mode, start, num, expected):
    assert trace_names(toy_module(), [start], num, mode) == expected
    x = np.array([[-1.0, 0.5, 2.0, -3.0]], np.float32)
    full = run(toy_module(), {"x": x}, keep_all=True)
    outputs, inputs = ([start], expected) if mode == "bt" else (expected, [start])
    cut = cut_module(toy_module(), outputs, inputs)
    got = run(cut, {name: full[name] for name in named_inputs(cut)})
    assert list(got) == outputs
    for name in outputs:
        np.testing.assert_array_equal(got[name], full[name])


def named_inputs(mod):
    return [loc_name(op) for op in mod.main_func().body.block.ops if op.name == "top.Input"]


def doubled_module():
    """x -> r1 = Relu -> y = Add(r1, r1): one producer read twice."""
    t = TensorType(f32, [1, 4])
    mod = new_top_module("doubled", [t])
    block = mod.main_func().body.block
    x = create("top.Input", [block.args[0]], [t], loc="x")
    r = create("top.Relu", [x.results[0]], [t], loc="r1")
    y = create("top.Add", [r.results[0], r.results[0]], [t], loc="y")
    block.add_ops([x, r, y])
    mod.set_outputs([y.results[0]])
    return mod


def test_trace_counts_a_producer_per_operand_and_a_user_once():
    # TPU-MLIR's mlir_ast: y's producers are [r1, r1] (2: num 2 stops there, the input is r1);
    # r1's users are [y] (a user reading one value twice is recorded once): 1, then y has none.
    assert trace_names(doubled_module(), ["y"], 2, "bt") == ["r1"]
    with pytest.raises(TpudslError, match="reaches the model's outputs after 1 of 2 ops"):
        trace_names(doubled_module(), ["r1"], 2, "ft")


def test_a_trace_past_the_models_ends_is_an_error():
    with pytest.raises(TpudslError, match=r"^error: --mode bt --num 7: the trace from 'm1' reaches the model's inputs after 6 of 7 ops$"):
        trace_names(toy_module(), ["m1"], 7, "bt")
    with pytest.raises(TpudslError, match=r"^error: --mode ft --num 5: the trace from 'r1' reaches the model's outputs after 4 of 5 ops$"):
        trace_names(toy_module(), ["r1"], 5, "ft")
    with pytest.raises(TpudslError, match=r"^error: unknown tensor names: input zz$"):
        trace_names(toy_module(), ["zz"], 1, "ft")


@pytest.mark.parametrize("flags, inputs, outputs", [
    # img = Add(torgb.conv, bias): torgb.conv, then its data input (features) and filter (torgb.filter),
    # then torgb.filter's producer (torgb.modulate): 4 ops back.
    (["--mode", "bt", "--num", "4", "--output_names", "img"], ["features", "torgb.modulate"], ["img"]),
    # x -> conv0.up -> conv0.blur -> conv0.noise; the filter's chain keeps ws an input.
    (["--mode", "ft", "--num", "3", "--input_names", "x"], ["x", "ws"], ["conv0.noise"]),
])
def test_cli_modes_bt_and_ft_on_model_runner(stylegan_files, tmp_path, flags, inputs, outputs):
    d, full = stylegan_files
    cut = tmp_path / "cut.mlir"
    proc = tool("mlir_cut", "--mlir", d / "sg.mlir", *flags, "--ref_data", d / "all.npz", "-o", cut)
    assert proc.returncode == 0, proc.stderr
    mod = load_module(cut)
    assert sorted(named_inputs(mod)) == sorted(inputs)
    # fake_data.npz holds the full run's values of the cut's inputs, so the cut computes what it did.
    proc = tool("model_runner", "--input", tmp_path / "fake_data.npz", "--model", cut, "--output", tmp_path / "out.npz")
    assert proc.returncode == 0, proc.stderr
    with np.load(tmp_path / "out.npz") as got:
        assert got.files == outputs
        for name in outputs:
            np.testing.assert_array_equal(got[name], full[name])


def test_cli_trace_past_the_outputs_writes_nothing(stylegan_files, tmp_path):
    d, _ = stylegan_files
    out = tmp_path / "cut.mlir"
    proc = tool("mlir_cut", "--mlir", d / "sg.mlir", "--mode", "ft", "--num", "9", "--input_names", "torgb.conv", "-o", out)
    assert (proc.returncode, proc.stderr.splitlines()) == (1, [
        "error: --mode ft --num 9: the trace from 'torgb.conv' reaches the model's outputs after 1 of 9 ops"])
    assert list(tmp_path.iterdir()) == []


def test_fake_data_without_reference_values(stylegan_files, tmp_path):
    """Inputs --ref_data lacks get uniform [0, 1) floats of the input's shape (TPU-MLIR's
    np.random.random), the others their reference values; the cut runs on them."""
    d, full = stylegan_files
    np.savez(tmp_path / "ref.npz", **{"conv1.filter": full["conv1.filter"]})
    cut = tmp_path / "cut.mlir"
    proc = tool("mlir_cut", "--mlir", d / "sg.mlir", "--output_names", "conv1.conv", "--input_names",
                "conv0,conv1.filter", "--ref_data", tmp_path / "ref.npz", "-o", cut)
    assert proc.returncode == 0, proc.stderr
    with np.load(tmp_path / "fake_data.npz") as fake:
        assert sorted(fake.files) == ["conv0", "conv1.filter"]
        np.testing.assert_array_equal(fake["conv1.filter"], full["conv1.filter"])
        made = fake["conv0"]
    assert (made.shape, made.dtype) == (full["conv0"].shape, np.float32)
    assert 0 <= made.min() and made.max() < 1 and made.std() > 0.2
    assert tool("model_runner", "--input", tmp_path / "fake_data.npz", "--model", cut,
                "--output", tmp_path / "out.npz").returncode == 0


def test_reference_values_of_another_shape_are_refused(stylegan_files, tmp_path):
    d, full = stylegan_files
    np.savez(tmp_path / "ref.npz", conv0=full["conv0"][:, :3])
    proc = tool("mlir_cut", "--mlir", d / "sg.mlir", "--output_names", "conv1.conv", "--input_names",
                "conv0,conv1.filter", "--ref_data", tmp_path / "ref.npz", "-o", tmp_path / "cut.mlir")
    assert (proc.returncode, proc.stderr.splitlines()) == (1, [
        "error: --ref_data: 'conv0' is float32[1, 3, 16, 16], the cut's input takes float32[1, 8, 16, 16]"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ref.npz"]


@st.composite
def dags(draw):
    """A random Top module of element-wise ops on 1x4 tensors: each op reads one or two earlier values
    (inputs, ops, or a weight); the values nobody reads are returned."""
    t = TensorType(f32, [1, 4])
    n_inputs = draw(st.integers(1, 2))
    mod = new_top_module("dag", [t] * n_inputs)
    block = mod.main_func().body.block
    values = []
    for i, arg in enumerate(block.args):
        block.add_op(op := create("top.Input", [arg], [t], loc=f"in{i}"))
        values.append(op.results[0])
    readers = {v: 0 for v in values}
    for i in range(draw(st.integers(3, 9))):
        kind = draw(st.sampled_from(["top.Relu", "top.Sigmoid", "top.Add", "top.Add", "top.Mul"]))
        picks = [draw(st.sampled_from(values)) for _ in range(1 if kind in ("top.Relu", "top.Sigmoid") else 2)]
        if kind == "top.Mul" and draw(st.booleans()):
            weight = mod.add_weight(f"w{i}", np.full((1, 4), 0.5 + i, np.float32))
            weight.detach()
            block.add_op(weight)
            picks[1] = weight.results[0]
        block.add_op(op := create(kind, picks, [t], loc=f"v{i}"))
        for v in picks:
            readers[v] = readers.get(v, 0) + 1
        values.append(op.results[0])
        readers[op.results[0]] = 0
    mod.set_outputs([v for v in values if readers[v] == 0])
    return mod


def test_every_traced_cut_computes_what_the_full_model_did():
    """--mode bt/ft on random graphs: whatever the trace finds, the cut fed the full run's values of
    its inputs gives the full run's values of its outputs, bit for bit (a trace that finds names that
    do not separate the outputs from the rest fails to cut or computes other values). The examples
    must often cut, find several inputs (bt) and several outputs (ft), and run out of ops."""
    seen = collections.Counter()

    @settings(max_examples=60)
    @given(dags(), st.sampled_from(["bt", "ft"]), st.integers(1, 6), st.data())
    def check(mod, mode, num, data):
        rng = np.random.default_rng(0)
        feed = {name: rng.standard_normal((1, 4)).astype(np.float32) for name in named_inputs(mod)}
        full = run(mod, feed, keep_all=True)
        computed = [loc_name(op) for op in mod.main_func().body.block.ops
                    if op.name not in ("top.Input", "top.Weight", "func.return")]
        start = data.draw(st.sampled_from(computed if mode == "bt" else named_inputs(mod) + computed[:-1]))
        try:
            found = trace_names(mod, [start], num, mode)
        except TpudslError as e:
            assert "reaches the model's" in str(e)
            event("the trace runs out of ops")
            seen["ran out"] += 1
            return
        outputs, inputs = ([start], found) if mode == "bt" else (found, [start])
        cut = cut_module(mod, outputs, inputs)
        got = run(cut, {name: full[name] for name in named_inputs(cut)})
        assert list(got) == outputs
        for name in outputs:
            np.testing.assert_array_equal(got[name], full[name])
        if len(found) > 1:
            event(f"{mode}: the trace finds several names")
            seen[f"{mode} several"] += 1
        seen["cut"] += 1

    check()
    assert seen["cut"] >= 20 and seen["bt several"] >= 3 and seen["ft several"] >= 3 and seen["ran out"] >= 3, seen
