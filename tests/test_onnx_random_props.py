"""Random ONNX models (hypothesis): convert_onnx + Top interpreter == onnxruntime.

Strategies (tests/onnx_node/random_models.py) draw single ops (1-D, 2-D and 3-D where it applies) with random shapes, strides, pads,
dilations, groups and attributes — Conv, ConvTranspose, Max/AveragePool, MatMul, Gemm, Resize,
Concat, Transpose, Reshape/Flatten/Squeeze, element-wise, Clip, Softmax, reductions, Layer/Instance-
Normalization, Slice, Pad — and small
random CNN-like graphs, and dynamic-filter ConvTranspose (DragGAN's case); some families also after
canonicalize. onnxruntime (one thread) is the reference; each output must have the same
shape, cosine >= 0.99999 and max relative error <= 1e-4 (max|a-b| / max(max|b|, 1e-6), see harness.py).

Example budget: 1/4 of the active hypothesis profile's max_examples (at least 10) per test, so the
CI profile (200) checks 50 distinct models per op family; HYPOTHESIS_PROFILE=thorough 500 (in batches
of 5 models an example, a model checked once: tests/batches.py).
Element-wise and reduction ops are drawn from those the frontend's CONVERTERS claims (their per-op
coverage is the node tests' job); the other families fail outright when the frontend lacks them.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from batches import DistinctCases, batched, batches
from onnx_node import random_models as R
from onnx_node.harness import cosine, max_rel_err, run_tpudsl, supported_ops

EXAMPLES = max(10, settings().max_examples // 4)
EXAMPLES_IN_CI = 50  # distinct models a test checks in ci (as one model an example did)
BATCH = 5  # models an example (tests/batches.py), each checked once
DRAWN = 1.2  # models drawn per distinct one needed: the batches repeat earlier models
SUPPORTED = supported_ops()


def check_against_onnxruntime(model_feeds, canonicalize: bool = False, via_files: bool = False) -> None:
    model, feeds = model_feeds
    model, want = R.reference(model, feeds)
    got = run_tpudsl(model, feeds, name="random", canonicalize=canonicalize, via_files=via_files)
    for name, ref in want.items():
        assert name in got, f"output {name!r} missing; got {sorted(got)}"
        out = np.asarray(got[name])
        assert out.shape == ref.shape, f"{name}: shape {out.shape} != onnxruntime {ref.shape}"
        cos, rel = cosine(out, ref), max_rel_err(out, ref)
        assert cos >= 0.99999 and rel <= 1e-4, f"{name}: cosine {cos:.7f}, max rel err {rel:.2e}"


def model_key(model_feeds) -> tuple:
    """A model and its feeds as bytes: what makes two drawn cases the same case."""
    model, feeds = model_feeds
    return model.SerializeToString(), tuple(sorted((name, value.tobytes()) for name, value in feeds.items()))


def _prop(strategy, canonicalize: bool = False, via_files: bool = False):
    def test():
        distinct = DistinctCases()

        @batched(DRAWN * EXAMPLES, BATCH)
        @given(batches(strategy, BATCH, model_key))
        @distinct.examples
        def check(batch):
            for model_feeds in batch:
                if distinct.first_time(model_key(model_feeds)):
                    check_against_onnxruntime(model_feeds, canonicalize, via_files)

        check()
        distinct.assert_at_least(EXAMPLES_IN_CI)

    return test


test_conv = _prop(R.conv_models())
test_conv_transpose = _prop(R.conv_transpose_models())
test_pool = _prop(R.pool_models())
test_matmul = _prop(R.matmul_models())
test_gemm = _prop(R.gemm_models())
test_resize = _prop(R.resize_models())
test_concat = _prop(R.concat_models())
test_transpose = _prop(R.transpose_models())
test_reshape = _prop(R.reshape_models())
test_elementwise = _prop(R.elementwise_models(SUPPORTED))
test_clip = _prop(R.clip_models())
test_softmax = _prop(R.softmax_models())
test_reduce = _prop(R.reduce_models(SUPPORTED))
test_small_graph = _prop(R.small_graph_models())
test_dynamic_deconv = _prop(R.dynamic_deconv_models())
test_norm = _prop(R.norm_models())
test_slice_pad = _prop(R.slice_pad_models())

# The same random models after model_transform's Top passes (canonicalize: BatchNorm folding, ReLU fusion,
# ReorderDynWeight, ...; then output names restored, as model_transform does): numbers must not change.
test_small_graph_canonicalized = _prop(R.small_graph_models(), canonicalize=True)
test_conv_canonicalized = _prop(R.conv_models(), canonicalize=True)
test_dynamic_deconv_canonicalized = _prop(R.dynamic_deconv_models(), canonicalize=True)
test_elementwise_canonicalized = _prop(R.elementwise_models(SUPPORTED), canonicalize=True)
test_gemm_canonicalized = _prop(R.gemm_models(), canonicalize=True)
test_matmul_canonicalized = _prop(R.matmul_models(), canonicalize=True)
test_reshape_canonicalized = _prop(R.reshape_models(), canonicalize=True)
test_transpose_canonicalized = _prop(R.transpose_models(), canonicalize=True)
# ... and written as .mlir + npz and read back (printer, parser, weight file).
test_small_graph_via_files = _prop(R.small_graph_models(), canonicalize=True, via_files=True)


def test_strategies_make_models_that_onnxruntime_and_the_checker_accept():
    """The generators themselves (no tpudsl): every drawn model runs in onnxruntime and passes onnx's full check."""
    distinct = DistinctCases()

    @batched(DRAWN * 4 * EXAMPLES, BATCH)
    @given(batches(st.one_of(*[make() for make in R.ALL.values()]), BATCH, model_key))
    @distinct.examples
    def check(batch):
        for model, feeds in batch:
            if distinct.first_time(model_key((model, feeds))):
                _, out = R.reference(model, feeds)
                assert all(np.isfinite(v).all() for v in out.values())

    check()
    distinct.assert_at_least(4 * EXAMPLES_IN_CI)
