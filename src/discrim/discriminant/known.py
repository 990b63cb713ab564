"""The ML and Bayes discriminant rules for populations with known densities."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from discrim._typing import ArrayLike
from discrim.backend import to_numpy
from discrim.base import BaseLikelihoodClassifier
from discrim.distributions._base import mask_patterns
from discrim.discriminant._validation import validate_training_data
from discrim.utils._param_validation import StrOptions, fit_context
from discrim.utils.validation import check_priors


def _describe(density):
    """A short description of a density for error messages (scipy's frozen ones show args)."""
    # scipy's frozen univariate distributions repr as an object address; show name and args.
    dist = getattr(density, "dist", None)
    name = getattr(dist, "name", None) or type(density).__name__
    args = getattr(density, "args", None)
    kwds = getattr(density, "kwds", None)
    if isinstance(args, tuple) and isinstance(kwds, dict):
        shown = [repr(a) for a in args] + [f"{key}={val!r}" for key, val in kwds.items()]
        text = f"{name}({', '.join(shown)})"
    else:
        text = repr(density)
    return text if len(text) <= 80 else text[:77] + "..."


class KnownDensityClassifier(BaseLikelihoodClassifier):
    """Maximum-likelihood discriminant rule for known population densities (Definition 8.1).

    Allocates ``x`` to the population whose density is largest at ``x``,
    ``d(x) = argmax_k f_k(x)``; with ``priors`` it is the Bayes rule
    ``argmax_k pi_k f_k(x)``. Nothing is estimated: :meth:`fit` only records the class labels
    (and the class frequencies when ``priors="empirical"``).

    Parameters
    ----------
    densities : list of objects with a ``logpdf`` or ``logpmf`` method, of length n_classes >= 2
        The population densities ``f_1, ..., f_g``, for example frozen ``scipy.stats``
        distributions, continuous univariate (``norm(0, 1)``) or multivariate
        (``multivariate_normal(mean, cov)``), or discrete, whose probability mass function is
        the density (``poisson(3)``, ``binom(10, 0.3)``). ``densities[k]`` belongs to
        ``classes_[k]``, the k-th class label **in sorted order**. ``logpdf`` is used when a
        density has both methods. It is called on the whole ``(n_samples, n_features)`` array
        for a multivariate density; a univariate density needs X of shape ``(n_samples, 1)``.
        A ``scipy.stats.gaussian_kde``, which takes points as columns, gets ``X.T``.
        Missing values (NaN) are accepted only by ``scipy.stats.multivariate_normal`` densities (their
        marginals).
    priors : "equal", "empirical" or array-like of shape (n_classes,), default="equal"
        "equal": equal priors, i.e. the ML rule, as the other discriminants' default.
        "empirical": the (weighted) class frequencies of the training labels. An array: the
        prior probabilities ``pi_k`` in the order of ``classes_`` (the Bayes rule; a pandas Series
        indexed by the labels is read by label). ``None``, the
        former default, still means "equal" (in scikit-learn it means the class frequencies).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels; ``classes_[k]`` is population ``Pi_{k+1}`` of the ML rule.
    priors_ : ndarray of shape (n_classes,)
        Prior probabilities used by the rule.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X was a DataFrame with string column names.

    See Also
    --------
    normal_boundaries : the allocation regions of two univariate normal populations.
    LinearDiscriminant : the sample ML rule with estimated means and common covariance.

    Notes
    -----
    The ML rule ``d(x) = argmax_k f_k(x)`` (Mardia, Kent and Bibby, 1979, ch. 11):
    ``densities[k]`` is ``f_{k+1}`` and ``g = len(densities)``.
    :meth:`log_density` returns the exact ``log f_k(x)`` as an ``(n_samples, n_classes)`` array.
    :meth:`decision_function` follows scikit-learn's convention: for two classes
    ``log pi_2 f_2(x) - log pi_1 f_1(x)`` (positive means ``classes_[1]``), otherwise the log
    joint densities ``log pi_k f_k(x)``; with equal priors both are log densities up to a
    constant. Posteriors are normalised in log space, so points far from every population
    still get finite probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import norm
    >>> from discrim.discriminant import KnownDensityClassifier
    >>> clf = KnownDensityClassifier([norm(1, 1), norm(2, 2)]).fit([[0], [1]], [1, 2])
    >>> clf.predict([[0.0], [3.0]])
    array([1, 2])
    """

    _parameter_constraints = {
        "densities": [list, tuple],
        "priors": [None, StrOptions({"equal", "empirical"}), "array-like"],
    }

    def __init__(self, densities: Sequence[Any], priors: str | ArrayLike | None = "equal") -> None:
        self.densities = densities
        self.priors = priors

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Record the class labels and check the densities against them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Used only to fix ``n_features_in_`` and to check that every density accepts rows
            of this width and gives no NaN log-density on them (an invalid density, such as
            ``norm(2.5, -1)``, is refused by index). NaN marks a missing value, as in
            :meth:`predict`: accepted where every density offers marginals (multivariate normal).
        y : array-like of shape (n_samples,)
            Class labels; their sorted unique values are matched to ``densities`` in order.
        sample_weight : array-like of shape (n_samples,), default=None
            Only used for ``priors="empirical"``.

        Returns
        -------
        self : KnownDensityClassifier
        """
        for k, density in enumerate(self.densities):
            if _log_density_method(density) is None:
                raise TypeError(
                    f"densities[{k}] ({type(density).__name__}) has no callable logpdf or logpmf method: "
                    "pass distributions such as scipy.stats.norm(0, 1), "
                    "scipy.stats.multivariate_normal(mean, cov) or scipy.stats.poisson(3)."
                )
        # NaN as in predict: only densities with marginals accept it (the check below names the others)
        X, y = validate_training_data(self, X, y, allow_nan=True)
        classes, _, _, totals = self._prepare_targets(y, sample_weight, X.shape[0])
        if len(self.densities) != classes.shape[0]:
            raise ValueError(
                f"{len(self.densities)} densities were given but y has {classes.shape[0]} classes "
                f"{classes.tolist()}: pass one density per class, in the sorted order of the labels."
            )
        self.classes_ = classes
        self.priors_ = self._resolve_priors(totals, classes)
        # Fail now, not at predict time, if a density rejects X or is invalid (a NaN
        # log-density, as scipy gives for norm(0, -1)), naming the density.
        self._log_density(X)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # only multivariate normal densities offer marginals
        tags.input_tags.allow_nan = all(_offers_marginal(density) for density in self.densities)
        return tags

    def _resolve_priors(self, totals, classes):
        return check_priors("equal" if self.priors is None else self.priors, totals, labels=classes)

    def _log_density(self, X):
        X = to_numpy(X)  # scipy's densities run on the host: a torch tensor (on a CPU) comes over
        n = X.shape[0]
        out = np.empty((n, len(self.densities)))
        missing = np.isnan(X)
        for k, density in enumerate(self.densities):
            name, log_density = _log_density_method(density)
            if missing.any() and not _offers_marginal(density):
                raise ValueError(
                    f"X has missing values (NaN) but densities[{k}] ({_describe(density)}) offers no marginal "
                    "density: only a multivariate normal (scipy.stats.multivariate_normal) does here. Complete X first."
                )
            try:
                # an invalid density (scipy.stats.norm(0, 0)) makes numpy warn before the NaN check
                # below explains it; a log-density of -inf (density 0) is valid
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    values = (_marginal_logpdf(density, X, missing) if missing.any()
                              else np.asarray(log_density(X.T if _takes_columns(density) else X), dtype=np.float64))
            except (ValueError, TypeError) as exc:
                raise ValueError(
                    f"densities[{k}].{name} failed on X of shape {X.shape}: {exc}. A multivariate "
                    "density needs X with as many columns as its dimension; a univariate one "
                    "needs X with one column."
                ) from exc
            if values.size != n:
                raise ValueError(
                    f"densities[{k}].{name} returned shape {values.shape} for X of shape "
                    f"{X.shape}; expected one value per row. A univariate density needs X with "
                    "a single column."
                )
            values = values.reshape(n)
            nan = np.flatnonzero(np.isnan(values))
            if nan.size:
                raise ValueError(
                    f"densities[{k}] ({_describe(density)}) returned a NaN log-density at "
                    f"{nan.size} row(s) of X (first index {nan[0]}): the density is invalid "
                    "(for example a negative or zero scale, as in scipy.stats.norm(0, -1)) or "
                    "undefined there. Pass a valid distribution."
                )
            out[:, k] = values
        return out


def _log_density_method(density):
    """The name and bound method giving ``log f(x)``: ``logpdf``, else ``logpmf``; None if neither.

    A discrete distribution's density (with respect to the counting measure) is its probability
    mass function, so ``logpmf`` serves the rule as ``logpdf`` does.
    """
    for name in ("logpdf", "logpmf"):
        method = getattr(density, name, None)
        if callable(method):
            return name, method
    return None


def _takes_columns(density):
    """Whether the density reads points as the columns of its argument (``scipy.stats.gaussian_kde``).

    Given X itself, a KDE read its rows as dimensions: it refused X unless it had as many rows as
    features, and then scored the columns of X, silently.
    """
    from scipy.stats import gaussian_kde

    return isinstance(density, gaussian_kde)


def _offers_marginal(density):
    """Whether the density is a frozen ``scipy.stats.multivariate_normal``, whose marginals
    :func:`_marginal_logpdf` takes.

    Its class, not attributes named ``mean`` and ``cov``: a user's own density with those (a
    multivariate t, say) had its rows with missing values scored by a normal marginal, silently
    (posteriors 0.5 for 0.999998 in the test).
    """
    from scipy import stats

    return isinstance(density, type(stats.multivariate_normal(np.zeros(1))))


def _marginal_logpdf(density, X, missing):
    """Log-density of the observed entries of every row (NaN: missing) under a multivariate normal.

    The marginal of a normal density is normal, with the sub-vector of the mean and the
    sub-matrix of the covariance (:func:`_offers_marginal` tells the densities that have one).
    """
    from scipy import stats

    mean, cov = density.mean, density.cov
    # a singular normal the user allowed stays allowed in its marginals (scipy then works on the
    # support of each sub-matrix)
    allow_singular = bool(getattr(density, "allow_singular", False))
    out = np.zeros(X.shape[0])  # a row with nothing observed: density 1
    for observed, rows in mask_patterns(~missing):
        if observed.any():
            marginal = stats.multivariate_normal(mean[observed], cov[np.ix_(observed, observed)],
                                                 allow_singular=allow_singular)
            out[rows] = marginal.logpdf(X[np.ix_(rows, observed)]).reshape(-1)
    return out
