"""Which ops must stay in F32 so that an F16/BF16 model does not overflow, from the Top values.

An op lowered to F16 reads its float operands in f16 (a cast at its input if the producer runs in
another type) and writes an f16 result. So it overflows when, in the F32 reference run, one of its
float operands or results has a magnitude beyond the type's largest finite value: such an op has to
run in F32, and nothing else does. This is the DragGAN case (seed article): the demodulation's
ReduceSum of squared modulated weights exceeds 65504, the Add of eps too, and Sqrt reads that sum;
its result, and the Div after it, are back in range and stay in F16.

`first_non_finite` names where the Tpu run actually went wrong: the first op (in program order)
whose result is inf/NaN although all its operands are finite.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.ir import Operation

from tpudsl.dialects.opdef import loc_name

# bfloat16's largest finite value, (2 - 2^-7) 2^127, written out: importing ml_dtypes takes 0.5 s
LARGEST = {"F16": float(np.finfo(np.float16).max), "BF16": float.fromhex("0x1.fep127")}
_NOT_COMPUTED = ("top.Input", "top.Weight", "top.None")


def _beyond(array: np.ndarray | None, limit: float) -> bool:
    if array is None or array.dtype.kind != "f" or array.size == 0:
        return False
    return bool(np.nanmax(np.abs(array.astype(np.float32))) > limit)


def ops_needing_f32(ops: list[Operation], top_tensors: Mapping[str, np.ndarray], mode: str) -> list[str]:
    """Names of the Top ops (in order) that read or write a value beyond `mode`'s range."""
    limit = LARGEST[mode]
    names = []
    for op in ops:
        if op.name in _NOT_COMPUTED or not loc_name(op):
            continue
        values = [top_tensors.get(loc_name(v.owner)) for v in op.operands if isinstance(v.owner, Operation)]
        values.append(top_tensors.get(loc_name(op)))
        if any(_beyond(v, limit) for v in values):
            names.append(loc_name(op))
    return names


def first_non_finite(ops: list[Operation], tensors: Mapping[str, np.ndarray]) -> str | None:
    """The first op whose result is inf/NaN while every operand it reads is finite."""
    def finite(name: str) -> bool:
        array = tensors.get(name)
        return array is None or array.dtype.kind != "f" or bool(np.isfinite(array.astype(np.float32)).all())

    for op in ops:
        name = loc_name(op)
        if op.name in _NOT_COMPUTED or not name or finite(name):
            continue
        if all(finite(loc_name(v.owner)) for v in op.operands if isinstance(v.owner, Operation)):
            return name
    return None


# |x| at least this is an attention mask's fill value (finfo(float32).min, or -inf where two such
# masks add up), not a number the model computes with: TPU-MLIR's mask patterns use 1e10 and 3e30
MASK_FILL = 1e30


def int8_mask_ops(ops: list[Operation], ranges: Mapping[str, tuple[float, float]]) -> list[str]:
    """Names of the Top ops (in order) that INT8 must keep in F32, from the calibration's ranges:
    those computing or reading a tensor that holds mask fill values (no int8 scale keeps its
    other values), and the chain of one-operand ops from a model input to a mask they compute
    (the mask's Reshape and 1 - mask: their int8 form reads 1 as the table's threshold, 1.0005,
    which times finfo.min overflows to -inf)."""
    from tpudsl.interp.module_interpreter import result_names

    def filled(value) -> bool:  # ranges are keyed by tensor name: an op's result, not a block argument
        name = result_names(value.owner)[value.index] if isinstance(value.owner, Operation) else None
        lo, hi = ranges.get(name, (0.0, 0.0))
        return max(-lo, hi) >= MASK_FILL

    keep: set[Operation] = set()
    for op in ops:
        if op.name in _NOT_COMPUTED or not any(filled(v) for v in (*op.operands, *op.results)):
            continue
        keep.add(op)
        if not any(filled(r) for r in op.results):
            continue
        chain, at = [], op
        while len(computed := [v.owner for v in at.operands if isinstance(v.owner, Operation)
                               and v.owner.name not in ("top.Weight", "top.None")]) == 1:
            at = computed[0]
            if at.name == "top.Input":
                keep.update(chain)
                break
            chain.append(at)
    return [loc_name(op) for op in ops if op in keep]
