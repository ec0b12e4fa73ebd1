"""Hypothesis profiles, and the session fixture several INT8 files share (calibrated_cnn).
`make test` runs the fixed, derandomized budget ("ci") whether or not CI is set, so a test run is
reproducible and CI sees what a developer saw; HYPOTHESIS_PROFILE=dev draws new random examples
each run (same budget), HYPOTHESIS_PROFILE=thorough ten times as many."""

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=200, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev", max_examples=200, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def calibrated_cnn(tmp_path_factory):
    """name -> tests.calibrated_cnn.CalibratedCnn, each built once per test process."""
    from tests.calibrated_cnn import build

    built = {}

    def get(name: str):
        if name not in built:
            built[name] = build(name, tmp_path_factory.mktemp(f"calibrated_{name}"))
        return built[name]

    return get
