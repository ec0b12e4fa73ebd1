"""The cmodel of several cores: each core its own lanes and local memory, global memory shared.

The cores run one after another, phase by phase (the records between two `isa.CoreSync`
barriers, backend/cores.py): every core's phase k, then every core's phase k + 1. That order is
one the chip may take only if no core depends on another within a phase, so two things that
would make it differ from the chip are faults: a core reading local bytes that no record of that
core wrote (another core's tile: local memories are not shared), and a core reading global bytes
that another core writes in the same phase (a race: on the chip it might read them before or
after the write).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel.engine import execute
from tpudsl.backend.cmodel.memory import Fault, Memory
from tpudsl.backend.cores import check_barriers, starts, streams_of
from tpudsl.ir.diagnostics import TpudslError


class CoreMemory(Memory):
    """One core: the shared global memory, its own lanes; which local bytes it wrote, and the
    global bytes each of its instructions read and wrote in the current phase."""

    def __init__(self, shared: Memory, core: int):
        super().__init__(shared.chip, 0)
        self.gmem, self.tags, self.core = shared.gmem, shared.tags, core
        self.written = np.zeros(self.lmem.shape, bool)
        self.pending: list[tuple[str, int, int]] = []  # the running instruction's global accesses
        self.accesses: list[tuple[str, int, int, int]] = []  # (src/dst, start, end, instruction) this phase

    def touched(self, what: str, start: int, end: int) -> None:
        self.pending.append((what, start, end))

    def done(self, index: int) -> None:
        self.accesses += [(what, start, end, index) for what, start, end in self.pending]
        self.pending = []

    def _planes(self, mask: np.ndarray, laddr: int, shape, esize: int) -> np.ndarray:
        """The bytes of a local (n, c, h, w) tensor in `mask`'s lanes (its rows' padding aside)."""
        n, c, h, w = shape
        lanes, groups, row = self._lanes("src", laddr, n, c, h, w, esize)
        return mask[:lanes, laddr:laddr + n * groups * row].reshape(lanes, n, groups, row)[..., : h * w * esize]

    def read_local(self, laddr: int, shape, dtype: np.dtype) -> np.ndarray:
        if np.prod(shape) and not self._planes(self.written, laddr, shape, dtype.itemsize).all():
            raise Fault(f"core {self.core} reads local bytes at 0x{laddr:x} (a {'x'.join(map(str, shape))} "
                        f"{dtype} tile) that it never wrote: another core's local memory is not its own")
        return super().read_local(laddr, shape, dtype)

    def write_local(self, laddr: int, data: np.ndarray) -> None:
        super().write_local(laddr, data)
        if data.size:
            self._planes(self.written, laddr, data.shape, data.dtype.itemsize)[...] = True


def run_cores(shared: Memory, records: Sequence[isa.Record], names: Sequence[str], counts: Sequence[int],
              after: Callable[[Memory, int], None] | None = None) -> None:
    """Run the streams of `counts` instructions each (the header's core_instructions, one after
    another in `records`) phase by phase on `shared`'s global memory."""
    streams, first = streams_of(records, counts), starts(counts)
    cores = [CoreMemory(shared, k) for k in range(len(counts))]

    def finished(m: Memory, index: int) -> None:
        m.done(index)  # type: ignore[attr-defined]
        if after is not None:
            after(m, index)
            m.pending = []  # type: ignore[attr-defined]  # capture.py's reads are no instruction's

    for phase in zip(*check_barriers(streams), strict=True):
        for m, start, (begin, end) in zip(cores, first, phase, strict=True):
            execute(m, streams[m.core][begin:end], names[start + begin:start + end], finished, first=start + begin)
        _check_races(cores, names)


def _check_races(cores: list[CoreMemory], names: Sequence[str]) -> None:
    """No core reads global bytes another core writes in the same phase; the phase's log cleared."""
    spans = [{what: np.array([a[1:] for a in m.accesses if a[0] == what], np.int64).reshape(-1, 3)
              for what in ("src", "dst")} for m in cores]
    for reader, read in zip(cores, spans, strict=True):
        for writer, written in zip(cores, spans, strict=True):
            r, w = read["src"], written["dst"]
            if writer is reader or not len(r) or not len(w):
                continue
            overlap = (r[:, None, 0] < w[None, :, 1]) & (w[None, :, 0] < r[:, None, 1])
            if overlap.any():
                i, j = np.argwhere(overlap)[0]
                (start, end, index), at = r[i], int(w[j, 2])
                raise TpudslError(f"cmodel: core {reader.core} reads global bytes 0x{start:x}..0x{end:x} at "
                                  f"instruction {index} ({names[index]}) that core {writer.core} writes between "
                                  f"the same barriers (instruction {at}, {names[at]}): a race")
    for m in cores:
        m.accesses = []
