"""The instruction set as data: GDMA (moves) and BDC (compute) records, each a fixed binary record.

Every record starts with its opcode byte; the rest is the record's fields in the order its
dataclass declares them, packed little-endian by one `struct` format per opcode, so a command
stream is the records one after another and decodes without lengths.

Local tensors are described by (laddr, n, c, h, w): channel c lives on lane c % lanes, at
per-lane offset laddr + ((n_i * cgroups + c // lanes) * row + h_i * w + w_i) * esize, where
cgroups = ceil(c / lanes) and `row` is h * w elements rounded up to the chip's EU bytes (rows
EU-aligned, as on the chip). Every local tensor starts on lane 0. Global tensors are (gaddr, four
element strides): a strided view, so one GDMA record also transposes (MatMul's right operand).

INT8 records (opcodes 40-47) are the float records' fields plus their requantization: the
multiplier, the right shift and the round mode of docs/quantization.md ("INT8 arithmetic"); a conv's
per-channel (bias, multiplier, rshift) are one int32 whole tile, what --weight-reorder merges.
Opcodes 53-59 are the INT8 forms added later: Deconv, Softmax, per-column MatMul and the records
with zero points of asymmetric INT8 (docs/bmodel.md lists their fields).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from tpudsl.backend import bmodel
from tpudsl.dialects.geometry import resize
from tpudsl.ir.diagnostics import TpudslError

# dtype codes of the records
DTYPES = {"f32": 0, "f16": 1, "bf16": 2, "i8": 3, "u8": 4, "i32": 5}
DTYPE_NAMES = {code: name for name, code in DTYPES.items()}
DTYPE_BYTES = {name: bmodel.DTYPES[name] for name in DTYPES}  # the container's sizes: one table
NO_ADDR = 0xFFFF_FFFF  # an absent local operand (no bias)

BINARY_OPS = {"Add": 0, "Sub": 1, "Mul": 2, "Max": 3, "Min": 4}
CONST_OPS = {"AddConst": 0, "SubConst": 1, "MulConst": 2, "MaxConst": 3, "MinConst": 4, "DivConst": 5}
ACTIVE_MODES = {"RELU": 0, "SIGMOID": 1, "TANH": 2, "EXP": 3, "ABSVAL": 4, "GELU": 5, "SQRT": 6, "LEAKY_RELU": 7}
REDUCE_MODES = {"ReduceSum": 0, "ReduceMean": 1, "ReduceMax": 2, "ReduceMin": 3, "ReduceL1": 4, "ReduceL2": 5,
                "ReduceProd": 6}
ARG_MODES = {"ArgMax": 0, "ArgMin": 1}
PAD_MODES = {"constant": 0, "edge": 1}
INTERP_MODES = {"nearest": 0, "linear": 1}
COORD_MODES = {"align_corners": 0, "half_pixel": 1, "pytorch_half_pixel": 2, "asymmetric": 3}
NEAREST_MODES = {"round_prefer_floor": 0, "round_prefer_ceil": 1, "floor": 2, "ceil": 3}
POOL_MODES = {"Max": 0, "Avg": 1}
# #tpu<round_mode> cases of the INT8 records (docs/quantization.md, RightShiftRound)
YUV_FORMULAS = {"_601_limited": 0, "_601_full": 1}  # tpu.Yuv2rgbFormula's formula_mode
ROUND_MODES = {"HalfAwayFromZero": 0, "HalfUp": 1, "HalfDown": 2, "HalfToEven": 3, "HalfToOdd": 4,
               "HalfTowardsZero": 5, "TowardsZero": 6, "Up": 7, "Down": 8}


# The struct code of each record field: one width for a name wherever it stands. The four names whose
# width differs between records (axis, beta, group, k) are not here: a record writes them `name:code`.
_CODES = {name: code for code, names in (
    ("B", "dtype out_dtype right_dtype b_dtype idx_dtype index_dtype esize mode op reverse coord nearest log "
          "round_mode count_include_pad do_relu select_last largest upper src_format dst_format formula"),
    ("b", "rshift"),
    ("H", "kh kw sh sw dh dw pt pb pl pr ic_parallel skip pn0 pn1 pc0 pc1 ph0 ph1 pw0 pw1"),
    ("I", "laddr in_addr out_addr weight_addr bias_addr left_addr right_addr a_addr b_addr cond_addr table_addr "
          "quant_addr scale_addr gamma_addr idx_addr val_addr mask_addr "
          "n c h w ic ih iw on oc oh ow m n_out batch an ac ah aw bn bc bh bw cn cc ch cw ih0 oh0 full_ih full_oh "
          "groups n0 h0 full_n full_h on0 outer inner count row0 xn xc xh xw in_ slab d0 d1 d2 d3 size"),
    ("i", "multiplier m0 m1 in_zp out_zp left_zp right_zp a_zp b_zp diagonal"),
    ("Q", "gaddr src dst idx upd nbytes"),
    ("q", "gn gc gh gw const"),
    ("f", "relu_limit limit value value2 eps scale_h scale_w coeff0 coeff1 a_value b_value"),
    ("d", "scale out_scale alpha bias")) for name in names.split()}

# Runs of fields several records share, in their order (a record's spec names them in braces)
_IN = "in_addr n c h w"  # a local input: address and shape
_OUT = "out_addr on oc oh ow"  # a windowed op's local output
_KERNEL = "kh kw sh sw"  # the window and its strides
_PADS = "pt pb pl pr"  # this slice's pads: top, bottom, left, right
_CONV = f"in_addr n ic ih iw {_OUT} weight_addr bias_addr {_KERNEL} dh dw {_PADS}"  # Conv's and Deconv's
_BINARY_IO = "a_addr an ac ah aw b_addr bn bc bh bw out_addr n c h w"  # two broadcasting inputs, the output
_RELU = "do_relu relu_limit"  # the fused relu
_REQUANT = "multiplier rshift round_mode"  # RightShiftRound(acc * multiplier, rshift, round_mode)
_ZP = "out_dtype in_zp out_zp"  # asymmetric INT8's result dtype and zero points
_ELEMENTS = "axis:B xn xc xh xw in_ ic ih iw"  # GatherElements / ScatterElements: axis, data and index shapes
_ND = "count k:B slab d0 d1 d2 d3"  # GatherND / ScatterND: indices, index length, slab, data dims


def record(opcode: int, engine: str, spec: str):
    """Makes the class a frozen dataclass record with fields `spec` (space-separated names, after its
    base record's) and FORMAT its base's plus their struct codes (`_CODES`, or a `name:code`)."""

    def make(cls: type) -> type:
        names = dict(item.partition(":")[::2] for item in spec.split())
        codes = [code or _CODES[name] for name, code in names.items()]
        # each name once, and one width per name
        assert len(names) == len(spec.split()) and not any(code and name in _CODES for name, code in names.items())
        cls.__annotations__ = {name: float if code in "fd" else int for name, code in zip(names, codes)}
        cls.OPCODE, cls.ENGINE = opcode, engine
        cls.FORMAT = getattr(cls, "FORMAT", "") + "".join(codes)
        made = dataclass(frozen=True)(cls)
        made.NAMES = tuple(f.name for f in fields(made))
        return made

    return make


@dataclass(frozen=True)
class Record:
    """A record: `record` sets OPCODE, ENGINE and FORMAT (struct codes of the fields after the opcode)."""

    OPCODE: ClassVar[int]
    FORMAT: ClassVar[str]
    ENGINE: ClassVar[str]  # "gdma" or "bdc"
    NAMES: ClassVar[tuple[str, ...]]  # the fields' names in order, base record's first

    def values(self) -> tuple:
        """The fields' values in order: dataclasses.astuple's answer (every field is an int or a
        float, `record`), without its deep copy of each (a fifth of an INT8 group search's time)."""
        return tuple(getattr(self, name) for name in self.NAMES)

    def encode(self) -> bytes:
        return _STRUCTS[self.OPCODE].pack(self.OPCODE, *self.values())


@record(1, "gdma", "dtype gaddr gn gc gh gw laddr n c h w")
class GdmaLoad(Record):
    """Global (gaddr, strides in elements) -> local (laddr; shape n, c, h, w)."""


@record(2, "gdma", "")
class GdmaStore(GdmaLoad):
    """Local (laddr; shape n, c, h, w) -> global (gaddr, strides in elements)."""


@record(3, "gdma", "src dst nbytes")
class GdmaCopy(Record):
    """Global -> global, `nbytes` contiguous bytes (a reshape's new tensor)."""


@record(16, "bdc", f"dtype {_CONV} ic_parallel group:I {_RELU}")
class BdcConv(Record):
    """out[n, oc] = sum over the group's input channels and the window of in * weight, + bias.
    weight: local (1, oc, ceil(ic/group / P), kh*kw*P), P = ic_parallel input channels interleaved
    per kernel position (1: the plain [oc, ic/group, kh*kw]); bias: local f32 (1, oc, 1, 1) or
    NO_ADDR; pads are this slice's (top, bottom, left, right): zero rows only at the tensor's edge."""


@record(17, "bdc", f"dtype mode in_addr n c ih iw {_OUT} {_KERNEL} {_PADS} count_include_pad {_RELU}")
class BdcPool(Record):
    """Max or average pooling of a local slice; the average divides by the window's positions
    inside the tensor, or by kh*kw with count_include_pad."""


@record(104, "bdc", "uncounted_b:H uncounted_r:H")
class BdcPoolCeil(BdcPool):
    """Average pool (count_include_pad 1) of a ceil-mode pool: the divisor counts the window's
    positions inside the tensor and its pads except the last `uncounted_b` bottom pad rows and
    `uncounted_r` right pad columns of this slice (the overhang past the explicit end pads)."""


@record(18, "bdc", f"dtype left_addr right_addr bias_addr out_addr m k:I n_out batch {_RELU}")
class BdcMatMul(Record):
    """`batch` products: out (batch*m, n_out, 1, 1) = left (batch*m, k, 1, 1) @ right (batch, k, 1, n_out)
    + bias (1, n_out, 1, 1), rows b*m .. b*m + m - 1 of left and out with right's b."""


@record(19, "bdc", f"dtype op {_BINARY_IO} {_RELU}")
class BdcBinary(Record):
    """out = a (op) b element-wise; a dim of size 1 in a or b broadcasts."""


@record(20, "bdc", f"dtype op reverse {_IN} out_addr value {_RELU}")
class BdcConst(Record):
    """out = in (op) value (reverse: value (op) in, for SubConst and DivConst)."""


@record(21, "bdc", f"dtype mode {_IN} out_addr limit")
class BdcActive(Record):
    """out = f(in), f chosen by `mode` (RELU clamps at `limit` when it is > 0; LEAKY_RELU's
    negative slope is `limit`)."""


@record(22, "bdc", f"dtype out_dtype {_IN} out_addr")
class BdcCast(Record):
    """out (dtype `out_dtype`) = in (dtype `dtype`), rounded to nearest even."""


@record(23, "bdc", f"dtype {_IN} out_addr log beta:f")
class BdcSoftmax(Record):
    """out = softmax(beta * in) along C (log: its logarithm); N, H and W are independent rows.
    The channels of a row sit on different lanes: the max and the sum reduce across lanes."""


@record(24, "bdc", f"dtype {_IN} weight_addr bias_addr out_addr eps")
class BdcLayerNorm(Record):
    """out = (in - mean) / sqrt(var + eps) * weight + bias, mean and (biased) var along C; weight
    and bias local (1, c, 1, 1) in the record's dtype, or NO_ADDR. The reduction crosses lanes."""


@record(25, "bdc", f"dtype {_IN} out_addr oh sh sw skip")
class BdcUpsample(Record):
    """Nearest upsampling by (sh, sw): out rows skip .. skip + oh - 1 of in's rows each repeated sh
    times and columns repeated sw times (a slice's first output row may fall inside a repeat)."""


# ---- INT8 (requantizing) records: acc -> sat8(RightShiftRound(acc * multiplier, rshift, round_mode)),
# then the fused relu (limit in the result's integer units) ----


@record(40, "bdc", "round_mode")
class BdcConvQ(BdcConv):
    """INT8 conv: int8 in and weight, the accumulator in int32; `bias_addr` is the merged int32 tile
    (1, oc, 1, 3) of (bias, multiplier, rshift) per output channel; out int8."""


@record(41, "bdc", f"{_REQUANT} scale")
class BdcPoolQ(BdcPool):
    """INT8 average pool: the window's int sum (pads are zeros) requantized. count_include_pad 1:
    by (multiplier, rshift), every window counting kh*kw elements; 0: each position by
    get_scale_and_shift(float32(scale / k)), k its window's elements inside this slice's input
    (pads not counted; a slice's halo rows are input), `scale` the op's f32 s_in / s_out.
    int8 max pool is BdcPool with dtype i8."""


@record(42, "bdc", _REQUANT)
class BdcMatMulQ(BdcMatMul):
    """INT8 MatMul: int8 left and right, int32 bias (1, n_out, 1, 1) or NO_ADDR, one (multiplier, rshift)."""


@record(43, "bdc", "m0 m1 rshift round_mode")
class BdcBinaryQ(BdcBinary):
    """INT8 Add: acc = a * m0 + b * m1; Sub: acc = a * m0 - b * m1; Mul: acc = a * b * m0 (m1 unused);
    then shifted by rshift."""


@record(44, "bdc", f"dtype {_IN} out_addr table_addr")
class BdcLut(Record):
    """out = table[in as uint8]; table: local (1, c, 1, 256), each channel's copy on its lane (one GDMA
    with channel stride 0 broadcasts the 256 entries)."""


@record(45, "bdc", f"dtype {_IN} out_addr {_REQUANT}")
class BdcRequant(Record):
    """int8 -> int8 at another scale: sat8(RightShiftRound(in * multiplier, rshift, round_mode))."""


@record(46, "bdc", f"dtype out_dtype {_IN} out_addr scale")
class BdcQuantCast(Record):
    """f32 -> int8: sat8(round_half_away(in / scale)), the division in float64; int8 -> f32:
    float32(in * scale). `scale` is a double, as the quant type holds it."""


@record(47, "bdc", _REQUANT)
class BdcConstQ(BdcConst):
    """INT8 MulConst: sat8(RightShiftRound(in * multiplier, rshift, round_mode)); the constant is in
    the multiplier (its sign included), `value` only records it (op must be MulConst)."""


# ---- float records added with Deconv (opcodes 48 and up) ----


@record(48, "bdc", f"dtype {_CONV} group:H {_RELU}")
class BdcDeconv(Record):
    """Transposed convolution as a conv of stride 1 over the zero-inserted input: in's rows and
    columns sh / sw apart with (pt, pb, pl, pr) zero rows/columns around them (this slice's), read
    by the flipped kernel with dilation (dh, dw). weight: local (group, oc/group, ic/group, kh*kw),
    output channel first; bias: local (1, oc, 1, 1) in the record's dtype (as lowered) or NO_ADDR."""


@record(49, "bdc", f"dtype mode {_IN} out_addr")
class BdcReduce(Record):
    """out (n, 1, h, w) = the sum, mean, max or min of in (n, c, h, w) along C (across lanes)."""


@record(50, "bdc", f"dtype mode {_IN} out_addr pn0 pn1 pc0 pc1 ph0 ph1 pw0 pw1 value")
class BdcPad(Record):
    """out = in with (before, after) elements added along N, C, H and W: `value` (constant) or
    copies of the nearest element (edge); out is (n + pn0 + pn1, c + pc0 + pc1, ...)."""


@record(51, "bdc", f"dtype mode coord nearest {_IN} out_addr oh ow ih0 oh0 full_ih full_oh scale_h scale_w")
class BdcInterp(Record):
    """Resize of a slice: output rows oh0 .. oh0 + oh - 1 of a (full_ih -> full_oh) resize, all
    ow columns of (w -> ow); in holds input rows ih0 .. ih0 + h - 1. Nearest copies the row/column
    `interp_sources` names; linear blends rows (then columns) i0 and i1 as i0 * (1 - f) + i1 * f."""


@record(52, "bdc", f"dtype {_IN} weight_addr bias_addr out_addr groups eps")
class BdcGroupNorm(Record):
    """out = (in - mean) / sqrt(var + eps) * weight + bias, mean and (biased) var of each n's group
    of c / groups channels over all their h x w elements; weight and bias local (1, c, 1, 1) in the
    record's dtype, or NO_ADDR. InstanceNorm is groups == c. The reduction crosses lanes."""


# ---- INT8 forms added later (opcodes 53-59): Deconv, Softmax, per-column MatMul and asymmetric
# INT8. A zero point (`*_zp`) is the stored value of 0.0: an operand is read as (stored - zp), the
# result is sat(... + out_zp) in `out_dtype`, int8 [-128, 127] or uint8 [0, 255]; symmetric INT8
# keeps opcodes 40-47 ----


@record(53, "bdc", f"round_mode {_ZP}")
class BdcDeconvQ(BdcDeconv):
    """INT8 Deconv: BdcDeconv's conv over the zero-inserted (in - in_zp) (inserted zeros and borders
    are 0.0) with the int8 filter, exact; `bias_addr` the merged int32 tile (1, oc, 1, 3) of (bias,
    multiplier, rshift) per output channel; out = sat(shift_round(acc * m, rshift, round_mode) +
    out_zp) in out_dtype, then the fused relu."""


@record(54, "bdc", f"dtype {_IN} out_addr table_addr out_dtype out_zp out_scale")
class BdcSoftmaxQ(Record):
    """INT8 Softmax along C: d = max over C of in - in (0..255; an input zero point cancels), e =
    table[d], S = sum of e over C (int64, exact), out = sat(round_half_away((e / S) / out_scale) +
    out_zp) in out_dtype, both divisions in float64. table: local int32 (1, min(c, lanes), 1, 256),
    one copy per lane (channel k reads lane k % lanes's), loaded by one GDMA with channel stride 0."""


@record(55, "bdc", "right_dtype quant_addr left_zp right_zp out_zp out_dtype")
class BdcMatMulQZ(BdcMatMulQ):
    """INT8 MatMul with per-column requantization or zero points: acc = (left - left_zp) @ (right -
    right_zp) + bias (right stored as right_dtype); `quant_addr` a local int32 (1, n_out, 1, 2) of
    (multiplier, rshift) per output column, or NO_ADDR for the scalar `multiplier`, `rshift`;
    out = sat(shift_round(acc * m, rshift, round_mode) + out_zp) in out_dtype, then the fused relu."""


@record(56, "bdc", _ZP)
class BdcConvQZ(BdcConvQ):
    """Asymmetric INT8 conv: BdcConvQ on (in - in_zp) (pads are 0.0, i.e. in_zp stored), the int8
    filter; out = sat(... + out_zp) in out_dtype."""


@record(57, "bdc", _ZP)
class BdcPoolQZ(BdcPoolQ):
    """Asymmetric INT8 average pool: BdcPoolQ on (in - in_zp); out = sat(... + out_zp) in out_dtype."""


@record(58, "bdc", "b_dtype out_dtype a_zp b_zp out_zp")
class BdcBinaryQZ(BdcBinaryQ):
    """Asymmetric INT8 Add, Sub, Mul: BdcBinaryQ on a - a_zp and b - b_zp (b stored as b_dtype);
    out = sat(shift_round(acc, rshift, round_mode) + out_zp) in out_dtype (Mul: acc x m0)."""


@record(59, "bdc", f"dtype out_dtype {_IN} out_addr in_zp out_zp {_REQUANT} {_RELU} scale")
class BdcRequantZ(Record):
    """A change of grid with zero points, by the dtypes: integer -> integer (RequantInt, MulConst):
    sat(shift_round((in - in_zp) * multiplier, rshift, round_mode) + out_zp), then the fused relu;
    float -> integer (quantize): sat(round_half_away(in / scale) + out_zp), the division in float64;
    integer -> float (dequantize): float32((in - in_zp) * scale), rounded once to out_dtype."""


# ---- records for the Tpu ops the lowering produced without records (issue 11; opcodes 60-66) ----

# BdcActiveX's functions; `coeff0`/`coeff1` are ELU's alpha, HSIGMOID's (alpha, beta), SWISH's beta.
ACTIVE_EXTRA_MODES = {"SILU": 0, "HSWISH": 1, "HSIGMOID": 2, "ELU": 3, "SWISH": 4, "MISH": 5, "SOFT_PLUS": 6,
                      "SOFT_SIGN": 7, "LN": 8, "RSQRT": 9, "ERF": 10, "TGELU": 11, "QGELU": 12, "SIN": 13, "COS": 14,
                      "TAN": 15, "SINH": 16, "COSH": 17, "ARCCOS": 18, "ARCTANH": 19, "SIGN": 20, "CEIL": 21,
                      "FLOOR": 22, "ROUND": 23, "ARCSIN": 24, "ARCSINH": 25, "ARCCOSH": 26}
REFLECT_MODES = {"reflect": 0, "symmetric": 1, "wrap": 2}  # BdcPadReflect's: pads read from the input (reflect_index)


@record(60, "bdc", f"dtype {_IN} scale_addr bias_addr out_addr {_RELU}")
class BdcScale(Record):
    """out = in * scale[c] + bias[c], then the fused relu; scale and bias local (1, c, 1, 1) in the
    record's dtype (tpu.Scale: a BatchNorm that no conv absorbed)."""


@record(61, "bdc", f"dtype mode {_IN} out_addr coeff0 coeff1")
class BdcActiveX(Record):
    """out = f(in), f by `mode` (ACTIVE_EXTRA_MODES), computed in float32; coeff0/coeff1 as named there."""


@record(62, "bdc", f"dtype {_IN} gamma_addr out_addr eps")
class BdcRMSNorm(Record):
    """out = in / sqrt(mean(in^2) + eps) * gamma along C (across lanes); gamma local (1, c, 1, 1) in
    the record's dtype, or NO_ADDR."""


@record(63, "bdc", f"dtype mode {_IN} n0 h0 full_n full_h out_addr on oh on0 oh0 pn0 pc0 pc1 ph0 pw0 pw1")
class BdcPadReflect(Record):
    """Reflect/symmetric/wrap padding of a slice: out (on, c + pc0 + pc1, oh, w + pw0 + pw1) holds output
    elements on0.. and rows oh0.. of the whole padded tensor (pn0, ph0 pads before along N and H);
    in holds input elements n0.. and rows h0.. of the (full_n, c, full_h, w) input. Each output index o of a dim reads input index
    reflect_index(o - before, size) (`reflect_index`), which must lie in the slice."""


@record(64, "gdma", "src idx dst index_dtype outer axis:I inner count esize")
class GdmaGather(Record):
    """Global gather with indices read from global memory: x viewed as (outer, axis, inner) elements
    of `esize` bytes at `src`, `count` indices (dtype `index_dtype`, integer values, negative ones
    count from the end) at `idx`; dst (outer, count, inner) = x[:, idx, :]. An index outside
    [-axis, axis) is a fault naming it."""


# The element-wise functions of BdcBinaryX (a op b) and BdcConstX (in op value; reverse: value op in).
# Comparisons give 1 or 0 (And, Xor: of a != 0 and b != 0; Not: a == 0, b unused); Pow is a ** b;
# Mod is C's fmod (sign of a), Remainder floors (sign of b); PRelu is a where a >= 0, else a * b;
# Clip (BdcConstX only, the last) clamps to [value, value2].
ELEMENTWISE_X_OPS = {"Div": 0, "Pow": 1, "Mod": 2, "Remainder": 3, "Equal": 4, "Greater": 5, "GreaterOrEqual": 6,
                     "Less": 7, "LessOrEqual": 8, "NotEqual": 9, "And": 10, "Not": 11, "Xor": 12, "PRelu": 13,
                     "Clip": 14}


@record(65, "bdc", f"dtype op reverse {_BINARY_IO} {_RELU}")
class BdcBinaryX(Record):
    """out = a (op) b element-wise (reverse: b (op) a), op from ELEMENTWISE_X_OPS but Clip; a dim of
    size 1 in a or b broadcasts; then the fused relu."""


@record(66, "bdc", f"dtype op reverse {_IN} out_addr value value2 {_RELU}")
class BdcConstX(Record):
    """out = in (op) value (reverse: value (op) in), op from ELEMENTWISE_X_OPS; Clip: clamp(in,
    value, value2); then the fused relu."""


# ---- INT8 AddConst / SubConst (issue 10/11 regression; opcode 67, 68-69 reserved for them) ----


@record(67, "bdc", f"dtype out_dtype op reverse {_IN} out_addr in_zp out_zp {_REQUANT} const {_RELU}")
class BdcConstSumQ(Record):
    """INT8 AddConst / SubConst (op: CONST_OPS code), symmetric (zero points 0, out_dtype i8) or
    asymmetric: p = (in - in_zp) * multiplier; acc = p + const (AddConst), p - const (SubConst),
    const - p (SubConst reverse); out = sat(shift_round(acc, rshift, round_mode) + out_zp) to out_dtype,
    then the fused relu on stored values. `const` is the constant in the result's units shifted left
    by rshift (an int64: |const| < 2^53), so the sum is rounded once (docs/quantization.md)."""


# ---- issue 11, second round (opcodes 70-79) ----


@record(70, "bdc", f"dtype cond_addr cn cc ch cw {_BINARY_IO} a_value b_value")
class BdcSelect(Record):
    """out = a where cond != 0 (NaN included), else b, element-wise (tpu.Where; tpu.MaskedFill with
    the constant as a or b); a dim of size 1 in cond, a or b broadcasts; a_addr / b_addr NO_ADDR:
    that branch is a_value / b_value, rounded to the dtype."""


# ---- issue 11, third round: index ops (opcodes 71-74; 75 and 90-94 kept free) ----


@record(71, "bdc", f"dtype mode select_last {_IN} idx_addr idx_dtype val_addr")
class BdcArg(Record):
    """ArgMax / ArgMin (`mode`, ARG_MODES) of in (n, c, h, w) along C (across lanes): idx (n, 1, h, w)
    in idx_dtype holds the index of the first (select_last: the last) extreme element, a NaN counting
    as the extreme of both; val_addr (NO_ADDR: absent) the element itself, in the record's dtype."""


@record(72, "bdc", f"dtype largest {_IN} k:I val_addr idx_addr idx_dtype")
class BdcTopK(Record):
    """The k largest (largest 0: smallest) elements of in (n, c, h, w) along C, in that order, ties
    by the lower index first and NaN after every number: values (n, k, h, w) in the record's dtype
    at val_addr, their indices in idx_dtype at idx_addr."""


@record(73, "bdc", f"dtype {_IN} out_addr")
class BdcCumSum(Record):
    """out[:, i] = out[:, i - 1] + in[:, i] along C (across lanes), out[:, 0] = in[:, 0]; each
    partial sum is rounded to the record's dtype before the next element is added."""


@record(74, "bdc", f"dtype upper {_IN} out_addr diagonal row0")
class BdcTrilu(Record):
    """out = in where row i, column j of each (h, w) plane keep j - i >= diagonal (upper) or
    j - i <= diagonal (lower), else 0; i counts from row0, the slice's first row in the tensor."""


def reflect_index(i: np.ndarray, size: int, mode: int) -> np.ndarray:
    """The input index an out-of-range index i of a padded dim of `size` reads (i in range: itself).
    reflect (mode 0): mirrored about the edge elements, period 2 (size - 1); symmetric (1): the
    edge elements repeated, period 2 size; wrap (2): circular, period size (numpy's and ONNX's
    definitions, any pad width)."""
    i = np.asarray(i, np.int64)
    if mode == REFLECT_MODES["wrap"]:
        return np.mod(i, size)
    if mode == REFLECT_MODES["reflect"]:
        if size == 1:
            return np.zeros_like(i)
        j = np.mod(i, 2 * (size - 1))
        return np.where(j >= size, 2 * (size - 1) - j, j)
    j = np.mod(i, 2 * size)
    return np.where(j >= size, 2 * size - 1 - j, j)


def interp_sources(in_len: int, out_len: int, scale: float, mode: int, coord: int,
                   nearest: int) -> tuple[list[int], list[int], list[float]]:
    """Per output index along one axis of BdcInterp: input indices i0, i1 and the weight f of i1
    (nearest: i0 == i1, f 0). The coordinate is ONNX's (tpudsl/dialects/geometry/resize.py); an
    axis kept at its size with scale +-1 is the identity; scale <= 0 means out_len / in_len."""
    if out_len == in_len and scale in (-1.0, 1.0):
        same = list(range(out_len))
        return same, same, [0.0] * out_len
    coords = resize.source_coords(in_len, out_len, scale if scale > 0 else out_len / in_len,
                                  _name(COORD_MODES, coord))
    if mode == INTERP_MODES["nearest"]:
        i0 = resize.nearest_indices(coords, in_len, _name(NEAREST_MODES, nearest))
        return i0.tolist(), i0.tolist(), [0.0] * out_len
    i0, i1, f = resize.linear_sources(coords, in_len)
    return i0.tolist(), i1.tolist(), f.tolist()


# ---- issue 11, third round (opcodes 76-81): gathers and scatters in global memory, LRN, max pool with its mask ----
# The four index records read their indices (integer values in any record dtype) from global memory,
# bounds-check them all before writing (negative ones count from the end, as ONNX says), and write
# their whole result: the scatters copy `src` to `dst` and then write the updates in index order,
# so of duplicate indices the last update stays (the interpreter's numpy assignment). Records 83/84
# are the scatters that combine instead (a reduction).


@record(76, "gdma", f"src idx dst index_dtype esize {_ELEMENTS}")
class GdmaGatherElements(Record):
    """dst[p] = src[p with dim `axis` replaced by idx[p]] over the 4-D index shape (in, ic, ih, iw);
    src is the contiguous (xn, xc, xh, xw), each index dim (but `axis`) at most src's."""


@record(77, "gdma", f"src idx dst index_dtype esize batch {_ND}")
class GdmaGatherND(Record):
    """src as (batch, d0, .., d{k-1}, slab) elements (unused d's 1), idx (batch, count, k),
    dst (batch, count, slab): dst[b, p] = src[b, idx[b, p, 0], .., idx[b, p, k-1]]."""


@record(78, "gdma", f"src idx upd dst index_dtype esize {_ELEMENTS}")
class GdmaScatterElements(Record):
    """dst = src (the contiguous (xn, xc, xh, xw)), then for each index position p in order
    dst[p with dim `axis` replaced by idx[p]] = upd[p]; idx and upd are (in, ic, ih, iw)."""


@record(79, "gdma", f"src idx upd dst index_dtype esize {_ND}")
class GdmaScatterND(Record):
    """dst = src as (d0, .., d{k-1}, slab) (unused d's 1), then for p in order
    dst[idx[p, 0], .., idx[p, k-1]] = upd[p]; idx (count, k), upd (count, slab)."""


# Records 83/84: record 78's (79's) fields plus `reduction` (dialects.top.SCATTER_REDUCTIONS, TPU-MLIR's
# codes: 1 add, 3 max, 4 min, 5 mul) and the float `dtype` of the data (esize bytes): each update in
# index order is combined with the element (slab) it lands on, the result rounded to dtype before
# the next (duplicates combine one at a time, as ONNX orders them).


@record(83, "gdma", "reduction:B dtype")
class GdmaScatterElementsReduce(GdmaScatterElements):
    """Record 78 where t = dst[...] becomes combine(t, upd[p]) instead of upd[p]."""


@record(84, "gdma", "reduction:B dtype")
class GdmaScatterNDReduce(GdmaScatterND):
    """Record 79 where each slab t = dst[idx[p, ..]] becomes combine(t, upd[p]) instead of upd[p]."""


@record(80, "bdc", f"dtype {_IN} out_addr size alpha beta:d bias")
class BdcLRN(Record):
    """ONNX LRN along C (across lanes) in float32 steps, the Tpu interpreter's order: s = the sum,
    window position by position, of the squares of channels c - (size-1)//2 .. c + size//2 inside
    the tensor; out = in / (bias + (alpha / size) s) ** beta; f16/bf16 operands widened, the result
    rounded once."""


@record(81, "bdc", f"dtype in_addr n c ih iw out_addr mask_addr on oc oh ow {_KERNEL} {_PADS} ih0")
class BdcPoolMask(Record):
    """Max pool (`BdcPool`'s window, pads never win) and its mask, an f32 tile of the output's shape:
    the row-major index (row x iw + column; W is whole) in the tensor's (n, c) plane of the first
    maximum in row-major window order; `ih0` is the tensor row of the slice's first input row."""


def _name(table: dict[str, int], code: int) -> str:
    names = [k for k, v in table.items() if v == code]
    if not names:
        raise TpudslError(f"BdcInterp: unknown mode code {code}")
    return names[0]


# ---- opcode 82: weight-only MatMul (tpu.A16MatMul, W8F16/W8BF16) ----


@record(82, "bdc", "right_dtype scale_addr zp_addr:I groups weight_bits:B")
class BdcMatMulA16(BdcMatMul):
    """BdcMatMul (batch 1) whose right side is stored as 8-bit integers (right_dtype i8 or u8), each
    minus its zero point times its scale, rounded to the dtype, before the product: `scale_addr` a
    local (1, n_out, 1, groups) in the record's dtype, `zp_addr` a local u8 one of the same shape or
    NO_ADDR (zero); `groups` runs of k / groups consecutive rows of each column (1: per column).
    `weight_bits` 4: the right side is (1, k / 2, 1, n_out) u8, two rows per byte (row 2i the low
    nibble, 2i + 1 the high one). Bias f32 as BdcMatMul's."""


# ---- opcodes 85-89: per-channel requantization (issue 10's RequantIntAxis) ----


@record(85, "bdc", f"dtype out_dtype {_IN} out_addr quant_addr in_zp round_mode")
class BdcRequantAxis(Record):
    """tpu.RequantIntAxis along C: channel c reads row c of `quant_addr`, a local int32 (1, c, 1, 3)
    of (multiplier, -rshift, zero point); out = sat(shift_round((in - in_zp) * m, rshift, round_mode)
    + zp) in out_dtype. `dtype`: the input's, i32 (a Deconv's sums) or i8/u8."""


# ---- opcode 86: 4:2:0 YUV frames to RGB pixels in global memory (tpu.Yuv2rgbFormula) ----


@record(86, "gdma", "src dst batch h w src_format dst_format formula round_mode")
class GdmaYuv2rgb(Record):
    """`batch` uint8 frames [h * 3 / 2, w] at src (Y rows, then the chroma of each 2 x 2 block: planes U, V
    (src_format 0) or V, U (1), or pairs U, V (2) or V, U (3)) to uint8 planes [3, h, w] at dst, R, G, B
    (dst_format 4) or B, G, R (5): BT.601 `formula` (YUV_FORMULAS) clipped to 0..255 and rounded by
    `round_mode` (HalfAwayFromZero or HalfToEven); docs/bmodel.md has the coefficients."""


# ---- opcode 96: YOLO detection post-processing (`--add-postprocess`), global memory to global memory ----

YOLO_VERSIONS = {"yolov3": 0, "yolov5": 1, "yolov3_tiny": 2}
YOLO_HEADS = 3  # the record's head fields
# The heads a version reads (geometry/yolo.VERSION_HEADS: yolov3_tiny two; yolov3 and yolov5 1 to 3,
# their first heads): a head is absent when its grid fh x fw is 0 x 0. An absent head's fields (src, fh,
# fw) and anchors are 0, so records of 3 heads decode as they did before.
_YOLO_ANCHORS = " ".join(f"anchor{i}:d" for i in range(2 * 3 * YOLO_HEADS))  # (w, h) of 3 boxes a head


@record(96, "bdc", "src src1:Q src2:Q dst n fh0:I fw0:I fh1:I fw1:I fh2:I fw2:I classes:I net_h:I net_w:I "
                   f"keep_topk:I version:B nms:d obj:d {_YOLO_ANCHORS}")
class BdcYoloDetection(Record):
    """tpu.YoloDetection on one to three f32 heads in global memory (yolov3_tiny: two; an absent
    head's fields and anchors 0), widest first: head k is the contiguous
    (n, 3 (5 + classes), fh_k, fw_k) at src, src1, src2, its box b taking anchor pair 3 k + b; dst
    the contiguous f32 (n keep_topk, 7) rows (image, class, score, x, y, w, h), then zeros. The
    decode (`version`: YOLO_VERSIONS), thresholds and per-class NMS of docs/tpuc-opt.md
    ("--add-postprocess"), in float32, the products with the double fields in float64 rounded once."""


def yolo_head_shapes(r: BdcYoloDetection) -> list[tuple[int, int, int, int]]:
    """The (n, 3 (5 + classes), fh_k, fw_k) of record 96's three head fields (a 0 x 0 head: none)."""
    c = 3 * (5 + r.classes)
    return [(r.n, c, r.fh0, r.fw0), (r.n, c, r.fh1, r.fw1), (r.n, c, r.fh2, r.fw2)]


# ---- opcode 97: yolov8's detection post-processing (`--add-postprocess=type=yolov8|yolov11`) ----

@record(97, "bdc", "src dst n classes:I boxes:I keep_topk:I nms:d obj:d")
class BdcYolov8Detection(Record):
    """tpu.YoloDetection of version yolov8 on its one f32 head in global memory: the contiguous
    (n, 4 + classes, boxes) at src, rows x, y, w, h (input pixels) then the class scores; dst the
    contiguous f32 (n keep_topk, 7) rows (image, class, score, x, y, w, h), then zeros. Each box
    takes its best class and passes when that score is above obj; then the per-class NMS of record 96
    (docs/tpuc-opt.md, "--add-postprocess")."""


# ---- opcode 103: SSD's detection post-processing (`--add-postprocess=type=ssd`), global to global ----

@record(103, "bdc", "src conf_at:Q prior_at:Q dst n priors:I classes:I background:I top_k:I keep_top_k:I "
                    "nms:d conf_threshold:d")
class BdcDetectionOutput(Record):
    """tpu.DetectionOutput on contiguous f32 tensors in global memory: loc at src (n, priors, 4)
    offsets, conf at conf_at (n, priors, classes) scores, the priors at prior_at (2, priors, 4):
    corners, then variances; dst the f32 (n keep_top_k, 7) rows (image, label, score, xmin, ymin,
    xmax, ymax), then -1 rows. Per image and class but `background`: the priors scoring above
    conf_threshold, best first, their first top_k decoded (CENTER_SIZE by the variances) and
    suppressed greedily (IoU > nms); then each image's best keep_top_k, by label (docs/bmodel.md)."""


# ---- opcode 98: grid sampling in global memory (tpu.GridSampler) ----

GRID_SAMPLE_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}  # tpu.GridSampler's mode
GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}  # tpu.GridSampler's padding_mode


