"""model_deploy past the Tpu check: PREFIX_final.mlir (addresses and slices), the .bmodel, and the
third comparison (cmodel vs Tpu interpreter), which fails when the cmodel computes something else."""

from __future__ import annotations

import numpy as np
import pytest

from tests.backend_support import secs_of, transformed_conv_pool
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.cmodel import arith
from tpudsl.cli import model_deploy
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
