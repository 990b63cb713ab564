"""The single import point for scikit-learn's declarative parameter validation.

scikit-learn keeps these helpers in private modules; importing them from here alone means a move
in scikit-learn changes one file.
"""

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    validate_params,
)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def fit_context(*, prefer_skip_nested_validation: bool) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """scikit-learn's ``_fit_context`` (validate the parameters once per ``fit``), typed.

    The decorated method keeps its signature for type checkers: scikit-learn's decorator is
    untyped, so each ``fit`` it wraps would otherwise be ``Any`` to them.

    Parameters
    ----------
    prefer_skip_nested_validation : bool
        Skip the validation of estimators fitted inside this ``fit`` (their parameters were set here).

    Returns
    -------
    decorator : callable
        Wraps a ``fit`` method and returns it with the same signature.
    """
    decorator: Callable[[Callable[_P, _R]], Callable[_P, _R]] = _fit_context(
        prefer_skip_nested_validation=prefer_skip_nested_validation)
    return decorator


__all__ = ["HasMethods", "Hidden", "Interval", "InvalidParameterError", "Options", "StrOptions", "fit_context", "validate_params"]
