"""Plots of fitted discrim models (matplotlib, the ``plot`` extra); each function returns Axes."""

from discrim.plotting.decision_surface import plot_decision_surface
from discrim.plotting.mixture import (
    plot_classification,
    plot_convergence,
    plot_density,
    plot_mixture_density,
    plot_selection,
    plot_uncertainty,
)
from discrim.plotting.prototype import plot_batch_maps, plot_feature_weights, plot_prototype_surface
from discrim.plotting.prototype_map import plot_prototype_map
from discrim.plotting.search import plot_search

__all__ = [
    "plot_classification",
    "plot_batch_maps",
    "plot_convergence",
    "plot_decision_surface",
    "plot_density",
    "plot_feature_weights",
    "plot_mixture_density",
    "plot_prototype_map",
    "plot_prototype_surface",
    "plot_search",
    "plot_selection",
    "plot_uncertainty",
]
