"""`--codegen="model_file=X.bmodel embed_debug_info=true"`: the command stream of an addressed,
layer-grouped Tpu module, written with its coefficients as a .bmodel.

Each op is emitted on its own (one op, one group): its whole tiles (weights, a dynamic filter,
MatMul's right side) are loaded once, then for every slice `slicing.slices` gives, the input parts
are loaded, one BDC record computes the output part and it is stored. Local memory is handed out
per op from offset 0, EU-aligned, in that order. Concat moves its inputs' parts through local
memory to their place in the result, Permute's through a strided load; Reshape, Squeeze and
Unsqueeze copy in global memory. A layer group of several ops (a `tpu.Group` region) is read back
and checked by layer_group/region.py and emitted by layer_group/emit.py, where it stands. An op
--core-parallel placed on a core (`core_id`) is emitted whole on that core, in one phase with the
placed ops next to it (`emit_placed`); a Concat merged in place emits nothing. Debug
info maps the first instruction of each op to its location name (what the cmodel's messages and
--profile name).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from tpudsl.backend import coverage, isa
from tpudsl.backend.bmodel import tensor_bytes, write_bmodel
from tpudsl.backend.address_assign import addr_mode, address_of, align, global_range, nbytes, overlap
from tpudsl.backend.chips import Chip, tag_base, tag_of
from tpudsl.backend.concat_in_place import check_in_place
from tpudsl.backend.layer_group import module_chip
from tpudsl.backend.cores import deal, starts, timing
from tpudsl.backend.tensor_locations import whole_results
from tpudsl.backend.slicing import (ESIZE, GLOBAL_ONLY, KINDS, MOVES, SELF_EMITTED, Secs, SlicePlan, Tile, as4d,
                                    attrs_of,
                                    check_int8, check_modelled, conv_filter_layout, dtype_of, gather_copies,
                                    gather_view, interp_codes, is_int8, matmul_bias, matmul_multi, pad_widths,
                                    zero_point,
                                    shape_of, slices, tile_bytes, whole_tiles)
from tpudsl.dialects.geometry.window import ceil_mode_pads
from tpudsl.dialects.quant import UniformQuantizedType
from tpudsl.dialects.opdef import SPECS, AttrView, describe, loc_name, op_label, value_name
from tpudsl.ir.diagnostics import TpudslError, check_option
from tpudsl.ir.module import TopModule, top_module_of

_PASSIVE = ("top.Input", "top.Weight", "top.None", "func.return")


@dataclass
class Program:
    """The command streams being emitted: core 0's in `records` and `debug` (the only ones with one
    core), each further core's in `others`; backend/cores.py says how they are dealt and ordered."""

    records: list[isa.Record] = field(default_factory=list)
    debug: list[tuple[int, str]] = field(default_factory=list)
    groups: list[dict] = field(default_factory=list)  # the header's layer_groups (bmodel.GROUP_SCHEMA)
    # the header's tensor_locations (tensor_locations.py); None: not collected (written only as debug info)
    tensors: list[dict] | None = None
    others: list[tuple[list[isa.Record], list[tuple[int, str]]]] = field(default_factory=list)  # cores 1, 2, ...
    # tensor pieces whose 'after' counts in core k's stream (k >= 1): moved past the streams before it at the end
    late: list[tuple[dict, int]] = field(default_factory=list)
    barriers: int = 0  # the CoreSyncs emitted so far: the next one's id
    after: tuple[int, int] = (0, -1)  # barrier()'s last answer: where everything emitted so far has finished

    def stream(self, core: int) -> tuple[list[isa.Record], list[tuple[int, str]]]:
        return (self.records, self.debug) if core == 0 else self.others[core - 1]

    def barrier(self) -> tuple[int, int]:
        """With several cores, a CoreSync in every stream (an op or group ends); (core, index) of an
        instruction after which every core has finished it: the last core's barrier (the cmodel
        runs the cores of a phase in order), or with one core its last instruction."""
        if not self.others:
            self.after = (0, len(self.records) - 1)
            return self.after
        streams = [self.records, *(records for records, _ in self.others)]
        sync = isa.CoreSync(self.barriers)
        self.barriers += 1
        for records in streams:
            records.append(sync)
        self.after = (len(streams) - 1, len(streams[-1]) - 1)
        return self.after

    def add_tensors(self, entries: list[dict], core_of: Callable[[dict], int]) -> None:
        """Tensor locations; `core_of(piece)`: the core in whose stream the piece's 'after' counts."""
        self.tensors += entries  # type: ignore[operator]
        self.late += [(p, core) for t in entries for p in t["pieces"] if (core := core_of(p))]

    def joined(self) -> tuple[list[isa.Record], list[tuple[int, str]], list[int]]:
        """The streams one after another (the .bmodel's command section), the debug info of all,
        each core's instruction count; the late pieces' 'after' moved to the joined indices."""
        streams = [(self.records, self.debug), *self.others]
        counts = [len(records) for records, _ in streams]
        first = starts(counts)
        for piece, core in self.late:
            piece["after"] += first[core]
        self.late = []
        debug = [(start + i, name) for (_, marks), start in zip(streams, first, strict=True) for i, name in marks]
        return [r for records, _ in streams for r in records], debug, counts


def _gaddr(tile: Tile) -> int:
    addr = address_of(tile.value)
    if addr is None:
        raise TpudslError(f"codegen: a tensor of {describe(tile.value.owner)} has no address; run --address-assign first")
    return addr + tile.offset * ESIZE[dtype_of(tile.value)]


