"""`--weight-reorder`: static tpu.Conv2D filters into the layout the backend's kernels read.

A filter that is a `top.Weight` becomes a new weight `<conv>_filter_reorderd` (TPU-MLIR's name)
in the layout of dialects/geometry/conv_filter.py: [1, oc, ceil((ic/g) / P), kh*kw*P], where P
(IC_PARALLEL) is 1 in F32 and for depthwise filters, and the chip's eu_bytes / 2 in F16 and BF16
(32 on bm1684x), as TPU-MLIR's BM1684X reorder. The bias keeps its [oc] f32 layout.

A filter computed by earlier ops is not touched: it exists only at run time, so nothing can be
baked; the backend reads it in the plain [oc, ic/g, kh, kw] layout, whose bytes are those of the
[1, oc, ic/g, kh*kw] reshape TPU-MLIR puts in front of a dynamic filter (docs/bmodel.md).
TPU-MLIR's separate layout for strides above 15 (kernel cells) is not ours: the backend's kernel
reads this one layout for every stride. Non-2-D kernels are errors naming the op, never left in a
layout the backend does not read.

INT8 (an int8 `!quant.uniform` filter): the filter keeps its plain layout (P = 1; TPU-MLIR packs 64
int8 channels, which only its kernels' speed needs), and the per-channel requantization is merged,
as TPU-MLIR's `coeff_merged`: a new int32 weight `<conv>_coeff_merged` [1, oc, 1, 3] holds
(bias or 0, multiplier, rshift) of each output channel and becomes the bias operand, so the
backend loads one whole tile (docs/backend.md). An INT8 tpu.Deconv's the same way (its filter keeps
the ONNX layout), and an INT8 tpu.MatMul with one (multiplier, rshift) per output column gets them
as its `multi` operand, a new int32 weight `<matmul>_multi` [1, n, 1, 2] (its bias stays).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType, ModuleOp, StringAttr, TensorType, i32
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tpudsl.backend.chips import chip_named
from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.geometry.conv_filter import reordered_shape
from tpudsl.dialects.opdef import AttrView, SPECS, loc_name
from tpudsl.dialects.quant import UniformQuantizedType
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, top_module_of


def reorder_filter(w: np.ndarray, ic_parallel: int) -> np.ndarray:
    """[oc, icg, kh, kw] -> [1, oc, ceil(icg / P), kh*kw*P]: reordered[0, o, b, k*P + p] = w[o, b*P + p, k]."""
    oc, icg, kh, kw = w.shape
    _, _, blocks, width = reordered_shape(oc, icg, kh * kw, ic_parallel)
    padded = np.zeros((oc, blocks * ic_parallel, kh * kw), w.dtype)
    padded[:, :icg] = w.reshape(oc, icg, kh * kw)
    by_block = padded.reshape(oc, blocks, ic_parallel, kh * kw).transpose(0, 1, 3, 2)
    return np.ascontiguousarray(by_block).reshape(1, oc, blocks, width)


def _error(op: Operation, message: str) -> TpudslError:
    return TpudslError(f"weight-reorder: {op.name} '{loc_name(op)}': {message}")


def _ic_parallel(op: Operation, element: Attribute, depthwise: bool, module: ModuleOp) -> int:
    """P of the filter of `op` (see the module docstring)."""
    if not isinstance(element, (Float32Type, Float16Type, BFloat16Type)):
        raise _error(op, f"a {element} filter has no reordered layout yet (float filters only)")
    if isinstance(element, Float32Type) or depthwise:
        return 1
    chip = module.attributes.get("module.chip")
    if not isinstance(chip, StringAttr):
        raise TpudslError("weight-reorder: module.chip is not set; run --processor-assign first")
    return chip_named(chip.data).eu_bytes // 2


def reorder_conv(op: Operation, top: TopModule) -> None:
    """Give the static filter of tpu.Conv2D `op` the reordered layout (no-op when it has it)."""
    filt = op.operands[1]
    weight = filt.owner
    a = AttrView(op.attributes, SPECS[op.name])
    kernel = list(a["kernel_shape"])
    x_type, w_type = op.operands[0].type, filt.type
    assert isinstance(x_type, TensorType) and isinstance(w_type, TensorType)
    if len(kernel) != 2 or len(w_type.get_shape()) != 4:
        raise _error(op, f"kernel_shape {kernel} is not 2-D; only 2-D filters are reordered")
    group, ic = a["group"], x_type.get_shape()[1]
    oc, icg = w_type.get_shape()[:2]
    if isinstance(w_type.element_type, UniformQuantizedType):
        merge_int8_coeffs(op, top)
        return
    if list(w_type.get_shape()) != [oc, ic // group, *kernel]:
        return  # already reordered (the shape rule accepts only the two layouts)
    depthwise = group > 1 and group == ic == oc
    ic_parallel = _ic_parallel(op, w_type.element_type, depthwise, top.module)
    new_shape = reordered_shape(oc, icg, kernel[0] * kernel[1], ic_parallel)
    if new_shape == tuple(w_type.get_shape()):
        return  # one kernel row of one channel: the layouts coincide
    data = reorder_filter(np.asarray(top.weight_of(weight)), ic_parallel)  # type: ignore[arg-type]
    new = top.add_weight(f"{loc_name(op)}_filter_reorderd", data, before=op)
    # BF16 filters are stored as uint16 bits (docs/lowering.md): the type says what they are.
    value = Rewriter.replace_value_with_new_type(new.results[0], TensorType(w_type.element_type, new_shape))
    op.operands[1] = value
    if not filt.uses:
        Rewriter.erase_op(weight)  # type: ignore[arg-type]


def merge_int8_coeffs(op: Operation, top: TopModule) -> None:
    """An INT8 conv's (or deconv's) int32 bias (or zeros), multipliers and shifts as one [1, oc, 1, 3]
    int32 weight in its bias operand, `coeff_merged` set (no-op when they are merged already)."""
    a = AttrView(op.attributes, SPECS[op.name])
    if a["coeff_merged"]:
        return
    oc = op.results[0].type.get_shape()[1]  # type: ignore[attr-defined]
    if a["quant_mode"] != "MultiplierShift" or len(a["multiplier"] or []) != oc or len(a["rshift"] or []) != oc:
        raise _error(op, f"INT8 requantization {a['quant_mode']} with {len(a['multiplier'] or [])} multipliers for "
                         f"{oc} channels cannot be merged (per-channel MultiplierShift only)")
    if len(op.operands) < 3:
        raise _error(op, "has no bias operand to hold the merged coefficients")
    bias = op.operands[2]
    merged = np.zeros((1, oc, 1, 3), np.int64)
    if isinstance(bias.type, TensorType):
        if not isinstance(bias.type.element_type, IntegerType) or bias.owner.name != "top.Weight":  # type: ignore[union-attr]
            raise _error(op, f"an INT8 conv's bias must be an int32 weight, not {bias.type}")
        merged[0, :, 0, 0] = np.asarray(top.weight_of(bias.owner)).ravel()  # type: ignore[arg-type]
    merged[0, :, 0, 1], merged[0, :, 0, 2] = a["multiplier"], a["rshift"]
    new = top.add_weight(f"{loc_name(op)}_coeff_merged", merged.astype(np.int32), before=op)
    value = Rewriter.replace_value_with_new_type(new.results[0], TensorType(i32, (1, oc, 1, 3)))
    old = bias.owner
    op.operands[2] = value
    op.attributes["coeff_merged"] = to_attr("bool", True)
    if old.name == "top.Weight" and not bias.uses:  # type: ignore[union-attr]
        Rewriter.erase_op(old)  # type: ignore[arg-type]


def merge_matmul_columns(op: Operation, top: TopModule) -> None:
    """An INT8 MatMul's per-column multipliers and shifts as its `multi` operand, [1, n, 1, 2] int32
    (no-op with one pair, or when it has the operand already)."""
    a = AttrView(op.attributes, SPECS[op.name])
    multipliers, rshifts = list(a["multipliers"]), list(a["rshifts"])
    if len(multipliers) == 1 or (len(op.operands) > 3 and isinstance(op.operands[3].type, TensorType)):
        return
    if len(op.operands) < 3 or len(rshifts) != len(multipliers):
        raise _error(op, f"{len(multipliers)} multipliers and {len(rshifts)} rshifts with {len(op.operands)} operands "
                         f"cannot become its multi operand")
    data = np.array([multipliers, rshifts], np.int64).T.reshape(1, -1, 1, 2).astype(np.int32)
    new = top.add_weight(f"{loc_name(op)}_multi", data, before=op)
    value = Rewriter.replace_value_with_new_type(new.results[0], TensorType(i32, data.shape))
    op.operands = [*op.operands[:3], value, *op.operands[4:]]  # operand 3, in place of a none value


def _int8_weight(value) -> bool:
    """A quantized weight, or a plain i8 one (a grouped INT8 Deconv's per-(group, column) filter)."""
    e = value.type.element_type if isinstance(value.type, TensorType) else None
    return (isinstance(e, UniformQuantizedType) or (isinstance(e, IntegerType) and e.width.data == 8)) \
        and value.owner.name == "top.Weight"


@dataclass(frozen=True)
class WeightReorderPass(ModulePass):
    """Reorder static tpu.Conv2D filters into the backend's coefficient layout."""

    name = "weight-reorder"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convs = [o for o in op.walk() if o.name == "tpu.Conv2D"]
        static = [c for c in convs if c.operands[1].owner.name == "top.Weight"]  # type: ignore[union-attr]
        deconvs = [o for o in op.walk() if o.name == "tpu.Deconv" and _int8_weight(o.operands[1])]
        matmuls = [o for o in op.walk() if o.name == "tpu.MatMul" and _int8_weight(o.operands[1])
                   and len(AttrView(o.attributes, SPECS[o.name])["multipliers"]) > 1]
        if not static and not deconvs and not matmuls:
            return
        top = top_module_of(op)
        if top is None:
            raise TpudslError("weight-reorder: the weight data is not loaded (the module names no readable weight file)")
        for conv in static:
            reorder_conv(conv, top)
        for deconv in deconvs:
            merge_int8_coeffs(deconv, top)
        for matmul in matmuls:
            merge_matmul_columns(matmul, top)
