"""Bad MLIR text gives one TpudslError at the right FILE:LINE:COL, never a traceback."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tpudsl.dialects import make_context
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.parser import parse_module, position_of

HEAD = "func.func @main(%arg0: tensor<1xf32>) -> tensor<1xf32> {\n"
RELU = '"top.Relu"'

# (name, text, the text the column must point at on line 2 (or None for the given line/col), message part)
CASES = [
    ("malformed operand list", HEAD + f"  %0 = {RELU}(%arg0 : (tensor<1xf32>) -> tensor<1xf32>\n}}\n", ": (tensor", "expected ',' or ')'"),
    ("missing colon", HEAD + f"  %0 = {RELU}(%arg0) (tensor<1xf32>) -> tensor<1xf32>\n}}\n", "(tensor<1xf32>) ->", "expected ':'"),
    ("unknown op", HEAD + '  %0 = "top.Foo"(%arg0) : (tensor<1xf32>) -> tensor<1xf32>\n}\n', '"top.Foo"', "unknown operation 'top.Foo'"),
    ("undefined value", HEAD + f"  %0 = {RELU}(%9) : (tensor<1xf32>) -> tensor<1xf32>\n  return %0 : tensor<1xf32>\n}}\n", "%9)", "'%9'"),
    ("undefined value in return", HEAD + "  return %5 : tensor<1xf32>\n}\n", "%5 :", "'%5'"),
    ("operand count", HEAD + f"  %0 = {RELU}(%arg0, %arg0) : (tensor<1xf32>) -> tensor<1xf32>\n}}\n", "(tensor<1xf32>) ->", "expected 2 operand types but had 1"),
    ("undefined loc alias", HEAD + f"  %0 = {RELU}(%arg0) : (tensor<1xf32>) -> tensor<1xf32> loc(#loc7)\n}}\n#loc1 = loc(\"a\")\n", "#loc7", "'#loc7'"),
    ("type mismatch", HEAD + f"  %0 = {RELU}(%arg0) : (tensor<2xf32>) -> tensor<1xf32>\n}}\n", "%arg0) :", "'tensor<2xf32>' vs 'tensor<1xf32>'"),
    ("result count", HEAD + f"  %0, %1 = {RELU}(%arg0) : (tensor<1xf32>) -> tensor<1xf32>\n}}\n", "%0, %1", "provided 2 to bind"),
    ("bad attribute (xDSL fallback)", HEAD + f"  %0 = {RELU}(%arg0) {{a = [1, }} : (tensor<1xf32>) -> tensor<1xf32>\n}}\n", "} :", "attribute expected"),
    ("bad type (xDSL fallback)", HEAD + f"  %0 = {RELU}(%arg0) : (tensor<1xf32>) -> tensor<1xfoo>\n}}\n", "foo>", "shape"),
    ("redefinition", HEAD + f"  %arg0 = {RELU}(%arg0) : (tensor<1xf32>) -> tensor<1xf32>\n}}\n", "%arg0 =", "redefinition of SSA value '%arg0'"),
]


@pytest.mark.parametrize("name,text,at,message", CASES, ids=[c[0] for c in CASES])
def test_error_position_and_message(name, text, at, message):
    with pytest.raises(TpudslError) as info:
        parse_module(text, "bad.mlir", make_context(allow_unregistered=False))
    err = info.value
    line2 = text.split("\n")[1]
    assert (err.file, err.line, err.col) == ("bad.mlir", 2, line2.index(at) + 1)
    assert message in err.message
    rendered = str(err)
    assert rendered.startswith(f"bad.mlir:2:{err.col}: error: ") and "\n" not in rendered


def test_unterminated_region_points_at_end_of_file():
    text = HEAD + f"  %0 = {RELU}(%arg0) : (tensor<1xf32>) -> tensor<1xf32>\n"
    with pytest.raises(TpudslError) as info:
        parse_module(text, "bad.mlir", make_context())
    assert (info.value.line, info.value.col) == (3, 1)
    assert "expected '}'" in info.value.message


def test_empty_input_is_an_error():
    with pytest.raises(TpudslError, match="expected an operation"):
        parse_module("  // nothing\n", "empty.mlir", make_context())


def test_position_of_parsed_ops():
    text = HEAD + f"  %0 = {RELU}(%arg0) : (tensor<1xf32>) -> tensor<1xf32>\n  %1 = {RELU}(%0) {{relu_limit = 1.0 : f64}} :\n      (tensor<1xf32>) -> tensor<1xf32>\n  return %1 : tensor<1xf32>\n}}\n"
    module = parse_module(text, "pos.mlir", make_context())
    ops = [op for op in module.walk() if op.name != "builtin.module"]
    assert [op.name for op in ops] == ["func.func", "top.Relu", "top.Relu", "func.return"]
    assert [position_of(op) for op in ops] == [("pos.mlir", 1, 1), ("pos.mlir", 2, 8), ("pos.mlir", 3, 8), ("pos.mlir", 5, 3)]


VALID = (
    HEAD + f'  %0 = {RELU}(%arg0) {{relu_limit = 6.000000e+00 : f64, s = "x"}} : (tensor<1xf32>) -> tensor<1xf32> loc(#loc1)\n'
    '  %1:2 = "x.g"(%0) ({\n  ^bb0(%a: tensor<1xf32> loc("b")):\n    "x.y"(%a) : (tensor<1xf32>) -> ()\n  }) : (tensor<1xf32>) -> (tensor<1xf32>, i32)\n'
    "  return %1#0 : tensor<1xf32> loc(fused[\"a\", \"f\":1:2])\n} loc(unknown)\n#loc1 = loc(\"relu\")\n"
)


def test_valid_sample_parses():
    parse_module(VALID, "ok.mlir", make_context(allow_unregistered=True))


@given(st.data())
def test_mutated_text_never_crashes(data):
    """Deleting, duplicating or inserting characters gives a module or a TpudslError, nothing else."""
    text = VALID
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text) - 1))
        action = data.draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if action == "delete":
            text = text[:i] + text[i + 1 :]
        elif action == "insert":
            text = text[:i] + data.draw(st.sampled_from(list('%#"(){}<>[],:=@^\\x0 \n'))) + text[i:]
        else:
            text = text[:i] + text[i:i + 8] + text[i:]
    try:
        parse_module(text, "fuzz.mlir", make_context(allow_unregistered=True))
    except TpudslError as e:
        assert e.line is not None and e.col is not None
        assert "\n" not in str(e)
