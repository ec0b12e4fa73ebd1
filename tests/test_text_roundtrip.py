"""Random MLIR modules through our parser and printer, checked against upstream MLIR and xDSL.

The generator writes module text directly (random generic ops, attribute dictionaries of every
kind we support, tricky floats, tensor types with encodings, `tpu.Group`-like regions with
block arguments and multi-result ops, locations of every kind with quotes and escapes, `#loc`
aliases at the end). Properties:
  * print(parse(text), debuginfo) is exactly what upstream MLIR prints for `text`;
  * printing is a fixed point: print(parse(print(m))) == print(m);
  * our parser builds the same IR as xDSL's parser (compared by xDSL's generic printer).
"""

from __future__ import annotations

import functools
import struct

import pytest

from hypothesis import event, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

from batches import DistinctCases, batched, batches
from strategies import UTF8_CHARS
from test_text_oracle import aliases_first, upstream, xdsl_generic
from tpudsl.dialects import make_context
from tpudsl.ir.parser import parse_module
from tpudsl.ir.printer import print_module


def mlir_string(s: str, style: int) -> str:
    """A string literal for `s`; `style` picks between hex escapes and the named escapes."""
    out = []
    for byte in s.encode("utf-8"):
        c = chr(byte)
        if style and c in '"\\\n\t':
            out.append({'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}[c])
        elif 0x20 <= byte < 0x7F and c not in '"\\':
            out.append(c)
        else:
            out.append(f"\\{byte:02X}" if style == 0 else f"\\{byte:02x}")
    return '"' + "".join(out) + '"'


strings = st.builds(mlir_string, st.text(UTF8_CHARS, max_size=6) | st.sampled_from(['a"b', "x\\y", "nl\n", "tab\t", "名前"]), st.integers(0, 1))
# xDSL's parser rejects hex escapes in location names: ASCII with the named escapes only.
ascii_strings = st.builds(mlir_string, st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from('"\\\n\t'), max_size=6), st.just(1))
idents = st.from_regex(r"[a-z_][a-z0-9_]{0,5}(\.[a-z][a-z0-9_]{0,4})?", fullmatch=True, alphabet=st.characters(codec="ascii"))
keys = idents | st.sampled_from(['"a key"', '"x-y"', "module.chip", "do_relu"])

ELEMENTS = ["f32", "f16", "bf16", "f64", "i8", "i32", "i64", "i1"]
dims = st.lists(st.integers(1, 64).map(str) | st.just("?"), max_size=4)
ranked = st.builds(lambda d, e: "tensor<" + "".join(x + "x" for x in d) + e + ">", dims, st.sampled_from(ELEMENTS))
addressed = st.builds(lambda d, a: "tensor<" + "".join(x + "x" for x in d) + f"f32, {a} : i64>", st.lists(st.integers(1, 9).map(str), max_size=3), st.integers(0, 2**40))
# Quantized types, in upstream's own spelling (tests/test_quant_types.py varies the spelling).
quantized = st.sampled_from(["tensor<2x!quant.uniform<i8:f32, 1.0774157047271729:-13>>", "!quant.uniform<i8<-127:127>:f32:0, {1.000000e-02,2.000000e-02}>"])
types = ranked | addressed | quantized | st.sampled_from(["tensor<*xf32>", "none", "i32", "f32", "index"])


def f64_bits(bits: int) -> float:
    return struct.unpack("<d", bits.to_bytes(8, "little"))[0]


def f32_of(bits: int) -> float:
    return struct.unpack("<f", bits.to_bytes(4, "little"))[0]


finite64 = st.integers(0, 2**64 - 1).map(f64_bits).filter(lambda x: x == x and abs(x) != float("inf"))
finite32 = st.integers(0, 2**32 - 1).map(f32_of).filter(lambda x: x == x and abs(x) != float("inf"))
nice = st.sampled_from([0.0, -0.0, 1.0, 1.2, 0.1, 1e-5, 9.9999997473787516e-6, 255.0, 1e300, 123456.789, 0.5, -6.0])
nice32 = st.sampled_from([0.0, -0.0, 1.0, 1.2, 0.1, 1e-5, 255.0, 3.0e38, 123456.789, -6.0]).map(
    lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
)
float_attrs = st.one_of(
    st.builds(lambda x: f"{x:.17e} : f64", finite64 | nice),
    st.builds(lambda b: f"0x{b:016X} : f64", st.integers(0, 2**64 - 1).filter(lambda b: f64_bits(b) == f64_bits(b) or b == 0x7FF8000000000000)),
    st.builds(lambda x: f"{x:.9e} : f32", finite32 | nice32),
    st.builds(lambda b: f"0x{b:08X} : f32", st.integers(0, 2**32 - 1).filter(lambda b: f32_of(b) == f32_of(b) or b == 0x7FC00000)),
    st.builds(lambda x: f"{x:.4e} : f16", st.floats(-60000, 60000, width=16)),
    st.builds(lambda x: f"{x:.3e} : bf16", st.sampled_from([0.1, 1.0, -2.5, 3.0e10, 1.0e-3])),
)
int_attrs = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(lambda v: f"{v} : i64"),
    st.integers(-(2**31), 2**31 - 1).map(lambda v: f"{v} : i32"),
    st.integers(-128, 127).map(lambda v: f"{v} : i8"),
    st.integers(0, 255).map(lambda v: f"{v} : ui8"),
    st.integers(0, 1000).map(lambda v: f"{v} : index"),
    st.sampled_from(["true", "false"]),
)
bare_ints = st.integers(-(2**40), 2**40).map(str)
bare_floats = (finite64 | nice).map(lambda x: f"{x:.17e}")
dense = st.one_of(
    st.builds(lambda vs: f"dense<[{', '.join(map(str, vs))}]> : tensor<{len(vs)}xi32>", st.lists(st.integers(-100, 100), min_size=1, max_size=5)),
    st.builds(lambda x, n: f"dense<{x:.9e}> : tensor<{n}x2xf32>", finite32 | nice32, st.integers(1, 3)),
    st.builds(lambda vs: f"dense<[[{', '.join(f'{v:.6e}' for v in vs)}]]> : tensor<1x{len(vs)}xf32>", st.lists(st.floats(-10, 10, width=32), min_size=1, max_size=4)),
)
dense_arrays = st.builds(lambda e, vs: f"array<{e}{': ' + ', '.join(map(str, vs)) if vs else ''}>", st.sampled_from(["i32", "i64"]), st.lists(st.integers(-1000, 1000), max_size=4))
dialect_attrs = st.sampled_from(["#tpu<rq_mode MultiplierShift>", "#tpu<round_mode HalfAwayFromZero>", "#tpu<run_mode TPU_STATIC>", "#tpu.lg<out_addr = 0, out_size = 0, buffer_addr = 0, buffer_size = 0, eu_align = true, can_merge = false, in_hslice_offset = [], n_idx = [0, 2], n_slice = [2, 2], c_idx = [], c_slice = [], d_idx = [], d_slice = [], h_idx = [], h_slice = [], w_idx = [], w_slice = [], id = 3, stage = 0, slice_idx = 0, group_type = 0>"])
scalars = int_attrs | float_attrs | strings | dense | dense_arrays | dialect_attrs | types | st.just("@main")
arrays = st.lists(bare_ints, max_size=4) | st.lists(bare_floats, max_size=3) | st.lists(scalars, max_size=3)
attributes = st.recursive(
    scalars | arrays.map(lambda xs: "[" + ", ".join(xs) + "]"),
    lambda inner: st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")
    | st.dictionaries(idents, inner, max_size=3).map(lambda d: "{" + ", ".join(f"{k} = {v}" for k, v in d.items()) + "}"),
    max_leaves=6,
)
attr_dicts = st.dictionaries(keys, attributes | st.just(None), max_size=4).map(
    lambda d: "{" + ", ".join(k if v is None else f"{k} = {v}" for k, v in d.items()) + "}" if d else ""
)

