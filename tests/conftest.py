"""Shared fixtures: seeded random generators and small data sets."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")


@pytest.fixture
def rng():
    """A seeded generator, fresh for every test."""
    return np.random.default_rng(12345)
