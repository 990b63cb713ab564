"""Discriminant rules: the ML rule for known densities, LDA, QDA and mixture discriminant analysis."""

from discrim.discriminant.boundaries import normal_boundaries
from discrim.discriminant.gaussian import LinearDiscriminant, QuadraticDiscriminant
from discrim.discriminant.known import KnownDensityClassifier
from discrim.discriminant.mixture import MixtureDiscriminant

__all__ = [
    "KnownDensityClassifier",
    "LinearDiscriminant",
    "MixtureDiscriminant",
    "QuadraticDiscriminant",
    "normal_boundaries",
]
