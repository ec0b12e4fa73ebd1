"""A Permute's 4-D view (the backend's one strided load) and the single-dim moves a wider one splits into.

Above rank 4, size-1 dims go and input dims that stay neighbours, in order, in the output merge:
ShuffleNet's channel shuffle (n, g, c/g, h, w) by [0, 2, 1, 3, 4] is (n, g, c/g, h*w) by
[0, 2, 1, 3]. Swin's qkv permute ([B_, N, 3, heads, hd] by [2, 0, 3, 1, 4]) keeps five groups: it
splits into moves of one dim each (a selection sort of the order), and a move keeps at most four
groups (the dims before it, the dim, the dims it jumps over, the rest)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def permute_groups(shape: Sequence[int], order: Sequence[int], drop_ones: bool = True) -> list[list[int]]:
    """The input dims, in output order, grouped where neighbours stay neighbours (size-1 dims dropped
    unless `drop_ones` is False)."""
    groups: list[list[int]] = []
    for d in (d for d in order if not (drop_ones and shape[d] == 1)):
        if groups and d == groups[-1][-1] + 1:
            groups[-1].append(d)
        else:
            groups.append([d])
    return groups


def fold(shape: Sequence[int], order: Sequence[int], drop_ones: bool = True) -> tuple[list[int], list[int]]:
    """The permutation as one of fewer dims, each group of `permute_groups` one dim: (the folded input
    shape, the order of the folded dims)."""
    groups = permute_groups(shape, order, drop_ones)
    by_input = sorted(range(len(groups)), key=lambda i: groups[i][0])  # the groups in input order
    folded = [math.prod(shape[d] for d in groups[i]) for i in by_input]
    return folded, [by_input.index(i) for i in range(len(groups))]


def folds_to_4d(shape: Sequence[int], order: Sequence[int]) -> bool:
    return len(shape) <= 4 or len(permute_groups(shape, order)) <= 4


def single_moves(order: Sequence[int]) -> list[list[int]]:
    """Orders, applied one after the other, that each move one dim and together give `order`."""
    current, moves = list(range(len(order))), []
    for position, dim in enumerate(order):
        at = current.index(dim)
        if at != position:
            step = list(range(len(order)))
            step.insert(position, step.pop(at))
            moves.append(step)
            current.insert(position, current.pop(at))
    return moves
