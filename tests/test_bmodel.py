"""The .bmodel container (tpudsl/backend/bmodel.py, docs/bmodel.md): the bytes are the documented
layout (checked against an assembler written here from the doc), headers and blobs round-trip,
and every damaged file -- truncated anywhere, any byte flipped, wrong magic or version, garbage,
empty -- is one TpudslError naming what is wrong. Schema violations fail on write (nothing
written) and on read."""

from __future__ import annotations

import binascii
import collections
import json
import struct

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.feature_tally import FeatureTally
from tpudsl.backend.bmodel import decode_bmodel, encode_bmodel, read_bmodel, write_bmodel
from tpudsl.backend.chips import CHIPS, MODES
from tpudsl.ir.diagnostics import TpudslError

SECTION_NAMES = ("header", "coeffs", "commands", "debug")


def tensor(name="x", shape=(1, 3, 4, 4), dtype="f32", address=0x1000):
    return {"name": name, "shape": list(shape), "dtype": dtype, "scale": 1.0, "zero_point": 0, "address": address}


def header(**changes):
    h = {"network": "resnet", "chip": "bm1684x", "mode": "F32", "inputs": [tensor()],
         "outputs": [tensor("y", (1, 10), address=0x2000)], "coeff_mem_bytes": 4096,
         "activation_mem_bytes": 8192, "gdma_count": 3, "bdc_count": 2}
    h.update(changes)
    return h


# io_alone's IO region (bm1684x: global memory from 0x1_0000_0000, then header()'s 4096 bytes of
# coefficients): the input's 192 bytes at its start, the output's 40 bytes 512 bytes on.
IO_START = 0x1_0000_1000
IO = {"addr_mode": "io_alone", "io_addr": IO_START, "io_size": 1024, "inputs": [tensor(address=IO_START)],
      "outputs": [tensor("y", (1, 10), address=IO_START + 512)]}
# The tag modes (bm1688): the input's 192 bytes at byte 0 of tag 3 (3 << 36), the output's 40 at
# byte 0 of tag 4; io_tag_fuse's inputs in tag 3 and outputs in tag 4 are the same with two tensors.
TAG3, TAG4 = 3 << 36, 4 << 36
TAGS = {"chip": "bm1688", "addr_mode": "io_tag", "io_tags": [{"tag": 3, "size": 192}, {"tag": 4, "size": 40}],
        "inputs": [tensor(address=TAG3)], "outputs": [tensor("y", (1, 10), address=TAG4)]}
FUSE = {**TAGS, "addr_mode": "io_tag_fuse"}
DEBUG = [(0, "x"), (3, "conv1"), (4, "y")]
GROUP = {"id": 0, "ops": ["conv1", "y"], "nsecs": 1, "hsecs": 2, "first": 2, "count": 3}  # instructions 2..4


def canonical(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("ascii")


def align(n: int) -> int:
    return (n + 63) // 64 * 64


def assemble(bodies, version=1, magic=b"TPUDSLBM") -> bytes:
    """docs/bmodel.md's layout, written from the doc: preamble, 4 table entries, table CRC, aligned
    sections with zero padding."""
    table, offset = b"", align(16 + 4 * 24 + 4)
    for kind, body in enumerate(bodies, start=1):
        table += struct.pack("<IIQQ", kind, binascii.crc32(body), offset, len(body))
        offset = align(offset + len(body))
    head = struct.pack("<8sII", magic, version, 4) + table
    out = head + struct.pack("<I", binascii.crc32(head))
    for body in bodies:
        out += b"\0" * (align(len(out)) - len(out)) + body
    return out


def regions(data: bytes) -> list[tuple[int, int, str]]:
    """(start, end, what) of every byte range of a file `assemble` made, from the doc's layout."""
    out = [(0, 8, "magic"), (8, 12, "version"), (12, 116, "table")]
    end = 116
    for i, name in enumerate(SECTION_NAMES):
        _, _, offset, length = struct.unpack_from("<IIQQ", data, 16 + 24 * i)
        out += [(end, offset, f"padding {name}"), (offset, offset + length, name)]
        end = offset + length
    return [r for r in out if r[0] < r[1]]


def sample() -> tuple[bytes, list[bytes]]:
    h, coeffs, commands = header(), bytes(range(200)), b"\x01\x02" * 45
    bodies = [canonical(h), coeffs, commands, canonical([list(e) for e in DEBUG])]
    return encode_bmodel(h, coeffs, commands, DEBUG), bodies


def error_of(data: bytes) -> str:
    with pytest.raises(TpudslError) as info:
        decode_bmodel(data)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_bytes_are_the_documented_layout():
    data, bodies = sample()
    assert data == assemble(bodies)
    assert len(data) % 64 != 0  # the file ends where the debug section ends: no trailing padding
    model = decode_bmodel(data)
    assert (model.header, model.coeffs, model.commands, model.debug) == (header(), bodies[1], bodies[2], DEBUG)


def test_no_debug_info_is_an_empty_section():
    data = encode_bmodel(header(), b"w", b"c", [])
    assert data == assemble([canonical(header()), b"w", b"c", b""])
    assert decode_bmodel(data).debug == []


names = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FFF), min_size=1, max_size=12)
counts = st.integers(0, 2**40)
tensors = st.fixed_dictionaries({
    "name": names, "shape": st.lists(st.integers(0, 4096), max_size=5),
    "dtype": st.sampled_from(["f32", "f16", "bf16", "i8", "u8", "i16", "u16", "i32", "u32"]),
    "scale": st.floats(allow_nan=False, allow_infinity=False) | st.integers(-10, 10),
    # untagged: an address with a memory tag (bits 36-38) needs io_tags listing it
    "zero_point": st.integers(-(2**31), 2**31), "address": st.integers(0, (1 << 36) - 1),
})


