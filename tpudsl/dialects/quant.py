"""MLIR's quant dialect types, which TPU-MLIR registers: `!quant.uniform` (per tensor and per axis),
`!quant.calibrated` and `!quant.any`, as xDSL types with Python accessors.

The text syntax is upstream MLIR's (mlir/lib/Dialect/Quant/IR/TypeParser.cpp): storage type
`iN`, `siN`, `uiN` or `uN` (N <= 32) with an optional `<min:max>` storage range, an expressed
float type, an optional `:axis`, then `scale[:zero_point]` or `{s:z,s:z,...}`. Floats follow
MLIR's parseFloat: a literal with a dot, or `0x...` (the bits of a double); a decimal integer is
an error. Beyond upstream, a zero point must lie in the storage range and a calibrated range
must be finite. Sub-channel quantization and float storage types are not modelled: an error.

`body(fmt)` builds the text between the angle brackets with `fmt` spelling each float; the
MLIR-exact printer (ir/attr_text.py) passes MLIR's float format, xDSL's printer a lossless one.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatData,
    IntAttr,
    IntegerType,
    NoneAttr,
    Signedness,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

MAX_STORAGE_BITS = 32  # QuantizedType::MaxStorageBits
MAX_AXIS = 2**31 - 1  # upstream keeps the quantized dimension in an int32

# Expressed types: name, and the smallest and largest positive values (the scale range upstream checks).
_EXPRESSED = {
    Float16Type: ("f16", 2.0**-24, 65504.0),
    BFloat16Type: ("bf16", 2.0**-133, 3.3895313892515355e38),
    Float32Type: ("f32", 2.0**-149, 3.4028234663852886e38),
    Float64Type: ("f64", 5e-324, 1.7976931348623157e308),
}
_STORAGE = re.compile(r"(i|si|ui|u)([0-9]+)")
_PREFIX = {("i", True): Signedness.SIGNLESS, ("si", True): Signedness.SIGNED,
           ("ui", False): Signedness.UNSIGNED, ("u", False): Signedness.SIGNLESS}

FloatFormatter = Callable[[float], str]


def default_range(signed: bool, width: int) -> tuple[int, int]:
    """The storage range an integer of `width` bits holds (QuantizedType's default bounds)."""
    if signed:
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return 0, (1 << width) - 1


def lossless(value: float) -> str:
    """A float literal MLIR and xDSL read back to the same double (xDSL's printer uses it)."""
    return f"{value:.17e}"


# ---- verification shared by the types ------------------------------------------------------


def _expressed_kind(t: Attribute) -> tuple[str, float, float]:
    kind = _EXPRESSED.get(type(t))
    if kind is None:
        raise VerifyException(f"quant: expressed type must be f16, bf16, f32 or f64, not {t}")
    return kind


def _verify_storage(storage: IntegerType, signed: bool, lo: int, hi: int) -> None:
    width = storage.width.data
    if not 0 < width <= MAX_STORAGE_BITS:
        raise VerifyException(f"quant: illegal storage type size: {width}")
    sign = storage.signedness.data
    if (sign == Signedness.SIGNED and not signed) or (sign == Signedness.UNSIGNED and signed):
        raise VerifyException("quant: storage signedness disagrees with the storage type")
    dmin, dmax = default_range(signed, width)
    if hi - lo <= 0 or lo < dmin or hi > dmax:
        raise VerifyException(f"quant: illegal storage min and storage max: ({lo}:{hi})")


def _verify_scale(scale: float, expressed: Attribute) -> None:
    name, smallest, largest = _expressed_kind(expressed)
    if not smallest <= scale <= largest:  # also rejects NaN
        raise VerifyException(f"quant: scale {scale!r} out of expressed type range [{smallest!r}, {largest!r}] of {name}")


def _storage_text(storage: IntegerType, signed: bool, lo: int, hi: int) -> str:
    width = storage.width.data
    sign = storage.signedness.data
    prefix = {Signedness.SIGNED: "si", Signedness.UNSIGNED: "ui"}.get(sign, "i" if signed else "u")
    bounds = "" if (lo, hi) == default_range(signed, width) else f"<{lo}:{hi}>"
    return f"{prefix}{width}{bounds}"


def _params_text(scale: float, zero_point: int, fmt: FloatFormatter) -> str:
    return fmt(scale) + (f":{zero_point}" if zero_point else "")


# ---- the types ---------------------------------------------------------------------------------


class _QuantType(ParametrizedAttribute, TypeAttribute):
    """Printing through `body` for every quant type."""

    def body(self, fmt: FloatFormatter) -> str:
        raise NotImplementedError

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.body(lossless)}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return _TypeReader(parser).read(cls)


