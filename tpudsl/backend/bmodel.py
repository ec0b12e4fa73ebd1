"""The .bmodel container: a header, the coefficient blob, the command stream and debug info.

The layout is written down field by field in docs/bmodel.md; in short:

    preamble   magic b"TPUDSLBM", version u32, section count u32            16 bytes
    table      per section: kind u32, crc32 u32, offset u64, length u64     24 bytes each
    table crc  crc32 of preamble + table, u32, then zero padding to 64
    sections   header (canonical JSON), coeffs, commands, debug (canonical JSON or empty),
               each starting at a multiple of ALIGN, zero padding between them

Every byte is checked on read: the magic, the version, the table's checksum, each section's
CRC32, the padding (zeros) and the file's length (it ends where the last section ends). So a
truncated, flipped or foreign file is one clear error naming the section, never a wrong model.
JSON is written canonically (sorted keys, no spaces, ASCII), and the header is validated against
HEADER_SCHEMA both when written and when read. No pickle: a .bmodel never runs code when read.
"""

from __future__ import annotations

import json
import math
import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tpudsl.backend.chips import (ADDR_MODES, CHIPS, IO_TAGS, MODES, TAGGED_ADDR_MODES, check_cores, tag_base,
                                  tag_of)
from tpudsl.ir.diagnostics import TpudslError

