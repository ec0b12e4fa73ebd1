"""model_tool --combine / --extract, model_runner and bmodel_checker on a combined .bmodel
(docs/tools.md): a small conv net compiled for the tiny chip at batch 1 and batch 2, and a second
network. The reference is the previous level, the separate files: the combined file run with each
batch's inputs gives what that batch's own file gives, byte for byte; extract gives back the files
that went in."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr

from tests.backend_support import compile_for, lowered
from tests.test_backend_cmodel import Graph
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.cli import bmodel_checker, model_runner, model_tool
from tpudsl.interp.module_interpreter import run_module


def conv_net(batch: int, seed: int):
    g = Graph(np.random.default_rng(seed))  # the same seed: the same weights at every batch
    conv = g.node("Conv", ["x", g.const((4, 3, 3, 3)), g.const((4,))], (batch, 4, 6, 6), kernel_shape=[3, 3],
                  pads=[1, 1, 1, 1])
    g.node("Relu", [conv], (batch, 4, 6, 6))
    return g.model({"x": (batch, 3, 6, 6)}, list(g.shapes)[-1])


def run(main, argv, capsys):
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return info.value.code, out, err


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """m at batch 1 and 2 (one network, two stages), n (another network, other weights), and inputs."""
    d = tmp_path_factory.mktemp("combine")
    for name, batch, seed in (("m1", 1, 0), ("m2", 2, 0), ("n", 1, 1)):
        top = lowered(conv_net(batch, seed))
        top.module.attributes["module.name"] = StringAttr(name[0])
        compile_for(top, "tiny", str(d / f"{name}.bmodel"))
    rng = np.random.default_rng(5)
    for batch in (1, 2, 3):
        np.savez(d / f"in{batch}.npz", x=rng.standard_normal((batch, 3, 6, 6)).astype(np.float32))
    return d


def outputs(d, model, inputs, capsys, *flags):
    out = d / "out.npz"
    out.unlink(missing_ok=True)
    status, _, err = run(model_runner.main, ["--input", d / inputs, "--model", d / model, "--output", out, *flags],
                         capsys)
    assert (status, err) == (0, "")
    with np.load(out) as f:
        return {k: f[k] for k in f}


def same(got: dict, want: dict) -> bool:
    return got.keys() == want.keys() and all(
        got[k].dtype == want[k].dtype and got[k].tobytes() == want[k].tobytes() for k in want)


def files(d) -> dict:
    return {p.name: p.read_bytes() for p in d.iterdir()}


def test_combined_runs_the_stage_of_the_inputs_shapes(parts, capsys):
    d = parts
    status, out, err = run(model_tool.main, ["--combine", d / "m1.bmodel", d / "n.bmodel", d / "m2.bmodel",
                                             "-o", d / "c.bmodel"], capsys)
    assert (status, err) == (0, "") and out == f"combined to {d / 'c.bmodel'}: network m (2 stages), network n (1 stage)\n"
    for batch, single in ((1, "m1"), (2, "m2")):
        want = outputs(d, f"{single}.bmodel", f"in{batch}.npz", capsys)
        assert same(outputs(d, "c.bmodel", f"in{batch}.npz", capsys), want), batch
    assert same(outputs(d, "c.bmodel", "in1.npz", capsys, "--net_name", "n"), outputs(d, "n.bmodel", "in1.npz", capsys))
    assert not same(outputs(d, "n.bmodel", "in1.npz", capsys), outputs(d, "m1.bmodel", "in1.npz", capsys))

    status, out, _ = run(model_tool.main, ["--info", d / "c.bmodel"], capsys)
    alone = {name: run(model_tool.main, ["--info", d / f"{name}.bmodel"], capsys)[1].splitlines()
             for name in ("m1", "m2", "n")}
    bar, rule = "=" * 42, "-" * 12
    assert status == 0 and out.splitlines() == [
        bar, "net 0: [m], 2 stages", rule, "stage 0:", *alone["m1"], rule, "stage 1:", *alone["m2"],
        bar, "net 1: [n], 1 stage", rule, "stage 0:", *alone["n"]]
    assert run(model_tool.main, ["--chip", d / "c.bmodel"], capsys)[1:] == ("tiny\n", "")
    assert run(model_tool.main, ["--is_dynamic", d / "c.bmodel"], capsys)[1:] == ("false\n", "")


def test_bmodel_checker_checks_the_stage_of_the_references_inputs(parts, capsys, tmp_path):
    """bmodel_checker on one network's two stages combined checks the stage whose input shapes are
    the reference's (the Tpu interpreter's dump of that batch): every tensor passes, the same lines as
    on that stage's own file; no stage of the reference's shapes, or a file of two networks (which
    one the reference is of is no guess), is one error naming it."""
    d = parts
    for names, out in ((("m1", "m2"), "c"), (("m1", "n"), "mn")):
        combine = ["--combine", *(d / f"{n}.bmodel" for n in names), "-o", tmp_path / f"{out}.bmodel"]
        assert run(model_tool.main, combine, capsys)[0] == 0
    for batch, single in ((1, "m1"), (2, "m2")):
        top = lowered(conv_net(batch, 0))
        with np.load(d / f"in{batch}.npz") as f:
            ref = run_module(top.module, top.weights, {"x": f["x"]}, keep_all=True)
        np.savez(tmp_path / "ref.npz", **ref)
        status, out, err = run(bmodel_checker.main, [tmp_path / "c.bmodel", tmp_path / "ref.npz"], capsys)
        assert (status, err) == (0, "") and out.splitlines()[-1] == "bmodel_checker PASSED.", out
        assert f"{len(ref) - 1} tensors checked (F32: 1e-5 relative): {len(ref) - 1} passed, 0 failed" in out, out
        assert out == run(bmodel_checker.main, [d / f"{single}.bmodel", tmp_path / "ref.npz"], capsys)[1]
    np.savez(tmp_path / "ref3.npz", **dict(ref, x=np.load(d / "in3.npz")["x"]))
    for model, ref_file, message in (
            ("c", "ref3.npz", "error: no stage of network 'm' takes these inputs (x 3x3x6x6)"),
            ("mn", "ref.npz", "error: holds 2 networks (m, n); bmodel_checker checks a bmodel of one (model_tool "
                              "--extract gives each stage's file)")):
        status, out, err = run(bmodel_checker.main, [tmp_path / f"{model}.bmodel", tmp_path / ref_file], capsys)
        assert status == 1 and err.startswith(f"{tmp_path / f'{model}.bmodel'}: {message}"), err
        assert len(err.splitlines()) == 1


def test_extract_gives_back_the_files_combined(parts, capsys, tmp_path, monkeypatch):
    d = parts
    assert run(model_tool.main, ["--combine", d / "m1.bmodel", d / "m2.bmodel", d / "n.bmodel", "-o",
                                 tmp_path / "c.bmodel"], capsys)[0] == 0
    monkeypatch.chdir(tmp_path)
    status, out, err = run(model_tool.main, ["--extract", "c.bmodel"], capsys)
    assert (status, err) == (0, "")
    assert out.splitlines() == ["bm_net0_stage0.bmodel: network m", "bm_net0_stage1.bmodel: network m",
                                "bm_net1_stage0.bmodel: network n"]
    for name, original in (("bm_net0_stage0", "m1"), ("bm_net0_stage1", "m2"), ("bm_net1_stage0", "n")):
        got, want = read_bmodel(tmp_path / f"{name}.bmodel"), read_bmodel(d / f"{original}.bmodel")
        assert (got.header, got.coeffs, got.commands, got.debug) == (want.header, want.coeffs, want.commands, want.debug)
        assert (tmp_path / f"{name}.bmodel").read_bytes() == (d / f"{original}.bmodel").read_bytes()
    np.savez(tmp_path / "in2.npz", **np.load(d / "in2.npz"))
    assert same(outputs(tmp_path, "bm_net0_stage1.bmodel", "in2.npz", capsys), outputs(d, "m2.bmodel", "in2.npz", capsys))


def test_a_network_has_one_address_mode(parts, capsys, tmp_path):
    """TPU-MLIR's bmodel holds one addr_mode per network: an io_alone stage of a basic network is one
    error naming both files and both modes, and writes nothing; another network may be io_alone (each
    stage runs in its own memory: the combined file gives what its own file gives)."""
    d = parts
    for name, network, batch in (("m2_io", "m", 2), ("n_io", "n", 1)):
        top = lowered(conv_net(batch, 1))
        top.module.attributes["module.name"] = StringAttr(network)
        top.module.attributes["module.addr_mode"] = StringAttr("io_alone")
        assert "io_addr" in compile_for(top, "tiny", str(tmp_path / f"{name}.bmodel")).header
    status, out, err = run(model_tool.main, ["--combine", d / "m1.bmodel", tmp_path / "m2_io.bmodel",
                                             "-o", tmp_path / "x.bmodel"], capsys)
    assert (status, out, err) == (1, "", f"error: network 'm': {d / 'm1.bmodel'} and {tmp_path / 'm2_io.bmodel'} "
                                         "cannot be stages of one network: addr_mode basic vs io_alone\n")
    assert not (tmp_path / "x.bmodel").exists()
    assert run(model_tool.main, ["--combine", d / "m1.bmodel", tmp_path / "n_io.bmodel", "-o", tmp_path / "c.bmodel"],
               capsys)[0] == 0
    assert same(outputs(tmp_path, "c.bmodel", d / "in1.npz", capsys, "--net_name", "n"),
                outputs(tmp_path, "n_io.bmodel", d / "in1.npz", capsys))
    assert same(outputs(tmp_path, "c.bmodel", d / "in1.npz", capsys), outputs(d, "m1.bmodel", "in1.npz", capsys))


def test_clashes_and_damage_are_one_error_and_write_nothing(parts, capsys, tmp_path):
    d = parts
    combined = tmp_path / "c.bmodel"
    assert run(model_tool.main, ["--combine", d / "m1.bmodel", d / "m2.bmodel", "-o", combined], capsys)[0] == 0
    before = files(tmp_path)
    checks = [
        (model_tool.main, ["--combine", d / "m1.bmodel", d / "m1.bmodel", "-o", tmp_path / "x.bmodel"],
         f"error: network 'm': {d / 'm1.bmodel'} and {d / 'm1.bmodel'} cannot be stages of one network: "
         "both take x 1x3x6x6"),
        (model_tool.main, ["--combine", d / "m1.bmodel", combined, "-o", tmp_path / "x.bmodel"],
         f"error: network 'm': {d / 'm1.bmodel'} and {combined} (network 'm' stage 0) cannot be stages of one "
         "network: both take x 1x3x6x6"),
        (model_tool.main, ["--combine", d / "m1.bmodel", combined, "-o", combined],
         f"error: -o '{combined}' would overwrite the input {combined}; choose another name"),
        (model_runner.main, ["--input", d / "in3.npz", "--model", combined, "--output", tmp_path / "o.npz"],
         f"{combined}: error: no stage of network 'm' takes these inputs (x 3x3x6x6); its stages take stage 0: "
         "x 1x3x6x6; stage 1: x 2x3x6x6"),
        (model_runner.main, ["--input", d / "in1.npz", "--model", combined, "--output", tmp_path / "o.npz",
                             "--net_name", "n"], f"{combined}: error: no network 'n' in the bmodel (it holds m)"),
        (model_tool.main, ["--timeline", combined, "-o", tmp_path / "x.svg"],
         f"{combined}: error: a combined bmodel (several networks or stages, version 2) where one stage was "
         "expected: take it out with model_tool --extract"),
    ]
    for main, argv, message in checks:
        status, out, err = run(main, argv, capsys)
        assert (status, out, err) == (1, "", message + "\n"), argv
    assert files(tmp_path) == before

    data = bytearray(combined.read_bytes())
    image = read_bmodel(d / "m2.bmodel")
    at = data.rindex(image.coeffs)  # a byte of stage 1's coefficients
    data[at + 5] ^= 1
    (tmp_path / "bad.bmodel").write_bytes(bytes(data))
    for main, argv in ((model_tool.main, ["--info", tmp_path / "bad.bmodel"]),
                       (model_runner.main, ["--input", d / "in1.npz", "--model", tmp_path / "bad.bmodel", "--output",
                                            tmp_path / "o.npz"]),
                       (model_tool.main, ["--combine", tmp_path / "bad.bmodel", "-o", tmp_path / "x.bmodel"])):
        status, out, err = run(main, argv, capsys)
        assert (status, out, err) == (1, "", f"{tmp_path / 'bad.bmodel'}: error: network 'm' stage 1: corrupt bmodel: "
                                              "checksum mismatch in the coeffs section\n"), argv
    assert files(tmp_path) == {**before, "bad.bmodel": bytes(data)}


def test_other_tpu_mlir_options_are_refused_by_name(capsys, tmp_path):
    for option in model_tool.REFUSED:
        for before in ([], ["-o", tmp_path / "x.svg"]):  # not only as the first argument
            status, out, err = run(model_tool.main, [*before, option, tmp_path / "m.bmodel"], capsys)
            assert (status, out) == (1, "") and err == (
                f"error: model_tool: {option} is not supported: {model_tool.REFUSED[option]} (supported: --info, "
                "--timeline, --combine, --extract, --chip, --is_dynamic)\n")
    assert list(tmp_path.iterdir()) == []


def test_flags_that_do_not_fit(parts, capsys, tmp_path):
    d = parts
    assert run(model_tool.main, ["--info", d / "m1.bmodel", "--all"], capsys)[1] == \
        run(model_tool.main, ["--info", d / "m1.bmodel"], capsys)[1]  # TPU-MLIR's hidden networks: tpudsl has none
    for argv, message in ((["--info", d / "m1.bmodel", "-o", tmp_path / "x"], "-o goes with --timeline and --combine"),
                          (["--extract", d / "m1.bmodel", "--all"], "--all goes with --info")):
        assert run(model_tool.main, argv, capsys) == (1, "", f"error: {message} (see model_tool --help)\n")
    with pytest.raises(model_runner.TpudslError, match="--net_name picks a network of a .bmodel"):
        model_runner.model_inference({}, tmp_path / "m.mlir", net_name="n")
    assert list(tmp_path.iterdir()) == []


def test_stages_of_different_core_counts_each_run_with_their_own(tmp_path, capsys):
    """A stage for two cores (bm1688 --num_core 2) and one for one core combine (each stage's header
    says its cores; TPU-MLIR's runtime runs each stage's command groups): the combined file run at each
    batch gives that batch's own file's outputs byte for byte, the two-core stage's run really
    dealt to two cores, and --info shows the cores line of that stage only."""
    from xdsl.dialects.builtin import IntegerAttr, i64

    for name, batch, cores in (("two", 1, 2), ("one", 2, 1)):
        top = lowered(conv_net(batch, 0), chip="bm1688")
        top.module.attributes["module.cores"] = IntegerAttr(cores, i64)
        compile_for(top, "bm1688", str(tmp_path / f"{name}.bmodel"))
    assert read_bmodel(tmp_path / "two.bmodel").header["core_num"] == 2
    assert "core_num" not in read_bmodel(tmp_path / "one.bmodel").header
    rng = np.random.default_rng(6)
    for batch in (1, 2):
        np.savez(tmp_path / f"in{batch}.npz", x=rng.standard_normal((batch, 3, 6, 6)).astype(np.float32))
    status, _, err = run(model_tool.main, ["--combine", tmp_path / "two.bmodel", tmp_path / "one.bmodel", "-o",
                                           tmp_path / "c.bmodel"], capsys)
    assert (status, err) == (0, "")
    for batch, single in ((1, "two"), (2, "one")):
        assert same(outputs(tmp_path, "c.bmodel", f"in{batch}.npz", capsys),
                    outputs(tmp_path, f"{single}.bmodel", f"in{batch}.npz", capsys)), batch
    _, out, _ = run(model_tool.main, ["--info", tmp_path / "c.bmodel"], capsys)
    assert [line.startswith("cores: 2, ") for line in out.splitlines() if line.startswith("cores")] == [True]
    status, out, _ = run(model_runner.main, ["--input", tmp_path / "in1.npz", "--model", tmp_path / "c.bmodel",
                                             "--output", tmp_path / "p.npz", "--profile"], capsys)
    assert status == 0 and "core 1 busy (overlapped)" in out
