"""The cmodel's engine: executes a command stream record by record on a `Memory`.

One handler per record type (the table is keyed by the record's class). A BDC record reads its
local operands, computes in float32 (arith.py) and rounds once to its dtype when it writes; an
INT8 record computes in integers and requantizes (arith_int8.py). Any
fault becomes one TpudslError naming the engine, the instruction index and the op's location name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel import (
    arith, arith_half, arith_int8, engine_detection, engine_extra, engine_gather, engine_grid, engine_image, engine_index,
    engine_recurrent, rq_axis,
)
from tpudsl.backend.cmodel.elementwise import code_below, elementwise
from tpudsl.backend.cmodel.memory import Fault, Memory, numpy_dtype
from tpudsl.ir.diagnostics import TpudslError

F32 = np.dtype(np.float32)
U8 = np.dtype(np.uint8)


def _load(m: Memory, r: isa.GdmaLoad) -> None:
    dt = numpy_dtype(r.dtype)
    shape = (r.n, r.c, r.h, r.w)
    m.write_local(r.laddr, m.read_global(r.gaddr, (r.gn, r.gc, r.gh, r.gw), shape, dt))


def _store(m: Memory, r: isa.GdmaStore) -> None:
    dt = numpy_dtype(r.dtype)
    m.write_global(r.gaddr, (r.gn, r.gc, r.gh, r.gw), m.read_local(r.laddr, (r.n, r.c, r.h, r.w), dt))


def _conv_operands(m: Memory, r: isa.BdcConv, weight_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """The input slice and the filter as (oc, ic/group, kh, kw), un-interleaving ic_parallel."""
    x = m.read_local(r.in_addr, (r.n, r.ic, r.ih, r.iw), numpy_dtype(r.dtype))
    icg, taps, par = r.ic // r.group, r.kh * r.kw, max(r.ic_parallel, 1)
    blocks = -(-icg // par)
    packed = m.read_local(r.weight_addr, (1, r.oc, blocks, taps * par), weight_dtype)
    # [oc, blocks, taps, P] -> [oc, blocks * P, taps]: input channel b*P + p of kernel position k
    weight = packed.reshape(r.oc, blocks, taps, par).transpose(0, 1, 3, 2).reshape(r.oc, blocks * par, taps)[:, :icg]
    _check_window(r.ih + r.pt + r.pb, r.kh, r.sh, r.dh, r.oh)
    _check_window(r.iw + r.pl + r.pr, r.kw, r.sw, r.dw, r.ow)
    return x, weight.reshape(r.oc, icg, r.kh, r.kw)


def _conv(m: Memory, r: isa.BdcConv) -> None:
    x, weight = _conv_operands(m, r, numpy_dtype(r.dtype))
    bias = None if r.bias_addr == isa.NO_ADDR else m.read_local(r.bias_addr, (1, r.oc, 1, 1), F32).ravel()
    y = arith.conv(x, weight, bias, (r.on, r.oc, r.oh, r.ow), r)
    m.write_local(r.out_addr, y.astype(numpy_dtype(r.dtype)))


I8 = np.dtype(np.int8)
I32 = np.dtype(np.int32)


def _zps(r: isa.Record) -> tuple[int, int, int]:
    """(in_zp, out_zp, out_dtype) of an INT8 record: 0, 0, i8 for the symmetric ones (40-47)."""
    return getattr(r, "in_zp", 0), getattr(r, "out_zp", 0), getattr(r, "out_dtype", isa.DTYPES["i8"])


def _write_q(m: Memory, r: isa.Record, y: np.ndarray) -> None:
    """An INT8 result (stored values, zero point added) after the fused relu on stored values."""
    m.write_local(r.out_addr, arith.relu(y, r.do_relu, r.relu_limit).astype(y.dtype))  # type: ignore[attr-defined]


def _merged(m: Memory, addr: int, oc: int) -> list[np.ndarray]:
    """The merged int32 (1, oc, 1, 3) tile's bias, multiplier and rshift, each (1, oc, 1, 1)."""
    coeff = m.read_local(addr, (1, oc, 1, 3), I32).reshape(oc, 3).astype(np.int64)
    return [coeff[:, i].reshape(1, oc, 1, 1) for i in range(3)]


