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

# Type checkers read the names from these imports (a module __getattr__ would make each one Any);
# they take any TYPE_CHECKING as true, and this one spares `import discrim` the import of typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from discrim.discriminant import KnownDensityClassifier as KnownDensityClassifier
    from discrim.discriminant import LinearDiscriminant as LinearDiscriminant
    from discrim.discriminant import MixtureDiscriminant as MixtureDiscriminant
    from discrim.discriminant import QuadraticDiscriminant as QuadraticDiscriminant
    from discrim.discriminant import normal_boundaries as normal_boundaries
    from discrim.mixture import FiniteMixture as FiniteMixture
    from discrim.mixture import select_mixture as select_mixture
    from discrim.model_selection import PrototypeClassifierCV as PrototypeClassifierCV
    from discrim.persistence import load_model as load_model
    from discrim.persistence import save_model as save_model
    from discrim.prototype import PrototypeClassifier as PrototypeClassifier
else:  # hidden from type checkers, so that a name not exported is an error rather than Any

    def __getattr__(name):
        if name in _EXPORTS:
            return getattr(importlib.import_module(_EXPORTS[name]), name)
        raise AttributeError(f"module 'discrim' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