module_attr_dicts = st.dictionaries(idents.map(lambda k: "module." + k), attributes, max_size=3).map(
    lambda d: "{" + ", ".join(f"{k} = {v}" for k, v in d.items()) + "}" if d else ""
)


# A location is drawn as a tree and written out afterwards (`location_text`), so that its strategies
# are built once at import rather than on every draw (building a strategy costs more than drawing it).
@functools.cache
def location_trees(depth: int, metadata: bool, in_alias: bool) -> st.SearchStrategy[tuple]:
    """The inside of `loc(...)` as a tree; without `metadata` the locations are limited to what
    xDSL's parser reads (no fused metadata, ASCII names).

    Upstream resolves a later-defined alias only as a whole `loc(#alias)`, so nested alias
    references appear only inside alias definitions (which come after the ones they use). Only
    `depth` 0, 1 and 2 differ (an alias inside an alias goes deeper, as at depth 2)."""
    strings_ = strings if metadata else ascii_strings
    deeper = min(depth + 1, 2)
    inner = st.deferred(lambda: location_trees(deeper, metadata, in_alias))
    kinds = [
        st.just(("unknown",)),
        st.tuples(st.just("name"), strings_),
        # (upstream turns an empty file name into "-", a quirk TPU-MLIR files never hit)
        st.tuples(st.just("file"), strings_.filter(lambda s: s != '""'), st.integers(0, 9999), st.integers(0, 200)),
    ]
    if depth == 0 or in_alias:
        kinds.append(st.tuples(st.just("alias"), st.deferred(lambda: location_trees(deeper, metadata, True))))
    if depth < 2:
        meta = st.none() | strings_ if metadata else st.none()
        kinds += [
            st.tuples(st.just("fused"), st.lists(inner, min_size=1, max_size=3), meta),
            st.tuples(st.just("child"), strings_, inner),
            st.tuples(st.just("callsite"), inner, inner),
        ]
    return st.one_of(kinds)