@st.composite
def models(draw, empty_coeffs: bool | None = None):
    """empty_coeffs given: every case the layout treats apart but the other coefficients' (empty or
    unaligned): debug info, the estimate, a non-ASCII name."""
    forced = empty_coeffs is not None
    network = st.tuples(names, st.characters(min_codepoint=128, max_codepoint=0x2FFF)).map(
        lambda t: t[0][:11] + t[1]) if forced else names
    estimate = {"estimated_cycles": counts} if forced else {}
    h = draw(st.fixed_dictionaries(
        {"network": network, "chip": st.sampled_from(sorted(CHIPS)), "mode": st.sampled_from(MODES),
         "inputs": st.lists(tensors, max_size=3), "outputs": st.lists(tensors, max_size=3),
         "coeff_mem_bytes": counts, "activation_mem_bytes": counts,
         "gdma_count": st.integers(forced, 1000), "bdc_count": st.integers(0, 1000), **estimate},
        optional={"overlapped_cycles": counts} if forced else {"estimated_cycles": counts,
                                                               "overlapped_cycles": counts}))
    n = h["gdma_count"] + h["bdc_count"]
    debug = draw(st.lists(st.tuples(st.integers(0, n - 1), names), min_size=forced, max_size=4)) if n else []
    coeffs = st.binary(max_size=300) if not forced else st.just(b"") if empty_coeffs else \
        st.binary(min_size=1, max_size=300).filter(lambda b: len(b) % 64)
    return h, draw(coeffs), draw(st.binary(max_size=300)), debug


def test_round_trip_property():
    """Any valid header, blobs and debug info come back equal; the cases the layout treats apart
    (empty and unaligned blobs, debug info, the optional estimate) each occur often enough: a tenth
    of the examples have every one but unaligned coefficients, a tenth every one but empty ones."""
    tally = FeatureTally(("empty coeffs", "unaligned coeffs", "debug info", "estimate", "non-ASCII name"))

    def check(model):
        h, coeffs, commands, debug = model
        data = encode_bmodel(h, coeffs, commands, debug)
        back = decode_bmodel(data)
        assert (back.header, back.coeffs, back.commands, back.debug) == (h, coeffs, commands, debug)
        assert data == assemble([canonical(h), coeffs, commands, canonical([list(e) for e in debug]) if debug else b""])
        tally.record(case for case, present in (
            ("empty coeffs", not coeffs), ("unaligned coeffs", len(coeffs) % 64 != 0), ("debug info", bool(debug)),
            ("estimate", "estimated_cycles" in h), ("non-ASCII name", not h["network"].isascii())) if present)

    forced = settings.default.max_examples // 10
    settings(max_examples=settings.default.max_examples - 2 * forced)(given(models())(check))()
    for empty_coeffs in (True, False):
        settings(max_examples=forced)(given(models(empty_coeffs))(check))()
    tally.assert_each_in(1 / 20)


