"""Examples in batches: hypothesis' own work per example (saving and restoring the random states,
its tree of choices, the mutations it tries) costs more than drawing and checking one small case,
so a property of cheap cases draws a batch of them per example.

A batch is not `size` new cases: hypothesis' mutator re-runs an example with parts of it copied, so
much of a batch repeats earlier ones, and the first example is `size` copies of the simplest case
(measured: 8 cases an example for 200 cases found 63-114 distinct ones a kind, one an example
~200). So each property skips a case it already checked in this process (`DistinctCases`, keyed by
a canonical form: its printed text or repr), counts the distinct ones and asserts at its end that they reach what one case an example checked in ci before the batching,
scaled with the profile (HYPOTHESIS_PROFILE=thorough: ten times as many). A failing batch shrinks
like any list, its other cases to the simplest ones.

Hypothesis keeps an example's events in a dict (one per label, however often it is recorded), so a
count per case is recorded once an example with the count in its label: "3 distinct cases in an
example" is one example that checked three new cases."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable

from hypothesis import event, settings
from hypothesis import strategies as st


def batches(cases: st.SearchStrategy, size: int, key: Callable[..., Hashable]) -> st.SearchStrategy[list]:
    """Lists of exactly `size` cases, distinct by `key` (the property's DistinctCases key): without
    it the first example is `size` copies of the simplest case."""
    return st.lists(cases, min_size=size, max_size=size, unique_by=key)


def batched(cases: float, size: int) -> settings:
    """The settings for `cases` cases drawn (at least `size`) in batches of `size`, rounded up."""
    return settings(max_examples=max(1, math.ceil(cases / size)))


class DistinctCases:
    """The cases a property checked in this process, by canonical key: `first_time` says whether
    a case is new, `assert_at_least` is the floor on how many were. The property's example function
    is wrapped in `examples`, which records the event "N distinct cases in an example" (N the new
    ones it checked) and makes a failing example's cases new again when hypothesis replays it (to
    shrink it, and to show it)."""

    def __init__(self) -> None:
        self.keys: set[Hashable] = set()
        self.added: list[Hashable] = []  # by the example running

    def first_time(self, key: Hashable) -> bool:
        if key in self.keys:
            return False
        self.keys.add(key)
        self.added.append(key)
        return True

    def examples(self, body: Callable) -> Callable:
        @functools.wraps(body)
        def example(*args, **kwargs):
            self.added = []
            try:
                result = body(*args, **kwargs)
            except BaseException:
                self.keys.difference_update(self.added)
                raise
            event(f"{len(self.added)} distinct cases in an example")
            return result

        return example

    def assert_at_least(self, in_ci: int) -> None:
        """At least `in_ci` distinct cases under ci's budget, scaled by the active profile's."""
        floor = in_ci * settings.default.max_examples // settings.get_profile("ci").max_examples
        assert len(self.keys) >= floor, f"{len(self.keys)} distinct cases, fewer than {floor}"
