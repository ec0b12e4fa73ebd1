"""Codegen of the ops slicing.SELF_EMITTED names, which layer-group does not slice: the gathers and
scatters by computed indices (one global record each, records 76-79, 83/84 for a scatter with a
reduction: their data is read whole at positions known only at run time), Einsum (strided GDMA
loads around one BdcMatMul per part of its batch), Yuv2rgbFormula (one GdmaYuv2rgb, record 86),
GridSampler (one BdcGridSample, record 98; 101 when volumetric) and LSTM/GRU (one BdcRecurrent,
record 99; 102 with peepholes: codegen_recurrent.py)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation

from tpudsl.backend import isa
from tpudsl.backend.address_assign import address_of
from tpudsl.backend.chips import Chip
from tpudsl.backend.codegen import Program
from tpudsl.backend.codegen_detection import (check_detection_output, check_yolo_detection, emit_detection_output,
                                              emit_yolo_detection)
from tpudsl.backend.codegen_recurrent import check_recurrent, emit_recurrent
from tpudsl.backend.slicing import ESIZE, as4d, attrs_of, check_f32, check_modelled, dtype_of, shape_of
from tpudsl.dialects.opdef import describe
from tpudsl.dialects.quant import UniformQuantizedType
from tpudsl.ir.diagnostics import TpudslError


def _prod(dims) -> int:
    return int(np.prod(dims, dtype=np.int64))


def _check_dtypes(op: Operation, data: list[int]) -> tuple[int, int]:
    """(esize, index dtype code): the data operands and the result share one element type."""
    kinds = {dtype_of(op.operands[i]) for i in data} | {dtype_of(op.results[0])}
    if len(kinds) != 1:
        raise TpudslError(f"backend: {describe(op)}: data of types {sorted(kinds)} is not modelled (one type)")
    return ESIZE[kinds.pop()], isa.DTYPES[dtype_of(op.operands[1])]


def _axis_views(op: Operation) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Gather/ScatterElements: the input's and the indices' 4-D views and the axis among them."""
    x, idx = op.operands[0], op.operands[1]
    xs, is_ = as4d(op, shape_of(x)), as4d(op, shape_of(idx))
    axis = attrs_of(op)["axis"] % len(shape_of(x)) + 4 - len(shape_of(x))
    if any(i > d for k, (i, d) in enumerate(zip(is_, xs, strict=True)) if k != axis):
        raise TpudslError(f"backend: {describe(op)}: indices {list(shape_of(idx))} larger than the input "
                          f"{list(shape_of(x))} off the axis are not modelled")
    return xs, is_, axis


FLOAT_DTYPES = ("f32", "f16", "bf16")


def _combining(op: Operation) -> tuple[int, int]:
    """A scatter's (reduction, data dtype code): a reduction computes in the data's float type."""
    reduction, dtype = attrs_of(op)["reduction"], dtype_of(op.results[0])
    if reduction and dtype not in FLOAT_DTYPES:
        raise TpudslError(f"backend: {describe(op)}: reduction={reduction} on {dtype} data is not modelled "
                          f"(only {', '.join(FLOAT_DTYPES)})")
    return reduction, isa.DTYPES[dtype]


def _along_axis(op: Operation, scatter: bool) -> isa.Record:
    xs, is_, axis = _axis_views(op)
    esize, index_dtype = _check_dtypes(op, [0, 2] if scatter else [0])
    src, at, dst = address_of(op.operands[0]), address_of(op.operands[1]), address_of(op.results[0])
    if scatter:
        upd = address_of(op.operands[2])
        fields = (src, at, upd, dst, index_dtype, esize, axis, *xs, *is_)
        reduction, dtype = _combining(op)
        if reduction:
            return isa.GdmaScatterElementsReduce(*fields, reduction, dtype)  # type: ignore[arg-type]
        return isa.GdmaScatterElements(*fields)  # type: ignore[arg-type]
    return isa.GdmaGatherElements(src, at, dst, index_dtype, esize, axis, *xs, *is_)  # type: ignore[arg-type]


def _nd_dims(op: Operation) -> tuple[int, int, list[int]]:
    """Gather/ScatterND: (batch_dims, tuple length k, the k indexed dims padded to 4 with 1s)."""
    xs, is_ = shape_of(op.operands[0]), shape_of(op.operands[1])
    b = attrs_of(op)["batch_dims"] if op.name == "tpu.GatherND" else 0
    k = is_[-1]
    if not 1 <= k <= 4:
        raise TpudslError(f"backend: {describe(op)}: index tuples of length {k} are not modelled (1..4)")
    return b, k, [*xs[b:b + k], *[1] * (4 - k)]


