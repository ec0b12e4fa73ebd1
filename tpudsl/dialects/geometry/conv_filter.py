"""The layout `--weight-reorder` gives a static 2-D convolution filter (docs/bmodel.md).

A filter [oc, ic/g, kh, kw] becomes [1, oc, ceil((ic/g) / P), kh*kw*P]: for each output channel,
input channels in blocks of P ("IC_PARALLEL", TPU-MLIR's name), and in a block the P channels of
one kernel position side by side, zero-padded past ic/g:

    reordered[0, o, b, k*P + p] = filter[o, b*P + p, k]     (k = kernel position, row-major)

P = 1 is TPU-MLIR's F32 layout [1, oc, ic/g, kh*kw] (the same bytes as the plain filter); F16 and
BF16 use P = the chip's eu_bytes / 2, as TPU-MLIR's filter_reorder. The shape alone says which P
a filter was packed with, so the shape rule and the interpreter need no attribute to read it.
"""

from __future__ import annotations

from collections.abc import Sequence


def reordered_shape(oc: int, icg: int, kernel_hw: int, ic_parallel: int) -> tuple[int, int, int, int]:
    """The reordered shape of an [oc, icg, kh, kw] filter (kernel_hw = kh*kw) packed by `ic_parallel`."""
    return (1, oc, -(-icg // ic_parallel), kernel_hw * ic_parallel)


def ic_parallel_of(shape: Sequence[int], icg: int, kernel: Sequence[int]) -> int | None:
    """The P with which a filter of `shape` is the reordered layout of a filter with `icg` input
    channels per group and 2-D `kernel`; None when `shape` is not such a layout. The plain layout
    [oc, icg, kh, kw] is read as plain: where it is also a reordered one, the bytes agree."""
    if len(shape) != 4 or len(kernel) != 2:
        return None
    if shape[1] == icg and list(shape[2:]) == list(kernel):
        return None
    kernel_hw = kernel[0] * kernel[1]
    if shape[0] != 1 or kernel_hw == 0 or shape[3] % kernel_hw or shape[3] == 0:
        return None
    ic_parallel = shape[3] // kernel_hw
    return ic_parallel if tuple(shape) == reordered_shape(shape[1], icg, kernel_hw, ic_parallel) else None