MAGIC = b"TPUDSLBM"
VERSION = 1
COMBINED_VERSION = 2  # several networks and stages: bmodel_combined.py
ALIGN = 64  # every section starts at a multiple of 64 bytes (a DMA burst of the smallest chip)
SECTIONS = ("header", "coeffs", "commands", "debug")  # in file order; kind = index + 1
_PREAMBLE = struct.Struct("<8sII")  # magic, version, section count
_ENTRY = struct.Struct("<IIQQ")  # kind, crc32, offset, length
_TABLE_CRC = struct.Struct("<I")
TABLE_END = _PREAMBLE.size + len(SECTIONS) * _ENTRY.size + _TABLE_CRC.size
FIRST_SECTION = -(-TABLE_END // ALIGN) * ALIGN  # align(TABLE_END)

DTYPES = {"f32": 4, "f16": 2, "bf16": 2, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4}  # bytes each
# The header's addr_mode (chips.ADDR_MODES) and the keys each one needs (absent: basic's one neuron region).
ADDR_MODE_KEYS = {"io_alone": ("io_addr", "io_size"), **dict.fromkeys(TAGGED_ADDR_MODES, ("io_tags",))}
IO_KEYS = tuple(dict.fromkeys(key for keys in ADDR_MODE_KEYS.values() for key in keys))  # each mode's, once
# The header's keys and the Python types of their values ("tensor" and "tensors" are the
# entries of inputs/outputs). Keys in OPTIONAL may be absent; every other key is required.
TENSOR_SCHEMA: dict[str, str] = {
    "name": "str", "shape": "dims", "dtype": "dtype", "scale": "number", "zero_point": "int", "address": "count",
}
# A layer group of several ops: its records are instructions first .. first + count - 1; csecs
# and wsecs only when it is cut along C or W (absent: 1).
GROUP_SCHEMA: dict[str, str] = {
    "id": "count", "ops": "names", "nsecs": "positive", "hsecs": "positive", "first": "count", "count": "positive",
    "csecs": "positive", "wsecs": "positive",
}

# Where a tensor can be read while the cmodel runs (tensor_locations.py, written with
# embed_debug_info): its name (location), op, shape, dtype, 4-D view, and the pieces of the view it
# is read from, each after instruction `after`, in global memory (at `address`, element `strides`)
# or in local memory (at offset `address` of the lanes, isa.py's layout).
LOCATION_SCHEMA: dict[str, str] = {
    "name": "str", "op": "str", "shape": "dims", "dtype": "dtype", "view": "dims", "pieces": "pieces",
}
# A memory tag of the io_tag modes: its number (chips.IO_TAGS) and its memory's bytes.
IO_TAG_SCHEMA: dict[str, str] = {"tag": "io_tag", "size": "count"}
PIECE_SCHEMA: dict[str, str] = {
    "after": "count", "space": "space", "address": "count", "start": "dims", "shape": "dims", "strides": "dims",
}
SPACES = ("global", "local")
# The kinds that are lists of objects: (what messages call the items, their schema, the keys they may omit).
LIST_KINDS: dict[str, tuple[str, dict[str, str], frozenset[str]]] = {
    "tensors": ("tensors", TENSOR_SCHEMA, frozenset()),
    "groups": ("groups", GROUP_SCHEMA, frozenset({"csecs", "wsecs"})),
    "locations": ("tensors", LOCATION_SCHEMA, frozenset()),
    "pieces": ("pieces", PIECE_SCHEMA, frozenset({"strides"})),
    "io_tags": ("tags", IO_TAG_SCHEMA, frozenset()),
}


def group_slices(g: dict) -> str:
    """A header group's slicing as model_tool and the timeline show it: NxH, or NxCxHxW when it is
    cut along C or W."""
    c, w = g.get("csecs", 1), g.get("wsecs", 1)
    return f"{g['nsecs']}x{g['hsecs']}" if (c, w) == (1, 1) else f"{g['nsecs']}x{c}x{g['hsecs']}x{w} (NxCxHxW)"
HEADER_SCHEMA: dict[str, str] = {
    "network": "str",
    "chip": "chip",
    "mode": "mode",
    "inputs": "tensors",
    "outputs": "tensors",
    "coeff_mem_bytes": "count",
    "activation_mem_bytes": "count",
    "gdma_count": "count",
    "bdc_count": "count",
    "estimated_cycles": "count",
    "overlapped_cycles": "count",
    "layer_groups": "groups",
    "tensor_locations": "locations",
    "addr_mode": "addr_mode",
    "io_addr": "count",
    "io_size": "count",
    "io_tags": "io_tags",
    "core_num": "positive",
    "core_instructions": "dims",
    "core_cycles": "dims",
}
IO_REGION = ("addr_mode", *ADDR_MODE_KEYS["io_alone"])  # io_alone's IO region: all three or none
# Several cores (docs/bmodel.md): their number, each one's stream (the command section holds them
# one after another) and busy cycles; all three or none (absent: one core)
CORES = ("core_num", "core_instructions", "core_cycles")
OPTIONAL = frozenset({"estimated_cycles", "overlapped_cycles", "layer_groups", "tensor_locations", "addr_mode",
                      *IO_KEYS, *CORES})


@dataclass
class Bmodel:
    header: dict
    coeffs: bytes
    commands: bytes
    debug: list[tuple[int, str]] = field(default_factory=list)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_value(where: str, kind: str, v: object) -> None:
    if kind in LIST_KINDS:
        what, schema, optional = LIST_KINDS[kind]
        if not isinstance(v, list):
            raise TpudslError(f"bmodel header: '{where}' must be a list of {what}, got {type(v).__name__}")
        for i, item in enumerate(v):
            _check_dict(f"{where}[{i}]", item, schema, optional)
        return
    ok: bool
    if kind == "str":
        ok = isinstance(v, str) and v != ""
    elif kind == "int":
        ok = _is_int(v)
    elif kind == "count":
        ok = _is_int(v) and v >= 0
    elif kind == "positive":
        ok = _is_int(v) and v >= 1
    elif kind == "names":
        ok = isinstance(v, list) and len(v) > 0 and all(isinstance(n, str) and n for n in v)
    elif kind == "number":
        ok = (_is_int(v) or isinstance(v, float)) and math.isfinite(v)
    elif kind == "dims":
        ok = isinstance(v, list) and all(_is_int(d) and d >= 0 for d in v)
    elif kind == "dtype":
        ok = v in DTYPES
    elif kind == "chip":
        ok = v in CHIPS
    elif kind == "mode":
        ok = v in MODES
    elif kind == "space":
        ok = v in SPACES
    elif kind == "addr_mode":
        ok = v in ADDR_MODES
    elif kind == "io_tag":
        ok = v in IO_TAGS
    else:  # a schema entry without a check is a bug here, not bad input
        raise AssertionError(f"no check for kind {kind}")
    if not ok:
        expected = {"dtype": f"one of {', '.join(DTYPES)}", "chip": f"one of {', '.join(CHIPS)}",
                    "mode": f"one of {', '.join(MODES)}", "dims": "a list of non-negative integers",
                    "count": "a non-negative integer", "positive": "a positive integer",
                    "names": "a non-empty list of non-empty strings", "str": "a non-empty string",
                    "number": "a finite number", "space": f"one of {', '.join(SPACES)}",
                    "addr_mode": f"one of {', '.join(ADDR_MODES)}",
                    "io_tag": f"one of {', '.join(map(str, IO_TAGS))}"}
        raise TpudslError(f"bmodel header: '{where}' must be {expected.get(kind, 'an ' + kind)}, got {v!r}")


def _check_dict(where: str, d: object, schema: dict[str, str], optional: frozenset[str]) -> None:
    if not isinstance(d, dict):
        raise TpudslError(f"bmodel header: '{where}' must be an object, got {type(d).__name__}")
    unknown = sorted(set(d) - set(schema))
    if unknown:
        raise TpudslError(f"bmodel header: unknown key '{unknown[0]}' in '{where}'")
    missing = [k for k in schema if k not in d and k not in optional]
    if missing:
        raise TpudslError(f"bmodel header: missing key '{missing[0]}' in '{where}'")
    for key, value in d.items():
        _check_value(key if where == "header" else f"{where}.{key}", schema[key], value)


def validate_header(header: object) -> None:
    """TpudslError naming the first key of `header` that HEADER_SCHEMA does not allow."""
    _check_dict("header", header, HEADER_SCHEMA, OPTIONAL)
    instructions = header["gdma_count"] + header["bdc_count"]  # type: ignore[index]
    for i, t in enumerate(header.get("tensor_locations", [])):  # type: ignore[union-attr]
        _check_location(f"tensor_locations[{i}]", t, instructions)
    _check_io_layout(header)  # type: ignore[arg-type]
    _check_cores(header, instructions)  # type: ignore[arg-type]
    _check_groups(header, instructions)  # type: ignore[arg-type]


def _all_or_none(h: dict, keys: tuple[str, ...], what: str) -> bool:
    """Whether the header has `keys`, which come all together: some without the others is an error."""
    present = [k for k in keys if k in h]
    if present and len(present) != len(keys):
        missing = next(k for k in keys if k not in h)
        raise TpudslError(f"bmodel header: missing key '{missing}' of {what} (with '{present[0]}')")
    return bool(present)


def _check_cores(h: dict, instructions: int) -> None:
    """Several cores: at least 2, one stream and one cycle count per core, the streams holding
    every instruction of the header."""
    if not _all_or_none(h, CORES, "the cores"):
        return
    if h["core_num"] < 2:
        raise TpudslError(f"bmodel header: 'core_num' is {h['core_num']}; one core is written without the core keys")
    # the cmodel would run cores the chip has not
    check_cores(CHIPS[h["chip"]], h["core_num"], f"bmodel header: 'core_num' is {h['core_num']}, but {h['chip']}",
                "processor-assign num_core")
    for key in CORES[1:]:
        if len(h[key]) != h["core_num"]:
            raise TpudslError(f"bmodel header: '{key}' has {len(h[key])} entries for {h['core_num']} cores")
    if sum(h["core_instructions"]) != instructions:
        raise TpudslError(f"bmodel header: 'core_instructions' {h['core_instructions']} hold "
                          f"{sum(h['core_instructions'])} instructions, the header counts {instructions}")
    if "overlapped_cycles" in h and max(h["core_cycles"]) > h["overlapped_cycles"]:  # busy time is within the run's
        raise TpudslError(f"bmodel header: 'core_cycles' {h['core_cycles']} exceed the run's 'overlapped_cycles' "
                          f"{h['overlapped_cycles']}: a core's busy cycles are the run's less its waits")


def _check_groups(h: dict, instructions: int) -> None:
    """Each layer group's instructions lie in the stream: with several cores (checked before) in
    core 0's, where a group's first/count count its records; else in the header's `instructions`."""
    if "core_num" in h:
        limit = h["core_instructions"][0]
        past = f"core 0's {limit} ('core_instructions'): a group's instructions are its records on core 0"
    else:
        limit, past = instructions, f"the {instructions} instructions of the header"
    for i, g in enumerate(h.get("layer_groups", [])):
        if g["first"] + g["count"] > limit:
            raise TpudslError(f"bmodel header: 'layer_groups[{i}]' spans instructions {g['first']}.."
                              f"{g['first'] + g['count'] - 1}, past {past}")


def tensor_bytes(t: dict) -> int:
    """The bytes of a header tensor (an input or output)."""
    return DTYPES[t["dtype"]] * math.prod(t["shape"])


def tensors_in_tag(h: dict, tag: int) -> str:
    """The inputs and outputs of header `h` in memory tag `tag` (`input 'x', output 'y'`): what
    model_tool --info and the cmodel's faults name."""
    return ", ".join(f"{kind} '{t['name']}'" for kind in ("input", "output") for t in h[f"{kind}s"]
                     if tag_of(t["address"]) == tag)


def gmem_bytes(h: dict) -> int:
    """The untagged global memory header `h` has from the chip's gmem_start: the coefficients,
    io_alone's IO region, the activations (the cmodel's memory; the tags come after)."""
    return h["coeff_mem_bytes"] + h.get("io_size", 0) + h["activation_mem_bytes"]


def _gmem_end(h: dict) -> int:
    """The address where header `h`'s untagged global memory (`gmem_bytes`) ends."""
    return CHIPS[h["chip"]].gmem_start + gmem_bytes(h)


def _inside(t: dict, start: int, end: int) -> bool:
    """Whether input or output `t` lies whole in the addresses [start, end)."""
    return start <= t["address"] <= t["address"] + tensor_bytes(t) <= end


def _io_tensors(h: dict):
    """(kind, key, tensor) for every input and output: ('inputs', 'inputs[0]', {...})."""
    for kind in ("inputs", "outputs"):
        for i, t in enumerate(h[kind]):
            yield kind, f"{kind}[{i}]", t


def _named(key: str, t: dict) -> str:
    """How messages name input or output `key`: "'inputs[0]' ('x', 192 bytes at 0x3000000000)"."""
    return f"'{key}' ('{t['name']}', {tensor_bytes(t)} bytes at {t['address']:#x})"


def _check_io_layout(h: dict) -> None:
    """The addr_mode's keys and no other mode's; io_alone's IO region, the tag modes' tags; and no
    tagged address outside the tags the header lists (a basic header lists none)."""
    mode = h.get("addr_mode", "basic")
    for key in IO_KEYS:
        if key in h and key not in ADDR_MODE_KEYS.get(mode, ()):
            owners = " and ".join(m for m, keys in ADDR_MODE_KEYS.items() if key in keys)
            raise TpudslError(f"bmodel header: '{key}' is a key of addr_mode {owners}, the header's is {mode}")
    if mode not in TAGGED_ADDR_MODES:
        _check_io_region(h)
    elif not CHIPS[h["chip"]].memory_tags:
        raise TpudslError(f"bmodel header: 'addr_mode' is {mode}, which needs memory tags: {h['chip']} has none")
    elif "io_tags" not in h:
        raise TpudslError(f"bmodel header: missing key 'io_tags' of addr_mode {mode}")
    _check_io_tags(h, mode)
    # With tags, the untagged memory must end before the first tag's addresses (else the cmodel would
    # take its far end for a tag's: a fault, tag 1 bound to nothing, rather than a clear message).
    end = _gmem_end(h)
    if "io_tags" in h and end > tag_base(1):
        raise TpudslError(f"bmodel header: the untagged global memory ends at {end:#x}, past the first tag's "
                          f"address {tag_base(1):#x} ('coeff_mem_bytes', 'activation_mem_bytes')")


def check_in_global_memory(h: dict) -> None:
    """Every untagged input and output lies inside the global memory the cmodel gives the header
    (the coefficients, io_alone's IO region, the activations), where it writes and reads them.
    The cmodel's check, not the schema's: the header's addresses are the chip's only when run."""
    start, end = CHIPS[h["chip"]].gmem_start, _gmem_end(h)
    for _, key, t in _io_tensors(h):
        if tag_of(t["address"]) == 0 and not _inside(t, start, end):
            raise TpudslError(f"bmodel header: {_named(key, t)} is not inside global memory [{start:#x}, {end:#x}) "
                              f"('coeff_mem_bytes', 'io_size', 'activation_mem_bytes')")


def _check_io_region(h: dict) -> None:
    """With io_alone, the IO region starts where the coefficients end (the neurons where it ends)
    and holds every input and output whole."""
    if not _all_or_none(h, IO_REGION, "the IO region"):
        return
    start = CHIPS[h["chip"]].gmem_start + h["coeff_mem_bytes"]
    if h["io_addr"] != start:
        raise TpudslError(f"bmodel header: 'io_addr' is {h['io_addr']:#x}, the IO region starts where the "
                          f"coefficients end, at {start:#x}")
    end = start + h["io_size"]
    for _, key, t in _io_tensors(h):
        if not _inside(t, start, end):
            raise TpudslError(f"bmodel header: {_named(key, t)} is not inside the IO region [{start:#x}, {end:#x}) "
                              f"('io_addr', 'io_size')")


def _check_io_tags(h: dict, mode: str) -> None:
    """Each tagged input and output lies inside its tag's memory, a tag the header lists; io_tag
    binds one tensor to each tag, io_tag_fuse the inputs to tag 3 and the outputs to tag 4 (untagged
    IO is io_tag's sixth and later, among the activations); every listed tag holds a tensor."""
    tags = h.get("io_tags", [])
    listed: dict[int, int] = {}
    for i, r in enumerate(tags):
        if r["tag"] in listed:
            raise TpudslError(f"bmodel header: 'io_tags[{i}]' repeats tag {r['tag']} of 'io_tags[{listed[r['tag']]}]'")
        if r["size"] > tag_base(1):  # a tag's addresses: tag << 36 up to the next tag's
            raise TpudslError(f"bmodel header: 'io_tags[{i}].size' is {r['size']}, more than the {tag_base(1)} "
                              f"addresses of a memory tag")
        listed[r["tag"]] = i
    holder: dict[int, tuple[str, str]] = {}  # tag -> (the first tensor's name, its key)
    for kind, key, t in _io_tensors(h):
        tag = tag_of(t["address"])
        if mode == "io_tag_fuse":
            fused = IO_TAGS[1] if kind == "outputs" else IO_TAGS[0]
            if tag != fused:
                raise TpudslError(f"bmodel header: {_named(key, t)} is not in tag {fused}: io_tag_fuse binds the "
                                  f"inputs to tag {IO_TAGS[0]} and the outputs to tag {IO_TAGS[1]}")
        if tag == 0:
            if mode == "io_tag" and len(tags) < len(IO_TAGS):
                raise TpudslError(f"bmodel header: {_named(key, t)} has no tag, and 'io_tags' lists {len(tags)} "
                                  f"of the {len(IO_TAGS)}: io_tag tags every input and output up to five")
            continue
        if tag not in listed:
            raise TpudslError(f"bmodel header: {_named(key, t)} has tag {tag}, which 'io_tags' does not list")
        start = tag_base(tag)
        end = start + tags[listed[tag]]["size"]
        if not _inside(t, start, end):  # tag_of: its address is at the tag's start or after
            raise TpudslError(f"bmodel header: {_named(key, t)} is not inside tag {tag}'s memory "
                              f"[{start:#x}, {end:#x}) ('io_tags[{listed[tag]}]')")
        first = holder.setdefault(tag, (t["name"], key))
        if mode == "io_tag" and first[0] != t["name"]:
            raise TpudslError(f"bmodel header: {_named(key, t)} shares tag {tag} with '{first[1]}' ('{first[0]}'): "
                              f"io_tag binds one tensor to each tag")
    for tag, i in listed.items():
        if tag not in holder:
            raise TpudslError(f"bmodel header: 'io_tags[{i}]' (tag {tag}) holds no input or output")


def _check_location(where: str, t: dict, instructions: int) -> None:
    """Each piece lies inside the tensor's 4-D view, is read after an instruction of the stream,
    and has strides exactly when it is in global memory."""
    view = t["view"]
    if len(view) != 4 or math.prod(view) != math.prod(t["shape"]):
        raise TpudslError(f"bmodel header: '{where}.view' {view} is not a 4-D view of shape {t['shape']}")
    for j, p in enumerate(t["pieces"]):
        at = f"{where}.pieces[{j}]"
        if p["after"] >= instructions:
            raise TpudslError(f"bmodel header: '{at}.after' is {p['after']}, past the {instructions} instructions "
                              f"of the header")
        if len(p["start"]) != 4 or len(p["shape"]) != 4 or any(
                s + n > v for s, n, v in zip(p["start"], p["shape"], view, strict=True)):
            raise TpudslError(f"bmodel header: '{at}' (start {p['start']}, shape {p['shape']}) is not inside the "
                              f"view {view}")
        if ("strides" in p) != (p["space"] == "global") or len(p.get("strides", [0] * 4)) != 4:
            raise TpudslError(f"bmodel header: '{at}' must have 4 strides when in global memory, none in local")


def validate_debug(debug: object, instructions: int) -> None:
    """Each entry is (instruction index below `instructions`, non-empty op location name)."""
    if not isinstance(debug, list):
        raise TpudslError(f"bmodel debug info must be a list, got {type(debug).__name__}")
    for i, entry in enumerate(debug):
        if not (isinstance(entry, (tuple, list)) and len(entry) == 2 and _is_int(entry[0])
                and isinstance(entry[1], str) and entry[1]):
            raise TpudslError(f"bmodel debug entry {i} must be (instruction index, op name), got {entry!r}")
        if not 0 <= entry[0] < instructions:
            raise TpudslError(f"bmodel debug entry {i}: instruction {entry[0]} is not below the "
                              f"{instructions} instructions of the header (gdma_count + bdc_count)")


def check_coeffs(header: dict, coeffs: bytes) -> None:
    """The coefficient blob fits the coefficient memory the header gives it (the cmodel copies it
    to the start of global memory; the activations follow at `coeff_mem_bytes`). The cmodel's
    check, as check_in_global_memory."""
    if len(coeffs) > header["coeff_mem_bytes"]:
        raise TpudslError(f"bmodel: the coeffs section holds {len(coeffs)} bytes, more than the header's "
                          f"'coeff_mem_bytes' {header['coeff_mem_bytes']}")


def canonical_json(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def encode_bmodel(header: dict, coeffs: bytes, commands: bytes, debug: list[tuple[int, str]]) -> bytes:
    """The bytes of a .bmodel; TpudslError when the header or debug info breaks the schema."""
    validate_header(header)
    validate_debug(debug, header["gdma_count"] + header["bdc_count"])
    if not isinstance(coeffs, (bytes, bytearray)) or not isinstance(commands, (bytes, bytearray)):
        raise TpudslError("bmodel coefficients and commands must be bytes")
    bodies = [canonical_json(header), bytes(coeffs), bytes(commands),
              canonical_json([list(e) for e in debug]) if debug else b""]
    entries, offset = [], FIRST_SECTION
    for kind, body in enumerate(bodies, start=1):
        entries.append(_ENTRY.pack(kind, zlib.crc32(body), offset, len(body)))
        offset = align(offset + len(body))
    table = _PREAMBLE.pack(MAGIC, VERSION, len(SECTIONS)) + b"".join(entries)
    out = bytearray(table + _TABLE_CRC.pack(zlib.crc32(table)))
    for body in bodies:
        out += bytes(-len(out) % ALIGN) + body
    return bytes(out)


def write_bmodel(path: str | os.PathLike[str], header: dict, coeffs: bytes, commands: bytes,
                 debug: list[tuple[int, str]]) -> None:
    """Write a .bmodel atomically (a temporary file renamed): an error leaves `path` untouched."""
    write_bytes(path, encode_bmodel(header, coeffs, commands, debug))


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write an encoded .bmodel atomically (a temporary file renamed): an error leaves `path` untouched."""
    from tpudsl.ir.module import write_atomically  # the module API pulls in xDSL: only when writing

    write_atomically(path, lambda f: f.write(data))


def align(n: int) -> int:
    """`n` rounded up to a multiple of ALIGN (where every section starts)."""
    return -(-n // ALIGN) * ALIGN


def section(data: bytes, what: str, end: int, offset: int, length: int) -> bytes:
    """Bytes offset..offset+length after zero padding from `end` (the previous section's end)."""
    if any(data[end:offset]):
        raise TpudslError(f"corrupt bmodel: non-zero padding before {what}")
    if offset + length > len(data):
        raise TpudslError(f"truncated bmodel: {what} needs bytes {offset}..{offset + length}, the file has {len(data)}")
    return data[offset: offset + length]


def _section_table(data: bytes) -> list[tuple[int, int, int]]:
    """(crc32, offset, length) of each section, after checking the preamble and the table."""
    if len(data) == 0:
        raise TpudslError("not a bmodel: the file is empty")
    if data[: len(MAGIC)] != MAGIC[: len(data)]:  # a file shorter than the magic but agreeing is truncated
        raise TpudslError(f"not a bmodel: wrong magic {data[:len(MAGIC)]!r} (expected {MAGIC!r})")
    if len(data) < TABLE_END:
        raise TpudslError(f"truncated bmodel: {len(data)} bytes, the section table needs {TABLE_END}")
    _, version, count = _PREAMBLE.unpack_from(data)
    if version == COMBINED_VERSION:
        raise TpudslError("a combined bmodel (several networks or stages, version 2) where one stage was expected: "
                          "take it out with model_tool --extract")
    if version != VERSION:
        raise TpudslError(f"unsupported bmodel version {version} (this tpudsl reads versions {VERSION} and {COMBINED_VERSION})")
    table_end = TABLE_END - _TABLE_CRC.size
    (crc,) = _TABLE_CRC.unpack_from(data, table_end)
    if crc != zlib.crc32(data[:table_end]):
        raise TpudslError("corrupt bmodel: checksum mismatch in the section table")
    if count != len(SECTIONS):  # the table's checksum held: a writer bug, or a newer format
        raise TpudslError(f"corrupt bmodel: {count} sections, version {VERSION} has {len(SECTIONS)}")
    table = []
    for i, name in enumerate(SECTIONS):
        kind, crc, offset, length = _ENTRY.unpack_from(data, _PREAMBLE.size + i * _ENTRY.size)
        if kind != i + 1:
            raise TpudslError(f"corrupt bmodel: section {i} has kind {kind}, expected {i + 1} ({name})")
        table.append((crc, offset, length))
    return table


def decode_bmodel(data: bytes) -> Bmodel:
    """The Bmodel in `data`; TpudslError with one message for any damage (see module doc)."""
    table = _section_table(data)
    bodies, end = [], TABLE_END
    for name, (crc, offset, length) in zip(SECTIONS, table, strict=True):
        if offset != align(end):
            raise TpudslError(f"corrupt bmodel: the {name} section starts at {offset}, expected {align(end)}")
        body = section(data, f"the {name} section", end, offset, length)
        if zlib.crc32(body) != crc:
            raise TpudslError(f"corrupt bmodel: checksum mismatch in the {name} section")
        bodies.append(body)
        end = offset + length
    if len(data) != end:
        raise TpudslError(f"corrupt bmodel: {len(data) - end} bytes after the last section")
    header = json_section("header", bodies[0])
    validate_header(header)
    debug = json_section("debug", bodies[3]) if bodies[3] else []
    validate_debug(debug, header["gdma_count"] + header["bdc_count"])
    return Bmodel(header, bodies[1], bodies[2], [(i, name) for i, name in debug])


def json_section(name: str, body: bytes) -> object:
    # A checksum that holds over bad JSON means the writer was not ours (or had a bug).
    try:
        return json.loads(body.decode("ascii"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as e:
        raise TpudslError(f"corrupt bmodel: the {name} section is not canonical JSON ({e})") from None


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


T = TypeVar("T")


def read_file(path: str | os.PathLike[str], decode: Callable[[bytes], T]) -> T:
    """`decode` of the file's bytes; its TpudslError is prefixed with the path."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return decode(data)
    except TpudslError as e:
        raise TpudslError(e.message, file=os.fspath(path)) from None


def read_bmodel(path: str | os.PathLike[str]) -> Bmodel:
    """Read and check a .bmodel of one stage; every error is a TpudslError prefixed with the path."""
    return read_file(path, decode_bmodel)
