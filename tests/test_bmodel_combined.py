"""The combined .bmodel (tpudsl/backend/bmodel_combined.py, docs/bmodel.md "Version 2"): the bytes
are the documented layout (an assembler written here from the doc), every flipped byte is one
error naming the part it hit (inside a stage: that stage and its section), and the rules of which
stages may share a network (docs/tools.md) refuse each clash with one message."""

from __future__ import annotations

import binascii
import json
import struct

import pytest

from tests.test_bmodel import flip_message, header, regions, tensor
from tpudsl.backend.bmodel import Bmodel, decode_bmodel, encode_bmodel
from tpudsl.backend.bmodel_combined import Network, decode_networks, encode_networks, merge, select_stage
from tpudsl.ir.diagnostics import TpudslError


def stage(net="a", batch=1, **changes) -> Bmodel:
    h = header(network=net, inputs=[tensor(shape=(batch, 3, 4, 4))], **changes)
    return Bmodel(h, bytes(range(batch * 50 % 256)), b"\x05" * (17 * batch), [(0, "x"), (4, "y")])


def align(n: int) -> int:
    return (n + 63) // 64 * 64


def assemble(index: list, images: list[bytes]) -> bytes:
    """Version 2 as docs/bmodel.md lays it out: preamble, the images' table, its CRC, then the index
    and the images, each at a multiple of 64 after zero padding."""
    body = json.dumps(index, separators=(",", ":")).encode()
    table_end = 24 + 16 * len(images) + 4
    offset, entries = align(align(table_end) + len(body)), b""
    for image in images:
        entries += struct.pack("<QQ", offset, len(image))
        offset = align(offset + len(image))
    head = struct.pack("<8sIIII", b"TPUDSLBM", 2, len(images), binascii.crc32(body), len(body)) + entries
    out = head + struct.pack("<I", binascii.crc32(head))
    for part in (body, *images):
        out += bytes(align(len(out)) - len(out)) + part
    return out


def image(s: Bmodel) -> bytes:
    return encode_bmodel(s.header, s.coeffs, s.commands, s.debug)


NETWORKS = [Network("a", [stage("a", 1), stage("a", 2)]), Network("b", [stage("b", 1)])]
LABELS = ["network 'a' stage 0", "network 'a' stage 1", "network 'b' stage 0"]


def error_of(data: bytes) -> str:
    with pytest.raises(TpudslError) as info:
        decode_networks(data)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_bytes_are_the_documented_layout_and_read_back():
    images = [image(s) for n in NETWORKS for s in n.stages]
    data = encode_networks(NETWORKS)
    assert data == assemble([["a", 2], ["b", 1]], images)
    back = decode_networks(data)
    assert [(n.name, [(s.header, s.coeffs, s.commands, s.debug) for s in n.stages]) for n in back] == \
        [(n.name, [(s.header, s.coeffs, s.commands, s.debug) for s in n.stages]) for n in NETWORKS]


def test_one_stage_is_the_version_1_file():
    one = [Network("a", [stage()])]
    assert encode_networks(one) == image(stage())
    assert decode_networks(image(stage()))[0].stages[0].header == stage().header


def combined_regions(data: bytes) -> list[tuple[int, int, str]]:
    """(start, end, what) of every byte range of a version-2 file, from the doc's layout; inside an
    image, its own regions (test_bmodel.regions) prefixed with the stage."""
    count, _, index_length = struct.unpack_from("<III", data, 12)
    table_end = 24 + 16 * count + 4
    out = [(0, 8, "magic"), (8, 12, "version"), (12, 16, "count"), (16, table_end, "table"),
           (table_end, align(table_end), "padding index"), (align(table_end), align(table_end) + index_length, "index")]
    end = align(table_end) + index_length
    for i, label in enumerate(LABELS):
        offset, length = struct.unpack_from("<QQ", data, 24 + 16 * i)
        out.append((end, offset, f"padding {label}"))
        out += [(offset + s, offset + e, f"{label}: {what}") for s, e, what in regions(data[offset:offset + length])]
        end = offset + length
    return [r for r in out if r[0] < r[1]]


def expected(what: str, bad: bytes) -> str:
    if what == "count":  # the table's extent moves: past the file, or its CRC read elsewhere
        count = struct.unpack_from("<I", bad, 12)[0]
        need = 24 + 16 * count + 4
        return (f"error: truncated bmodel: {len(bad)} bytes, the section table of {count} stages needs {need}"
                if need > len(bad) else "error: corrupt bmodel: checksum mismatch in the section table")
    if what in ("magic", "table"):
        return flip_message(what, bad, 0)
    if what == "version":
        return f"error: unsupported bmodel version {struct.unpack_from('<I', bad, 8)[0]} (this tpudsl reads versions 1 and 2)"
    if what == "index":
        return "error: corrupt bmodel: checksum mismatch in the index section"
    if what == "padding index":
        return "error: corrupt bmodel: non-zero padding before the index section"
    if what.startswith("padding "):
        return f"error: corrupt bmodel: non-zero padding before the image of {what[len('padding '):]}"
    label, inner = what.split(": ")
    offset = struct.unpack_from("<Q", bad, 24 + 16 * LABELS.index(label))[0]
    return f"error: {label}: " + flip_message(inner, bad[offset:], 0).removeprefix("error: ")


