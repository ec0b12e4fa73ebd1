"""`#tpu.lg<...>` (tpudsl/dialects/lg.py), TPU-MLIR's layer-group attribute: its text against a
separately written spelling of TpuOps.td's parameter list, round trips through our parser and
printer and through upstream MLIR (the iree oracle, which keeps a dialect attribute it does not
know as written), and the errors that name a field."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_text_oracle import upstream
from tests.feature_tally import FeatureTally
from tpudsl.dialects import make_context
from tpudsl.dialects.lg import LayerGroupAttr
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.parse_base import ParserBase
from tpudsl.ir.parser import parse_module
from tpudsl.ir.printer import print_module

# TpuOps.td's Tpu_LayerGroupAttr parameters, in order, written out again (not read from lg.py).
TD_PARAMS = """out_addr:int out_size:int buffer_addr:int buffer_size:int eu_align:bool can_merge:bool
in_hslice_offset:list n_idx:list n_slice:list c_idx:list c_slice:list d_idx:list d_slice:list h_idx:list
h_slice:list w_idx:list w_slice:list id:int stage:int slice_idx:int group_type:int""".split()
PARAMS = [tuple(p.split(":")) for p in TD_PARAMS]
AXES = "ncdhw"


def _module(attr_text: str) -> str:
    return ('func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n'
            f'  %0 = "tpu.Relu"(%arg0) {{ginfo = {attr_text}}} : (tensor<4xf32>) -> tensor<4xf32>\n'
            '  return %0 : tensor<4xf32>\n}\n')


def _spell(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


@st.composite
def fields(draw):
    """A valid field set: every idx list as long as its slice list, sizes >= 1, counts >= 0."""
    got = {}
    for axis in AXES:
        k = draw(st.integers(0, 4))
        got[f"{axis}_idx"] = draw(st.lists(st.integers(0, 2**40), min_size=k, max_size=k))
        got[f"{axis}_slice"] = draw(st.lists(st.integers(1, 2**40), min_size=k, max_size=k))
    for name, kind in PARAMS:
        if kind == "int":
            got[name] = draw(st.integers(0, 2**63 - 1))
        elif kind == "bool":
            got[name] = draw(st.booleans())
        elif name == "in_hslice_offset":
            got[name] = draw(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3))
    return got


def test_lg_prints_every_parameter_in_tpu_mlir_order():
    values = {name: (3 if kind == "int" else True if kind == "bool" else [1, 2]) for name, kind in PARAMS}
    attr = LayerGroupAttr.make(**values)
    want = "#tpu.lg<" + ", ".join(f"{name} = {_spell(values[name])}" for name, _ in PARAMS) + ">"
    assert print_module(parse_module(_module(want), "m.mlir", make_context())).count(want) == 1
    assert f"#tpu.lg<{attr.body()}>" == want


def test_lg_round_trips_through_our_parser_and_upstream_mlir():
    """Random field values in a random order, some left out: the attribute we read holds them (the
    others their defaults), prints in TpuOps.td's order, reads back equal, and upstream MLIR prints
    our text unchanged. A quarter of the examples leave a field out and write two fields out of
    order by construction (`forced`: group_type, the last field, then out_addr, the first, in front)."""
    tally = FeatureTally(("a field left out", "fields out of order"))
    ctx = make_context()

    def check(values, rnd, data, forced):
        names = [n for n, _ in PARAMS if n in values]
        rnd.shuffle(names)
        if forced:
            names = ["group_type", "out_addr", *(n for n in names if n not in ("group_type", "out_addr"))]
        written = names[:data.draw(st.integers(len(names) // 2, len(names) - forced))]
        if any(f"{a}_idx" in written and f"{a}_slice" not in written for a in AXES) or \
                any(f"{a}_slice" in written and f"{a}_idx" not in written for a in AXES):
            written = [n for n in written if not n.endswith(("_idx", "_slice")) or n == "slice_idx"]
        text = "#tpu.lg<" + ", ".join(f"{n} = {_spell(values[n])}" for n in written) + ">"
        module = parse_module(_module(text), "m.mlir", ctx)
        attr = next(o for o in module.walk() if o.name == "tpu.Relu").attributes["ginfo"]
        defaults = {"eu_align": True}
        for name, kind in PARAMS:
            want = values[name] if name in written else defaults.get(name, 0 if kind == "int" else
                                                                     False if kind == "bool" else [])
            assert attr.get(name) == want, name
        printed = print_module(module)
        assert print_module(parse_module(printed, "p.mlir", ctx)) == printed
        assert upstream(printed, debuginfo=False) == printed
        tally.record(case for case, present in (
            ("a field left out", len(written) < len(names)),
            ("fields out of order", names[:len(written)] != [n for n, _ in PARAMS if n in written])) if present)

    examples = max(30, settings.default.max_examples // 6)
    for forced, share in ((False, 3 / 4), (True, 1 / 4)):
        settings(max_examples=int(examples * share))(given(fields(), st.randoms(use_true_random=False), st.data(),
                                                           st.just(forced))(check))()
    tally.assert_each_in(1 / 4)


@pytest.mark.parametrize(("name", "kind"), PARAMS)
def test_lg_field_of_the_wrong_type_is_an_error_naming_it(name, kind):
    wrong = {"int": "true", "bool": "1", "list": "7"}[kind]
    with pytest.raises(TpudslError, match=f"#tpu.lg field '{name}' must be"):
        parse_module(_module(f"#tpu.lg<{name} = {wrong}>"), "m.mlir", make_context())


@pytest.mark.parametrize("text, message", [
    ("#tpu.lg<id = 1, nidx = [0]>", "#tpu.lg has no field 'nidx'"),
    ("#tpu.lg<id = 1, id = 2>", "#tpu.lg field 'id' is given twice"),
    ("#tpu.lg<w_idx = [0, 8], w_slice = [8]>", "w_idx has 2 entries, w_slice 1"),
    ("#tpu.lg<c_idx = [0], c_slice = [0]>", "c_slice at least 1"),
    ("#tpu.lg<buffer_size = -1>", "'buffer_size' = -1 must not be negative"),
    ("#tpu.lg<out_addr = 9223372036854775808>", "'out_addr' = 9223372036854775808 is not an integer"),
])
def test_lg_bad_text_is_one_error_naming_the_field(text, message):
    with pytest.raises(TpudslError, match=message):
        parse_module(_module(text), "m.mlir", make_context())


def test_lg_make_refuses_an_unknown_field():
    with pytest.raises(Exception, match="#tpu.lg has no field 'out_adr'"):
        LayerGroupAttr.make(out_adr=0)


@pytest.mark.parametrize("values", [{}, {"out_addr": 2**63 - 1, "eu_align": False, "in_hslice_offset": [-(2**63), 5],
                                         "h_idx": [0, 7], "h_slice": [7, 1], "id": 4},
                                    {"can_merge": True, "n_idx": [0], "n_slice": [2], "group_type": 1}])
def test_lg_printed_text_reads_as_token_by_token(values):
    """What we print is read in one match (lg.py's fast path, taken: `_CANONICAL`); the same
    fields spelled with other spacing go token by token; both give the attribute, and a value out
    of range is the same error either way."""
    from tpudsl.dialects.lg import _CANONICAL

    attr = LayerGroupAttr.make(**values)
    canonical = f"#tpu.lg<{attr.body()}>"
    assert _CANONICAL.fullmatch(canonical[len("#tpu.lg"):])
    spaced = canonical.replace(" = ", "  =  ")
    for text in (canonical, spaced):
        module = parse_module(_module(text), "m.mlir", make_context())
        assert next(o for o in module.walk() if o.name == "tpu.Relu").attributes["ginfo"] == attr, text
    for text in (canonical, spaced):
        with pytest.raises(TpudslError, match="'out_size' = -1 must not be negative"):
            parse_module(_module(text.replace("out_size = 0", "out_size = -1").replace("out_size  =  0", "out_size  =  -1")),
                         "m.mlir", make_context())


_LG = f"#tpu.lg<{LayerGroupAttr.make(out_addr=64, n_idx=[0], n_slice=[1], h_idx=[0, 2], h_slice=[2, 2]).body()}>"
_LG2 = _LG.replace("out_addr = 64", "out_addr = 128")


@pytest.mark.parametrize("entries, fast", [
    (f"ginfo = {_LG}", True),  # the dictionary's one entry
    (f"a = [1, 2], ginfo = {_LG}, z = -1.000000e+00 : f64", True),  # between others, order kept
    (f"ginfo = {_LG}, other = {_LG2}", True),  # two in one dictionary
    (f"a = [{_LG}], ginfo = {_LG2}", True),  # one inside a list: read with the rest
    (f'ginfo = {_LG}, s = "x = {_LG2}"', False),  # the text inside a string
    (f"a = {{ginfo = {_LG2}}}, ginfo = {_LG}", False),  # inside a nested dictionary
    (f"ginfo = {_LG.replace(' = ', '  =  ')}", False),  # not our printed text
])
def test_dictionaries_with_lg_read_as_xdsl_reads_them(entries, fast, monkeypatch):
    """The parser reads a dictionary holding `#tpu.lg<...>` without xDSL's parser when it can
    (parse_base.dict_with_canonical_attrs): the op's attributes, keys in order, equal what xDSL's
    own parser builds from the same text."""
    from xdsl.parser import Parser

    taken = []
    reader = ParserBase.dict_with_canonical_attrs

    def recorded(parser, key):
        taken.append(reader(parser, key))
        return taken[-1]

    monkeypatch.setattr(ParserBase, "dict_with_canonical_attrs", recorded)
    text = _module("X").replace("{ginfo = X}", "{" + entries + "}")
    ours = next(o for o in parse_module(text, "m.mlir", make_context()).walk() if o.name == "tpu.Relu")
    xdsl = next(o for o in Parser(make_context(), text).parse_module().walk() if o.name == "tpu.Relu")
    assert list(ours.attributes.items()) == list(xdsl.attributes.items())
    assert (taken[-1] is not None) == fast, taken  # the fast path taken, or left to xDSL's


@pytest.mark.parametrize("good, bad, error", [
    ("out_size = 0", "out_size = -1", "'out_size' = -1 must not be negative"),
    ("h_slice = [2, 2]", "h_slice = [2]", "h_idx has 2 entries, h_slice 1"),
    ("id = 0", "id = x", "'id' must be an integer"),
])
def test_a_bad_lg_among_other_entries_is_one_error_at_its_position(good, bad, error):
    """A `#tpu.lg` the fast path does not accept (out of range, unequal lists, a bad token) is
    xDSL's path's error, with a position, in a dictionary with other entries as alone."""
    text = _module("X").replace("{ginfo = X}", "{a = 1 : i64, ginfo = " + _LG.replace(good, bad) + "}")
    with pytest.raises(TpudslError, match=error) as e:
        parse_module(text, "m.mlir", make_context())
    assert str(e.value).startswith("m.mlir:2:")
