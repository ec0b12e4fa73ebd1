"""Index kernels: TopK, ScatterElements, ScatterND (replacing, or reducing: add, max, min, mul),
GatherND (ONNX semantics; negative indices count from the end)."""

from __future__ import annotations

import numpy as np

from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs


def _index(indices: Array, size: int | Array) -> Array:
    """Integer indices (frontends store them as float weights) with negatives wrapped."""
    idx = np.asarray(indices).astype(np.int64)
    return np.where(idx < 0, idx + size, idx)


def _optional(ins: Inputs, i: int) -> Array | None:
    return ins[i] if i < len(ins) else None


def _topk(ins: Inputs, a: KernelAttrs) -> list[Array]:
    x = ins[0]
    if a["replace_topk_indices"]:
        raise NotImplementedError("top.TopK with replace_topk_indices")
    k_operand = _optional(ins, 1)
    k = int(np.asarray(k_operand).reshape(-1)[0]) if k_operand is not None else int(a["K"])
    axis = a.get("axis", -1) % x.ndim
    largest = a.get("largest", True)
    # Stable sort of the key keeps equal values in index order, as onnxruntime does.
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(x, indices, axis=axis), indices]


# How a scatter combines an update with the element it lands on, by `reduction` code
# (dialects.top.SCATTER_REDUCTIONS): 0 replaces.
COMBINE = {0: lambda old, new: new, 1: np.add, 3: np.maximum, 4: np.minimum, 5: np.multiply}


def combine_in_order(rows: Array, at: Array, values: Array, reduction: int, rounded=lambda v: v) -> None:
    """rows[at[p]] = rounded(combine(rows[at[p]], values[p])) for p in index order (ONNX's order for
    duplicate indices; replacing: the last update stays). Positions met for the k-th time are
    combined together in round k, each position at most once a round."""
    combine = COMBINE[reduction]
    order = np.argsort(at, kind="stable")
    first = np.r_[True, at[order][1:] != at[order][:-1]]
    run_start = np.maximum.accumulate(np.where(first, np.arange(len(at)), 0))
    rank = np.empty(len(at), np.int64)
    rank[order] = np.arange(len(at)) - run_start
    for k in range(int(rank.max(initial=-1)) + 1):
        pick = rank == k
        rows[at[pick]] = rounded(combine(rows[at[pick]], values[pick]))


def scatter_targets(ins: Inputs, a: KernelAttrs, op: str) -> tuple[Array, Array, int]:
    """(flat positions in the input, the updates as rows of a slab each, slab): ScatterElements
    writes single elements, ScatterND slabs of the dims after the index tuple's."""
    x, indices, updates = ins
    idx = np.asarray(indices).astype(np.int64)
    if op.endswith("ScatterElements"):
        axis = a.get("axis", 0) % x.ndim
        coords = list(np.indices(idx.shape, sparse=True))
        coords[axis] = _index(idx, x.shape[axis])
        return np.ravel_multi_index(tuple(np.broadcast_to(c, idx.shape) for c in coords), x.shape).reshape(-1), \
            np.asarray(updates).reshape(-1, 1), 1
    k = idx.shape[-1]
    slab = int(np.prod(x.shape[k:], dtype=np.int64))
    tuples = [_index(idx[..., i], x.shape[i]).reshape(-1) for i in range(k)]
    return np.ravel_multi_index(tuples, x.shape[:k]), np.asarray(updates).reshape(-1, slab), slab


def _scatter(op: str):
    def kernel(ins: Inputs, a: KernelAttrs) -> Array:
        at, values, slab = scatter_targets(ins, a, op)
        out = ins[0].copy()
        combine_in_order(out.reshape(-1, slab), at, values, int(a.get("reduction", 0)))
        return out
    return kernel


def _gather_nd(ins: Inputs, a: KernelAttrs) -> Array:
    x, indices = ins
    b = int(a.get("batch_dims", 0))
    idx = np.asarray(indices).astype(np.int64)
    k = idx.shape[-1]
    batch = x.shape[:b]
    # Flatten the batch dims, gather per batch entry with fancy indexing, restore the shape.
    xb = x.reshape(-1, *x.shape[b:])
    ib = idx.reshape(xb.shape[0], -1, k)
    rows = [xb[n][tuple(_index(ib[n, :, i], xb.shape[1 + i]) for i in range(k))] for n in range(xb.shape[0])]
    return np.stack(rows).reshape((*batch, *idx.shape[b:-1], *x.shape[b + k :]))  # a tuple: the shape may be ()


KERNELS: dict[str, Kernel] = {
    "top.TopK": Kernel(_topk),
    "top.ScatterElements": Kernel(_scatter("top.ScatterElements")),
    "top.ScatterND": Kernel(_scatter("top.ScatterND")),
    "top.GatherND": Kernel(_gather_nd),
}