def truncation_message(data: bytes, cut: int) -> str:
    if cut == 0:
        return "error: not a bmodel: the file is empty"
    if cut < 116:
        return f"error: truncated bmodel: {cut} bytes, the section table needs 116"
    for start, end, what in regions(data):
        if end > cut and what in SECTION_NAMES:
            return f"error: truncated bmodel: the {what} section needs bytes {start}..{end}, the file has {cut}"
    raise AssertionError("cut beyond the file")


def test_truncated_anywhere_names_the_section():
    """Every prefix of a bmodel (each section boundary and every byte inside) is one error naming
    the section it cuts."""
    data, _ = sample()
    boundaries = {s for s, _, _ in regions(data)} | {e for _, e, _ in regions(data)}
    assert boundaries <= set(range(len(data) + 1))
    for cut in range(len(data)):
        assert error_of(data[:cut]) == truncation_message(data, cut), cut


def flip_message(what: str, data: bytes, pos: int) -> str:
    if what == "magic":
        return f"error: not a bmodel: wrong magic {bytes(data[:8])!r} (expected b'TPUDSLBM')"
    if what == "version":
        return f"error: unsupported bmodel version {struct.unpack_from('<I', data, 8)[0]} (this tpudsl reads versions 1 and 2)"
    if what == "table":
        return "error: corrupt bmodel: checksum mismatch in the section table"
    if what.startswith("padding"):
        return f"error: corrupt bmodel: non-zero padding before the {what.split()[1]} section"
    return f"error: corrupt bmodel: checksum mismatch in the {what} section"


def test_every_flipped_byte_is_caught():
    """Flip each byte of a bmodel in turn: the magic, the version, the table (entries and its
    CRC), the padding and each section's body each give their own error."""
    data, _ = sample()
    seen = collections.Counter()
    for start, end, what in regions(data):
        for pos in range(start, end):
            bad = bytearray(data)
            bad[pos] ^= 0xFF
            assert error_of(bytes(bad)) == flip_message(what, bad, pos), (what, pos)
            seen[what.split()[0]] += 1
    assert set(seen) == {"magic", "version", "table", "padding", *SECTION_NAMES}


def test_wrong_version_magic_and_garbage():
    _, bodies = sample()
    assert error_of(assemble(bodies, version=3)) == "error: unsupported bmodel version 3 (this tpudsl reads versions 1 and 2)"
    assert error_of(assemble(bodies, version=2)) == ("error: a combined bmodel (several networks or stages, version 2) "
                                                     "where one stage was expected: take it out with model_tool --extract")
    assert error_of(assemble(bodies, magic=b"BMODEL\0\0")) == \
        "error: not a bmodel: wrong magic b'BMODEL\\x00\\x00' (expected b'TPUDSLBM')"
    assert error_of(b"\x89PNG\r\n\x1a\n" + bytes(500)).startswith("error: not a bmodel: wrong magic b'\\x89PNG")
    assert error_of(b"TPUDSLBM" + bytes(range(256)) * 2).startswith("error: unsupported bmodel version")
    assert error_of(assemble(bodies) + b"\0") == "error: corrupt bmodel: 1 bytes after the last section"


@given(st.binary(max_size=400))
def test_garbage_is_one_error(data):
    event("magic" if data.startswith(b"TPUDSLBM") else "no magic")
    with pytest.raises(TpudslError):
        decode_bmodel(data)


@pytest.mark.parametrize("body, message", [
    (b"{", "error: corrupt bmodel: the header section is not canonical JSON (Expecting"),
    (b"\xff", "error: corrupt bmodel: the header section is not canonical JSON ('ascii' codec"),
    (b'{"network":NaN}', "error: corrupt bmodel: the header section is not canonical JSON (NaN is not JSON)"),
    (b"[]", "error: bmodel header: 'header' must be an object, got list"),
    (canonical({**header(), "extra": 1}), "error: bmodel header: unknown key 'extra' in 'header'"),
    (canonical(header(layer_groups=[{**GROUP, "count": 4}])),
     "error: bmodel header: 'layer_groups[0]' spans instructions 2..5, past the 5 instructions of the header"),
])
def test_header_checked_on_read(body, message):
    """A file whose checksums hold but whose header breaks the schema (another writer's, or
    an edited one) is refused on read too."""
    _, bodies = sample()
    assert error_of(assemble([body, *bodies[1:]])).startswith(message)


