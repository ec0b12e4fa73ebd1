"""`--layer-group="opt=1|2|3"`: how the Tpu ops are cut into slices that fit the chip's local memory.

opt=1: every op is its own group (`single.py`): its output is split along N, then H, into the
fewest parts that fit. opt=2 (the default) also searches for groups of several consecutive ops
(`search.py`) whose intermediate tensors stay in local memory (`plan.py`); opt=3 is opt=2 (no
further strategy yet). The decisions are in the IR, so it shows and round-trips what codegen
will do: an op alone gets `nsecs`, `hsecs` (TPU-MLIR's names on tpu.Group) and `lmem_bytes` (bytes
per lane); a group of several ops becomes a `tpu.Group` region with tpu.Load/tpu.Store
(`region.py`), its first weights placed for prefetch during the group before where they fit
(`prefetch.py`). A run on a module with groups undoes them first (`ungroup`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from tpudsl.backend.chips import Chip, check_cores, chip_named
from tpudsl.ir.diagnostics import TpudslError, check_option


def module_chip(module: ModuleOp, context: str = "backend") -> Chip:
    """The chip the module is compiled for, its `cores` the module's (module.cores, absent: 1)."""
    attr = module.attributes.get("module.chip")
    try:
        chip = chip_named(attr.data if isinstance(attr, StringAttr) else "")
    except KeyError:
        raise TpudslError(f"{context}: module.chip is {attr}; run --processor-assign first") from None
    attr = module.attributes.get("module.cores")
    cores = attr.value.data if isinstance(attr, IntegerAttr) else attr
    if attr is not None:
        check_cores(chip, cores, f"{context}: module.cores is {cores}, but chip {chip.name}",
                    "processor-assign num_core")
    return replace(chip, cores=cores or 1)


def ungroup(module: ModuleOp) -> None:
    """Undo earlier --layer-group regions: each tpu.Group's ops back in its place, without its Loads
    and Stores, and without their layer-group info (a new run decides again)."""
    for group in [op for op in module.walk() if op.name == "tpu.Group"]:
        undo_group(group)


def undo_group(group: Operation) -> None:
    """One tpu.Group's ops back in its place, without its Loads, Stores and their layer-group info."""
    from tpudsl.backend.layer_group.region import ginfo_key

    inner = list(group.body.block.ops)  # type: ignore[attr-defined]
    for result, value in zip(group.results, inner[-1].operands, strict=True):
        result.replace_all_uses_with(value.owner.operands[0])  # type: ignore[union-attr]
    for o in inner:
        if o.name in ("tpu.Load", "tpu.Store", "tpu.Yield"):
            for r in o.results:
                r.replace_all_uses_with(o.operands[0])
            o.detach()
            o.erase()
        else:
            o.detach()
            o.attributes.pop(ginfo_key(o), None)
            group.parent_block().insert_op_before(o, group)  # type: ignore[union-attr]
    group.detach()
    group.erase()