@irdl_attr_definition
class UniformQuantizedType(_QuantType):
    """`!quant.uniform<i8:f32, 0.5:-3>` (axis = -1) or per axis `!quant.uniform<i8:f32:0, {0.1,0.2:1}>`.

    real = (stored - zero_point) * scale; stored values lie in [storage_min, storage_max]."""

    name = "quant.uniform"

    storage_type: IntegerType
    signed_storage: IntAttr  # 1: the stored integers are signed (`i8`, `si8`), 0: unsigned (`u8`, `ui8`)
    storage_min: IntAttr
    storage_max: IntAttr
    expressed_type: Attribute
    scale_list: ArrayAttr[FloatData]
    zero_point_list: ArrayAttr[IntAttr]
    axis: IntAttr  # the quantized dimension, -1 when per tensor

    @staticmethod
    def make(storage: str, expressed: Attribute, scales: Sequence[float], zero_points: Sequence[int],
             axis: int | None = None, storage_range: tuple[int, int] | None = None) -> UniformQuantizedType:
        """`make("i8", Float32Type(), [0.5], [-3])`; `storage` is spelled as in the text (i8, u8, si8, ui8)."""
        int_type, signed = storage_type_of(storage)
        lo, hi = storage_range or default_range(signed, int_type.width.data)
        return UniformQuantizedType(
            int_type, IntAttr(int(signed)), IntAttr(lo), IntAttr(hi), expressed,
            ArrayAttr(FloatData(float(s)) for s in scales), ArrayAttr(IntAttr(int(z)) for z in zero_points),
            IntAttr(-1 if axis is None else axis),
        )

    def verify(self) -> None:
        _verify_storage(self.storage_type, self.is_signed, self.storage_type_min, self.storage_type_max)
        scales, zero_points = self.scales, self.zero_points
        if len(scales) != len(zero_points) or not scales:
            raise VerifyException("quant: one zero point per scale, and at least one scale")
        if not -1 <= self.axis.data <= MAX_AXIS:
            raise VerifyException(f"quant: illegal quantized dimension: {self.axis.data}")
        if self.axis.data == -1 and len(scales) != 1:
            raise VerifyException("quant: multiple scales/zeroPoints provided, but quantizedDimension wasn't specified")
        for scale, zero_point in zip(scales, zero_points):
            _verify_scale(scale, self.expressed_type)
            if not self.storage_type_min <= zero_point <= self.storage_type_max:
                raise VerifyException(
                    f"quant: zero point {zero_point} outside the storage range "
                    f"[{self.storage_type_min}, {self.storage_type_max}]"
                )

    # Python accessors
    @property
    def is_signed(self) -> bool:
        return bool(self.signed_storage.data)

    @property
    def storage_width(self) -> int:
        return self.storage_type.width.data

    @property
    def storage_type_min(self) -> int:
        return self.storage_min.data

    @property
    def storage_type_max(self) -> int:
        return self.storage_max.data

    @property
    def is_per_axis(self) -> bool:
        return self.axis.data >= 0

    @property
    def quantized_dimension(self) -> int | None:
        return self.axis.data if self.is_per_axis else None

    @property
    def scales(self) -> tuple[float, ...]:
        return tuple(s.data for s in self.scale_list.data)

    @property
    def zero_points(self) -> tuple[int, ...]:
        return tuple(z.data for z in self.zero_point_list.data)

    @property
    def scale(self) -> float:
        """The scale of a per-tensor type (an error on a per-axis one, which has several)."""
        self._per_tensor("scale")
        return self.scales[0]

    @property
    def zero_point(self) -> int:
        self._per_tensor("zero_point")
        return self.zero_points[0]

    def _per_tensor(self, what: str) -> None:
        if self.is_per_axis:
            raise ValueError(f"{what} of a per-axis type: use {what}s (one per index of axis {self.axis.data})")

    def body(self, fmt: FloatFormatter) -> str:
        head = _storage_text(self.storage_type, self.is_signed, self.storage_type_min, self.storage_type_max)
        head += ":" + _EXPRESSED[type(self.expressed_type)][0]
        pairs = [_params_text(s, z, fmt) for s, z in zip(self.scales, self.zero_points)]
        if self.is_per_axis:
            return f"{head}:{self.axis.data}, {{{','.join(pairs)}}}"
        return f"{head}, {pairs[0]}"


