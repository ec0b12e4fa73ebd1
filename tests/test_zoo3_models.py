"""Three more architectures as torch.onnx.export writes them (tests/models: swin.py, unet.py, crnn.py).

model_transform with --test_input against onnxruntime (run here, on the same input) for each; the
Swin stage deployed in INT8 on bm1684x (its rank-5 qkv permute, which the backend could not do in
one load, now split by --processor-tpu-optimize, which model_deploy runs before the Tpu check: the
.bmodel equals the Tpu interpreter bit for bit, and the Tpu check passes); the split's moves against
numpy's transpose. The full matrix (F32, F16, BF16, INT8 of
all three) is bench/zoo_deploy.py's (bench/RESULTS.md "zoo deploy")."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from tests.backend_support import deploy_int8
from tests.feature_tally import FeatureTally, forced_runs, run_each
from tests.models.crnn import crnn
from tests.models.swin import swin_stage
from tests.models.unet import unet
from tests.zoo_transform import assert_transform_matches_onnxruntime
from tpudsl.dialects.geometry.permute import folds_to_4d, single_moves


@pytest.mark.parametrize(("name", "build", "shape"), [
    ("swin", lambda: swin_stage(input_size=32), (1, 4, 4, 32)),
    ("unet_opset17", lambda: unet(input_size=16, bilinear=(True, False), opset=17), (1, 1, 16, 16)),
    ("crnn", lambda: crnn(width=32), (9, 1, 11)),
])
def test_model_transform_matches_onnxruntime(tmp_path, name, build, shape):
    assert_transform_matches_onnxruntime(tmp_path, name, build(), shape)


def test_swin_int8_deploys_with_its_rank5_permute_split(tmp_path):
    model = swin_stage(input_size=32)
    (x,) = model.graph.input
    shape = [d.dim_value for d in x.type.tensor_type.shape.dim]
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = deploy_int8(tmp_path, "swin", model,
                             lambda rng: {x.name: rng.standard_normal(shape).astype(np.float32)}, "0.8,0.5")
    assert status == 0
    assert out.getvalue().rstrip().endswith("npz compare PASSED.")  # the Tpu check: INT8 against Top
    text = err.getvalue()
    assert "bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's (INT8, bit-exact)" in text
    tpu = (tmp_path / "swin_bm1684x_int8_sym_tpu.mlir").read_text()
    assert 'loc("layers.0.blocks.0.attn.qkv_permute_move0")' in tpu  # the split kept a derived name


@st.composite
def permutes(draw, unfolding: bool = False):
    """A rank-5 or rank-6 shape (some dims 1) and an order; `unfolding`: no size-1 dims and an order
    whose dims keep five groups or more (what the split exists for)."""
    rank = draw(st.integers(5, 6))
    sizes = [2, 3] if unfolding else [1, 2, 3]
    shape = draw(st.lists(st.sampled_from(sizes), min_size=rank, max_size=rank))
    orders = st.permutations(range(rank))
    return shape, draw(orders.filter(lambda o: not folds_to_4d(shape, o)) if unfolding else orders)


def test_single_moves_compose_to_the_order_and_each_folds():
    """Every move folds to 4-D and the chain is numpy's transpose by the order; a quarter of the
    examples are forced to orders that do not fold. A quarter of the profile's examples: the check
    is cheap, hypothesis' draw is not."""
    tally = FeatureTally(("does not fold",))

    def check(case, _features):
        shape, order = case
        x = np.arange(np.prod(shape)).reshape(shape)
        y = x
        for step in single_moves(order):
            assert folds_to_4d(y.shape, step), (y.shape, step)
            y = np.transpose(y, step)
        np.testing.assert_array_equal(y, np.transpose(x, order))
        tally.record(["does not fold"] if not folds_to_4d(shape, order) else [])

    total = settings.default.max_examples // 4
    run_each(check, forced_runs(permutes(), [(permutes(unfolding=True), ("does not fold",))], total, total // 4))
    tally.assert_each_in(1 / 4)
