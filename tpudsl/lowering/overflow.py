"""Which ops must stay in F32 so that an F16/BF16 model does not overflow, from the Top values.

An op lowered to F16 reads its float operands in f16 (a cast at its input if the producer runs in
another type) and writes an f16 result. So it overflows when, in the F32 reference run, one of its
float operands or results has a magnitude beyond the type's largest finite value: such an op has to
run in F32, and nothing else does. This is the DragGAN case (seed article): the demodulation's
ReduceSum of squared modulated weights exceeds 65504, the Add of eps too, and Sqrt reads that sum;
its result, and the Div after it, are back in range and stay in F16.

`first_non_finite` names where the Tpu run actually went wrong: the first op (in program order)
whose result is inf/NaN where Top's is finite, although all its operands are finite.

Attention masks are the case known before any run: their fill value, finfo(float32).min, is beyond
f16 and bf16, and no int8 scale keeps it together with the scores. `mask_ops_kept_f32` names the ops
that compute or read such fills; `--convert-top-to-tpu` keeps them in F32 unless the qtable names them
(docs/quantization.md, "Attention masks").
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation

from tpudsl.dialects.opdef import SPECS, loc_name, result_names
from tpudsl.dialects.quant import CalibratedQuantizedType
from tpudsl.ir.module import TopModule

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


def first_non_finite(ops: list[Operation], tensors: Mapping[str, np.ndarray],
                     reference: Mapping[str, np.ndarray]) -> str | None:
    """The first op whose result is inf/NaN where the reference (Top's run) is finite, while no
    operand it reads is (-inf that Top computes too, GPT-2's two masks added, is no overflow)."""
    def finite(name: str) -> bool:
        array = tensors.get(name)
        if array is None or array.dtype.kind != "f":
            return True
        bad = ~np.isfinite(array.astype(np.float32))
        want = reference.get(name)
        if want is not None and want.shape == array.shape:
            bad &= np.isfinite(want)
        return not bad.any()

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


# |x| at least this at a Softmax's input is a moderate mask fill in INT8 (LLM-TPU's -1000 and -10000,
# TPU-MLIR's own -10000): one int8 step of such a range is >= 1, a factor e or more on a probability,
# so the scores added to the fill would be lost in the step
INT8_SOFTMAX_FILL = 127.0


def int8_mask_ops(ops: list[Operation], ranges: Mapping[str, tuple[float, float]]) -> list[str]:
    """Names of the Top ops (in order) that INT8 must keep in F32, from the calibration's ranges:
    those computing or reading a tensor that holds mask fill values (no int8 scale keeps its
    other values: |x| >= MASK_FILL anywhere, or >= INT8_SOFTMAX_FILL read by a Softmax), and the
    chain of one-operand ops from a model input to a mask they compute (the mask's Reshape and
    1 - mask: their int8 form reads 1 as the table's threshold, 1.0005, which times finfo.min
    overflows)."""
    softmax_inputs = {op.operands[0] for op in ops if op.name == "top.Softmax"}

    def filled(value) -> bool:  # ranges are keyed by tensor name: an op's result, not a block argument
        name = result_names(value.owner)[value.index] if isinstance(value.owner, Operation) else None
        lo, hi = ranges.get(name, (0.0, 0.0))
        return max(-lo, hi) >= (INT8_SOFTMAX_FILL if value in softmax_inputs else MASK_FILL)

    return _mask_ops(ops, filled, from_input=True)


def fill_rule(mode: str) -> str:
    """What the messages say a fill is in `mode` (model_deploy's and run_calibration's)."""
    rule = f"|x| >= {MASK_FILL:g}, such as finfo(float32).min"
    return rule + (f", or |x| >= {INT8_SOFTMAX_FILL:g} at a Softmax's input, such as LLM-TPU's -10000"
                   if mode == "INT8" else "")


def float_mask_ops(ops: list[Operation], weights: Mapping[str, np.ndarray]) -> list[str]:
    """Names of the Top ops (in order) that F16/BF16 keep in F32, found without running the model
    (finfo.min is beyond f16 and bf16 alike): the ops computing or reading a tensor that holds
    mask fill values. A tensor holds them when it is a weight with |x| >= MASK_FILL, the result of
    an op with such a constant operand attribute (CONSTANT_OPERANDS: `(1 - mask) * finfo.min`'s
    MulConst), or the result of an op that carries fills (CARRIES_FILLS, or the moved operands of
    an op that moves elements) from an operand that holds them. Any other op reading them
    (Softmax) is kept, its result is taken to hold none."""
    holding: set = set()
    for op in ops:
        if op.name == "top.Weight":
            data = weights.get(loc_name(op))
            if data is not None and _beyond(data, MASK_FILL):
                holding.add(op.results[0])
            continue
        constant = any(isinstance(a := op.attributes.get(name), FloatAttr) and abs(a.value.data) >= MASK_FILL
                       for name in CONSTANT_OPERANDS)
        carried = op.operands if op.name in CARRIES_FILLS else _moved(op)
        if constant or any(v in holding for v in carried):
            holding.update(op.results)
    return _mask_ops(ops, holding.__contains__, from_input=False)


# The attributes that stand for a constant operand (AddConst's, Where's branches, MaskedFill's), whose
# value the result can hold; a bound such as Clip's max (float32's largest: no clip) is none of them
CONSTANT_OPERANDS = ("const_val", "x_const_val", "y_const_val")
# Element-wise arithmetic whose result holds a fill where an operand does: a fill plus, minus,
# times, min or max a moderate number is still beyond any half type (ops that move elements,
# Reshape, Where's branches, are read from their spec's `moves`)
CARRIES_FILLS = ("top.Add", "top.Sub", "top.Mul", "top.Min", "top.Max", "top.AddConst", "top.SubConst",
                 "top.MulConst", "top.MinConst", "top.MaxConst")


def _moved(op: Operation) -> list:
    """The operands an op's spec says it moves into its results (`Moves.operands`; a variadic one whole)."""
    spec = SPECS.get(op.name)
    if spec is None or spec.moves is None:
        return []
    values = [getattr(op, name) for name in spec.moves.operands]
    return [x for v in values for x in (v if isinstance(v, list | tuple) else [v]) if x is not None]


def _mask_ops(ops: list[Operation], filled, from_input: bool) -> list[str]:
    """The ops computing or reading a value `filled` says holds fills; `from_input`: also the chain
    of one-operand ops from a model input to a mask they compute."""
    keep: set[Operation] = set()
    for op in ops:
        if op.name in _NOT_COMPUTED or not any(filled(v) for v in (*op.operands, *op.results)):
            continue
        keep.add(op)
        if not from_input or not any(filled(r) for r in op.results):
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


def mask_ops_kept_f32(top: TopModule, mode: str) -> list[str]:
    """The ops the lowering keeps in F32 in `mode` (the module's; a weight-only mode's activation
    type) because they compute or read attention-mask fill values: INT8 from the calibrated types'
    ranges (as run_calibration names them), F16/BF16 from the module's constants."""
    ops = list(top.main_func().body.block.ops)
    if mode == "INT8":
        ranges = {name: (r.type.element_type.min, r.type.element_type.max)
                  for op in ops for r, name in zip(op.results, result_names(op), strict=True)
                  if isinstance(getattr(r.type, "element_type", None), CalibratedQuantizedType)}
        return int8_mask_ops(ops, ranges)
    return float_mask_ops(ops, top.weights) if mode in LARGEST else []
