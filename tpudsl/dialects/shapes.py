"""Shape rules of the Top ops: `(in_shapes, attrs) -> [out_shape, ...]` (the layers: shapes_nn.py).

Rules are plain functions of shapes and attribute values so that the verifier, `--shape-infer`,
the frontend and tests all call the same code. They raise ShapeError (a sentence without the op
name: the verifier prefixes it) on inconsistent input. An entry `None` in the returned list means
"not computable from shapes and attributes": the result type must then be given (for example
`top.Reshape` fed by a `shapeT` tensor instead of a `shape` attribute).

Conventions (see docs/dialect.md): layouts are NCHW; `pads`/`paddings` hold all begins, then all
ends; negative axes count from the end."""

from __future__ import annotations

import math
from collections.abc import Sequence

from tpudsl.dialects.geometry.resize_modes import output_length
from tpudsl.dialects.opdef import AttrView, Shape, ShapeError
from tpudsl.dialects.opdef import fmt_shape as fmt

Ins = Sequence[Shape | None]


def operand(ins: Ins, i: int, what: str) -> Shape:
    """Shape of operand #i, which must be a ranked tensor."""
    if i >= len(ins) or ins[i] is None:
        raise ShapeError(f"operand #{i} ({what}) must be a tensor")
    return ins[i]  # type: ignore[return-value]


def need_rank(shape: Shape, ranks: Sequence[int], what: str) -> None:
    if len(shape) not in ranks:
        raise ShapeError(f"{what} must have rank {' or '.join(map(str, ranks))}, got {fmt(shape)}")


def axis_in(axis: int, rank: int, what: str = "axis") -> int:
    """`axis` normalized to [0, rank); negative values count from the end."""
    if not -rank <= axis < rank:
        raise ShapeError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def distinct_axes(axes: Sequence[int], rank: int, what: str = "axes") -> list[int]:
    norm = [axis_in(x, rank, what) for x in axes]
    if len(set(norm)) != len(norm):
        raise ShapeError(f"{what} {list(axes)} repeat an axis")
    return norm


def int_list(a: AttrView, key: str, length: int, default: int) -> list[int]:
    """List attribute `key` that must have `length` entries; missing means all `default`."""
    values = a.get(key)
    if values is None or values == []:
        return [default] * length
    if len(values) != length:
        raise ShapeError(f"{key} has {len(values)} entries, expected {length}")
    return list(values)


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def per_channel(ins: Ins, i: int, channels: int, what: str) -> None:
    """Operand #i, if present, must hold one value per channel ([C] or [1,C,1,1]-like)."""
    if i < len(ins) and ins[i] is not None and numel(ins[i]) != channels:  # type: ignore[arg-type]
        raise ShapeError(f"{what} has shape {fmt(ins[i])}, expected {channels} values (one per channel)")  # type: ignore[arg-type]


# ---- element-wise -------------------------------------------------------------------------


def same_as_first(ins: Ins, a: AttrView) -> list[Shape]:
    """Element-wise unary ops: the result has the input's shape."""
    return [operand(ins, 0, "input")]