def gaddr_or_0(tile: Tile) -> int:
    """A tile's global address for costing: without global addresses (a module not yet addressed)
    every tensor is at 0, which serializes GDMA a little more: the same for every candidate."""
    return _gaddr(tile) if address_of(tile.value) is not None else 0


def _gdma(cls: type[isa.GdmaLoad], tile: Tile, laddr: int, gaddr: Callable[[Tile], int] = _gaddr) -> isa.GdmaLoad:
    """A load or store of `tile` at local `laddr`; `gaddr` gives its global address (the layer-group
    search's gives 0 before --address-assign)."""
    return cls(isa.DTYPES[dtype_of(tile.value)], gaddr(tile), *tile.strides, laddr, *tile.shape)


def _local(t: tuple[int, Tile]) -> tuple[int, int, int, int, int]:
    laddr, tile = t
    return (laddr, *tile.shape)


def _relu(op: Operation) -> tuple[int, float]:
    a = attrs_of(op)
    return int(bool(a.get("do_relu", False))), float(a.get("relu_limit", -1.0))


def _compute(op: Operation, ins: list[tuple[int, Tile]], whole: list[int], out: tuple[int, Tile],
             plan: SlicePlan, extra: tuple[int, ...] = ()) -> isa.Record:
    """The BDC record of one slice (local addresses of its input tiles, whole tiles, output and the
    further results' parts)."""
    a, kind, dtype = attrs_of(op), KINDS[op.name], isa.DTYPES[dtype_of(op.results[0])]
    if kind in _INDEX:
        return _INDEX[kind](op, a, ins[0], out, extra)
    if kind == "poolmask":
        return isa.BdcPoolMask(dtype, *_local(ins[0]), out[0], extra[0], *out[1].shape, *a["kernel_shape"],
                               *(a.get("strides") or [1, 1]), *plan.pads, ins[0][1].start[2])
    if kind == "lrn":
        return isa.BdcLRN(dtype, *_local(ins[0]), out[0], a["size"], float(a["alpha"]), float(a["beta"]),
                          float(a["bias"]))
    if kind in ("conv", "pool"):
        kh, kw = a["kernel_shape"]
        sh, sw = a["strides"]
        pt, pb, pl, pr = plan.pads
        if kind == "conv":
            dh, dw = a.get("dilations") or [1, 1]
            bias = whole[1] if len(whole) > 1 else isa.NO_ADDR
            groups = a["group"] * ins[0][1].shape[1] // as4d(op, shape_of(op.operands[0]))[1]  # a depthwise C slice's
            return isa.BdcConv(dtype, *_local(ins[0]), *_local(out), whole[0], bias, kh, kw, sh, sw, dh, dw,
                               pt, pb, pl, pr, conv_filter_layout(op)[3], groups, *_relu(op))
        mode = isa.POOL_MODES[a["pool_mode"]]
        fields = (dtype, mode, *_local(ins[0]), *_local(out), kh, kw, sh, sw, pt, pb, pl, pr,
                  int(bool(a["count_include_pad"])), *_relu(op))
        if a.get("ceil_overhang"):  # this slice's end pads past the op's explicit ones are not counted
            _, _, explicit_b, explicit_r = ceil_mode_pads(a["pads"], a["ceil_overhang"])
            return isa.BdcPoolCeil(*fields, max(0, pb - explicit_b), max(0, pr - explicit_r))
        return isa.BdcPool(*fields)
    if kind == "deconv":
        bias = whole[1] if len(whole) > 1 else isa.NO_ADDR
        return isa.BdcDeconv(dtype, *_local(ins[0]), *_local(out), whole[0], bias, *a["kernel_shape"], *a["strides"],
                             *(a.get("dilations") or [1, 1]), *plan.pads, a["group"], *_relu(op))
    if kind == "matmul":
        rows, k = ins[0][1].shape[:2]
        if len(ins) > 1:  # batched: this slice's batches of the right side
            batch = ins[1][1].shape[0]
            return isa.BdcMatMul(dtype, ins[0][0], ins[1][0], isa.NO_ADDR, out[0], rows // batch, k,
                                 out[1].shape[1], batch, *_relu(op))
        bias = whole[1] if matmul_bias(op) is not None else isa.NO_ADDR
        if op.name == "tpu.A16MatMul":  # after the right side and bias: the scales, then the zero points
            scale_at = 2 if matmul_bias(op) is not None else 1
            zp = whole[scale_at + 1] if len(whole) > scale_at + 1 else isa.NO_ADDR
            right_dtype = isa.DTYPES["i8" if attrs_of(op)["sign"] and zp == isa.NO_ADDR else "u8"]
            return isa.BdcMatMulA16(dtype, ins[0][0], whole[0], bias, out[0], rows, k, out[1].shape[1], 1,
                                    *_relu(op), right_dtype, whole[scale_at], zp, shape_of(op.operands[2])[1],
                                    attrs_of(op)["weight_bits"])
        return isa.BdcMatMul(dtype, ins[0][0], whole[0], bias, out[0], rows, k, out[1].shape[1], 1, *_relu(op))
    if kind == "upsample":
        skip = out[1].start[2] - ins[0][1].start[2] * a["scale_h"]
        return isa.BdcUpsample(dtype, *_local(ins[0]), out[0], out[1].shape[2], a["scale_h"], a["scale_w"], skip)
    if op.name == "tpu.Softmax":
        return isa.BdcSoftmax(dtype, *_local(ins[0]), out[0], int(bool(a["log"])), float(a["beta"]))
    if kind == "interp":
        xs, ys = shape_of(op.operands[0]), shape_of(op.results[0])
        return isa.BdcInterp(dtype, *interp_codes(op), *_local(ins[0]), out[0], out[1].shape[2], ys[3],
                             ins[0][1].start[2], out[1].start[2], xs[2], ys[2], a["scale_h"], a["scale_w"])
    if kind == "pad" and a["mode"] in isa.REFLECT_MODES:
        (pn0, _), (pc0, pc1), (ph0, _), (pw0, pw1) = pad_widths(op)
        xs, x, y = as4d(op, shape_of(op.operands[0])), ins[0][1], out[1]
        return isa.BdcPadReflect(dtype, isa.REFLECT_MODES[a["mode"]], *_local(ins[0]), x.start[0], x.start[2], xs[0],
                                 xs[2], out[0], y.shape[0], y.shape[2], y.start[0], y.start[2], pn0, pc0, pc1, ph0,
                                 pw0, pw1)
    if kind == "scale":
        return isa.BdcScale(dtype, *_local(ins[0]), whole[0], whole[1], out[0], *_relu(op))
    if op.name == "tpu.RMSNorm":
        return isa.BdcRMSNorm(dtype, *_local(ins[0]), whole[0] if whole else isa.NO_ADDR, out[0], float(a["eps"]))
    if kind == "pad":
        pt, pb, pl, pr = plan.pads
        return isa.BdcPad(dtype, isa.PAD_MODES[a["mode"]], *_local(ins[0]), out[0], *plan.npads, *pad_widths(op)[1],
                          pt, pb, pl, pr, float(a["val"]))
    if op.name == "tpu.Reduce":
        return isa.BdcReduce(dtype, isa.REDUCE_MODES[a["mode"]], *_local(ins[0]), out[0])
    if kind == "groupnorm":
        present = iter(whole)
        weight, bias = (next(present) if isinstance(v.type, TensorType) else isa.NO_ADDR for v in op.operands[1:3])
        groups = a["num_groups"] if op.name == "tpu.GroupNorm" else ins[0][1].shape[1]
        return isa.BdcGroupNorm(dtype, *_local(ins[0]), weight, bias, out[0], groups, float(a["eps"]))
    if op.name == "tpu.LayerNorm":
        present = iter(whole)
        weight, bias = (next(present) if isinstance(v.type, TensorType) else isa.NO_ADDR for v in op.operands[1:3])
        return isa.BdcLayerNorm(dtype, *_local(ins[0]), weight, bias, out[0], float(a["eps"]))
    if kind == "select":
        return _select(op, dtype, ins, out)
    if op.name in _ELEMENTWISE_X:
        return _elementwise_x(op, dtype, ins, out)
    if kind == "binary":
        return isa.BdcBinary(dtype, isa.BINARY_OPS[op.name[4:]], *_local(ins[0]), *_local(ins[1]), *_local(out),
                             *_relu(op))
    name = op.name[4:]
    if name in isa.CONST_OPS:
        return isa.BdcConst(dtype, isa.CONST_OPS[name], int(bool(a.get("is_reverse", False))), *_local(ins[0]),
                            out[0], float(a["const_val"]), *_relu(op))
    if name == "Cast":
        return isa.BdcCast(isa.DTYPES[dtype_of(op.operands[0])], dtype, *_local(ins[0]), out[0])
    mode = {"Relu": "RELU", "LeakyRelu": "LEAKY_RELU"}.get(name) or a["mode"]
    if mode in isa.ACTIVE_EXTRA_MODES:  # check_modelled accepted its coeffs
        coeffs = [*(a.get("coeffs") or []), 0.0, 0.0]
        return isa.BdcActiveX(dtype, isa.ACTIVE_EXTRA_MODES[mode], *_local(ins[0]), out[0], *coeffs[:2])
    if mode not in isa.ACTIVE_MODES:
        raise TpudslError(f"codegen: {describe(op)}: mode {mode} has no instruction")
    limit = a["alpha"] if name == "LeakyRelu" else a.get("relu_limit", -1.0)
    return isa.BdcActive(dtype, isa.ACTIVE_MODES[mode], *_local(ins[0]), out[0], float(limit))


