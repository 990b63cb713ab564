"""Discriminant rules: the ML rule for known densities, LDA, QDA and mixture discriminant analysis."""

import importlib

# Lazy re-exports: each estimator lives in its own module; importing the package stays cheap.
_EXPORTS = {
    "KnownDensityClassifier": "discrim.discriminant.known",
    "normal_boundaries": "discrim.discriminant.boundaries",
    "LinearDiscriminant": "discrim.discriminant.gaussian",
    "QuadraticDiscriminant": "discrim.discriminant.gaussian",
    "MixtureDiscriminant": "discrim.discriminant.mixture",
}

__all__ = list(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'discrim.discriminant' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
