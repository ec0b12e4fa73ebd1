"""model_runner on an INT8 Tpu .mlir (issue 10): it takes the float inputs Top takes (quantizing as
the module's input Cast says), writes float32 outputs under the Top names, and with
--dump_all_tensors also the raw integer tensors (int8, int32). References: the Top interpreter's
output (cosine) and the quantize formula recomputed here for the input's Cast."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from cli_support import run_main
from tests.test_grouped_deconv_int8 import deconv_model, lowered
from tests.test_requant import ref_round
from tests.test_tpu_float import cosine, run, top_module
from tpudsl.ir.module import save_module


def test_model_runner_writes_float_outputs_under_top_names_and_raw_ints(tmp_path):
    model = deconv_model(2, 4, 2, seed=3)
    top, th, shape = lowered(model, tmp_path)
    save_module(top, tmp_path / "int8.mlir")
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    np.savez(tmp_path / "in.npz", input=x)
    for flags, out in (([], "out.npz"), (["--dump_all_tensors"], "all.npz")):
        proc = run_main("model_runner", "--input", tmp_path / "in.npz", "--model", tmp_path / "int8.mlir",
                        "--output", tmp_path / out, *flags)
        assert proc.returncode == 0, proc.stderr
    with np.load(tmp_path / "out.npz") as f:
        outs = {k: f[k] for k in f.files}
    with np.load(tmp_path / "all.npz") as f:
        every = {k: f[k] for k in f.files}
    assert list(outs) == ["dec"] and outs["dec"].dtype == np.float32
    assert cosine(outs["dec"], run(top_module(model), {"input": x})["dec"]) >= 0.99
    # raw tensors: the input quantized at th/127 (the division in float64, then round half away and
    # saturate: docs/quantization.md), the int32 sums, the int8 results
    scale = Fraction(float(np.float32(th["input"]))) / 127
    want = [max(-128, min(127, ref_round(Fraction(float(v) / float(scale)), "HalfAwayFromZero")))  # f64 division
            for v in x.ravel()]
    assert every["input_int8"].dtype == np.int8 and every["input_int8"].ravel().tolist() == want
    assert every["dec_int32"].dtype == np.int32 and every["dec_int8"].dtype == np.int8
    np.testing.assert_array_equal(every["dec"], outs["dec"])
