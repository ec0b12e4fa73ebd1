"""model_deploy past the Tpu check: PREFIX_final.mlir (addresses and slices), the .bmodel, and the
third comparison (cmodel vs Tpu interpreter), which fails when the cmodel computes something else."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from tests.backend_support import secs_of, transformed_conv_pool
from tests.test_backend_cmodel import Graph
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.cmodel import arith
from tpudsl.cli import model_deploy, model_transform
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import load_module


@pytest.fixture(scope="module")
def small_cnn(tmp_path_factory):
    d = tmp_path_factory.mktemp("cnn")

    def head(g, p, shape):  # concat, global average pool, Gemm
        cat = g.node("Concat", [p, p], (2, 8, 48, 12), axis=1)
        flat = g.node("Flatten", [g.node("AveragePool", [cat], (2, 8, 1, 1), kernel_shape=[48, 12])], (2, 8))
        g.node("Gemm", [flat, g.const((5, 8)), g.const((5,))], (2, 5), transB=1)

    transformed_conv_pool(d, "cnn", (2, 3, 96, 24), seed=5, tail=head)
    return d


def deploy(d, mode: str) -> None:
    model_deploy.run(["--mlir", str(d / "cnn.mlir"), "--quantize", mode, "--processor", "tiny",
                      "--model", str(d / f"cnn_{mode}.bmodel"), "--test_input", str(d / "cnn_in_f32.npz")])


@pytest.mark.parametrize("mode", ["F32", "F16", "BF16"])
def test_deploy_writes_final_mlir_and_bmodel_and_checks_it(small_cnn, capsys, mode):
    deploy(small_cnn, mode)
    err = capsys.readouterr().err
    assert "bmodel check passed: 1 outputs" in err, err
    assert ("1e-5 relative" if mode == "F32" else f"({mode}, bit-exact)") in err, err
    final = load_module(small_cnn / f"cnn_tiny_{mode.lower()}_final.mlir")
    assert final.module.attributes["module.state"].data == "TPU_ADDRESSED"
    conv = next(op for op in final.module.walk() if op.name == "tpu.Conv2D")
    assert secs_of(conv)[0] * secs_of(conv)[1] > 1  # sliced on tiny (alone or in its layer group)
    packed = {"F32": 1, "F16": 8, "BF16": 8}[mode]  # --weight-reorder's P on tiny (eu_bytes 16 / 2 for 16-bit)
    assert conv.operands[1].type.get_shape() == (1, 4, -(-3 // packed), 9 * packed)
    header = read_bmodel(small_cnn / f"cnn_{mode}.bmodel").header
    assert header["chip"] == "tiny" and header["mode"] == mode


def test_third_comparison_fails_when_the_cmodel_is_wrong(small_cnn, monkeypatch):
    real = arith.conv
    monkeypatch.setattr(arith, "conv", lambda *a: real(*a) + np.float32(1e-3))
    with pytest.raises(TpudslError, match=r"bmodel check failed at tensor '\w+': max difference"):
        deploy(small_cnn, "F32")


def test_f16_third_comparison_fails_on_one_ulp(small_cnn, monkeypatch):
    """F16 is compared bit for bit: the cmodel's conv one float16 ulp up everywhere fails it."""
    real = arith.conv

    def one_ulp_off(*a):
        y = real(*a)
        return np.nextafter(y, np.array(np.inf, y.dtype))

    monkeypatch.setattr(arith, "conv", one_ulp_off)
    with pytest.raises(TpudslError, match=r"bmodel check failed at tensor '\w+': \d+ of \d+ values differ from the "
                                          r"Tpu interpreter \(F16 must be bit-exact\)"):
        deploy(small_cnn, "F16")


def test_an_op_without_instructions_stops_after_the_tpu_check_naming_it(tmp_path, capsys, monkeypatch):
    """Every Tpu op the lowering produces has records now (docs/backend.md's "Coverage" table is
    empty), so the refusal is exercised with LRN's records withdrawn from coverage.has_records: the
    path model_deploy takes for an op a future lowering rule adds before its records."""
    from tpudsl.backend import coverage

    real = coverage.has_records
    monkeypatch.setattr(coverage, "has_records", lambda op, form, mode: op != "tpu.LRN" and real(op, form, mode))
    g = Graph(np.random.default_rng(7))
    g.shapes["x"] = (1, 4, 8, 8)
    g.node("LRN", ["x"], (1, 4, 8, 8), size=3)
    onnx.save(g.model({"x": (1, 4, 8, 8)}, "t0_lrn"), tmp_path / "sm.onnx")
    np.savez(tmp_path / "in.npz", x=np.zeros((1, 4, 8, 8), np.float32))
    model_transform.run(["--model_name", "sm", "--model_def", str(tmp_path / "sm.onnx"), "--mlir",
                         str(tmp_path / "sm.mlir"), "--test_input", str(tmp_path / "in.npz")])
    model_deploy.run(["--mlir", str(tmp_path / "sm.mlir"), "--quantize", "F32", "--processor", "tiny",
                      "--model", str(tmp_path / "sm.bmodel"), "--test_input", str(tmp_path / "sm_in_f32.npz")])
    err = capsys.readouterr().err
    assert "stopped after the Tpu check: the backend has no instructions for 'tpu.LRN' op \"t0_lrn\" in F32 yet" in err, err
    assert not (tmp_path / "sm.bmodel").exists() and not (tmp_path / "sm_tiny_f32_final.mlir").exists()