def _dtype_code(value: SSAValue) -> int:
    return isa.DTYPES[dtype_of(value)]


# Index records (71-74) by kind: (op, attributes, input, output, further results' addresses) -> record.
_INDEX: dict[str, Callable[[Operation, AttrView, tuple[int, Tile], tuple[int, Tile], tuple[int, ...]], isa.Record]] = {
    "arg": lambda op, a, x, out, extra: isa.BdcArg(
        _dtype_code(op.operands[0]), isa.ARG_MODES[a["mode"]], int(bool(a["select_last_index"])), *_local(x), out[0],
        _dtype_code(op.results[0]), extra[0] if extra else isa.NO_ADDR),
    "topk": lambda op, a, x, out, extra: isa.BdcTopK(
        _dtype_code(op.operands[0]), int(bool(a["largest"])), *_local(x), out[1].shape[1], out[0], extra[0],
        _dtype_code(op.results[1])),
    "cumsum": lambda op, a, x, out, extra: isa.BdcCumSum(_dtype_code(op.results[0]), *_local(x), out[0]),
    "trilu": lambda op, a, x, out, extra: isa.BdcTrilu(_dtype_code(op.results[0]), int(bool(a["upper"])), *_local(x),
                                                       out[0], int(a["diagonal"]), out[1].start[2]),
}


