"""model_deploy to the Tpu level: the DragGAN F16 overflow, its diagnosis and its fix, and bad input.

The StyleGAN2-style block demodulates its computed filters: sum(w^2) over [cin, k, k] (ReduceSum),
+ eps (Add), Sqrt, then 1/x (Div). With styles about 20x larger than usual that sum exceeds float16's
65504 in both modulated convs, while w^2 itself, the Sqrt result and everything after stay in range:
the seed article's trap. The expected diagnosis is therefore known from the model's structure, not
from the code under test: exactly `{conv0,conv1}.{sum,sum_eps,sqrt}` must run in F32.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from tests.models import random_inputs, stylegan2_block
from tpudsl.cli import model_deploy, model_transform
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import load_module

EXPECTED_F32 = [f"{conv}.{op}" for conv in ("conv0", "conv1") for op in ("sum", "sum_eps", "sqrt")]


@pytest.fixture(scope="module")
def stylegan(tmp_path_factory):
    d = tmp_path_factory.mktemp("sg")
    model = stylegan2_block()
    onnx.save(model, d / "sg.onnx")
    feed = random_inputs(model)
    feed["ws"] = feed["ws"] * 20  # large styles: the demodulation sums overflow float16
    np.savez(d / "in.npz", **feed)
    model_transform.run(["--model_name", "sg", "--model_def", str(d / "sg.onnx"), "--mlir", str(d / "sg.mlir"),
                         "--test_input", str(d / "in.npz")])
    return d


def deploy(d, mode: str, *extra: str) -> None:
    model_deploy.run(["--mlir", str(d / "sg.mlir"), "--quantize", mode, "--processor", "bm1684x",
                      "--model", str(d / "sg.bmodel"), "--test_input", str(d / "sg_in_f32.npz"), *extra])


def test_f16_overflow_is_diagnosed_and_the_printed_qtable_fixes_it(stylegan, capsys):
    with pytest.raises(TpudslError, match="Tpu check failed at tensor"):
        deploy(stylegan, "F16")
    err = capsys.readouterr().err
    assert "'conv0.sum' is the first op whose F16 result is inf/NaN" in err
    lines = [line for line in err.splitlines() if line.endswith(" F32")]
    assert lines == [f"{name} F32" for name in EXPECTED_F32]

    (stylegan / "qtable").write_text("# op_name quantize_mode\n" + "\n".join(lines) + "\n")
    deploy(stylegan, "F16", "--quantize_table", str(stylegan / "qtable"), "--tolerance", "0.999,0.99")
    assert "inf/NaN" not in capsys.readouterr().err
    # The fix inserts no F32 -> F16 -> F32 round trip (the seed's second trap).
    tpu = load_module(stylegan / "sg_bm1684x_f16_tpu.mlir")
    for op in tpu.main_func().body.block.ops:
        if op.name == "tpu.Cast" and op.operands[0].owner.name == "tpu.Cast":
            inner = op.operands[0].owner
            assert not (inner.operands[0].type == op.results[0].type), f"round trip at {op}"


def test_bf16_needs_no_qtable(stylegan, capsys):
    deploy(stylegan, "BF16", "--tolerance", "0.99,0.9")
    assert "inf/NaN" not in capsys.readouterr().err
    assert (stylegan / "sg_bm1684x_bf16_tpu.mlir").is_file()
    assert (stylegan / "sg_bm1684x_bf16_tpu_weights.npz").is_file()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--quantize", "INT8"], "--quantize INT8 needs --calibration_table"),
        (["--quantize", "F16", "--asymmetric"], "--asymmetric needs --quantize INT8"),
        (["--quantize", "F16", "--processor", "bm9999"], "unknown chip 'bm9999'"),
        (["--quantize", "F16", "--quantize_table", "QTABLE"], r"qtable:2: error: no op of the module is named 'nope'"),
    ],
)
def test_bad_input_is_one_message_and_nothing_is_written(stylegan, tmp_path, extra, message):
    qtable = tmp_path.parent / f"{tmp_path.name}.qtable"  # outside tmp_path, which must stay empty
    qtable.write_text("conv0.sum F32\nnope F32\n")
    extra = [str(qtable) if e == "QTABLE" else e for e in extra]
    args = ["--mlir", str(stylegan / "sg.mlir"), "--processor", "bm1684x", "--model", str(tmp_path / "x.bmodel")]
    with pytest.raises(TpudslError, match=message):
        model_deploy.run(args + extra)
    assert list(tmp_path.iterdir()) == []


def test_missing_output_directory(stylegan, tmp_path):
    with pytest.raises(TpudslError, match="does not exist"):
        model_deploy.run(["--mlir", str(stylegan / "sg.mlir"), "--processor", "bm1684x",
                          "--model", str(tmp_path / "no" / "x.bmodel")])
