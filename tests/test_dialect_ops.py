"""The Top op table: coverage by lit tests, consistent defaults, and the Deconv filter layouts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import NoneType, TensorType, f32
from xdsl.utils.test_value import create_ssa_value

from tpudsl.dialects.attrs import matches, to_attr
from tpudsl.dialects.opdef import REQUIRED, SPECS, ShapeError, create, infer_shapes
from tpudsl.dialects.top import SPECS as TOP_SPECS

LIT = Path(__file__).resolve().parent.parent / "lit_tests"


def test_every_top_op_is_shape_inferred_in_a_lit_test() -> None:
    checked = set()
    for path in (LIT / "shape_infer").glob("*.mlir"):
        checked |= set(re.findall(r'// CHECK[-A-Z]*:.*"(top\.\w+)"', path.read_text()))
    computed = {spec.name for spec in TOP_SPECS if spec.shape is not None}
    assert computed - checked == set()


@pytest.mark.parametrize("spec", TOP_SPECS, ids=lambda s: s.name)
def test_attribute_defaults_have_their_kind(spec) -> None:
    for key, a in spec.attrs.items():
        if a.default is None or a.default is REQUIRED:
            continue
        assert matches(a.kind, to_attr(a.kind, a.default)), key
        if a.choices:
            assert a.default in a.choices, key
        if a.supported:
            assert a.default in a.supported, key  # the default must be a value the kernels model


def test_building_an_op_with_an_undeclared_attribute_fails() -> None:
    x = create_ssa_value(TensorType(f32, (1, 2, 4, 4)))
    with pytest.raises(ValueError, match="top.MaxPool has no attribute 'dilation'"):
        create("top.MaxPool", [x], [TensorType(f32, (1, 2, 2, 2))], {"kernel_shape": [2, 2], "dilation": [2, 2]})


def deconv_shape(x, w, attrs):
    op = create("top.Deconv", [create_ssa_value(TensorType(f32, x)), create_ssa_value(TensorType(f32, w)),
                               create_ssa_value(NoneType())], [TensorType(f32, (1,))], attrs, loc="deconv")
    return infer_shapes(op, SPECS["top.Deconv"])[0]


@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 2))
def test_deconv_reordered_filter_gives_the_same_output(group, icg, ocg, k, stride) -> None:
    """[ic, oc/g, k, k] read as ONNX layout and [oc, ic/g, k, k] read as reordered describe the
    same deconvolution, so they give the same output; the output has oc = ocg * group channels."""
    x = (1, icg * group, 4, 4)
    attrs = {"kernel_shape": [k, k], "strides": [stride, stride], "group": group}
    onnx_layout = deconv_shape(x, (icg * group, ocg, k, k), attrs)
    reordered = deconv_shape(x, (ocg * group, icg, k, k), {**attrs, "dynweight_reorderd": True})
    assert onnx_layout == reordered
    assert onnx_layout[1] == ocg * group
    assert onnx_layout[2] == 3 * stride + k  # (4 - 1) * stride + k, no padding


@given(st.integers(1, 4), st.integers(1, 4))
def test_deconv_filter_in_the_wrong_layout_is_rejected(ic, oc) -> None:
    """The DragGAN bug: a run-time filter in [oc, ic] layout without dynweight_reorderd."""
    x = (1, ic, 4, 4)
    wrong = (oc, ic, 3, 3)
    if oc == ic:  # square filters are ambiguous: both layouts are valid
        assert deconv_shape(x, wrong, {"kernel_shape": [3, 3]})[1] == ic
        return
    with pytest.raises(ShapeError, match="dynweight_reorderd=false"):
        deconv_shape(x, wrong, {"kernel_shape": [3, 3]})


def test_the_resize_coordinate_modes_the_op_table_accepts_are_the_ones_computed():
    """geometry/resize_modes.py (plain Python: the op table loads without numpy) names the modes;
    geometry/resize.py computes each: the two lists must be the same."""
    from tpudsl.dialects.geometry import resize, resize_modes

    assert tuple(resize.COORD) == resize_modes.COORD_MODES