# The Tpu ops BdcBinaryX / BdcConstX compute: attributes -> (isa.ELEMENTWISE_X_OPS key, reverse,
# value, value2) (the values of the constant forms; a binary op's are unused).
_ELEMENTWISE_X: dict[str, Callable[[AttrView], tuple[str, bool, float, float]]] = {
    "tpu.Div": lambda a: ("Div", a["is_reverse"], 0.0, 0.0),
    "tpu.Pow3": lambda a: ("Pow", False, 0.0, 0.0),
    "tpu.Mod": lambda a: ("Mod", False, 0.0, 0.0),
    "tpu.Remainder": lambda a: ("Remainder", False, 0.0, 0.0),
    "tpu.Compare": lambda a: (a["mode"], False, 0.0, 0.0),
    "tpu.PReluOp": lambda a: ("PRelu", False, 0.0, 0.0),
    "tpu.Clip": lambda a: ("Clip", False, a["min"], a["max"]),
    "tpu.Reciprocal": lambda a: ("Div", True, a["const_val"], 0.0),
    "tpu.Pow": lambda a: ("Pow", False, a["exponent"], 0.0),
    "tpu.Pow2": lambda a: ("Pow", True, a["const_val"], 0.0),
    "tpu.CompareConst": lambda a: (a["mode"], a["inversed"], a["const_val"], 0.0),
}


def _elementwise_x(op: Operation, dtype: int, ins: list[tuple[int, Tile]], out: tuple[int, Tile]) -> isa.Record:
    key, reverse, value, value2 = _ELEMENTWISE_X[op.name](attrs_of(op))
    code = isa.ELEMENTWISE_X_OPS[key]
    if len(ins) == 2:
        return isa.BdcBinaryX(dtype, code, int(bool(reverse)), *_local(ins[0]), *_local(ins[1]), *_local(out),
                              *_relu(op))
    return isa.BdcConstX(dtype, code, int(bool(reverse)), *_local(ins[0]), out[0], float(value), float(value2),
                         *_relu(op))


def _select(op: Operation, dtype: int, ins: list[tuple[int, Tile]], out: tuple[int, Tile]) -> isa.Record:
    """tpu.Where: cond ? tbrn : fbrn; tpu.MaskedFill: cond ? const_val : brn (inversed: cond ? brn :
    const_val), the constant a branch without an address."""
    const = (isa.NO_ADDR, 0, 0, 0, 0)
    if op.name == "tpu.Where":
        a, b, values = _local(ins[1]), _local(ins[2]), (0.0, 0.0)
    else:
        value = float(attrs_of(op)["const_val"])
        a, b = (_local(ins[1]), const) if attrs_of(op)["inversed"] else (const, _local(ins[1]))
        values = (value, value)
    return isa.BdcSelect(dtype, *_local(ins[0]), *a, *b, *_local(out), *values)


# tpu.Add and tpu.Mul have no round_mode in TpuOps.td: TPU-MLIR's default (docs/quantization.md);
# tpu.Deconv has none either: it requantizes as Conv2D's default, HalfUp.
_ELEMENTWISE_ROUND = isa.ROUND_MODES["HalfAwayFromZero"]
_DECONV_ROUND = isa.ROUND_MODES["HalfUp"]


def _scale(value: SSAValue) -> float | None:
    element = value.type.element_type  # type: ignore[attr-defined]
    return element.scale if isinstance(element, UniformQuantizedType) else None


def _asymmetric(op: Operation) -> bool:
    """An int8 tensor of the op has a zero point or uint8 storage: the records with zero points (53-59)."""
    return any(isinstance(t := v.type, TensorType) and isinstance(e := t.element_type, UniformQuantizedType)
               and not e.is_per_axis and (e.zero_point != 0 or not e.is_signed) for v in [*op.operands, *op.results])


def _zp_fields(op: Operation) -> tuple[int, int, int]:
    """(out_dtype, in_zp, out_zp) of an INT8 record with zero points."""
    return isa.DTYPES[dtype_of(op.results[0])], zero_point(op.operands[0]), zero_point(op.results[0])


