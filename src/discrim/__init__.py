"""discrim: likelihood-based classification and mixture modelling."""

import importlib
import logging

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())

# Public names resolved lazily: the subpackages import each other plainly (no cycle), but loading
# all of them pulls in scikit-learn, scipy and skops, which every `discrim` command (even
# `discrim datasets`) would otherwise pay for before doing anything.
_EXPORTS = {
    "KnownDensityClassifier": "discrim.discriminant",
    "LinearDiscriminant": "discrim.discriminant",
    "QuadraticDiscriminant": "discrim.discriminant",
    "MixtureDiscriminant": "discrim.discriminant",
    "normal_boundaries": "discrim.discriminant",
    "FiniteMixture": "discrim.mixture",
    "select_mixture": "discrim.mixture",
    "PrototypeClassifier": "discrim.prototype",
    "PrototypeClassifierCV": "discrim.model_selection",
    "load_model": "discrim.persistence",
    "save_model": "discrim.persistence",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'discrim' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