def describe_groups(module: ModuleOp) -> str:
    """The decisions as text, one line per group (model_deploy --debug writes it)."""
    from tpudsl.backend.layer_group.region import members
    from tpudsl.backend.slicing import KINDS
    from tpudsl.dialects.opdef import loc_name

    lines = []
    for op in module.walk():
        alone = op.name in KINDS and op.parent_op().name != "tpu.Group"  # type: ignore[union-attr]
        if op.name == "tpu.Group" or alone:
            ops = members(op) if op.name == "tpu.Group" else [op]
            a = {k: op.attributes[k].value.data for k in ("nsecs", "hsecs", "lmem_bytes")}  # type: ignore[attr-defined]
            cw = "".join(f" {k}={op.attributes[k].value.data}" for k in ("csecs", "wsecs")  # type: ignore[attr-defined]
                         if k in op.attributes)
            names = ", ".join(loc_name(m) or m.name for m in ops)
            lines.append(f"group of {len(ops)}: nsecs={a['nsecs']} hsecs={a['hsecs']}{cw} "
                         f"lmem_bytes={a['lmem_bytes']}: {names}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class LayerGroupPass(ModulePass):
    """Split the Tpu ops into slices that fit local memory; opt=2/3 also groups consecutive ops.
    slice_weights: TEST-ONLY; groups of one budget dynamic filters like activations
    (slicing.budgeted_whole_tiles) to reproduce the DragGAN failure. Never use it to deploy."""

    name = "layer-group"

    opt: int = 2
    slice_weights: bool = False
    prefetch: bool = True  # load a group's weights during the group before (prefetch.py); false: never
    # TPU-MLIR's options (mlir_shell.py), checked by check_options; docs/tpuc-opt.md
    group_by_cores: str = "auto"
    compress_mode: str = "none"
    debugger: int = 0
    disable_group_overlap: bool = False  # true: as prefetch=false
    lgcache: bool = True
    config_filename: str = ""
    enable_lghash: bool = False
    lghash_dir: str = ""

    def check_options(self) -> None:
        """The values of TPU-MLIR's options that tpudsl models: disable_group_overlap=true is
        prefetch=false here; lgcache is a cache of TPU-MLIR's search results, and tpudsl writes none
        either way."""
        for option, accepted, why in (
            ("group_by_cores", ("auto", "false"),
             "tpudsl searches groups without forcing them to the cores (each op's slices are dealt to them)"),
            ("compress_mode", ("none",), "tpudsl compresses no weight or activation"),
            ("debugger", (0,), "TPU-MLIR's layer-group debugger modes are not modelled"),
            ("config_filename", ("",), "a layer-group configuration file is not read"),
            ("enable_lghash", (False,), "groupings cached by hash are not read"),
            ("lghash_dir", ("",), "groupings cached by hash are not read"),
        ):
            check_option(self.name, option, getattr(self, option), accepted, why)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        from tpudsl.backend.layer_group.prefetch import prefetches
        from tpudsl.backend.layer_group.region import build
        from tpudsl.backend.layer_group.search import search
        from tpudsl.backend.layer_group.single import choose_secs
        from tpudsl.backend.slicing import GLOBAL_ONLY, KINDS, SELF_EMITTED, check_modelled

        if self.opt not in (1, 2, 3):
            raise TpudslError(f"layer-group: opt={self.opt} is not one of 1 (groups of one), 2, 3 (group search)")
        chip = module_chip(op)
        ungroup(op)
        for inner in op.walk():  # the ops codegen emits unsliced: checked before anything is written
            if inner.name in SELF_EMITTED:
                from tpudsl.backend.codegen_index import check_self_emitted

                check_self_emitted(inner)
        ops = [inner for inner in op.walk() if inner.name in KINDS]
        for inner in ops:
            check_modelled(inner)
            set_secs(inner, *choose_secs(inner, chip, self.slice_weights))
        if self.opt == 1:
            return
        # the global-only moves stay in the sequence: a group never spans one (codegen's order)
        in_order = [inner for inner in op.walk() if inner.name in KINDS or inner.name in GLOBAL_ONLY]
        plans = search(in_order, chip)
        # last group first: a group's plan names the tensors it reads as their producers' results,
        # which building the producer's group (after) redirects to that group's result
        overlap = self.prefetch and not self.disable_group_overlap
        ahead = prefetches(plans, in_order, chip) if overlap else [None] * len(plans)
        for plan, ahead in reversed(list(zip(plans, ahead, strict=True))):
            build(ahead or plan, chip, prefetched=ahead is not None)


# An op alone's slicing (set_secs): dropped when it joins a group, decided again for a placed op.
SECS_ATTRS = ("nsecs", "hsecs", "lmem_bytes", "csecs", "wsecs")


def set_secs(op: Operation, secs, lmem_bytes: int) -> None:
    """An op alone's slicing as attributes: nsecs, hsecs, lmem_bytes always; csecs, wsecs only
    when it is sliced along C or W (absent is 1, so modules written before them read the same).
    A csecs/wsecs of an earlier --layer-group run goes when the new decision is 1: left, it would
    slice the op along C or W against the new lmem_bytes."""
    for key, value in zip(SECS_ATTRS, (secs.n, secs.h, lmem_bytes, secs.c, secs.w), strict=True):
        if key in ("csecs", "wsecs") and value == 1:
            op.attributes.pop(key, None)
        else:
            op.attributes[key] = IntegerAttr(value, i64)
