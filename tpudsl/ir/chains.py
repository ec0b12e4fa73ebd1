"""Chains of ops where each extends the one before: the graph logic of the Concat chains (DenseNet's
dense blocks) that the interpreter (`interp/concat_chain.py`: one numpy buffer) and the backend
(`backend/concat_in_place.py`: one global-memory buffer) share; neither phase imports the other, so
it lives here. What "extends" means, and what may be a member, is each phase's own rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Operation


def extension_chains(ops: Sequence[Operation], extended: Callable[[Operation], Operation | None]) -> list[list[Operation]]:
    """The chains of two or more of `ops` (in the order of their first op): each member extends
    the one before (`extended(op)`: the op of `ops` it extends, None: none) and is the only op of
    `ops` that extends it."""
    extenders: dict[Operation, list[Operation]] = {}
    for op in ops:
        before = extended(op)
        if before is not None:
            extenders.setdefault(before, []).append(op)
    successor = {op: after[0] for op, after in extenders.items() if len(after) == 1}
    extending = set(successor.values())
    found = []
    for head in ops:
        if head not in successor or head in extending:
            continue  # not the first of a chain of two or more
        chain = [head]
        while chain[-1] in successor:
            chain.append(successor[chain[-1]])
        found.append(chain)
    return found
