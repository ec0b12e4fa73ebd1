"""Constructs found in TPU-MLIR's own .mlir files (lit inputs, samples), against upstream MLIR.

Upstream (iree's bindings) names the buffer it parses "-", so our parser is given the file name
"-" too and the default locations (`loc("-":line:col)`) must come out the same.
"""

from __future__ import annotations

import pytest

from test_text_oracle import upstream
from tpudsl.dialects import make_context
from tpudsl.ir.parser import parse_module
from tpudsl.ir.printer import print_module


def ours(text: str, allow_unregistered: bool = True) -> str:
    return print_module(parse_module(text, "-", make_context(allow_unregistered=allow_unregistered)), debuginfo=True)


# Hand-written lit inputs leave locations out: every op, func, argument and return then gets the
# "FILE":line:col of its name, the module MLIR wraps around top-level ops "FILE":0:0.
NO_LOCATIONS = """func.func @main(%arg0: tensor<1x4xf32>, %arg1 : tensor<4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %w = "top.Weight"() : () -> tensor<4xf32>
  %1 = "top.Add"(%0, %w) {do_relu = false} : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32> loc("add")
  %2 = "x.region"(%1) ({
  ^bb0(%a: tensor<1x4xf32>, %b: i32 loc("b")):
    "x.yield"(%a) : (tensor<1x4xf32>) -> ()
  }) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %3 = call @sub(%2) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %4 = func.call @sub(%3) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc(unknown)
	return %4 : tensor<1x4xf32>
}
func.func private @sub(tensor<1x4xf32>) -> tensor<1x4xf32>
"""

EXPLICIT_MODULE = """#loc = loc(unknown)
module @m attributes {module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<2xf32> loc(unknown)) -> tensor<2xf32> {
    %0 = "top.Sigmoid"(%arg0) : (tensor<2xf32>) -> tensor<2xf32> loc(#loc)
    %1 = "top.Relu"(%0) : (tensor<2xf32>) -> tensor<2xf32>
    return %1 : tensor<2xf32> loc(#loc)
  }
}
"""

# A numeric block label is valid MLIR (xDSL keeps no name for it).
NUMERIC_BLOCK_LABEL = """"x.g"() ({
^0:
  "x.br"()[^1] : () -> ()
^1(%v: i32 loc("v")):
  "x.y"() : () -> ()
}) : () -> ()
"""


@pytest.mark.parametrize("text", [NO_LOCATIONS, EXPLICIT_MODULE, NUMERIC_BLOCK_LABEL], ids=["none", "module", "label"])
def test_default_locations_match_upstream(text):
    assert ours(text) == upstream(text, debuginfo=True)


def test_split_chunk_locations_are_named_like_mlir():
    """A --split-input-file chunk (padded to keep the file's line numbers) is named and numbered
    as MLIR names the chunk's buffer."""
    text = "\n" * 6 + '  %0 = "top.Relu"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n'
    chunk = "func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n" + text + "  return %0 : tensor<2xf32>\n}\n"
    module = parse_module("\n" * 4 + chunk, "a.mlir", make_context(), split_line=4)
    printed = print_module(module, debuginfo=True)
    assert 'loc("within split at a.mlir:4 offset ":2:14)' in printed  # %arg0 on the file's line 5
    assert '= loc("within split at a.mlir:4 offset ":9:8)' in printed  # top.Relu on the file's line 12
    assert '= loc("within split at a.mlir:4 offset ":0:0)' in printed  # the wrapping module


# Calibrated and int8 Top graphs carry quant element types: TPU-MLIR registers the quant dialect,
# so they need no --allow-unregistered-dialect.
QUANT = """module attributes {module.state = "TOP_CALIBRATED"} {
  func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<i8:f32, 2.500000e-01:-1>> {
    %0 = "top.Input"(%arg0) {name = "in"} : (tensor<1x4xf32>) -> tensor<1x4x!quant.calibrated<f32<-2.000000e+00:2.000000e+00>>>
    %1 = "top.Weight"() {name = "w"} : () -> tensor<4x!quant.uniform<i8<-127:127>:f32:0, {1.000000e-01,2.000000e-01,3.000000e-01,4.000000e-01}>>
    %2 = "top.Add"(%0, %1) {name = "add"} : (tensor<1x4x!quant.calibrated<f32<-2.000000e+00:2.000000e+00>>>, tensor<4x!quant.uniform<i8<-127:127>:f32:0, {1.000000e-01,2.000000e-01,3.000000e-01,4.000000e-01}>>) -> tensor<1x4x!quant.uniform<i8:f32, 2.500000e-01:-1>>
    return %2 : tensor<1x4x!quant.uniform<i8:f32, 2.500000e-01:-1>>
  }
}
"""


def test_quant_element_types_need_no_unregistered_dialects():
    module = parse_module(QUANT, "-", make_context(allow_unregistered=False))
    module.verify()
    assert print_module(module, debuginfo=True) == upstream(QUANT, debuginfo=True)


# Hand-written quant types: upstream re-prints their float parameters (scales, calibrated
# min/max) in its float format and drops the spaces; zero points and storage bounds stay.
QUANT_FLOATS = """func.func @main() {
  %0 = "top.Weight"() : () -> tensor<2x!quant.uniform<i8 : f32 , 0.1 : -3>> loc("a")
  %1 = "top.Weight"() : () -> tensor<3x!quant.uniform<u8<1:255>:f32:0, { 3.0:1 , 1.0e-30:2, 0.3333333333333333:4 }>> loc("b")
  %2 = "top.Weight"() : () -> tensor<2x!quant.calibrated<f32< -1.0e+3 : 7.0 >>> loc("c")
  %3 = "top.Weight"() : () -> tensor<2x!quant.uniform<i16:f32, 123456789.0>> loc("d")
  %4 = "top.Weight"() : () -> tensor<2x!quant.uniform<i8:f32, 1.0774157047271729:-13>> loc("e")
  return
}
"""


def test_quant_float_parameters_print_like_upstream():
    assert ours(QUANT_FLOATS, allow_unregistered=False) == upstream(QUANT_FLOATS, debuginfo=True)
