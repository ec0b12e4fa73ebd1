"""Index kernels: TopK, ScatterElements, ScatterND, GatherND (ONNX semantics; negative indices
count from the end)."""

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


def _scatter_elements(ins: Inputs, a: KernelAttrs) -> Array:
    x, indices, updates = ins
    axis = a.get("axis", 0) % x.ndim
    out = x.copy()
    np.put_along_axis(out, _index(indices, x.shape[axis]), updates, axis=axis)
    return out


def _scatter_nd(ins: Inputs, a: KernelAttrs) -> Array:
    x, indices, updates = ins
    if a.get("reduction", 0) != 0:
        raise NotImplementedError("top.ScatterND with a reduction")
    idx = np.asarray(indices).astype(np.int64)
    k = idx.shape[-1]
    out = x.copy()
    out[tuple(_index(idx[..., i], x.shape[i]) for i in range(k))] = updates
    return out


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
    "top.ScatterElements": Kernel(_scatter_elements),
    "top.ScatterND": Kernel(_scatter_nd),
    "top.GatherND": Kernel(_gather_nd),
}