def _nd(op: Operation, scatter: bool) -> isa.Record:
    xs, is_ = shape_of(op.operands[0]), shape_of(op.operands[1])
    b, k, dims = _nd_dims(op)
    esize, index_dtype = _check_dtypes(op, [0, 2] if scatter else [0])
    src, at, dst = address_of(op.operands[0]), address_of(op.operands[1]), address_of(op.results[0])
    count, slab = _prod(is_[b:-1]), _prod(xs[b + k:])
    if scatter:
        upd = address_of(op.operands[2])
        fields = (src, at, upd, dst, index_dtype, esize, count, k, slab, *dims)
        reduction, dtype = _combining(op)
        if reduction:
            return isa.GdmaScatterNDReduce(*fields, reduction, dtype)  # type: ignore[arg-type]
        return isa.GdmaScatterND(*fields)  # type: ignore[arg-type]
    batch = _prod(xs[:b])
    return isa.GdmaGatherND(src, at, dst, index_dtype, esize, batch, count, k, slab, *dims)  # type: ignore[arg-type]


# Einsum's loop over its batch entries issues 3 records per entry: more entries are an error.
MAX_EINSUM_PRODUCTS = 4096


@dataclass(frozen=True)
class EinsumPlan:
    """A two-operand equation as a batched matrix product: `loop` letters (each entry of their
    product is one (rows x summed) @ (summed x cols) product), and the letters folded into the rows,
    the summed dim and the columns (each may be empty: size 1)."""

    equation: str
    terms: tuple[str, str, str]  # left, right, output
    loop: tuple[str, ...]
    rows: tuple[str, ...]
    summed: tuple[str, ...]
    cols: tuple[str, ...]


def _folds(letters: list[str], terms: list[str], sizes: dict[str, int]) -> bool:
    """The letters, in this order, are one dim in each term (contiguous strides: each one's stride
    is the next one's size times its stride)."""
    for t in terms:
        s = {c: _prod([sizes[d] for d in t[i + 1:]]) for i, c in enumerate(t)}
        if any(s[x] != sizes[y] * s[y] for x, y in zip(letters, letters[1:], strict=False)):
            return False
    return True


def einsum_plan(op: Operation) -> EinsumPlan:
    """Letters in both inputs and the output loop (batch); letters of one input and the output are
    rows (left) or columns (right): folded into one dim where their strides allow, else all but the
    last loop too (the other operand reads the same data for each); letters in both inputs only are
    summed and must fold into one dim. Anything else (one operand, '...', a letter repeated in a
    term or summed over one operand, summed letters that do not fold) is an error naming it."""
    eq = attrs_of(op)["mode"].replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if not arrow:  # numpy's implicit output: the letters used once, sorted
        out = "".join(sorted(c for c in set(lhs) - {","} if lhs.count(c) == 1))
    fail = lambda why: TpudslError(f"backend: {describe(op)}: equation '{eq}' is not modelled ({why})")  # noqa: E731
    if len(terms) != 2 or "." in eq:
        raise fail("two operands without '...' are")
    a, b = terms
    if any(len(set(t)) != len(t) for t in (a, b, out)):
        raise fail("a letter repeated in one term")
    if set(out) - set(a) - set(b) or (set(a) ^ set(b)) - set(out):
        raise fail("a letter summed over one operand only")
    sizes = {c: d for t, v in zip((a, b, out), (*op.operands[:2], op.results[0]), strict=True)
             for c, d in zip(t, shape_of(v), strict=True)}
    loop = [c for c in out if c in a and c in b]
    rows, summed, cols = ([c for c in t if test(c)] for t, test in ((a, lambda c: c in out and c not in b),
                                                                     (a, lambda c: c in b and c not in out),
                                                                     (b, lambda c: c in out and c not in a)))
    if not _folds(summed, [a, b], sizes):
        raise fail(f"summed letters {''.join(summed)} that are not one dim of both operands")
    for letters, where in ((rows, [a, out]), (cols, [b, out])):
        if not _folds(letters, where, sizes):  # the last letter is the dim, the others loop
            loop += letters[:-1]
            del letters[:-1]
    if _prod([sizes[c] for c in loop]) > MAX_EINSUM_PRODUCTS:
        raise fail(f"{_prod([sizes[c] for c in loop])} products of letters {''.join(loop)}, above "
                   f"{MAX_EINSUM_PRODUCTS}")
    return EinsumPlan(eq, (a, b, out), tuple(loop), tuple(rows), tuple(summed), tuple(cols))


