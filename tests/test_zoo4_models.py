"""Four more architectures as torch.onnx.export writes them (tests/models: lraspp.py, mobilevit.py,
regnet.py, squeezenet.py).

model_transform with --test_input against onnxruntime (run here, on the same input) for each; the
SqueezeNet deployed in INT8 on bm1684x (its ceil-mode MaxPools, which the backend refused, now
lowered to end pads: the Tpu check passes against Top and the .bmodel equals the Tpu interpreter bit
for bit). The full matrix (F32, F16, BF16, INT8 of all four) is bench/zoo_deploy.py's
(bench/RESULTS.md "zoo deploy")."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from tests.backend_support import deploy_int8
from tests.models.lraspp import lraspp_mobilenetv3
from tests.models.mobilevit import mobilevit_xxs
from tests.models.regnet import regnet_y
from tests.models.squeezenet import squeezenet1_1
from tests.zoo_transform import assert_transform_matches_onnxruntime


@pytest.mark.parametrize(("name", "build", "shape"), [
    ("lraspp", lambda: lraspp_mobilenetv3(input_size=32), (1, 3, 32, 32)),
    ("mobilevit", lambda: mobilevit_xxs(input_size=32), (1, 10)),
    ("regnet", lambda: regnet_y(input_size=32), (1, 10)),
    ("squeezenet_opset17", lambda: squeezenet1_1(input_size=40, opset=17), (1, 10)),
])
def test_model_transform_matches_onnxruntime(tmp_path, name, build, shape):
    assert_transform_matches_onnxruntime(tmp_path, name, build(), shape)


def test_squeezenet_int8_deploys_with_ceil_mode_maxpools(tmp_path):
    model = squeezenet1_1(input_size=40)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = deploy_int8(tmp_path, "squeezenet", model,
                             lambda rng: {"input": rng.standard_normal((1, 3, 40, 40)).astype(np.float32)}, "0.8,0.5")
    assert status == 0, err.getvalue()[-500:]
    assert out.getvalue().rstrip().endswith("npz compare PASSED.")  # the Tpu check: INT8 against Top
    assert "bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's (INT8, bit-exact)" in err.getvalue()
    tpu = (tmp_path / "squeezenet_bm1684x_int8_sym_tpu.mlir").read_text()
    # 4 rows, kernel 3, stride 2: ceil mode's second window reaches one row past the end.
    assert 'pads = [0, 0, 1, 1], pool_mode = #tpu<pool_mode Max>' in tpu and "ceil_mode" not in tpu
