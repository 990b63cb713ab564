"""Discriminant rules: the ML rule for known densities, LDA, QDA and mixture discriminant analysis."""

from discrim.discriminant._summary import DiscriminantSummary, summarize_discriminant
from discrim.discriminant.boundaries import NormalBoundaries, normal_boundaries
from discrim.discriminant.gaussian import LinearDiscriminant, QuadraticDiscriminant
from discrim.discriminant.known import KnownDensityClassifier
from discrim.discriminant.mixture import MixtureDiscriminant

__all__ = [
    "DiscriminantSummary",
    "KnownDensityClassifier",
    "LinearDiscriminant",
    "MixtureDiscriminant",
    "NormalBoundaries",
    "QuadraticDiscriminant",
    "normal_boundaries",
    "summarize_discriminant",
]
