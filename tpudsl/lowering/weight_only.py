"""Weight-only quantization: `--quantize W8F16 / W8BF16 / W4F16 / W4BF16` (TPU-MLIR's A16MatMul;
docs/quantization.md "Weight-only quantization").

In these modes every op lowers as in F16/BF16, except a `top.MatMul` whose right operand is a 2-D
`top.Weight` and whose other attributes are their defaults: it becomes `tpu.A16MatMul`, its weight
stored transposed ([N, K], `w_transpose = true`) as int8 with one scale per output channel (the
scale held in the activations' type, as TPU-MLIR's A16MatMulAdjust clones it). A MatMul of two
computed operands, or one with a transpose of its input or output, a fused relu or a batched
right side, lowers as F16/BF16 MatMul. With `q_group_size` > 0 (TPU-MLIR's per-group form) the
weight is uint8 with a zero point and a scale per group of q_group_size consecutive K of each
output channel (`q_symmetric`: zero point 128). W4: 4-bit integers with zero points (per channel
asymmetric, or per group), two per byte along K.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from tpudsl.dialects.opdef import SPECS, AttrView, create, is_none, loc_name, operand_shape
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.interp.requant import round_half_away_array

# model_deploy's weight-only modes -> the type of the activations (and of every other op).
WEIGHT_ONLY_MODES = {"W8F16": "F16", "W8BF16": "BF16", "W4F16": "F16", "W4BF16": "BF16"}
# ... and the bits of each stored weight.
WEIGHT_BITS = {"W8F16": 8, "W8BF16": 8, "W4F16": 4, "W4BF16": 4}
# The Top op each mode lowers to A16MatMul (the coverage test walks this table too).
A16_LOWERINGS = {"top.MatMul": "tpu.A16MatMul"}


def a16_applies(op: Operation) -> bool:
    """A MatMul A16MatMul stands for: a 2-D weight on the right, every attribute but
    right_transpose at its default (the A16 kernel models no other)."""
    right = op.operands[1]
    if right.owner.name != "top.Weight" or len(operand_shape(right) or ()) != 2:  # type: ignore[union-attr]
        return False
    spec = SPECS[op.name]
    a = AttrView(op.attributes, spec)
    return all(a[key] == attr.default for key, attr in spec.attrs.items() if key != "right_transpose")


def round_half_away(x: np.ndarray) -> np.ndarray:
    """C's std::round (TPU-MLIR's weightQuantization): halves away from zero, in float64."""
    return round_half_away_array(np.asarray(x, np.float64))


def weight_sign(w: np.ndarray) -> bool:
    """TPU-MLIR's `sign = !(global_min > 0)`: signed integers unless every weight is positive."""
    return not bool(w.size and w.min() > 0)