def _conv_q(m: Memory, r: isa.BdcConvQ) -> None:
    """int8 conv: exact window sums of (in - in_zp) + bias, requantized per output channel by the merged tile."""
    x, weight = _conv_operands(m, r, I8)
    in_zp, out_zp, out_dtype = _zps(r)
    bias, multiplier, rshift = _merged(m, r.bias_addr, r.oc)
    acc = arith_int8.exact(arith.conv_sum(x.astype(np.int64) - in_zp, weight, (r.on, r.oc, r.oh, r.ow), r,
                                          np.float64)) + bias
    _write_q(m, r, arith_int8.requantize(acc, multiplier, rshift, r.round_mode, out_zp, out_dtype))


def _deconv_operands(m: Memory, r: isa.BdcDeconv, weight_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """The input slice and the filter as (oc, ic/group, kh, kw), output channel g * oc/group + j."""
    x = m.read_local(r.in_addr, (r.n, r.ic, r.ih, r.iw), numpy_dtype(r.dtype))
    weight = m.read_local(r.weight_addr, (r.group, r.oc // r.group, r.ic // r.group, r.kh * r.kw), weight_dtype)
    _check_window(r.pt + (r.ih - 1) * r.sh + 1 + r.pb, r.kh, 1, r.dh, r.oh)
    _check_window(r.pl + (r.iw - 1) * r.sw + 1 + r.pr, r.kw, 1, r.dw, r.ow)
    return x, weight.reshape(r.oc, r.ic // r.group, r.kh, r.kw)


def _deconv_q(m: Memory, r: isa.BdcDeconvQ) -> None:
    """int8 deconv: exact sums over the zero-inserted (in - in_zp) + bias, requantized per output channel."""
    x, weight = _deconv_operands(m, r, I8)
    bias, multiplier, rshift = _merged(m, r.bias_addr, r.oc)
    acc = arith_int8.deconv_sums(x.astype(np.int64) - r.in_zp, weight, (r.on, r.oc, r.oh, r.ow), r) + bias
    _write_q(m, r, arith_int8.requantize(acc, multiplier, rshift, r.round_mode, r.out_zp, r.out_dtype))


def _deconv(m: Memory, r: isa.BdcDeconv) -> None:
    dt = numpy_dtype(r.dtype)
    x, weight = _deconv_operands(m, r, dt)
    bias = None if r.bias_addr == isa.NO_ADDR else m.read_local(r.bias_addr, (1, r.oc, 1, 1), dt).ravel()
    m.write_local(r.out_addr, arith.deconv(x, weight, bias, (r.on, r.oc, r.oh, r.ow), r).astype(dt))


def _check_window(size: int, k: int, s: int, d: int, out: int) -> None:
    if (size - (k - 1) * d - 1) // s + 1 < out:
        raise Fault(f"the input slice ({size} rows/columns with pads) is too small for {out} outputs")


def _pool(m: Memory, r: isa.BdcPool) -> None:
    dt = numpy_dtype(r.dtype)
    x = m.read_local(r.in_addr, (r.n, r.c, r.ih, r.iw), dt)
    _check_window(r.ih + r.pt + r.pb, r.kh, r.sh, 1, r.oh)
    _check_window(r.iw + r.pl + r.pr, r.kw, r.sw, 1, r.ow)
    m.write_local(r.out_addr, arith.pool(x, (r.on, r.oc, r.oh, r.ow), r).astype(dt))


def _pool_q(m: Memory, r: isa.BdcPoolQ) -> None:
    """int8 average pool: the window's exact sum (zero pads), requantized (per position when pads
    are not counted)."""
    in_zp, out_zp, out_dtype = _zps(r)
    x = m.read_local(r.in_addr, (r.n, r.c, r.ih, r.iw), numpy_dtype(r.dtype)).astype(np.int64) - in_zp
    _check_window(r.ih + r.pt + r.pb, r.kh, r.sh, 1, r.oh)
    _check_window(r.iw + r.pl + r.pr, r.kw, r.sw, 1, r.ow)
    if r.mode != isa.POOL_MODES["Avg"]:
        raise Fault(f"an INT8 pool record of mode {r.mode}: int8 max pool is BdcPool")
    pads = ((0, 0), (0, 0), (r.pt, r.pb), (r.pl, r.pr))
    total = arith._windows(np.pad(x, pads), r.kh, r.kw, r.sh, r.sw, 1, 1, r.oh, r.ow).sum(axis=(4, 5))
    if r.count_include_pad:
        y = arith_int8.requantize(total, r.multiplier, r.rshift, r.round_mode, out_zp, out_dtype)
    else:  # per position: the divisor k is the window's count of input elements
        inside = np.pad(np.ones((1, 1, r.ih, r.iw), np.int64), pads)
        counts = arith._windows(inside, r.kh, r.kw, r.sh, r.sw, 1, 1, r.oh, r.ow).sum(axis=(4, 5))
        multipliers, rshifts = np.zeros(counts.shape, np.int64), np.zeros(counts.shape, np.int64)
        if not counts.all():
            raise Fault("an INT8 average pool window without input elements (pads not counted)")
        for k in np.unique(counts):
            multipliers[counts == k], rshifts[counts == k] = arith_int8.scale_and_shift(r.scale / int(k))
        y = arith_int8.requantize(total, multipliers, rshifts, r.round_mode, out_zp, out_dtype)
    _write_q(m, r, y)


def _matmul_q(m: Memory, r: isa.BdcMatMulQ) -> None:
    """int8 MatMul: exact products of (left - left_zp) and (right - right_zp) + int32 bias, requantized
    by the scalar (multiplier, rshift) or, with BdcMatMulQZ's quant tile, per output column."""
    rows = r.batch * r.m
    left_zp, right_zp, (_, out_zp, out_dtype) = getattr(r, "left_zp", 0), getattr(r, "right_zp", 0), _zps(r)
    left = m.read_local(r.left_addr, (rows, r.k, 1, 1), numpy_dtype(r.dtype)).reshape(r.batch, r.m, r.k)
    right = m.read_local(r.right_addr, (r.batch, r.k, 1, r.n_out), numpy_dtype(getattr(r, "right_dtype", r.dtype)))
    right = right.reshape(r.batch, r.k, r.n_out).astype(np.float64) - right_zp
    acc = arith_int8.exact((left.astype(np.float64) - left_zp) @ right)
    if r.bias_addr != isa.NO_ADDR:
        acc = acc + m.read_local(r.bias_addr, (1, r.n_out, 1, 1), I32).reshape(r.n_out)
    multiplier, rshift = r.multiplier, r.rshift
    if getattr(r, "quant_addr", isa.NO_ADDR) != isa.NO_ADDR:
        multiplier, rshift = m.read_local(r.quant_addr, (1, r.n_out, 1, 2), I32).reshape(r.n_out, 2).T
    y = arith_int8.requantize(acc, multiplier, rshift, r.round_mode, out_zp, out_dtype)
    _write_q(m, r, y.reshape(rows, r.n_out, 1, 1))


def _binary_q(m: Memory, r: isa.BdcBinaryQ) -> None:
    """INT8 Add: a m0 + b m1; Sub: a m0 - b m1; Mul: a b m0; each then shifted, rounded and saturated."""
    a_zp, b_zp, (_, out_zp, out_dtype) = getattr(r, "a_zp", 0), getattr(r, "b_zp", 0), _zps(r)
    a = m.read_local(r.a_addr, (r.an, r.ac, r.ah, r.aw), numpy_dtype(r.dtype)).astype(np.int64) - a_zp
    b_dtype = numpy_dtype(getattr(r, "b_dtype", r.dtype))
    b = m.read_local(r.b_addr, (r.bn, r.bc, r.bh, r.bw), b_dtype).astype(np.int64) - b_zp
    if r.op == isa.BINARY_OPS["Add"]:
        acc = a * r.m0 + b * r.m1
    elif r.op == isa.BINARY_OPS["Sub"]:
        acc = a * r.m0 - b * r.m1
    elif r.op == isa.BINARY_OPS["Mul"]:
        acc = a * b * r.m0
    else:
        raise Fault(f"INT8 binary op {r.op} is not Add, Sub or Mul")
    if acc.shape != (r.n, r.c, r.h, r.w):
        raise Fault(f"operands {a.shape} and {b.shape} do not broadcast to {(r.n, r.c, r.h, r.w)}")
    y = arith_int8.store(arith_int8.shift_round(acc, r.rshift, r.round_mode), out_zp, out_dtype)
    _write_q(m, r, y)


def _const_q(m: Memory, r: isa.BdcConstQ) -> None:
    """INT8 MulConst: the constant is in the multiplier (the value field is not read)."""
    if r.op != isa.CONST_OPS["MulConst"] or r.reverse:
        raise Fault(f"an INT8 constant record of op {r.op} (reverse {r.reverse}): only MulConst is modelled")
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    _write_q(m, r, arith_int8.requantize(x, r.multiplier, r.rshift, r.round_mode))


def _const_sum_q(m: Memory, r: isa.BdcConstSumQ) -> None:
    """INT8 AddConst / SubConst (arith_int8.const_sum), then the fused relu."""
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    _write_q(m, r, arith_int8.const_sum(x, r))


def _lut(m: Memory, r: isa.BdcLut) -> None:
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    tables = m.read_local(r.table_addr, (1, r.c, 1, 256), np.dtype(np.int8)).reshape(r.c, 256)
    m.write_local(r.out_addr, arith_int8.lut(x, tables))


def _requant(m: Memory, r: isa.BdcRequant) -> None:
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    m.write_local(r.out_addr, arith_int8.requantize(x, r.multiplier, r.rshift, r.round_mode))


_FLOATS = ("f32", "f16", "bf16")
_INTS = ("i8", "u8")


def _quant_cast(m: Memory, r: isa.BdcQuantCast) -> None:
    """A float -> i8 quantizes; i8 -> a float dequantizes to float32, then rounds once to the float
    type; any other pair is not a quantizing cast."""
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    src, dst = isa.DTYPE_NAMES.get(r.dtype), isa.DTYPE_NAMES.get(r.out_dtype)
    if src in _FLOATS and dst == "i8":
        y = arith_int8.quantize(x, r.scale)
    elif src == "i8" and dst in _FLOATS:
        y = arith_int8.dequantize(x, r.scale).astype(numpy_dtype(r.out_dtype))
    else:
        raise Fault(f"a quantizing cast from {src} to {dst}")
    m.write_local(r.out_addr, y)


def _requant_z(m: Memory, r: isa.BdcRequantZ) -> None:
    """By the dtypes: integer -> integer requantizes, float -> integer quantizes, integer -> float
    dequantizes to float32 then rounds once to the float type."""
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    src, dst = isa.DTYPE_NAMES.get(r.dtype), isa.DTYPE_NAMES.get(r.out_dtype)
    if src in _INTS and dst in _INTS:
        y = arith_int8.requantize(x.astype(np.int64) - r.in_zp, r.multiplier, r.rshift, r.round_mode, r.out_zp,
                                  r.out_dtype)
        y = arith.relu(y, r.do_relu, r.relu_limit).astype(y.dtype)
    elif src in _FLOATS and dst in _INTS:
        y = arith_int8.quantize(x, r.scale, r.out_zp, r.out_dtype)
    elif src in _INTS and dst in _FLOATS:
        y = arith_int8.dequantize(x, r.scale, r.in_zp).astype(numpy_dtype(r.out_dtype))
    else:
        raise Fault(f"a change of grid from {src} to {dst}")
    m.write_local(r.out_addr, y)


def _softmax_q(m: Memory, r: isa.BdcSoftmaxQ) -> None:
    """The exp table of each channel's lane, the sum across lanes, the float tail (arith_int8.softmax)."""
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    copies = m.read_local(r.table_addr, (1, min(r.c, m.chip.lanes), 1, 256), I32).reshape(-1, 256)
    tables = copies[np.arange(r.c) % m.chip.lanes]
    m.write_local(r.out_addr, arith_int8.softmax(x, tables, r.out_scale, r.out_zp, r.out_dtype))


def _matmul(m: Memory, r: isa.BdcMatMul) -> None:
    right = m.read_local(r.right_addr, (r.batch, r.k, 1, r.n_out), numpy_dtype(r.dtype))
    _matmul_with(m, r, right.reshape(r.batch, r.k, r.n_out))


def _matmul_a16(m: Memory, r: isa.BdcMatMulA16) -> None:
    """The right side's integers (4-bit ones two rows per byte) minus zero point times scale, in the
    record's dtype, then BdcMatMul's product."""
    packing = 2 if r.weight_bits == 4 else 1
    if r.right_dtype not in (isa.DTYPES["i8"], isa.DTYPES["u8"]) or r.batch != 1 or not 0 < r.groups <= r.k \
            or r.k % r.groups or r.weight_bits not in (4, 8) or r.k % packing:
        raise Fault(f"a weight-only MatMul of right dtype {r.right_dtype}, batch {r.batch}, {r.groups} groups "
                    f"of k {r.k}, {r.weight_bits} bits")
    right = m.read_local(r.right_addr, (1, r.k // packing, 1, r.n_out), numpy_dtype(r.right_dtype))
    right = right.reshape(1, r.k // packing, r.n_out)
    if packing == 2:
        right = arith_half.nibbles(right)
    params = (1, r.n_out, 1, r.groups)
    scale = m.read_local(r.scale_addr, params, numpy_dtype(r.dtype)).reshape(r.n_out, r.groups)
    zp = None if r.zp_addr == isa.NO_ADDR else m.read_local(r.zp_addr, params, U8).reshape(r.n_out, r.groups)
    _matmul_with(m, r, arith_half.dequantize(right[0], scale, zp)[None])


def _matmul_with(m: Memory, r: isa.BdcMatMul, right: np.ndarray) -> None:
    """left (batch, m, k) times `right` (batch, k, n_out) plus the f32 bias, in the record's dtype."""
    dt = numpy_dtype(r.dtype)
    rows = r.batch * r.m
    left = m.read_local(r.left_addr, (rows, r.k, 1, 1), dt).reshape(r.batch, r.m, r.k)
    bias = None if r.bias_addr == isa.NO_ADDR else m.read_local(r.bias_addr, (1, r.n_out, 1, 1), F32).ravel()
    y = arith.matmul(left, right, bias, r)
    m.write_local(r.out_addr, y.reshape(rows, r.n_out, 1, 1).astype(dt))


def _reduce(m: Memory, r: isa.BdcReduce) -> None:
    dt = numpy_dtype(r.dtype)
    if not 0 <= r.mode < len(arith.REDUCE):
        raise Fault(f"unknown reduce mode {r.mode}")
    m.write_local(r.out_addr, arith.reduce_c(m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), dt), r).astype(dt))


def _pad(m: Memory, r: isa.BdcPad) -> None:
    dt = numpy_dtype(r.dtype)
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), dt)
    widths = ((r.pn0, r.pn1), (r.pc0, r.pc1), (r.ph0, r.ph1), (r.pw0, r.pw1))
    if r.mode not in (0, 1):
        raise Fault(f"unknown pad mode {r.mode}")
    if r.mode == 1 and any(size == 0 and sum(p) for size, p in zip(x.shape, widths, strict=True)):
        raise Fault("edge padding of an empty slice")
    y = np.pad(x, widths, mode="edge") if r.mode else np.pad(x, widths, constant_values=np.asarray(r.value, dt))
    m.write_local(r.out_addr, y)


def _interp(m: Memory, r: isa.BdcInterp) -> None:
    dt = numpy_dtype(r.dtype)
    for table, code in ((isa.INTERP_MODES, r.mode), (isa.COORD_MODES, r.coord), (isa.NEAREST_MODES, r.nearest)):
        if code not in table.values():
            raise Fault(f"unknown interp mode code {code}")
    rows = isa.interp_sources(r.full_ih, r.full_oh, r.scale_h, r.mode, r.coord, r.nearest)
    rows = tuple(v[r.oh0:r.oh0 + r.oh] for v in rows)
    if min(rows[0]) < r.ih0 or max(rows[1]) >= r.ih0 + r.h:
        raise Fault(f"interp rows {min(rows[0])}..{max(rows[1])} are outside the input slice {r.ih0}..{r.ih0 + r.h - 1}")
    cols = isa.interp_sources(r.w, r.ow, r.scale_w, r.mode, r.coord, r.nearest)
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), dt)
    y = arith.interp(x, (np.array(rows[0]) - r.ih0, np.array(rows[1]) - r.ih0, rows[2]), cols)
    m.write_local(r.out_addr, y.astype(dt))


def _cast(m: Memory, r: isa.BdcCast) -> None:
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    m.write_local(r.out_addr, x.astype(np.float32).astype(numpy_dtype(r.out_dtype)))


def _upsample(m: Memory, r: isa.BdcUpsample) -> None:
    dt = numpy_dtype(r.dtype)
    if r.skip + r.oh > r.h * r.sh:
        raise Fault(f"upsample rows {r.skip}..{r.skip + r.oh} are past the {r.h} x {r.sh} rows of the input slice")
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), dt)
    y = np.repeat(np.repeat(x, r.sh, axis=2), r.sw, axis=3)[:, :, r.skip:r.skip + r.oh]
    m.write_local(r.out_addr, y)


