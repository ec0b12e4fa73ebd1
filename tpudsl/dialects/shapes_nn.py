"""Shape rules of the neural-network layers: convolution, pooling, matmul, per-channel affine
ops and normalizations. Same contract as shapes.py: `(in_shapes, attrs) -> [out_shape, ...]`,
raising ShapeError on inconsistent input."""

from __future__ import annotations

import math

from tpudsl.dialects.geometry.conv_filter import ic_parallel_of
from tpudsl.dialects.geometry.window import auto_pads, padding_only_window, transposed_out_size, window_out_size
from tpudsl.dialects.geometry.ssd import SsdInputError, ssd_geometry
from tpudsl.dialects.geometry.yolo import ROW, HeadError, check_anchors, check_heads, check_v8_head
from tpudsl.dialects.opdef import AttrView, Shape, ShapeError
from tpudsl.dialects.opdef import fmt_shape as fmt
from tpudsl.dialects.shapes import Ins, axis_in, broadcast, int_list, need_rank, numel, operand, per_channel


def prelu(ins: Ins, a: AttrView) -> list[Shape]:
    x = operand(ins, 0, "input")
    slope = operand(ins, 1, "slope")
    channels = x[1] if len(x) > 1 else 1
    if numel(slope) not in (1, channels):
        raise ShapeError(f"slope has shape {fmt(slope)}, expected 1 or {channels} values")
    return [x]


def channel_affine(ins: Ins, a: AttrView) -> list[Shape]:
    """Scale(input, scale, bias) and BatchNorm(input, mean, variance, gamma?, beta?): per-channel params."""
    x = operand(ins, 0, "input")
    if len(x) < 2:
        raise ShapeError(f"input must have rank >= 2 (N, C, ...), got {fmt(x)}")
    for i in range(1, len(ins)):
        per_channel(ins, i, x[1], f"operand #{i}")
    return [x]


# ---- convolution and pooling --------------------------------------------------------------


def _spatial(x: Shape, a: AttrView, what: str = "input") -> tuple[list[int], list[int], list[int], list[int]]:
    """kernel_shape, strides, pads (begins then ends) and dilations, checked against input `x`."""
    kernel = list(a["kernel_shape"])
    k = len(kernel)
    if not 1 <= k <= 3:
        raise ShapeError(f"kernel_shape must have 1 to 3 entries, got {kernel}")
    if len(x) != k + 2:
        raise ShapeError(f"{what} must have rank {k + 2} for a {k}-D kernel_shape, got {fmt(x)}")
    if any(v < 1 for v in kernel):
        raise ShapeError(f"kernel_shape {kernel} must be positive")
    strides = int_list(a, "strides", k, 1)
    pads = int_list(a, "pads", 2 * k, 0)
    dilations = int_list(a, "dilations", k, 1)
    if any(v < 1 for v in strides + dilations):
        raise ShapeError(f"strides {strides} and dilations {dilations} must be positive")
    if any(v < 0 for v in pads):
        raise ShapeError(f"pads {pads} must not be negative")
    return kernel, strides, pads, dilations


def _pads(x: Shape, kernel: list[int], strides: list[int], pads: list[int], dilations: list[int], a: AttrView) -> list[int]:
    """`pads`, unless auto_pad SAME_UPPER/SAME_LOWER/VALID overrides them."""
    return auto_pads(x[2:], kernel, strides, dilations, a.get("auto_pad", "")) or pads


def _out_sizes(x: Shape, kernel: list[int], strides: list[int], pads: list[int], dilations: list[int],
               ceil_mode: bool) -> list[int]:
    """Window count along each spatial axis; an error when a window does not fit."""
    k = len(kernel)
    out = []
    for i in range(k):
        size, pb, pe = x[2 + i], pads[i], pads[k + i]
        o = window_out_size(size, kernel[i], strides[i], dilations[i], pb, pe, ceil_mode)
        if o < 1:
            raise ShapeError(
                f"kernel {kernel[i]} (dilation {dilations[i]}) is larger than the padded input {size + pb + pe}"
                f" along spatial axis {i}"
            )
        out.append(o)
    return out