def quantize_per_channel(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """TPU-MLIR's computePerChannelParam and weightQuantization for 8 bits, zero point 0, on the
    float32 weight [N, K]: sign = not (min > 0); scale[n] = max|w[n]| / 127 (255 when unsigned),
    the division in double stored as float; q = std::round(w / scale) in float32, saturated.
    A channel of zeros (scale 0, where TPU-MLIR divides by zero) stores zeros with scale 0.
    Returns (q as int8 or uint8, scale [N, 1] float32, sign)."""
    w = np.asarray(w, np.float32)
    sign = weight_sign(w)
    qmax = 127 if sign else 255
    wmax = np.abs(w).max(axis=1, keepdims=True, initial=0.0)
    scale = (wmax.astype(np.float64) / qmax).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = w / scale  # float32, as TPU-MLIR's float division
    q = np.where(scale == 0, 0.0, round_half_away(ratio))
    q = np.clip(q, -128 if sign else 0, qmax).astype(np.int8 if sign else np.uint8)
    return q, scale, sign


def quantize_per_group(w: np.ndarray, size: int, symmetric: bool, bits: int = 8
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TPU-MLIR's computePerGroupParam and weightQuantization on the float32 weight [N, K], groups of
    `size` consecutive K, qmax = 2^bits - 1 (255, or 15): symmetric: scale = 2 max|w| / qmax, zero
    point (qmax + 1) / 2; asymmetric: scale = max(max - min, 1e-5) / qmax, zero point
    clamp(-std::round(min / scale), 0, qmax); q = std::round(w / scale) + zero point saturated to
    0..qmax (a symmetric group's largest positive value lands on qmax + 1, saturated, as TPU-MLIR's).
    4 bits per channel (computePerChannelParam) is the asymmetric form with size K. A symmetric
    group of zeros stores its zero point with scale 0. Returns (q uint8 [N, K], one value each,
    scale [N, G] float32, zero point [N, G] uint8)."""
    n, k = w.shape
    qmax = 2**bits - 1
    g = np.asarray(w, np.float32).reshape(n, k // size, size)
    wmax, wmin = g.max(axis=2, initial=-np.inf), g.min(axis=2, initial=np.inf)
    if symmetric:  # float arithmetic, as TPU-MLIR's (2 * |abs_max| / max_int, all float)
        scale = (np.float32(2) * np.abs(g).max(axis=2, initial=0.0)) / np.float32(qmax)
        zp = np.full(scale.shape, (qmax + 1) / 2)
    else:
        scale = np.maximum(wmax - wmin, np.float32(1e-5)) / np.float32(qmax)
        zp = np.clip(-round_half_away(wmin / scale), 0, qmax)
    scale = scale.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = g / scale[..., None]
    q = np.where(scale[..., None] == 0, 0.0, round_half_away(ratio)) + zp[..., None]
    return np.clip(q, 0, qmax).astype(np.uint8).reshape(n, k), scale, zp.astype(np.uint8)


def packed(q: np.ndarray) -> np.ndarray:
    """4-bit values [N, K] (K even) two per byte, [N, K / 2]: even K in the low nibble (TPU-MLIR's)."""
    return (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)


@dataclass
class A16Lowering:
    """One run's A16 rule: each weight quantized once, shared by every MatMul that reads it in the
    same layout. `q_group_size` 0: per output channel (8 bits: int8, or uint8 when no weight is
    <= 0; 4 bits: asymmetric with zero points); else per group (with zero points). `bits` 8 or 4."""

    q_group_size: int = 0
    q_symmetric: bool = False
    bits: int = 8
    quantized: dict[tuple[str, str, bool], tuple[SSAValue, SSAValue, SSAValue | None, bool]] = field(
        default_factory=dict)

    def __call__(self, op: Operation, state) -> bool:
        """Lower `op` to tpu.A16MatMul in state.mode (F16 or BF16); False when it does not apply."""
        if not a16_applies(op):
            return False
        mode = state.mode_of(op)
        weight, scale, zp, sign = self._weight(op, state, mode)
        bias = op.operands[2] if len(op.operands) > 2 else None
        if bias is None or is_none(bias):
            bias = state.none_value(op)
        elif bias.owner.name == "top.Weight":  # type: ignore[union-attr]
            bias = state.weight_in(bias, "F32", op)  # f32, as MatMul's: the chip accumulates in f32
        else:
            bias = state.value_in(bias, "F32")
        x = state.value_in(op.operands[0], mode)
        result = TensorType(x.type.element_type, operand_shape(op.results[0]))  # the mode's f16/bf16
        operands = [x, weight, scale, state.none_value(op) if zp is None else zp, bias]
        attrs = {"w_transpose": True, "sign": sign, "weight_bits": self.bits, "q_group_size": self.q_group_size or None}
        Rewriter.replace_op(op, create("tpu.A16MatMul", operands, [result], attrs=attrs, loc=op.location))
        return True

    def _weight(self, op: Operation, state, mode: str) -> tuple[SSAValue, SSAValue, SSAValue | None, bool]:
        """The stored integers, the scales in `mode`'s type, the zero points (None per channel), sign."""
        owner = op.operands[1].owner
        name = loc_name(owner)  # type: ignore[arg-type]
        transposed = AttrView(op.attributes, SPECS[op.name])["right_transpose"]
        key = (name, mode, transposed)  # a weight read as [K, N] and as [N, K] is two weights
        if key not in self.quantized:
            w = np.asarray(state.top.weight_of(owner), np.float32)
            if not transposed:
                w = w.T  # [K, N] -> [N, K]: one row per output channel
            sign = weight_sign(w)  # TPU-MLIR sets it per group too (where the integers are uint8 anyway)
            zp = None
            if self.q_group_size and w.shape[1] % self.q_group_size:
                raise TpudslError(f"{loc_name(op)}: q_group_size={self.q_group_size} does not divide K = "
                                  f"{w.shape[1]} of weight '{name}' (weight-only quantization)")
            if self.bits == 4 and w.shape[1] % 2:
                raise TpudslError(f"{loc_name(op)}: 4-bit weights are stored two per byte along K: K = "
                                  f"{w.shape[1]} of weight '{name}' is odd")
            if self.q_group_size or self.bits == 4:  # uint8 (or uint4) with zero points
                size = self.q_group_size or w.shape[1]  # 4 bits per channel: one asymmetric group
                q, scale, zps = quantize_per_group(w, size, self.q_symmetric, self.bits)
                zp = state.top.add_weight(f"{name}_zp", zps, before=op).results[0]
            else:
                q, scale, sign = quantize_per_channel(w)
            _check_scale(op, name, scale, mode)
            if self.bits == 4:
                q, suffix = packed(q), "uint4"
            else:
                suffix = "int8" if q.dtype == np.int8 else "uint8"
            stored = state.top.add_weight(f"{name}_{suffix}", np.ascontiguousarray(q), before=op)
            scale_value = state.new_weight_in(f"{name}_scale_{mode.lower()}", scale, mode, op)
            self.quantized[key] = (stored.results[0], scale_value, zp, sign)
        return self.quantized[key]


def _check_scale(op: Operation, name: str, scale: np.ndarray, mode: str) -> None:
    """A nonzero scale must stay nonzero and finite in the mode's type: else every weight of its
    channel would silently dequantize to 0 (or inf)."""
    if mode == "F16":
        held = scale.astype(np.float16).astype(np.float32)
    else:
        import ml_dtypes

        held = scale.astype(ml_dtypes.bfloat16).astype(np.float32)
    bad = np.argwhere((scale != 0) & ((held == 0) | ~np.isfinite(held)))
    if bad.size:
        c, group = (int(i) for i in bad[0])
        where = f"output channel {c}" + (f", group {group}" if scale.shape[1] > 1 else "")
        raise TpudslError(f"{loc_name(op)}: weight '{name}': the scale {float(scale[c, group]):g} of {where} is "
                          f"not representable in {mode} (weight-only quantization); keep this MatMul in F32 or "
                          f"{mode} with a qtable line")