def _group_norm(r: isa.BdcGroupNorm, x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None) -> np.ndarray:
    """arith.group_norm takes weight and bias as vectors."""
    return arith.group_norm(x, *(None if v is None else v.ravel() for v in (weight, bias)), r.groups, r.eps)


HANDLERS: dict[type[isa.Record], Callable] = {
    isa.GdmaLoad: _load, isa.GdmaStore: _store,
    isa.GdmaCopy: lambda m, r: m.copy_global(r.src, r.dst, r.nbytes),
    isa.BdcConv: _conv, isa.BdcPool: _pool, isa.BdcPoolCeil: _pool, isa.BdcMatMul: _matmul, isa.BdcCast: _cast,
    isa.BdcUpsample: _upsample,
    # element-wise: (compute, its operand tiles, the codes it must reject)
    isa.BdcBinary: elementwise(lambda r, a, b: arith.binary(a, b, r), "a", "b"),
    isa.BdcConst: elementwise(lambda r, x: arith.const(x, r), "in",
                              check=code_below("op", len(arith.BINARY), "unknown constant op {}")),
    isa.BdcActive: elementwise(lambda r, x: arith.active(x, r), "in",
                               check=code_below("mode", len(arith.ACTIVE), "unknown activation mode {}")),
    isa.BdcSoftmax: elementwise(lambda r, x: arith.softmax(x, r), "in"),
    isa.BdcLayerNorm: elementwise(lambda r, x, weight, bias: arith.layer_norm(x, weight, bias, r.eps), "in",
                                  optional=("weight", "bias")),
    isa.BdcGroupNorm: elementwise(_group_norm, "in", optional=("weight", "bias"),
                                  check=lambda r: None if r.groups >= 1 and r.c % r.groups == 0
                                  else f"{r.groups} groups do not divide {r.c} channels"),
    isa.BdcConvQ: _conv_q, isa.BdcPoolQ: _pool_q, isa.BdcMatMulQ: _matmul_q, isa.BdcBinaryQ: _binary_q,
    isa.BdcLut: _lut, isa.BdcRequant: _requant, isa.BdcQuantCast: _quant_cast, isa.BdcConstQ: _const_q,
    isa.BdcDeconv: _deconv, isa.BdcReduce: _reduce, isa.BdcPad: _pad, isa.BdcInterp: _interp,
    isa.BdcDeconvQ: _deconv_q, isa.BdcSoftmaxQ: _softmax_q, isa.BdcMatMulQZ: _matmul_q, isa.BdcConvQZ: _conv_q,
    isa.BdcPoolQZ: _pool_q, isa.BdcBinaryQZ: _binary_q, isa.BdcRequantZ: _requant_z,
    isa.BdcConstSumQ: _const_sum_q, isa.BdcMatMulA16: _matmul_a16,
    isa.CoreSync: lambda m, r: None,  # the runner of several cores stops each core at it (cmodel/cores.py)
    **engine_extra.HANDLERS,
    **engine_index.HANDLERS,
    **engine_gather.HANDLERS,
    **engine_detection.HANDLERS,
    **engine_image.HANDLERS,
    **engine_grid.HANDLERS,
    **engine_recurrent.HANDLERS,
    **rq_axis.HANDLERS,
}


def op_names(debug: Sequence[Sequence], count: int) -> list[str]:
    """The op location name of each of `count` instructions, from debug info (first instruction of each op)."""
    marks = {int(i): str(name) for i, name in debug}
    names, current = [], "no debug info"
    for i in range(count):
        current = marks.get(i, current)
        names.append(current)
    return names


def execute(m: Memory, records: Sequence[isa.Record], names: Sequence[str],
            after: Callable[[Memory, int], None] | None = None, first: int = 0) -> None:
    """Run `records`, instructions first, first + 1, ... of the bmodel (one core's phase starts
    past 0: cmodel/cores.py); `after(m, i)` is called as instruction i completes (capture.py reads
    tensors). Float overflow is inf, as IEEE (and the chip) give it: beyond float32 in a record's
    arithmetic, beyond f16 where it rounds its result; x / 0 is inf and 0 / 0 NaN the same way;
    numpy's warnings are off once here, not per record."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        for i, r in enumerate(records):
            try:
                HANDLERS[type(r)](m, r)
                if after is not None:
                    after(m, first + i)
            except (Fault, arith_int8.Int8Error) as e:
                raise TpudslError(f"cmodel: {r.ENGINE}: {e} at instruction {first + i} ({names[i]})") from None
