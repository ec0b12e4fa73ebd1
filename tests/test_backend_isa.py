"""The instruction records: every record type encodes to its fixed size and decodes back to itself,
a stream decodes record by record, and a bad stream is one clear error."""

from __future__ import annotations

import struct
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from tpudsl.backend import isa
from tpudsl.ir.diagnostics import TpudslError

_RANGES = {"B": 255, "H": 2**16 - 1, "I": 2**32 - 1, "Q": 2**64 - 1, "q": 2**63 - 1}
_SIGNED = {"b": 2**7, "i": 2**31}  # signed codes: [-x, x - 1]


def _field_codes(cls: type[isa.Record]) -> list[str]:
    """One struct code per field (written out from FORMAT's counts, e.g. "5I" -> I x 5)."""
    return _codes(cls.FORMAT)


def _codes(fmt: str) -> list[str]:
    codes, count = [], ""
    for ch in fmt:
        if ch.isdigit():
            count += ch
        else:
            codes += [ch] * int(count or 1)
            count = ""
    return codes


@st.composite
def records(draw):
    cls = draw(st.sampled_from(sorted(isa.RECORDS.values(), key=lambda c: c.OPCODE)))
    values = []
    for code, _f in zip(_field_codes(cls), fields(cls), strict=True):
        if code == "f":
            values.append(float(np.float32(draw(st.floats(allow_nan=False, width=32)))))
        elif code == "d":
            values.append(draw(st.floats(allow_nan=False)))
        elif code in _SIGNED:
            values.append(draw(st.integers(-_SIGNED[code], _SIGNED[code] - 1)))
        else:
            values.append(draw(st.integers(0, _RANGES[code])))
    event(cls.__name__)
    return cls(*values)


@given(st.lists(records(), min_size=1, max_size=8))
def test_records_round_trip(rs):
    data = isa.encode(rs)
    assert len(data) == sum(struct.calcsize("<B" + type(r).FORMAT) for r in rs)
    assert isa.decode(data) == rs
    assert data[0] == rs[0].OPCODE


def test_opcode_first_and_known_layout():
    r = isa.GdmaCopy(src=0x1000, dst=0x2000, nbytes=64)
    assert r.encode() == bytes([3]) + struct.pack("<QQQ", 0x1000, 0x2000, 64)


def test_bad_streams_name_the_instruction():
    good = isa.GdmaCopy(1, 2, 3).encode()
    unknown = max(set(range(256)) - set(isa.RECORDS))  # no record has it, whichever records are added
    with pytest.raises(TpudslError, match=rf"unknown opcode {unknown} at byte 25 \(instruction 1\)"):
        isa.decode(good + bytes([unknown]))
    with pytest.raises(TpudslError, match=r"instruction 1 \(GdmaCopy\) is truncated"):
        isa.decode(good + good[:-1])


def _layout() -> dict[int, tuple[str, list[str]]]:
    """tests/data/isa_layout.txt: the records' wire layout as written by hand before FORMAT was computed."""
    rows = [line.split() for line in (Path(__file__).parent / "data" / "isa_layout.txt").read_text().splitlines()
            if line and not line.startswith("#")]
    return {int(opcode): (fmt, names) for opcode, fmt, *names in rows}


@pytest.mark.parametrize("opcode", sorted(_layout()))
def test_record_layout_is_the_written_one(opcode):
    fmt, names = _layout()[opcode]
    cls = isa.RECORDS[opcode]
    assert [f.name for f in fields(cls)] == names
    assert _field_codes(cls) == _codes(fmt)