def broadcast(*shapes: Shape) -> Shape:
    """Numpy/ONNX multidirectional broadcasting of `shapes`."""
    rank = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes], strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ShapeError("operand shapes " + ", ".join(fmt(s) for s in shapes) + " do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_all(ins: Ins, a: AttrView) -> list[Shape]:
    """Element-wise n-ary ops (Add, Mul, Max, Where, Compare...): broadcast of all tensor operands."""
    shapes = [s for s in ins if s is not None]
    if not shapes:
        raise ShapeError("needs at least one tensor operand")
    return [broadcast(*shapes)]


def where(ins: Ins, a: AttrView) -> list[Shape]:
    """Where(cond, tbrn?, fbrn?): a branch is `none` exactly when its *_is_const flag is set."""
    for i, flag in ((1, "x_is_const"), (2, "y_is_const")):
        present = i < len(ins) and ins[i] is not None
        if present == bool(a.get(flag, False)):
            flag_value = bool(a.get(flag, False))
            raise ShapeError(f"operand #{i} must be {'none' if flag_value else 'a tensor'} when {flag} is {str(flag_value).lower()}")
    return broadcast_all(ins, a)


# ---- shape manipulation -------------------------------------------------------------------


def permute(ins: Ins, a: AttrView) -> list[Shape]:
    x = operand(ins, 0, "input")
    order = list(a["order"])
    if sorted(order) != list(range(len(x))):
        raise ShapeError(f"order {order} is not a permutation of the {len(x)} input dims")
    return [tuple(x[i] for i in order)]


def transpose(ins: Ins, a: AttrView) -> list[Shape]:
    x = list(operand(ins, 0, "input"))
    d0, d1 = axis_in(a["dim0"], len(x), "dim0"), axis_in(a["dim1"], len(x), "dim1")
    x[d0], x[d1] = x[d1], x[d0]
    return [tuple(x)]


def reshape(ins: Ins, a: AttrView) -> list[Shape | None]:
    """`shape` may hold one -1 (inferred) and 0s (copy the input dim), as ONNX Reshape.
    Without `shape` (a shapeT operand instead), the result type carries the shape."""
    x = operand(ins, 0, "input")
    target = a.get("shape")
    if target is None:
        return [None]
    out = [x[i] if d == 0 and i < len(x) else d for i, d in enumerate(target)]
    if any(d == 0 for d in target[len(x):]):
        raise ShapeError(f"shape {target} copies (0) a dim the input {fmt(x)} does not have")
    if out.count(-1) > 1 or any(d < -1 for d in out):
        raise ShapeError(f"shape {target} may hold at most one -1 and no other negative value")
    if -1 in out:
        known = numel(d for d in out if d != -1)
        if known == 0 or numel(x) % known:
            raise ShapeError(f"cannot reshape {fmt(x)} into {target}")
        out[out.index(-1)] = numel(x) // known
    if numel(out) != numel(x):
        raise ShapeError(f"cannot reshape {fmt(x)} ({numel(x)} elements) into {fmt(out)}")
    return [tuple(out)]


def flatten(ins: Ins, a: AttrView) -> list[Shape]:
    x = operand(ins, 0, "input")
    if not x:
        return [(1,)]
    start = axis_in(a.get("start_dim", 0), len(x), "start_dim")
    end = axis_in(a.get("end_dim", -1), len(x), "end_dim")
    if start > end:
        raise ShapeError(f"start_dim {start} is after end_dim {end}")
    return [(*x[:start], numel(x[start : end + 1]), *x[end + 1 :])]


def squeeze(ins: Ins, a: AttrView) -> list[Shape]:
    """Drops `axes` (each must be 1); empty `axes` drops every dim of size 1 (ONNX)."""
    x = operand(ins, 0, "input")
    axes = distinct_axes(a.get("axes", []), len(x))
    for ax in axes:
        if x[ax] != 1:
            raise ShapeError(f"cannot squeeze axis {ax} of size {x[ax]} in {fmt(x)}")
    drop = set(axes) if axes else {i for i, d in enumerate(x) if d == 1}
    return [tuple(d for i, d in enumerate(x) if i not in drop)]


def unsqueeze(ins: Ins, a: AttrView) -> list[Shape]:
    """`axes` index the result (rank + len(axes)), as ONNX Unsqueeze."""
    x = operand(ins, 0, "input")
    axes = list(a["axes"])
    rank = len(x) + len(axes)
    new = set(distinct_axes(axes, rank))
    rest = iter(x)
    return [tuple(1 if i in new else next(rest) for i in range(rank))]


def concat(ins: Ins, a: AttrView) -> list[Shape]:
    shapes = [s for s in ins if s is not None]
    if not shapes:
        raise ShapeError("needs at least one tensor operand")
    rank = len(shapes[0])
    axis = axis_in(a.get("axis", 1), rank)
    for s in shapes:
        if len(s) != rank or any(d != e for i, (d, e) in enumerate(zip(s, shapes[0], strict=True)) if i != axis):
            raise ShapeError(
                f"operand shapes {', '.join(fmt(t) for t in shapes)} differ outside the concat axis {axis}"
            )
    return [(*shapes[0][:axis], sum(s[axis] for s in shapes), *shapes[0][axis + 1 :])]


def slice_(ins: Ins, a: AttrView) -> list[Shape | None]:
    """offset/ends/steps per dim (`axes` empty) or per listed axis; ONNX clamping rules."""
    x = operand(ins, 0, "input")
    for i, name in ((1, "offsetT"), (2, "endsT"), (3, "stepsT")):
        if i < len(ins) and ins[i] is not None:
            return [None]  # the bounds come from a tensor: the result type must be given
    axes = distinct_axes(a.get("axes", []), len(x)) or list(range(len(x)))
    offset, ends = a.get("offset", []), a.get("ends", [])
    steps = a.get("steps") or [1] * len(axes)
    if not len(offset) == len(ends) == len(steps) == len(axes):
        raise ShapeError(
            f"offset {list(offset)}, ends {list(ends)} and steps {list(steps)} need {len(axes)} entries each"
        )
    out = list(x)
    for ax, start, end, step in zip(axes, offset, ends, steps, strict=True):
        dim = x[ax]
        if step == 0:
            raise ShapeError("steps must not be 0")
        start = start + dim if start < 0 else start
        end = end + dim if end < 0 else end
        if step > 0:
            start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        else:
            start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
        out[ax] = max(0, -(-(end - start) // step))
    return [tuple(out)]


def split(ins: Ins, a: AttrView) -> list[Shape]:
    x = operand(ins, 0, "input")
    axis = axis_in(a.get("axis", 0), len(x))
    num = a["num"]
    sizes = a.get("split_size") or []
    if num < 1:
        raise ShapeError(f"num {num} must be positive")
    if sizes:
        if len(sizes) != num or sum(sizes) != x[axis] or min(sizes) < 0:
            raise ShapeError(f"split_size {list(sizes)} must be {num} sizes summing to {x[axis]}")
    else:
        if x[axis] % num:
            raise ShapeError(f"axis {axis} of size {x[axis]} does not split into {num} equal parts")
        sizes = [x[axis] // num] * num
    return [(*x[:axis], n, *x[axis + 1 :]) for n in sizes]


def pad(ins: Ins, a: AttrView) -> list[Shape | None]:
    x = operand(ins, 0, "input")
    if len(ins) > 1 and ins[1] is not None and not a.get("paddings"):
        return [None]
    paddings = int_list(a, "paddings", 2 * len(x), 0)
    out = tuple(d + b + e for d, b, e in zip(x, paddings[: len(x)], paddings[len(x) :], strict=True))
    if any(d < 0 for d in out):
        raise ShapeError(f"paddings {paddings} make a negative size from {fmt(x)}")
    return [out]


def tile(ins: Ins, a: AttrView) -> list[Shape | None]:
    x = operand(ins, 0, "input")
    reps = a.get("tile")
    if not reps:
        return [None]
    if len(reps) != len(x) or min(reps) < 0:
        raise ShapeError(f"tile {list(reps)} needs {len(x)} non-negative entries")
    return [tuple(d * r for d, r in zip(x, reps, strict=True))]


def expand(ins: Ins, a: AttrView) -> list[Shape | None]:
    """ONNX Expand: bidirectional broadcast of the input with `shape`."""
    x = operand(ins, 0, "input")
    target = a.get("shape")
    if target is None:
        return [None]
    return [broadcast(x, tuple(target))]


def gather_elements(ins: Ins, a: AttrView) -> list[Shape]:
    """The result has the indices' shape; indices and input have the same rank."""
    x = operand(ins, 0, "input")
    idx = operand(ins, 1, "indices")
    axis_in(a.get("axis", 2), len(x))
    if len(idx) != len(x):
        raise ShapeError(f"indices {fmt(idx)} must have the input's rank {len(x)}")
    return [idx]


def along_axis(ins: Ins, a: AttrView) -> list[Shape]:
    """Reverse, CumSum, Softmax: the input's shape; `axis` must be in range."""
    x = operand(ins, 0, "input")
    axis_in(a["axis"], len(x))
    return [x]


def given_by_result_type(ins: Ins, a: AttrView) -> list[Shape | None]:
    """Weight (the npz array) and View (the value of its `shape` tensor): only the result type
    can say the shape, so it must be ranked."""
    return [None]


def gather(ins: Ins, a: AttrView) -> list[Shape]:
    """input[:axis] + indices + input[axis+1:]; a rank-0 index, or a [1] index with keepdims=false,
    removes the axis."""
    x = operand(ins, 0, "input")
    idx = operand(ins, 1, "indices")
    axis = axis_in(a.get("axis", 0), len(x))
    if not a.get("keepdims", True) and tuple(idx) == (1,):
        idx = ()
    return [(*x[:axis], *idx, *x[axis + 1 :])]


def interp(ins: Ins, a: AttrView) -> list[Shape | None]:
    """[N, C, H, W] (or [N, C, W]) scaled by scale_h/scale_w (floor, as ONNX Resize). With a
    target_shape operand the result type carries the size."""
    x = operand(ins, 0, "input")
    need_rank(x, (3, 4), "input")
    if len(ins) > 1 and ins[1] is not None:
        return [None]
    sh, sw = a.get("scale_h", -1.0), a.get("scale_w", -1.0)
    if sw <= 0 or (len(x) == 4 and sh <= 0):
        raise ShapeError(f"scale_h {sh} and scale_w {sw} must be positive without a target_shape operand")
    w = output_length(x[-1], sw)
    h = output_length(x[2], sh) if len(x) == 4 else None
    if w < 1 or (h is not None and h < 1):
        raise ShapeError(f"scales {sh}, {sw} give an empty output from {fmt(x)}")
    return [(*x[:2], h, w) if h is not None else (*x[:2], w)]


def upsample(ins: Ins, a: AttrView) -> list[Shape]:
    x = operand(ins, 0, "input")
    need_rank(x, (4,), "input")
    sh, sw = a["scale_h"], a["scale_w"]
    if sh < 1 or sw < 1:
        raise ShapeError(f"scale_h {sh} and scale_w {sw} must be positive")
    return [(x[0], x[1], x[2] * sh, x[3] * sw)]


def depth2space(ins: Ins, a: AttrView) -> list[Shape]:
    """DepthToSpace (is_inversed: SpaceToDepth) with NCHW or NHWC input and output."""
    x = operand(ins, 0, "input")
    need_rank(x, (4,), "input")
    bh, bw = a["block_h"], a["block_w"]
    if bh < 1 or bw < 1:
        raise ShapeError(f"block_h {bh} and block_w {bw} must be positive")
    n, c, h, w = x if a.get("in_is_NCHW", True) else (x[0], x[3], x[1], x[2])
    if a.get("is_inversed", False):
        if h % bh or w % bw:
            raise ShapeError(f"spatial size {h}x{w} is not divisible by the block {bh}x{bw}")
        c, h, w = c * bh * bw, h // bh, w // bw
    else:
        if c % (bh * bw):
            raise ShapeError(f"{c} channels are not divisible by the block {bh}x{bw}")
        c, h, w = c // (bh * bw), h * bh, w * bw
    return [(n, c, h, w) if a.get("out_is_NCHW", True) else (n, h, w, c)]


# ---- reductions --------------------------------------------------------------------------


def reduce(ins: Ins, a: AttrView) -> list[Shape]:
    x = operand(ins, 0, "input")
    axes = set(distinct_axes(a["axes"], len(x)))
    if not axes:
        raise ShapeError("axes must not be empty")
    if a.get("keepdims", True):
        return [tuple(1 if i in axes else d for i, d in enumerate(x))]
    return [tuple(d for i, d in enumerate(x) if i not in axes)]


def arg(ins: Ins, a: AttrView) -> list[Shape]:
    """Arg (ArgMax/ArgMin): indices and values share the reduced shape."""
    x = operand(ins, 0, "input")
    axis = axis_in(a["axis"], len(x))
    out = tuple(1 if i == axis else d for i, d in enumerate(x)) if a.get("keepdims", True) else x[:axis] + x[axis + 1 :]
    return [out, out]



def topk(ins: Ins, a: AttrView) -> list[Shape | None]:
    """Values and indices: the input's shape with K along `axis` (unknown when a `kT` operand
    gives K at run time and the attribute is -1)."""
    x = operand(ins, 0, "input")
    axis = axis_in(a["axis"], len(x))
    k = a["K"]
    if k < 0:
        return [None, None]
    if k > x[axis]:
        raise ShapeError(f"K {k} is larger than dim {axis} of {fmt(x)}")
    out = x[:axis] + (k,) + x[axis + 1 :]
    return [out, out]


def gather_nd(ins: Ins, a: AttrView) -> list[Shape]:
    """indices [*batch, *n, k] pick slices of input [*batch, ...]: [*batch, *n, *input[b + k:]]."""
    x, idx = operand(ins, 0, "input"), operand(ins, 1, "indices")
    b = a["batch_dims"]
    if not idx or not 0 <= b < min(len(x), len(idx)) or x[:b] != idx[:b]:
        raise ShapeError(f"indices {fmt(idx)} and input {fmt(x)} do not share {b} leading batch dims")
    k = idx[-1]
    if b + k > len(x):
        raise ShapeError(f"index tuples of length {k} do not fit input {fmt(x)} after {b} batch dims")
    return [idx[:-1] + x[b + k :]]


def scatter_elements(ins: Ins, a: AttrView) -> list[Shape]:
    """The input's shape; indices and updates have one shape, of the input's rank."""
    x, idx, upd = (operand(ins, i, what) for i, what in enumerate(("input", "indices", "updates")))
    axis_in(a["axis"], len(x))
    if idx != upd or len(idx) != len(x):
        raise ShapeError(f"indices {fmt(idx)} and updates {fmt(upd)} must have one shape of rank {len(x)}")
    return [x]


def scatter_nd(ins: Ins, a: AttrView) -> list[Shape]:
    """The input's shape; updates are indices[:-1] + input[indices[-1]:]."""
    x, idx, upd = (operand(ins, i, what) for i, what in enumerate(("input_data", "indices", "updates")))
    if not idx or idx[-1] > len(x) or upd != idx[:-1] + x[idx[-1] :]:
        raise ShapeError(f"updates {fmt(upd)} do not match indices {fmt(idx)} into {fmt(x)}")
    return [x]


def einsum(ins: Ins, a: AttrView) -> list[Shape]:
    """numpy/ONNX einsum equations ("bij,bjk->bik"; no "->": the letters used once, sorted; "..."
    broadcasts): each letter has one size, the output lists the output letters' sizes."""
    equation = a["mode"].replace(" ", "")
    lhs, arrow, out = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ins):
        raise ShapeError(f"equation '{equation}' has {len(terms)} inputs, the op has {len(ins)} operands")
    sizes: dict[str, int] = {}
    ellipsis: Shape = ()
    for i, term in enumerate(terms):
        x = operand(ins, i, f"input {i}")
        letters = term.replace("...", "")
        if (letters and not letters.isalpha()) or len(letters) > len(x) or ("..." not in term and len(letters) != len(x)):
            raise ShapeError(f"term '{term}' does not fit input {i} {fmt(x)}")
        head = term.split("...")[0] if "..." in term else term
        dots = x[len(head) : len(x) - (len(letters) - len(head))] if "..." in term else ()
        ellipsis = broadcast(ellipsis, dots)
        for letter, d in zip(letters, x[: len(head)] + x[len(head) + len(dots) :], strict=True):
            if sizes.setdefault(letter, d) != d:
                raise ShapeError(f"'{letter}' is {sizes[letter]} and {d} in '{equation}'")
    if not arrow:
        letters = "".join(t.replace("...", "") for t in terms)
        out = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if any(c not in sizes for c in out.replace("...", "")):
        raise ShapeError(f"output '{out}' names a letter no input has")
    head, _, tail = out.partition("...")
    return [tuple(sizes[c] for c in head) + (ellipsis if "..." in out else ()) + tuple(sizes[c] for c in tail)]


def yuv420_to_rgb(ins: Ins, a: AttrView) -> list[Shape]:
    """Yuv2rgbFormula (TPU-MLIR's shape_inference): frames [..., H * 3 / 2, W] of 4:2:0 YUV (H rows of Y, then
    the chroma) give [..., 3, H, W]; H and W are even (each chroma sample covers 2 x 2 pixels: rows a
    multiple of 3 give an even H)."""
    x = operand(ins, 0, "YUV")
    if len(x) < 2 or x[-2] % 3 or x[-1] % 2:
        raise ShapeError(f"YUV {fmt(x)} is not 4:2:0 frames [..., H * 3 / 2, W] with H and W even")
    return [(*x[:-2], 3, x[-2] // 3 * 2, x[-1])]