def test_io_region_round_trips_and_is_checked_on_read(tmp_path):
    write_bmodel(tmp_path / "m.bmodel", header(**IO), b"", b"", [])
    assert read_bmodel(tmp_path / "m.bmodel").header == header(**IO)
    _, bodies = sample()
    bad = assemble([canonical(header(**{**IO, "io_size": 512})), *bodies[1:]])
    assert error_of(bad) == ("error: bmodel header: 'outputs[0]' ('y', 40 bytes at 0x100001200) is not inside "
                             "the IO region [0x100001000, 0x100001200) ('io_addr', 'io_size')")


@pytest.mark.parametrize("layout", [TAGS, FUSE])
def test_io_tags_round_trip_and_are_checked_on_read(tmp_path, layout):
    write_bmodel(tmp_path / "m.bmodel", header(**layout), b"", b"", [])
    assert read_bmodel(tmp_path / "m.bmodel").header == header(**layout)
    _, bodies = sample()
    small = {**layout, "io_tags": [layout["io_tags"][0], {"tag": 4, "size": 36}]}
    assert error_of(assemble([canonical(header(**small)), *bodies[1:]])) == (
        "error: bmodel header: 'outputs[0]' ('y', 40 bytes at 0x4000000000) is not inside tag 4's memory "
        "[0x4000000000, 0x4000000024) ('io_tags[1]')")


def test_layer_groups_round_trip(tmp_path):
    write_bmodel(tmp_path / "m.bmodel", header(layer_groups=[GROUP]), b"", b"", DEBUG)
    assert read_bmodel(tmp_path / "m.bmodel").header == header(layer_groups=[GROUP])


def test_debug_checked_on_read():
    _, bodies = sample()
    bad = assemble([*bodies[:3], canonical([[5, "y"]])])
    assert error_of(bad) == ("error: bmodel debug entry 0: instruction 5 is not below the 5 instructions "
                             "of the header (gdma_count + bdc_count)")


