"""FeatureTally: the features a property test exists for, counted per example (also as hypothesis
events), and the check that each showed up often enough. The floors it checks should hold by
construction (docs/testing.md "Property floors"): a share a random draw only makes likely fails
now and then in the dev profile, where hypothesis draws new examples every run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from hypothesis import event, given, settings
from hypothesis import strategies as st


class FeatureTally:
    """Which of `features` each example of a property showed (also as hypothesis events), and the
    check that each showed up in at least a given share of the examples. An example made of parts
    (the runs a search visits, the layers of a network) also counts its parts, per name."""

    def __init__(self, features: tuple[str, ...]):
        self.features = features
        self.seen: Counter[str] = Counter()
        self.parts: Counter[str] = Counter()

    def record(self, names: Iterable[str], parts: Mapping[str, int] | None = None) -> None:
        names = set(names)
        for feature in self.features:
            if feature in names:
                event(feature)
                self.seen[feature] += 1
        self.parts.update(parts or {})
        self.seen["examples"] += 1

    def assert_each_in(self, share: float, features: Iterable[str] | None = None) -> None:
        """Each of `features` (all by default) in at least `share` of the examples."""
        for feature in self.features if features is None else features:
            assert feature in self.features, f"{feature} is not one of {self.features}"
            assert self.seen[feature] >= self.seen["examples"] * share, \
                f"{feature}: {self.seen[feature]} of {self.seen['examples']} examples"

    def assert_parts_per_example(self, name: str, ratio: float) -> None:
        """At least `ratio` parts named `name` per example, on average."""
        assert self.parts[name] >= self.seen["examples"] * ratio, \
            f"{name}: {self.parts[name]} parts in {self.seen['examples']} examples"


def forced_runs(drawn, forced, total: int, each: int) -> tuple:
    """A property's runs as (strategy, examples, features): `drawn` over what `forced`'s runs leave
    of `total`, then each (strategy, features) of `forced` over `each` examples, so that those
    features show in at least each / total of the examples by construction."""
    return ((drawn, total - each * len(forced), ()), *((strategy, each, features) for strategy, features in forced))


def run_each(check, runs) -> None:
    """check(example, features) as one hypothesis property per run of `forced_runs`."""
    for strategy, examples, features in runs:
        settings(max_examples=examples, deadline=None)(given(strategy, st.just(features))(check))()
