"""How one op runs in local memory: its tensors as 4-D views, its slices along N and H, and the tiles
(local tensors) each slice loads, computes and stores.

`--layer-group` chooses the number of slices (nsecs, hsecs) with `footprint`; codegen walks the same
slices with `slice_plan`, so both see the same tiles. The output is split into near-equal parts
along N and H; each input's part comes from `BACKWARD_UPDATE_SLICE`, keyed by the op's kind (a
window op's input rows include the halo its kernel reads; an element-wise input follows the output,
except where it broadcasts). Weights (and any operand an op reads whole, such as a dynamic filter or
MatMul's right side) are never sliced: they are loaded whole, once per op.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from tpudsl.backend.chips import Chip, chip_named
from tpudsl.backend import isa
from tpudsl.backend.isa import lane_bytes
from tpudsl.dialects.geometry.permute import fold
from tpudsl.dialects.opdef import SPECS, AttrView, describe
from tpudsl.dialects.quant import UniformQuantizedType
from tpudsl.ir.diagnostics import TpudslError

Dims4 = tuple[int, int, int, int]

# Tpu op -> kind: how its slices map back to its inputs and which instruction computes it.
KINDS: dict[str, str] = {
    "tpu.Conv2D": "conv", "tpu.Deconv": "deconv", "tpu.Pool2D": "pool", "tpu.MatMul": "matmul", "tpu.A16MatMul": "matmul", "tpu.Concat": "concat",
    "tpu.Permute": "permute", "tpu.Slice": "slice", "tpu.Upsample": "upsample", "tpu.Softmax": "reduce", "tpu.LayerNorm": "reduce",
    "tpu.Lut": "lut", "tpu.RequantInt": "unary",
    "tpu.RequantIntAxis": "lut",  # as a Lut: the input follows the output, operand 1 (quant) a whole tile
    "tpu.Reduce": "reduce", "tpu.Pad": "pad", "tpu.Interp": "interp",
    "tpu.GroupNorm": "groupnorm", "tpu.InstanceNorm": "groupnorm",
    "tpu.Scale": "scale", "tpu.RMSNorm": "reduce",
    **{f"tpu.{n}": "binary" for n in ("Div", "Pow3", "Mod", "Remainder", "Compare", "PReluOp")},
    **{f"tpu.{n}": "unary" for n in ("Clip", "Reciprocal", "Pow", "Pow2", "CompareConst")},
    "tpu.Expand": "expand", "tpu.Depth2Space": "depth2space", "tpu.Tile": "tile",
    "tpu.Where": "select", "tpu.MaskedFill": "select",
    "tpu.Arg": "arg", "tpu.TopK": "topk", "tpu.CumSum": "cumsum", "tpu.Trilu": "trilu", "tpu.Reverse": "reverse",
    "tpu.LRN": "lrn", "tpu.MaxPoolWithMask": "poolmask",
    **{f"tpu.{n}": "binary" for n in ("Add", "Sub", "Mul", "Max", "Min")},
    **{f"tpu.{n}": "unary" for n in ("AddConst", "SubConst", "MulConst", "MaxConst", "MinConst", "Relu", "Active",
                                     "Cast", "DivConst", "LeakyRelu")},
}
# Kinds with no BDC record: each slice's input part moves through local memory to its output place.
MOVES = ("concat", "permute", "slice", "expand", "depth2space", "tile", "reverse")
# Ops that only move data in global memory (no local tiles, no slices): a new shape, the same bytes;
# Gather with constant indices: one contiguous copy per (outer index, gathered index).
GLOBAL_MOVES = ("tpu.Reshape", "tpu.Squeeze", "tpu.Unsqueeze", "tpu.Gather")
# Ops codegen_index.py emits whole, without layer-group slices: the gathers and scatters by
# computed indices (one global record each: their data is read whole), Einsum (strided loads
# around BdcMatMul, cut along its batch by itself), YoloDetection and DetectionOutput (one global
# record each), Yuv2rgbFormula (one global record: a pixel's chroma lies half a frame away from its
# luma), GridSampler (one global record: a grid point may read any pixel) and LSTM/GRU (one global
# record: each step reads the state the step before wrote).
SELF_EMITTED = ("tpu.GatherElements", "tpu.GatherND", "tpu.ScatterElements", "tpu.ScatterND", "tpu.Einsum",
                "tpu.YoloDetection", "tpu.DetectionOutput", "tpu.Yuv2rgbFormula", "tpu.GridSampler", "tpu.LSTM",
                "tpu.GRU")
GLOBAL_ONLY = (*GLOBAL_MOVES, *SELF_EMITTED)
ESIZE = isa.DTYPE_BYTES  # bytes an element of each type the backend models
# The ops with instructions on int8 tensors (docs/backend.md, INT8); any other op on one is an error.
INT8_OPS = ("tpu.Conv2D", "tpu.Deconv", "tpu.Pool2D", "tpu.MatMul", "tpu.Add", "tpu.Sub", "tpu.Mul", "tpu.MulConst",
            "tpu.AddConst", "tpu.SubConst", "tpu.Lut", "tpu.Clip", "tpu.Softmax", "tpu.RequantInt",
            "tpu.RequantIntAxis", "tpu.Cast", "tpu.Concat",
            "tpu.Permute", "tpu.Slice", "tpu.Yuv2rgbFormula",
            *GLOBAL_MOVES)


def attrs_of(op: Operation) -> AttrView:
    return AttrView(op.attributes, SPECS[op.name])


def shape_of(value: SSAValue) -> tuple[int, ...]:
    return _recalled(value, _shape_of)


def _shape_of(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def nbytes(value: SSAValue) -> int:
    """The bytes a tensor value occupies in global memory (its elements, densely packed)."""
    size = ESIZE[dtype_of(value)]
    for d in shape_of(value):
        size *= d
    return size


def dtype_of(value: SSAValue) -> str:
    """The element type's name in ESIZE: a float, i8/u8 (a `!quant.uniform` stores them; its zero
    point is the records' business, `zero_point`), i32."""
    return _recalled(value, _dtype_of)


def _dtype_of(value: SSAValue) -> str:
    assert isinstance(value.type, TensorType)
    element = value.type.element_type
    if isinstance(element, UniformQuantizedType):
        name = f"{'i' if element.is_signed else 'u'}{element.storage_width}"
    else:
        name = f"i{element.width.data}" if isinstance(element, IntegerType) else _printed(element)
    if name not in ESIZE:
        raise TpudslError(f"backend: element type {name} is not modelled (only {', '.join(ESIZE)})")
    return name


def check_f32(op: Operation, record: str) -> None:
    """A record that reads and writes f32 only: an operand or result of another type (none-typed
    ones, absent optional operands and results, aside) is an error naming the op, the types and the record."""
    kinds = {dtype_of(v) for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)}
    if kinds != {"f32"}:
        raise TpudslError(f"backend: {describe(op)}: tensors of types {sorted(kinds)} are not modelled "
                          f"({record} reads and writes f32)")


@functools.cache
def _printed(element: Attribute) -> str:
    """A float type's name (`f32`): printing an attribute is slow, and the group search asks often."""
    return str(element)


def zero_point(value: SSAValue) -> int:
    """The stored value of 0.0 of a per-tensor `!quant.uniform` (asymmetric INT8); 0 otherwise
    (per-axis weights are symmetric: check_int8 refuses per-axis zero points)."""
    element = value.type.element_type  # type: ignore[attr-defined]
    return element.zero_point if isinstance(element, UniformQuantizedType) and not element.is_per_axis else 0


def as4d(op: Operation, shape: Sequence[int]) -> Dims4:
    """A shape of rank <= 4 right-aligned to (n, c, h, w)."""
    if len(shape) > 4:
        raise TpudslError(f"backend: {describe(op)} has a rank-{len(shape)} tensor; only rank <= 4 is modelled")
    return tuple([1] * (4 - len(shape)) + list(shape))  # type: ignore[return-value]


def contiguous(shape: Dims4) -> Dims4:
    n, c, h, w = shape
    return (c * h * w, h * w, w, 1)


@dataclass(frozen=True)
class Tile:
    """A local tensor of one slice: `shape` elements of `value`'s 4-D view (strides `strides`, in
    elements) starting at `start`, after `base` elements (where a Slice's window begins)."""

    value: SSAValue
    start: Dims4
    shape: Dims4
    strides: Dims4
    base: int = 0

    @property
    def offset(self) -> int:
        """Elements from the start of `value` to the tile's first element."""
        return self.base + sum(s * st for s, st in zip(self.start, self.strides, strict=True))


@dataclass(frozen=True)
class SlicePlan:
    inputs: list[Tile]  # the sliced operands, in operand order
    output: Tile
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)  # top, bottom, left, right of this slice
    npads: tuple[int, int] = (0, 0)  # before, after along N (Pad's slices)
    extra: tuple[Tile, ...] = ()  # the parts of the op's further results (Arg's values, TopK's indices, a mask)
    # a C slice's part of the op's whole tiles (a conv's filter and bias, Scale's scale and bias),
    # loaded with the slice; None: the whole tiles, loaded once for every slice
    weights: tuple[Tile, ...] | None = None


def whole(value: SSAValue, shape: Dims4, strides: Dims4 | None = None) -> Tile:
    return Tile(value, (0, 0, 0, 0), shape, strides or contiguous(shape))


