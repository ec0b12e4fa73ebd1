"""MaxPool, AvgPool and AdaptiveAvgPool kernels against onnxruntime and a loop reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from interp_ref import assert_close, ort_run, rand, run_top, same_pool_loops

from tests.feature_tally import FeatureTally
from tpudsl.dialects import shapes_nn as NN
from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.opdef import SPECS, AttrView, ShapeError

POOL_CASES = {
    # name: (input shape, attrs)
    "plain": ((1, 2, 6, 6), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "overlap_pads": ((2, 3, 7, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "asym_pads": ((1, 2, 7, 6), {"kernel_shape": [3, 2], "strides": [1, 2], "pads": [0, 1, 2, 0]}),
    "ceil": ((1, 2, 7, 7), {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": True}),
    "ceil_pads": ((1, 1, 8, 6), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": True}),
    "ceil_no_extra_window": ((1, 1, 5, 5), {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": True}),
    "global": ((2, 3, 5, 4), {"kernel_shape": [5, 4]}),
    "pool1d": ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1], "ceil_mode": True}),
    "pool3d": ((1, 2, 5, 4, 6), {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2], "pads": [1, 1, 0, 0, 1, 1]}),
    "dilated": ((1, 2, 9, 8), {"kernel_shape": [3, 2], "strides": [1, 2], "dilations": [2, 3], "pads": [1, 0, 2, 1]}),
    # 7 + 1 - 2*(2-1) - 1 = 5 rounds up to 3 strides: a 4th window, starting in the input
    "dilated_ceil": ((1, 2, 7, 7), {"kernel_shape": [2, 2], "strides": [2, 2], "dilations": [2, 2], "pads": [0, 0, 1, 1],
                                    "ceil_mode": True}),
    "dilated_3d": ((1, 1, 6, 5, 7), {"kernel_shape": [2, 2, 3], "strides": [1, 2, 2], "dilations": [2, 1, 2],
                                     "ceil_mode": True}),
}


def _onnx_pool_attrs(attrs, count_include_pad=None):
    out = {k: (int(v) if isinstance(v, bool) else v) for k, v in attrs.items()}
    if count_include_pad is not None:
        out["count_include_pad"] = int(count_include_pad)
    return out


@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool_matches_onnxruntime(case):
    shape, attrs = POOL_CASES[case]
    x = rand(np.random.default_rng(1), *shape)
    (expected,) = ort_run("MaxPool", [x], _onnx_pool_attrs(attrs))
    assert_close(run_top("top.MaxPool", [x], attrs)[0], expected)


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize("case", POOL_CASES)
def test_avg_pool_matches_onnxruntime(case, count_include_pad):
    shape, attrs = POOL_CASES[case]
    x = rand(np.random.default_rng(2), *shape)
    (expected,) = ort_run("AveragePool", [x], _onnx_pool_attrs(attrs, count_include_pad), opset=19)
    got = run_top("top.AvgPool", [x], {**attrs, "count_include_pad": count_include_pad})[0]
    assert_close(got, expected)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("op,onnx_op", [("top.MaxPool", "MaxPool"), ("top.AvgPool", "AveragePool")])
def test_pool_auto_pad_matches_onnxruntime(op, onnx_op, auto_pad):
    x = rand(np.random.default_rng(6), 1, 2, 7, 6)
    attrs = {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": auto_pad}
    (expected,) = ort_run(onnx_op, [x], attrs)
    assert_close(run_top(op, [x], attrs)[0], expected)


@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool_with_mask_matches_onnxruntime_indices(case):
    """The mask is the index within each (n, c) plane; ONNX's Indices add the plane's offset
    (an independent formula here). Integers: compared exactly; ties never occur in random floats."""
    shape, attrs = POOL_CASES[case]
    x = rand(np.random.default_rng(7), *shape)
    expected, indices = ort_run("MaxPool", [x], _onnx_pool_attrs(attrs), n_outputs=2)
    out, mask = run_top("top.MaxPoolWithMask", [x], attrs, out_dtypes=[np.dtype(np.float32), np.dtype(np.int64)])
    plane = int(np.prod(shape[2:]))
    offsets = (np.arange(shape[0] * shape[1]) * plane).reshape(shape[0], shape[1], *[1] * (len(shape) - 2))
    assert_close(out, expected)
    assert mask.shape == indices.shape
    np.testing.assert_array_equal(mask + offsets, indices)


def test_max_pool_mask_keeps_the_first_maximum_and_skips_pads():
    """Ties: the first position in row-major window order wins (TPU-MLIR, onnxruntime); pads never win."""
    x = np.array([[[[-1.0, -1.0, -1.0], [-1.0, -1.0, -1.0]]]], np.float32)  # pads (-inf) then equal values
    attrs = {"kernel_shape": [2, 2], "strides": [1, 1], "pads": [1, 1, 0, 0]}
    _, indices = ort_run("MaxPool", [x], attrs, n_outputs=2)
    mask = run_top("top.MaxPoolWithMask", [x], attrs, out_dtypes=[None, np.dtype(np.int64)])[1]
    np.testing.assert_array_equal(mask, indices)
    np.testing.assert_array_equal(mask, [[[[0, 0, 1], [0, 0, 1]]]])  # windows start at columns -1, 0, 1


@pytest.mark.parametrize("op,onnx_op", [("top.MaxPool", "GlobalMaxPool"), ("top.AvgPool", "GlobalAveragePool")])
def test_global_pool_keepdims_false_drops_spatial_dims(op, onnx_op):
    x = rand(np.random.default_rng(8), 2, 3, 4, 5)
    (expected,) = ort_run(onnx_op, [x])
    assert_close(run_top(op, [x], {"kernel_shape": [4, 5], "keepdims": False})[0], expected.reshape(2, 3))


def test_max_pool_fused_relu():
    x = rand(np.random.default_rng(3), 1, 2, 4, 4) - 0.5
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    (expected,) = ort_run("MaxPool", [x], attrs)
    assert_close(run_top("top.MaxPool", [x], {**attrs, "do_relu": True})[0], np.maximum(expected, 0))


def adaptive_avg_pool_loops(x: np.ndarray, out: list[int]) -> np.ndarray:
    """PyTorch's adaptive average pooling, element by element."""
    n, c, h, w = x.shape
    y = np.zeros((n, c, *out), np.float64)
    for i in range(out[0]):
        h0, h1 = (i * h) // out[0], -(-((i + 1) * h) // out[0])
        for j in range(out[1]):
            w0, w1 = (j * w) // out[1], -(-((j + 1) * w) // out[1])
            y[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return y.astype(np.float32)


@pytest.mark.parametrize("out", [[1, 1], [3, 2], [5, 7], [2, 5]])
def test_adaptive_avg_pool_matches_loops(out):
    x = rand(np.random.default_rng(4), 2, 3, 7, 5)
    assert_close(run_top("top.AdaptiveAvgPool", [x], {"output_size": out})[0], adaptive_avg_pool_loops(x, out))


def test_adaptive_avg_pool_to_one_is_global_average():
    x = rand(np.random.default_rng(5), 2, 3, 6, 5)
    (expected,) = ort_run("GlobalAveragePool", [x])
    assert_close(run_top("top.AdaptiveAvgPool", [x], {"output_size": [1, 1]})[0], expected)


def _has_padding_only_window(size, k, s, d, pads, auto_pad, ceil_mode) -> bool:
    """Whether some window's dilated taps all miss the input (written here from the definition:
    every tap position of every window, with the pads the reference pools with)."""
    rank = len(size)
    for i in range(rank):
        if auto_pad.startswith("SAME"):
            out = -(-size[i] // s[i])
            total = max(0, (out - 1) * s[i] + d[i] * (k[i] - 1) + 1 - size[i])
            begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
        else:
            begin = pads[i] if auto_pad == "NOTSET" else 0
            end = pads[rank + i] if auto_pad == "NOTSET" else 0
            span = size[i] + begin + end - d[i] * (k[i] - 1) - 1
            out = (-(-span // s[i]) if ceil_mode else span // s[i]) + 1
            if ceil_mode and (out - 1) * s[i] >= size[i] + begin:
                out -= 1
        for o in range(out):
            if not any(0 <= o * s[i] - begin + t * d[i] < size[i] for t in range(k[i])):
                return True
    return False


# The geometry property's cases, each forced in its own examples: (kernel, stride, dilation, pads,
# size) of a 1-D pool with ceil_mode for ceil_mode's cases, or what is forced of a random pool.
GEOMETRY_CASES = {
    "dilation > 1": dict(dilation=2),
    "auto_pad SAME": dict(auto_pad=st.sampled_from(["SAME_UPPER", "SAME_LOWER"])),
    "ceil_mode adds a window": dict(ceil=[(2, 2, 1, (0, 0), 5), (3, 2, 2, (0, 1), 5), (3, 3, 2, (1, 0), 6),
                                          (3, 2, 1, (2, 0), 8)]),
    "ceil_mode drops a window starting in the end pads": dict(ceil=[(2, 2, 1, (0, 1), 4), (4, 3, 1, (1, 3), 5),
                                                                    (4, 3, 1, (0, 3), 3), (3, 2, 1, (0, 2), 2)]),
}


def test_pool_geometry_property():
    """Random pools (1-D/2-D; kernel, stride, dilation, explicit pads or auto_pad, ceil_mode) against
    onnxruntime, both the kernel's values and the shape rule's size. A dilated SAME pool is checked
    against the spec's loop instead (`same_pool_loops` says why). The property exists for dilation,
    ceil_mode's extra window and its dropped window (the last window must start inside the input)
    and auto_pad; each must occur in enough examples: each is forced in its own 10 examples (of 200
    in CI) and must happen in each of them."""
    tally = FeatureTally(tuple(GEOMETRY_CASES))

    def check(rank, data, is_max, count_include_pad, seed, case, dilation, auto_pad, ceil):
        if ceil is not None:
            kc, sc, dc, pc, sizec = data.draw(st.sampled_from(ceil))
            rank, k, s, d, auto_pad, pads, ceil_mode, size = 1, [kc], [sc], [dc], "NOTSET", list(pc), True, [sizec]
        else:
            k = [data.draw(st.integers(1, 4)) for _ in range(rank)]
            s = [data.draw(st.integers(1, 3)) for _ in range(rank)]
            d = [data.draw(st.integers(dilation or 1, 3)) for _ in range(rank)]
            auto_pad = data.draw(st.sampled_from(["NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
                                 if auto_pad is None else auto_pad)
            pads = [data.draw(st.integers(0, ki - 1)) for ki in k * 2] if auto_pad == "NOTSET" else [0] * (2 * rank)
            ceil_mode = data.draw(st.booleans()) if auto_pad == "NOTSET" else False
            size = [data.draw(st.integers(1, 9)) for _ in range(rank)]
        assume(all(size[i] + pads[i] + pads[i + rank] >= d[i] * (k[i] - 1) + 1 for i in range(rank)))
        x = rand(np.random.default_rng(seed), 2, 2, *size)
        attrs = {"kernel_shape": k, "strides": s, "dilations": d, "ceil_mode": ceil_mode}
        attrs |= {"pads": pads} if auto_pad == "NOTSET" else {"auto_pad": auto_pad}
        op = "top.MaxPool" if is_max else "top.AvgPool"
        if not is_max:
            attrs["count_include_pad"] = count_include_pad
        spec = SPECS[op]
        view = AttrView({key: to_attr(spec.attrs[key].kind, v) for key, v in attrs.items()}, spec)
        if _has_padding_only_window(size, k, s, d, pads, auto_pad, ceil_mode):
            with pytest.raises(ShapeError, match="reads only padding"):
                NN.pool([x.shape], view)
            event("a window of padding only is rejected")
            assume(case is None)  # a forced case's examples all count for it
            return
        got = run_top(op, [x], attrs)[0]
        # onnxruntime pads a dilated SAME pool as if undilated, and fails when a stride larger than
        # the kernel makes SAME's total pad negative (ONNX's formula, which we clamp at 0).
        negative_same = any((-(-size[i] // s[i]) - 1) * s[i] + k[i] < size[i] for i in range(rank))
        if auto_pad.startswith("SAME") and (max(d) > 1 or negative_same):
            expected = same_pool_loops(x, k, s, d, auto_pad, is_max, count_include_pad)
        else:
            onnx_attrs = _onnx_pool_attrs({key: v for key, v in attrs.items() if key != "count_include_pad"},
                                          None if is_max else count_include_pad)
            (expected,) = ort_run("MaxPool" if is_max else "AveragePool", [x], onnx_attrs, opset=19)
        assert_close(got, expected)
        assert tuple(NN.pool([x.shape], view)[0]) == expected.shape

        cases = set()
        if max(d) > 1:
            cases.add("dilation > 1")
        if auto_pad.startswith("SAME"):
            cases.add("auto_pad SAME")
        for i in range(rank):
            span = size[i] + pads[i] + pads[rank + i] - d[i] * (k[i] - 1) - 1
            rounded_up = -(-span // s[i]) + 1
            if ceil_mode and expected.shape[2 + i] > span // s[i] + 1:
                cases.add("ceil_mode adds a window")
            if ceil_mode and expected.shape[2 + i] < rounded_up:
                cases.add("ceil_mode drops a window starting in the end pads")
        assert case is None or case in cases, (case, cases, size, k, s, d, pads)
        tally.record(cases)

    forced = 10
    strategies = dict(rank=st.integers(1, 2), data=st.data(), is_max=st.booleans(), count_include_pad=st.booleans(),
                      seed=st.integers(0, 2**16))
    for case, forced_values in {None: {}, **GEOMETRY_CASES}.items():
        values = {"case": case, "dilation": None, "auto_pad": None, "ceil": None, **forced_values}
        examples = settings.default.max_examples - forced * len(GEOMETRY_CASES) if case is None else forced
        settings(max_examples=max(1, examples))(given(**strategies, **{key: st.just(v) for key, v in values.items()})(
            check))()
    tally.assert_each_in(1 / 50)




def naive_avg_pool(x, kernel):
    """Stride 1, no pads: each output the float64 mean of its window, one output at a time."""
    xs = x.astype(np.float64)
    out = tuple(s - k + 1 for s, k in zip(x.shape[2:], kernel, strict=True))
    y = np.zeros((*x.shape[:2], *out))
    for pos in np.ndindex(*out):
        window = (slice(None), slice(None), *(slice(p, p + k) for p, k in zip(pos, kernel, strict=True)))
        y[(slice(None), slice(None), *pos)] = xs[window].sum(axis=tuple(range(2, x.ndim))) / np.prod(kernel)
    return y


AVG_POOL_CASES = ("same", "other", "unknown", "window")


@st.composite
def avg_pools(draw, case, keepdims: bool):
    """A typed global pool called with that shape or another channel count, an untyped one, or a
    smaller window (not global); keepdims false: of rank 1 or 3 (not 2-D)."""
    rank = draw(st.integers(1, 3) if keepdims else st.sampled_from([1, 3]))
    size = tuple(draw(st.integers(2 if case == "window" else 1, 9 if rank < 3 else 4)) for _ in range(rank))
    shrink = [0] * rank
    if case == "window":
        axis = draw(st.integers(0, rank - 1))
        shrink[axis] = draw(st.integers(1, min(size[axis] - 1, 2)))
    return dict(shape=(draw(st.integers(1, 2)), draw(st.integers(1, 40)), *size),
                kernel=[s - d for s, d in zip(size, shrink, strict=True)],
                typed="same" if case == "window" else case, keepdims=keepdims, seed=draw(st.integers(0, 2**16)))


def test_prepared_avg_pool_matches_a_float64_loop():
    """top.AvgPool's prepare on random ranks 1-3, global pools and smaller windows, an input type that
    matches the call's shape, another channel count, or none: the prepared global path where it applies, the
    per-call kernel elsewhere, both equal to the loop. Each case must occur in a tenth of the
    examples, by construction: each case and keepdims has its own 7-8 examples (keepdims false of
    rank 1 or 3; a window, not global, keeps its dims)."""
    from tpudsl.interp.kernel import KernelAttrs
    from tpudsl.interp.kernels_pool import _avg_pool
    from tpudsl.interp.table import KERNELS

    tally = FeatureTally(("prepared global path", "prepared, another shape at the call", "per-call kernel", "global",
                          "keepdims false", "not 2-D"))

    def check(p):
        shape, kernel = p["shape"], p["kernel"]
        is_global = tuple(kernel) == shape[2:]
        keepdims = p["keepdims"] or not is_global  # keepdims=false is for global pools only
        x = np.random.default_rng(p["seed"]).uniform(-1, 1, shape).astype(np.float32)
        typed = {"same": shape, "other": (shape[0], shape[1] + 1, *shape[2:]), "unknown": None}[p["typed"]]
        a = KernelAttrs({"kernel_shape": kernel, "keepdims": keepdims}, in_shapes=[typed])
        run = KERNELS["top.AvgPool"].prepare([None], a)
        prepared = run is not _avg_pool
        assert prepared == (typed is not None and is_global)
        expected = naive_avg_pool(x, kernel)
        if not keepdims:
            expected = expected.reshape(shape[:2])
        got = run([x], a)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * (1 + np.prod(kernel) ** 0.5))
        tally.record(case for case, present in (
            ("prepared global path", prepared and p["typed"] == "same"),
            ("prepared, another shape at the call", prepared and p["typed"] == "other"),
            ("per-call kernel", not prepared), ("global", is_global), ("keepdims false", not keepdims),
            ("not 2-D", len(shape) != 4)) if present)

    for case in AVG_POOL_CASES:
        for keepdims, examples in ((True, 8), (False, 7)):
            settings(max_examples=examples, deadline=None)(given(avg_pools(case, keepdims))(check))()
    tally.assert_each_in(1 / 10)


def max_pool_loops(x: np.ndarray, k, s, pads, ceil_mode: bool) -> np.ndarray:
    """ONNX MaxPool (no dilation) window by window in float64, written from the spec: the output
    size rounded down, or up with ceil_mode unless that last window would start past the input and
    the begin pad; each output the max of its window's input positions (np.max: a NaN wins)."""
    rank = len(k)
    outs = []
    for i in range(rank):
        span = x.shape[2 + i] + pads[i] + pads[rank + i] - k[i]
        o = (-(-span // s[i]) if ceil_mode else span // s[i]) + 1
        if ceil_mode and (o - 1) * s[i] >= x.shape[2 + i] + pads[i]:
            o -= 1
        outs.append(o)
    y = np.empty((*x.shape[:2], *outs))
    for pos in np.ndindex(*outs):
        window = []
        for i, p in enumerate(pos):
            start = p * s[i] - pads[i]
            window.append(slice(max(start, 0), min(start + k[i], x.shape[2 + i])))
        y[(slice(None), slice(None), *pos)] = x[(slice(None), slice(None), *window)].astype(np.float64).max(
            axis=tuple(range(2, x.ndim)))
    return y


# The last axis' (kernel, begin pad, end pad, ceil_mode or None for either) on an even width: each
# one a pool the stride-2 last-axis path takes (one output per input pair).
FAST_LAST_AXES = ((2, 0, 0, None), (2, 0, 1, None), (2, 1, 0, False), (3, 1, 1, False), (3, 0, 0, True),
                  (3, 1, 0, None), (3, 0, 1, None), (3, 2, 0, False), (3, 0, 2, None))
# Each case of the property and its examples, the case forced by construction: the fast path with
# kernel 2, kernel 3, a border column (a begin pad, or ceil_mode's window over the end), ceil_mode's
# extra window, NaN, a 2-D pool; and the span path (odd width, stride 1 or 4 taps on the last axis).
FAST_MAX_CASES = {
    "fast path, kernel 2": dict(axes=[a for a in FAST_LAST_AXES if a[0] == 2]),
    "fast path, kernel 3": dict(axes=[a for a in FAST_LAST_AXES if a[0] == 3]),
    "fast path, border window": dict(axes=[a for a in FAST_LAST_AXES if a[1] > 0 or a[3]]),
    "fast path, ceil_mode adds a window": dict(axes=[(3, 0, 0, True)]),
    "fast path, NaN present": dict(axes=FAST_LAST_AXES, nan=True),
    "fast path, 2-D": dict(axes=FAST_LAST_AXES, rank=2),
    "general path": dict(axes=None),
}


def test_max_pool_stride2_last_axis_property():
    """Random MaxPools through the stride-2 last-axis path (`_max_last_axis`: even and odd phases,
    unit-stride maxima, recomputed border columns), and others beside it, against the float64 loop
    exactly; NaN-free ones against onnxruntime too (its NaN handling depends on the tap's position,
    so NaN cases follow the loop: a NaN in a window wins, as np.maximum has always made it here).
    Every case of FAST_MAX_CASES is forced in its own 20 examples, and must happen in each of them."""
    from unittest import mock

    from tpudsl.interp import kernels_pool

    tally = FeatureTally(tuple(FAST_MAX_CASES))

    def check(data, seed, case, axes=None, nan=None, rank=None):
        rank = rank or data.draw(st.integers(1, 2))
        k = [data.draw(st.integers(1, 3)) for _ in range(rank - 1)]
        s = [data.draw(st.integers(1, 2)) for _ in range(rank - 1)]
        pads = [data.draw(st.integers(0, ki - 1)) for ki in k * 2]
        ceil_mode = data.draw(st.booleans())
        if axes is not None:
            kw, pb, pe, ceil = data.draw(st.sampled_from(axes))
            ceil_mode = ceil_mode if ceil is None else ceil
            sw, width = 2, 2 * data.draw(st.integers(2, 6))
        else:  # off the path: an odd width, stride 1, or 4 taps on the last axis
            off = data.draw(st.sampled_from(["odd width", "stride 1", "4 taps"]))
            kw = 4 if off == "4 taps" else data.draw(st.integers(1, 3))
            sw = 1 if off == "stride 1" else 2
            pb, pe = data.draw(st.integers(0, kw - 1)), data.draw(st.integers(0, kw - 1))
            width = 2 * data.draw(st.integers(2, 6)) + (off == "odd width")
        k, s = k + [kw], s + [sw]
        pads = pads[:rank - 1] + [pb] + pads[rank - 1:] + [pe]
        size = [data.draw(st.integers(k[i], 9)) for i in range(rank - 1)] + [width]
        rng = np.random.default_rng(seed)
        x = rand(rng, data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3)), *size)
        nan = data.draw(st.booleans()) if nan is None else nan
        if nan:
            x.reshape(-1)[rng.integers(0, x.size, 1 + x.size // 8)] = np.nan
        attrs = {"kernel_shape": k, "strides": s, "pads": pads, "ceil_mode": ceil_mode}
        with mock.patch.object(kernels_pool, "_max_last_axis", wraps=kernels_pool._max_last_axis) as fast:
            got = run_top("top.MaxPool", [x], attrs)[0]
        expected = max_pool_loops(x, k, s, pads, ceil_mode)
        assert got.shape == expected.shape
        # a max is one of its inputs: equal in float32, NaN where the loop has NaN
        np.testing.assert_array_equal(got, expected.astype(np.float32))
        if not nan:
            (ref,) = ort_run("MaxPool", [x], _onnx_pool_attrs(attrs))
            np.testing.assert_array_equal(got, ref)

        o = expected.shape[-1]
        cases = {"general path"}
        if fast.called:
            cases = {f"fast path, kernel {kw}"}
            if pb > 0 or (o - 1) * 2 - pb + kw > width:
                cases.add("fast path, border window")
            if ceil_mode and o > (width + pb + pe - kw) // 2 + 1:
                cases.add("fast path, ceil_mode adds a window")
            if nan:
                cases.add("fast path, NaN present")
            if rank == 2:
                cases.add("fast path, 2-D")
        assert case in cases, f"{case!r} not in {cases} ({attrs}, width {width})"
        tally.record(cases)

    def examples(case, forced):
        @settings(max_examples=20)
        @given(data=st.data(), seed=st.integers(0, 2**16))
        def one(data, seed):
            check(data, seed, case, **forced)

        return one

    for case, forced in FAST_MAX_CASES.items():
        examples(case, forced)()
    tally.assert_each_in(1 / len(FAST_MAX_CASES))
