"""Finite mixtures of any component family, fitted by EM, and mixture selection."""

from discrim.mixture._selection import MixtureSelection, gaussian_models, select_mixture
from discrim.mixture.finite_mixture import FiniteMixture

__all__ = ["FiniteMixture", "MixtureSelection", "gaussian_models", "select_mixture"]