def conv(ins: Ins, a: AttrView) -> list[Shape]:
    """Conv(input [N,IC,*S], filter [OC,IC/g,*K], bias?) for 1-D, 2-D and 3-D kernels."""
    x = operand(ins, 0, "input")
    w = operand(ins, 1, "filter")
    kernel, strides, pads, dilations = _spatial(x, a)
    pads = _pads(x, kernel, strides, pads, dilations, a)
    if any(a.get("inserts") or []):
        raise ShapeError(f"inserts {a['inserts']} (zeros inserted between input pixels) are not supported")
    group = a.get("group", 1)
    if len(w) != len(x):
        raise ShapeError(f"filter must have rank {len(x)} like the input, got {fmt(w)}")
    if list(w[2:]) != kernel:
        raise ShapeError(f"filter {fmt(w)} does not match kernel_shape {kernel}")
    if group < 1 or x[1] % group or w[0] % group:
        raise ShapeError(f"group {group} must divide input channels {x[1]} and output channels {w[0]}")
    if w[1] * group != x[1]:
        raise ShapeError(f"input has {x[1]} channels but filter {fmt(w)} with group {group} expects {w[1] * group}")
    per_channel(ins, 2, w[0], "bias")
    return [(x[0], w[0], *_out_sizes(x, kernel, strides, pads, dilations, False))]


def deconv(ins: Ins, a: AttrView) -> list[Shape]:
    """Deconv(input, filter, bias?): filter is [IC, OC/g, *K] (ONNX layout) unless
    dynweight_reorderd, which means a Permute already made it [OC, IC/g, *K]. tpu.Deconv INT8 after
    --weight-reorder: a merged [1, oc, 1, 3] bias (coeff_merged)."""
    ins = _merged_bias(ins, a)
    x = operand(ins, 0, "input")
    w = operand(ins, 1, "filter")
    kernel, strides, pads, dilations = _spatial(x, a)
    group = a.get("group", 1)
    k = len(kernel)
    out_pad = int_list(a, "output_padding", k, 0)
    if len(w) != len(x):
        raise ShapeError(f"filter must have rank {len(x)} like the input, got {fmt(w)}")
    if list(w[2:]) != kernel:
        raise ShapeError(f"filter {fmt(w)} does not match kernel_shape {kernel}")
    if group < 1 or x[1] % group:
        raise ShapeError(f"group {group} must divide input channels {x[1]}")
    if a.get("dynweight_reorderd", False):
        oc, ic = w[0], w[1] * group
        layout = "[oc, ic/g, *k] (dynweight_reorderd=true)"
        if oc % group:
            raise ShapeError(f"group {group} must divide output channels {oc}")
    else:
        ic, oc = w[0], w[1] * group
        layout = "[ic, oc/g, *k] (dynweight_reorderd=false)"
    if ic != x[1]:
        raise ShapeError(f"input has {x[1]} channels but filter {fmt(w)} in layout {layout} expects {ic}")
    per_channel(ins, 2, oc, "bias")
    spatial = []
    for i in range(k):
        size = transposed_out_size(x[2 + i], kernel[i], strides[i], dilations[i], pads[i], pads[k + i], out_pad[i])
        if size < 1:
            raise ShapeError(f"deconv output size {size} along spatial axis {i} is not positive")
        spatial.append(size)
    return [(x[0], oc, *spatial)]


def pool(ins: Ins, a: AttrView) -> list[Shape]:
    """MaxPool/AvgPool over [N, C, *S]; keepdims=false drops the spatial dims of a global pool.
    MaxPoolWithMask's second result (the mask) has the output's shape."""
    x = operand(ins, 0, "input")
    kernel, strides, pads, dilations = _spatial(x, a)
    pads = _pads(x, kernel, strides, pads, dilations, a)
    spatial = _out_sizes(x, kernel, strides, pads, dilations, bool(a.get("ceil_mode", False)))
    k = len(kernel)
    for i in range(k):
        empty = padding_only_window(x[2 + i], kernel[i], strides[i], dilations[i], pads[i], spatial[i])
        if empty is not None:
            raise ShapeError(
                f"window {empty} along spatial axis {i} reads only padding (kernel {kernel[i]}, dilation"
                f" {dilations[i]}, pads {pads[i]}/{pads[k + i]}): its pooled value is not defined"
            )
    out: Shape = (x[0], x[1], *spatial)
    if not a.get("keepdims", True):
        if any(s != 1 for s in spatial):
            raise ShapeError(f"keepdims=false needs a global pool, but the output is {fmt(out)}")
        out = (x[0], x[1])
    return [out]


def pool_with_mask(ins: Ins, a: AttrView) -> list[Shape]:
    """MaxPoolWithMask: the pooled output and the mask (where each maximum was), same shape."""
    (out,) = pool(ins, a)
    return [out, out]