@irdl_attr_definition
class CalibratedQuantizedType(_QuantType):
    """`!quant.calibrated<f32<-2.5:3.1>>`: a float tensor whose values were observed in [min, max]."""

    name = "quant.calibrated"

    expressed_type: Attribute
    min_value: FloatData
    max_value: FloatData

    @staticmethod
    def make(expressed: Attribute, lo: float, hi: float) -> CalibratedQuantizedType:
        return CalibratedQuantizedType(expressed, FloatData(float(lo)), FloatData(float(hi)))

    def verify(self) -> None:
        _expressed_kind(self.expressed_type)
        lo, hi = self.min, self.max
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
            raise VerifyException(f"quant: illegal min and max: ({lo!r}:{hi!r})")

    @property
    def min(self) -> float:
        return self.min_value.data

    @property
    def max(self) -> float:
        return self.max_value.data

    def body(self, fmt: FloatFormatter) -> str:
        return f"{_EXPRESSED[type(self.expressed_type)][0]}<{fmt(self.min)}:{fmt(self.max)}>"


@irdl_attr_definition
class AnyQuantizedType(_QuantType):
    """`!quant.any<i8<-8:7>:f32>`: a storage type (and optionally an expressed type), no parameters."""

    name = "quant.any"

    storage_type: IntegerType
    signed_storage: IntAttr
    storage_min: IntAttr
    storage_max: IntAttr
    expressed_type: Attribute  # NoneAttr when absent

    def verify(self) -> None:
        _verify_storage(self.storage_type, bool(self.signed_storage.data), self.storage_min.data, self.storage_max.data)
        if not isinstance(self.expressed_type, NoneAttr):
            _expressed_kind(self.expressed_type)

    def body(self, fmt: FloatFormatter) -> str:
        text = _storage_text(self.storage_type, bool(self.signed_storage.data), self.storage_min.data, self.storage_max.data)
        if not isinstance(self.expressed_type, NoneAttr):
            text += ":" + _EXPRESSED[type(self.expressed_type)][0]
        return text


QUANT_TYPES = (UniformQuantizedType, CalibratedQuantizedType, AnyQuantizedType)
Quant = Dialect("quant", [], list(QUANT_TYPES))


def storage_type_of(spelling: str) -> tuple[IntegerType, bool]:
    """`i8` -> (i8, signed), `u8` -> (i8, unsigned), `si8`/`ui8` -> (si8/ui8, signed/unsigned)."""
    m = _STORAGE.fullmatch(spelling)
    if m is None:
        raise VerifyException(f"quant: illegal quantized storage type '{spelling}' (iN, siN, uiN or uN)")
    prefix, width = m.group(1), int(m.group(2))
    signed = prefix in ("i", "si")
    if not 0 < width <= MAX_STORAGE_BITS:
        raise VerifyException(f"quant: illegal storage type size: {width}")
    return IntegerType(width, _PREFIX[(prefix, signed)]), signed


# ---- parsing -----------------------------------------------------------------------------------


