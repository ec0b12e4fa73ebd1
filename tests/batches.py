"""Examples in batches: hypothesis' own work per example (saving and restoring the random states,
its tree of choices, the mutations it tries) costs more than drawing and checking one small case,
so a property of cheap cases draws a batch of them per example and runs a batch-th of the examples.
The cases it checks stay the profile's budget (and scale with HYPOTHESIS_PROFILE=thorough); a
failing batch shrinks like any list, its other cases to the simplest ones."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st


def batches(cases: st.SearchStrategy, size: int) -> st.SearchStrategy[list]:
    """Lists of exactly `size` cases."""
    return st.lists(cases, min_size=size, max_size=size)


def batched(cases: int, size: int) -> settings:
    """The settings for `cases` cases (at least `size`) in batches of `size`."""
    return settings(max_examples=max(1, cases // size))
