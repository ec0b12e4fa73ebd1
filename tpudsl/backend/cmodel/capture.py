"""Every tensor a .bmodel computes, captured while the cmodel runs (model_runner --dump_all_tensors,
bmodel_checker): the header's `tensor_locations` (backend/tensor_locations.py) say which pieces of
each tensor's 4-D view to read after which instruction, from global or local memory. A piece is read
right after its instruction, before anything can reuse its bytes; a tensor whose pieces do not cover
every element is an error naming it (never zeros in its place).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

import numpy as np

from tpudsl.backend.cmodel.memory import NUMPY, Memory
from tpudsl.ir.diagnostics import TpudslError


class Capture:
    """The tensors of `locations`, filled by `after(memory, i)` as instruction i completes."""

    def __init__(self, locations: list[Mapping]):
        self.tensors = {t["name"]: np.zeros(t["view"], NUMPY[t["dtype"]]) for t in locations}
        self._covered = {t["name"]: np.zeros(t["view"], bool) for t in locations}
        self._locations = locations
        self._at: dict[int, list[tuple[str, Mapping]]] = defaultdict(list)
        for t in locations:
            for p in t["pieces"]:
                self._at[p["after"]].append((t["name"], p))

    def after(self, memory: Memory, i: int) -> None:
        for name, p in self._at.get(i, ()):
            dtype, shape = self.tensors[name].dtype, tuple(p["shape"])
            if p["space"] == "global":
                data = memory.read_global(p["address"], p["strides"], shape, dtype)
            else:
                data = memory.read_local(p["address"], shape, dtype)
            where = tuple(slice(s, s + n) for s, n in zip(p["start"], shape, strict=True))
            self.tensors[name][where] = data
            self._covered[name][where] = True

    def result(self) -> dict[str, np.ndarray]:
        """Each tensor in its own shape, in the order its last piece was read (the ops' execution order)."""
        missing = [name for name, seen in self._covered.items() if not seen.all()]
        if missing:
            raise TpudslError(f"bmodel: the tensor locations do not cover every element of {', '.join(missing)}")
        done = sorted(self._locations, key=lambda t: max((p["after"] for p in t["pieces"]), default=-1))
        return {t["name"]: self.tensors[t["name"]].reshape(t["shape"]) for t in done}