@record(98, "bdc", "src grid:Q dst n c h w oh ow mode padding:B align:B")
class BdcGridSample(Record):
    """f32 input (n, c, h, w) at src read at the f32 grid (n, oh, ow, 2) of (x, y) points at grid:
    f32 (n, c, oh, ow) at dst. A point maps to pixels by `align` (1: -1 and 1 are the corner pixels'
    centres, 0: their outer edges); one past those bounds is clamped into the input (`padding`
    border) or mirrored at them (reflection), or left (zeros: taps outside read 0); `mode`
    (GRID_SAMPLE_MODES) nearest reads the tap at the coordinate rounded half to even, bilinear
    weighs the 4 taps around it, bicubic the 4x4 around it by cubic convolution (A = -0.75); bicubic
    moves no point, each of its taps is clamped, mirrored or reads 0 instead (docs/bmodel.md)."""


@record(101, "bdc", "d:I od:I")
class BdcGridSample3D(BdcGridSample):
    """Record 98 on a volumetric input (n, c, d, h, w) read at the grid (n, od, oh, ow, 3) of
    (x, y, z) points: f32 (n, c, od, oh, ow) at dst. Each axis as record 98's; bilinear weighs the
    8 taps around a point (trilinear), nearest reads one; bicubic is not defined (a fault)."""


