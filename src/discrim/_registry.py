"""The one registry of models that ``discrim fit`` and the benchmarks look up by name."""

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class ModelSpec:
    description: str
    factory: Callable  # **params -> unfitted estimator; imports lazily


def _lda(**params):
    from discrim.discriminant import LinearDiscriminant

    return LinearDiscriminant(**params)


def _qda(**params):
    from discrim.discriminant import QuadraticDiscriminant

    return QuadraticDiscriminant(**params)


def _mda(**params):
    from discrim.discriminant import MixtureDiscriminant
    from discrim.distributions import Gaussian

    params.setdefault("family", Gaussian(covariance_type="full"))
    return MixtureDiscriminant(**params)


def _proset(**params):
    from discrim.prototype import PrototypeClassifier

    return PrototypeClassifier(**params)


def _proset_cv(**params):
    from discrim.model_selection import PrototypeClassifierCV

    return PrototypeClassifierCV(**params)


MODELS = {
    "lda": ModelSpec("sample ML rule with a common covariance (linear discriminant)", _lda),
    "qda": ModelSpec("sample ML rule with one covariance per class (quadratic discriminant)", _qda),
    "mda": ModelSpec("mixture discriminant analysis: a Gaussian mixture per class, fitted by EM", _mda),
    "proset": ModelSpec("prototype set classifier", _proset),
    "proset-cv": ModelSpec("prototype set classifier with cross-validated penalty and batch count", _proset_cv),
}


# Other names users type for the registered models (the classes' own words)
ALIASES = {"prototype": "proset", "prototype-cv": "proset-cv", "prototypes": "proset"}


def model_key(name):
    """The key of :data:`MODELS` that ``name`` (a key or an alias) names, or ``ValueError`` listing them.

    Parameters
    ----------
    name : str

    Returns
    -------
    key : str
    """
    key = ALIASES.get(name, name)
    if key not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of: {', '.join(MODELS)} "
                         f"(or {', '.join(ALIASES)} for the prototype set).")
    return key


def make_model(name, **params):
    """Build the model registered as ``name`` with ``params`` passed to its constructor.

    Parameters
    ----------
    name : str
        A key of :data:`MODELS`, or one of :data:`ALIASES`.
    **params
        Constructor parameters.

    Returns
    -------
    estimator : scikit-learn estimator, unfitted
    """
    return MODELS[model_key(name)].factory(**params)
