"""Several networks, each of one or more stages, in one .bmodel (version 2; docs/bmodel.md).

A stage is a whole version-1 image (its own header, coeffs, commands and debug sections, each with
its CRC-32, read by bmodel.decode_bmodel as a single file is), so a combined file checks every
section exactly as a single one does, and --extract gives back the very bytes that were combined.
Around the images, version 2 adds:

    preamble   magic b"TPUDSLBM", version 2 u32, stage count u32 (>= 2),
               index crc32 u32, index length u32                                24 bytes
    table      per stage: offset u64, length u64 of its image                   16 bytes each
    table crc  crc32 of preamble + table, u32, then zero padding to 64
    index      canonical JSON [[network, stage count], ...] in file order
    images     each stage's version-1 image, at a multiple of ALIGN, zero padding between them

Stages of one network follow each other. They are TPU-MLIR's stages (model_tool --combine of
bmodels of one network compiled for different input shapes): the same chip, mode, address mode
(basic or io_alone), IO names, dtypes and quantization, and different input shapes; the runtime
runs the stage whose input shapes are the inputs' (select_stage). A file of one network of one stage is written as version 1, byte
for byte what write_bmodel writes.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tpudsl.backend.bmodel import (
    ALIGN, COMBINED_VERSION, MAGIC, Bmodel, align, canonical_json, decode_bmodel, encode_bmodel, json_section,
    read_file, section, write_bytes,
)
from tpudsl.ir.diagnostics import TpudslError

_PREAMBLE = struct.Struct("<8sIIII")  # magic, version, stage count, index crc32, index length
_ENTRY = struct.Struct("<QQ")  # offset, length of a stage's image
_CRC = struct.Struct("<I")


@dataclass
class Network:
    name: str
    stages: list[Bmodel]


def _table_end(stages: int) -> int:
    return _PREAMBLE.size + stages * _ENTRY.size + _CRC.size


def _shapes(header: Mapping) -> str:
    return ", ".join(f"{t['name']} {'x'.join(map(str, t['shape'])) or 'scalar'}" for t in header["inputs"])


def stage_clash(old: Mapping, new: Mapping) -> str | None:
    """Why header `new` cannot be another stage of `old`'s network, or None (TPU-MLIR's
    ModelGen::AddNet: the same IO names, input dtypes, scales and zero points, not the same input
    shapes; tpudsl adds the chip and the mode, which its stages always share, and the address mode:
    TPU-MLIR's bmodel holds one `addr_mode` per network, each stage only its IO region)."""
    for key in ("chip", "mode"):
        if old[key] != new[key]:
            return f"{key} {old[key]} vs {new[key]}"
    modes = [h.get("addr_mode", "basic") for h in (old, new)]
    if modes[0] != modes[1]:
        return f"addr_mode {modes[0]} vs {modes[1]}"
    for kind in ("inputs", "outputs"):
        names = [[t["name"] for t in h[kind]] for h in (old, new)]
        if names[0] != names[1]:
            return f"{kind} {', '.join(names[0])} vs {', '.join(names[1])}"
    for a, b in zip(old["inputs"], new["inputs"], strict=True):
        for key in ("dtype", "scale", "zero_point"):
            if a[key] != b[key]:
                return f"input '{a['name']}' {key} {a[key]} vs {b[key]}"
    if [t["shape"] for t in old["inputs"]] == [t["shape"] for t in new["inputs"]]:
        return f"both take {_shapes(new)}"
    return None


def merge(parts: Sequence[tuple[str, Bmodel]]) -> list[Network]:
    """The networks of stages labelled by where they come from, in order: a new name is a new
    network, a known one another stage of it. One chip for all; a stage that clashes with one
    before it (stage_clash) is one error naming both labels."""
    networks: dict[str, list[tuple[str, Bmodel]]] = {}
    first_label, first = parts[0]
    for label, stage in parts:
        if stage.header["chip"] != first.header["chip"]:
            raise TpudslError(f"{first_label} is for chip {first.header['chip']}, {label} for {stage.header['chip']}: "
                              "a bmodel holds networks of one chip")
        name = stage.header["network"]
        for old_label, old in networks.get(name, []):
            if (why := stage_clash(old.header, stage.header)) is not None:
                raise TpudslError(f"network '{name}': {old_label} and {label} cannot be stages of one network: {why}")
        networks.setdefault(name, []).append((label, stage))
    return [Network(name, [s for _, s in stages]) for name, stages in networks.items()]


def encode_networks(networks: Sequence[Network]) -> bytes:
    """The bytes of a .bmodel holding `networks` (version 1 for one stage, else version 2)."""
    parts = [(f"network '{n.name}' stage {j}", s) for n in networks for j, s in enumerate(n.stages)]
    layout = [(n.name, len(n.stages)) for n in networks]
    if [(n.name, len(n.stages)) for n in merge(parts)] != layout:  # what the index would say, and the reader find
        raise TpudslError(f"networks {layout} must have distinct names, each its stages' header network")
    images = [encode_bmodel(s.header, s.coeffs, s.commands, s.debug) for _, s in parts]
    if len(images) == 1:
        return images[0]
    index = canonical_json([[n.name, len(n.stages)] for n in networks])
    entries, offset = [], align(align(_table_end(len(images))) + len(index))
    for image in images:
        entries.append(_ENTRY.pack(offset, len(image)))
        offset = align(offset + len(image))
    table = _PREAMBLE.pack(MAGIC, COMBINED_VERSION, len(images), zlib.crc32(index), len(index)) + b"".join(entries)
    out = bytearray(table + _CRC.pack(zlib.crc32(table)))
    for body in (index, *images):
        out += bytes(-len(out) % ALIGN) + body
    return bytes(out)