# ---- opcode 99: a recurrent layer (tpu.LSTM, tpu.GRU) in f32, global memory to global memory ----

RECURRENT_CELLS = {"tpu.LSTM": 0, "tpu.GRU": 1}  # `cell`
RECURRENT_GATES = {0: 4, 1: 3}  # `cell` -> gates a cell: LSTM 4 (i, o, f, c), GRU 3 (z, r, h)


@record(99, "bdc", "cell:B src w_at:Q r_at:Q b_at:Q h0_at:Q c0_at:Q dst yh_at:Q yc_at:Q seq:I batch n_in:I "
                   "hidden:I dirs:B batch_first:B linear_before_reset:B")
class BdcRecurrent(Record):
    """One LSTM (cell 0) or GRU (cell 1) layer of `dirs` directions, every tensor contiguous f32 in
    global memory, ONNX's layouts and gate orders (docs/dialect.md): input at src [seq, batch, n_in]
    ([batch, seq, n_in] with batch_first), filter w_at [dirs, G hidden, n_in], recurrence r_at
    [dirs, G hidden, hidden], bias b_at [dirs, 2 G hidden] (W's then R's), initial states h0_at,
    c0_at [dirs, batch, hidden] ([batch, dirs, hidden]); results Y at dst [seq, dirs, batch, hidden]
    ([batch, seq, dirs, hidden]), the final states yh_at, yc_at shaped as the initial ones. NO_ADDR:
    an absent bias or state (zeros) or an unwritten result; c0_at and yc_at are LSTM's only.
    Direction 1 runs from the last step to the first; GRU's `linear_before_reset` applies the reset
    gate after the recurrence's linear map (docs/bmodel.md has the equations)."""