def _compute_int8(op: Operation, ins: list[tuple[int, Tile]], whole: list[int], out: tuple[int, Tile],
                  plan: SlicePlan) -> isa.Record:
    """The INT8 record of one slice (check_int8 accepted the op): the float record's fields (int8
    dtype) plus the op's requantization, or a Lut / Requant / quantizing Cast; with zero points or
    uint8 tensors (asymmetric INT8) the records of opcodes 53-59."""
    a, name, asym = attrs_of(op), op.name[4:], _asymmetric(op)
    dtype = isa.DTYPES[dtype_of(op.operands[0])]
    out_dtype, in_zp, out_zp = _zp_fields(op)
    if name == "Cast":
        s_in, s_out = _scale(op.operands[0]), _scale(op.results[0])
        if (s_in is None) == (s_out is None):
            raise TpudslError(f"codegen: {describe(op)}: a Cast between two int8 types is not modelled (RequantInt is)")
        if asym:
            return isa.BdcRequantZ(dtype, out_dtype, *_local(ins[0]), out[0], in_zp, out_zp, 0, 0, 0, 0, -1.0,
                                   s_in or s_out)
        return isa.BdcQuantCast(dtype, out_dtype, *_local(ins[0]), out[0], s_in or s_out)
    if name == "Lut":
        return isa.BdcLut(dtype, *_local(ins[0]), out[0], whole[0])
    if name == "Softmax":
        return isa.BdcSoftmaxQ(dtype, *_local(ins[0]), out[0], whole[0], out_dtype, out_zp, _scale(op.results[0]))
    round_mode = isa.ROUND_MODES[a["round_mode"]] if "round_mode" in SPECS[op.name].attrs else _ELEMENTWISE_ROUND
    if name == "RequantInt" or (name == "MulConst" and asym):  # (in - in_zp) * multiplier >> rshift + out_zp
        multiplier, rshift = (a["multiplier"][0], a["rshift"][0]) if name == "RequantInt" else (a["multiplier"],
                                                                                                  a["rshift"])
        if asym:
            return isa.BdcRequantZ(dtype, out_dtype, *_local(ins[0]), out[0], in_zp, out_zp, multiplier, rshift,
                                   round_mode, *_relu(op), 0.0)
        return isa.BdcRequant(dtype, *_local(ins[0]), out[0], multiplier, rshift, round_mode)
    if name == "RequantIntAxis":  # per channel: the quant tile's (m, -rshift, zp); zero points in the tile
        return isa.BdcRequantAxis(dtype, out_dtype, *_local(ins[0]), out[0], whole[0], in_zp, round_mode)
    if name in ("AddConst", "SubConst"):  # the constant is an integer in the result's units << rshift
        return isa.BdcConstSumQ(dtype, out_dtype, isa.CONST_OPS[name], int(bool(a.get("is_reverse", False))),
                                *_local(ins[0]), out[0], in_zp, out_zp, a["multiplier"], a["rshift"],
                                _ELEMENTWISE_ROUND, int(a["const_val"]), *_relu(op))
    float_record = replace(_compute(op, ins, whole, out, plan), dtype=dtype)  # an INT8 record's dtype is its input's
    if name == "Clip":  # integers clamped to integer bounds, one type in and out: the float record is exact
        return float_record
    base = float_record.values()
    if name == "Conv2D":
        return isa.BdcConvQZ(*base, round_mode, out_dtype, in_zp, out_zp) if asym else isa.BdcConvQ(*base, round_mode)
    if name == "Deconv":
        return isa.BdcDeconvQ(*base, _DECONV_ROUND, out_dtype, in_zp, out_zp)
    if name == "Pool2D" and a["pool_mode"] == "Avg":  # one divisor unless the op has pads it does not count
        uniform = bool(a["count_include_pad"]) or not any(a["pads"])
        requant = (a["multiplier"], a["rshift"], round_mode, 0.0) if uniform else (0, 0, round_mode, float(a["scale"]))
        fields = (*replace(float_record, count_include_pad=int(uniform)).values(), *requant)
        return isa.BdcPoolQZ(*fields, out_dtype, in_zp, out_zp) if asym else isa.BdcPoolQ(*fields)
    if name == "Pool2D":  # max pool picks stored values (its input and output share scale and zero point)
        return isa.BdcPool(*base)
    if name == "MatMul":
        multi = matmul_multi(op)
        if asym or multi is not None:
            quant = whole[-1] if multi is not None else isa.NO_ADDR
            return isa.BdcMatMulQZ(*base, a["multipliers"][0], a["rshifts"][0], round_mode,
                                   isa.DTYPES[dtype_of(op.operands[1])], quant, in_zp, zero_point(op.operands[1]),
                                   out_zp, out_dtype)
        return isa.BdcMatMulQ(*base, a["multipliers"][0], a["rshifts"][0], round_mode)
    if name in ("Add", "Sub", "Mul"):  # check_modelled refuses a reversed Sub, as for float Sub
        m0, m1, rshift = (a["multiplier"], 0, a["rshift"]) if name == "Mul" else (*a["multipliers"], a["rshifts"][0])
        if asym:
            return isa.BdcBinaryQZ(*base, m0, m1, rshift, _ELEMENTWISE_ROUND, isa.DTYPES[dtype_of(op.operands[1])],
                                   out_dtype, in_zp, zero_point(op.operands[1]), out_zp)
        return isa.BdcBinaryQ(*base, m0, m1, rshift, _ELEMENTWISE_ROUND)
    if name == "MulConst":
        return isa.BdcConstQ(*base, a["multiplier"], a["rshift"], _ELEMENTWISE_ROUND)
    raise TpudslError(f"codegen: {describe(op)} on int8 tensors has no instruction")


def compute_record(op: Operation, ins: list[tuple[int, Tile]], whole: list[int], out: tuple[int, Tile],
                   plan: SlicePlan, extra: tuple[int, ...] = ()) -> isa.Record:
    """The BDC record of one slice of `op`, float or INT8 (also a layer group's, layer_group/emit.py);
    `extra`: the local addresses of the further results' parts (plan.extra)."""
    return _compute_int8(op, ins, whole, out, plan) if is_int8(op) else _compute(op, ins, whole, out, plan, extra)


def op_secs(op: Operation) -> Secs:
    """An op alone's slicing from its attributes (csecs, wsecs absent: 1)."""
    got = [op.attributes.get(k) for k in ("nsecs", "hsecs", "csecs", "wsecs")]
    if not all(isinstance(g, IntegerAttr) and g.value.data >= 1 for g in got[:2]):
        raise TpudslError(f"codegen: {describe(op)} has no nsecs/hsecs; run --layer-group first")
    if not all(g is None or isinstance(g, IntegerAttr) and g.value.data >= 1 for g in got[2:]):
        raise TpudslError(f"codegen: {describe(op)}: csecs and wsecs must be integers >= 1")
    return Secs(*(1 if g is None else g.value.data for g in got))  # type: ignore[union-attr]


class _Lmem:
    """Per-op bump allocation of local memory (offsets within a lane, EU-aligned)."""

    def __init__(self, chip: Chip):
        self.chip, self.top = chip, 0

    def take(self, tile: Tile) -> int:
        addr, self.top = self.top, align(self.top + tile_bytes(tile, self.chip), self.chip.eu_bytes)
        return addr