def adaptive_pool(ins: Ins, a: AttrView) -> list[Shape]:
    x = operand(ins, 0, "input")
    size = list(a["output_size"])
    if len(x) != len(size) + 2:
        raise ShapeError(f"output_size {size} needs an input of rank {len(size) + 2}, got {fmt(x)}")
    if any(v < 1 for v in size):
        raise ShapeError(f"output_size {size} must be positive")
    return [(x[0], x[1], *size)]


# ---- matmul -------------------------------------------------------------------------------


def matmul(ins: Ins, a: AttrView) -> list[Shape]:
    """numpy.matmul shapes, after the optional transposes of the last two dims of each side."""
    left = list(operand(ins, 0, "input"))
    right = list(operand(ins, 1, "right"))
    if a.get("hdim_is_batch", False):
        raise ShapeError("hdim_is_batch=true is not supported")
    if a.get("left_transpose", False) and len(left) >= 2:
        left[-2], left[-1] = left[-1], left[-2]
    if a.get("right_transpose", False) and len(right) >= 2:
        right[-2], right[-1] = right[-1], right[-2]
    if not left or not right:
        raise ShapeError("matmul operands must have rank >= 1")
    lvec, rvec = len(left) == 1, len(right) == 1
    lm = [1, *left] if lvec else left
    rm = [*right, 1] if rvec else right
    if lm[-1] != rm[-2]:
        raise ShapeError(f"contracting dims differ: input {fmt(left)} and right {fmt(right)} (after transposes)")
    batch = list(broadcast(tuple(lm[:-2]), tuple(rm[:-2])))
    out = batch + ([] if lvec else [lm[-2]]) + ([] if rvec else [rm[-1]])
    if a.get("output_transpose", False):
        if len(out) < 2:
            raise ShapeError("output_transpose needs a result of rank >= 2")
        out[-2], out[-1] = out[-1], out[-2]
    if len(ins) > 2 and ins[2] is not None and broadcast(tuple(out), ins[2]) != tuple(out):
        raise ShapeError(f"bias {fmt(ins[2])} does not broadcast to the result {fmt(out)}")
    if not a.get("keep_dims", True) and len(out) > 2:
        out = [numel(out[:-1]), out[-1]]
    return [tuple(out)]


def a16_matmul(ins: Ins, a: AttrView) -> list[Shape]:
    """tpu.A16MatMul: input [..., K] times the 2-D weight ([N, K] with w_transpose, else [K, N]),
    scales (and zero points, when present) [N, G]: G = 1 per output channel (q_group_size 0), else
    K / q_group_size groups of consecutive K; bias broadcast to the result [..., N]. 4 bits: two
    weights per byte along K (the weight [N, K / 2], w_transpose only)."""
    x, w, scale = (operand(ins, i, what) for i, what in enumerate(("input", "weight", "scale")))
    if len(w) != 2 or not x:
        raise ShapeError(f"needs a 2-D weight and an input of rank >= 1, got weight {fmt(w)}, input {fmt(x)}")
    n, k = w if a.get("w_transpose", False) else w[::-1]
    if a.get("weight_bits", 8) == 4:
        if not a.get("w_transpose", False):
            raise ShapeError("4-bit weights are stored transposed: w_transpose must be true")
        k *= 2
    if x[-1] != k:
        raise ShapeError(f"contracting dims differ: input {fmt(x)} and weight {fmt(w)} "
                         f"(w_transpose={str(a.get('w_transpose', False)).lower()})")
    size = a.get("q_group_size", 0)
    if size < 0 or (size and k % size):
        raise ShapeError(f"q_group_size {size} must be 0 or divide K = {k}")
    groups = k // size if size else 1
    for what, v in (("scale", scale), ("zp", ins[3] if len(ins) > 3 else None)):
        if v is not None and tuple(v) != (n, groups):
            raise ShapeError(f"{what} {fmt(v)} must be {n}x{groups}: one per output channel"
                             + (f" and group of {size}" if size else ""))
    out = (*x[:-1], n)
    if len(ins) > 4 and ins[4] is not None and broadcast(out, ins[4]) != out:
        raise ShapeError(f"bias {fmt(ins[4])} does not broadcast to the result {fmt(out)}")
    return [out]


# ---- normalizations ----------------------------------------------------------------------


def layer_norm(ins: Ins, a: AttrView) -> list[Shape]:
    """Normalizes input dims axis.. ; weight/bias (if present) hold one value per normalized element."""
    x = operand(ins, 0, "input")
    axis = axis_in(a["axis"], len(x))
    normalized = x[axis:]
    given = a.get("normalized_shape") or []
    if given and tuple(given) != normalized:
        raise ShapeError(f"normalized_shape {list(given)} is not the input's dims from axis {axis}: {fmt(normalized)}")
    for i, what in ((1, "weight"), (2, "bias")):
        per_channel(ins, i, numel(normalized), what)
    return [x]


