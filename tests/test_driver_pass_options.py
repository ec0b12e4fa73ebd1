"""The pass-option and pipeline grammar: TPU-MLIR's real option strings, round trips, errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tpudsl.cli.pass_options import OptionValue, PassSpec, parse_options, parse_pipeline
from tpudsl.ir.diagnostics import TpudslError


def items(options: dict[str, OptionValue]) -> dict[str, tuple[str, ...] | None]:
    return {key: value.items for key, value in options.items()}


def test_tpu_mlir_lowering_options_parse_as_written_by_its_scripts():
    # From TPU-MLIR's mlir_shell.py (tpu_opt_options): empty values are followed by a space.
    text = "quant_input=False quant_output=False quant_input_list= quant_output_list= quant_output_bf16=False "
    assert items(parse_options(text)) == {
        "quant_input": ("False",),
        "quant_output": ("False",),
        "quant_input_list": (),
        "quant_output_list": (),
        "quant_output_bf16": ("False",),
    }


def test_layer_group_options_with_an_empty_value_last():
    assert items(parse_options("opt=2 group_by_cores=auto config_filename= lghash_dir=")) == {
        "opt": ("2",),
        "group_by_cores": ("auto",),
        "config_filename": (),
        "lghash_dir": (),
    }


def test_values_are_words_quoted_strings_or_comma_lists():
    parsed = parse_options("model_file=out/x.bmodel cutLocs=a,b/c,\"d e\" name='it\\'s' flag")
    assert items(parsed) == {
        "model_file": ("out/x.bmodel",),
        "cutLocs": ("a", "b/c", "d e"),
        "name": ("it's",),
        "flag": None,
    }


def test_a_key_must_start_with_a_letter():
    with pytest.raises(TpudslError, match="unexpected"):
        parse_options("1x=2")


def test_values_keep_their_text_for_the_field_type_to_decide():
    parsed = parse_options('a=1 b=1.5e-3 c=true d="1" e=0x10')
    assert items(parsed) == {"a": ("1",), "b": ("1.5e-3",), "c": ("true",), "d": ("1",), "e": ("0x10",)}
    assert OptionValue(("a", "b")).text == "a,b"


def test_pipelines_in_xdsl_and_mlir_form_give_the_same_specs():
    want = [
        PassSpec("shape-infer", {}),
        PassSpec("codegen", {"model_file": OptionValue(("x.bmodel",)), "embed_debug_info": OptionValue(("true",))}),
        PassSpec("dce", {}),
    ]
    assert parse_pipeline("shape-infer,codegen{model_file=x.bmodel embed_debug_info=true},dce") == want
    assert parse_pipeline("builtin.module( shape-infer , codegen{ model_file=x.bmodel embed_debug_info=true } , dce )") == want
    assert parse_pipeline("") == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("a,,b", "error: cannot parse pass pipeline 'a,,b': unexpected ',' at column 3"),
        ("a{x=1", "error: cannot parse pass pipeline 'a{x=1': unexpected end of text"),
        ("a b", "error: cannot parse pass pipeline 'a b': unexpected 'b' at column 3"),
        ('a{x="1}', "error: cannot parse pass pipeline 'a{x=\"1}': unexpected character at column 5"),
        ("func.func(a)", "error: pass pipeline anchor 'func.func' is not supported; use builtin.module(...)"),
        ("a{x=1 x=2}", "error: option 'x' is given twice"),
    ],
)
def test_malformed_pipelines_are_errors_with_a_column(text, message):
    with pytest.raises(TpudslError) as info:
        parse_pipeline(text)
    assert str(info.value) == message


# the alphabets ASCII (what the patterns allow anyway): hypothesis' default, utf-8, costs a scan of
# every code point once per process without its on-disk cache (a fresh clone)
_ASCII = st.characters(codec="ascii")
_KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True, alphabet=_ASCII)
_WORDS = st.from_regex(r"[A-Za-z0-9_./:+-]{1,10}", fullmatch=True, alphabet=_ASCII).map(lambda w: (w, w))
_STRINGS = st.text(st.characters(codec="ascii", exclude_characters="\\\"\x00"), max_size=10).map(
    lambda s: (f'"{s}"', s)
)
_VALUES = st.one_of(st.none(), st.lists(st.one_of(_WORDS, _STRINGS), max_size=3))


@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_rendered_options_parse_back_to_the_same_values(options):
    """Each value is (how it is written, what it means): bare words and double-quoted strings."""
    rendered = [key if value is None else key + "=" + ",".join(text for text, _ in value) for key, value in options.items()]
    text = " ".join(rendered)
    expected = {k: (None if v is None else tuple(meaning for _, meaning in v)) for k, v in options.items()}
    assert items(parse_options(text)) == expected
    (spec,) = parse_pipeline("p{" + text + "}")
    assert items(spec.options) == expected
