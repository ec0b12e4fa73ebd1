"""Float attributes print exactly as upstream MLIR prints them (printFloatValue over APFloat)."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st
from iree.compiler import ir

from tpudsl.ir.floats import format_float
from upstream_mlir import UPSTREAM_CONTEXT

WIDTH = {"f64": 64, "f32": 32, "f16": 16, "bf16": 16}


def value_of(bits: int, kind: str) -> float:
    if kind == "f64":
        return struct.unpack("<d", bits.to_bytes(8, "little"))[0]
    if kind == "f32":
        return struct.unpack("<f", bits.to_bytes(4, "little"))[0]
    if kind == "f16":
        return struct.unpack("<e", bits.to_bytes(2, "little"))[0]
    return struct.unpack("<f", (bits << 16).to_bytes(4, "little"))[0]


def upstream_floats(items: list[tuple[int, str]]) -> list[str]:
    """How upstream MLIR prints each (bit pattern, float type) as an attribute value."""
    body = ", ".join(f"a{i} = 0x{bits:0{WIDTH[kind] // 4}X} : {kind}" for i, (bits, kind) in enumerate(items))
    with UPSTREAM_CONTEXT:
        op = ir.Module.parse(f'"x.a"() {{{body}}} : () -> ()').body.operations[0]
        return [str(op.attributes[f"a{i}"]).rsplit(" : ", 1)[0] for i in range(len(items))]


def finite(bits: int, kind: str) -> bool:
    v = value_of(bits, kind)
    return v == v and abs(v) != float("inf")


bit_patterns = st.one_of(
    st.tuples(st.integers(0, 2**64 - 1), st.just("f64")),
    st.tuples(st.integers(0, 2**32 - 1), st.just("f32")),
    st.tuples(st.integers(0, 2**16 - 1), st.just("f16")),
    st.tuples(st.integers(0, 2**16 - 1), st.just("bf16")),
)
# Decimal-looking values (short decimals, scaled) hit the 6-digit form more often than random bits.
decimals = st.tuples(st.integers(-999999, 999999), st.integers(-12, 12), st.sampled_from(["f64", "f32"])).map(
    lambda t: (int.from_bytes(struct.pack("<d" if t[2] == "f64" else "<f", t[0] * 10.0 ** t[1]), "little"), t[2])
)


@given(st.lists(bit_patterns.filter(lambda p: finite(*p)) | decimals, min_size=1, max_size=30))
def test_finite_floats_match_upstream(items):
    assert [format_float(value_of(b, k), k) for b, k in items] == upstream_floats(items)


def test_special_values_match_upstream():
    items = [
        (0x7FF8000000000000, "f64"), (0xFFF0000000000000, "f64"), (0x7FF0000000000000, "f64"),
        (0x7FC00000, "f32"), (0xFF800000, "f32"), (0x7C00, "f16"), (0x7FC0, "bf16"),
        (0x0000000000000001, "f64"), (0x8000000000000000, "f64"), (0x00000001, "f32"), (0x0001, "f16"),
    ]
    assert [format_float(value_of(b, k), k) for b, k in items] == upstream_floats(items)


def test_tpu_mlir_sample_values():
    # The forms quoted in TPU-MLIR files (test_origin.mlir: epsilon, b_val).
    assert format_float(struct.unpack("<f", struct.pack("<f", 1e-5))[0], "f64") == "9.9999997473787516E-6"
    assert format_float(1.2, "f64") == "1.200000e+00"
    assert format_float(-1.0, "f64") == "-1.000000e+00"