LOCATION = {"name": "x", "op": "top.Add", "shape": [2], "dtype": "f32", "view": [1, 2, 1, 1], "pieces": []}
PIECE = {"after": 0, "space": "local", "address": 0, "start": [0] * 4, "shape": [1, 2, 1, 1]}
BAD_HEADERS = [
    ({"extra": 1}, "unknown key 'extra' in 'header'"),
    ({"network": ""}, "'network' must be a non-empty string, got ''"),
    ({"chip": "bm9999"}, "'chip' must be one of bm1684x, bm1688, tiny, got 'bm9999'"),
    ({"mode": "f32"}, "'mode' must be one of F32, F16, BF16, INT8, W8F16, W8BF16, W4F16, W4BF16, got 'f32'"),
    ({"gdma_count": True}, "'gdma_count' must be a non-negative integer, got True"),
    ({"bdc_count": -1}, "'bdc_count' must be a non-negative integer, got -1"),
    ({"coeff_mem_bytes": 1.0}, "'coeff_mem_bytes' must be a non-negative integer, got 1.0"),
    ({"estimated_cycles": "7"}, "'estimated_cycles' must be a non-negative integer, got '7'"),
    ({"inputs": {}}, "'inputs' must be a list of tensors, got dict"),
    ({"inputs": [{**tensor(), "shape": (1, 2)}]}, "'inputs[0].shape' must be a list of non-negative integers, got (1, 2)"),
    ({"inputs": [{**tensor(), "dtype": "float32"}]},
     "'inputs[0].dtype' must be one of f32, f16, bf16, i8, u8, i16, u16, i32, u32, got 'float32'"),
    ({"outputs": [{**tensor(), "scale": float("nan")}]}, "'outputs[0].scale' must be a finite number, got nan"),
    ({"outputs": [{**tensor(), "zp": 0}]}, "unknown key 'zp' in 'outputs[0]'"),
    ({"outputs": [{k: v for k, v in tensor().items() if k != "address"}]}, "missing key 'address' in 'outputs[0]'"),
    ({"layer_groups": {}}, "'layer_groups' must be a list of groups, got dict"),
    ({"layer_groups": [{**GROUP, "ops": []}]},
     "'layer_groups[0].ops' must be a non-empty list of non-empty strings, got []"),
    ({"layer_groups": [{**GROUP, "hsecs": 0}]}, "'layer_groups[0].hsecs' must be a positive integer, got 0"),
    ({"layer_groups": [{k: v for k, v in GROUP.items() if k != "first"}]}, "missing key 'first' in 'layer_groups[0]'"),
    ({"layer_groups": [GROUP, {**GROUP, "first": 3}]},
     "'layer_groups[1]' spans instructions 3..5, past the 5 instructions of the header"),
    ({**IO, "addr_mode": "io_reloc"}, "'addr_mode' must be one of io_alone, io_tag, io_tag_fuse, got 'io_reloc'"),
    ({**IO, "addr_mode": "io_tag"}, "'io_addr' is a key of addr_mode io_alone, the header's is io_tag"),
    ({**IO, "io_tags": TAGS["io_tags"]},
     "'io_tags' is a key of addr_mode io_tag and io_tag_fuse, the header's is io_alone"),
    ({"io_tags": TAGS["io_tags"]}, "'io_tags' is a key of addr_mode io_tag and io_tag_fuse, the header's is basic"),
    ({"inputs": [tensor(address=TAG3)]},
     "'inputs[0]' ('x', 192 bytes at 0x3000000000) has tag 3, which 'io_tags' does not list"),
    ({**TAGS, "activation_mem_bytes": 1 << 36}, "the untagged global memory ends at 0x1100001000, past the first tag's "
                                        "address 0x1000000000 ('coeff_mem_bytes', 'activation_mem_bytes')"),
    ({**TAGS, "chip": "bm1684x"}, "'addr_mode' is io_tag, which needs memory tags: bm1684x has none"),
    ({"chip": "bm1688", "addr_mode": "io_tag_fuse"}, "missing key 'io_tags' of addr_mode io_tag_fuse"),
    ({**TAGS, "io_tags": [{"tag": 2, "size": 192}]}, "'io_tags[0].tag' must be one of 3, 4, 5, 6, 7, got 2"),
    ({**TAGS, "io_tags": [{"tag": 3}]}, "missing key 'size' in 'io_tags[0]'"),
    ({**TAGS, "io_tags": [{"tag": 3, "size": 192}, {"tag": 3, "size": 40}]},
     "'io_tags[1]' repeats tag 3 of 'io_tags[0]'"),
    ({**TAGS, "io_tags": [{"tag": 3, "size": 192}]},
     "'outputs[0]' ('y', 40 bytes at 0x4000000000) has tag 4, which 'io_tags' does not list"),
    ({**TAGS, "io_tags": [{"tag": 3, "size": 191}, {"tag": 4, "size": 40}]},
     "'inputs[0]' ('x', 192 bytes at 0x3000000000) is not inside tag 3's memory [0x3000000000, 0x30000000bf) "
     "('io_tags[0]')"),
    ({**TAGS, "io_tags": [*TAGS["io_tags"], {"tag": 7, "size": 8}]}, "'io_tags[2]' (tag 7) holds no input or output"),
    ({**TAGS, "outputs": [tensor("y", (1, 10), address=TAG3 + 192)], "io_tags": [{"tag": 3, "size": 232}]},
     "'outputs[0]' ('y', 40 bytes at 0x30000000c0) shares tag 3 with 'inputs[0]' ('x'): io_tag binds one tensor "
     "to each tag"),
    ({**TAGS, "outputs": [tensor("y", (1, 10), address=0x2000)], "io_tags": [{"tag": 3, "size": 192}]},
     "'outputs[0]' ('y', 40 bytes at 0x2000) has no tag, and 'io_tags' lists 1 of the 5: io_tag tags every input "
     "and output up to five"),
    ({**FUSE, "outputs": [tensor("y", (1, 10), address=5 << 36)]},
     "'outputs[0]' ('y', 40 bytes at 0x5000000000) is not in tag 4: io_tag_fuse binds the inputs to tag 3 and the "
     "outputs to tag 4"),
    ({**IO, "io_size": -1}, "'io_size' must be a non-negative integer, got -1"),
    ({**IO, "io_addr": "0x100001000"}, "'io_addr' must be a non-negative integer, got '0x100001000'"),
    ({"addr_mode": "io_alone", "io_addr": IO_START}, "missing key 'io_size' of the IO region (with 'addr_mode')"),
    ({**IO, "io_addr": IO_START + 512},
     "'io_addr' is 0x100001200, the IO region starts where the coefficients end, at 0x100001000"),
    ({**IO, "inputs": [tensor(address=IO_START - 64)]},
     "'inputs[0]' ('x', 192 bytes at 0x100000fc0) is not inside the IO region [0x100001000, 0x100001400) "
     "('io_addr', 'io_size')"),
    ({"core_num": 2, "core_instructions": [3, 2]}, "missing key 'core_cycles' of the cores (with 'core_num')"),
    ({"core_num": 1, "core_instructions": [5], "core_cycles": [9]},
     "'core_num' is 1; one core is written without the core keys"),
    ({"chip": "bm1688", "core_num": 2, "core_instructions": [3, 1, 1], "core_cycles": [9, 9]},
     "'core_instructions' has 3 entries for 2 cores"),
    ({"chip": "bm1688", "core_num": 2, "core_instructions": [3, 3], "core_cycles": [9, 9]},
     "'core_instructions' [3, 3] hold 6 instructions, the header counts 5"),
    # more cores than the chip has (the cmodel would run them all the same)
    ({"core_num": 2, "core_instructions": [3, 2], "core_cycles": [9, 9]},
     "'core_num' is 2, but bm1684x has 1 core (processor-assign num_core=1..1)"),
    ({"chip": "bm1688", "core_num": 3, "core_instructions": [3, 1, 1], "core_cycles": [9, 9, 9]},
     "'core_num' is 3, but bm1688 has 2 cores (processor-assign num_core=1..2)"),
    ({"chip": "bm1688", "core_num": 2, "core_instructions": [3, 2], "core_cycles": [9, 12], "overlapped_cycles": 10},
     "'core_cycles' [9, 12] exceed the run's 'overlapped_cycles' 10: a core's busy cycles are the run's less its "
     "waits"),
    ({"chip": "bm1688", "core_num": 2, "core_instructions": [3, 2], "core_cycles": [9, 9], "layer_groups": [GROUP]},
     "'layer_groups[0]' spans instructions 2..4, past core 0's 3 ('core_instructions'): a group's instructions are "
     "its records on core 0"),
    ({**TAGS, "io_tags": [{"tag": 3, "size": (1 << 36) + 1}, {"tag": 4, "size": 40}]},
     "'io_tags[0].size' is 68719476737, more than the 68719476736 addresses of a memory tag"),
    ({"tensor_locations": {}}, "'tensor_locations' must be a list of tensors, got dict"),
    ({"tensor_locations": [{**LOCATION, "pieces": {}}]},
     "'tensor_locations[0].pieces' must be a list of pieces, got dict"),
    ({"tensor_locations": [{**LOCATION, "pieces": [{**PIECE, "space": "remote"}]}]},  # strides may be absent
     "'tensor_locations[0].pieces[0].space' must be one of global, local, got 'remote'"),
]