def _gather(op: Operation, top: TopModule | None, prog: Program) -> None:
    """Gather: constant (weight) indices are one global copy per slab (slicing.gather_copies);
    computed indices one GdmaGather, which reads them from global memory at run time."""
    indices = op.operands[1].owner
    esize = ESIZE[dtype_of(op.results[0])]
    src, dst = address_of(op.operands[0]), address_of(op.results[0])
    if top is None or getattr(indices, "name", None) != "top.Weight":
        outer, axis, inner, count = gather_view(op)
        prog.records.append(isa.GdmaGather(src, address_of(op.operands[1]), dst,  # type: ignore[arg-type]
                                           isa.DTYPES[dtype_of(op.operands[1])], outer, axis, inner, count, esize))
        return
    for s, d, count in gather_copies(op, top.weight_of(indices)):  # type: ignore[arg-type]
        prog.records.append(isa.GdmaCopy(src + s * esize, dst + d * esize, count * esize))  # type: ignore[operator]


def emit_op(op: Operation, chip: Chip, prog: Program, top: TopModule | None = None) -> None:
    first = len(prog.records)
    _emit_op(op, chip, prog, top)
    if len(prog.records) == first:  # no op aliases its input (every result has its own memory): a result
        # nothing writes would hold stale bytes, and its tensor location would have no instruction to follow
        raise TpudslError(f"codegen: {describe(op)} emitted no instruction: its result would never be written")
    close_run([op], prog)  # whole in global memory once every core has finished the op


def emit_placed(op: Operation, chip: Chip, prog: Program, run: list[Operation]) -> None:
    """An op --core-parallel placed on core `core_id`: all its slices on that core, in the phase of
    the placed ops before it (`run`, emitted since the last barrier); a barrier first if it touches
    memory one of them on another core writes or reads (a phase reads only what earlier phases
    wrote, and memory freed within it is not reused by another core)."""
    core = placed_on(op)
    if not 0 <= core < chip.cores:  # type: ignore[operator]
        raise TpudslError(f"codegen: {describe(op)} is placed on core {core}, but the module has {chip.cores} "
                          f"core{'s' if chip.cores > 1 else ''} (run --core-parallel with module.cores)")
    if op.name not in KINDS or op.name in SELF_EMITTED or op.name in GLOBAL_ONLY or op.name == "tpu.Gather":
        raise TpudslError(f"codegen: {describe(op)} is placed on a core (core_id), which only sliced ops can be")
    if any(placed_on(other) != core and _touch(op, other) for other in run):
        close_run(run, prog)
    check_modelled(op)
    (records,) = alone_streams(op, replace(chip, cores=1), op_secs(op), _gaddr)
    stream, debug = prog.stream(core)
    debug.append((len(stream), op_label(op) or op.name))
    stream += records
    run.append(op)


def _spans(values) -> list[tuple[int, int]]:
    return [span for v in values if (span := global_range(v)) is not None]


def _touch(op: Operation, other: Operation) -> bool:
    """`op` reads global bytes `other` writes, or writes bytes it reads or writes (address-assign
    reuses memory by liveness, in program order): the two cannot run at once on two cores."""
    writes, reads = _spans(op.results), _spans(op.operands)
    theirs_w, theirs_r = _spans(other.results), _spans(other.operands)
    return any(overlap(a, b) for a, b in
               [*((w, t) for w in writes for t in theirs_w + theirs_r), *((r, t) for r in reads for t in theirs_w)])


def placed_on(op: Operation) -> int | None:
    """The core --core-parallel placed `op` on (core_id), None when it is not placed."""
    attr = op.attributes.get("core_id")
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def close_run(run: list[Operation], prog: Program) -> None:
    """The barrier after the ops of `run` (a phase's placed ops, or emit_op's one op; none: nothing to
    do); their results whole after it."""
    if not run:
        return
    _whole_after(run, prog.barrier(), prog)
    run.clear()


def _whole_after(ops: list[Operation], at: tuple[int, int], prog: Program) -> None:
    """The results of `ops` whole in global memory after instruction `at` (core, index in its stream)."""
    if prog.tensors is not None:
        core, last = at
        for op in ops:
            prog.add_tensors(whole_results(op, last), lambda _: core)


def emit_in_place(op: Operation, prog: Program, run: list[Operation]) -> None:
    """A Concat merged in place (only_merge, concat_in_place.py): its inputs wrote its result, so
    nothing moves and no barrier is needed; the result is whole where they finished: at the barrier
    that ends the phase of placed ops it joins (`run`), or the last one."""
    check_in_place(op, address_of)
    if run:
        run.append(op)
    else:
        _whole_after([op], prog.after, prog)


def _emit_op(op: Operation, chip: Chip, prog: Program, top: TopModule | None) -> None:
    """The op's records: its slices dealt to the cores (cores.deal); the ops emitted unsliced on core 0."""
    label = op_label(op) or op.name
    prog.debug.append((len(prog.records), label))
    if op.name == "tpu.Gather":
        _gather(op, top, prog)
        return
    if op.name in SELF_EMITTED:
        from tpudsl.backend.codegen_index import emit_self  # it builds on this module's records

        emit_self(op, chip, prog)
        return
    if op.name in GLOBAL_ONLY:
        src, dst = op.operands[0], op.results[0]
        prog.records.append(isa.GdmaCopy(address_of(src), address_of(dst), nbytes(src)))  # type: ignore[arg-type]
        return
    check_modelled(op)
    for core, records in enumerate(alone_streams(op, chip, op_secs(op), _gaddr)):
        stream, debug = prog.stream(core)
        if core:
            debug.append((len(stream), label))
        stream += records


