"""The quantized types of the INT8 lowering: one `QType` (scale, zero point, signedness) per
activation, from its calibrated range.

* symmetric: th = max(|lo|, |hi|), `!quant.uniform<i8:f32, th/127>` (zero point 0);
* asymmetric (`--convert-top-to-tpu="asymmetric=true"`): TPU-MLIR's getScaleAndZeroPoint on the
  range widened to hold 0 (`requant.asymmetric_params`): `!quant.uniform<u8:f32, s>` for a range
  with lo >= 0 (uint8, zero point 0), `!quant.uniform<i8:f32, s:zp>` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float32Type, TensorType
from xdsl.ir import SSAValue

from tpudsl.dialects.quant import UniformQuantizedType
from tpudsl.interp.requant import INT8_MAX, asymmetric_params


@dataclass(frozen=True)
class QType:
    scale: float
    zero_point: int = 0
    signed: bool = True

    @staticmethod
    def of_range(lo: float, hi: float, asymmetric: bool) -> QType:
        if asymmetric:
            return QType(*asymmetric_params(lo, hi))
        return QType(max(abs(lo), abs(hi)) / INT8_MAX)

    def element_type(self) -> UniformQuantizedType:
        return UniformQuantizedType.make("i8" if self.signed else "u8", Float32Type(), [self.scale], [self.zero_point])

    def tensor(self, shape: tuple[int, ...]) -> TensorType:
        return TensorType(self.element_type(), shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(np.int8 if self.signed else np.uint8)

    @property
    def storage_range(self) -> tuple[int, int]:
        info = np.iinfo(self.dtype)
        return int(info.min), int(info.max)


def qtype_of(value: SSAValue) -> QType | None:
    """The QType of a quantized activation (per tensor), or None for any other value."""
    t = value.type
    if isinstance(t, TensorType) and isinstance(t.element_type, UniformQuantizedType) and not t.element_type.is_per_axis:
        e = t.element_type
        return QType(e.scale, e.zero_point, e.is_signed)
    return None


def scale_of(value: SSAValue) -> float | None:
    """The scale of a quantized activation (per tensor), or None for any other value."""
    q = qtype_of(value)
    return None if q is None else q.scale
