"""`--address-assign`: a global-memory address for every coefficient and activation, in its type.

Coefficients (the `top.Weight`s Tpu ops read) are laid out first, from the chip's `gmem_start`;
activations follow, from the next DMA-aligned address. An activation's memory is reused once its
last reader has run (a first-fit free list over the ops in order); the returned values and the
inputs are never reused, so they can be read and written by the runtime before and after a run.
Every address is aligned to the chip's `dma_align`, but the inputs of a Concat merged in place
(`only_merge`, concat_in_place.py: TPU-MLIR's ConcatFusePattern), which are runs of its result:
it is allocated when its first input is computed and lives until the last reader of it or of
any input; a chain of Concats (DenseNet's) is one buffer the same way, each member's result its
prefix, alive until the last reader of any member or input (`merge_concat=false`: none is merged).
In a module with layer groups (`tpu.Group`, if --layer-group ran first) the groups' ops count in
their place and Loads, Stores and the groups' results have the addresses of the tensors they are: the same addresses as without the groups
(tensors that stay in local memory get one too, so that the module can be grouped again), except
that a group of several slices keeps the tensors it loads until its last op has run: its later
slices load them after its first slices stored results (without this, --layer-group before
--address-assign, TPU-MLIR's order and --trunc-layer's, could give a stored result an input's memory).

With `module.addr_mode = "io_alone"` (processor-assign's addr_mode, TPU-MLIR's bm1684x layout) the
model's inputs and outputs get an IO region of their own between the coefficients and the
activations, each its own aligned block in input then output order, never reused; the activations'
neuron region starts where it ends, so no activation ever overwrites an input or an output.
With `module.addr_mode = "io_tag"` (TPU-MLIR's bm1688 layout) each input and output is byte 0 of an
IO memory tag of its own (chips.IO_TAGS: tags 3, 4, ... in input then output order; with more than
five, the five largest, the rest among the activations); with `"io_tag_fuse"` the inputs are packed
one after another from byte 0 of tag 3 and the outputs of tag 4, unaligned (the runtime binds one
contiguous user buffer to each). Tagged tensors take no neuron memory.

Addresses are printed as TPU-MLIR prints them, as the tensor type's encoding
(`tensor<1x64x56x56xf32, 4294967296 : i64>`); the module records the regions as
`module.coeff_addr`, `module.coeff_size`, `module.neuron_addr`, `module.neuron_size` (and
`module.io_addr`, `module.io_size` with io_alone), and its state becomes TPU_ADDRESSED.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, TensorType, i64
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tpudsl.backend import concat_in_place
from tpudsl.backend.chips import ADDR_MODES, IO_TAGS, Chip, check_addr_mode, tag_base
from tpudsl.backend.layer_group import module_chip
from tpudsl.backend.slicing import nbytes
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.diagnostics import TpudslError, check_option


def align(x: int, a: int) -> int:
    return -(-x // a) * a


def address_of(value: SSAValue) -> int | None:
    t = value.type
    if isinstance(t, TensorType) and isinstance(t.encoding, IntegerAttr):
        return t.encoding.value.data
    return None


def global_range(value: SSAValue) -> tuple[int, int] | None:
    """The global bytes [start, end) a value occupies, None when it has no address."""
    addr = address_of(value)
    return None if addr is None else (addr, addr + nbytes(value))


def overlap(a: tuple[int, int], b: tuple[int, int] | None) -> bool:
    """Whether byte ranges `a` and `b` (None: no range) share a byte."""
    return b is not None and a[0] < b[1] and b[0] < a[1]


def _set_address(value: SSAValue, addr: int) -> None:
    t = value.type
    assert isinstance(t, TensorType)
    Rewriter.replace_value_with_new_type(value, TensorType(t.element_type, t.get_shape(), IntegerAttr(addr, i64)))


# What --address-assign adds to the module besides the types' addresses (_IO_REGION: with io_alone).
_REGIONS = ("module.coeff_addr", "module.coeff_size", "module.neuron_addr", "module.neuron_size")
_IO_REGION = ("module.io_addr", "module.io_size")


def clear_addresses(module: ModuleOp) -> None:
    """Undo --address-assign: every tensor's type without its address, the module without its
    regions, state TPU_LOWERED (--trunc-layer's: the cut module needs other addresses)."""
    main = _main(module)
    values = [v for o in main.walk() for v in (*o.results, *(a for r in o.regions for b in r.blocks for a in b.args))]
    for value in values:
        t = value.type
        if isinstance(t, TensorType) and address_of(value) is not None:
            Rewriter.replace_value_with_new_type(value, TensorType(t.element_type, t.get_shape()))
    main.update_function_type()
    for key in (*_REGIONS, *_IO_REGION):
        module.attributes.pop(key, None)
    module.attributes["module.state"] = StringAttr("TPU_LOWERED")


class _FreeList:
    """First-fit allocation of aligned blocks, with freed blocks merged back."""

    def __init__(self, start: int, alignment: int):
        self.alignment, self.end, self.free = alignment, start, []  # free: sorted (addr, size)
        self.start = start

    def alloc(self, size: int) -> int:
        size = align(max(size, 1), self.alignment)
        for i, (addr, free) in enumerate(self.free):
            if free >= size:
                self.free[i:i + 1] = [(addr + size, free - size)] if free > size else []
                return addr
        addr, self.end = self.end, self.end + size
        return addr

    def release(self, addr: int, size: int) -> None:
        self.free.append((addr, align(max(size, 1), self.alignment)))
        self.free.sort()
        merged: list[tuple[int, int]] = []
        for a, s in self.free:
            if merged and merged[-1][0] + merged[-1][1] == a:
                merged[-1] = (merged[-1][0], merged[-1][1] + s)
            else:
                merged.append((a, s))
        self.free = merged


def _main(module: ModuleOp) -> FuncOp:
    for op in module.ops:
        if isinstance(op, FuncOp) and op.sym_name.data == "main":
            return op
    raise TpudslError("address-assign: module has no func.func @main")


@dataclass(frozen=True)
class AddressAssignPass(ModulePass):
    """Give every coefficient and activation a global-memory address (activations reused by liveness)."""

    name = "address-assign"

    # TPU-MLIR's options (Passes.td and mlir_shell.py); docs/tpuc-opt.md has what each value does here.
    reuse_addr: bool = True  # false: every activation keeps its own memory
    merge_weight: bool = False
    compress_weight: bool = True
    weight_map_file: str = "_weight_map.csv"  # read and written only with merge_weight
    iomem_set: str = ""
    same_addr: str = ""
    save_io_alone_config: str = ""
    use_io_alone_config: str = ""
    merge_concat: bool = True  # tpudsl's: false keeps every Concat a move (no only_merge; docs/tpuc-opt.md)

    def check_options(self) -> None:
        """The option values tpudsl models (model_deploy checks them before writing anything)."""
        check_option(self.name, "merge_weight", self.merge_weight, (False,),
                     "sharing coefficient memory with an earlier model through weight_map_file is not modelled")
        for option in ("iomem_set", "same_addr", "save_io_alone_config", "use_io_alone_config"):
            check_option(self.name, option, getattr(self, option), ("",),
                         "inputs and outputs are placed by addr_mode: among the activations, in io_alone's IO "
                         "region or in memory tags")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        chip = module_chip(op)
        main = _main(op)
        ops, alias, held = _flat(main.body.block.ops)
        coeffs = _FreeList(chip.gmem_start, chip.dma_align)
        addresses: dict[SSAValue, int] = {}  # types change at the end: a retyped value is a new value
        for o in ops:
            if o.name == "top.Weight" and o.results[0].uses:
                addresses[o.results[0]] = coeffs.alloc(nbytes(o.results[0]))
        operands = [[alias.get(v, v) for v in o.operands] for o in ops]
        raw_returned = [v for o in ops if isinstance(o, ReturnOp) for v in o.operands]
        returned = [alias.get(v, v) for v in raw_returned]
        io_start = neuron_start = align(coeffs.end, chip.dma_align)
        mode = addr_mode(op, chip, self.name)
        alone = mode == "io_alone"
        if alone:
            io = _FreeList(io_start, chip.dma_align)
            for v in _io_values(ops, returned, mode):
                addresses[v] = io.alloc(nbytes(v))
            neuron_start = io.end
        elif mode is not None:
            addresses.update(_TAGGED[mode](ops, returned))
        acts = _FreeList(neuron_start, chip.dma_align)
        # a merged Concat's inputs (their values after the groups' aliases): runs of its result (only_merge)
        merged = concat_in_place.views(ops, raw_returned, self.merge_concat)
        views = {alias.get(v, v): at for v, at in merged.items()}
        last_use = {}
        for i, vs in enumerate(operands):
            for v in vs:
                last_use[v] = i
        for v, end in held.items():
            last_use[v] = max(last_use.get(v, end), end)
        for v, (whole, _) in views.items():  # the result lives until its runs' last reader too
            if v in last_use:
                last_use[whole] = max(last_use.get(whole, 0), last_use.pop(v))
        dying: dict[int, list[SSAValue]] = {}
        for v, i in last_use.items():
            dying.setdefault(i, []).append(v)
        for i, o in enumerate(ops):
            # the return is skipped: the outputs, whose last use it is, are never released
            if o.name in ("top.Weight", "top.None") or isinstance(o, ReturnOp):
                continue
            for r in o.results:
                whole, offset = views.get(r, (r, 0))  # a merged Concat's result from its first input on
                if isinstance(r.type, TensorType) and whole not in addresses:  # not absent (Arg's values) nor IO
                    addresses[whole] = acts.alloc(nbytes(whole))
                if r is not whole:
                    addresses[r] = addresses[whole] + offset
            if o.name == "top.Input":  # the argument is the input's memory, as in TPU-MLIR's files
                addresses[o.operands[0]] = addresses[o.results[0]]
            for v in dying.get(i, ()):
                if self.reuse_addr and _reusable(v):
                    acts.release(addresses[v], nbytes(v))
        addresses.update((v, addresses[t]) for v, t in alias.items() if t in addresses)
        for value, addr in addresses.items():
            _set_address(value, addr)
        main.update_function_type()
        regions = (chip.gmem_start, coeffs.end - chip.gmem_start, neuron_start, acts.end - neuron_start)
        op.attributes.update({k: IntegerAttr(v, i64) for k, v in zip(_REGIONS, regions, strict=True)})
        if alone:
            op.attributes.update({k: IntegerAttr(v, i64) for k, v in zip(
                _IO_REGION, (io_start, neuron_start - io_start), strict=True)})
        op.attributes["module.state"] = StringAttr("TPU_ADDRESSED")


def addr_mode(module: ModuleOp, chip: Chip, context: str = "backend") -> str | None:
    """processor-assign's recorded addr_mode (chips.ADDR_MODES); None: auto/basic. One written by
    hand that processor-assign would not record for `chip` (the module's, module_chip) is an error."""
    attr = module.attributes.get("module.addr_mode")
    if attr is None:
        return None
    mode = attr.data if isinstance(attr, StringAttr) else attr
    if mode not in ADDR_MODES:
        raise TpudslError(f"{context}: module.addr_mode '{mode}' is not one of {', '.join(ADDR_MODES)} "
                          f"(processor-assign's addr_mode)")
    check_addr_mode(chip, mode, f"{context}: module.addr_mode '{mode}'")
    return mode


def _inputs(ops: list[Operation]) -> list[SSAValue]:
    return [o.results[0] for o in ops if o.name == "top.Input"]


def _outputs(returned: list[SSAValue], mode: str) -> list[SSAValue]:
    """The `returned` values, each once, in order; a returned constant has no IO memory: an error."""
    for v in returned:
        if isinstance(v.owner, Operation) and v.owner.name in ("top.Weight", "top.None"):
            raise TpudslError(f"address-assign: output '{loc_name(v.owner)}' is a {v.owner.name}: a constant "
                              f"has no place in addr_mode={mode}'s IO memory")
    return list(dict.fromkeys(returned))


def _io_values(ops: list[Operation], returned: list[SSAValue], mode: str) -> list[SSAValue]:
    """The inputs (top.Input's results), then the `returned` values, each once, in order."""
    return list(dict.fromkeys(_inputs(ops) + _outputs(returned, mode)))


def _io_tag(ops: list[Operation], returned: list[SSAValue]) -> dict[SSAValue, int]:
    """Each input and output at byte 0 of a tag of its own; with more than five, the five largest
    (the first of equal sizes: TPU-MLIR's std::sort leaves their order unspecified), largest first."""
    ios = _io_values(ops, returned, "io_tag")
    if len(ios) > len(IO_TAGS):
        ios = sorted(ios, key=nbytes, reverse=True)[:len(IO_TAGS)]
    return {v: tag_base(tag) for v, tag in zip(ios, IO_TAGS)}


def _io_tag_fuse(ops: list[Operation], returned: list[SSAValue]) -> dict[SSAValue, int]:
    """The inputs one after another from byte 0 of tag 3, the outputs from byte 0 of tag 4."""
    inputs, outputs = _inputs(ops), _outputs(returned, "io_tag_fuse")
    for v in outputs:
        if v in inputs:
            raise TpudslError(f"address-assign: output '{loc_name(v.owner)}' is an input: addr_mode=io_tag_fuse "
                              f"binds the inputs to tag {IO_TAGS[0]} and the outputs to tag {IO_TAGS[1]}")
    addresses = {}
    for values, tag in ((inputs, IO_TAGS[0]), (outputs, IO_TAGS[1])):
        offset = 0
        for v in values:
            addresses[v] = tag_base(tag) + offset
            offset += nbytes(v)
    return addresses


_TAGGED = {"io_tag": _io_tag, "io_tag_fuse": _io_tag_fuse}  # addr_mode -> the IO tensors' tagged addresses


def _flat(block_ops) -> tuple[list[Operation], dict[SSAValue, SSAValue], dict[SSAValue, int]]:
    """The ops in program order with each layer group's ops in its place, the values that are
    another tensor (a tpu.Load's or tpu.Store's result is its operand, a tpu.Group's result the
    value its Yield names: a module gets the same addresses with its groups as without), and the
    tensors a group of several slices loads, with the index of its last op: they must stay until
    then, as its later slices load them after its first slices stored their results."""
    ops, alias, held = [], {}, {}
    for o in block_ops:
        if o.name != "tpu.Group":
            ops.append(o)
            continue
        loaded = []
        for inner in o.regions[0].block.ops:
            if inner.name in ("tpu.Load", "tpu.Store"):
                alias[inner.results[0]] = alias.get(inner.operands[0], inner.operands[0])
                if inner.name == "tpu.Load":
                    loaded.append(alias[inner.results[0]])
            elif inner.name == "tpu.Yield":
                alias.update((r, alias.get(v, v)) for r, v in zip(o.results, inner.operands, strict=True))
            else:
                ops.append(inner)
        if _slices(o) > 1:
            held.update((v, len(ops) - 1) for v in loaded)
    return ops, alias, held


def _slices(group: Operation) -> int:
    count = 1
    for key in ("nsecs", "hsecs", "csecs", "wsecs"):
        attr = group.attributes.get(key)
        count *= attr.value.data if isinstance(attr, IntegerAttr) else 1
    return count


def _reusable(v: SSAValue) -> bool:
    """An activation computed by an op (not an input, weight or none)."""
    owner = v.owner
    return isinstance(owner, Operation) and owner.name not in ("top.Weight", "top.None", "top.Input")
