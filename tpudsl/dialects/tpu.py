"""The Tpu dialect: ops as TPU-MLIR's TpuOps.td names them, after lowering from Top.

Same table style as top.py: one `OpSpec` row per op, attributes with TPU-MLIR's names, kinds and
defaults, the shape rule shared with the Top op it comes from. What differs from Top:

* enums print as `#tpu<round_mode HalfAwayFromZero>` (kinds "tpu.round_mode", ... in attrs.py);
* quantization parameters are attributes (`multiplier`, `rshift`, `quant_mode`, ...), declared
  here for every op that has them in TPU-MLIR, even before the INT8 lowering uses them;
* optional extra operands TPU-MLIR adds for the chip (`buffer`, lookup `table`s) are `name?`
  operands that lowering fills with `top.None`;
* the ops that carry layer-group info also declare `--layer-group`'s decision (docs/backend.md):
  an op alone (a group of one) gets `nsecs`, `hsecs` (slices along N and H, TPU-MLIR's names on
  tpu.Group), `csecs`, `wsecs` (along C and W, only when it is sliced so: absent is 1) and
  `lmem_bytes`, and `--core-parallel`'s `core_id` (the op alone runs whole on that core, in one
  phase with the placed ops next to it; absent: its slices are dealt to every core); a group of several ops is a `tpu.Group` region (below) whose ops
  carry `ginfo` (`layer_group` on Pool2D, as TpuOps.td names it): a `#tpu.lg<...>` attribute
  (lg.py, TPU-MLIR's Tpu_LayerGroupAttr: every field declared, printed and verified);
* `tpu.Group` (one region ending in `tpu.Yield` of its results), `tpu.Load` (global -> local)
  and `tpu.Store` (local -> global) are TPU-MLIR's layer-group ops (`GroupOps.cpp` builds them).

Weights, inputs and `none` stay `top.Weight`, `top.Input` and `top.None`, as in TPU-MLIR's files.
The element type of each tensor is the mode's (f32, f16, bf16; i8/i32 for INT8).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, NoneType, TensorType
from xdsl.ir import Dialect

from tpudsl.dialects import shapes as S
from tpudsl.dialects import shapes_nn as NN
from tpudsl.dialects import opdef
from tpudsl.dialects.lg import LayerGroupAttr
from tpudsl.dialects.opdef import MOVES, REQUIRED, A, Moves, OpSpec, ShapeError, define
from tpudsl.dialects.quant import UniformQuantizedType
from tpudsl.dialects.top import COMPARE_MODES, REDUCE_MODES

RELU = {"do_relu": A("bool", False), "relu_limit": A("f64", -1.0)}
SLICES = {"nsecs": A("i64"), "hsecs": A("i64"), "csecs": A("i64", 1), "wsecs": A("i64", 1), "lmem_bytes": A("i64"),
          "core_id": A("i64")}
GINFO = {"ginfo": A("tpu.lg"), **SLICES}


def _round(default: str = "HalfAwayFromZero") -> dict[str, A]:
    return {"round_mode": A("tpu.round_mode", default)}


WINDOW = {"kernel_shape": A("i64[]", REQUIRED), "strides": A("i64[]", REQUIRED), "pads": A("i64[]", REQUIRED)}
# Per-op scalar requantization (int multiplier, right shift), TPU-MLIR's defaults.
RQ_SCALAR = {"multiplier": A("i64", 1), "rshift": A("i64", 0)}
# Per-input requantization of the n-ary ops.
RQ_INPUTS = {"multipliers": A("i64[]"), "rshifts": A("i64[]")}


def _rq_axis_check(ins, a) -> None:
    """tpu.RequantIntAxis: rq_axis names a dim of the input (fuse_rq_axis: the last one, TPU-MLIR's
    fused MatMul form); `quant` holds 3 int32 per channel of that dim, as bm1684x lays it out:
    (multiplier, -rshift, zero point), in any shape whose last dim is 3 ([1, C, 1, 3] upstream)."""
    x, quant = S.operand(ins, 0, "input"), S.operand(ins, 1, "quant")
    axis = a["rq_axis"]
    if not 0 <= axis < len(x):
        raise ShapeError(f"rq_axis {axis} is not a dim of the {len(x)}-d input")
    if a["fuse_rq_axis"] and axis != len(x) - 1:
        raise ShapeError(f"fuse_rq_axis=true requantizes along the last dim ({len(x) - 1}), rq_axis is {axis}")
    if not quant or quant[-1] != 3 or S.numel(quant) != 3 * x[axis]:
        raise ShapeError(f"quant {S.fmt(quant)} must hold 3 values (multiplier, -rshift, zero point) for each of "
                         f"the {x[axis]} channels along rq_axis {axis}, last dim 3")


def _rq_axis_types(op) -> None:
    """The input is an integer (i32 accumulator, or a per-tensor quantized int), quant is i32, the
    result a per-tensor quantized int8/uint8 (or a plain integer)."""

    def element(v):
        return v.type.element_type if isinstance(v.type, TensorType) else None

    x, quant, y = element(op.operands[0]), element(op.operands[1]), element(op.results[0])
    for what, v, e in (("input", op.operands[0], x), ("result", op.results[0], y)):
        if isinstance(e, UniformQuantizedType) and e.is_per_axis:
            raise ShapeError(f"{what} has a per-axis type: the per-channel parameters are the quant operand")
        if not isinstance(e, IntegerType | UniformQuantizedType):
            raise ShapeError(f"{what} must be an integer or quantized tensor, got {v.type}")
    if not (isinstance(quant, IntegerType) and quant.width.data == 32):
        raise ShapeError(f"quant must be an i32 tensor, got {op.operands[1].type}")


def _a16_types(op) -> None:
    """tpu.A16MatMul (TPU-MLIR's weight-only MatMul, docs/quantization.md "Weight-only"): 8 bits per
    output channel (q_group_size 0): the weight is i8 when `sign`, ui8 otherwise, and zp is none;
    per group, or 4 bits (two per byte, zero points per channel or group): the weight and zp are
    ui8. Input, scale and result share one f16 or bf16 type."""
    from xdsl.dialects.builtin import BFloat16Type, Float16Type, Signedness

    def element(v):
        return v.type.element_type if isinstance(v.type, TensorType) else None

    x, w, scale, zp = (element(v) for v in op.operands[:4])
    y = element(op.results[0])
    if not isinstance(y, Float16Type | BFloat16Type):
        raise ShapeError(f"result must be f16 or bf16, got {op.results[0].type}")
    for what, e, v in (("input", x, op.operands[0]), ("scale", scale, op.operands[2])):
        if e != y:
            raise ShapeError(f"{what} must be {y} as the result, got {v.type}")
    a = opdef.AttrView(op.attributes, opdef.SPECS[op.name])
    grouped = a["q_group_size"] > 0 or a["weight_bits"] == 4  # with zero points
    signed = a["sign"] and not grouped

    def is_int8(e, signedness) -> bool:
        return isinstance(e, IntegerType) and e.width.data == 8 and e.signedness.data == signedness

    if not is_int8(w, Signedness.SIGNLESS if signed else Signedness.UNSIGNED):
        why = (f"q_group_size={a['q_group_size']}, weight_bits={a['weight_bits']}" if grouped
               else f"sign={'true' if signed else 'false'}")
        raise ShapeError(f"weight must be {'i8' if signed else 'ui8'} ({why}), got {op.operands[1].type}")
    if grouped and not is_int8(zp, Signedness.UNSIGNED):
        raise ShapeError(f"zp must be ui8 with q_group_size={a['q_group_size']}, weight_bits={a['weight_bits']}, "
                         f"got {op.operands[3].type}")
    if not grouped and zp is not None:
        raise ShapeError("zp must be none with q_group_size=0 and 8 bits (per-channel int8 weights are symmetric)")


SPECS: list[OpSpec] = [
    OpSpec(
        "tpu.Conv2D",
        operands=("input", "filter", "bias?"),
        attrs={
            **WINDOW,
            "group": A("i64", 1),
            "dilations": A("i64[]"),
            "inserts": A("i64[]"),
            **RELU,
            "with_bias": A("bool", REQUIRED),
            "weight_is_coeff": A("i64", 1),
            "dynweight_reorderd": A("bool", False),
            "coeff_merged": A("bool", False),
            "use_3ic_optimize": A("i64", 0),
            "kernel_zp": A("i64", 0),
            "use_winograd": A("i64"),
            "multiplier": A("i64[]"),
            "rshift": A("i64[]"),
            "quant_mode": A("tpu.rq_mode", "MultiplierShift"),
            **_round("HalfUp"),
            **GINFO,
            "do_leaky_relu": A("bool"),
            "neg_slope": A("f64"),
            "multiplier_pos": A("i64"),
            "multiplier_neg": A("i64"),
            "rshift_pos": A("i64"),
            "rshift_neg": A("i64"),
            "out_f8_scales": A("f64[]"),
            "support_compress": A("bool", True),
            "compress_info": A("any"),
        },
        shape=NN.tpu_conv2d,
        summary="2-D convolution; filter [oc, ic/group, kh, kw], [1, oc, ceil(ic/group/P), kh*kw*P] after --weight-reorder",
    ),
    OpSpec(
        "tpu.Pool2D",
        attrs={
            **WINDOW,
            "pool_mode": A("tpu.pool_mode", REQUIRED),
            "pad_value": A("i64", 0),
            "is_adaptive": A("bool", False),
            "count_include_pad": A("bool", False),
            **RELU,
            "ceil_mode": A("bool"),
            # ours: the rows and columns of the end pads past the explicit ones (a ceil-mode
            # pool's overhang), which an average's divisor never counts (docs/lowering.md)
            "ceil_overhang": A("i64[]"),
            "multiplier": A("i64"),
            "rshift": A("i64"),
            "scale": A("f64"),
            "offset": A("f64"),
            **_round(),
            "first_round_mode": A("tpu.round_mode", "HalfAwayFromZero"),
            "layer_group": A("tpu.lg"),
            **SLICES,
            "fp8_out_scale": A("f64"),
        },
        moves=Moves(when=("pool_mode", "Max")),
        shape=NN.pool,
        summary="2-D max or average pooling (pool_mode)",
    ),
    OpSpec(
        "tpu.MatMul",
        operands=("input", "right", "bias?", "multi?", "buffer?"),
        attrs={
            "left_transpose": A("bool", False),
            "right_transpose": A("bool", False),
            "output_transpose": A("bool", False),
            "hdim_is_batch": A("bool", False),
            "keep_dims": A("bool", True),
            **RELU,
            "multipliers": A("i64[]", [1]),
            "rshifts": A("i64[]", [0]),
            "right_zp": A("i64", 0),
            "input_zp": A("i64", 0),
            "quant_mode": A("tpu.rq_mode", "MultiplierShift"),
            "left_reuse": A("i64", 1),
            "out_f8_scales": A("f64[]"),
            **GINFO,
            "multi_core": A("bool"),
            "fuse_rq": A("bool", False),
            **_round(),
        },
        shape=NN.matmul,
    ),
    OpSpec(
        "tpu.A16MatMul",
        operands=("input", "weight", "scale", "zp?", "bias?"),
        attrs={
            "w_transpose": A("bool", False),
            "sign": A("bool", True),
            "weight_bits": A("i64", 8, supported=(4, 8)),
            "q_group_size": A("i64", 0),
            **GINFO,
        },
        shape=NN.a16_matmul,
        verify=_a16_types,
        summary="weight-only quantized MatMul: input @ (weight * scale per output channel) + bias, "
                "the weight int8 (sign) or uint8, dequantized to the result's f16/bf16 first",
    ),
    OpSpec("tpu.Active", attrs={"mode": A("tpu.active_mode", REQUIRED), "coeffs": A("f64[]"), **GINFO},
           shape=S.same_as_first, summary="an element-wise function chosen by `mode`"),
    OpSpec("tpu.Clip", attrs={"min": A("f64", REQUIRED), "max": A("f64", REQUIRED), **GINFO}, shape=S.same_as_first),
    OpSpec("tpu.Relu", attrs={**GINFO, "relu_limit": A("f64", -1.0)}, shape=S.same_as_first),
    OpSpec("tpu.LeakyRelu",
           attrs={"alpha": A("f64"), "multiplier": A("i64"), "multiplier_neg": A("i64"), "rshift": A("i64"),
                  "rshift_neg": A("i64"), **_round(), **GINFO},
           shape=S.same_as_first),
    OpSpec("tpu.Reciprocal", attrs={"const_val": A("f64", 1.0), **RELU, **GINFO}, shape=S.same_as_first),
    OpSpec("tpu.Cast",
           attrs={"extra_input": A("bool"), **GINFO, "with_scale": A("bool", True), **_round()},
           shape=S.same_as_first, summary="element type conversion (the result type says to what)"),
    OpSpec("tpu.Permute", operands=("input", "buffer?"), attrs={"order": A("i64[]", REQUIRED), **GINFO},
           shape=S.permute, moves=MOVES),
    OpSpec("tpu.Reshape", operands=("input", "[buffer]"),
           attrs={"shape": A("i64[]"), "flatten_start_dim": A("i64", -1)}, shape=S.reshape, moves=MOVES),
    OpSpec("tpu.Squeeze", attrs={"axes": A("i64[]", REQUIRED)}, shape=S.squeeze, moves=MOVES),
    OpSpec("tpu.Unsqueeze", attrs={"axes": A("i64[]", REQUIRED)}, shape=S.unsqueeze, moves=MOVES),
    OpSpec("tpu.Concat", operands=("inputs*",),
           # TPU-MLIR's per-input requantization (CV18xx's INT8 Concat): here a requantized input
           # comes through its own tpu.RequantInt, and a move keeps its types, so any value is an error
           attrs={"axis": A("i64", REQUIRED), "only_merge": A("bool", False),
                  **{k: A(a.kind, modelled=False) for k, a in RQ_INPUTS.items()}, **RELU, **GINFO},
           shape=S.concat, moves=Moves(operands=("inputs",))),
    OpSpec("tpu.Softmax",
           operands=("input", "table?", "slope_table?", "reciprocal_table?", "reciprocal_mantissa_table?", "buffer?"),
           attrs={"axis": A("i64", REQUIRED), "log": A("bool", False), "beta": A("f64", 1.0), **_round(), **GINFO},
           shape=S.along_axis),
    OpSpec("tpu.Slice", operands=("input", "offsetT?", "endsT?", "stepsT?", "buffer?"),
           attrs={"offset": A("i64[]", REQUIRED), "steps": A("i64[]", REQUIRED), "ends": A("i64[]", REQUIRED),
                  # TPU-MLIR defaults axes to [1]; absent here means what it means on top.Slice
                  "axes": A("i64[]"), "hasparamConvert_axes": A("i64[]", []), **GINFO},
           shape=S.slice_, moves=MOVES),
    OpSpec("tpu.Pad", operands=("input", "paddingsT?", "left_select?", "right_select?", "buffer?"),
           attrs={"paddings": A("i64[]", REQUIRED), "val": A("f64", 0.0), "mode": A("tpu.Pad_Mode", "constant"),
                  **GINFO},
           shape=S.pad, moves=MOVES),
    OpSpec("tpu.Upsample", attrs={"scale_h": A("i64", REQUIRED), "scale_w": A("i64", REQUIRED), **RELU, **GINFO},
           shape=S.upsample, moves=MOVES),
    OpSpec("tpu.Depth2Space",
           attrs={"block_h": A("i64", REQUIRED), "block_w": A("i64", REQUIRED), "is_CRD": A("bool", REQUIRED),
                  "is_inversed": A("bool", REQUIRED), "in_is_NCHW": A("bool", True), "out_is_NCHW": A("bool", True),
                  "swap_cr": A("bool", False), **GINFO},
           shape=S.depth2space, moves=MOVES),
    OpSpec("tpu.Lut", operands=("input", "table"), attrs=dict(GINFO), shape=S.same_as_first,
           summary="y = table[x] for int8/uint8 x (a 256-entry table)"),
    OpSpec("tpu.RequantInt",
           attrs={"multiplier": A("i64[]", REQUIRED), "rshift": A("i64[]", REQUIRED),
                  "quant_mode": A("tpu.rq_mode", REQUIRED), **_round(), "rq_axis": A("i64", 1),
                  "fuse_rq": A("bool", False), **GINFO},
           shape=S.same_as_first, summary="int8 -> int8 at another scale: sat((x * multiplier) >> rshift)"),
    OpSpec("tpu.RequantIntAxis", operands=("input", "quant"),
           attrs={"quant_mode": A("tpu.rq_mode", REQUIRED), **_round(), "rq_axis": A("i64", 1),
                  "fuse_rq_axis": A("bool", False), **GINFO},
           shape=S.same_as_first, check=_rq_axis_check, verify=_rq_axis_types,
           summary="integer -> int8 per channel along rq_axis: sat(((x - zp_in) * m[c]) >> rshift[c] + zp[c]), "
                   "quant [.., C, .., 3] of (m, -rshift, zp)"),
    OpSpec("tpu.Deconv", operands=("input", "filter", "bias?"),
           attrs={**WINDOW, "group": A("i64", 1), "dilations": A("i64[]"), "output_padding": A("i64[]"), **RELU,
                  "with_bias": A("bool", REQUIRED), "multiplier": A("i64[]"), "rshift": A("i64[]"),
                  "quant_mode": A("tpu.rq_mode", "MultiplierShift"), **GINFO,
                  # not in TpuOps.td: Top's filter-layout flag, kept so the filter's layout is explicit
                  "dynweight_reorderd": A("bool", False),
                  # not in TpuOps.td either: INT8 after --weight-reorder, the bias is Conv2D's merged tile
                  "coeff_merged": A("bool", False)},
           shape=NN.deconv),
    OpSpec("tpu.Scale", operands=("input", "scale", "bias", "lshift?"), attrs={**RELU, **GINFO},
           shape=NN.channel_affine),
    OpSpec("tpu.PReluOp", operands=("input", "slope"),
           attrs={"rshift": A("i64", 0), "rshift_pos": A("i64"), "multiplier_pos": A("i64"), **GINFO},
           shape=NN.prelu),
    OpSpec("tpu.LRN", operands=("input", "table?", "mantissa?"),
           attrs={"size": A("i64", REQUIRED), "alpha": A("f64", 1e-4), "beta": A("f64", 0.75), "bias": A("f64", 1.0),
                  **GINFO},
           shape=S.same_as_first),
    OpSpec("tpu.Tile", operands=("input", "[tileT]"), attrs={"tile": A("i64[]", []), **GINFO}, shape=S.tile,
           moves=MOVES),
    OpSpec("tpu.Gather", operands=("input", "indices", "buffer?"),
           attrs={"axis": A("i64", 0), "if_neg_index": A("bool", True),
                  # not in TpuOps.td: Top's keepdims (a scalar index keeps or drops the axis)
                  "keepdims": A("bool", True)},
           shape=S.gather, moves=MOVES),
    OpSpec("tpu.GatherElements", operands=("input", "indices", "indices_coeff?", "buffer?"),
           attrs={"axis": A("i64", 2)}, shape=S.gather_elements, moves=MOVES),
    OpSpec("tpu.Interp", operands=("input", "shapeT?", "buffer?"),
           attrs={"scale_h": A("f64", REQUIRED), "scale_w": A("f64", REQUIRED), "mode": A("tpu.mode", REQUIRED),
                  "coord_mode": A("tpu.coord_mode", REQUIRED), **GINFO,
                  # not in TpuOps.td: ONNX Resize's nearest rounding, as on top.Interp
                  "nearest_mode": A("str", None, ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"))},
           shape=S.interp),
    OpSpec("tpu.Reduce", operands=("input", "buffer?", "reciprocal_mantissa_table?"),
           attrs={"axes": A("i64[]", REQUIRED), "keepdims": A("bool", REQUIRED),
                  "mode": A("str", REQUIRED, REDUCE_MODES), "multiplier": A("i64[]"), "rshift": A("i64[]"), **GINFO},
           shape=S.reduce),
    OpSpec("tpu.Arg", results=("indices", "values?"),
           attrs={"axis": A("i64", REQUIRED), "keepdims": A("bool", REQUIRED), "mode": A("str", REQUIRED, ("ArgMin", "ArgMax")),
                  "select_last_index": A("bool", True), **GINFO},
           shape=S.arg, moves=Moves(results=("values",))),
    OpSpec("tpu.Where", operands=("cond", "tbrn?", "fbrn?", "buffer?"),
           attrs={"x_is_const": A("bool", False), "y_is_const": A("bool", False),
                  "x_const_val": A("f64", 0.0), "y_const_val": A("f64", 0.0), **GINFO},
           shape=S.where, moves=Moves(operands=("tbrn", "fbrn"))),
    OpSpec("tpu.MaskedFill", operands=("cond", "brn"),
           attrs={"inversed": A("bool", REQUIRED), "const_val": A("f64", REQUIRED), **GINFO}, shape=S.broadcast_all,
           moves=Moves(operands=("brn",))),
    OpSpec("tpu.Compare", operands=("lhs", "rhs"), attrs={"mode": A("str", REQUIRED, COMPARE_MODES), **GINFO},
           shape=S.broadcast_all),
    OpSpec("tpu.CompareConst",
           attrs={"mode": A("str", REQUIRED, COMPARE_MODES), "const_val": A("f64", REQUIRED),
                  "inversed": A("bool", REQUIRED), **GINFO},
           shape=S.same_as_first),
    OpSpec("tpu.LayerNorm", operands=("input", "weight?", "bias?", "table?", "mantissa_table?"),
           attrs={"normalized_shape": A("i64[]", REQUIRED), "axis": A("i64", REQUIRED), "eps": A("f64", REQUIRED),
                  **GINFO},
           shape=NN.layer_norm),
    OpSpec("tpu.InstanceNorm", operands=("input", "weight?", "bias?", "table?", "mantissa_table?"),
           attrs={"eps": A("f64", REQUIRED), **GINFO}, shape=NN.instance_norm),
    # Ours, not TpuOps.td's (TPU-MLIR rewrites these before or while lowering): kept as ops so the
    # Tpu level computes exactly what Top computes.
    OpSpec("tpu.Pow", attrs={"exponent": A("f64", REQUIRED), **GINFO}, shape=S.same_as_first),
    OpSpec("tpu.DivConst", attrs={"const_val": A("f64", REQUIRED), "is_reverse": A("bool", False), **RELU, **GINFO},
           shape=S.same_as_first),
    OpSpec("tpu.GroupNorm", operands=("input", "weight?", "bias?", "table?", "mantissa_table?"),
           attrs={"num_groups": A("i64", REQUIRED), "eps": A("f64", REQUIRED), **GINFO}, shape=NN.group_norm),
]

def _group_verify(op) -> None:
    """A group's body ends in tpu.Yield of Store results whose types are the group's results; its
    Loads read the group's operands; its other ops read values of the body (or `none`)."""
    inner = list(op.body.block.ops)
    if not inner or inner[-1].name != "tpu.Yield":
        raise ShapeError("body must end in tpu.Yield")
    yielded = inner[-1].operands
    if [v.type for v in yielded] != [r.type for r in op.results]:
        raise ShapeError(f"yields {len(yielded)} values of other types than its {len(op.results)} results")
    if any(getattr(v.owner, "name", None) != "tpu.Store" for v in yielded):
        raise ShapeError("yields a value that no tpu.Store of its body produced")
    for o in inner:
        if o.name == "tpu.Load":
            if o.operands[0] not in op.operands:
                raise ShapeError("has a tpu.Load of a value that is not one of its operands")
            continue
        for v in o.operands:
            if not isinstance(v.type, NoneType) and v.owner.parent_op() is not op:  # type: ignore[union-attr]
                raise ShapeError(f"has {o.name} reading a value from outside the group without tpu.Load")


def _in_group(op) -> None:
    parent = op.parent_op()
    if parent is None or parent.name != "tpu.Group":
        raise ShapeError("must be inside a tpu.Group")


# The layer-group ops (docs/backend.md "--layer-group"): operand and attribute names are TpuOps.td's;
# flow is TPU-MLIR's time-step list (-1, ids of step 0, -2, ids of step 1, ...), other_up_overlap_op
# the ids of this group's Loads that are issued during the group before (weight prefetch).
SPECS += [
    OpSpec("tpu.Group", operands=("inputs*",), results=("outputs*",),
           attrs={"nsecs": A("i64", REQUIRED), "hsecs": A("i64", REQUIRED), "csecs": A("i64", 1),
                  "wsecs": A("i64", 1), "flow": A("i64[]", REQUIRED),
                  "lmem_bytes": A("i64", REQUIRED), "other_up_overlap_op": A("i64[]", [])},
           region=True, verify=_group_verify, summary="a layer group: its ops share local memory, sliced nsecs x hsecs"),
    OpSpec("tpu.Load", attrs={"ginfo": A("tpu.lg", REQUIRED)}, shape=S.same_as_first, verify=_in_group,
           summary="a tensor's parts (or whole tile) from global to local memory, inside a tpu.Group", moves=MOVES),
    OpSpec("tpu.Store", attrs={"ginfo": A("tpu.lg", REQUIRED)}, shape=S.same_as_first, verify=_in_group,
           summary="a result's parts from local to global memory, inside a tpu.Group", moves=MOVES),
    OpSpec("tpu.Yield", operands=("inputs*",), results=(), terminator=True, verify=_in_group,
           summary="the results of a tpu.Group (its Stores' values)"),
]


def _as_top(name: str) -> OpSpec:
    """`tpu.<name>` with the operands, results, attributes and shape rule of `top.<name>`."""
    top = opdef.SPECS[f"top.{name}"]
    attrs = {**{key: a for key, a in top.attrs.items() if key != "name"}, **GINFO}  # GINFO: as every Tpu op
    return OpSpec(f"tpu.{name}", operands=top.operands, results=top.results, attrs=attrs, shape=top.shape,
                  check=top.check, moves=top.moves, verify=top.verify, summary=top.summary)


# Ops whose Tpu form takes its Top op's operands and attributes (TPU-MLIR has TopK, GatherND,
# ScatterElements, ScatterND, CumSum, Reverse, Trilu, RMSNorm, Pow2, Remainder, MaxPoolWithMask,
# YoloDetection, DetectionOutput, Yuv2rgbFormula, GridSampler, LSTM and GRU as Tpu ops; Expand, Einsum, Mod
# and Pow3 are ours, TPU-MLIR rewrites them into other ops). Their float kernel is the Top kernel; tensor-valued
# `[...]` operands must be folded before lowering.
AS_TOP = ("TopK", "GatherND", "ScatterElements", "ScatterND", "CumSum", "Reverse", "Trilu", "RMSNorm", "Pow2",
          "Pow3", "Mod", "Remainder", "Expand", "Einsum", "MaxPoolWithMask", "YoloDetection", "DetectionOutput",
          "Yuv2rgbFormula", "GridSampler", "LSTM", "GRU")
SPECS += [_as_top(name) for name in AS_TOP]

# n-ary broadcasting ops over a variadic `inputs`, with their requantization attributes.
NARY: list[tuple[str, dict[str, A]]] = [
    ("Add", {**RELU, "coeff": A("f64[]"), "do_early_stride": A("bool"), "early_stride_h": A("i64"),
             "early_stride_w": A("i64"), **RQ_INPUTS, "f8_scales": A("f64[]"), **GINFO}),
    ("Sub", {"is_reverse": A("bool", False), **RELU, "coeff": A("f64[]"), **RQ_INPUTS, "f8_scales": A("f64[]"),
             **GINFO}),
    ("Mul", {**RELU, **RQ_SCALAR, "quant_mode": A("tpu.rq_mode", "MultiplierShift"), "out_f8_scales": A("f64[]"),
             **GINFO}),
    ("Div", {"is_reverse": A("bool", False), **RELU, **RQ_SCALAR, **GINFO}),
    ("Max", {**RELU, "coeff": A("f64[]"), **RQ_INPUTS, **GINFO}),
    ("Min", {**RELU, "coeff": A("f64[]"), **RQ_INPUTS, **GINFO}),
]

# Tensor-with-scalar ops: input (op) const_val.
CONST: list[tuple[str, dict[str, A]]] = [
    ("AddConst", {**RELU, **RQ_SCALAR, "f8_scale": A("f64", 1.0), **GINFO}),
    ("SubConst", {"is_reverse": A("bool", False), **RELU, **RQ_SCALAR, "f8_scale": A("f64", 1.0), **GINFO}),
    ("MulConst", {**RELU, **RQ_SCALAR, **GINFO}),
    ("MaxConst", {**RELU, **RQ_SCALAR, **GINFO}),
    ("MinConst", {**RELU, **RQ_SCALAR, **GINFO}),
]

SPECS += [OpSpec(f"tpu.{name}", operands=("inputs*",), attrs=attrs, shape=S.broadcast_all) for name, attrs in NARY]
SPECS += [
    OpSpec(f"tpu.{name}", attrs={"const_val": A("f64", REQUIRED), **attrs}, shape=S.same_as_first)
    for name, attrs in CONST
]

OPS = [define(spec) for spec in SPECS]
Tpu = Dialect("tpu", OPS, [LayerGroupAttr])

# The Top element-wise functions that lower to `tpu.Active`, by their `mode`. Only functions whose
# Top op has no attributes that change the function (Sigmoid's scale/bias/log, GELU's approx_mode
# are handled by the lowering). The Tpu interpreter reads the same table backwards.
ACTIVE_MODES: dict[str, str] = {
    "top.Tanh": "TANH", "top.Sigmoid": "SIGMOID", "top.Exp": "EXP", "top.Sqrt": "SQRT", "top.Rsqrt": "RSQRT",
    "top.Abs": "ABSVAL", "top.Log": "LN", "top.Ceil": "CEIL", "top.Floor": "FLOOR", "top.Sin": "SIN",
    "top.Cos": "COS", "top.Mish": "MISH", "top.HardSwish": "HSWISH", "top.SiLU": "SILU", "top.Arccos": "ARCCOS",
    "top.Arctanh": "ARCTANH", "top.Sinh": "SINH", "top.Cosh": "COSH", "top.Tan": "TAN", "top.Sign": "SIGN",
    "top.Erf": "ERF", "top.Softplus": "SOFT_PLUS", "top.Softsign": "SOFT_SIGN", "top.Round": "ROUND",
    "top.Arcsin": "ARCSIN", "top.Arcsinh": "ARCSINH", "top.Arccosh": "ARCCOSH",
}
# Top element-wise functions with parameters that lower to `tpu.Active`: the mode and the Top
# attributes that become its `coeffs`, in order.
ACTIVE_COEFFS: dict[str, tuple[str, tuple[str, ...]]] = {
    "top.Elu": ("ELU", ("alpha",)), "top.HardSigmoid": ("HSIGMOID", ("alpha", "beta")),
    "top.Swish": ("SWISH", ("beta",)),
}
# top.GELU's approx_mode -> tpu.Active mode.
GELU_MODES = {"normal": "GELU", "tanh": "TGELU", "sigm": "QGELU"}
