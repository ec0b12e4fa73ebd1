"""Chips as data: what the backend needs to know about a TPU, one row per chip.

bm1684x's memory numbers are TPU-MLIR's (BM1684X.h: NPU_NUM 64, LMEM_BYTES 1<<18 per lane,
16 banks, EU_BYTES 64, DMA alignment 512, global memory from 0x100000000). bm1688's lane count
and local memory follow TPU-MLIR's log line `NPU_NUM=32 LocalMem size=4194304` (32 x 128 KiB), per
core; it has 2 cores (model_deploy's `--num_core 2`), bm1684x one.
The throughput numbers feed the cost model only; they are our estimates, not the vendor's, and
nothing checks a result against them. `tiny` is made up for tests: 4 lanes of 16 KiB, so that
local-memory slicing happens on tensors small enough to test quickly, and with the bank rule
(`bank_conflict_rule`: an op's output tile shares no bank with its input tiles,
as chips whose engines cannot read and write one bank at once require), so that tests exercise it.

Memory tags (`Chip.memory_tags`, TPU-MLIR's `SUPPORT_MEM_TAG`: bm1688 yes, bm1684x no; tiny yes, so
that tests exercise them) are the address bits 36-38 the runtime binds to a buffer: TPU-MLIR's
BM1688.h numbers them 0 users, 1 weights, 2 activations, 3-7 the five IO tags IO0-IO4. tpudsl
models only the IO tags (processor-assign's addr_mode io_tag and io_tag_fuse, docs/backend.md):
an address with tag t in IO_TAGS is byte `address - tag_base(t)` of tag t's own memory; the
coefficients and activations stay untagged, from `gmem_start`, below `tag_base(1)`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tpudsl.ir.diagnostics import TpudslError

MODES = ("F32", "F16", "BF16", "INT8", "W8F16", "W8BF16", "W4F16", "W4BF16")


@dataclass(frozen=True)
class Chip:
    name: str
    lanes: int  # NPU count: channel c lives on lane c % lanes
    lmem_bytes: int  # local memory per lane; valid offsets are < lmem_bytes
    banks: int
    eu_bytes: int  # alignment of a lane's rows (execution-unit width)
    dma_align: int  # global-memory alignment of DMA transfers
    gmem_start: int  # first global-memory address of activations and coefficients
    macs_per_cycle_per_lane: int
    dma_bytes_per_cycle: int
    clock_mhz: int
    # TPU cores, each with its own lanes and local memory, sharing global memory (bm1688: 2). In
    # CHIPS the cores the chip has; layer_group.module_chip gives the cores a module is compiled for
    # (module.cores, processor-assign's num_core), which layer-group, codegen and the cost model read
    cores: int = 1
    modes: tuple[str, ...] = MODES
    # an op's output tile is never in a bank its input tiles touch (weights aside): in a layer group
    # (layer_group/plan.py) and alone (output_start)
    bank_conflict_rule: bool = False
    # addresses may carry a memory tag (the module docstring): addr_mode io_tag/io_tag_fuse
    memory_tags: bool = False

    @property
    def bank_bytes(self) -> int:
        return self.lmem_bytes // self.banks

    def output_start(self, inputs_end: int) -> int:
        """Where an op alone (a group of one) puts its output tile when its input tiles end at
        `inputs_end` (they lie just before: codegen's bump allocation, slicing.footprint): with the
        bank rule, the next bank boundary, so that no bank holds both; else right there."""
        bank = self.bank_bytes
        return -(-inputs_end // bank) * bank if self.bank_conflict_rule else inputs_end


CHIPS: dict[str, Chip] = {
    chip.name: chip
    for chip in (
        Chip("bm1684x", lanes=64, lmem_bytes=1 << 18, banks=16, eu_bytes=64, dma_align=512,
             gmem_start=0x1_0000_0000, macs_per_cycle_per_lane=64, dma_bytes_per_cycle=64, clock_mhz=1000),
        Chip("bm1688", lanes=32, lmem_bytes=1 << 17, banks=16, eu_bytes=32, dma_align=512,
             gmem_start=0x1_0000_0000, macs_per_cycle_per_lane=32, dma_bytes_per_cycle=32, clock_mhz=900,
             cores=2, memory_tags=True),
        Chip("tiny", lanes=4, lmem_bytes=1 << 14, banks=4, eu_bytes=16, dma_align=64,
             gmem_start=0x1000, macs_per_cycle_per_lane=4, dma_bytes_per_cycle=16, clock_mhz=100,
             bank_conflict_rule=True, memory_tags=True),
    )
}


TAG_SHIFT = 36  # an address's tag is its bits 36-38
IO_TAGS = (3, 4, 5, 6, 7)  # TPU-MLIR's TAG_IO0 .. TAG_IO4


def tag_of(address: int) -> int:
    """The memory tag of a global address (0: untagged)."""
    return address >> TAG_SHIFT


def tag_base(tag: int) -> int:
    """The address of byte 0 of tag `tag`'s memory."""
    return tag << TAG_SHIFT


# processor-assign's addr_modes that it records as module.addr_mode (auto and basic record nothing):
# io_alone's IO region, and the IO in memory tags, on chips with them only (TAGGED_ADDR_MODES)
TAGGED_ADDR_MODES = ("io_tag", "io_tag_fuse")
ADDR_MODES = ("io_alone", *TAGGED_ADDR_MODES)


def check_addr_mode(chip: Chip, mode: str, given: str) -> None:
    """A tag mode (TAGGED_ADDR_MODES) is on a chip with memory tags, else one error: `given` says
    what was given, then the chips that have them."""
    if mode in TAGGED_ADDR_MODES and not chip.memory_tags:  # TPU-MLIR asserts isBM1688()
        tagged = ", ".join(c.name for c in CHIPS.values() if c.memory_tags)
        raise TpudslError(f"{given} needs a chip with memory tags; {chip.name} has none "
                          f"(chips with memory tags: {tagged})")


def check_cores(chip: Chip, cores: object, given: str, option: str) -> None:
    """`cores` (processor-assign's num_core, a module's module.cores) is 1 up to the chip's cores,
    else one error: `given` says what was given, then the chip's cores and `option`'s range."""
    if not (isinstance(cores, int) and 1 <= cores <= chip.cores):
        raise TpudslError(f"{given} has {chip.cores} core{'s' if chip.cores > 1 else ''} "
                          f"({option}=1..{chip.cores})")


def chip_named(name: str) -> Chip:
    """The chip `name` (case-insensitive, as TPU-MLIR's --chip/--processor); KeyError naming the known ones."""
    chip = CHIPS.get(name.lower())
    if chip is None:
        raise KeyError(f"unknown chip '{name}'; known chips: {', '.join(CHIPS)}")
    return chip


def chip_for(name: str, context: str) -> Chip:
    """The chip a command line or pass option names: an unknown one is bad input,
    `<context>: unknown chip ...; known chips: ...`."""
    try:
        return chip_named(name)
    except KeyError as e:
        raise TpudslError(f"{context}: {e.args[0]}") from None
