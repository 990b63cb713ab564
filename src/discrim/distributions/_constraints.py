"""Declarative constraints on parameters and data supports, checked with one clear message each."""

import numpy as np

from discrim.backend._device import is_tensor

__all__ = [
    "Constraint",
    "integer_interval",
    "nonnegative",
    "nonnegative_integer",
    "one_hot",
    "positive",
    "positive_definite",
    "real",
    "simplex",
    "unit_interval",
]


class Constraint:
    """A named set of admissible values, checked element-wise or along the last axes.

    Parameters
    ----------
    name : str
        Short name used in error messages, e.g. ``"positive"``.
    description : str
        What an admissible value looks like, e.g. ``"every entry > 0"``.
    check : callable
        ``check(array) -> bool``, True when every entry is admissible.
    """

    def __init__(self, name, description, check):
        self.name = name
        self.description = description
        self._check = check

    def __repr__(self):
        return f"constraints.{self.name}"

    def check(self, value):
        """Return True when ``value`` satisfies the constraint (and is finite).

        Parameters
        ----------
        value : array-like

        Returns
        -------
        ok : bool
        """
        if is_tensor(value):  # data on a device are checked there (the checks below are method calls)
            if value.is_complex():
                return False
            return bool(value.isfinite().all()) and bool(self._check(value))
        value = np.asarray(value)
        if value.dtype.kind not in "biuf":
            return False
        with np.errstate(invalid="ignore"):
            return bool(np.all(np.isfinite(value)) and self._check(value))

    def validate(self, value, what):
        """Raise ``ValueError`` naming ``what`` when ``value`` violates the constraint.

        Parameters
        ----------
        value : array-like
        what : str
            How to name the value in the message, e.g. ``"parameter 'prob'"``.
        """
        if not self.check(value):
            raise ValueError(f"{what} must be {self.name} ({self.description}).")


def _is_pd(a):
    a = np.asarray(a, dtype=np.float64)
    if a.shape[-1] != a.shape[-2] or not np.allclose(a, np.swapaxes(a, -1, -2), rtol=1e-8, atol=1e-12):
        return False
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return False
    return True


def integer_interval(low, high):
    """Integers in ``[low, high]``; ``high`` may be an array broadcast against the value."""
    return Constraint(
        f"integer_interval({low}, n_trials)" if not np.isscalar(high) else f"integer_interval({low}, {high})",
        f"whole numbers between {low} and {'the trial count of the row' if not np.isscalar(high) else high}",
        lambda v: bool(((v == v.round()) & (v >= low) & (v <= high)).all()),
    )


real = Constraint("real", "finite real numbers", lambda v: True)
positive = Constraint("positive", "every entry > 0", lambda v: bool((v > 0).all()))
nonnegative = Constraint("nonnegative", "every entry >= 0", lambda v: bool((v >= 0).all()))
nonnegative_integer = Constraint(
    "nonnegative_integer", "whole numbers >= 0", lambda v: bool(((v >= 0) & (v == v.round())).all())
)
unit_interval = Constraint("unit_interval", "every entry in [0, 1]", lambda v: bool(((v >= 0) & (v <= 1)).all()))
simplex = Constraint(
    "simplex",
    "non-negative entries summing to one along the last axis",
    lambda v: np.all(v >= 0) and np.allclose(v.sum(axis=-1), 1.0, rtol=0, atol=1e-6),
)
positive_definite = Constraint(
    "positive_definite", "symmetric positive definite matrices", _is_pd
)
one_hot = Constraint(
    "binary", "entries 0 or 1", lambda v: bool(((v == 0) | (v == 1)).all())
)
