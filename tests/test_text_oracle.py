"""The MLIR text layer against upstream MLIR (iree's bindings) and xDSL's own parser.

tests/data/mlir/*.mlir are TPU-MLIR-form files (Top, Tpu-lowered, addressed with a tpu.Group
region, locations, attributes) exactly as upstream MLIR prints them with debuginfo.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from iree.compiler import ir
from xdsl.parser import Parser
from xdsl.printer import Printer

from tpudsl.dialects import make_context
from tpudsl.ir.parser import parse_module
from tpudsl.ir.printer import print_module
from upstream_mlir import UPSTREAM_CONTEXT

DATA = Path(__file__).parent / "data" / "mlir"
FILES = sorted(DATA.glob("*.mlir"))
# xDSL's own parser cannot read these (fused<metadata> locations, non-ASCII location names).
NOT_FOR_XDSL = {"locations.mlir"}


def upstream(text: str, debuginfo: bool) -> str:
    """`text` parsed and printed by upstream MLIR."""
    with UPSTREAM_CONTEXT:
        module = ir.Module.parse(text)
        return module.operation.get_asm(enable_debug_info=debuginfo)


def xdsl_generic(module) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True, print_debuginfo=True).print_op(module)
    return out.getvalue()


def aliases_first(text: str) -> str:
    """xDSL's parser needs alias definitions before their uses."""
    alias = re.compile(r"^[#!][\w$.-]+ = ")
    lines = text.splitlines()
    return "\n".join([x for x in lines if alias.match(x)] + [x for x in lines if not alias.match(x)])


def test_data_files_exist():
    assert {f.name for f in FILES} >= {
        "top_origin.mlir", "tpu_lowered.mlir", "tpu_addressed.mlir", "locations.mlir", "attributes.mlir",
        "quant_graph.mlir",  # quantized element types, a forward reference in a graph region
        "tpu_subnets.mlir",  # `call @subfunc_0(...)` between funcs with func attributes
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_data_file_is_upstream_output(path):
    text = path.read_text()
    assert upstream(text, debuginfo=True) == text


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_round_trip_with_debuginfo_is_identical_to_upstream(path):
    text = path.read_text()
    module = parse_module(text, path.name, make_context(allow_unregistered=True))
    assert print_module(module, debuginfo=True) == upstream(text, debuginfo=True)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_round_trip_without_debuginfo_is_identical_to_upstream(path):
    text = path.read_text()
    module = parse_module(text, path.name, make_context(allow_unregistered=True))
    printed = print_module(module)
    assert "loc(" not in printed
    assert printed == upstream(text, debuginfo=False)


@pytest.mark.parametrize("path", [f for f in FILES if f.name not in NOT_FOR_XDSL], ids=lambda p: p.name)
def test_same_ir_as_xdsl_parser(path):
    text = path.read_text()
    ctx = make_context(allow_unregistered=True)
    ours = parse_module(text, path.name, ctx)
    theirs = Parser(ctx, aliases_first(text), path.name).parse_module()
    assert xdsl_generic(ours) == xdsl_generic(theirs)


def test_trailing_aliases_resolve_to_name_locations():
    text = (DATA / "top_origin.mlir").read_text()
    module = parse_module(text, "top_origin.mlir", make_context(allow_unregistered=True))
    names = [op.location.desc.data for op in module.walk() if op.name == "top.Weight"]
    assert names == ["input0_bn_mean", "input0_bn_var", "conv1.weight"]


def test_printed_text_of_built_ir_parses_upstream():
    """IR built in Python (not parsed) prints as upstream prints it back."""
    from xdsl.dialects.builtin import ModuleOp, NameLoc, NoneAttr, StringAttr, TensorType, f32
    from xdsl.dialects.func import FuncOp, ReturnOp
    from xdsl.ir import Block, Region

    from tpudsl.dialects.opdef import create

    t = TensorType(f32, [1, 4])
    block = Block(arg_types=[t])
    relu = create("top.Relu", [block.args[0]], [t], {"relu_limit": 6.0}, loc="relu 1")
    block.add_ops([relu, ReturnOp(relu.results[0])])
    func = FuncOp("main", ([t], [t]), Region(block))
    module = ModuleOp([func], {"module.state": StringAttr("TOP_F32")})
    module.location = NameLoc(StringAttr("m"), NoneAttr())
    text = print_module(module, debuginfo=True)
    assert upstream(text, debuginfo=True) == text


def test_large_dense_constants_print_as_upstream():
    """Upstream switches to `dense<"0x...">` above 100 elements; both forms round-trip."""
    ctx = make_context(allow_unregistered=True)
    for n in (99, 100, 101, 300):
        ints = ", ".join(str((i * 7919) % 2001 - 1000) for i in range(n))
        floats = ", ".join(f"{((i * 37) % 101 - 50) / 8}" for i in range(n))
        text = f'"x.a"() {{i = dense<[{ints}]> : tensor<{n}xi32>, f = dense<[{floats}]> : tensor<{n}xf32>}} : () -> ()'
        printed = print_module(parse_module(text, "dense.mlir", ctx))
        assert printed == upstream(text, debuginfo=False)
        assert print_module(parse_module(printed, "printed.mlir", ctx)) == printed


@pytest.mark.parametrize("dense", [
    "dense<0x497FFFF0> : tensor<1x2xf32>",  # how both print 1048575.0: no 6-digit decimal reads back
    "dense<[0x497FFFF0, 0x3F800000]> : tensor<2xf32>",
    "dense<0x7C00> : tensor<2xf16>",
    "dense<0x7FC0> : tensor<2xbf16>",
    "dense<0x4130000000000001> : tensor<3xf64>",
    "dense<[1, 0x10]> : tensor<2xi32>",  # an integer type: the hex is the value
])
def test_hex_literals_in_dense_read_as_upstream_reads_them(dense):
    """A hex literal inside dense<...> of floats is the element's bits (xDSL alone reads its integer
    value: 0x497FFFF0 became 1.233e9, and our own printed text did not read back)."""
    text = f'"x.a"() {{d = {dense}}} : () -> ()'
    ctx = make_context(allow_unregistered=True)
    printed = print_module(parse_module(text, "dense.mlir", ctx))
    assert printed == upstream(text, debuginfo=False)
    assert print_module(parse_module(printed, "printed.mlir", ctx)) == printed
