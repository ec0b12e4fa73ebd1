"""Data-driven op definitions: one `OpSpec` row per op becomes an xDSL IRDL operation.

An op of the Top or Tpu dialect is described once, as data:

    OpSpec("top.Conv", operands=("input", "filter", "bias?"),
           attrs={"kernel_shape": A("i64[]", REQUIRED), "group": A("i64", 1), ...},
           shape=conv_shape)

* operands: a name per operand; `name?` is an operand that may be `none` (TPU-MLIR passes a
  `top.None` value for absent optional operands; TableGen's AnyTensorOrNone), `[name]` is an
  operand that may be left out (TableGen's Optional<AnyTensor>, at most one per op, last), and
  `name*` is variadic (at most one per op).
* results: likewise; `output` by default. `name?` is a result that may be `none` (unused).
* attrs: kind and default (see `attrs.py`); `REQUIRED` attributes must be present; a string
  attribute may list its allowed `choices`. The list is closed: an attribute the spec does not
  declare is a verifier error, so a misspelt or unmodelled attribute can never be silently
  ignored (TPU-MLIR's own attributes are declared under TPU-MLIR's names).
* shape: the shape rule `(in_shapes, attrs) -> [out_shape, ...]`. `in_shapes[i]` is a tuple of
  ints, or None for a `none` operand. It raises `ShapeError` on inconsistent input; the verifier
  and `--shape-infer` both use it, so the rule is the single source of truth for result shapes.
  An out_shape of None means "not computable from shapes and attributes" (e.g. a Reshape whose
  shape comes from a tensor operand): the result type must then be given.
* check: extra verification `(in_shapes, attrs) -> None` raising ShapeError (optional).
* moves: the op moves or selects elements without converting them (`Moves`): the verifier
  checks that the named operands and results share one element type.
* region: the op has one single-block region, `body` (tpu.Group); terminator: the op ends
  its block (tpu.Yield); verify: verification that needs the op itself (its parent, its region),
  `op -> None` raising ShapeError.

The generated class keeps every attribute in the discardable dictionary (as TPU-MLIR prints
them, in `{...}`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import FusedLoc, NameLoc, NoneAttr, NoneType, StringAttr, TensorType, UnrankedTensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from tpudsl.dialects.attrs import from_attr, matches, to_attr
from tpudsl.dialects.quant import QUANT_TYPES, CalibratedQuantizedType

Shape = tuple[int, ...]
REQUIRED: Any = object()


class ShapeError(Exception):
    """An op's operands, attributes or result types contradict each other."""


@dataclass(frozen=True)
class A:
    """Attribute spec: its kind, its default (None: optional without default), for string
    enums the allowed values, and, when TPU-MLIR allows values we do not model, the ones we do
    (`supported`: any other value is a verifier error, never silently ignored; `modelled=False`:
    TPU-MLIR's attribute, but any value of it is an error)."""

    kind: str
    default: Any = None
    choices: tuple[str, ...] = ()
    supported: tuple[Any, ...] = ()
    modelled: bool = True


@dataclass(frozen=True)
class Moves:
    """An op that moves or selects elements of `operands` into `results` without converting
    them (Reshape, Concat, Gather's data, MaxPool, ...): every tensor among them has one element
    type. Names are the spec's, without `?`, `*` or `[]`; a `none` value is left out. A calibrated
    type counts as its expressed type (a range is a statistic of one tensor, not a conversion);
    a `!quant.uniform` type is compared whole (another scale or zero point would need a
    requantization, which such an op does not do). docs/dialect.md "Element types". `when`
    (attribute, value): the op moves only with that value, an absent attribute its default
    (tpu.Pool2D's Max, not its Avg; a scatter replacing, not reducing)."""

    operands: tuple[str, ...] = ("input",)
    results: tuple[str, ...] = ("output",)
    when: tuple[str, Any] | None = None


MOVES = Moves()  # input -> output, the common case


ShapeRule = Callable[[Sequence[Shape | None], "AttrView"], Sequence[Shape | None]]
CheckRule = Callable[[Sequence[Shape | None], "AttrView"], None]


@dataclass
class OpSpec:
    name: str
    operands: tuple[str, ...] = ("input",)
    results: tuple[str, ...] = ("output",)
    attrs: dict[str, A] = field(default_factory=dict)
    shape: ShapeRule | None = None
    check: CheckRule | None = None
    summary: str = ""
    moves: Moves | None = None
    region: bool = False
    terminator: bool = False
    verify: Callable[[Operation], None] | None = None