def _emit_slices(op: Operation, chip: Chip, plans: list[SlicePlan], records: list[isa.Record],
                 gaddr: Callable[[Tile], int] = _gaddr) -> None:
    """One core's slices of an op alone, its local memory from offset 0: whole tiles, then per
    slice the input parts, the BDC record, the stores (`gaddr`: as _gdma's)."""
    lmem = _Lmem(chip)
    # C slices (C outer) load their part of the whole tiles when the part changes, where the first
    # (largest) part lies; otherwise the whole tiles are loaded once
    whole = [lmem.take(tile) for tile in plans[0].weights or whole_tiles(op)]
    loaded = None
    base = lmem.top
    for plan in plans:
        tiles = plan.weights or tuple(whole_tiles(op))
        if tiles != loaded:
            records += [_gdma(isa.GdmaLoad, t, laddr, gaddr) for t, laddr in zip(tiles, whole, strict=True)]
            loaded = tiles
        lmem.top = base
        ins = [(lmem.take(t), t) for t in plan.inputs]
        records += [_gdma(isa.GdmaLoad, t, laddr, gaddr) for laddr, t in ins]
        if KINDS[op.name] in MOVES:
            records.append(_gdma(isa.GdmaStore, plan.output, ins[0][0], gaddr))
            continue
        lmem.top = chip.output_start(lmem.top)  # the bank rule (slicing.footprint counts the same)
        out = (lmem.take(plan.output), plan.output)
        extra = [(lmem.take(t), t) for t in plan.extra]
        records.append(compute_record(op, ins, whole, out, plan, tuple(laddr for laddr, _ in extra)))
        records += [_gdma(isa.GdmaStore, t, laddr, gaddr) for laddr, t in [out, *extra]]


def alone_streams(op: Operation, chip: Chip, secs: Secs, gaddr: Callable[[Tile], int]) -> list[list[isa.Record]]:
    """The records of an op alone sliced `secs`, per core that has slices (cores.deal: cores 0, 1,
    ..., the ones without a slice last)."""
    plans = slices(op, secs)
    streams: list[list[isa.Record]] = []
    for dealt in deal(len(plans), chip.cores):
        if dealt:
            streams.append([])
            _emit_slices(op, chip, [plans[s] for s in dealt], streams[-1], gaddr)
    return streams


def _tensor(name: str, value: SSAValue) -> dict:
    """An input/output descriptor; an int8/uint8 one (strip-io-quant) carries its quant type's scale
    and zero point: value = (stored - zero_point) * scale, for inputs too (TPU-MLIR's runtime keeps
    1/scale for an input; this header keeps one meaning)."""
    q = value.type.element_type if isinstance(value.type, TensorType) else None
    scale, zp = (q.scale, q.zero_point) if isinstance(q, UniformQuantizedType) else (1.0, 0)
    return {"name": name, "shape": list(shape_of(value)), "dtype": dtype_of(value), "scale": scale,
            "zero_point": zp, "address": address_of(value)}


def _int_attr(module: ModuleOp, key: str) -> int:
    attr = module.attributes.get(key)
    if not isinstance(attr, IntegerAttr):
        raise TpudslError(f"codegen: module has no {key}; run --address-assign first")
    return attr.value.data


def without_instructions(module: ModuleOp) -> Operation | None:
    """The first op codegen has no instructions for (None: the module can be compiled)."""
    for op in module.walk():
        if op.name.startswith("tpu.") and (coverage.refusal(op) is not None or is_int8(op) and not _int8_modelled(op)):
            return op
    return None


def _int8_modelled(op: Operation) -> bool:
    """The backend has records for this INT8 op's form (check_int8, before --weight-reorder)."""
    try:
        check_int8(op, merged=False)
    except TpudslError:
        return False
    return True


def _read_groups(block_ops: list[Operation], chip: Chip) -> dict:
    """Each tpu.Group -> (its plan, whether its whole tiles are prefetched, the next group's plan
    when this one prefetches its whole tiles); a group that says it is prefetched must come right
    after another group."""
    from tpudsl.backend.layer_group.region import read

    computing = [op for op in block_ops if op.name not in _PASSIVE and not isinstance(op, ReturnOp)]
    plans = {op: read(op, chip) for op in computing if op.name == "tpu.Group"}
    out = {}
    for i, op in enumerate(computing):
        if op in plans:
            after = computing[i + 1] if i + 1 < len(computing) else None
            ahead = plans[after][0] if after in plans and plans[after][1] else None
            if plans[op][1] and (i == 0 or computing[i - 1] not in plans):
                raise TpudslError(f"codegen: group {describe(op)} prefetches its whole tiles "
                                  f"(other_up_overlap_op) but no group comes right before it; run --layer-group again")
            out[op] = (*plans[op], ahead)
    return out