@record(100, "gdma", "barrier:I")
class CoreSync(Record):
    """A barrier of the cores (docs/backend.md, "Several cores"): a core that reaches it waits until
    every core has reached its barrier of the same number; their records before it have then all
    completed. TPU-MLIR's msg send/wait on each engine's queue; one record stands for both engines
    (counted with GDMA's)."""


@record(102, "bdc", "p_at:Q")
class BdcRecurrentPeephole(BdcRecurrent):
    """Record 99's LSTM (cell 0) with ONNX's peepholes at p_at [dirs, 3 hidden] f32, order i, o, f:
    pre_i and pre_f add P_i * c and P_f * c (the previous cell state), pre_o adds P_o * c' (the new one)."""


RECORDS: dict[int, type[Record]] = {
    cls.OPCODE: cls for cls in (GdmaLoad, GdmaStore, GdmaCopy, BdcConv, BdcPool, BdcMatMul, BdcBinary, BdcConst,
                                BdcActive, BdcCast, BdcSoftmax, BdcLayerNorm, BdcUpsample,
                                BdcConvQ, BdcPoolQ, BdcMatMulQ, BdcBinaryQ, BdcLut, BdcRequant, BdcQuantCast, BdcConstQ,
                                BdcDeconv, BdcReduce, BdcPad, BdcInterp, BdcGroupNorm,
                                BdcDeconvQ, BdcSoftmaxQ, BdcMatMulQZ, BdcConvQZ, BdcPoolQZ, BdcBinaryQZ, BdcRequantZ,
                                BdcScale, BdcActiveX, BdcRMSNorm, BdcPadReflect, GdmaGather, BdcBinaryX, BdcConstX,
                                BdcConstSumQ, BdcSelect, BdcArg, BdcTopK, BdcCumSum, BdcTrilu, GdmaGatherElements,
                                GdmaGatherND, GdmaScatterElements, GdmaScatterND, GdmaScatterElementsReduce,
                                GdmaScatterNDReduce, BdcLRN, BdcPoolMask,
                                BdcMatMulA16, BdcRequantAxis, GdmaYuv2rgb, BdcYoloDetection, BdcYolov8Detection,
                                BdcGridSample, BdcGridSample3D, BdcRecurrent, CoreSync, BdcRecurrentPeephole,
                                BdcDetectionOutput, BdcPoolCeil)
}
_STRUCTS = {opcode: struct.Struct("<B" + cls.FORMAT) for opcode, cls in RECORDS.items()}
for _cls in RECORDS.values():  # a format that does not match the fields is a bug here
    assert len(struct.Struct("<" + _cls.FORMAT).unpack(bytes(struct.calcsize("<" + _cls.FORMAT)))) == len(fields(_cls))


