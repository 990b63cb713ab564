"""The warnings discrim raises of its own, so that callers can filter them by category.

Each subclasses the standard category a caller would otherwise filter (``UserWarning`` or
``RuntimeWarning``), so existing filters keep working.
"""

from sklearn.exceptions import FitFailedWarning as _SklearnFitFailedWarning

__all__ = ["CollapsingComponentWarning", "DataScaleWarning", "FitFailedWarning", "UnfamiliarDataWarning"]


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


class DataScaleWarning(UserWarning):
    """The features' scale or spread does not suit the model's defaults.

    A feature constant over its observed values, a ``reg_covar`` (an absolute variance) that is not
    small beside a feature's variance, or features far from unit scale for a prototype set's
    kernel, whose every batch then ends empty. Raised by :class:`~discrim.mixture.FiniteMixture`,
    :func:`~discrim.mixture.select_mixture`, :class:`~discrim.discriminant.MixtureDiscriminant` and
    :class:`~discrim.prototype.PrototypeClassifier`, each naming the features (and classes) and the
    remedy: rescale X (e.g. StandardScaler), leave the feature out, or lower ``reg_covar``.
    """


class FitFailedWarning(_SklearnFitFailedWarning):
    """A grid cell of :func:`~discrim.mixture.select_mixture` could not be fitted; its row holds NaN.

    A subclass of scikit-learn's ``FitFailedWarning`` (a ``RuntimeWarning``), so that a filter on
    scikit-learn's, as for a failed fit in a ``GridSearchCV``, catches it too.
    """


class UnfamiliarDataWarning(UserWarning):
    """Most rows lie far from every prototype: the predictions fall back to the class frequencies.

    The usual cause is a model fitted on scaled features (e.g. the output of a StandardScaler)
    that is given rows in their original units.
    """