def location_text(tree: tuple, aliases: list[str]) -> str:
    """A location tree's text; alias definitions are appended to `aliases`, inner ones first."""
    kind, *parts = tree
    if kind == "unknown":
        return "unknown"
    if kind == "name":
        return parts[0]
    if kind == "file":
        return f"{parts[0]}:{parts[1]}:{parts[2]}"
    if kind == "alias":
        aliases.append(location_text(parts[0], aliases))
        return f"#loc{len(aliases)}"
    if kind == "child":
        return f"{parts[0]}({location_text(parts[1], aliases)})"
    if kind == "callsite":
        return f"callsite({location_text(parts[0], aliases)} at {location_text(parts[1], aliases)})"
    meta = "" if parts[1] is None else f"<{parts[1]}>"
    return f"fused{meta}[{', '.join(location_text(p, aliases) for p in parts[0])}]"


OP_NAMES = st.sampled_from(["top.Conv", "top.Add", "top.Weight", "tpu.Conv2D", "tpu.Load", "x.op"])


@st.composite
def modules(draw, metadata: bool = True) -> str:
    aliases: list[str] = []
    loc = lambda: f"loc({location_text(draw(location_trees(0, metadata, False)), aliases)})"  # noqa: E731
    values: list[tuple[str, str]] = []
    args = []
    for i in range(draw(st.integers(0, 3))):
        t = draw(types)
        args.append(f"%a{i}: {t} {loc()}")
        values.append((f"%a{i}", t))
    lines = []
    counter = iter(range(10**6))

    def op_line(indent: str, pool: list[tuple[str, str]], region: str = "") -> str:
        """One generic op using values of `pool`; its results join `pool`."""
        # indices, not st.sampled_from(pool): a strategy of integers is built once and cached
        operands = [pool[i] for i in draw(st.lists(st.integers(0, len(pool) - 1), max_size=3))] if pool else []
        results = draw(st.lists(types, max_size=3))
        name = f"%v{next(counter)}"
        lhs = "" if not results else f"{name} = " if len(results) == 1 else f"{name}:{len(results)} = "
        outs = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
        dict_text = draw(attr_dicts)
        attrs = f" {dict_text}" if dict_text else ""
        line = (
            f'{indent}{lhs}"{draw(OP_NAMES)}"({", ".join(v for v, _ in operands)}){region}{attrs} : '
            f'({", ".join(t for _, t in operands)}) -> {outs} {loc()}'
        )
        if len(results) == 1:
            pool.append((name, results[0]))
        else:
            pool.extend((f"{name}#{i}", t) for i, t in enumerate(results))
        return line

    for _ in range(draw(st.integers(1, 5))):
        if draw(st.integers(0, 4)) == 0:
            # A region op like tpu.Group: its body sees the outer values plus its block arguments.
            inner_pool = list(values)
            body = []
            header_args = []
            for _ in range(draw(st.integers(0, 2))):
                t = draw(types)
                arg = f"%b{next(counter)}"
                header_args.append(f"{arg}: {t} {loc()}")
                inner_pool.append((arg, t))
            if header_args:
                body.append(f"    ^bb0({', '.join(header_args)}):")
            for _ in range(draw(st.integers(0, 2))):
                body.append(op_line("      ", inner_pool))
            lines.append(op_line("    ", values, region=" ({\n" + "".join(b + "\n" for b in body) + "    })"))
        else:
            lines.append(op_line("    ", values))
    ret = values[draw(st.integers(0, len(values) - 1))] if values else None
    result_type = f" -> {ret[1]}" if ret else ""
    ret_text = f"return {ret[0]} : {ret[1]}" if ret else "return"
    module_attrs = draw(module_attr_dicts)  # upstream wants dialect-prefixed names here
    head = f"module attributes {module_attrs} {{" if module_attrs else "module {"
    text = "\n".join(
        [head, f"  func.func @main({', '.join(args)}){result_type} {{", *lines, f"    {ret_text} {loc()}", f"  }} {loc()}", f"}} {loc()}"]
        + [f"#loc{i + 1} = loc({body})" for i, body in enumerate(aliases)]
    )
    return text + "\n"


