"""Finite mixtures of any component family, fitted by EM, and mixture selection."""

from discrim.mixture._selection import MixtureSelection, select_mixture
from discrim.mixture.finite_mixture import FiniteMixture

__all__ = ["FiniteMixture", "MixtureSelection", "select_mixture"]