def instance_norm(ins: Ins, a: AttrView) -> list[Shape]:
    x = operand(ins, 0, "input")
    if len(x) < 3:
        raise ShapeError(f"input must have rank >= 3 (N, C, spatial...), got {fmt(x)}")
    per_channel(ins, 1, x[1], "weight")
    per_channel(ins, 2, x[1], "bias")
    return [x]


def group_norm(ins: Ins, a: AttrView) -> list[Shape]:
    x = operand(ins, 0, "input")
    groups = a["num_groups"]
    if len(x) < 2 or groups < 1 or x[1] % groups:
        raise ShapeError(f"num_groups {groups} must divide the {x[1] if len(x) > 1 else '?'} channels of {fmt(x)}")
    per_channel(ins, 1, x[1], "weight")
    per_channel(ins, 2, x[1], "bias")
    return [x]


def rms_norm(ins: Ins, a: AttrView) -> list[Shape]:
    """Normalizes the last dim; gamma (if present) holds one value per element of it."""
    x = operand(ins, 0, "input")
    if not x:
        raise ShapeError("input must have rank >= 1")
    per_channel(ins, 1, x[-1], "gamma")
    return [x]


def shuffle_channel(ins: Ins, a: AttrView) -> list[Shape]:
    x = operand(ins, 0, "input")
    group = a["group"]
    if len(x) < 2 or group < 1 or x[1] % group:
        raise ShapeError(f"group {group} must divide the channels of {fmt(x)}")
    return [x]


def _merged_bias(ins: Ins, a: AttrView) -> Ins:
    """INT8 after --weight-reorder (coeff_merged): the bias operand is (bias, multiplier, rshift) per
    output channel, [1, oc, 1, 3]; the rules then check it as an [oc] bias."""
    if a.get("coeff_merged", False) and len(ins) > 2 and ins[2] is not None:
        if len(ins[2]) != 4 or ins[2][0] != 1 or tuple(ins[2][2:]) != (1, 3):  # type: ignore[arg-type]
            raise ShapeError(f"merged coefficients have shape {fmt(ins[2])}, expected [1, oc, 1, 3]")  # type: ignore[arg-type]
        return [*ins[:2], (ins[2][1],)]  # type: ignore[index]
    return ins


def tpu_conv2d(ins: Ins, a: AttrView) -> list[Shape]:
    """tpu.Conv2D: the filter is [oc, ic/g, kh, kw], or after --weight-reorder
    [1, oc, ceil((ic/g) / P), kh*kw*P] (geometry/conv_filter.py; P = 1 is TPU-MLIR's F32
    `1x65x16x9` for oc=65, ic=16, 3x3)."""
    x, w = operand(ins, 0, "input"), operand(ins, 1, "filter")
    kernel, group = list(a["kernel_shape"]), a.get("group", 1)
    ins = _merged_bias(ins, a)
    if len(x) > 1 and group >= 1 and x[1] % group == 0:
        icg = x[1] // group
        if ic_parallel_of(w, icg, kernel) is not None:
            ins = [x, (w[1], icg, *kernel), *ins[2:]]
    return conv(ins, a)


def grid_sampler(ins: Ins, a: AttrView) -> list[Shape]:
    """input [N, C, H, W], grid [N, Ho, Wo, 2] -> [N, C, Ho, Wo]; volumetric: input [N, C, D, H, W],
    grid [N, Do, Ho, Wo, 3] -> [N, C, Do, Ho, Wo] (mode 0 or 1: bicubic is 2-D only)."""
    x, grid = operand(ins, 0, "input"), operand(ins, 1, "grid")
    need_rank(x, (4, 5), "input")
    need_rank(grid, (len(x),), "grid")
    if grid[0] != x[0] or grid[-1] != len(x) - 2:
        raise ShapeError(f"grid {fmt(grid)} is not [N, *out, {len(x) - 2}] for input {fmt(x)}")
    if len(x) == 5 and a["mode"] == 2:
        raise ShapeError("mode 2 (bicubic) of a 5-D (volumetric) input is not modelled (bilinear and nearest are)")
    return [(x[0], x[1], *grid[1:-1])]