class AttrView(Mapping[str, Any]):
    """Python values of an op's attributes, with the spec's defaults filled in."""

    __slots__ = ("_attrs", "_spec")

    def __init__(self, attributes: Mapping[str, Attribute], spec: OpSpec):
        self._attrs = attributes
        self._spec = spec

    def __getitem__(self, key: str) -> Any:
        if key in self._attrs:
            return from_attr(self._attrs[key])
        if key in self._spec.attrs:
            default = self._spec.attrs[key].default
            if default is REQUIRED:
                raise KeyError(key)
            return default
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        yield from dict.fromkeys([*self._spec.attrs, *self._attrs])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            value = self[key]
        except KeyError:
            return default
        return default if value is None else value


# The table of every defined op, keyed by its full name ("top.Conv").
SPECS: dict[str, OpSpec] = {}

_TensorLike = base(TensorType) | base(UnrankedTensorType)
_TensorOrNone = _TensorLike | base(NoneType)


def operand_shape(value: SSAValue) -> Shape | None:
    """The static shape of a value, or None when it is `none` or unranked."""
    t = value.type
    if isinstance(t, TensorType):
        return tuple(t.get_shape())
    return None


def loc_name(op: Operation) -> str:
    """The user-visible name of an op: the string of its NameLoc, or '' when it has none."""
    loc = op.location
    desc = getattr(loc, "desc", None)
    if desc is not None:
        return desc.data
    return ""


def value_name(value: SSAValue) -> str:
    """The user-visible name of a value: its op's loc name, or the result's part of a fused loc
    (an op with several named results, e.g. a tpu.Group)."""
    op = value.owner
    parts = getattr(op.location, "locations", None)
    if isinstance(op, Operation) and parts is not None and len(parts.data) == len(op.results):
        return getattr(parts.data[value.index], "desc", StringAttr("")).data  # type: ignore[attr-defined]
    return loc_name(op) if isinstance(op, Operation) else ""


def result_names(op: Operation) -> list[str]:
    """Loc names of an op's results: a fused loc names each result, else `name`, `name_1`, ..."""
    loc = op.location
    if isinstance(loc, FusedLoc) and len(loc.locations.data) == len(op.results):
        names = [sub.desc.data if isinstance(sub, NameLoc) else "" for sub in loc.locations.data]
        if all(names):
            return names
    name = loc_name(op) or f"{op.name}@{id(op):x}"
    return [name if i == 0 else f"{name}_{i}" for i in range(len(op.results))]


def op_label(op: Operation) -> str:
    """The name users see for an op: its loc name, or for an op whose fused loc names each result,
    those names (`tv, ti`); '' when it has none."""
    return loc_name(op) or ", ".join(n for n in map(value_name, op.results) if n)


def derived_loc(op: Operation, suffix: str) -> Attribute:
    """The location of an op made for, or a value changed from, `op`: `<name>_<suffix>`
    (names survive: a changed value gets a derived name)."""
    return NameLoc(StringAttr(f"{loc_name(op)}_{suffix}"), NoneAttr())


def producer(value: SSAValue, name: str) -> Operation | None:
    """The op producing `value` when it is an op called `name`."""
    owner = value.owner
    return owner if isinstance(owner, Operation) and owner.name == name else None


def is_none(value: SSAValue) -> bool:
    """Whether `value` is `top.None`: an absent optional operand."""
    return producer(value, "top.None") is not None


def describe(op: Operation) -> str:
    """How messages name an op: `'top.Conv' op "conv1"` (`op_label`, when it has one)."""
    name = op_label(op)
    return f"'{op.name}' op" + (f' "{name}"' if name else "")


def check_attributes(op: Operation, spec: OpSpec) -> None:
    """Every attribute is declared, required ones are present, and each has its kind (and choice)."""
    for key in op.attributes:
        if key not in spec.attrs:
            raise ShapeError(f"has attribute '{key}', which {op.name} does not define")
    for key, a in spec.attrs.items():
        attr = op.attributes.get(key)
        if attr is None:
            if a.default is REQUIRED:
                raise ShapeError(f"requires attribute '{key}'")
        elif not matches(a.kind, attr):
            raise ShapeError(f"attribute '{key}' should be {a.kind}, got {attr}")
        elif a.choices and from_attr(attr) not in a.choices:
            raise ShapeError(f"attribute '{key}' is {from_attr(attr)!r}, expected one of {', '.join(a.choices)}")
        elif not a.modelled:
            raise ShapeError(f"attribute '{key}' is not supported")
        elif a.supported and from_attr(attr) not in a.supported:
            shown = ", ".join(map(_show, a.supported))
            raise ShapeError(f"attribute '{key}' = {_show(from_attr(attr))} is not supported (supported: {shown})")
    for i, o in enumerate(spec.operands):
        if not o.endswith(("?", "*", "]")) and i < len(op.operands) and isinstance(op.operands[i].type, NoneType):
            raise ShapeError(f"operand '{o}' must be a tensor, got none")


