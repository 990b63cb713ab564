"""The warnings discrim raises of its own, so that callers can filter them by category.

Each subclasses the standard category a caller would otherwise filter (``UserWarning`` or
``RuntimeWarning``), so existing filters keep working.
"""

__all__ = ["CollapsingComponentWarning", "FitFailedWarning", "UnfamiliarDataWarning"]


class CollapsingComponentWarning(UserWarning):
    """A fitted Gaussian component or class covariance has a variance near its floor.

    The likelihood then grows without bound as the variance shrinks, and the density means nothing
    along that direction: a component with too few rows for its covariance, or rows with missing
    values that leave a direction unobserved. Raised by :class:`~discrim.mixture.FiniteMixture`,
    :func:`~discrim.mixture.select_mixture` (for the selected model) and the discriminant
    estimators, each naming its own remedy (a larger ``reg_covar`` or ``reg_param``, a prior,
    fewer components, a constrained covariance model).

    Examples
    --------
    Turn it into an error where a degenerate fit must not pass unnoticed:

    >>> import warnings
    >>> from discrim.exceptions import CollapsingComponentWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", CollapsingComponentWarning)
    ...     # fit here: a collapsing component raises instead of warning
    >>> issubclass(CollapsingComponentWarning, UserWarning)
    True
    """


class FitFailedWarning(RuntimeWarning):
    """A grid cell of :func:`~discrim.mixture.select_mixture` could not be fitted; its row holds NaN."""


class UnfamiliarDataWarning(UserWarning):
    """Most rows lie far from every prototype: the predictions fall back to the class frequencies.

    The usual cause is a model fitted on scaled features (e.g. the output of a StandardScaler)
    that is given rows in their original units.
    """
