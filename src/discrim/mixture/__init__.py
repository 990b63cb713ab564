"""Finite mixtures of any component family, fitted by EM, and mixture selection."""

from discrim.mixture._bootstrap import BootstrapLRT, bootstrap_lrt
from discrim.mixture._clusters import hierarchical_clusters
from discrim.mixture._selection import MixtureSelection, gaussian_models, select_mixture
from discrim.mixture._summary import MixtureSummary, summarize_mixture
from discrim.mixture.finite_mixture import FiniteMixture

__all__ = [
    "BootstrapLRT", "FiniteMixture", "MixtureSelection", "bootstrap_lrt", "MixtureSummary", "gaussian_models",
    "hierarchical_clusters", "select_mixture", "summarize_mixture",
]