def yolo_detection(ins: Ins, a: AttrView) -> list[Shape]:
    """YOLO heads (geometry/yolo.py) -> [1, 1, N * keep_topk, 7] detection rows."""
    heads = [operand(ins, i, "head") for i in range(len(ins))]
    try:
        if a["version"] == "yolov8":
            check_v8_head(heads, a["class_num"], a["anchors"])
        else:
            check_heads(heads, a["class_num"], a["num_boxes"])
            check_anchors(len(heads), a["num_boxes"], len(a["anchors"]))
    except HeadError as e:
        raise ShapeError(str(e)) from None
    if not 0.0 < a["obj_threshold"] < 1.0:
        raise ShapeError(f"obj_threshold {a['obj_threshold']} is not in (0, 1): it is a probability")
    _check_iou("nms_threshold", a["nms_threshold"])
    for key in ("keep_topk", "net_input_h", "net_input_w"):
        if a[key] <= 0:
            raise ShapeError(f"{key} {a[key]} must be positive")
    return [(1, 1, heads[0][0] * a["keep_topk"], ROW)]


def detection_output(ins: Ins, a: AttrView) -> list[Shape]:
    """SSD's loc, conf and priorbox (geometry/ssd.py) -> [1, 1, N * keep_top_k, 7] detection rows."""
    shapes = [operand(ins, i, "input") for i in range(len(ins))]
    try:
        images, _, classes = ssd_geometry(shapes, a["num_classes"])
    except SsdInputError as e:
        raise ShapeError(str(e)) from None
    if not 0 <= a["background_label_id"] < classes:
        raise ShapeError(f"background_label_id {a['background_label_id']} is not a class of 0..{classes - 1} "
                         "(TPU-MLIR's decode skips a background label -1 with share_location)")
    for key in ("top_k", "keep_top_k"):
        if a[key] <= 0:
            raise ShapeError(f"{key} {a[key]} must be positive (Caffe's -1, every box, is not modelled)")
    _check_iou("nms_threshold", a["nms_threshold"])
    if math.isnan(a["confidence_threshold"]):  # no score would pass, silently
        raise ShapeError("confidence_threshold is nan: a score threshold must be a number")
    return [(1, 1, images * a["keep_top_k"], ROW)]


def _check_iou(key: str, value: float) -> None:
    """An NMS threshold is an IoU, in [0, 1] (NaN is not: no box would be suppressed, silently)."""
    if not 0.0 <= value <= 1.0:
        raise ShapeError(f"{key} {value} is not in [0, 1]: it is an IoU")


# ---- recurrent layers ---------------------------------------------------------------------


def recurrent(gates: int, states: int):
    """The shape rule of an ONNX-layout recurrent layer of `gates` gates and `states` states
    (LSTM 4 and 2: h and c; GRU 3 and 1):
    input [seq, batch, in] ([batch, seq, in] when batch_first), filter [dirs, gates*H, in],
    recurrence [dirs, gates*H, H], bias [dirs, 2*gates*H], initial states [dirs, batch, H]
    ([batch, dirs, H] when batch_first), LSTM's peephole (operand 7) [dirs, 3*H]. Results: Y
    [seq, dirs, batch, H] ([batch, seq, dirs, H]) and one final state per state operand, shaped like it."""

    def rule(ins: Ins, a: AttrView) -> list[Shape]:
        x = operand(ins, 0, "input")
        if len(x) != 3:
            raise ShapeError(f"input must have rank 3, got {fmt(x)}")
        hidden, dirs = a["hidden_size"], 2 if a["bidirectional"] else 1
        seq, batch = (x[1], x[0]) if a["batch_first"] else (x[0], x[1])
        want = {1: (dirs, gates * hidden, x[2]), 2: (dirs, gates * hidden, hidden), 3: (dirs, 2 * gates * hidden)}
        state = (batch, dirs, hidden) if a["batch_first"] else (dirs, batch, hidden)
        want.update({i: state for i in range(4, 4 + states)})
        if gates == 4:
            want[7] = (dirs, 3 * hidden)
        for i, shape in want.items():
            if i < len(ins) and ins[i] is not None and tuple(ins[i]) != shape:
                raise ShapeError(f"operand #{i} has shape {fmt(ins[i])}, expected {fmt(shape)}")
        y = (batch, seq, dirs, hidden) if a["batch_first"] else (seq, dirs, batch, hidden)
        return [y, *[state] * states]

    return rule


def no_cont(ins: Ins, a: AttrView) -> None:
    """LSTM's `cont` operand (Caffe's sequence-continuation flags) is not modelled."""
    if len(ins) > 6 and ins[6] is not None:
        raise ShapeError("operand 'cont' (sequence continuation flags) is not supported: it must be none")
