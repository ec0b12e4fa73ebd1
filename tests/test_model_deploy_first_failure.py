"""model_deploy names the first tensor, in the module's topological order, that is below the
tolerance (issue 10), whatever the order of the reference file: a reference whose entries are
reversed and where two tensors are wrong names the earlier of the two."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from tests.models.builder import GraphBuilder
from tpudsl.cli import model_deploy, model_transform
from tpudsl.ir.diagnostics import TpudslError


def test_the_first_failing_tensor_in_topological_order_is_named(tmp_path):
    b = GraphBuilder("chain", seed=2)
    x = b.input("input", [1, 4, 6, 6])
    y = b.relu(b.conv(x, "c0", 4, 4, 3), "r0")
    y = b.relu(b.conv(y, "c1", 4, 4, 3), "r1")
    b.output(b.conv(y, "c2", 4, 4, 3))
    onnx.save(b.model(), tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", input=np.random.default_rng(0).standard_normal((1, 4, 6, 6)).astype(np.float32))
    model_transform.run(["--model_name", "m", "--model_def", str(tmp_path / "m.onnx"), "--mlir",
                         str(tmp_path / "m.mlir"), "--test_input", str(tmp_path / "in.npz"),
                         "--test_result", str(tmp_path / "top.npz")])
    with np.load(tmp_path / "top.npz") as f:
        ref = {k: f[k] for k in f.files}
    assert {"r0", "r1", "c2"} <= set(ref)
    for name in ("r1", "r0"):  # two wrong tensors; the later one first in the file
        ref[name] = -ref[name]
    np.savez(tmp_path / "ref.npz", **dict(reversed(list(ref.items()))))
    with pytest.raises(TpudslError, match=r"Tpu check failed at tensor 'r0'.*2 of \d+ tensors failed"):
        model_deploy.run(["--mlir", str(tmp_path / "m.mlir"), "--quantize", "F32", "--processor", "bm1684x",
                          "--model", str(tmp_path / "m.bmodel"), "--test_input", str(tmp_path / "m_in_f32.npz"),
                          "--test_reference", str(tmp_path / "ref.npz"), "--compare_all"])
