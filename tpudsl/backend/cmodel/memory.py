"""The cmodel's memories: global memory (bytes from the chip's gmem_start, and the io_tag modes'
memory tags, chips.tag_of) and local memory (one row of bytes per lane), with every access
bounds-checked.

Local tensors use the layout of isa.py: channel c on lane c % lanes, EU-aligned rows. A fault is
`Fault("dst_offset 0x41000 >= 0x40000 (lane 3)")`; the engine adds the instruction and op name.
"""

from __future__ import annotations

import math

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.chips import Chip, tag_base, tag_of
from tpudsl.ir.diagnostics import TpudslError


class _Dtypes(dict):
    """Record dtype names -> numpy dtypes; bf16 imports ml_dtypes on first use (its import takes 0.5 s)."""

    def __missing__(self, name: str) -> np.dtype:
        if name != "bf16":
            raise KeyError(name)
        import ml_dtypes

        self[name] = np.dtype(ml_dtypes.bfloat16)
        return self[name]


NUMPY = _Dtypes(f32=np.dtype(np.float32), f16=np.dtype(np.float16), i8=np.dtype(np.int8), u8=np.dtype(np.uint8),
                i32=np.dtype(np.int32))


class Fault(Exception):
    """An access outside a memory (the message says which offset, which limit, which lane)."""


def contiguous(shape) -> tuple[int, ...]:
    """The element strides of a row-major tensor of `shape` (global memory's tensors are laid out so)."""
    return tuple(int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape)))


def numpy_dtype(code: int) -> np.dtype:
    if code not in isa.DTYPE_NAMES:
        raise Fault(f"unknown dtype code {code}")
    return NUMPY[isa.DTYPE_NAMES[code]]


def _allocated(what: str, size: int) -> np.ndarray:
    """`size` zero bytes; a size this machine cannot hold (a header's, e.g. a damaged
    activation_mem_bytes) is one error naming it, not a crash."""
    try:
        return np.zeros(size, np.uint8)
    except (MemoryError, ValueError):  # ValueError: numpy's "array is too big" (over its address space)
        raise TpudslError(f"cmodel: cannot allocate the bmodel's {what}, {size} bytes") from None


class Memory:
    """`tags`: the io_tag modes' memory tags, tag -> (bytes, the tensors bound to it as faults name
    them); each its own array: an access that leaves a tag's memory is a fault, never another's byte."""

    def __init__(self, chip: Chip, gmem_bytes: int, tags: dict[int, tuple[int, str]] | None = None):
        self.chip = chip
        self.gmem = _allocated("global memory", gmem_bytes)
        self.lmem = np.zeros((chip.lanes, chip.lmem_bytes), np.uint8)
        self.tags = {tag: (_allocated(f"tag {tag}'s memory", size), bound) for tag, (size, bound) in (tags or {}).items()}

    def touched(self, what: str, start: int, end: int) -> None:
        """Global bytes [start, end) read ("src") or written ("dst"); a core's memory logs them
        (cmodel/cores.py)."""

    # ---- global ----
    def _global_view(self, what: str, gaddr: int, strides, shape, dtype: np.dtype) -> np.ndarray:
        steps = [(d - 1) * s for d, s in zip(shape, strides, strict=True) if d > 0]  # a negative stride walks back
        first = gaddr + sum(min(0, s) for s in steps) * dtype.itemsize
        last = gaddr + sum(max(0, s) for s in steps) * dtype.itemsize
        memory, base, where, bound = self.gmem, self.chip.gmem_start, "global memory", ""
        tag = tag_of(first)
        if tag:
            if tag not in self.tags:
                raise Fault(f"{what}_address 0x{first:x} has tag {tag}, which no input or output is bound to")
            memory, tensors = self.tags[tag]
            base, where, bound = tag_base(tag), f"tag {tag}'s memory", f" ({tensors})"
        if first < base or last + dtype.itemsize > base + len(memory):
            raise Fault(f"{what}_address 0x{first:x}..0x{last + dtype.itemsize:x} is outside {where} "
                        f"[0x{base:x}, 0x{base + len(memory):x}){bound}")
        self.touched(what, first, last + dtype.itemsize)
        return np.ndarray(shape, dtype, buffer=memory.data, offset=gaddr - base,
                          strides=tuple(s * dtype.itemsize for s in strides))

    def read_global(self, gaddr: int, strides, shape, dtype: np.dtype) -> np.ndarray:
        return self._global_view("src", gaddr, strides, shape, dtype).copy()

    def read_run(self, gaddr: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A tensor stored contiguously at gaddr: one flat run, shaped."""
        return self.read_global(gaddr, (1,), (math.prod(shape),), dtype).reshape(shape)

    def write_global(self, gaddr: int, strides, data: np.ndarray) -> None:
        self._global_view("dst", gaddr, strides, data.shape, data.dtype)[...] = data

    def copy_global(self, src: int, dst: int, nbytes: int) -> None:
        data = self.read_global(src, (1,), (nbytes,), np.dtype(np.uint8))
        self.write_global(dst, (1,), data)

    # ---- local ----
    def _lanes(self, what: str, laddr: int, n: int, c: int, h: int, w: int, esize: int) -> tuple[int, int, int]:
        """(lanes used, channel groups, row bytes); Fault when the tensor runs past local memory."""
        lanes = min(c, self.chip.lanes)
        groups, row = isa.cgroups(c, self.chip.lanes), isa.row_bytes(h, w, esize, self.chip.eu_bytes)
        end = laddr + n * groups * row
        if n * c * h * w and end > self.chip.lmem_bytes:
            raise Fault(f"{what}_offset 0x{end - 1:x} >= 0x{self.chip.lmem_bytes:x} (lane {lanes - 1})")
        return lanes, groups, row

    def read_local(self, laddr: int, shape, dtype: np.dtype) -> np.ndarray:
        n, c, h, w = shape
        lanes, groups, row = self._lanes("src", laddr, n, c, h, w, dtype.itemsize)
        if n * c * h * w == 0:
            return np.zeros(shape, dtype)
        raw = self.lmem[:lanes, laddr:laddr + n * groups * row].reshape(lanes, n, groups, row)
        planes = raw.copy().view(dtype)[..., : h * w]  # (lanes, n, groups, h*w)
        full = np.zeros((n, groups * self.chip.lanes, h * w), dtype)
        full.reshape(n, groups, self.chip.lanes, h * w)[:, :, :lanes] = planes.transpose(1, 2, 0, 3)
        return full[:, :c].reshape(shape)

    def write_local(self, laddr: int, data: np.ndarray) -> None:
        n, c, h, w = data.shape
        lanes, groups, row = self._lanes("dst", laddr, n, c, h, w, data.dtype.itemsize)
        if data.size == 0:
            return
        full = np.zeros((n, groups * self.chip.lanes, h * w), data.dtype)
        full[:, :c] = data.reshape(n, c, h * w)
        end = laddr + n * groups * row
        region = self.lmem[:lanes, laddr:end].reshape(lanes, n, groups, row).copy()  # written back below
        planes = full.reshape(n, groups, self.chip.lanes, h * w)[:, :, :lanes].transpose(2, 0, 1, 3)
        region[..., : h * w * data.itemsize] = np.ascontiguousarray(planes).view(np.uint8)
        self.lmem[:lanes, laddr:end] = region.reshape(lanes, -1)