def _strides(term: str, shape: tuple[int, ...]) -> dict[str, int]:
    """Each letter's element stride in a contiguous tensor of `shape` (term names its dims)."""
    return {c: _prod(shape[i + 1:]) for i, c in enumerate(term)}


def _einsum(op: Operation, chip: Chip, prog: Program) -> None:
    plan = einsum_plan(op)
    values = (op.operands[0], op.operands[1], op.results[0])
    esize, _ = _check_dtypes(op, [0, 1])
    dtype = isa.DTYPES[dtype_of(op.results[0])]
    terms = list(zip(plan.terms, values, strict=True))
    sizes = {c: d for t, v in terms for c, d in zip(t, shape_of(v), strict=True)}
    strides = [_strides(t, shape_of(v)) for t, v in terms]
    size = lambda letters: _prod([sizes[c] for c in letters])  # noqa: E731
    # a folded dim steps its last letter's stride; a tensor without the letters: 0 (size 1)
    stride = lambda s, letters: s.get(letters[-1], 0) if letters else 0  # noqa: E731
    M, K, N = size(plan.rows), size(plan.summed), size(plan.cols)
    lane = lambda rows, c, w: isa.lane_bytes(rows, c, 1, w, esize, chip.lanes, chip.eu_bytes)  # noqa: E731
    per_product = lane(M, K, 1) + lane(1, K, N) + lane(M, N, 1)
    if per_product > chip.lmem_bytes:
        raise TpudslError(f"codegen: {describe(op)}: one product of equation '{plan.equation}' needs {per_product} "
                          f"bytes per lane; chip {chip.name} has {chip.lmem_bytes}")
    entries = list(itertools.product(*(range(sizes[c]) for c in plan.loop)))
    part = max(1, min(len(entries), chip.lmem_bytes // per_product))
    addrs = [address_of(v) for v in values]

    def at(i: int, entry: tuple[int, ...]) -> int:
        """Tensor i's address of this loop entry (a letter it lacks: stride 0, the same data)."""
        return addrs[i] + sum(strides[i].get(c, 0) * j for c, j in zip(plan.loop, entry, strict=True)) * esize  # type: ignore

    for first in range(0, len(entries), part):
        chunk = entries[first:first + part]
        left, right = 0, lane(M * len(chunk), K, 1)
        result = right + lane(len(chunk), K, N)
        for i, e in enumerate(chunk):
            prog.records.append(isa.GdmaLoad(dtype, at(0, e), stride(strides[0], plan.rows),
                                             stride(strides[0], plan.summed), 0, 0, left + i * lane(M, K, 1),
                                             M, K, 1, 1))
            prog.records.append(isa.GdmaLoad(dtype, at(1, e), 0, stride(strides[1], plan.summed), 0,
                                             stride(strides[1], plan.cols), right + i * lane(1, K, N), 1, K, 1, N))
        prog.records.append(isa.BdcMatMul(dtype, left, right, isa.NO_ADDR, result, M, K, N, len(chunk), 0, -1.0))
        for i, e in enumerate(chunk):
            prog.records.append(isa.GdmaStore(dtype, at(2, e), stride(strides[2], plan.rows),
                                              stride(strides[2], plan.cols), 0, 0, result + i * lane(M, N, 1),
                                              M, N, 1, 1))


def _yuv_frames(op: Operation) -> tuple[int, int, int]:
    """Yuv2rgbFormula: (frames, H, W) of its uint8 [..., H * 3 / 2, W] input; uint8 pixels out, each
    stored byte its value (scale 1, zero point 0: the record maps bytes to bytes)."""
    types = [v.type.element_type for v in (op.operands[0], op.results[0])]  # type: ignore[attr-defined]
    if not all(isinstance(t, UniformQuantizedType) and not t.is_signed and t.storage_width == 8 and t.scales == (1.0,)
               and t.zero_points == (0,) for t in types):
        raise TpudslError(f"backend: {describe(op)}: YUV and pixels of types {', '.join(map(str, types))} are not "
                          "modelled (!quant.uniform<u8:f32, 1.0>: a stored byte is its value)")
    xs = shape_of(op.operands[0])
    return _prod(xs[:-2]), xs[-2] // 3 * 2, xs[-1]


def _yuv2rgb(op: Operation) -> isa.Record:
    a = attrs_of(op)
    return isa.GdmaYuv2rgb(address_of(op.operands[0]), address_of(op.results[0]), *_yuv_frames(op),  # type: ignore[arg-type]
                           a["src_format"], a["dst_format"], isa.YUV_FORMULAS[a["formula_mode"]],
                           isa.ROUND_MODES[a["round_mode"]])


def _grid_shapes(op: Operation) -> tuple[int, ...]:
    """GridSampler: (n, c, h, w, oh, ow) of its f32 input and grid (lowered F32 in every mode), then
    (d, od) of a volumetric one (the shape rule refuses its bicubic mode)."""
    check_f32(op, "BdcGridSample")
    n, c, *spatial = shape_of(op.operands[0])
    _, *out, _ = shape_of(op.operands[1])
    return n, c, *spatial[-2:], *out[-2:], *spatial[:-2], *out[:-2]


def _grid_sample(op: Operation) -> isa.Record:
    a = attrs_of(op)
    n, c, h, w, oh, ow, *volumetric = _grid_shapes(op)
    fields = (address_of(op.operands[0]), address_of(op.operands[1]), address_of(op.results[0]),
              n, c, h, w, oh, ow, a["mode"], a["padding_mode"], int(a["align_corners"]))
    if volumetric:
        return isa.BdcGridSample3D(*fields, *volumetric)  # type: ignore[arg-type]
    return isa.BdcGridSample(*fields)  # type: ignore[arg-type]


_EMITTERS: dict[str, Callable[[Operation, Chip, Program], None]] = {
    "tpu.GatherElements": lambda op, chip, prog: prog.records.append(_along_axis(op, scatter=False)),
    "tpu.ScatterElements": lambda op, chip, prog: prog.records.append(_along_axis(op, scatter=True)),
    "tpu.GatherND": lambda op, chip, prog: prog.records.append(_nd(op, scatter=False)),
    "tpu.ScatterND": lambda op, chip, prog: prog.records.append(_nd(op, scatter=True)),
    "tpu.Einsum": _einsum,
    "tpu.YoloDetection": emit_yolo_detection,
    "tpu.DetectionOutput": emit_detection_output,
    "tpu.Yuv2rgbFormula": lambda op, chip, prog: prog.records.append(_yuv2rgb(op)),
    "tpu.GridSampler": lambda op, chip, prog: prog.records.append(_grid_sample(op)),
    "tpu.LSTM": emit_recurrent,
    "tpu.GRU": emit_recurrent,
}


def _gather_check(views: Callable[[Operation], object]) -> Callable[[Operation], object]:
    """A gather's checks: its views' (the shared geometry), then its data's one type."""
    return lambda op: (views(op), _check_dtypes(op, [0]))


def _scatter_check(views: Callable[[Operation], object]) -> Callable[[Operation], object]:
    """A scatter's checks: its views', its input's, updates' and result's one type, its reduction's."""
    return lambda op: (views(op), _check_dtypes(op, [0, 2]), _combining(op))


_CHECKS: dict[str, Callable[[Operation], object]] = {
    "tpu.GatherElements": _gather_check(_axis_views), "tpu.ScatterElements": _scatter_check(_axis_views),
    "tpu.GatherND": _gather_check(_nd_dims), "tpu.ScatterND": _scatter_check(_nd_dims), "tpu.Einsum": einsum_plan,
    "tpu.YoloDetection": check_yolo_detection, "tpu.DetectionOutput": check_detection_output,
    "tpu.Yuv2rgbFormula": _yuv_frames, "tpu.GridSampler": _grid_shapes,
    "tpu.LSTM": check_recurrent, "tpu.GRU": check_recurrent,
}


def check_self_emitted(op: Operation) -> None:
    """What the records of a SELF_EMITTED op do not model (a scatter's reduction on integers, an
    Einsum equation, ...) is an error naming it; --layer-group asks before anything is written."""
    check_modelled(op)
    _CHECKS[op.name](op)


def emit_self(op: Operation, chip: Chip, prog: Program) -> None:
    """The records of one SELF_EMITTED op (codegen.emit_op has named it in the debug info)."""
    check_self_emitted(op)
    _EMITTERS[op.name](op, chip, prog)
