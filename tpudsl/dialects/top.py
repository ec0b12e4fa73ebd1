"""The Top dialect: framework-neutral float ops, as TPU-MLIR names them (TopOps.td).

Every op is one `OpSpec` row (see opdef.py): operands, attributes with TPU-MLIR's names and
defaults, and the shape rule (shapes.py, shapes_nn.py). Families of ops that share operands,
attributes and shape rule (unary element-wise, n-ary broadcasting, `*Const` scalar ops, pools)
are generated from lists. Conventions are written down in docs/dialect.md."""

from __future__ import annotations

from xdsl.dialects.builtin import Float32Type, TensorType, UnrankedTensorType
from xdsl.ir import Dialect

from tpudsl.dialects import shapes as S
from tpudsl.dialects import shapes_nn as NN
from tpudsl.dialects.geometry import resize_modes as RESIZE
from tpudsl.dialects.geometry.ssd import CODE_TYPES
from tpudsl.dialects.opdef import MOVES, REQUIRED, A, Moves, OpSpec, ShapeError, define

# ---- attribute groups and string enums shared by several ops ---------------------------------

RELU = {"do_relu": A("bool", False), "relu_limit": A("f64", -1.0)}
ROUND_MODES = ("HalfAwayFromZero", "HalfUp", "HalfDown", "HalfToEven", "HalfToOdd", "HalfTowardsZero", "TowardsZero", "Up", "Down")
ROUND = {"round_mode": A("str", "HalfAwayFromZero", ROUND_MODES)}
COMPARE_MODES = ("Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "NotEqual", "And", "Not", "Xor")
REDUCE_MODES = ("ReduceMin", "ReduceMax", "ReduceMean", "ReduceL2", "ReduceL1", "ReduceSum", "ReduceProd")
AUTO_PAD = {"auto_pad": A("str", None, ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"))}
WINDOW = {  # kernel geometry shared by Conv, Deconv and the pools; see shapes_nn._spatial
    "kernel_shape": A("i64[]", REQUIRED),
    "strides": A("i64[]"),  # absent: all 1
    "pads": A("i64[]"),  # all begins then all ends; absent: all 0
}
SCALAR = {"is_scalar": A("bool", False)}
# Scatter reductions by ONNX name: TPU-MLIR's CPU_SCATTER_OP_T codes (its 2, subtract, ONNX has not).
SCATTER_REDUCTIONS = {"none": 0, "add": 1, "max": 3, "min": 4, "mul": 5}
SCATTER_REDUCTION = A("i64", 0, supported=tuple(SCATTER_REDUCTIONS.values()))
YOLO_VERSIONS = ("yolov3", "yolov3_tiny", "yolov3_spp", "yolov4", "yolov5", "yolov8")  # TopOps.td's YoloVersionAttr


def _f32_only(op) -> None:
    """Every operand and the result are f32 tensors (an op tpudsl models in float only)."""
    for what, v in [*((f"operand #{i}", x) for i, x in enumerate(op.operands)), ("result", op.results[0])]:
        if not (isinstance(v.type, TensorType | UnrankedTensorType) and isinstance(v.type.element_type, Float32Type)):
            raise ShapeError(f"{what} has type {v.type}: only f32 is modelled")
# Yuv2rgbFormula (TpuOps.td; its kernel's enums): src_format 0 YUV420P_YU12 (I420), 1 YUV420P_YV12, 2 NV12,
# 3 NV21; dst_format 4 RGB, 5 BGR; the pixels come out as uint8 values (image_format UINT8: FLOAT32 is not
# modelled, TPU-MLIR's tpulang refuses it too), rounded by round_mode (tpulang allows these two).
YUV2RGB = {
    "src_format": A("i64", REQUIRED, supported=(0, 1, 2, 3)),
    "dst_format": A("i64", REQUIRED, supported=(4, 5)),
    "image_format": A("str", REQUIRED, ("FLOAT32", "UINT8"), supported=("UINT8",)),
    "formula_mode": A("str", REQUIRED, ("_601_limited", "_601_full")),
    "round_mode": A("str", "HalfAwayFromZero", ROUND_MODES, supported=("HalfAwayFromZero", "HalfToEven")),
}

# ---- ops written out one by one -------------------------------------------------------------

SPECS: list[OpSpec] = [
    OpSpec("top.None", operands=(), summary="placeholder value for an absent optional operand"),
    OpSpec(
        "top.Weight",
        operands=(),
        attrs={
            "scale": A("f64[]", modelled=False),  # a scale to apply to the .npz data is not modelled
            "store_mode": A("str", None, ("1N", "2N", "4N")),
            "allow_split": A("i64[]"),
            "do_compress": A("bool"),
            "inline_bytes": A("str", modelled=False),  # the data is always the .npz entry
        },
        shape=S.given_by_result_type,
        summary="constant tensor stored in the weight .npz under the op's loc name",
    ),
    OpSpec(
        "top.Input",
        attrs={
            "do_preprocess": A("bool", False),
            "pixel_format": A("str", None, ("rgb", "bgr", "gray", "rgba", "gbrg", "grbg", "bggr", "rggb")),
            "channel_format": A("str", None, ("nhwc", "nchw")),
            "resize_dims": A("i64[]"),
            "keep_aspect_ratio": A("bool"),
            "keep_ratio_mode": A("str"),
            "pad_value": A("i64"),
            "pad_type": A("str", None, ("normal", "center")),
            "scale": A("f64[]"),
            "mean": A("f64[]"),
            "customization_format": A("str"),
            "aligned": A("bool"),
        },
        shape=S.same_as_first,
        summary="a model input, with optional preprocessing",
    ),
    OpSpec(
        "top.Conv",
        operands=("input", "filter", "bias?"),
        attrs={
            **WINDOW,
            "group": A("i64", 1),
            "dilations": A("i64[]"),
            "inserts": A("i64[]"),
            **RELU,
            "dynweight_reorderd": A("bool", False, supported=(False,)),  # TPU-MLIR reorders only Deconv filters
            "weight_is_coeff": A("i64", 1),
            "do_winograd": A("bool"),
            **AUTO_PAD,
        },
        shape=NN.conv,
        summary="1-D/2-D/3-D convolution; filter [oc, ic/group, *kernel]",
    ),
    OpSpec(
        "top.Deconv",
        operands=("input", "filter", "bias?"),
        attrs={
            **WINDOW,
            "group": A("i64", 1),
            "dilations": A("i64[]"),
            "output_padding": A("i64[]"),
            "dynweight_reorderd": A("bool", False),
            **RELU,
        },
        shape=NN.deconv,
        summary="transposed convolution; filter [ic, oc/g, *k], or [oc, ic/g, *k] when dynweight_reorderd",
    ),
    OpSpec(
        "top.MatMul",
        operands=("input", "right", "bias?"),
        attrs={
            "right_transpose": A("bool", False),
            "left_transpose": A("bool", False),
            "output_transpose": A("bool", False),
            "hdim_is_batch": A("bool", False),
            "keep_dims": A("bool", True),
            **RELU,
        },
        shape=NN.matmul,
        summary="numpy.matmul with optional transposes of the last two dims",
    ),
    OpSpec(
        "top.BatchNorm",
        operands=("input", "mean", "variance", "gamma?", "beta?"),
        attrs={"epsilon": A("f64", 1e-5), **RELU},
        shape=NN.channel_affine,
    ),
    OpSpec("top.Scale", operands=("input", "scale", "bias"), attrs=dict(RELU), shape=NN.channel_affine,
           summary="input * scale + bias with per-channel scale and bias"),
    OpSpec("top.PRelu", operands=("input", "slope"), shape=NN.prelu),
    OpSpec("top.Where", operands=("cond", "tbrn?", "fbrn?"),
           attrs={"x_is_const": A("bool", False), "y_is_const": A("bool", False),
                  "x_const_val": A("f64", 0.0), "y_const_val": A("f64", 0.0)},
           shape=S.where, moves=Moves(operands=("tbrn", "fbrn")),
           summary="cond ? tbrn (or x_const_val) : fbrn (or y_const_val), broadcasting"),
    OpSpec("top.Compare", operands=("lhs", "rhs"), attrs={"mode": A("str", REQUIRED, COMPARE_MODES)},
           shape=S.broadcast_all),
    OpSpec("top.Permute", attrs={"order": A("i64[]", REQUIRED)}, shape=S.permute, moves=MOVES),
    OpSpec("top.Transpose", attrs={"dim0": A("i64", REQUIRED), "dim1": A("i64", REQUIRED)}, shape=S.transpose,
           moves=MOVES),
    OpSpec("top.Reshape", operands=("input", "[shapeT]"),
           attrs={"shape": A("i64[]"), "flatten_start_dim": A("i64", -1, supported=(-1,))}, shape=S.reshape,
           moves=MOVES),
    OpSpec("top.Flatten", attrs={"start_dim": A("i64", 0), "end_dim": A("i64", -1)}, shape=S.flatten,
           moves=MOVES),
    OpSpec("top.Squeeze", attrs={"axes": A("i64[]", REQUIRED), **SCALAR}, shape=S.squeeze, moves=MOVES),
    OpSpec("top.Unsqueeze", attrs={"axes": A("i64[]", REQUIRED)}, shape=S.unsqueeze, moves=MOVES),
    OpSpec("top.Concat", operands=("inputs*",), attrs={"axis": A("i64", 1), **RELU, **ROUND}, shape=S.concat,
           moves=Moves(operands=("inputs",))),
    OpSpec("top.Slice", operands=("input", "offsetT?", "endsT?", "stepsT?"),
           attrs={"offset": A("i64[]"), "steps": A("i64[]"), "ends": A("i64[]"), "axes": A("i64[]"),
                  # TPU-MLIR's default []; listed axes change what `ends` means there
                  "hasparamConvert_axes": A("i64[]", supported=([],))},
           shape=S.slice_, moves=MOVES),
    OpSpec("top.Split", results=("outputs*",),
           attrs={"axis": A("i64", REQUIRED), "num": A("i64", REQUIRED), "split_size": A("i64[]")}, shape=S.split,
           moves=Moves(results=("outputs",))),
    OpSpec("top.Pad", operands=("input", "[paddingsT]"),
           attrs={"paddings": A("i64[]"), "val": A("f64", 0.0),
                  # TPU-MLIR's PaddingModeAttr, and ONNX's wrap (opset 19: circular; numpy's name)
                  "mode": A("str", "constant", ("constant", "reflect", "symmetric", "edge", "wrap"))},
           shape=S.pad, moves=MOVES),
    OpSpec("top.Tile", operands=("input", "[tileT]"), attrs={"tile": A("i64[]")}, shape=S.tile, moves=MOVES),
    OpSpec("top.Expand", operands=("input", "[shapeT]"), attrs={"shape": A("i64[]")}, shape=S.expand, moves=MOVES),
    OpSpec("top.Gather", operands=("input", "indices"),
           attrs={"keepdims": A("bool", True), "axis": A("i64", 0), **SCALAR}, shape=S.gather, moves=MOVES),
    OpSpec("top.Interp", operands=("input", "target_shape?"),
           # not in TopOps.td: mode cubic, the coord_modes after asymmetric, and every attribute
           # after scale_w (ONNX Resize's, with its defaults; geometry/resize.py says what they do)
           attrs={"mode": A("str", REQUIRED, RESIZE.INTERP_MODES),
                  "coord_mode": A("str", REQUIRED, RESIZE.COORD_MODES),
                  "scale_h": A("f64", -1.0), "scale_w": A("f64", -1.0),
                  "nearest_mode": A("str", None, RESIZE.NEAREST_MODES),  # absent = floor (PyTorch)
                  "cubic_coeff_a": A("f64", RESIZE.CUBIC_COEFF_A), "exclude_outside": A("bool", False),
                  "antialias": A("bool", False),
                  # tf_crop_and_resize: [starts..., ends...] of the spatial axes, as fractions
                  "roi": A("f64[]"), "extrapolation_value": A("f64", 0.0)},
           shape=S.interp),
    OpSpec("top.Upsample", attrs={"scale_h": A("i64", REQUIRED), "scale_w": A("i64", REQUIRED), **RELU},
           shape=S.upsample, summary="nearest upsampling by integer factors", moves=MOVES),
    OpSpec("top.AdaptiveAvgPool", attrs={"output_size": A("i64[]", REQUIRED)}, shape=NN.adaptive_pool),
    OpSpec("top.Reduce", attrs={"axes": A("i64[]", REQUIRED), "keepdims": A("bool", REQUIRED),
                                "mode": A("str", REQUIRED, REDUCE_MODES), **SCALAR}, shape=S.reduce),
    OpSpec("top.Arg", results=("indices", "values?"),
           attrs={"axis": A("i64", REQUIRED), "keepdims": A("bool", REQUIRED),
                  "mode": A("str", REQUIRED, ("ArgMax", "ArgMin")), "select_last_index": A("bool", False)},
           shape=S.arg, moves=Moves(results=("values",))),
    OpSpec("top.Softmax", attrs={"axis": A("i64", REQUIRED), "log": A("bool", False), "beta": A("f64", 1.0), **ROUND},
           shape=S.along_axis),
    OpSpec("top.LayerNorm", operands=("input", "weight?", "bias?"),
           attrs={"normalized_shape": A("i64[]"), "axis": A("i64", REQUIRED), "eps": A("f64", REQUIRED)},
           shape=NN.layer_norm),
    OpSpec("top.InstanceNorm", operands=("input", "weight?", "bias?"), attrs={"eps": A("f64", REQUIRED)},
           shape=NN.instance_norm),
    OpSpec("top.GroupNorm", operands=("input", "weight?", "bias?"),
           attrs={"num_groups": A("i64", REQUIRED), "eps": A("f64", REQUIRED)}, shape=NN.group_norm),
    OpSpec("top.GatherElements", operands=("input", "indices"), attrs={"axis": A("i64", 2)}, shape=S.gather_elements,
           moves=MOVES),
    OpSpec("top.Yuv2rgbFormula", operands=("YUV",), attrs=YUV2RGB, shape=S.yuv420_to_rgb,
           summary="4:2:0 YUV frames (I420, YV12, NV12, NV21) to planar RGB or BGR pixels by BT.601 (TPU-MLIR's)"),
    OpSpec("top.MaskedFill", operands=("cond", "brn"),
           attrs={"inversed": A("bool", False), "const_val": A("f64", REQUIRED)}, shape=S.broadcast_all,
           moves=Moves(operands=("brn",)),
           summary="cond ? const_val : brn (inversed: the other way round), broadcasting"),
    OpSpec("top.Reverse", attrs={"axis": A("i64", REQUIRED)}, shape=S.along_axis, moves=MOVES),
    OpSpec("top.View", operands=("input", "shape"), shape=S.given_by_result_type,
           moves=MOVES, summary="reshape to the value of the `shape` tensor; the result type carries it"),
    OpSpec("top.CumSum", operands=("input", "[dim]"), attrs={"axis": A("i64", REQUIRED)}, shape=S.along_axis),
    OpSpec("top.Trilu", attrs={"upper": A("bool", REQUIRED), "diagonal": A("i64", 0)}, shape=S.same_as_first,
           moves=MOVES),
    OpSpec("top.ShuffleChannel", attrs={"group": A("i64", REQUIRED)}, shape=NN.shuffle_channel, moves=MOVES),
    OpSpec("top.RMSNorm", operands=("input", "gamma?"), attrs={"eps": A("f64", REQUIRED)}, shape=NN.rms_norm),
    OpSpec("top.LRN", attrs={"size": A("i64", REQUIRED), "alpha": A("f64", 1e-4), "beta": A("f64", 0.75),
                             "bias": A("f64", 1.0)}, shape=S.same_as_first),
    # Index ops; indices are integers held in float tensors (as Gather's), negative ones count from the end.
    OpSpec("top.TopK", operands=("input", "[kT]"), results=("values", "indices"),
           attrs={"axis": A("i64", REQUIRED), "K": A("i64", -1), "largest": A("bool", True), "sorted": A("bool", True),
                  "replace_topk_indices": A("bool", False)},
           shape=S.topk, moves=Moves(results=("values",)),
           summary="the K largest (smallest) values along axis, sorted, and their indices"),
    OpSpec("top.GatherND", operands=("input", "indices"), attrs={"indice_dims": A("i64"), "batch_dims": A("i64", 0)},
           shape=S.gather_nd, moves=MOVES,
           summary="ONNX GatherND: slices picked by index tuples, after batch_dims shared dims"),
    # `reduction` (SCATTER_REDUCTIONS): duplicate indices combine in index order; only replacing moves elements.
    OpSpec("top.ScatterElements", operands=("input", "indices", "updates"),
           attrs={"axis": A("i64", REQUIRED), "reduction": SCATTER_REDUCTION},
           shape=S.scatter_elements, moves=Moves(operands=("input", "updates"), when=("reduction", 0)),
           summary="input with updates written (or combined, by reduction) at indices along axis"),
    OpSpec("top.ScatterND", operands=("input_data", "indices", "updates"), attrs={"reduction": SCATTER_REDUCTION},
           shape=S.scatter_nd, moves=Moves(operands=("input_data", "updates"), when=("reduction", 0)),
           summary="input with updates written (or combined, by reduction) at index tuples"),
    # TPU-MLIR's EinsumModeAttr lists ~26 equations; here any numpy/ONNX equation.
    OpSpec("top.Einsum", operands=("inputs*",), attrs={"mode": A("str", REQUIRED)}, shape=S.einsum,
           summary="Einsum over the equation in `mode` (\"bij,bjk->bik\")"),
    # Detection post-processing (`--add-postprocess`): TopOps.td's attributes; what tpudsl models of
    # them is docs/tpuc-opt.md's "--add-postprocess" table.
    OpSpec("top.YoloDetection", operands=("inputs*",),
           attrs={"net_input_h": A("i64", REQUIRED), "net_input_w": A("i64", REQUIRED),
                  "nms_threshold": A("f64", REQUIRED), "obj_threshold": A("f64", REQUIRED),
                  "keep_topk": A("i64", REQUIRED), "anchors": A("f64[]", REQUIRED),
                  "version": A("str", REQUIRED, YOLO_VERSIONS, supported=("yolov3", "yolov3_tiny", "yolov5", "yolov8")),
                  "class_num": A("i64", 80),
                  # TPU-MLIR's decode takes 3 boxes a cell whatever this says (yolov8 does not read it).
                  "num_boxes": A("i64", 3, supported=(3,)),
                  # TPU-MLIR's YoloDetectionFunc_v2 suppresses within a class whatever this says.
                  "agnostic_nms": A("bool", False, supported=(False,))},
           shape=NN.yolo_detection, verify=_f32_only,
           summary="YOLO heads decoded, thresholded and suppressed (NMS per class): rows (image, class, score, x, y, w, h)"),
    # TPU-MLIR's AddPostprocess writes every attribute (insertSsdOp); its interpreter decodes
    # CENTER_SIZE only, and takes share_location, eta 1 and variances from priorbox whatever the
    # attributes say, so other values are refused by name (docs/tpuc-opt.md, "--add-postprocess").
    OpSpec("top.DetectionOutput", operands=("inputs*",),
           attrs={"num_classes": A("i64", REQUIRED), "background_label_id": A("i64", 0),
                  "nms_threshold": A("f64", REQUIRED), "top_k": A("i64", REQUIRED),
                  "code_type": A("str", REQUIRED, CODE_TYPES, supported=("CENTER_SIZE",)),
                  "keep_top_k": A("i64", REQUIRED), "confidence_threshold": A("f64", REQUIRED),
                  "share_location": A("bool", True, supported=(True,)),
                  "variance_encoded_in_target": A("f64", 0.0, supported=(0.0,)),
                  "eta": A("f64", 1.0, supported=(1.0,))},
           shape=NN.detection_output, verify=_f32_only,
           summary="SSD's boxes decoded by the priors, thresholded and suppressed (NMS per class): rows "
                   "(image, label, score, xmin, ymin, xmax, ymax)"),
    # Recurrent layers, ONNX's layouts and gate orders (LSTM i,o,f,c; GRU z,r,h); TopOps.td's
    # operands and attributes, and LSTM's `peephole` (ONNX's P [dirs, 3*H], order i,o,f; ours:
    # TopOps.td has none). A reverse ONNX layer is a forward one between two top.Reverse.
    OpSpec("top.LSTM",
           operands=("input", "filter", "recurrence", "bias?", "initial_h?", "initial_c?", "cont?", "[peephole]"),
           results=("Y?", "Y_h?", "Y_c?"),
           attrs={"hidden_size": A("i64", REQUIRED), "bidirectional": A("bool", REQUIRED),
                  "batch_first": A("bool", False)},
           shape=NN.recurrent(4, 2), check=NN.no_cont,
           summary="one-layer LSTM (ONNX's, default activations): Y, final hidden and cell states"),
    OpSpec("top.GRU", operands=("input", "filter", "recurrence", "bias?", "initial_h?"), results=("Y?", "Y_h?"),
           attrs={"hidden_size": A("i64", REQUIRED), "bidirectional": A("bool", REQUIRED),
                  "linear_before_reset": A("bool", True), "batch_first": A("bool", False)},
           shape=NN.recurrent(3, 1),
           summary="one-layer GRU (ONNX's, default activations): Y and the final hidden state"),
    # TPU-MLIR's enums (torch's grid_sampler): mode 0 bilinear, 1 nearest, 2 bicubic; padding_mode
    # 0 zeros, 1 border, 2 reflection.
    OpSpec("top.GridSampler", operands=("input", "grid"),
           attrs={"mode": A("i64", REQUIRED, supported=(0, 1, 2)),
                  "padding_mode": A("i64", REQUIRED, supported=(0, 1, 2)),
                  "align_corners": A("bool", False)},
           shape=NN.grid_sampler,
           summary="input [N, C, H, W] sampled at grid [N, Ho, Wo, 2] ((x, y) in [-1, 1]): [N, C, Ho, Wo]; "
                   "or [N, C, D, H, W] at [N, Do, Ho, Wo, 3]"),
    OpSpec("top.Depth2Space",
           attrs={"block_h": A("i64", REQUIRED), "block_w": A("i64", REQUIRED), "is_CRD": A("bool", REQUIRED),
                  "is_inversed": A("bool", REQUIRED), "in_is_NCHW": A("bool", True), "out_is_NCHW": A("bool", True),
                  "swap_cr": A("bool", False)},
           shape=S.depth2space, moves=MOVES),
]

# ---- families --------------------------------------------------------------------------------

# Unary element-wise ops: (name, attributes). The result has the input's shape.
UNARY: list[tuple[str, dict[str, A]]] = [
    *((name, {}) for name in (
        "Exp", "Log", "Sqrt", "Rsqrt", "Abs", "Erf", "SiLU", "Floor", "Ceil", "Round", "Sign", "Softsign",
        "Softplus", "Sin", "Cos", "Sinh", "Cosh", "Tan", "Arctanh", "Arccos", "Arcsin", "Arcsinh", "Arccosh", "Mish",
        "HardSwish",
    )),
    ("Relu", {"relu_limit": A("f64", -1.0)}),
    ("Tanh", dict(ROUND)),
    ("Sigmoid", {"scale": A("f64", 1.0), "bias": A("f64", 0.0), "log": A("bool", False), **ROUND}),
    ("LeakyRelu", {"alpha": A("f64", REQUIRED), **ROUND}),
    ("Elu", {"alpha": A("f64", 1.0)}),
    ("HardSigmoid", {"alpha": A("f64", 0.2), "beta": A("f64", 0.5)}),  # ONNX defaults
    ("GELU", {"approx_mode": A("str", "normal", ("normal", "tanh", "sigm")), **ROUND}),
    ("Swish", {"beta": A("f64", REQUIRED), **ROUND}),
    ("Pow", {"exponent": A("f64", REQUIRED)}),
    ("Pow2", {"const_val": A("f64", REQUIRED)}),  # const_val ** x
    ("Clip", {"min": A("f64", REQUIRED), "max": A("f64", REQUIRED)}),
    # The target is the result's element type; round_mode: float -> integer; saturate (ONNX's,
    # not in TopOps.td): a float8 target clamps out-of-range values to its largest finite value.
    ("Cast", {**ROUND, "saturate": A("bool", True)}),
    ("Reciprocal", {"const_val": A("f64", 1.0), **RELU}),
    ("CompareConst", {"mode": A("str", REQUIRED, COMPARE_MODES), "const_val": A("f64", REQUIRED),
                      "inversed": A("bool", False), **SCALAR}),
]

# n-ary broadcasting ops over a variadic `inputs`.
NARY: list[tuple[str, dict[str, A]]] = [
    ("Add", {**RELU, "coeff": A("f64[]"), **SCALAR}),
    ("Sub", {"is_reverse": A("bool", False), **RELU, "coeff": A("f64[]"), **SCALAR}),
    ("Mul", {**RELU, **SCALAR}),
    ("Div", {"is_reverse": A("bool", False), **RELU, **SCALAR}),
    ("Min", {}),
    ("Max", {}),
    ("Mod", {}),  # C fmod: the sign of the dividend
    ("Remainder", {}),  # Python/torch remainder: the sign of the divisor
    ("Pow3", {}),  # x ** y
]

# Tensor-with-scalar ops: input (op) const_val; `is_reverse` means const_val (op) input.
CONST: list[tuple[str, dict[str, A]]] = [
    ("AddConst", dict(RELU)),
    ("SubConst", {"is_reverse": A("bool", False), **RELU}),
    ("MulConst", dict(RELU)),
    ("DivConst", {"is_reverse": A("bool", False), **RELU}),
    ("MinConst", {}),
    ("MaxConst", {}),
]

POOL_ATTRS = {
    **WINDOW,
    "dilations": A("i64[]"),  # not in TopOps.td: ONNX pooling's dilations; absent: all 1
    "ceil_mode": A("bool"),
    **AUTO_PAD,
    # TPU-MLIR's adaptive windows (input size not a multiple of the output) and pad fill value
    # are not modelled: top.AdaptiveAvgPool is the adaptive pool, pads count as -inf (max) or 0.
    "is_adaptive": A("bool", False, supported=(False,)),
    "keepdims": A("bool", True),
    "pad_value": A("i64", 0, supported=(0,)),
    "count_include_pad": A("bool", False),
    **RELU,
    **ROUND,
    "first_round_mode": A("str", "HalfAwayFromZero", ROUND_MODES),
}

SPECS += [OpSpec(f"top.{name}", attrs=attrs, shape=S.same_as_first) for name, attrs in UNARY]
SPECS += [OpSpec(f"top.{name}", operands=("inputs*",), attrs=attrs, shape=S.broadcast_all) for name, attrs in NARY]
SPECS += [
    OpSpec(f"top.{name}", attrs={"const_val": A("f64", REQUIRED), **attrs, **SCALAR}, shape=S.same_as_first)
    for name, attrs in CONST
]
# MaxPool picks elements (moves); AvgPool computes.
SPECS += [OpSpec("top.MaxPool", attrs=dict(POOL_ATTRS), shape=NN.pool, moves=MOVES),
          OpSpec("top.AvgPool", attrs=dict(POOL_ATTRS), shape=NN.pool)]
SPECS.append(OpSpec("top.MaxPoolWithMask", results=("output", "mask"), attrs=dict(POOL_ATTRS), shape=NN.pool_with_mask,
                    moves=MOVES,
                    summary="MaxPool whose mask holds where each maximum is: its row-major index (h*W+w in 2-D) in its (n, c) plane"))

# Older TPU-MLIR files name every layer by a `name` attribute as well as its loc; it is kept as
# written (tools read the loc).
for spec in SPECS:
    spec.attrs = {**spec.attrs, "name": A("str")}

OPS = [define(spec) for spec in SPECS]
Top = Dialect("top", OPS, [])