def write_networks(path: str | os.PathLike[str], networks: Sequence[Network]) -> None:
    """Write a .bmodel of `networks` atomically: an error leaves `path` untouched."""
    write_bytes(path, encode_networks(networks))


def decode_networks(data: bytes) -> list[Network]:
    """The networks of a version-1 or version-2 file; TpudslError with one message for any damage."""
    if len(data) < _PREAMBLE.size or data[:len(MAGIC)] != MAGIC or _PREAMBLE.unpack_from(data)[1] != COMBINED_VERSION:
        single = decode_bmodel(data)  # version 1, or its message for a file that is neither
        return [Network(single.header["network"], [single])]
    _, _, count, index_crc, index_length = _PREAMBLE.unpack_from(data)
    table_end = _table_end(count)
    if len(data) < table_end:
        raise TpudslError(f"truncated bmodel: {len(data)} bytes, the section table of {count} stages needs {table_end}")
    (crc,) = _CRC.unpack_from(data, table_end - _CRC.size)
    if crc != zlib.crc32(data[:table_end - _CRC.size]):
        raise TpudslError("corrupt bmodel: checksum mismatch in the section table")
    if count < 2:  # the table's checksum held: a writer bug
        raise TpudslError(f"corrupt bmodel: version 2 with {count} stages (one stage is written as version 1)")
    index_at = align(table_end)
    index = _index(section(data, "the index section", table_end, index_at, index_length), index_crc, count)
    names = [(f"network '{name}' stage {j}", name) for name, stages in index for j in range(stages)]
    parts, end = [], index_at + index_length
    for i, (label, name) in enumerate(names):
        offset, length = _ENTRY.unpack_from(data, _PREAMBLE.size + i * _ENTRY.size)
        if offset != align(end):
            raise TpudslError(f"corrupt bmodel: the image of {label} starts at {offset}, expected {align(end)}")
        body = section(data, f"the image of {label}", end, offset, length)
        try:
            stage = decode_bmodel(body)
        except TpudslError as e:
            raise TpudslError(f"{label}: {e.message}") from None
        if stage.header["network"] != name:
            raise TpudslError(f"corrupt bmodel: the image of {label} holds network '{stage.header['network']}'")
        parts.append((label, stage))
        end = offset + length
    if len(data) != end:
        raise TpudslError(f"corrupt bmodel: {len(data) - end} bytes after the last section")
    return merge(parts)



def _index(body: bytes, crc: int, count: int) -> list[tuple[str, int]]:
    """[(network, stage count)] of the index section, checked against the table's `count` stages."""
    if zlib.crc32(body) != crc:
        raise TpudslError("corrupt bmodel: checksum mismatch in the index section")
    index = json_section("index", body)
    if not (isinstance(index, list) and all(
            isinstance(e, list) and len(e) == 2 and isinstance(e[0], str) and e[0] and type(e[1]) is int and e[1] >= 1
            for e in index)):
        raise TpudslError(f"corrupt bmodel: the index must be a list of [network, stage count], got {index!r}")
    if len({e[0] for e in index}) != len(index) or sum(e[1] for e in index) != count:
        raise TpudslError(f"corrupt bmodel: the index {index!r} does not list {count} stages of distinct networks")
    return [(name, stages) for name, stages in index]


def read_networks(path: str | os.PathLike[str]) -> list[Network]:
    """Read and check a .bmodel of one or more networks; every error is prefixed with the path."""
    return read_file(path, decode_networks)


def select_network(networks: Sequence[Network], name: str | None) -> Network:
    """The network named `name`, or the first (TPU-MLIR's model_runner runs `model.networks[0]`)."""
    if name is None:
        return networks[0]
    for network in networks:
        if network.name == name:
            return network
    raise TpudslError(f"no network '{name}' in the bmodel (it holds {', '.join(n.name for n in networks)})")


def select_stage(network: Network, shapes: Mapping[str, Sequence[int]]) -> Bmodel:
    """The stage whose input shapes are `shapes` (by input name), as TPU-MLIR's runtime chooses; a
    network of one stage is that stage (its own checks name a wrong input)."""
    if len(network.stages) == 1:
        return network.stages[0]
    for stage in network.stages:
        if all(t["name"] in shapes and list(shapes[t["name"]]) == t["shape"] for t in stage.header["inputs"]):
            return stage
    given = ", ".join(f"{n} {'x'.join(map(str, s)) or 'scalar'}" for n, s in shapes.items()) or "none"
    takes = "; ".join(f"stage {j}: {_shapes(s.header)}" for j, s in enumerate(network.stages))
    raise TpudslError(f"no stage of network '{network.name}' takes these inputs ({given}); its stages take {takes}")