def test_every_flipped_byte_names_the_part_it_hit():
    """Flip each byte of a file of two networks (three stages) in turn: the preamble, the table, the
    index and every section of every stage each give their own error, naming the stage."""
    data = encode_networks(NETWORKS)
    seen = set()
    for start, end, what in combined_regions(data):
        for pos in range(start, end):
            bad = bytearray(data)
            bad[pos] ^= 0xFF
            assert error_of(bytes(bad)) == expected(what, bytes(bad)), (what, pos)
        seen.add(what)
    assert {"count", "index", "network 'a' stage 1: coeffs", "network 'b' stage 0: header",
            "padding network 'a' stage 1"} <= seen


def test_truncated_and_trailing_bytes():
    data = encode_networks(NETWORKS)
    offset, length = struct.unpack_from("<QQ", data, 24 + 16 * 2)
    assert error_of(data[:offset + 10]) == (f"error: truncated bmodel: the image of network 'b' stage 0 needs bytes "
                                            f"{offset}..{offset + length}, the file has {offset + 10}")
    assert error_of(data[:30]) == "error: truncated bmodel: 30 bytes, the section table of 3 stages needs 76"
    assert error_of(data + b"\0") == "error: corrupt bmodel: 1 bytes after the last section"


def test_an_index_or_stage_that_does_not_fit_is_refused():
    """Files whose checksums hold but whose parts disagree (another writer's) are refused on read."""
    images = [image(s) for n in NETWORKS for s in n.stages]
    assert error_of(assemble([["a", 2], ["b", 2]], images)) == \
        "error: corrupt bmodel: the index [['a', 2], ['b', 2]] does not list 3 stages of distinct networks"
    assert error_of(assemble([["a", 1], ["b", 2]], images)) == \
        "error: corrupt bmodel: the image of network 'b' stage 0 holds network 'a'"
    assert error_of(assemble([["a", 2], ["b", 1]], images[:1] * 2 + images[2:])) == (
        "error: network 'a': network 'a' stage 0 and network 'a' stage 1 cannot be stages of one network: "
        "both take x 1x3x4x4")
    assert error_of(assemble([["a", 1]], images[:1])) == \
        "error: corrupt bmodel: version 2 with 1 stages (one stage is written as version 1)"
    assert error_of(assemble([["a", 2]], [image(stage("a", 1)), encode_networks(NETWORKS)])).startswith(
        "error: network 'a' stage 1: a combined bmodel (several networks or stages, version 2) where one stage")
    assert decode_bmodel(image(stage())).header == stage().header


@pytest.mark.parametrize("second, why", [
    (stage("a", 1), "both take x 1x3x4x4"),
    (stage("a", 2, chip="tiny"), None),  # the chip is the whole file's: its own message
    (stage("a", 2, mode="F16"), "mode F32 vs F16"),
    (stage("a", 2, addr_mode="io_alone", io_addr=0, io_size=0), "addr_mode basic vs io_alone"),
    (stage("a", 2, addr_mode="io_tag_fuse", io_tags=[]), "addr_mode basic vs io_tag_fuse"),
    (stage("a", 2, outputs=[tensor("z", (1, 10))]), "outputs y vs z"),
    (Bmodel(header(network="a", inputs=[tensor("w", (2, 3, 4, 4))]), b"", b"", []), "inputs x vs w"),
    (Bmodel(header(network="a", inputs=[{**tensor(shape=(2, 3, 4, 4)), "dtype": "i8"}]), b"", b"", []),
     "input 'x' dtype f32 vs i8"),
    (Bmodel(header(network="a", inputs=[{**tensor(shape=(2, 3, 4, 4)), "zero_point": 3}]), b"", b"", []),
     "input 'x' zero_point 0 vs 3"),
])
def test_stages_of_one_network_must_fit(second, why):
    with pytest.raises(TpudslError) as info:
        merge([("A.bmodel", stage("a", 1)), ("B.bmodel", second)])
    assert info.value.message == (f"network 'a': A.bmodel and B.bmodel cannot be stages of one network: {why}" if why
                                  else "A.bmodel is for chip bm1684x, B.bmodel for tiny: a bmodel holds networks of one chip")


def test_merge_orders_networks_by_first_appearance_and_stages_by_argument():
    a1, b, a2 = stage("a", 1), stage("b", 1), stage("a", 2)
    merged = merge([("1", a1), ("2", b), ("3", a2)])
    assert [(n.name, n.stages) for n in merged] == [("a", [a1, a2]), ("b", [b])]
    assert select_stage(merged[0], {"x": (2, 3, 4, 4)}) is a2 and select_stage(merged[0], {"x": (1, 3, 4, 4)}) is a1
    with pytest.raises(TpudslError) as info:
        select_stage(merged[0], {"x": (3, 3, 4, 4)})
    assert info.value.message == ("no stage of network 'a' takes these inputs (x 3x3x4x4); its stages take "
                                  "stage 0: x 1x3x4x4; stage 1: x 2x3x4x4")
