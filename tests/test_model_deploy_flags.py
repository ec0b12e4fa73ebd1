"""TPU-MLIR's model_deploy flags (docs/tools.md, "model_deploy"): each implemented flag does what it
says, judged from the files it writes (the ops and types of the Tpu and final modules, which files
exist) against onnxruntime or the previous level; each refused one is one line naming the flag,
exit status 1, nothing written.

The model: Conv -> Relu -> AveragePool -> Relu (three Tpu ops: the Relu fuses into the Conv). The group
search (opt=2, 3) puts them in one layer group, opt=1 each in its own; the AveragePool is what
TPU-MLIR's F16 keeps in F32."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_support import run_main
from frontend_support import make_model
from onnx import helper as h

from tpudsl.cli import model_deploy
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.module import load_module


def written(path: Path) -> set[str]:
    return {p.name for p in path.iterdir()}


@pytest.fixture(scope="module")
def top(tmp_path_factory):
    d = tmp_path_factory.mktemp("flags")
    rng = np.random.default_rng(11)
    nodes = [h.make_node("Conv", ["data", "w"], ["conv"], pads=[1, 1, 1, 1]), h.make_node("Relu", ["conv"], ["act"]),
             h.make_node("AveragePool", ["act"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node("Relu", ["pool"], ["y"])]
    model = make_model(nodes, {"data": [1, 3, 8, 8]}, ["y"], {"w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32)})
    onnx.save(model, d / "m.onnx")
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    np.savez(d / "in.npz", data=x)
    r = run_main("model_transform", "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir",
                 "--test_input", "in.npz", cwd=d)
    assert r.returncode == 0, r.stderr
    import onnxruntime

    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return d, dict(zip(["y"], session.run(["y"], {"data": x}), strict=True))


def deploy(top_dir: Path, out: Path, *args: str):
    """model_deploy of the fixture's module into `out`, with its test input unless args say otherwise."""
    return run_main("model_deploy", "--mlir", top_dir / "m.mlir", "--processor", "bm1684x",
                    "--model", out / "m.bmodel", *args)


def pool_type(path: Path) -> str:
    """The element type of the average pool's result in a written Tpu module."""
    (pool,) = [o for o in load_module(path).main_func().walk() if o.name.startswith("tpu.") and loc_name(o) == "pool"]
    return str(pool.results[0].type.element_type)


@pytest.mark.parametrize("flags, pool", [((), "f32"), (("--ignore_f16_overflow",), "f16")])
def test_f16_keeps_average_pools_in_f32_unless_ignore_f16_overflow(top, tmp_path, flags, pool):
    """A TPU-MLIR command line from its docs (the sophgo cv180x sample: its chip here bm1684x)."""
    d, reference = top
    r = deploy(d, tmp_path, "--quantize", "F16", "--test_input", d / "m_in_f32.npz", "--test_reference",
               d / "m_top_outputs.npz", "--tolerance", "0.85,0.45", "--compare_all", "--debug", *flags)
    assert r.returncode == 0, r.stderr
    assert pool_type(tmp_path / "m_bm1684x_f16_tpu.mlir") == pool
    assert pool_type(tmp_path / "m_bm1684x_f16_final.mlir") == pool
    assert "bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's (F16, bit-exact)" in r.stderr
    # The Tpu interpreter's output, against onnxruntime: within F16's rounding of each op.
    got = np.load(tmp_path / "m_bm1684x_f16_tpu_outputs.npz")["y"]
    np.testing.assert_allclose(got, reference["y"], rtol=5e-3, atol=5e-3 * float(np.abs(reference["y"]).max()))


def test_skip_validation_writes_the_bmodel_without_running_it(top, tmp_path):
    d, _ = top
    r = deploy(d, tmp_path, "--test_input", d / "m_in_f32.npz", "--skip_validation")
    assert r.returncode == 0, r.stderr
    assert {"m.bmodel", "m_bm1684x_f32_final.mlir", "m_bm1684x_f32_tpu_outputs.npz"} <= written(tmp_path)
    assert "bmodel check" not in r.stderr
    assert "model_deploy: --skip_validation: " in r.stderr


def test_not_gen_bmodel_stops_after_the_tpu_module(top, tmp_path):
    d, _ = top
    r = deploy(d, tmp_path, "--test_input", d / "m_in_f32.npz", "--not_gen_bmodel")
    assert r.returncode == 0, r.stderr
    assert written(tmp_path) == {"m_bm1684x_f32_tpu.mlir", "m_bm1684x_f32_tpu_weights.npz"}
    assert "is not run (no Top, Tpu or bmodel check)" in r.stderr


