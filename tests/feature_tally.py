"""FeatureTally: the features a property test exists for, counted per example (also as hypothesis
events), and the check that each showed up often enough."""

from __future__ import annotations

from collections import Counter

from hypothesis import event


class FeatureTally:
    """Which of `features` each example of a property showed (also as hypothesis events), and the
    check that each showed up in at least a given share of the examples."""

    def __init__(self, features: tuple[str, ...]):
        self.features = features
        self.seen: Counter[str] = Counter()

    def record(self, names: set[str]) -> None:
        for feature in self.features:
            if feature in names:
                event(feature)
                self.seen[feature] += 1
        self.seen["examples"] += 1

    def assert_each_in(self, share: float) -> None:
        for feature in self.features:
            assert self.seen[feature] >= self.seen["examples"] * share, \
                f"{feature}: {self.seen[feature]} of {self.seen['examples']} examples"