CTX = make_context(allow_unregistered=True)
# The two whole-module properties below cost the most of any test (about 140 ms per module): they
# check half ci's budget of distinct modules (100; the thorough profile 1,000 each), in batches of
# 4 (tests/batches.py), each module checked once.
BATCH = 4
HALF = 100
HALF_BUDGET = batched(6 * settings.default.max_examples // 10, BATCH)


# MLIR flattens a fused child with the same metadata after building it, so the built location
# keeps an `unknown` that the same text written directly would lose (found by the dev profile).
NESTED_FUSED = [
    'fused<"">["", fused<"">[unknown]]',
    'fused<"a">[fused<"b">["x", fused<"b">[unknown]]]',
    '"n"(fused<"b">["x", fused<"b">[unknown]])',
    'callsite(fused<"b">["x", fused<"b">[unknown]] at "y")',
]


@pytest.mark.parametrize("loc", NESTED_FUSED)
def test_nested_fused_locations_print_as_upstream(loc):
    text = f"module {{\n}} loc({loc})\n"
    assert print_module(parse_module(text, "fused.mlir", CTX), debuginfo=True) == upstream(text, debuginfo=True)


def test_print_matches_upstream_also_on_its_own_output():
    distinct = DistinctCases()

    @HALF_BUDGET
    @given(batches(modules(), BATCH, str))
    @distinct.examples
    def check(texts: list[str]) -> None:
        not_fixed_points = 0
        for text in filter(distinct.first_time, texts):
            module = parse_module(text, "random.mlir", CTX)
            printed = print_module(module, debuginfo=True)
            assert printed == upstream(text, debuginfo=True)
            reprinted = print_module(parse_module(printed, "printed.mlir", CTX), debuginfo=True)
            # Upstream's own output is not always its fixed point (NESTED_FUSED): read back as upstream reads it.
            if reprinted != printed:
                not_fixed_points += 1
                assert reprinted == upstream(printed, debuginfo=True)
            assert print_module(module) == upstream(text, debuginfo=False)
        if not_fixed_points:  # an event a label an example: the count in its label
            event(f"printed text is not a fixed point (as upstream): {not_fixed_points} of the example's cases")

    check()
    distinct.assert_at_least(HALF)


def test_same_ir_as_xdsl_parser():
    distinct = DistinctCases()

    @HALF_BUDGET
    @given(batches(modules(metadata=False), BATCH, str))
    @distinct.examples
    def check(texts: list[str]) -> None:
        for text in filter(distinct.first_time, texts):
            ours = parse_module(text, "random.mlir", CTX)
            theirs = Parser(CTX, aliases_first(text), "random.mlir").parse_module()
            assert xdsl_generic(ours) == xdsl_generic(theirs)

    check()
    distinct.assert_at_least(HALF)
