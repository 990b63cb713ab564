"""The single import point for scikit-learn's declarative parameter validation.

scikit-learn keeps these helpers in private modules; importing them from here alone means a move
in scikit-learn changes one file.
"""

from sklearn.base import _fit_context as fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    validate_params,
)

__all__ = ["HasMethods", "Hidden", "Interval", "InvalidParameterError", "Options", "StrOptions", "fit_context", "validate_params"]
