"""Finite mixtures of any component family, fitted by EM, and mixture selection."""

import importlib

from discrim.mixture.finite_mixture import FiniteMixture

__all__ = ["FiniteMixture", "select_mixture"]


def __getattr__(name):
    # select_mixture lives in its own module and is loaded on first use.
    if name == "select_mixture":
        return importlib.import_module("discrim.mixture._selection").select_mixture
    raise AttributeError(f"module 'discrim.mixture' has no attribute {name!r}")