class _TypeReader:
    """Reads the `<...>` of a quant type as upstream's TypeParser.cpp does, errors at the token."""

    def __init__(self, parser: AttrParser):
        self.p = parser

    def read(self, cls: type[_QuantType]) -> list[Attribute]:
        p = self.p
        p.parse_punctuation("<")
        if cls is CalibratedQuantizedType:
            expressed = self.expressed()
            p.parse_punctuation("<")
            lo = self.float()
            p.parse_punctuation(":")
            hi = self.float()
            p.parse_punctuation(">")
            p.parse_punctuation(">")
            return [expressed, FloatData(lo), FloatData(hi)]
        storage = self.storage()
        if cls is AnyQuantizedType:
            expressed = self.expressed() if p.parse_optional_punctuation(":") else NoneAttr()
            p.parse_punctuation(">")
            return [*storage, expressed]
        p.parse_punctuation(":")
        expressed = self.expressed()
        axis = -1
        if p.parse_optional_punctuation(":"):
            at = p.pos
            if p.parse_optional_punctuation("{"):
                p.raise_error("sub-channel quantization (block sizes) is not modelled", at)
            at = p.pos
            axis = p.parse_integer(allow_boolean=False)
            if not 0 <= axis <= MAX_AXIS:
                p.raise_error(f"illegal quantized dimension: {axis}", at)
        p.parse_punctuation(",")
        if axis >= 0:
            p.parse_punctuation("{")
            pairs = [self.scale_zero(expressed)]
            while p.parse_optional_punctuation(","):
                pairs.append(self.scale_zero(expressed))
            p.parse_punctuation("}")
        else:
            pairs = [self.scale_zero(expressed)]
        p.parse_punctuation(">")
        scales = ArrayAttr(FloatData(s) for s, _ in pairs)
        zero_points = ArrayAttr(IntAttr(z) for _, z in pairs)
        return [*storage, expressed, scales, zero_points, IntAttr(axis)]

    def storage(self) -> list[Attribute]:
        p = self.p
        at = p.pos
        spelling = p.parse_identifier(" (a storage type such as i8 or u8)")
        try:
            int_type, signed = storage_type_of(spelling)
        except VerifyException as e:
            p.raise_error(str(e).removeprefix("quant: "), at)
        lo, hi = default_range(signed, int_type.width.data)
        if p.parse_optional_punctuation("<"):
            at = p.pos
            lo_given = p.parse_integer(allow_boolean=False)
            if lo_given < lo:
                p.raise_error(f"illegal storage type minimum: {lo_given}", at)
            p.parse_punctuation(":")
            at = p.pos
            hi_given = p.parse_integer(allow_boolean=False)
            if hi_given > hi:
                p.raise_error(f"illegal storage type maximum: {hi_given}", at)
            p.parse_punctuation(">")
            lo, hi = lo_given, hi_given
        return [int_type, IntAttr(int(signed)), IntAttr(lo), IntAttr(hi)]

    def expressed(self) -> Attribute:
        at = self.p.pos
        t = self.p.parse_type()
        if type(t) not in _EXPRESSED:
            self.p.raise_error(f"expecting float expressed type (f16, bf16, f32 or f64), found {t}", at)
        return t

    def scale_zero(self, expressed: Attribute) -> tuple[float, int]:
        at = self.p.pos
        scale = self.float()
        try:
            _verify_scale(scale, expressed)
        except VerifyException as e:
            self.p.raise_error(str(e).removeprefix("quant: "), at)
        zero_point = self.p.parse_integer(allow_boolean=False) if self.p.parse_optional_punctuation(":") else 0
        return scale, zero_point

    def float(self) -> float:
        """MLIR's parseFloat: `-`? float literal, or `0x...` holding the bits of a double."""
        p = self.p
        negative = p.parse_optional_punctuation("-") is not None
        value = p.parse_optional_float(allow_negative=False)
        if value is not None:
            return -value if negative else value
        at = p.pos
        text = p.lexer.input.content[at : at + 2]
        number = p.parse_optional_integer(allow_boolean=False, allow_negative=False)
        if number is None:
            p.raise_error("expected floating point literal")
        if text != "0x":
            p.raise_error("unexpected decimal integer literal for a floating point value (add a trailing dot)", at)
        if negative:
            p.raise_error("hexadecimal float literal should not have a leading minus", at)
        if number >= 1 << 64:
            p.raise_error("hexadecimal float constant out of range for type", at)
        return struct.unpack("<d", number.to_bytes(8, "little"))[0]
