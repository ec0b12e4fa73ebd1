"""Parse `--input_shapes`: nested lists of integers, `[[1,3,224,224],[10]]` (TPU-MLIR's syntax).

A single flat list (`[1,3,224,224]`) means one input; `[]` inside is a scalar input."""

from __future__ import annotations

from lark import Lark, Transformer, exceptions

from tpudsl.ir.diagnostics import TpudslError

_GRAMMAR = r"""
start: shapes | shape
shapes: "[" shape ("," shape)* "]"
shape: "[" [INT ("," INT)*] "]"
INT: /[0-9]+/
%ignore /\s+/
"""


class _ToLists(Transformer):
    def start(self, items):
        (value,) = items
        return list(value) if isinstance(value, tuple) else [value]  # a lone shape is one input

    def shapes(self, items):
        return tuple(items)

    def shape(self, items):
        return [int(t) for t in items if t is not None]


# Shapes are int64 in ONNX and MLIR.
MAX_ELEMENTS = 2**63 - 1

_PARSER = Lark(_GRAMMAR, parser="lalr", transformer=_ToLists())


def parse_input_shapes(text: str) -> list[list[int]]:
    """`[[1,3,224,224],[10]]` -> [[1, 3, 224, 224], [10]]; a TpudslError for anything else."""
    try:
        shapes = _PARSER.parse(text)
    except exceptions.LarkError:
        raise TpudslError(f"--input_shapes {text!r} is not a list of shapes like [[1,3,224,224],[10]]") from None
    for shape in shapes:
        elements = 1
        for d in shape:
            elements *= d
        if any(d > MAX_ELEMENTS for d in shape) or elements > MAX_ELEMENTS:
            raise TpudslError(f"--input_shapes: shape {shape} has more than 2^63-1 elements")
    return shapes