@pytest.mark.parametrize("changes, message", BAD_HEADERS)
def test_bad_header_refused_on_write_and_nothing_written(tmp_path, changes, message):
    path = tmp_path / "m.bmodel"
    path.write_bytes(b"old")
    with pytest.raises(TpudslError) as info:
        write_bmodel(path, header(**changes), b"", b"", [])
    assert str(info.value) == f"error: bmodel header: {message}"
    assert [p.name for p in tmp_path.iterdir()] == ["m.bmodel"] and path.read_bytes() == b"old"


def test_missing_key_and_bad_debug_refused_on_write(tmp_path):
    h = header()
    del h["mode"]
    with pytest.raises(TpudslError, match="missing key 'mode' in 'header'"):
        write_bmodel(tmp_path / "m.bmodel", h, b"", b"", [])
    for debug, message in (([(5, "y")], "instruction 5 is not below the 5 instructions"),
                           ([(0, "")], r"must be \(instruction index, op name\)"),
                           ([("0", "x")], r"must be \(instruction index, op name\)")):
        with pytest.raises(TpudslError, match=message):
            write_bmodel(tmp_path / "m.bmodel", header(), b"", b"", debug)
    assert list(tmp_path.iterdir()) == []


def test_write_then_read_file(tmp_path):
    path = tmp_path / "m.bmodel"
    write_bmodel(path, header(), b"coeff", b"cmd", DEBUG)
    model = read_bmodel(path)
    assert (model.header, model.coeffs, model.commands, model.debug) == (header(), b"coeff", b"cmd", DEBUG)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(TpudslError) as info:
        read_bmodel(path)
    assert str(info.value) == f"{path}: error: truncated bmodel: 100 bytes, the section table needs 116"