def encode(records: list[Record]) -> bytes:
    return b"".join(r.encode() for r in records)


def decode(data: bytes) -> list[Record]:
    """The records of a command stream; TpudslError at an unknown opcode or a truncated record."""
    records, offset = [], 0
    while offset < len(data):
        opcode = data[offset]
        if opcode not in RECORDS:
            raise TpudslError(f"command stream: unknown opcode {opcode} at byte {offset} (instruction {len(records)})")
        s = _STRUCTS[opcode]
        if offset + s.size > len(data):
            raise TpudslError(f"command stream: instruction {len(records)} ({RECORDS[opcode].__name__}) is truncated")
        records.append(RECORDS[opcode](*s.unpack_from(data, offset)[1:]))
        offset += s.size
    return records


def cgroups(c: int, lanes: int) -> int:
    return -(-c // lanes)


def row_bytes(h: int, w: int, esize: int, eu_bytes: int) -> int:
    """Bytes of one channel's h x w plane in a lane, rounded up to the EU width."""
    return -(-(h * w * esize) // eu_bytes) * eu_bytes


def lane_bytes(n: int, c: int, h: int, w: int, esize: int, lanes: int, eu_bytes: int) -> int:
    """Bytes a local (n, c, h, w) tensor takes in each lane."""
    return n * cgroups(c, lanes) * row_bytes(h, w, esize, eu_bytes)


def check_counts(records: list[Record], gdma_count: int, bdc_count: int) -> None:
    """The decoded stream holds the header's instructions of each engine (the cmodel and the
    timeline trust the header's counts no further than this)."""
    gdma = sum(r.ENGINE == "gdma" for r in records)
    if (gdma, len(records) - gdma) != (gdma_count, bdc_count):
        raise TpudslError(f"bmodel: the command stream holds {gdma} GDMA and {len(records) - gdma} BDC "
                          f"instructions, the header says {gdma_count} and {bdc_count}")


def check_codes(records: list[Record]) -> None:
    """Every record's dtype, out_dtype and cell codes are known: the cost model and the schedule
    look up element sizes and a cell's gates by them (DTYPE_NAMES, RECURRENT_GATES), for records an
    engine never runs too (the cmodel's profile, model_runner --profile, the timeline)."""
    for i, r in enumerate(records):
        for key, known in (("dtype", DTYPE_NAMES), ("out_dtype", DTYPE_NAMES), ("cell", RECURRENT_GATES)):
            if getattr(r, key, 0) not in known:
                raise TpudslError(f"bmodel: instruction {i} ({type(r).__name__}) has unknown {key} code "
                                  f"{getattr(r, key)}")


def checked_records(commands: bytes, header: dict) -> list[Record]:
    """The records of a bmodel's command stream, checked against its header's counts and for known
    codes: what the cmodel runs and the timeline draws (the profile's cycles and the footprints
    need every record's element size, a cell's gates, before any runs)."""
    records = decode(commands)
    check_counts(records, header["gdma_count"], header["bdc_count"])
    check_codes(records)
    return records