def check_moves(op: Operation, moves: Moves) -> None:
    """The element types of what a data-movement op moves are one (see `Moves`)."""
    if moves.when is not None:
        key, value = moves.when
        attr = op.attributes.get(key)
        if (SPECS[op.name].attrs[key].default if attr is None else from_attr(attr)) != value:  # absent: its default
            return
    named = [(name, getattr(op, name)) for name in moves.operands]
    one_result = len(op.results) == 1 and moves.results == ("output",)
    named += [("result" if one_result else name, getattr(op, name)) for name in moves.results]
    values = []
    for name, v in named:
        if isinstance(v, SSAValue) or v is None:
            values.append((name, v))
        else:  # variadic
            values += [(f"{name} #{i}", x) for i, x in enumerate(v)]
    typed = [(name, v.type.element_type) for name, v in values
             if v is not None and isinstance(v.type, TensorType | UnrankedTensorType)]
    for name, element in typed[1:]:
        if _moved(element) != _moved(typed[0][1]):
            raise ShapeError(f"{name} element type {_text(element)} differs from {typed[0][0]} element type "
                             f"{_text(typed[0][1])}: it moves elements without converting them")


def _text(element: Attribute) -> str:
    """An element type for a message: a quant type's floats as Python writes them (0.25, not
    2.50000000000000000e-01)."""
    return f"!{element.name}<{element.body(repr)}>" if isinstance(element, QUANT_TYPES) else str(element)


def _moved(element: Attribute) -> Attribute:
    """What a data-movement op must keep of an element type: a calibrated type's expressed type."""
    return element.expressed_type if isinstance(element, CalibratedQuantizedType) else element