def generate(top: TopModule, tensor_locations: bool = False) -> tuple[dict, bytes, Program]:
    """The header, coefficient blob and program of an addressed, layer-grouped Tpu module;
    `tensor_locations`: collect where each tensor can be read (prog.tensors), else leave it None."""
    module, chip = top.module, module_chip(top.module)
    coeff_addr = _int_attr(module, "module.coeff_addr")
    mode = addr_mode(module, chip)
    # The blob reaches the next region: io_alone's IO region, or the neurons (the padding included).
    coeffs = bytearray(_int_attr(module, "module.io_addr" if mode == "io_alone" else "module.neuron_addr") - coeff_addr)
    prog = Program(tensors=[] if tensor_locations else None, others=[([], []) for _ in range(chip.cores - 1)])
    inputs, outputs = [], []
    block_ops = list(top.main_func().body.block.ops)
    groups = _read_groups(block_ops, chip)
    run: list[Operation] = []  # the placed ops (core_id) and in-place Concats since the last barrier: one phase
    for op in block_ops:
        merged = op.name == "tpu.Concat" and attrs_of(op)["only_merge"]
        if op.name == "top.Weight" and address_of(op.results[0]) is not None:
            data = np.ascontiguousarray(top.weight_of(op)).tobytes()
            at = address_of(op.results[0]) - coeff_addr  # type: ignore[operator]
            if len(data) != nbytes(op.results[0]):
                raise TpudslError(f"codegen: weight '{loc_name(op)}' holds {len(data)} bytes, its type needs "
                                  f"{nbytes(op.results[0])}")
            coeffs[at:at + len(data)] = data
        elif op.name == "top.Input":
            inputs.append(_tensor(loc_name(op), op.results[0]))
        elif isinstance(op, ReturnOp):
            outputs = [_tensor(value_name(v), v) for v in op.operands]
        elif op.name == "tpu.Group":
            from tpudsl.backend.layer_group.emit import emit_group  # it builds on this module's records

            close_run(run, prog)  # a phase of placed ops ends before an op that is not one
            emit_group(op, *groups[op], prog)
        elif "core_id" in op.attributes:
            emit_placed(op, chip, prog, run)
        elif merged:
            emit_in_place(op, prog, run)
        elif op.name not in _PASSIVE:
            if op.name not in KINDS and op.name not in GLOBAL_ONLY:
                raise TpudslError(f"codegen: {describe(op)} has no instructions yet")
            close_run(run, prog)
            emit_op(op, chip, prog, top)
    close_run(run, prog)
    streams = [prog.records, *(records for records, _ in prog.others)]
    serial, overlapped, per_core = timing(streams, chip)
    records, prog.debug, counts = prog.joined()
    prog.records, prog.others = records, []
    gdma = sum(1 for r in records if r.ENGINE == "gdma")
    header = {
        "network": _str_attr(module, "module.name"), "chip": chip.name, "mode": _str_attr(module, "module.mode"),
        "inputs": inputs, "outputs": outputs, "coeff_mem_bytes": len(coeffs),
        "activation_mem_bytes": _int_attr(module, "module.neuron_size"),
        "gdma_count": gdma, "bdc_count": len(records) - gdma,
        "estimated_cycles": serial, "overlapped_cycles": overlapped, **_io_layout(module, mode, inputs + outputs),
    }
    if chip.cores > 1:  # optional: a single-core bmodel is byte for byte what it was before the keys
        header.update(core_num=chip.cores, core_instructions=counts, core_cycles=per_core)
    if prog.groups:  # optional: a bmodel without groups is byte for byte what it was before the key
        header["layer_groups"] = prog.groups
    return header, bytes(coeffs), prog


def _io_layout(module: ModuleOp, mode: str | None, tensors: list[dict]) -> dict:
    """The header's addr_mode and its IO keys (docs/bmodel.md): io_alone's io_addr and io_size; the
    tag modes' io_tags, each tag's memory as large as the header's `tensors` in it reach. None for
    auto/basic (the header without the optional keys, as before them)."""
    if mode is None:
        return {}
    if mode == "io_alone":
        return {"addr_mode": mode, "io_addr": _int_attr(module, "module.io_addr"),
                "io_size": _int_attr(module, "module.io_size")}
    ends: dict[int, int] = {}
    for t in tensors:
        tag = tag_of(t["address"])
        if tag:
            ends[tag] = max(ends.get(tag, 0), t["address"] - tag_base(tag) + tensor_bytes(t))
    return {"addr_mode": mode, "io_tags": [{"tag": tag, "size": ends[tag]} for tag in sorted(ends)]}


def _str_attr(module: ModuleOp, key: str) -> str:
    attr = module.attributes.get(key)
    return attr.data if isinstance(attr, StringAttr) else "network"


@dataclass(frozen=True)
class CodegenPass(ModulePass):
    """Emit the command stream and coefficients of the module as a .bmodel (model_file)."""

    name = "codegen"

    model_file: str = ""
    embed_debug_info: bool = False
    # TPU-MLIR's options (mlir_shell.py's codegen_options); docs/tpuc-opt.md
    model_version: str = "latest"  # "lastest" is TPU-MLIR's default spelling, "" mlir_shell.py's
    bmodel_only: bool = False  # either way only the .bmodel is written (no tensor_location .json, no profile)
    gdma_check: bool = False
    rvti: bool = False

    def check_options(self) -> None:
        """The option values tpudsl models (model_deploy checks them before writing anything)."""
        check_option(self.name, "model_version", self.model_version, ("latest", "lastest", ""),
                     "tpudsl writes one .bmodel format")
        check_option(self.name, "gdma_check", self.gdma_check, (False,), "TPU-MLIR's GDMA check is not modelled")
        check_option(self.name, "rvti", self.rvti, (False,), "TPU-MLIR's rvti output is not modelled")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        if not self.model_file:
            raise TpudslError("codegen: model_file=X.bmodel is required")
        top = top_module_of(op) or TopModule(op)
        header, coeffs, prog = generate(top, tensor_locations=self.embed_debug_info)
        if prog.tensors:  # debug info: where each tensor can be read during a run
            header["tensor_locations"] = prog.tensors
        write_bmodel(self.model_file, header, coeffs, isa.encode(prog.records),
                     prog.debug if self.embed_debug_info else [])