def groups(path: Path) -> list[int]:
    """The number of Tpu compute ops in each layer group of a final module (an op outside a
    tpu.Group region is a group of one, sliced on its own)."""
    counts = []
    for o in load_module(path).main_func().body.block.ops:
        if o.name == "tpu.Group":
            counts.append(sum(i.name not in ("tpu.Load", "tpu.Store", "tpu.Yield") for i in o.regions[0].block.ops))
        elif o.name.startswith("tpu."):
            counts.append(1)
    return counts


@pytest.mark.parametrize("flags, several", [((), True), (("--opt", "3"), True), (("--opt", "1"), False),
                                            (("--opt", "2", "--disable_layer_group"), False)])
def test_opt_is_the_layer_group_strategy(top, tmp_path, flags, several):
    d, _ = top
    r = deploy(d, tmp_path, *flags)
    assert r.returncode == 0, r.stderr
    counts = groups(tmp_path / "m_bm1684x_f32_final.mlir")
    lowered = [o for o in load_module(tmp_path / "m_bm1684x_f32_tpu.mlir").main_func().walk() if o.name.startswith("tpu.")]
    assert len(lowered) == 3 and sum(counts) == 3, counts  # Conv (its Relu fused), Pool2D, Relu: each in a group
    assert (max(counts) > 1) == several, counts


def test_fazzy_match_compares_by_the_closest_tensor_of_each_shape(top, tmp_path):
    d, reference = top
    np.savez(tmp_path / "renamed.npz", other_name=reference["y"], noise=np.zeros_like(reference["y"]))
    r = deploy(d, tmp_path, "--test_input", d / "m_in_f32.npz", "--test_reference", tmp_path / "renamed.npz")
    assert (r.returncode, r.stderr.splitlines()[-1]) == (
        1, "error: Tpu check failed: no tensor of the Tpu module is in the reference")
    r = deploy(d, tmp_path, "--test_input", d / "m_in_f32.npz", "--test_reference", tmp_path / "renamed.npz",
               "--fazzy_match")
    assert r.returncode == 0, r.stderr
    assert "find max_cos:1.000000, max_euc:1.000000 for y (reference other_name)" in r.stdout
    np.savez(tmp_path / "wrong.npz", other_name=-reference["y"])
    r = deploy(d, tmp_path, "--test_input", d / "m_in_f32.npz", "--test_reference", tmp_path / "wrong.npz",
               "--fazzy_match")
    assert r.returncode == 1 and r.stderr.splitlines()[-1].startswith("error: Tpu check failed (--fazzy_match): ")


@pytest.mark.parametrize("mode, why", [
    ("INT4", "4-bit activations are not modelled (W4F16 and W4BF16 quantize the MatMul weights to 4 bits)"),
    ("F8E4M3", "float8 types are not modelled"), ("f8e5m2", "float8 types are not modelled")])
def test_quantize_modes_tpudsl_lacks_are_refused_by_name(tmp_path, mode, why):
    r = deploy(tmp_path, tmp_path, "--quantize", mode)
    assert (r.returncode, r.stderr.splitlines()) == (1, [
        f"error: model_deploy: --quantize {mode.upper()} is not supported: {why} (supported: "
        f"{', '.join(model_deploy.MODES)})"])
    assert written(tmp_path) == set()


@pytest.mark.parametrize("mode, message", [
    ("io_reloc", "addr_mode=io_reloc is not supported (only addr_mode=auto or addr_mode=basic or addr_mode=io_alone "
                 "or addr_mode=io_tag or addr_mode=io_tag_fuse)"),
    ("io_tag", "addr_mode=io_tag needs a chip with memory tags; bm1684x has none (chips with memory tags: bm1688, "
               "tiny)"),
    ("io_tag_fuse", "addr_mode=io_tag_fuse needs a chip with memory tags; bm1684x has none (chips with memory tags: "
                    "bm1688, tiny)"),
])
def test_addr_modes_tpudsl_lacks_are_refused_by_processor_assign(top, tmp_path, mode, message):
    """--addr_mode is processor-assign's option: a layout tpudsl lacks (io_reloc), or a tag mode on
    a chip without memory tags, is one line naming it, nothing written (io_alone is
    tests/test_io_alone.py's, the tag modes on bm1688 tests/test_io_tag.py's)."""
    d, _ = top
    r = deploy(d, tmp_path, "--addr_mode", mode)
    assert (r.returncode, r.stderr.splitlines()) == (1, [f"error: processor-assign: {message}"])
    assert written(tmp_path) == set()


def test_accepted_values_write_what_the_defaults_write(top, tmp_path):
    d, _ = top
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert deploy(d, tmp_path / "a").returncode == 0
    r = deploy(d, tmp_path / "b", "--addr_mode", "basic", "--cache_skip")
    assert r.returncode == 0, r.stderr
    for f in ("m.bmodel", "m_bm1684x_f32_final.mlir"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
