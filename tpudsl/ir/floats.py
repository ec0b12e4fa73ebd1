"""Float literals exactly as MLIR prints them (AsmPrinter's printFloatValue over llvm::APFloat).

MLIR first tries APFloat::toString(6 significant digits, no padding, keep zeros), e.g.
`1.200000e+00`, and keeps it when it reads back to the same bits in the attribute's float type.
Otherwise it uses APFloat's default toString (enough digits to round-trip, `E` notation, up to
3 zeros of padding), e.g. `9.9999997473787516E-6`, and when even that is not a float literal
(inf, nan) the bits in hex, `0x7FC00000`.

APFloat's digit generation truncates before it rounds, so it differs from Python's repr and
`%e` in the last digit for some values; we follow its integer algorithm step by step.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from typing import NamedTuple


class FloatFormat(NamedTuple):
    """An IEEE-754 binary format: significand bits (with the hidden bit), exponent range, width."""

    precision: int
    emax: int
    bits: int
    pack: str  # struct code for the value's bits, '' when struct has none


FORMATS = {
    "f64": FloatFormat(53, 1023, 64, "d"),
    "f32": FloatFormat(24, 127, 32, "f"),
    "f16": FloatFormat(11, 15, 16, "e"),
    "bf16": FloatFormat(8, 127, 16, ""),
}


def format_float(value: float, kind: str) -> str:
    """`value` (already representable in `kind`) as MLIR prints a FloatAttr of that type."""
    fmt = FORMATS[kind]
    if math.isfinite(value):
        short = apfloat_to_string(value, fmt, precision=6, max_padding=0, truncate_zero=False)
        if round_to_format(Fraction(short), fmt) == Fraction(value) and _same_sign(short, value):
            return short
        default = apfloat_to_string(value, fmt, precision=0, max_padding=3, truncate_zero=True)
        if "." in default:
            return default
    return hex_bits(value, fmt)


def _same_sign(text: str, value: float) -> bool:
    # Fraction("-0.0") == 0 loses the sign of zero; APFloat's bitwise compare keeps it.
    return text.startswith("-") == (math.copysign(1.0, value) < 0)


def hex_bits(value: float, fmt: FloatFormat) -> str:
    """The bits of `value` in `fmt` as MLIR's hex float literal (`0x7FC00000`)."""
    if fmt.pack:
        raw = int.from_bytes(struct.pack(">" + fmt.pack, value), "big")
    else:  # bf16: the top half of the f32 bits (value is exactly representable)
        raw = int.from_bytes(struct.pack(">f", value), "big") >> 16
    return f"0x{raw:0{fmt.bits // 4}X}"


def round_to_format(x: Fraction, fmt: FloatFormat) -> Fraction | float:
    """`x` rounded to nearest-even in `fmt` (what APFloat's decimal parser does); inf on overflow."""
    if x == 0:
        return Fraction(0)
    sign = -1 if x < 0 else 1
    a = abs(x)
    emin = 1 - fmt.emax
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)  # subnormals share the minimum exponent
    scale = Fraction(2) ** (e - fmt.precision + 1)
    q, r = divmod(a / scale, 1)
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and q % 2 == 1):
        q += 1
    result = q * scale
    largest = (2 - Fraction(2) ** (1 - fmt.precision)) * Fraction(2) ** fmt.emax
    if result > largest:
        return sign * math.inf
    return sign * result


def apfloat_to_string(value: float, fmt: FloatFormat, precision: int, max_padding: int, truncate_zero: bool) -> str:
    """llvm::APFloat::toString(Str, FormatPrecision, FormatMaxPadding, TruncateZero) for a finite value."""
    negative = math.copysign(1.0, value) < 0
    sign = "-" if negative else ""
    if value == 0:
        if max_padding:
            return sign + "0"
        if truncate_zero:
            return sign + "0.0E+0"
        return sign + "0.0" + "0" * max(precision - 1, 0) + "e+00"
    mantissa, den = Fraction(abs(value)).as_integer_ratio()
    exp2 = -(den.bit_length() - 1)  # den is a power of two
    if not precision:
        precision = 2 + fmt.precision * 59 // 196
    # significand * 2^exp2 -> significand * 10^exp (exact), as APFloat does with 5^e.
    if exp2 >= 0:
        significand, exp = mantissa << exp2, 0
    else:
        significand, exp = mantissa * 5 ** (-exp2), exp2
    significand, exp = _truncate_bits(significand, exp, precision)
    digits = str(significand).rstrip("0")
    exp += len(str(significand)) - len(digits)
    digits, exp = _round_digits(digits, exp, precision)
    return sign + _layout(digits, exp, precision, max_padding, truncate_zero)


def _truncate_bits(significand: int, exp: int, precision: int) -> tuple[int, int]:
    # AdjustToPrecision(APInt&): drop whole powers of ten beyond the needed bits, truncating.
    bits = significand.bit_length()
    bits_required = (precision * 196 + 58) // 59
    if bits <= bits_required:
        return significand, exp
    removable = (bits - bits_required) * 59 // 196
    if not removable:
        return significand, exp
    return significand // 10**removable, exp + removable


def _round_digits(digits: str, exp: int, precision: int) -> tuple[str, int]:
    # AdjustToPrecision(buffer): round half up to `precision` digits, dropping trailing zeros.
    n = len(digits)
    if n <= precision:
        return digits, exp
    keep, dropped_first = digits[:precision], digits[precision]
    exp += n - precision
    if dropped_first < "5":
        stripped = keep.rstrip("0")
        return stripped, exp + len(keep) - len(stripped)
    rounded = str(int(keep) + 1)
    if len(rounded) > len(keep):  # carried through every digit: exactly one digit left
        return "1", exp + len(keep)
    stripped = rounded.rstrip("0")
    return stripped, exp + len(rounded) - len(stripped)


def _layout(digits: str, exp: int, precision: int, max_padding: int, truncate_zero: bool) -> str:
    n = len(digits)
    if not max_padding:
        scientific = True
    elif exp >= 0:
        scientific = exp > max_padding or n + exp > precision
    else:
        msd = exp + n - 1
        scientific = msd < 0 and -msd > max_padding
    if scientific:
        exp10 = exp + n - 1
        out = digits[0] + "."
        if n == 1 and truncate_zero:
            out += "0"
        else:
            out += digits[1:]
        if not truncate_zero and precision > n - 1:
            out += "0" * (precision - n + 1)
        exp_digits = str(abs(exp10))
        if not truncate_zero and len(exp_digits) < 2:
            exp_digits = "0" + exp_digits
        return f"{out}{'E' if truncate_zero else 'e'}{'+' if exp10 >= 0 else '-'}{exp_digits}"
    if exp >= 0:
        return digits + "0" * exp
    whole = exp + n
    if whole > 0:
        return digits[:whole] + "." + digits[whole:]
    return "0." + "0" * (-whole) + digits