def _show(value: Any) -> str:
    """An attribute's Python value as IR text writes it (`true`, `[0, 1]`, `"s"`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(map(_show, value)) + "]"
    return str(value)


def infer_shapes(op: Operation, spec: OpSpec) -> list[Shape | None] | None:
    """Result shapes by the op's check and shape rule; None when the op has no rule or some
    operand is unranked. Raises ShapeError when operands and attributes contradict each other."""
    check_attributes(op, spec)
    if spec.shape is None or any(isinstance(v.type, UnrankedTensorType) for v in op.operands):
        return None
    shapes = [operand_shape(v) for v in op.operands]
    attrs = AttrView(op.attributes, spec)
    if spec.check is not None:
        spec.check(shapes, attrs)
    inferred = [None if s is None else tuple(s) for s in spec.shape(shapes, attrs)]
    if len(inferred) != len(op.results):
        raise ShapeError(f"has {len(op.results)} results, its operands and attributes give {len(inferred)}")
    return inferred


def _verify(op: Operation) -> None:
    spec = SPECS[op.name]
    try:
        inferred = infer_shapes(op, spec)
        if spec.moves is not None:
            check_moves(op, spec.moves)
        if spec.verify is not None:
            spec.verify(op)
    except ShapeError as e:
        raise VerifyException(f"{describe(op)} {e}") from None
    for i, (res, want) in enumerate(zip(op.results, inferred or (), strict=False)):
        if want is not None and isinstance(res.type, TensorType) and tuple(res.type.get_shape()) != want:
            raise VerifyException(
                f"{describe(op)} result #{i} has type {res.type}, but its operands and attributes give shape {fmt_shape(want)}"
            )


def fmt_shape(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape)) or "scalar"


def _check_moves_names(spec: OpSpec, moves: Moves) -> None:
    """`moves` names operands and results the op has (a misspelt name would check nothing)."""
    for names, declared in ((moves.operands, spec.operands), (moves.results, spec.results)):
        known = {d.strip("?*[]") for d in declared}
        for name in names:
            if name not in known:
                raise ValueError(f"{spec.name}: moves names {name!r}, which is not one of {sorted(known)}")
    if moves.when is not None and moves.when[0] not in spec.attrs:
        raise ValueError(f"{spec.name}: moves depends on attribute {moves.when[0]!r}, which it does not declare")


def _class_name(op_name: str) -> str:
    dialect, mnemonic = op_name.split(".", 1)
    return dialect.capitalize() + re.sub(r"\W", "_", mnemonic) + "Op"


def define(spec: OpSpec) -> type[IRDLOperation]:
    """Register `spec` in SPECS and build its IRDL operation class."""
    if spec.name in SPECS:
        raise ValueError(f"op {spec.name} defined twice")
    if spec.moves is not None:
        _check_moves_names(spec, spec.moves)
    SPECS[spec.name] = spec
    body: dict[str, Any] = {"name": spec.name, "__doc__": spec.summary or spec.name}
    for o in spec.operands:
        if o.endswith("*"):
            body[o[:-1]] = var_operand_def(_TensorOrNone)
        elif o.endswith("?"):
            body[o[:-1]] = operand_def(_TensorOrNone)
        elif o.startswith("["):
            body[o[1:-1]] = opt_operand_def(_TensorOrNone)
        else:
            body[o] = operand_def(_TensorLike | base(NoneType))
    for r in spec.results:
        if r.endswith("*"):
            body[r[:-1]] = var_result_def(_TensorOrNone)
        else:
            body[r.rstrip("?")] = result_def(_TensorOrNone)
    if spec.region:
        body["body"] = region_def("single_block")
    body["traits"] = traits_def(Pure(), *([IsTerminator()] if spec.terminator else []))
    body["verify_"] = _verify
    cls = irdl_op_definition(type(_class_name(spec.name), (IRDLOperation,), body))
    OP_CLASSES[spec.name] = cls
    return cls


OP_CLASSES: dict[str, type[IRDLOperation]] = {}


def create(
    name: str,
    operands: Sequence[SSAValue],
    result_types: Sequence[Attribute],
    attrs: Mapping[str, Any] | None = None,
    loc: str | Attribute | None = None,
) -> Operation:
    """Build op `name` from Python attribute values (converted by the spec's kinds).

    `loc` is the op's user-visible name (a string becomes `loc("name")`)."""
    spec = SPECS[name]
    attributes: dict[str, Attribute] = {}
    for key, value in (attrs or {}).items():
        if value is None:
            continue
        if key not in spec.attrs:
            raise ValueError(f"{name} has no attribute {key!r}")
        attributes[key] = value if isinstance(value, Attribute) else to_attr(spec.attrs[key].kind, value)
    location = NameLoc(StringAttr(loc), NoneAttr()) if isinstance(loc, str) else loc
    return OP_CLASSES[name].create(
        operands=list(operands),
        result_types=list(result_types),
        attributes=attributes,
        location=location,  # type: ignore[arg-type]
    )



def probe_shapes(name: str, operands: Sequence[SSAValue], result_types: Sequence[Attribute],
                 attrs: Mapping[str, Any] | None = None, loc: str | Attribute | None = None) -> list[Shape | None]:
    """The result shapes op `name` would have on `operands`, by its shape rule, from a probe op that
    is never inserted (its uses are dropped again, so the operands' users are not miscounted).
    ShapeError naming the op (`describe`) when the rule refuses them."""
    probe = create(name, operands, result_types, attrs, loc)
    try:
        return infer_shapes(probe, SPECS[name]) or []
    except ShapeError as e:
        raise ShapeError(f"{describe(probe)} {e}") from None
    finally:
        probe.drop_all_references()


def rule_shape(name: str, operands: Sequence[SSAValue], result_types: Sequence[Attribute],
               attrs: Mapping[str, Any] | None, loc: str) -> Shape:
    """The first result's shape op `name` would have on `operands` (probe_shapes); ShapeError naming
    the op when its rule refuses them or cannot tell that shape."""
    shapes = probe_shapes(name, operands, result_types, attrs, loc)
    if not shapes or shapes[0] is None:
        raise ShapeError(f"'{name}' op \"{loc}\": the shape of its result is unknown")
    return shapes[0]


def create_shaped(name: str, operands: Sequence[SSAValue], element: Attribute,
                  attrs: Mapping[str, Any] | None, loc: str) -> Operation:
    """Op `name` (one result of `element`) whose result shape is the one its shape rule gives
    (rule_shape), for an op a pass or the frontend builds where no shape is known beforehand."""
    shape = rule_shape(name, operands, [UnrankedTensorType(element)], attrs, loc)
    return create(name, operands, [TensorType(element, shape)], attrs, loc)