def split(total: int, secs: int) -> list[tuple[int, int]]:
    """`total` cut into `secs` parts of ceil(total / secs) (the last may be smaller)."""
    step = -(-total // secs)
    return [(b, min(b + step, total)) for b in range(0, total, step)]


Range = tuple[int, int]


@dataclass(frozen=True)
class Part:
    """One slice of an op's output view (`output_dims`): its ranges along N and H, and along C and W
    (None: the whole dim, the only value for kinds not in C_SLICED / W_SLICED)."""

    n: Range
    h: Range
    c: Range | None = None
    w: Range | None = None


@dataclass(frozen=True)
class Secs:
    """How many parts an op's output view is cut into along each dim (TPU-MLIR's shape_secs)."""

    n: int = 1
    h: int = 1
    c: int = 1
    w: int = 1


# ---- backward_update_slice: the input parts an output part needs, by op kind ----

def box(value: SSAValue, view: Dims4, n: Range, c: Range, h: Range, w: Range) -> Tile:
    """The tile of `value` (its 4-D view `view`, contiguous) over these ranges of N, C, H, W."""
    ranges = (n, c, h, w)
    return Tile(value, tuple(r[0] for r in ranges), tuple(r[1] - r[0] for r in ranges),  # type: ignore[arg-type]
                contiguous(view))


def window_range(o: Range, size: int, k: int, s: int, d: int, pad: int) -> tuple[int, int, int, int]:
    """Output rows (or columns: one function for both axes) [o0, o1) of a window op: the input
    range [lo, hi) they read, clamped to the tensor, and this slice's pads (before, after), which
    are what is clamped away, so only a slice at the tensor's edge has pads."""
    first = o[0] * s - pad
    last = (o[1] - 1) * s - pad + (k - 1) * d  # the last input row the slice reads
    lo, hi = max(first, 0), min(last + 1, size)
    return lo, hi, lo - first, last + 1 - hi


def channel_part(tiles: list[Tile], c: Range) -> tuple[Tile, ...]:
    """Output channels [c0, c1) of per-output-channel whole tiles (a filter (1, oc, blocks, row),
    a bias or scale (1, oc, 1, k)): their channel dim cut to the range."""
    return tuple(Tile(t.value, (t.start[0], t.start[1] + c[0], *t.start[2:]), (t.shape[0], c[1] - c[0], *t.shape[2:]),
                      t.strides, t.base) for t in tiles)


def _window_input(op: Operation, part: Part) -> SlicePlan:
    """Conv and Pool: the input rows and columns the output part's windows read (window_range);
    an unsliced W keeps the op's own left/right pads. Along C, a pool or depthwise conv reads its
    own channels, a conv (group 1) every input channel with its part of the filter and bias."""
    xs, ys, (kh, kw), (sh, sw), (dh, dw), (pt, pl, pb, pr), conv, mixes = _recalled(op, _window_geometry)
    x, y = op.operands[0], op.results[0]
    hlo, hhi, top, bottom = window_range(part.h, xs[2], kh, sh, dh, pt)
    wlo, whi, left, right = (0, xs[3], pl, pr) if part.w is None else window_range(part.w, xs[3], kw, sw, dw, pl)
    c, w = part.c or (0, ys[1]), part.w or (0, ys[3])
    ic = c if part.c is not None and not mixes else (0, xs[1])
    weights = channel_part(whole_tiles(op), c) if conv and part.c is not None else None
    return SlicePlan([box(x, xs, part.n, ic, (hlo, hhi), (wlo, whi))], box(y, ys, part.n, c, part.h, w),
                     (top, bottom, left, right), weights=weights)


def _window_geometry(op: Operation) -> tuple:
    """A conv's or pool's input and output views, kernel, strides, dilations, pads, whether it is a
    conv and whether it mixes channels (a conv of group 1): what _window_input reads of it."""
    a = attrs_of(op)
    conv = KINDS[op.name] == "conv"
    return (as4d(op, shape_of(op.operands[0])), as4d(op, shape_of(op.results[0])), tuple(a["kernel_shape"]),
            tuple(a.get("strides") or [1, 1]), tuple(a.get("dilations") or [1, 1]),
            tuple(a.get("pads") or [0, 0, 0, 0]), conv, conv and a["group"] == 1)


def _pool_mask_input(op: Operation, part: Part) -> SlicePlan:
    """A max pool's window; the mask's part is the output's."""
    plan = _window_input(op, part)
    o = plan.output
    return SlicePlan(plan.inputs, o, plan.pads, extra=(Tile(op.results[1], o.start, o.shape, o.strides),))


def transposed_window(op: Operation, o: tuple[int, int], size: int, k: int, s: int, d: int,
                      pad: int) -> tuple[int, int, int, int]:
    """Output rows [o0, o1) of a transposed conv, computed as a stride-1 conv of the flipped kernel
    over the input with s - 1 zeros between its rows and d*(k-1) - pad zero rows before them: the
    input rows [lo, hi) they read and the zero rows (before, after) around them in this slice."""
    first = o[0] - (d * (k - 1) - pad)  # zero-inserted position of the first row read
    last = first + o[1] - o[0] - 1 + d * (k - 1)
    lo, hi = max(-(-first // s), 0), min(last // s + 1, size)
    if hi <= lo:
        raise TpudslError(f"backend: {describe(op)}: output rows/columns {o[0]}..{o[1] - 1} read no input; "
                          f"a slice of only inserted zeros is not modelled")
    before = lo * s - first
    return lo, hi, before, last - first + 1 - before - (hi - 1 - lo) * s - 1


def _deconv_input(op: Operation, part: Part) -> SlicePlan:
    """The input rows and columns of the output part (transposed_window, the same for both axes)."""
    a = attrs_of(op)
    x, y = op.operands[0], op.results[0]
    xs, ys = as4d(op, shape_of(x)), as4d(op, shape_of(y))
    (kh, kw), (sh, sw), (dh, dw) = a["kernel_shape"], a["strides"], a.get("dilations") or [1, 1]
    pt, pl = a["pads"][:2]
    w = part.w or (0, ys[3])
    lo, hi, top, bottom = transposed_window(op, part.h, xs[2], kh, sh, dh, pt)
    wlo, whi, left, right = transposed_window(op, w, xs[3], kw, sw, dw, pl)
    return SlicePlan([box(x, xs, part.n, (0, xs[1]), (lo, hi), (wlo, whi))], box(y, ys, part.n, (0, ys[1]), part.h, w),
                     (top, bottom, left, right))


def tensor_operands(op: Operation) -> list[SSAValue]:
    """The operands that are tensors (tpu.Where's absent buffer is none)."""
    return [v for v in op.operands if isinstance(v.type, TensorType)]


def elementwise_views(op: Operation) -> tuple[Dims4, ...]:
    """The 4-D views of an element-wise op's result and operands (in that order). Rank <= 4: each
    shape right-aligned. Higher ranks fold: the result's size-1 dims go, then the innermost
    neighbours where every operand broadcasts both or has both whole merge until four are left
    ((2, 3, 40, 5, 10) x (2, 3, 1, 1, 1) is (2, 3, 40, 50) x (2, 3, 1, 1))."""
    return _recalled(op, _elementwise_views)


def _elementwise_views(op: Operation) -> tuple[Dims4, ...]:
    ys, values = shape_of(op.results[0]), [*tensor_operands(op), op.results[0]]
    if len(ys) <= 4:
        return tuple(as4d(op, shape_of(v)) for v in (values[-1], *values[:-1]))
    shapes = [[1] * (len(ys) - len(shape_of(v))) + list(shape_of(v)) for v in values]
    folded = fold4d(op, shapes, [d for d in range(len(ys)) if ys[d] != 1],
                    lambda outer, inner: all((s[outer[0]] == 1) == (s[inner[0]] == 1) for s in shapes),
                    f"shapes {[shape_of(v) for v in values]} do not fold to 4-D")
    return (folded[-1], *folded[:-1])


def fold4d(op: Operation, shapes: Sequence[Sequence[int]], kept: Sequence[int],
           mergeable: Callable[[list[int], list[int]], bool], refusal: str) -> list[Dims4]:
    """`shapes` (one rank, > 4) folded to 4-D views alike: the dims `kept` (the others are 1 in
    every shape), then the innermost neighbour groups (outer, inner) that are `mergeable` merge,
    each into the product of its sizes, until four are left; none mergeable is an error saying
    `refusal`. Merging the innermost first keeps the outer dims, the ones N and H slice, apart."""
    groups = [[d] for d in kept]
    while len(groups) > 4:
        i = next((i for i in reversed(range(len(groups) - 1)) if mergeable(groups[i], groups[i + 1])), None)
        if i is None:
            raise TpudslError(f"backend: {describe(op)}: {refusal}; not modelled")
        groups[i:i + 2] = [groups[i] + groups[i + 1]]
    return [as4d(op, [int(np.prod([s[d] for d in g], dtype=np.int64)) for g in groups]) for s in shapes]


def pad_widths(op: Operation) -> list[tuple[int, int]]:
    """Pad's (before, after) per dim of its 4-D view; crops (negative pads) are not modelled."""
    xs, pads = shape_of(op.operands[0]), list(attrs_of(op)["paddings"])
    if len(pads) != 2 * len(xs) or min(pads) < 0:
        raise TpudslError(f"backend: {describe(op)}: paddings {pads} are not modelled (only {2 * len(xs)} values >= 0)")
    return [(0, 0)] * (4 - len(xs)) + list(zip(pads[:len(xs)], pads[len(xs):], strict=True))


def _pad_range(o: tuple[int, int], size: int, before: int, mode: str) -> tuple[int, int, int, int]:
    """Output rows [o0, o1) of a padded dim: the input rows [lo, hi) they copy and the pad rows
    (before, after) around them; edge mode always reads at least the nearest row; reflect and
    symmetric read the rows their mirrored indices span (no pad rows: the record maps each row)."""
    if mode in isa.REFLECT_MODES:
        src = isa.reflect_index(np.arange(o[0], o[1]) - before, size, isa.REFLECT_MODES[mode])
        return int(src.min()), int(src.max()) + 1, 0, 0
    if mode == "edge":
        lo, hi = min(max(o[0] - before, 0), size - 1), min(max(o[1] - 1 - before, 0), size - 1) + 1
    else:
        lo, hi = min(max(o[0] - before, 0), size), min(max(o[1] - before, 0), size)
    first = min(max(before - o[0], 0), o[1] - o[0] - (hi - lo))
    return lo, hi, first, o[1] - o[0] - first - (hi - lo)


def _pad_input(op: Operation, part: Part) -> SlicePlan:
    """The input part inside the output part along N, H and W (_pad_range per axis); the record
    pads the rest."""
    x, y = op.operands[0], op.results[0]
    xs, ys = as4d(op, shape_of(x)), as4d(op, shape_of(y))
    widths, mode = pad_widths(op), attrs_of(op)["mode"]
    w = part.w or (0, ys[3])
    nlo, nhi, n0, n1 = _pad_range(part.n, xs[0], widths[0][0], mode)
    hlo, hhi, h0, h1 = _pad_range(part.h, xs[2], widths[2][0], mode)
    wlo, whi, w0, w1 = _pad_range(w, xs[3], widths[3][0], mode)
    return SlicePlan([box(x, xs, (nlo, nhi), (0, xs[1]), (hlo, hhi), (wlo, whi))],
                     box(y, ys, part.n, (0, ys[1]), part.h, w), (h0, h1, w0, w1), (n0, n1))


def interp_codes(op: Operation) -> tuple[int, int, int]:
    """(mode, coord, nearest) codes of a tpu.Interp; absent nearest_mode is floor, as the interpreter reads it."""
    a = attrs_of(op)
    return (isa.INTERP_MODES[a["mode"]], isa.COORD_MODES[a["coord_mode"]],
            isa.NEAREST_MODES[a.get("nearest_mode") or "floor"])


def _interp_input(op: Operation, part: Part) -> SlicePlan:
    """Output rows [h0, h1) read the input rows their sources span (isa.interp_sources); a C part
    reads its channels; W is whole (the record computes the whole width)."""
    h = part.h
    x, y = op.operands[0], op.results[0]
    xs, ys = as4d(op, shape_of(x)), as4d(op, shape_of(y))
    i0, i1, _ = isa.interp_sources(xs[2], ys[2], attrs_of(op)["scale_h"], *interp_codes(op))
    lo, hi = min(i0[h[0]:h[1]]), max(i1[h[0]:h[1]]) + 1
    c = part.c or (0, ys[1])
    return SlicePlan([box(x, xs, part.n, c, (lo, hi), (0, xs[3]))], box(y, ys, part.n, c, h, (0, ys[3])))


def group_norm_view(op: Operation) -> Dims4:
    """GroupNorm/InstanceNorm's tensor as (n, c, spatial elements, 1): a group's statistics span
    H, so only N is sliced (output_dims)."""
    shape = shape_of(op.operands[0])
    return shape[0], shape[1], int(np.prod(shape[2:], dtype=np.int64)), 1


def _group_norm_input(op: Operation, part: Part) -> SlicePlan:
    n, h = part.n, part.h
    view = group_norm_view(op)
    start, shape = (n[0], 0, 0, 0), (n[1] - n[0], *view[1:])
    return SlicePlan([Tile(op.operands[0], start, shape, contiguous(view))],
                     Tile(op.results[0], start, shape, contiguous(view)))


def scale_view(op: Operation) -> Dims4:
    """tpu.Scale's tensor as (n, c, the elements after C, 1): its scale and bias are per channel (dim 1)."""
    shape = shape_of(op.operands[0])
    return shape[0], shape[1] if len(shape) > 1 else 1, int(np.prod(shape[2:], dtype=np.int64)), 1


def _scale_input(op: Operation, part: Part) -> SlicePlan:
    """The input part is the output part; scale and bias are whole tiles, or a C slice's part of them."""
    view = scale_view(op)
    c = part.c or (0, view[1])
    weights = channel_part(whole_tiles(op), c) if part.c is not None else None
    return SlicePlan([box(op.operands[0], view, part.n, c, part.h, (0, 1))],
                     box(op.results[0], view, part.n, c, part.h, (0, 1)), weights=weights)


def _elementwise_input(op: Operation, part: Part) -> SlicePlan:
    """Each operand's part is the output part, except along its broadcast (size-1) dims."""
    ys, *views = elementwise_views(op)
    ranges = (part.n, part.c or (0, ys[1]), part.h, part.w or (0, ys[3]))
    tiles = [box(x, xs, *((0, 1) if size == 1 else r for size, r in zip(xs, ranges, strict=True)))  # a broadcast
             for x, xs in zip(tensor_operands(op), views, strict=True)]                               # dim: one element
    return SlicePlan(tiles, box(op.results[0], ys, *ranges))


def _lut_input(op: Operation, part: Part) -> SlicePlan:
    """The input follows the output; the table (operand 1) is a whole tile."""
    plan = _elementwise_input(op, part)
    return SlicePlan(plan.inputs[:1], plan.output)


def _matmul_input(op: Operation, part: Part) -> SlicePlan:
    """Rows n of a plain MatMul; batches n of a batched one (its rows and its right side's part).
    A plain MatMul cut along C (its output columns) reads every left column and loads its columns
    of the right side, bias and per-column quantization with the part."""
    n = part.n
    batch, m, k, n_out = matmul_dims(op)
    left, y = op.operands[0], op.results[0]
    rows = (n[0] * m, n[1] * m) if batch > 1 else n
    c = part.c or (0, n_out)
    tile = Tile(left, (rows[0], 0, 0, 0), (rows[1] - rows[0], k, 1, 1), (k, 1, 1, 1))
    out = Tile(y, (rows[0], c[0], 0, 0), (rows[1] - rows[0], c[1] - c[0], 1, 1), (n_out, 1, 1, 1))
    if batch == 1:
        if part.c is None:
            return SlicePlan([tile], out)
        right, *per_column = whole_tiles(op)  # right: (1, k, 1, n_out), its columns along W
        columns = Tile(right.value, (0, 0, 0, c[0]), (1, right.shape[1], 1, c[1] - c[0]), right.strides)
        return SlicePlan([tile], out, weights=(columns, *channel_part(per_column, c)))
    right = Tile(op.operands[1], (n[0], 0, 0, 0), (n[1] - n[0], k, 1, n_out), _right_strides(op, k, n_out))
    return SlicePlan([tile, right], out)


def _right_strides(op: Operation, k: int, n_out: int) -> Dims4:
    """MatMul's right side (per batch k x n_out, or n_out x k with right_transpose) as (batch, k, 1, n_out)."""
    return (k * n_out, 1, 0, k) if right_transposed(op) else (k * n_out, n_out, 0, 1)


def right_packing(op: Operation) -> int:
    """Right-side values per stored element along k: 2 for A16MatMul's 4-bit weights, else 1."""
    return 2 if op.name == "tpu.A16MatMul" and attrs_of(op)["weight_bits"] == 4 else 1


def right_transposed(op: Operation) -> bool:
    """The right side is stored [n_out, k]: MatMul's right_transpose, A16MatMul's w_transpose."""
    return attrs_of(op)["w_transpose" if op.name == "tpu.A16MatMul" else "right_transpose"]


def permute_view(op: Operation) -> tuple[list[int], list[int]]:
    """A Permute's input shape and order, folded to 4-D above rank 4 (dialects/geometry/permute.py);
    more than four dims left is an error (--processor-tpu-optimize splits such a Permute into moves that fold)."""
    xs, order = shape_of(op.operands[0]), list(attrs_of(op)["order"])
    if len(xs) <= 4:
        return list(xs), order
    shape, folded_order = fold(xs, order)
    if len(shape) > 4:
        raise TpudslError(f"backend: {describe(op)}: order {order} of shape {list(xs)} does not fold to 4-D; "
                          f"not modelled (--processor-tpu-optimize splits it into moves that do)")
    return shape, folded_order


def _permute_input(op: Operation, part: Part) -> SlicePlan:
    """The output part read from the input through permuted strides: output dim i steps the input's
    dim order[i]; one strided GDMA load does the transpose, the store is contiguous."""
    n, h = part.n, part.h
    x, y = op.operands[0], op.results[0]
    xs, order = permute_view(op)
    ys = as4d(op, [xs[d] for d in order])
    xstrides = contiguous(as4d(op, xs))[4 - len(xs):]
    strides = (0,) * (4 - len(order)) + tuple(xstrides[d] for d in order)
    start, shape = (n[0], 0, h[0], 0), (n[1] - n[0], ys[1], h[1] - h[0], ys[3])
    return SlicePlan([Tile(x, start, shape, strides)], Tile(y, start, shape, contiguous(ys)))  # type: ignore[arg-type]


def _slice_input(op: Operation, part: Part) -> SlicePlan:
    """The output part read from the input's window: strides times the steps, from the window's
    first element (ONNX's clamped starts; the result type gives the sizes)."""
    n, h = part.n, part.h
    x, y = op.operands[0], op.results[0]
    xs, folded_ys, starts, steps = slice_view(op)
    ys = as4d(op, folded_ys)
    xstrides = contiguous(as4d(op, xs))[4 - len(xs):]
    strides = (0,) * (4 - len(xs)) + tuple(s * st for s, st in zip(xstrides, steps, strict=True))
    base = sum(b * s for b, s in zip(starts, xstrides, strict=True))
    start, shape = (n[0], 0, h[0], 0), (n[1] - n[0], ys[1], h[1] - h[0], ys[3])
    return SlicePlan([Tile(x, start, shape, strides, base)],  # type: ignore[arg-type]
                     Tile(y, start, shape, contiguous(ys)))  # type: ignore[arg-type]


def slice_view(op: Operation) -> tuple[list[int], list[int], list[int], list[int]]:
    """A Slice's input and output shapes, starts and steps per dim; above rank 4, outermost first,
    a dim taken whole (start 0, step 1) merges into its outer neighbour when that one has step 1
    (the merged dim is still a window: YOLOv5's split of (1, 3, 16, 16, 85) along the last dim is
    (3, 16, 16, 85)). More than four dims left is an error."""
    xs, ys = list(shape_of(op.operands[0])), list(shape_of(op.results[0]))
    starts, steps = slice_starts_steps(op)
    while len(xs) > 4:
        i = next((i for i in range(len(xs) - 1) if steps[i] == 1 and starts[i + 1] == 0 and steps[i + 1] == 1
                  and ys[i + 1] == xs[i + 1]), None)
        if i is None:
            raise TpudslError(f"backend: {describe(op)}: a slice of shape {list(shape_of(op.operands[0]))} that "
                              f"does not fold to 4-D; not modelled")
        inner = xs[i + 1]
        xs[i:i + 2], ys[i:i + 2] = [xs[i] * inner], [ys[i] * inner]
        starts[i:i + 2], steps[i:i + 2] = [starts[i] * inner], [1]
    return xs, ys, starts, steps


def slice_starts_steps(op: Operation) -> tuple[list[int], list[int]]:
    """Per input dim, a Slice's first element and step. `axes` absent (or offset/ends/steps of full
    rank) means the lists are per dim, as TPU-MLIR writes them; a start clamps to [0, size]."""
    a, xs = attrs_of(op), shape_of(op.operands[0])
    offset, steps = list(a["offset"]), list(a["steps"])
    axes = list(a.get("axes") or [])
    if not axes or (len(offset) == len(xs) and len(axes) != len(offset)):
        axes = list(range(len(offset)))
    starts, strides = [0] * len(xs), [1] * len(xs)
    for ax, begin, step in zip(axes, offset, steps, strict=True):
        if step <= 0:
            raise TpudslError(f"backend: {describe(op)}: step {step} is not modelled (only positive steps)")
        size = xs[ax % len(xs)]
        starts[ax % len(xs)] = min(max(begin + size if begin < 0 else begin, 0), size)
        strides[ax % len(xs)] = step
    return starts, strides


def _expand_input(op: Operation, part: Part) -> SlicePlan:
    """The output part read from the input through strides that are 0 along its broadcast (size-1)
    dims: one GDMA load repeats them, the store is contiguous."""
    n, h = part.n, part.h
    x, y = op.operands[0], op.results[0]
    ys, xs = elementwise_views(op)  # a broadcast: rank > 4 folds as an element-wise op's operands do
    strides = tuple(0 if size == 1 else st for size, st in zip(xs, contiguous(xs), strict=True))
    start, shape = (n[0], 0, h[0], 0), (n[1] - n[0], ys[1], h[1] - h[0], ys[3])
    return SlicePlan([Tile(x, start, shape, strides)], Tile(y, start, shape, contiguous(ys)))  # type: ignore[arg-type]


def _upsample_input(op: Operation, part: Part) -> SlicePlan:
    """Output rows [h0, h1) repeat input rows [h0 // sh, (h1 - 1) // sh + 1); a C part reads its
    channels; a W part is whole input columns (`parts` cuts W on the input's grid), each repeated sw
    times."""
    x, y = op.operands[0], op.results[0]
    xs, ys = as4d(op, shape_of(x)), as4d(op, shape_of(y))
    sh, sw = attrs_of(op)["scale_h"], attrs_of(op)["scale_w"]
    c, w = part.c or (0, ys[1]), part.w or (0, ys[3])
    rows, cols = (part.h[0] // sh, (part.h[1] - 1) // sh + 1), (w[0] // sw, (w[1] - 1) // sw + 1)
    return SlicePlan([box(x, xs, part.n, c, rows, cols)], box(y, ys, part.n, c, part.h, w))


def reduce_view(op: Operation) -> Dims4:
    """The tensor of an op reducing along an axis as (outer, reduced, inner, 1): the reduced elements
    on C (never sliced), the dims before them on N and after them on H, so slices along N and H keep
    every reduced row whole. Softmax reduces its axis; LayerNorm every dim from its axis on; RMSNorm
    the last dim."""
    prod = lambda dims: int(np.prod(dims, dtype=np.int64))  # noqa: E731
    if op.name == "tpu.Reduce":
        return _reduced_axes_view(op, prod)
    shape = shape_of(op.results[0])
    axis = len(shape) - 1 if op.name == "tpu.RMSNorm" else attrs_of(op)["axis"] % len(shape)  # RMSNorm: the last
    end = axis + 1 if op.name == "tpu.Softmax" else len(shape)
    return prod(shape[:axis]), prod(shape[axis:end]), prod(shape[end:]), 1


def _reduced_axes_view(op: Operation, prod: Callable) -> Dims4:
    """tpu.Reduce's input as (outer, reduced, inner, 1): its axes must be neighbours."""
    shape, axes = shape_of(op.operands[0]), sorted(a % len(shape_of(op.operands[0])) for a in attrs_of(op)["axes"])
    if axes != list(range(axes[0], axes[-1] + 1)):
        raise TpudslError(f"backend: {describe(op)}: axes {axes} are not neighbours; not modelled")
    return prod(shape[:axes[0]]), prod(shape[axes[0]:axes[-1] + 1]), prod(shape[axes[-1] + 1:]), 1


def _reduce_input(op: Operation, part: Part) -> SlicePlan:
    """Whole reduced rows in; out the same rows (Reduce: one element per row, C = 1)."""
    n, h = part.n, part.h
    view = reduce_view(op)
    out_view = (view[0], 1, view[2], 1) if op.name == "tpu.Reduce" else view
    start, shape = (n[0], 0, h[0], 0), (n[1] - n[0], view[1], h[1] - h[0], 1)
    return SlicePlan([Tile(op.operands[0], start, shape, contiguous(view))],
                     Tile(op.results[0], start, (shape[0], out_view[1], shape[2], 1), contiguous(out_view)))


def axis_view(op: Operation) -> Dims4:
    """The input of an op along one axis (Arg, TopK, CumSum) as (outer, axis, inner, 1): the axis on
    C, never sliced (a scan or a choice along it needs the whole row), the dims before it on N and
    after it on H, both sliced."""
    shape = shape_of(op.operands[0])
    axis = attrs_of(op)["axis"] % len(shape)
    prod = lambda dims: int(np.prod(dims, dtype=np.int64))  # noqa: E731
    return prod(shape[:axis]), shape[axis], prod(shape[axis + 1:]), 1


def _axis_input(op: Operation, part: Part) -> SlicePlan:
    """Whole rows along the axis in; each result's part the same rows, its C the result's along
    the axis (Arg 1, TopK k, CumSum the axis)."""
    n, h = part.n, part.h
    view = axis_view(op)
    start, shape = (n[0], 0, h[0], 0), (n[1] - n[0], view[1], h[1] - h[0], 1)
    ys = shape_of(op.results[0])  # Arg's may have lost the axis (keepdims false)
    channels = 1 if KINDS[op.name] == "arg" else ys[attrs_of(op)["axis"] % len(ys)]
    out_view = (view[0], channels, view[2], 1)
    outs = [Tile(v, start, (shape[0], channels, shape[2], 1), contiguous(out_view)) for v in op.results
            if isinstance(v.type, TensorType)]
    return SlicePlan([Tile(op.operands[0], start, shape, contiguous(view))], outs[0], extra=tuple(outs[1:]))


def trilu_view(op: Operation) -> Dims4:
    """Trilu's tensor as (the dims before the last three, the third last, rows, columns): each
    (h, w) plane is one matrix; N and H (its rows) are sliced, the record told the first row."""
    shape = shape_of(op.operands[0])
    if len(shape) < 2:
        raise TpudslError(f"backend: {describe(op)}: a rank-{len(shape)} tensor; Trilu needs rank >= 2")
    return (int(np.prod(shape[:-3], dtype=np.int64)), shape[-3] if len(shape) > 2 else 1, shape[-2], shape[-1])


def _trilu_input(op: Operation, part: Part) -> SlicePlan:
    n, h = part.n, part.h
    view = trilu_view(op)
    start, shape = (n[0], 0, h[0], 0), (n[1] - n[0], view[1], h[1] - h[0], view[3])
    return SlicePlan([Tile(op.operands[0], start, shape, contiguous(view))],
                     Tile(op.results[0], start, shape, contiguous(view)))


def reverse_view(op: Operation) -> tuple[Dims4, int]:
    """Reverse's tensor as a 4-D view and the reversed dim in it: rank <= 4 right-aligned; above,
    (the dims before the axis, the axis, the dims after it, 1)."""
    shape, axis = shape_of(op.operands[0]), attrs_of(op)["axis"] % len(shape_of(op.operands[0]))
    if len(shape) <= 4:
        return as4d(op, shape), axis + 4 - len(shape)
    prod = lambda dims: int(np.prod(dims, dtype=np.int64))  # noqa: E731
    return (prod(shape[:axis]), shape[axis], prod(shape[axis + 1:]), 1), 1


def _reverse_input(op: Operation, part: Part) -> SlicePlan:
    """The output part read from the input through a negative stride along the reversed dim, from
    its last element: one GDMA load reverses (slices along the reversed dim read the mirrored rows),
    the store is contiguous."""
    n, h = part.n, part.h
    view, axis = reverse_view(op)
    strides = list(contiguous(view))
    base = (view[axis] - 1) * strides[axis]
    strides[axis] = -strides[axis]
    start, shape = (n[0], 0, h[0], 0), (n[1] - n[0], view[1], h[1] - h[0], view[3])
    return SlicePlan([Tile(op.operands[0], start, shape, tuple(strides), base)],  # type: ignore[arg-type]
                     Tile(op.results[0], start, shape, contiguous(view)))


BACKWARD_UPDATE_SLICE: dict[str, Callable[[Operation, Part], SlicePlan]] = {
    "conv": _window_input,
    "pool": _window_input,
    "deconv": _deconv_input,
    "pad": _pad_input,
    "interp": _interp_input,
    "groupnorm": _group_norm_input,
    "binary": _elementwise_input,
    "unary": _elementwise_input,
    "select": _elementwise_input,
    "lut": _lut_input,
    "matmul": _matmul_input,
    "permute": _permute_input,
    "slice": _slice_input,
    "upsample": _upsample_input,
    "reduce": _reduce_input,
    "scale": _scale_input,
    "expand": _expand_input,
    "arg": _axis_input,
    "topk": _axis_input,
    "cumsum": _axis_input,
    "trilu": _trilu_input,
    "reverse": _reverse_input,
    "lrn": _scale_input,  # C whole (the window runs along it), N and H the dims around it
    "poolmask": _pool_mask_input,
}


def backward_slice(op: Operation, part: Part) -> SlicePlan:
    """`BACKWARD_UPDATE_SLICE` of the op's kind for this part of its output; inside remembered(), as
    first answered (the group search asks for the same part of an op in many of the runs and splits
    it plans). The plan is shared: its callers replace parts, never change one."""
    return _recalled((op, part), _backward_slice)


def _backward_slice(key: tuple[Operation, Part]) -> SlicePlan:
    op, part = key
    return BACKWARD_UPDATE_SLICE[KINDS[op.name]](op, part)


def matmul_dims(op: Operation) -> tuple[int, int, int, int]:
    """(batch, m, k, n_out) of a MatMul. A 2-D right side: batch 1, the left side's leading dims are
    rows (a linear layer on [batch, seq, d] is one (batch*seq, d) x (d, n_out) product). A right side
    of rank > 2: its leading dims, the same as the left side's, are the batch (attention's Q x K^T)."""
    ls, rs = shape_of(op.operands[0]), shape_of(op.operands[1])
    rk, rn = (rs[-1] * right_packing(op), rs[-2]) if right_transposed(op) else rs[-2:]
    prod = lambda dims: int(np.prod(dims, dtype=np.int64))  # noqa: E731
    if len(ls) >= 2 and len(rs) == 2:
        return 1, prod(ls[:-1]), ls[-1], rn
    if len(ls) == len(rs) > 2 and ls[:-2] == rs[:-2] and not any(isinstance(v.type, TensorType) for v in
                                                                 op.operands[2:3]):
        return prod(ls[:-2]), ls[-2], ls[-1], rn
    raise TpudslError(f"backend: {describe(op)} with operands {ls} x {rs}: only a 2-D right side, or equal batch "
                      f"dims without bias, is modelled")


_REMEMBERED: dict[Callable, dict] | None = None  # per function, its answers inside remembered()


@contextlib.contextmanager
def remembered():
    """Inside it, whole_tiles, elementwise_views and a window op's geometry (per op), dtype_of and
    shape_of (per value) and backward_slice (per op and part) answer as they first did: the group
    search (which changes no op and no type) asks for the same ones thousands of times (whole_tiles
    a fifth of its time at 224; dtype_of 110,000 times for MobileNetV2's 278 values; shape_of ~18,000
    times per INT8 random network of the tests, each rebuilding the tuple from the xDSL type;
    backward_slice the same part of an op in about half of its calls)."""
    global _REMEMBERED
    outer, _REMEMBERED = _REMEMBERED, {}
    try:
        yield
    finally:
        _REMEMBERED = outer


def _recalled(key, compute: Callable):
    """compute(key), from memory inside remembered() (a table per `compute`)."""
    if _REMEMBERED is None:
        return compute(key)
    seen = _REMEMBERED.get(compute)
    if seen is None:
        seen = _REMEMBERED[compute] = {}
    try:
        return seen[key]
    except KeyError:
        got = seen[key] = compute(key)
        return got


def whole_tiles(op: Operation) -> list[Tile]:
    """The operands an op reads whole (weights, a dynamic filter, MatMul's right side), loaded once."""
    return list(_recalled(op, _whole_tiles))  # a copy: callers may extend it


def _whole_tiles(op: Operation) -> list[Tile]:
    kind = KINDS[op.name]
    present = [v for v in op.operands[1:] if isinstance(v.type, TensorType)]
    if kind == "conv":
        oc, blocks, row, _ = conv_filter_layout(op)
        tiles = [whole(op.operands[1], (1, oc, blocks, row))]
        if len(present) > 1:  # an INT8 conv's merged (bias, multiplier, rshift) per channel
            tiles.append(whole(present[1], (1, oc, 1, 3 if attrs_of(op)["coeff_merged"] else 1)))
        return tiles
    if kind == "deconv":  # an INT8 deconv's bias is the merged (bias, multiplier, rshift) tile
        tiles = [deconv_filter(op)]
        if len(present) > 1:
            merged = 3 if attrs_of(op)["coeff_merged"] else 1
            tiles.append(whole(present[1], (1, shape_of(op.results[0])[1], 1, merged)))
        return tiles
    if kind == "matmul":
        batch, _, k, n_out = matmul_dims(op)
        if batch > 1:
            return []  # its right side is sliced with its batches
        stored_k = k // right_packing(op)  # 4-bit weights: two rows per byte
        tiles = [Tile(op.operands[1], (0, 0, 0, 0), (1, stored_k, 1, n_out), _right_strides(op, stored_k, n_out))]
        bias = matmul_bias(op)
        if bias is not None:
            tiles.append(whole(bias, (1, n_out, 1, 1)))
        if matmul_multi(op) is not None:  # INT8 per column: (multiplier, rshift), --weight-reorder's
            tiles.append(whole(op.operands[3], (1, n_out, 1, 2)))
        if op.name == "tpu.A16MatMul":  # the weight's scales (and zero points) per output column, last
            groups = shape_of(op.operands[2])[1]
            tiles += [whole(v, (1, n_out, 1, groups)) for v in op.operands[2:4] if isinstance(v.type, TensorType)]
        return tiles
    if op.name == "tpu.RequantIntAxis":  # (multiplier, -rshift, zero point) per channel
        return [whole(op.operands[1], (1, shape_of(op.results[0])[1], 1, 3))]
    if kind == "lut":  # the 256 entries once per channel: channel stride 0
        return [Tile(op.operands[1], (0, 0, 0, 0), (1, elementwise_views(op)[0][1], 1, 256), (0, 0, 0, 1))]
    if op.name == "tpu.Softmax" and is_int8(op):  # the int32 exp table once per lane: channel stride 0
        lanes = min(reduce_view(op)[1], _lanes(op))
        return [Tile(op.operands[1], (0, 0, 0, 0), (1, lanes, 1, 256), (0, 0, 0, 1))]
    if op.name in ("tpu.LayerNorm", "tpu.RMSNorm"):  # weight and bias (RMSNorm: gamma), those present, in order
        return [whole(v, (1, reduce_view(op)[1], 1, 1)) for v in op.operands[1:3] if isinstance(v.type, TensorType)]
    if kind == "scale":
        return [whole(v, (1, scale_view(op)[1], 1, 1)) for v in op.operands[1:3]]
    if kind == "groupnorm":  # per-channel weight and bias, those present
        return [whole(v, (1, shape_of(op.operands[0])[1], 1, 1)) for v in op.operands[1:3]
                if isinstance(v.type, TensorType)]
    return []


def _lanes(op: Operation) -> int:
    """The lanes of the chip the op's module is compiled for (module.chip)."""
    chip = op.get_toplevel_object().attributes.get("module.chip")
    if chip is None:
        raise TpudslError(f"backend: {describe(op)}: the module has no module.chip; run --processor-assign first")
    return chip_named(chip.data).lanes  # type: ignore[attr-defined]


def matmul_bias(op: Operation) -> SSAValue | None:
    """A MatMul's bias operand (A16MatMul's fifth), None when absent (no operand, or a none value)."""
    i = 4 if op.name == "tpu.A16MatMul" else 2
    return op.operands[i] if len(op.operands) > i and isinstance(op.operands[i].type, TensorType) else None


def matmul_multi(op: Operation) -> SSAValue | None:
    """A MatMul's `multi` operand: INT8 per-column (multiplier, rshift) as [1, n, 1, 2] int32."""
    if op.name == "tpu.A16MatMul":
        return None
    return op.operands[3] if len(op.operands) > 3 and isinstance(op.operands[3].type, TensorType) else None


def conv_filter_layout(op: Operation) -> tuple[int, int, int, int]:
    """(oc, blocks, row, P) of a conv filter loaded as the local tensor (1, oc, blocks, row): the plain
    filter [oc, ic/g, kh, kw] (P = 1, blocks = ic/g), or --weight-reorder's [1, oc, ceil(ic/g / P),
    kh*kw*P] (docs/bmodel.md: P input channels interleaved per kernel position)."""
    a = attrs_of(op)
    kh, kw = a["kernel_shape"]
    oc, icg = shape_of(op.results[0])[1], shape_of(op.operands[0])[1] // a["group"]
    fs = shape_of(op.operands[1])
    if fs == (oc, icg, kh, kw):
        return oc, icg, kh * kw, 1
    if len(fs) == 4 and fs[:2] == (1, oc) and fs[3] % (kh * kw) == 0 and fs[2] == -(-icg // (fs[3] // (kh * kw))):
        return oc, fs[2], fs[3], fs[3] // (kh * kw)
    raise TpudslError(f"backend: {describe(op)}: filter shape {fs} is neither [oc, ic/g, kh, kw] nor the reordered "
                      f"[1, oc, ceil(ic/g / P), kh*kw*P]")


def deconv_filter(op: Operation) -> Tile:
    """A Deconv's filter as the local (group, oc/g, ic/g, kh*kw), output channel first: contiguous
    with dynweight_reorderd ([oc, ic/g, kh, kw]), through transposing strides from ONNX's
    [ic, oc/g, kh, kw] otherwise (input channel g*ic/g + i of group g)."""
    a = attrs_of(op)
    fs, group = shape_of(op.operands[1]), a["group"]
    taps = fs[2] * fs[3]
    if a["dynweight_reorderd"]:
        return whole(op.operands[1], (group, fs[0] // group, fs[1], taps))
    icg, ocg = fs[0] // group, fs[1]
    return Tile(op.operands[1], (0, 0, 0, 0), (group, ocg, icg, taps), (icg * ocg * taps, taps, ocg * taps, 1))


# The kinds whose output view is `elementwise_views`' (rank > 4 folded; a Lut's table tile is laid
# out on the folded view's channels, `whole_tiles`). A RequantIntAxis of rank > 4 stops at
# `check_int8` (4-D only).
ELEMENTWISE_VIEWED = ("binary", "unary", "select", "lut", "expand")


def output_dims(op: Operation) -> tuple[int, int]:
    """The (N, H) an op's slices split: of its output view (MatMul: its rows)."""
    if KINDS[op.name] == "matmul":
        batch, m, _, _ = matmul_dims(op)
        return (batch if batch > 1 else m), 1
    if KINDS[op.name] == "reduce":
        return reduce_view(op)[0], reduce_view(op)[2]
    if KINDS[op.name] == "groupnorm":
        return shape_of(op.operands[0])[0], 1
    if KINDS[op.name] in ("arg", "topk", "cumsum"):
        return axis_view(op)[0], axis_view(op)[2]
    if KINDS[op.name] == "trilu":
        return trilu_view(op)[0], trilu_view(op)[2]
    if KINDS[op.name] == "reverse":
        return reverse_view(op)[0][0], reverse_view(op)[0][2]
    if KINDS[op.name] in ("scale", "lrn"):
        return scale_view(op)[0], scale_view(op)[2]
    if KINDS[op.name] == "tile":  # the input's grid, each part moved to every repeat
        xs = tile_views(op)[0]
        return xs[0], xs[2]
    if KINDS[op.name] == "depth2space":  # the depth side's grid
        depth = op.results[0] if attrs_of(op)["is_inversed"] else op.operands[0]
        return shape_of(depth)[0], shape_of(depth)[2]
    if KINDS[op.name] == "permute":
        xs, order = permute_view(op)
        ys = as4d(op, [xs[d] for d in order])
    elif KINDS[op.name] == "slice":
        ys = as4d(op, slice_view(op)[1])
    elif KINDS[op.name] == "concat":
        ys = concat_view(op, op.results[0])[0]
    else:
        ys = elementwise_views(op)[0] if KINDS[op.name] in ELEMENTWISE_VIEWED else as4d(op, shape_of(op.results[0]))
    return ys[0], ys[2]


def parts(op: Operation, secs: Secs, first_n: Range | None = None) -> list[Part]:
    """The output parts of the op's slicing in execution order: C outer (a C part's weights are
    loaded once), then N, H, W; with `first_n`, that N range only (what `footprint` looks at).
    C parts are whole multiples of the chip's lanes (`split_channels`)."""
    for dim, count in (("C", secs.c), ("W", secs.w)):
        if count > 1 and not sliceable(op, dim):
            raise TpudslError(f"backend: {describe(op)} is not sliced along {dim}; not modelled")
    n_total, h_total = output_dims(op)
    ns = [first_n] if first_n is not None else split(n_total, secs.n)
    cs = [None] if secs.c == 1 else split_channels(cw_dims(op)[0], secs.c, _lanes(op))
    ws = [None] if secs.w == 1 else split(cw_dims(op)[1], secs.w)
    if KINDS[op.name] == "upsample" and secs.w > 1:  # cut on the input's columns (cw_dims), each repeated sw times
        ws = [(a * attrs_of(op)["scale_w"], b * attrs_of(op)["scale_w"]) for a, b in ws]  # type: ignore[misc]
    return [Part(n, h, c, w) for c in cs for n in ns for h in split(h_total, secs.h) for w in ws]


def split_channels(total: int, secs: int, lanes: int) -> list[Range]:
    """`total` channels in `secs` parts of a whole number of lanes each (the last may be smaller), so
    that every part starts at a channel on lane 0 and channel c stays on lane c % lanes."""
    step = channel_step(total, secs, lanes)
    return [(b, min(b + step, total)) for b in range(0, total, step)]


def channel_step(total: int, secs: int, lanes: int) -> int:
    """The channels of a C part: ceil(total / secs) rounded up to a whole number of lanes."""
    return -(-(-(-total // secs)) // lanes) * lanes


# The kinds whose output may be sliced along C (channels independent: each output channel reads
# its own input channel, or, conv and MatMul, all of them with its own filter part) and along W
# (windows, as H).
C_SLICED = ("conv", "pool", "binary", "unary", "select", "lut", "scale", "matmul", "upsample", "interp")
W_SLICED = ("conv", "pool", "deconv", "pad", "binary", "unary", "select", "lut", "upsample")


def sliceable(op: Operation, dim: str) -> bool:
    """Whether the op's output may be sliced along C or W: its kind allows it, and for a conv along
    C its groups are 1 or its channels (depthwise), for a Pad along W its mode is not reflect."""
    kind, a = KINDS[op.name], attrs_of(op)
    if dim == "C":
        if kind == "conv":
            return a["group"] == 1 or a["group"] == shape_of(op.operands[0])[1] == shape_of(op.results[0])[1]
        if kind == "matmul":  # a plain one, along its output columns (a batched one slices its batches)
            return matmul_dims(op)[0] == 1
        return kind in C_SLICED
    return kind in W_SLICED and not (kind == "pad" and a["mode"] in isa.REFLECT_MODES)


def cw_dims(op: Operation) -> tuple[int, int]:
    """The (C, W) of the output view a C or W slicing splits."""
    kind = KINDS[op.name]
    if kind == "scale":
        return scale_view(op)[1], 1
    if kind == "matmul":
        return matmul_dims(op)[3], 1
    if kind == "upsample":  # W on the input's grid: a part is whole input columns
        return as4d(op, shape_of(op.results[0]))[1], as4d(op, shape_of(op.operands[0]))[3]
    view = elementwise_views(op)[0] if kind in ELEMENTWISE_VIEWED else as4d(op, shape_of(op.results[0]))
    return view[1], view[3]


def slices(op: Operation, secs: Secs, first_n: Range | None = None) -> list[SlicePlan]:
    """Every slice of the op in execution order (`parts`). Concat: one plan per input part, whose
    output tile is where that part goes in the result."""
    if KINDS[op.name] == "concat":
        return _concat_slices(op, secs.n, secs.h)
    if KINDS[op.name] == "depth2space":
        return [plan for p in parts(op, secs, first_n) for plan in _depth2space_parts(op, p.n, p.h)]
    if KINDS[op.name] == "tile":
        views = tile_views(op)
        return [plan for p in parts(op, secs, first_n) for plan in _tile_parts(op, views, p.n, p.h)]
    backward = BACKWARD_UPDATE_SLICE[KINDS[op.name]]
    return [backward(op, p) for p in parts(op, secs, first_n)]


def _depth2space_parts(op: Operation, n: tuple[int, int], h: tuple[int, int]) -> list[SlicePlan]:
    """Depth2Space (is_inversed: Space2Depth) rows [h0, h1) of its depth side's grid, one move per
    block position (i, j): the depth side's channels of that position (CRD: co*bh*bw + i*bw + j; DCR:
    (i*bw + j)*co_n + co) hold the space side's pixels (h*bh + i, w*bw + j), so each is a strided
    4-D view of both tensors: one GDMA load of one view, one store to the other."""
    a = attrs_of(op)
    bh, bw = a["block_h"], a["block_w"]
    x, y = op.operands[0], op.results[0]
    depth, space = (x, y) if not a["is_inversed"] else (y, x)
    nn, cd, hh, ww = shape_of(depth)
    co = cd // (bh * bw)
    crd = a["is_CRD"]
    plans = []
    for i in range(bh):
        for j in range(bw):
            pos = i * bw + j
            depth_view = ((cd * hh * ww, (bh * bw if crd else 1) * hh * ww, ww, 1),
                          (pos if crd else pos * co) * hh * ww)
            space_view = ((co * hh * bh * ww * bw, hh * bh * ww * bw, bh * ww * bw, bw), i * ww * bw + j)
            src, dst = (depth_view, space_view) if not a["is_inversed"] else (space_view, depth_view)
            start, shape = (n[0], 0, h[0], 0), (n[1] - n[0], co, h[1] - h[0], ww)
            plans.append(SlicePlan([Tile(x, start, shape, *src)], Tile(y, start, shape, *dst)))  # type: ignore[arg-type]
    return plans


def tile_views(op: Operation) -> tuple[Dims4, Dims4, Dims4]:
    """tpu.Tile's input view, result view and repeats per dim, 4-D (input and result have the same
    rank). Higher ranks fold: the dims of size 1 on both sides go, then the innermost neighbours
    whose inner one is not repeated merge until four are left (x_i * x_j elements repeated r_i
    times are both dims tiled by (r_i, 1): repeat_kv's (1, 2, 1, 16, 16) by (1, 1, 2, 1, 1) is
    (2, 1, 16, 16) by (1, 2, 1, 1))."""
    xs, reps = shape_of(op.operands[0]), list(attrs_of(op)["tile"])
    if len(reps) != len(xs) or min(reps, default=1) < 1:
        raise TpudslError(f"backend: {describe(op)}: tile {reps} is not modelled (one repeat >= 1 per dim)")
    ys = [x * r for x, r in zip(xs, reps, strict=True)]
    if len(xs) <= 4:
        return as4d(op, xs), as4d(op, ys), as4d(op, reps)
    return tuple(fold4d(op, (xs, ys, reps), [d for d in range(len(xs)) if ys[d] != 1],  # type: ignore[return-value]
                        lambda outer, inner: all(reps[d] == 1 for d in inner),
                        f"input {list(xs)} tiled by {reps} does not fold to 4-D"))


def _tile_parts(op: Operation, views: tuple[Dims4, Dims4, Dims4], n: tuple[int, int],
                h: tuple[int, int]) -> list[SlicePlan]:
    """Tile: the input part (N and H of the input's grid) moved to each of its repeats' places
    (`views`: tile_views(op), folded once for all parts)."""
    x, y = op.operands[0], op.results[0]
    xs, ys, reps = views
    start, shape = (n[0], 0, h[0], 0), (n[1] - n[0], xs[1], h[1] - h[0], xs[3])
    return [SlicePlan([Tile(x, start, shape, contiguous(xs))],
                      Tile(y, (n[0] + rn * xs[0], rc * xs[1], h[0] + rh * xs[2], rw * xs[3]), shape, contiguous(ys)))
            for rn in range(reps[0]) for rc in range(reps[1]) for rh in range(reps[2]) for rw in range(reps[3])]


def concat_view(op: Operation, value: SSAValue) -> tuple[Dims4, int]:
    """A Concat operand's or result's 4-D view and the concatenated dim in it: rank <= 4 right-aligned;
    above, (1, the dims before the axis, the axis, the dims after it): YOLOv5's decode Concat of
    (1, 3, 16, 16, 2 | 2 | 81) along the last dim is (1, 768, 85, 1)."""
    shape = shape_of(value)
    axis = attrs_of(op)["axis"] % len(shape)
    if len(shape) <= 4:
        return as4d(op, shape), axis + 4 - len(shape)
    prod = lambda dims: int(np.prod(dims, dtype=np.int64))  # noqa: E731
    return (1, prod(shape[:axis]), shape[axis], prod(shape[axis + 1:])), 2


def _concat_slices(op: Operation, nsecs: int, hsecs: int) -> list[SlicePlan]:
    y = op.results[0]
    ys, axis = concat_view(op, y)
    plans, at = [], 0
    for x in op.operands:
        xs, _ = concat_view(op, x)
        for n in split(xs[0], min(nsecs, xs[0])):
            for h in split(xs[2], min(hsecs, xs[2])):
                start = (n[0], 0, h[0], 0)
                shape = (n[1] - n[0], xs[1], h[1] - h[0], xs[3])
                out_start = tuple(s + (at if d == axis else 0) for d, s in enumerate(start))
                plans.append(SlicePlan([Tile(x, start, shape, contiguous(xs))],
                                       Tile(y, out_start, shape, contiguous(ys))))  # type: ignore[arg-type]
        at += xs[axis]
    return plans


def tile_bytes(tile: Tile, chip: Chip) -> int:
    n, c, h, w = tile.shape
    return lane_bytes(n, c, h, w, ESIZE[dtype_of(tile.value)], chip.lanes, chip.eu_bytes)


def footprint(op: Operation, secs: Secs, chip: Chip, slice_weights: bool = False) -> int:
    """Bytes per lane the op needs with this slicing: its whole tiles plus its largest slice (with
    the chip's bank rule, the output from the bank after its inputs').
    N parts never grow along N (but Pad's), so the first N part's slices hold the largest one.
    slice_weights (test-only, `--layer-group="slice_weights=true"`): see `budgeted_whole_tiles`."""
    sliced_filter = slice_weights and has_dynamic_filter(op)
    if KINDS[op.name] in ("concat", "pad", "depth2space", "tile"):  # a Pad's first N part may be all padding
        plans = slices(op, secs)
    else:
        plans = slices(op, secs, first_n=split(output_dims(op)[0], secs.n)[0])
    # C slices load their part of the whole tiles where the first (largest) part lies; else the whole tiles once
    weights = plans[0].weights if plans[0].weights is not None else budgeted_whole_tiles(op, slice_weights)
    fixed = sum(tile_bytes(t, chip) for t in weights)
    moves = KINDS[op.name] in MOVES  # a move's part goes out from its input tile: no output tile
    ends = []
    for p in plans:  # codegen's layout: whole tiles, input parts, the outputs (chip.output_start: bank rule)
        at = fixed + sum(tile_bytes(t, chip) for t in p.inputs)
        at = at if moves else chip.output_start(at) + sum(tile_bytes(t, chip) for t in (p.output, *p.extra))
        ends.append(at + (tile_bytes(_filter_part(op, p.output), chip) if sliced_filter else 0))
    return max(ends)


def has_dynamic_filter(op: Operation) -> bool:
    """A Conv or Deconv whose filter is computed by earlier ops (DragGAN's modulated filters)."""
    return KINDS[op.name] in ("conv", "deconv") and getattr(op.operands[1].owner, "name", None) != "top.Weight"


def budgeted_whole_tiles(op: Operation, slice_weights: bool) -> list[Tile]:
    """The whole tiles layer-group budgets local memory for. With slice_weights, a TEST-ONLY switch,
    a dynamic filter is not among them: it is budgeted like an activation, cut along its first dim
    and H like the output slice (`_filter_part`), as a layer group that takes a computed filter for
    one more activation would. Codegen still loads it whole, so the plan is short of local memory
    and the cmodel reports the overflow (the DragGAN failure, reproduced on purpose)."""
    tiles = whole_tiles(op)
    return tiles[1:] if slice_weights and has_dynamic_filter(op) else tiles


def _filter_part(op: Operation, out: Tile) -> Tile:
    """A dynamic filter cut like an activation: the output slice's N and H ranges, clamped to its dims."""
    fs = as4d(op, shape_of(op.operands[1]))
    (n0, h0), (n1, h1) = (out.start[0], out.start[2]), (out.start[0] + out.shape[0], out.start[2] + out.shape[2])
    n, h = (min(n0, fs[0]), min(n1, fs[0])), (min(h0, fs[2]), min(h1, fs[2]))
    return Tile(op.operands[1], (n[0], 0, h[0], 0), (n[1] - n[0], fs[1], h[1] - h[0], fs[3]), contiguous(fs))


# Attributes whose non-default values the backend does not model, by op: an error, never ignored.
_NOT_MODELLED: dict[str, dict[str, object]] = {
    "tpu.Conv2D": {"inserts": None, "kernel_zp": 0, "use_winograd": None, "do_leaky_relu": None,
                   "coeff_merged": False, "dynweight_reorderd": False, "use_3ic_optimize": 0},
    "tpu.Deconv": {"multiplier": None, "rshift": None},
    "tpu.Pool2D": {"is_adaptive": False, "ceil_mode": None, "pad_value": 0},
    "tpu.MatMul": {"left_transpose": False, "output_transpose": False, "hdim_is_batch": False, "fuse_rq": False,
                   "right_zp": 0, "input_zp": 0},
    "tpu.Concat": {"do_relu": False},
    "tpu.Sub": {"is_reverse": False},
    "tpu.Upsample": {"do_relu": False},
    "tpu.Reduce": {"multiplier": None, "rshift": None},
    "tpu.LeakyRelu": {"multiplier": None, "multiplier_neg": None, "rshift": None, "rshift_neg": None},
    "tpu.PReluOp": {"rshift": 0, "rshift_pos": None, "multiplier_pos": None},
    "tpu.Where": {"x_is_const": False, "y_is_const": False},  # the branch as an attribute: BdcSelect reads tensors
    "tpu.TopK": {"replace_topk_indices": False},
    "tpu.MaxPoolWithMask": {"ceil_mode": None, "is_adaptive": False, "pad_value": 0, "do_relu": False},
}
# tpu.Active modes whose function takes coeffs (isa.ACTIVE_EXTRA_MODES), and how many.
_ACTIVE_COEFFS = {"ELU": 1, "HSIGMOID": 2, "SWISH": 1}


def gather_view(op: Operation) -> tuple[int, int, int, int]:
    """A Gather's (outer, axis size, inner, index count): x as (outer, axis, inner) elements, the
    result as (outer, count, inner)."""
    xs = shape_of(op.operands[0])
    axis = attrs_of(op)["axis"] % len(xs)
    count = int(np.prod(shape_of(op.operands[1]), dtype=np.int64))
    return (int(np.prod(xs[:axis], dtype=np.int64)), xs[axis], int(np.prod(xs[axis + 1:], dtype=np.int64)), count)


def gather_copies(op: Operation, indices: np.ndarray) -> list[tuple[int, int, int]]:
    """(source element, destination element, elements) of each contiguous copy a Gather along
    `axis` with these constant indices makes: for every outer index o and position p, the slab
    x[o, idx[p], ...] (the dims after the axis) goes to y[o, p, ...]; negative indices count from the end."""
    outer, size, inner, _ = gather_view(op)
    idx = np.asarray(indices).astype(np.int64).reshape(-1)
    idx = np.where(idx < 0, idx + size, idx)
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise TpudslError(f"backend: {describe(op)}: an index is outside [0, {size}) on axis "
                          f"{attrs_of(op)['axis'] % len(shape_of(op.operands[0]))}")
    return [((o * size + int(j)) * inner, (o * idx.size + p) * inner, inner)
            for o in range(outer) for p, j in enumerate(idx)]


def check_modelled(op: Operation) -> None:
    """TpudslError naming the op and the attribute (or operand) whose value the backend does not model."""
    a = attrs_of(op)
    int8 = is_int8(op)
    if int8:
        check_int8(op)
    for key, default in _NOT_MODELLED.get(op.name, {}).items():
        if int8 and key in _INT8_ATTRS:  # an INT8 op's requantization (check_int8)
            continue
        value = a.get(key)
        if value != default and (any(value) if isinstance(value, list) else bool(value)):
            raise TpudslError(f"backend: {describe(op)}: {key}={value} is not modelled")
    if op.name in ("tpu.Add", "tpu.Max", "tpu.Min", "tpu.Sub") and any(c != 1.0 for c in a.get("coeff") or []):
        raise TpudslError(f"backend: {describe(op)}: coeff={a['coeff']} is not modelled")
    if op.name == "tpu.Interp" and (len(shape_of(op.operands[0])) != 4 or a["mode"] not in isa.INTERP_MODES
                                    or a["coord_mode"] not in isa.COORD_MODES):
        raise TpudslError(f"backend: {describe(op)}: mode {a['mode']}, coord_mode {a['coord_mode']} of a rank-"
                          f"{len(shape_of(op.operands[0]))} tensor is not modelled (only 4-D, nearest/linear)")
    if op.name == "tpu.Reduce" and a["mode"] not in isa.REDUCE_MODES:
        raise TpudslError(f"backend: {describe(op)}: mode {a['mode']} is not modelled (only {', '.join(isa.REDUCE_MODES)})")
    if op.name == "tpu.Pad" and a["mode"] not in (*isa.PAD_MODES, *isa.REFLECT_MODES):
        raise TpudslError(f"backend: {describe(op)}: mode {a['mode']} is not modelled")
    if op.name == "tpu.Active" and len(a.get("coeffs") or []) != _ACTIVE_COEFFS.get(a["mode"], 0):
        raise TpudslError(f"backend: {describe(op)}: mode {a['mode']} with coeffs={a.get('coeffs')} is not modelled")
    if op.name == "tpu.Depth2Space" and (not a["in_is_NCHW"] or not a["out_is_NCHW"] or a["swap_cr"]
                                         or len(shape_of(op.operands[0])) != 4):
        raise TpudslError(f"backend: {describe(op)}: only NCHW rank-4 tensors without swap_cr are modelled")
    if op.name == "tpu.PReluOp" and _per_channel_vector(op):
        raise TpudslError(f"backend: {describe(op)}: a 1-D slope read per channel (TPU-MLIR's form) is not modelled; "
                          f"give it the shape that broadcasts ([C, 1, 1])")
    if op.name == "tpu.MaxPoolWithMask":
        _check_pool_mask(op)
    if op.name == "tpu.Where" and not all(isinstance(v.type, TensorType) for v in op.operands[:3]):
        raise TpudslError(f"backend: {describe(op)} without both branch tensors is not modelled")
    if KINDS.get(op.name) == "binary" and len(op.operands) != 2:
        raise TpudslError(f"backend: {describe(op)} with {len(op.operands)} inputs: only 2 are modelled")
    if op.name == "tpu.MatMul" and any(isinstance(v.type, TensorType) for v in op.operands[3 + int8:]):
        raise TpudslError(f"backend: {describe(op)}: the {'buffer' if int8 else 'multi/buffer'} operands are not "
                          f"modelled")
    if op.name in ("tpu.Arg", "tpu.TopK"):  # the values result copies the input's elements
        values = op.results[1 if op.name == "tpu.Arg" else 0]
        if isinstance(values.type, TensorType) and dtype_of(values) != dtype_of(op.operands[0]):
            raise TpudslError(f"backend: {describe(op)}: {dtype_of(values)} values of a {dtype_of(op.operands[0])} "
                              f"input are not modelled")
    tables = {"tpu.Softmax": 1 + int8, "tpu.Permute": 1, "tpu.Slice": 1, "tpu.LayerNorm": 3, "tpu.Reduce": 1,
              "tpu.Pad": 1, "tpu.Interp": 1, "tpu.GroupNorm": 3, "tpu.InstanceNorm": 3, "tpu.RMSNorm": 2,
              "tpu.Scale": 3, "tpu.Expand": 1, "tpu.Tile": 1,
              "tpu.TopK": 1, "tpu.CumSum": 1, "tpu.LRN": 1}.get(op.name, len(op.operands))
    if any(isinstance(v.type, TensorType) for v in op.operands[tables:]):
        raise TpudslError(f"backend: {describe(op)}: its table/buffer operands are not modelled")
    for v in [*op.operands, *op.results]:
        if isinstance(v.type, TensorType):
            if (op.name in ("tpu.LayerNorm", "tpu.Deconv", "tpu.GroupNorm", "tpu.InstanceNorm", "tpu.RMSNorm",
                            "tpu.Scale", "tpu.Where", "tpu.MaskedFill") and not int8
                    and dtype_of(v) != dtype_of(op.results[0])):
                raise TpudslError(f"backend: {describe(op)}: a {dtype_of(v)} operand of a {dtype_of(op.results[0])} "
                                  f"{op.name[4:]} is not modelled")
            dtype_of(v)
            if 0 in shape_of(v):
                raise TpudslError(f"backend: {describe(op)} has a zero-sized tensor {shape_of(v)}; not modelled")


def _check_pool_mask(op: Operation) -> None:
    """MaxPoolWithMask: 2-D windows over an NCHW tensor, without dilation, keepdims, auto_pad resolved."""
    a = attrs_of(op)
    if len(shape_of(op.operands[0])) != 4 or len(a["kernel_shape"]) != 2:
        raise TpudslError(f"backend: {describe(op)}: only a 2-D window over a rank-4 tensor is modelled")
    for key, ok in (("dilations", lambda v: v is None or all(d == 1 for d in v)), ("keepdims", bool),
                    ("auto_pad", lambda v: v in (None, "NOTSET"))):
        if not ok(a.get(key)):
            raise TpudslError(f"backend: {describe(op)}: {key}={a.get(key)} is not modelled")


def _per_channel_vector(op: Operation) -> bool:
    """A PRelu slope the interpreter reads along C while broadcasting would read it along the last dim."""
    xs, ss = shape_of(op.operands[0]), shape_of(op.operands[1])
    return len(ss) == 1 and len(xs) > 2 and ss[0] == xs[1] and ss[0] != 1


def is_int8(op: Operation) -> bool:
    """The op reads or writes an int8 tensor (an INT8 Cast counts: one side is int8)."""
    return any(isinstance(v.type, TensorType) and isinstance(v.type.element_type, UniformQuantizedType)
               for v in [*op.operands, *op.results])


# Attributes _NOT_MODELLED refuses in float that an INT8 op's requantization uses (check_int8 checks them).
_INT8_ATTRS = ("coeff_merged", "multiplier", "rshift")


def check_int8(op: Operation, merged: bool = True) -> None:
    """TpudslError naming an INT8 op, or an attribute of one, the backend does not model (`merged`
    false: before --weight-reorder, a conv's coefficients are not merged yet)."""
    a = attrs_of(op)
    if op.name not in INT8_OPS:
        raise TpudslError(f"backend: {describe(op)} on int8 tensors has no instruction (INT8: "
                          f"{', '.join(n[4:] for n in INT8_OPS)})")
    if a.get("quant_mode", "MultiplierShift") != "MultiplierShift":
        raise TpudslError(f"backend: {describe(op)}: quant_mode={a['quant_mode']} is not modelled")
    for v in [*op.operands, *op.results]:  # the records hold one zero point per tensor
        e = getattr(v.type, "element_type", None)
        if isinstance(e, UniformQuantizedType) and e.is_per_axis and any(e.zero_points):
            raise TpudslError(f"backend: {describe(op)}: per-axis zero points {list(e.zero_points)} are not modelled")
    if op.name == "tpu.RequantIntAxis" and (len(shape_of(op.operands[0])) != 4 or a["rq_axis"] != 1
                                           or a["fuse_rq_axis"]):
        raise TpudslError(f"backend: {describe(op)}: RequantIntAxis is modelled along C of a 4-D tensor (rq_axis=1, "
                          f"fuse_rq_axis=false), has rq_axis={a['rq_axis']} on {list(shape_of(op.operands[0]))}")
    if op.name == "tpu.RequantInt" and len(a["multiplier"]) != 1:
        raise TpudslError(f"backend: {describe(op)}: multiplier={a['multiplier']} (per channel) is not modelled")
    if op.name == "tpu.Clip" and (op.operands[0].type.element_type != op.results[0].type.element_type  # type: ignore
                                  or any(a[k] != int(a[k]) for k in ("min", "max"))):
        raise TpudslError(f"backend: {describe(op)}: INT8 Clip is modelled on one type in and out with integer "
                          f"bounds (stored units), has min={a['min']}, max={a['max']}")
    if op.name == "tpu.MatMul":
        _check_int8_matmul(op, merged)
    if op.name == "tpu.Softmax" and (a["log"] or len(op.operands) < 2 or shape_of(op.operands[1]) != (256,)
                                     or dtype_of(op.operands[1]) != "i32"):
        raise TpudslError(f"backend: {describe(op)}: INT8 Softmax is modelled with a 256-entry int32 exp table and "
                          f"log=false")
    if op.name in ("tpu.Add", "tpu.Sub") and (len(set(a["rshifts"] or [])) != 1 or len(a["multipliers"] or []) != 2):
        raise TpudslError(f"backend: {describe(op)}: INT8 {op.name[4:]} needs 2 multipliers and one rshift, has "
                          f"{a['multipliers']}, {a['rshifts']}")
    if op.name in ("tpu.AddConst", "tpu.SubConst") and not (a["const_val"] == int(a["const_val"])
                                                           and abs(a["const_val"]) < 2**53 and 0 <= a["rshift"] < 64):
        raise TpudslError(f"backend: {describe(op)}: INT8 {op.name[4:]} needs an integer const_val below 2^53 and "
                          f"0 <= rshift < 64, has {a['const_val']}, {a['rshift']}")
    if merged and op.name in ("tpu.Conv2D", "tpu.Deconv") and not a["coeff_merged"]:
        what = "conv" if op.name == "tpu.Conv2D" else "deconv"
        raise TpudslError(f"backend: {describe(op)}: an INT8 {what}'s bias, multipliers and shifts are one merged "
                          f"coefficient; run --weight-reorder first")
    if op.name == "tpu.Lut" and (shape_of(op.operands[1]) != (256,) or ESIZE[dtype_of(op.operands[1])] != 1):
        raise TpudslError(f"backend: {describe(op)}: the table must be 256 int8 entries, not {op.operands[1].type}")
    if op.name == "tpu.Pool2D" and a.get("ceil_overhang"):  # the INT8 lowering never makes one
        raise TpudslError(f"backend: {describe(op)}: INT8 pool with ceil_overhang={a['ceil_overhang']} is not modelled")
    if op.name == "tpu.Pool2D" and a["pool_mode"] == "Avg" and any(a["pads"]) and not a["count_include_pad"] \
            and a.get("scale") is None:
        raise TpudslError(f"backend: {describe(op)}: INT8 average pool with pads that are not counted needs its "
                          f"`scale` (s_in / s_out)")


def _check_int8_matmul(op: Operation, merged: bool) -> None:
    """One (multiplier, rshift), or one per output column: then --weight-reorder puts them in the
    `multi` operand (the record reads them as a tile)."""
    a = attrs_of(op)
    columns = matmul_dims(op)[3]
    if len(a["multipliers"]) not in (1, columns) or len(a["rshifts"]) != len(a["multipliers"]):
        raise TpudslError(f"backend: {describe(op)}: multipliers={a['multipliers']}, rshifts={a['rshifts']}: one "
                          f"pair or one per output column ({columns}) is modelled")
    if merged and len(a["multipliers"]) > 1 and matmul_multi(op) is None:
        raise TpudslError(f"backend: {describe(op)}: its per-column multipliers and shifts are the `multi` "
                          f"operand; run --weight-reorder first")
