"""Shared fixtures: seeded random generators and small data sets."""

import os

import matplotlib
import numpy as np
import pytest
from hypothesis import settings

matplotlib.use("Agg")

# CI (.ci/run sets HYPOTHESIS_PROFILE=ci) draws the same examples on every run, so that a
# submission lands or not on its own merit; local runs draw new ones each time and so keep
# searching (a failure found there is replayed from hypothesis's example database).
settings.register_profile("ci", derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def rng():
    """A seeded generator, fresh for every test."""
    return np.random.default_rng(12345)
