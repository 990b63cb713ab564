"""The sample ML rule for normal populations: linear (common covariance) and quadratic discriminants."""

from __future__ import annotations

import warnings
from abc import abstractmethod
from numbers import Integral, Real
from typing import Any, Literal, Self

import numpy as np
from sklearn.base import TransformerMixin, clone
from sklearn.exceptions import ConvergenceWarning

from discrim._posterior import listed_indices, rule_from_joint
from discrim._typing import Array, ArrayLike, Device
from discrim.base import BaseLikelihoodClassifier
from discrim.backend import ops, to_numpy
from discrim.discriminant import _gaussian_math as gm
from discrim.discriminant._incomplete_em import RuleGaussian, run_class_em
from discrim.discriminant._validation import validate_training_data
from discrim.distributions._gaussian_linalg import (
    SingularCovarianceError,
    cholesky_factors,
    inverse_factors,
)
from discrim.distributions._gaussian_missing import ConditionedRows, MissingPatterns
from discrim.distributions.gaussian import Gaussian, GaussianStats
from discrim.exceptions import CollapsingComponentWarning
from discrim.utils import _fitted_state as state
from discrim.utils._dask import align_rows, blockwise, is_dask, labelled_statistics, validated_rows
from discrim.utils._param_validation import HasMethods, Interval, StrOptions, fit_context
from discrim.utils._warnings import user_stacklevel
from discrim.utils.validation import (
    check_class_totals,
    check_classes_observed,
    check_labels,
    check_no_missing_labels,
    check_no_unlabelled_marker,
    check_observed_weight,
    class_index,
    plain_label,
    plain_known_labels,
    unlabelled_rows,
)

_FULL_GAUSSIAN = Gaussian("full")  # the class moments of both rules


def _observed_spread(X, w):
    """Each feature's weighted variance and range over its observed (non-NaN) entries in the rows of
    positive weight, in memory or by Dask.

    A row of weight 0 is no part of the fit: its values must not set the EM's scale (and with it
    the variance floor), nor make a feature constant over the weighted rows look varied. The
    variance is weighted, so that an integer weight counts as repeated rows (unweighted, weights
    of 0 to 2 moved the fit's posteriors by 6e-7 from the repeated rows' through the floor).

    Parameters
    ----------
    X : ndarray or dask.array.Array of shape (n_samples, n_features)
        NaN where missing.
    w : ndarray or dask.array.Array of shape (n_samples,)

    Returns
    -------
    variance, range : ndarray of shape (n_features,)
        A range of 0 marks a constant feature exactly, where the variance of equal values can
        round to 1e-31 instead of 0; NaN a feature observed in no row of positive weight.
    """
    lazy = is_dask(X)
    if lazy:
        import dask
        import dask.array as xp
    else:
        xp, w = np, np.asarray(w)
    seen = ~xp.isnan(X) & (w > 0)[:, None]
    X = xp.where(seen, X, np.nan)
    weight = xp.where(seen, w[:, None], 0.0)
    with warnings.catch_warnings():
        # a feature missing in every row gives NaN (refused by the caller), not numpy's warnings
        warnings.simplefilter("ignore", RuntimeWarning)
        total = weight.sum(axis=0)
        mean = xp.nansum(weight * X, axis=0) / total
        variance = xp.nansum(weight * (X - mean) ** 2, axis=0) / total
        spread = xp.nanmax(X, axis=0) - xp.nanmin(X, axis=0)
        if lazy:
            return tuple(np.asarray(a) for a in dask.compute(variance, spread))
        return variance, spread


def _incomplete_rows(X):
    """Which rows of validated X have a missing value (NaN): (n,) bool, or None where none has (or X is a tensor)."""
    if not isinstance(X, np.ndarray):
        return None
    incomplete = np.isnan(X).any(axis=1)
    return incomplete if incomplete.any() else None


def _show(label):
    """A class label as the user wrote it (``'a'``, ``3``), without numpy's scalar wrapper."""
    return repr(plain_label(label))


def _pooled_divisor(totals, rows, who, alternative=None):
    """The pooled covariance's divisor ``n - g``; raise naming its cause when it is not positive.

    Parameters
    ----------
    totals : ndarray of shape (n_classes,)
        Total weight of each class: its number of rows when unweighted.
    rows : ndarray of shape (n_classes,) of int
        Rows of positive weight in each class.
    who : str
        The estimator (and setting) that needs the pooled covariance, for the message.
    alternative : str or None, default=None
        A fix besides adding samples, for the message.

    Returns
    -------
    dof : float
        ``sum(totals) - n_classes``, positive.
    """
    n_classes = totals.shape[0]
    dof = totals.sum() - n_classes
    if _above(totals.sum(), n_classes):
        return dof
    dof = min(dof, 0.0)  # a positive dof here is the rounding of the weights' sum
    fixes = ["add samples"] + ([alternative] if alternative else [])
    if np.array_equal(totals, rows):  # unit weights: n counts samples
        need = f"more samples than classes ({int(rows.sum())} samples, {n_classes} classes; divisor n - g = {dof:g})"
    else:
        # frequency weights: n is their sum, whatever the number of rows (a user with normalised
        # weights has many rows and would not think of adding samples)
        need = (f"a total sample_weight above the number of classes (total weight {totals.sum():g} over "
                f"{int(rows.sum())} samples, {n_classes} classes; divisor n - g = {dof:g})")
        fixes.insert(0, "sample_weight are frequency weights (a weight of 2 counts its row twice): scale "
                        "them to sum to the number of samples")
    raise ValueError(f"{who} needs {need} to estimate the pooled covariance: {', or '.join(fixes)}.")


def _estimator_covariance(estimator, rows):
    """``covariance_`` of a clone of ``estimator`` (the ``covariance_estimator`` parameter) fitted on
    ``rows`` (m, d): (d, d). Raises a ValueError naming the parameter when the fitted estimator has
    no ``covariance_`` (a transformer such as StandardScaler also has ``fit``)."""
    fitted = clone(estimator).fit(rows)
    if not hasattr(fitted, "covariance_"):
        raise ValueError(
            f"covariance_estimator must expose covariance_ once fitted (a scikit-learn covariance estimator such "
            f"as LedoitWolf(), OAS() or MinCovDet()); {type(estimator).__name__} has none. Or set "
            "covariance_estimator=None (shrinkage= and reg_param= regularise without one)."
        )
    return fitted.covariance_


def _above(total, bound):
    """``total > bound`` beyond the rounding of a sum of weights (150 weights of 0.02 sum to 3 +
    4e-16: 3 classes would then get a divisor of 4e-16 and covariances of 1e15)."""
    return total - bound > 64 * np.finfo(np.float64).eps * max(abs(total), bound)


class _GaussianDiscriminant(BaseLikelihoodClassifier):
    """Shared fitting of class means and scatter; subclasses turn the scatter into covariances."""

    _parameter_constraints = {
        "priors": [StrOptions({"equal", "empirical"}), "array-like"],
        "reg_param": [Interval(Real, 0, 1, closed="both")],
        "device": "no_validation",  # check_device names what is wrong, in fit and predict
        "unlabeled": "no_validation",  # any label value, or None
        "shrinkage": [Interval(Real, 0, 1, closed="both"), StrOptions({"oas", "auto"}), None],
        "covariance_estimator": [HasMethods(["fit"]), None],
        "em_max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, priors="equal", reg_param=0.0, device=None, unlabeled=None, shrinkage=None,
                 covariance_estimator=None, em_max_iter=1000):
        self.priors = priors
        self.reg_param = reg_param
        self.device = device
        self.unlabeled = unlabeled
        self.shrinkage = shrinkage
        self.covariance_estimator = covariance_estimator
        self.em_max_iter = em_max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a covariance_estimator is fitted on complete rows only: fit then refuses NaN (_refuse_estimator)
        tags.input_tags.allow_nan = self.covariance_estimator is None
        return tags

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Estimate the class means and covariance(s) from labelled training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric; NaN marks a missing value (missing at random). A row with every value
            missing says nothing and is given no weight (with a warning).
        y : array-like of shape (n_samples,)
            Class labels (at least two classes); ``unlabeled`` (or NaN) for an unlabelled row
            when that parameter is set.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative frequency weights: an integer weight gives the same fit as repeating
            the row that many times.

        Returns
        -------
        self : estimator

        Notes
        -----
        With missing values or unlabelled rows the class means and covariances are maximum-
        likelihood estimates by EM (:class:`~discrim.mixture.FiniteMixture` with the rows'
        known classes fixed): missing entries enter through their conditional expectations,
        unlabelled rows through their class posteriors. The covariances are then rescaled to
        the rules' divisors (``n_k - 1``, pooled ``n - g``) with the expected class totals, and
        ``priors="empirical"`` uses those totals. With every row labelled, ``reg_param``,
        ``shrinkage`` (and QDA's ``pooling``) act at every M-step: the fit is the fixed point of
        that regularised EM, the covariances the rule's of the statistics of the rows completed
        under them. With unlabelled rows they act once, on the EM's maximum-likelihood estimate.
        QDA's ``pooling=1`` is LDA's model, one covariance for every class: its EM is LDA's.
        """
        if is_dask(X):
            return self._fit_dask(X, y, sample_weight)
        X, y = validate_training_data(self, X, y, allow_nan=True)
        classes, y_idx, w, totals = self._prepare_targets(y, sample_weight, X.shape[0])
        if ops.any_nan(X) or np.any(y_idx < 0):
            self._refuse_estimator("rows with missing values (NaN) or without labels")
            # the EM of missing values and unlabelled rows runs on the host (see _fit_incomplete);
            # the fitted moments serve the device's predictions as any others
            X = to_numpy(X)
            # a data point per feature (its first observed value in a row of positive weight): see fit_origin
            first = np.argmax(~np.isnan(X) & (w > 0)[:, None], axis=0)
            origin = X[first, np.arange(X.shape[1])].astype(np.float64)
            rows = np.bincount(y_idx[y_idx >= 0], weights=(w[y_idx >= 0] > 0), minlength=classes.shape[0])
            return self._fit_incomplete(X, classes, y_idx, w, origin, rows.astype(int), bool(np.any(y_idx < 0)))
        # Statistics about a data point (see fit_origin): translation changes nothing but the
        # reported means_, whatever the offset.
        origin = gm.fit_origin(X, w)
        # Class moments are the Gaussian family's statistics of labelled rows (one engine for
        # LDA, QDA and the mixtures); only the divisors and the shrinkage are the rules' own.
        stats = _FULL_GAUSSIAN.labelled_stats(X - ops.like(origin, X), y_idx, w, classes.shape[0])
        rows = np.bincount(y_idx, weights=(w > 0), minlength=classes.shape[0]).astype(int)
        estimated = None
        if self.covariance_estimator is not None:
            if not np.all(w == w[0]):
                raise ValueError("covariance_estimator takes no sample weights (scikit-learn's covariance "
                                 "estimators fit unweighted rows): pass sample_weight=None or repeat rows.")
            estimated = self._estimated_covariance(to_numpy(X).astype(np.float64), y_idx, stats.mean + origin)
        return self._set_moments(classes, totals, origin, stats, rows, estimated)

    def _refuse_estimator(self, what):
        """Raise when ``covariance_estimator`` is set for data it cannot be fitted on."""
        if self.covariance_estimator is not None:
            raise ValueError(
                f"covariance_estimator is fitted on complete in-memory rows; got {what}. Use shrinkage= "
                "(computed from the sufficient statistics on every data path) or covariance_estimator=None."
            )

    def _fit_incomplete(self, X, classes, y_idx, w, origin, rows, unlabelled):
        """Class moments by EM from rows with missing values or without labels (see :meth:`fit`).

        Parameters
        ----------
        X : ndarray or dask.array.Array of shape (n_samples, n_features)
            NaN where missing.
        classes : ndarray of shape (n_classes,)
        y_idx : ndarray or dask.array.Array of shape (n_samples,) of int
            Class indices; -1 for an unlabelled row.
        w : ndarray or dask.array.Array of shape (n_samples,)
        origin : ndarray of shape (n_features,)
            A data point (see :func:`~discrim.discriminant._gaussian_math.fit_origin`).
        rows : ndarray of shape (n_classes,) of int
            Labelled rows of positive weight per class.
        unlabelled : bool
            Whether some rows are unlabelled.
        """
        from discrim.mixture import FiniteMixture

        n_classes = classes.shape[0]
        w, rows = self._without_empty_rows(X, y_idx, w, rows)
        # A covariance estimated from incomplete rows can drift towards singular (its likelihood
        # has no interior maximum when a class is small): a floor of 1e-6 of each feature's variance
        # keeps it factorable, as scikit-learn's reg_covar does. Per feature (the EM runs on the
        # features divided by their spread): one floor for all, from their mean variance, inflated a
        # 0/1 flag beside a feature in days and made the fit depend on the units.
        variance, spread = _observed_spread(X, w)
        check_observed_weight(np.isfinite(spread).astype(np.float64))  # a feature missing in every row
        constant = np.flatnonzero(~(spread > 0))
        if constant.size and self.reg_param == 0 and self.shrinkage is None:
            # As the fit of complete rows refuses them: the floor below would otherwise give such a
            # feature a variance of 1e-6 and the model an unwarranted certainty along it.
            names = getattr(self, "feature_names_in_", None)
            shown = [str(names[j]) if names is not None else int(j) for j in constant[:5]]
            raise ValueError(
                f"{constant.size} feature(s) of X ({shown}{' ...' if constant.size > 5 else ''}) "
                "are constant over their observed values, so the covariance is singular. Remove them or set "
                "reg_param > 0 (for example reg_param=0.01)."
            )
        check_classes_observed(X, y_idx, w, [_show(label) for label in classes],
                               getattr(self, "feature_names_in_", None))
        informative = rows
        if not is_dask(X):
            # a row with no observed value carries nothing: 50 such rows let a class of 2 rows
            # through the refusal below, to a covariance of eigenvalues 3e-5
            seen = (np.asarray(w) > 0) & (np.asarray(y_idx) >= 0) & ~np.isnan(X).all(axis=1)
            informative = np.bincount(np.asarray(y_idx)[seen], minlength=n_classes)
        self._refuse_unidentifiable(classes, informative, X.shape[1], unlabelled)
        scale = np.where(variance > 0, np.sqrt(variance), 1.0)
        # with every row labelled, regularisation inside EM (see _incomplete_em); with unlabelled
        # rows the class totals move, no prior is fixed, and regularising the M-steps would reshape
        # the classes that EM assigns the unlabelled rows to (measured: worse accuracy), so after
        regularised = not unlabelled and self._regularises()
        em = FiniteMixture(RuleGaussian(self._em_covariance_type, reg_covar=1e-6), n_classes, tol=1e-10,
                           max_iter=self.em_max_iter, random_state=0, accelerate=True,
                           device=None if isinstance(X, np.ndarray) else self.device, unlabeled=-1)
        with warnings.catch_warnings():
            # FiniteMixture's own warning would name its max_iter; the user sets em_max_iter here.
            warnings.simplefilter("ignore", ConvergenceWarning)
            try:
                result = run_class_em(self, em, X, y_idx, w, rows, unlabelled, regularised, scale)
            except ValueError as exc:  # the mixture's words (n_components, reg_covar): this estimator's
                raise ValueError(
                    f"{type(self).__name__}: the class covariances estimated from rows with missing values are "
                    f"singular ({exc}). A feature constant within the classes, or too few rows for the "
                    "features: set reg_param > 0 (for example reg_param=0.1), or remove constant features."
                ) from None
        self._warn_if_collapsing(result.collapsing, result.covariance, classes)
        if not result.converged:
            warnings.warn(
                f"{type(self).__name__}: the EM that estimates the class means and covariances from "
                f"{'unlabelled rows or ' if unlabelled else ''}rows with missing values did not converge in "
                f"em_max_iter={self.em_max_iter} iterations (mean log-likelihood still changing by more than "
                "1e-10): the estimates are not yet the maximum-likelihood ones. Raise em_max_iter; slow "
                "convergence also comes with many missing cells or a nearly singular covariance (reg_param "
                "helps there).", ConvergenceWarning, stacklevel=user_stacklevel())
        totals = result.stats.weight
        stats = GaussianStats(weight=totals, mean=result.stats.mean - origin, scatter=result.stats.scatter)
        return self._set_moments(classes, totals, origin, stats, rows)

    def _without_empty_rows(self, X, y_idx, w, rows):
        """The weights with the rows of no observed value (NaN in every feature) set to 0, and the
        labelled rows of positive weight per class (``rows``, (n_classes,)) without them; warns of them.

        Such a row leaves the maximum-likelihood estimates as they are, but it counted in the class
        totals: in the rules' divisors ``n_k - 1`` and ``n - g`` and in ``priors="empirical"`` (one
        such row of class 0 beside 90 rows: priors 0.341, 0.330, 0.330 instead of thirds).
        """
        empty = np.isnan(X).all(axis=1) & (w > 0)
        per_class = (empty[:, None] & (y_idx[:, None] == np.arange(rows.shape[0]))).sum(axis=0)
        count = empty.sum()
        if is_dask(X):
            import dask

            count, per_class = dask.compute(count, per_class)
        if not count:
            return w, rows
        where = "" if is_dask(X) else f" (index {listed_indices(empty)[1]})"
        warnings.warn(
            f"{type(self).__name__}: {int(count)} row(s) of X{where} have no observed value (NaN in every "
            "feature): they say nothing about their class, and are given no weight (in the class totals, the "
            "covariance divisors and priors=\"empirical\" too).", UserWarning, stacklevel=user_stacklevel())
        return np.where(empty, 0.0, w), rows - np.asarray(per_class, dtype=rows.dtype)

    def _refuse_unidentifiable(self, classes, rows, n_features, unlabelled):
        """Refuse, as the fit of complete rows does, a covariance that too few rows leave singular.

        Whatever is missing, the maximum-likelihood covariance of ``n`` rows has rank at most
        ``n - 1`` per class (``n - K`` pooled): with no more rows than features it is singular, and
        EM's floor would hide it behind a covariance of eigenvalues 1e-6 of the features' variance.
        Unlabelled rows can join a class, and any regularisation makes it factorable: not refused.
        """
        if unlabelled or self._regularises():
            return
        if self._em_covariance_type == "tied":
            if rows.sum() - rows.shape[0] < n_features:
                raise ValueError(
                    f"the pooled covariance is not positive definite: it has {int(rows.sum())} samples with an "
                    f"observed value in {rows.shape[0]} classes for {n_features} features. Set reg_param > 0 (for "
                    "example reg_param=0.01), add samples or remove features.")
            return
        small = np.flatnonzero(rows <= n_features)
        if small.size:
            k = small[0]
            raise ValueError(
                f"the covariance of class {_show(classes[k])} is not positive definite: it has {int(rows[k])} "
                f"samples with an observed value for {n_features} features. Set reg_param > 0 (for example "
                "reg_param=0.01), set pooling > 0, or remove redundant features.")

    def _regularises(self):
        """Whether the rule's covariances differ from the maximum-likelihood ones of the EM's model
        (``_em_covariance_type``) by more than their divisors: ``reg_param``, ``shrinkage``, or QDA's
        ``pooling`` between 0 and 1 (pooling=1 is the tied model itself, LDA's)."""
        return self.reg_param > 0 or self.shrinkage is not None or 0 < getattr(self, "pooling", 0) < 1

    def _regularised_covariance_fitted(self, scatter, totals, rows, estimated=None):
        """:meth:`_regularised_covariance` of the fit, recording its shrinkage intensity in ``shrinkage_``."""
        cov, intensity = self._regularised_covariance(scatter, totals, rows, estimated)
        if intensity is not None:
            self.shrinkage_ = intensity
        else:  # a refit without shrinkage: no earlier fit's intensity stays behind
            vars(self).pop("shrinkage_", None)
        return cov

    def _warn_if_collapsing(self, collapsing, cov, classes):
        """Warn that the classes ``collapsing`` (:meth:`Gaussian.collapsing_components`) of the
        EM have a covariance sinking onto the variance floor of :meth:`_fit_incomplete`.

        With few complete rows the likelihood of incomplete rows can grow without bound as a
        covariance flattens along a direction those rows leave unobserved, and the estimate and the
        predictions' confidence then mean nothing. Only when no ``reg_param`` or ``shrinkage``
        regularises the estimate (inside EM with every row labelled, after it otherwise).
        """
        if not collapsing.size or self.reg_param > 0 or self.shrinkage is not None:
            return
        whose = ("the pooled covariance" if cov.ndim == 2 else
                 "the covariance of class(es) " + ", ".join(_show(classes[k]) for k in collapsing))
        pooled = "" if cov.ndim == 2 else ", or use LinearDiscriminant, which pools the classes' rows"
        warnings.warn(
            f"{type(self).__name__}: {whose} is collapsing: estimated from rows with missing values, its "
            "smallest eigenvalue has sunk to near the variance floor (a millionth of each feature's variance), "
            "whether or not EM stopped there. With few complete rows the likelihood of incomplete rows "
            "grows without bound as a covariance flattens along a direction those rows leave unobserved, so this "
            "estimate, and the confidence of the predictions, mean nothing. Set reg_param (for example "
            f"reg_param=0.1) or shrinkage{pooled}.", CollapsingComponentWarning, stacklevel=user_stacklevel())

    def _fit_dask(self, X, y, sample_weight):
        """Fit from a dask X: each chunk's class moments on the workers, merged exactly (Chan et al.).

        With missing values or unlabelled rows, EM over the chunks instead (see :meth:`fit`).
        """
        self._refuse_estimator("a dask X")
        X, checked = validated_rows(self, X, dtype=np.float64, sample_weight=sample_weight, min_samples=2,
                                    allow_nan=True)
        w = checked.sample_weight
        y = align_rows(y, X, name="y")
        first = np.asarray(X[:1].compute())[0]
        if checked.n_missing or self.unlabeled is not None:
            labels, _, counts = labelled_statistics(X, y, w)
            check_no_missing_labels(labels, self)
            if self.unlabeled is None:
                check_no_unlabelled_marker(labels)
            known = unlabelled_rows(labels, self.unlabeled)
            known = np.ones(labels.shape[0], dtype=bool) if known is None else known
            classes = plain_known_labels(labels[known])
            check_labels(classes)
            if checked.n_missing or not known.all():
                y_idx = y.map_blocks(class_index, classes, self.unlabeled, dtype=np.int64)
                origin = np.where(np.isnan(first), checked.observed_mean, first)  # a data point, completed
                return self._fit_incomplete(X, classes, y_idx, w, origin, counts[known], not known.all())
        origin = gm.fit_origin(first[None])

        def class_moments(Xb, index, wb, n_labels):
            return _FULL_GAUSSIAN.labelled_stats(Xb - origin, index, wb, n_labels)

        classes, stats, rows = labelled_statistics(X, y, w, class_moments)
        check_no_missing_labels(classes, self)
        if self.unlabeled is None:
            check_no_unlabelled_marker(classes)
        check_labels(classes)
        check_class_totals(classes, stats.weight)
        return self._set_moments(classes, stats.weight, origin, stats, rows)

    def _set_moments(self, classes, totals, origin, stats, rows, estimated=None):
        """Fitted attributes from the class moments about ``origin`` (``estimated``: covariance(s)
        from ``covariance_estimator`` in place of the scatter's)."""
        self.classes_ = classes
        self.priors_ = self._resolve_priors(totals, classes)
        self._origin = origin
        self._means_c = stats.mean
        self.means_ = self._means_c + self._origin
        self._fit_covariance(stats.scatter, totals, rows, estimated)
        return self

    @staticmethod
    @abstractmethod
    def _covariance_shape(n_classes, n_features):
        """The shape of ``covariance_`` (LDA's one, QDA's one per class) and its description."""

    def _check_loaded_state(self):
        """:meth:`BaseLikelihoodClassifier._check_loaded_state`, and the class means and covariance(s),
        public and centred (the ones predictions use): shapes of (n_classes, n_features_in_), finite."""
        n_features, n_classes = super()._check_loaded_state()
        means, covariance = state.fitted_attributes(self, "means_", "covariance_")
        state.array(means, "means_", (n_classes, n_features), dims="(n_classes, n_features_in_)")
        shape, dims = self._covariance_shape(n_classes, n_features)
        state.array(covariance, "covariance_", shape, dims=dims)
        if self.shrinkage is not None and "shrinkage_" in vars(self):  # LDA's intensity, or each class's of QDA
            # (a fit without shrinkage leaves an earlier fit's: not checked then)
            state.array(self.shrinkage_, "shrinkage_", shape[:-2], nonnegative=True)
        if hasattr(self, "_origin"):  # a model from before it existed: predictions ask for a refit
            origin, means_c, chol_inv, log_det = state.fitted_attributes(
                self, "_origin", "_means_c", "_chol_inv", "_log_det_2pi")
            state.array(origin, "_origin", (n_features,), dims="(n_features_in_,)")
            state.array(means_c, "_means_c", (n_classes, n_features), dims="(n_classes, n_features_in_)")
            state.array(chol_inv, "_chol_inv", shape, dims=dims)
            state.array(log_det, "_log_det_2pi", shape[:-2])
        return n_features, n_classes

    def _validate_for_predict(self, X):
        X = super()._validate_for_predict(X)
        if not hasattr(self, "_origin"):
            # A model fitted (and saved) before the statistics were kept about a data point.
            raise ValueError(
                f"this {type(self).__name__} was fitted by an older version of discrim and lacks "
                "its centred statistics: refit the model with this version."
            )
        return X

    @blockwise
    def mahalanobis(self, X: ArrayLike) -> Array:
        """Squared Mahalanobis distance of each row to each class mean.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        dist : ndarray of shape (n_samples, n_classes)
            ``(x - mu_k)' Sigma_k^{-1} (x - mu_k)`` with the fitted mean and covariance of class
            k (the common covariance for :class:`LinearDiscriminant`).
        """
        return self._distances(self._validate_for_predict(X))[0]

    def _log_density(self, X):
        return gm.gaussian_log_density(*self._distances(X))

    def _distances(self, X):
        """Squared Mahalanobis distances and ``log |2 pi Sigma_k|`` of validated rows, both (n, K).

        A row with missing values (NaN) is measured in the marginal distribution of its observed
        features (:class:`~discrim.distributions._gaussian_missing.ConditionedRows`); the complete
        rows take the rule's own fast path.
        """
        missing = np.isnan(X) if isinstance(X, np.ndarray) else None
        n_classes = self.classes_.shape[0]
        if missing is None or not missing.any():
            return self._mahalanobis(X), np.broadcast_to(self._log_det_2pi, (X.shape[0], n_classes))
        incomplete = np.flatnonzero(missing.any(axis=1))
        complete = np.flatnonzero(~missing.any(axis=1))
        dist, log_det_2pi = np.zeros((X.shape[0], n_classes)), np.zeros((X.shape[0], n_classes))
        dist[complete] = self._mahalanobis(X[complete])
        log_det_2pi[complete] = self._log_det_2pi
        dist[incomplete], log_det = self._conditioned(X[incomplete]).marginal
        log_det_2pi[incomplete] = log_det + (~missing[incomplete]).sum(axis=1)[:, None] * np.log(2 * np.pi)
        return dist, log_det_2pi

    def _conditioned(self, X, means=None):
        """Rows with missing values (NaN) conditioned on their observed entries under every class
        (or, with ``means`` (m, d), under normals of those means and the classes' covariance)."""
        mask = ~np.isnan(X)
        inv = self._chol_inv if self._chol_inv.ndim == 3 else self._chol_inv[None]  # W = L^-1 per class
        precision = np.einsum("kij,kil->kjl", inv, inv)  # Sigma^-1 = W'W
        log_det_cov = np.atleast_1d(self._log_det_2pi) - X.shape[1] * np.log(2 * np.pi)
        means = self.means_ if means is None else means
        return ConditionedRows(X, MissingPatterns(mask), mask, means, precision, log_det_cov)

class LinearDiscriminant(TransformerMixin, _GaussianDiscriminant):
    """Sample ML discriminant rule for normal populations with a common covariance (LDA).

    Each class k is modelled as ``N_p(mu_k, Sigma)``; the class means and the pooled
    covariance are estimated from the training data and substituted into the ML rule
    ``d(x) = argmin_k (x - mu_k)' Sigma^{-1} (x - mu_k) = argmax_k delta_k(x)``
    (the sample ML rule; Mardia, Kent and Bibby, *Multivariate Analysis*, 1979, ch. 11), or into
    the Bayes rule when priors are given.

    Parameters
    ----------
    priors : {"equal", "empirical"} or array-like of shape (n_classes,), default="equal"
        "equal" gives the ML rule. "empirical" uses the (weighted) class
        frequencies and an array the given prior probabilities ``pi_k`` (in the order of
        ``classes_``; a pandas Series indexed by the labels is read by label): the Bayes rule
        ``argmax_k delta_k(x) + 2 log pi_k``.
    reg_param : float in [0, 1], default=0.0
        Shrinks the pooled covariance towards the identity, ``(1 - r) Sigma_hat + r I``.
        Needed when the pooled covariance is singular (collinear features or
        ``n - g < n_features``, as the pooled scatter has rank at most ``n - g``); 0 is the
        plain sample ML rule.
    device : str, torch.device or None, default=None
        Where the O(n d^2) passes run: None with numpy on the host (or, for a torch tensor X,
        with torch on X's device); "cpu", "cuda", "cuda:1" or a ``torch.device`` with torch
        there (needs PyTorch). Fitted attributes are numpy on the host; prediction methods
        return in the namespace and on the device of their input.
    unlabeled : scalar or None, default=None
        The label that marks an unlabelled row of ``y`` (NaN marks one too), e.g. -1: the fit is
        then semi-supervised, by EM over the unlabelled rows. None: every row is labelled and
        every label is a class, except that -1 beside the class 0 (scikit-learn's mark of an
        unlabelled row) is refused with an error that names this parameter; -1 and 1 alone (the
        +-1 encoding of two classes) are classes.
    shrinkage : float in [0, 1], "oas", "auto" or None, default=None
        Shrinks the pooled covariance towards the identity scaled to its mean variance,
        ``(1 - s) Sigma_hat + s (tr Sigma_hat / d) I``, before ``reg_param``: a fixed ``s``, or
        "oas", the oracle approximating shrinkage of Chen et al. (2010) from the within-class
        scatter and the total weight (scikit-learn's ``OAS`` on the class-centred rows). Both
        depend on the features' units (standardise them first). "auto" does not: the OAS
        intensity of the within-class correlation matrix, towards the diagonal,
        ``(1 - s) Sigma_hat + s diag(Sigma_hat)`` (scikit-learn's "auto" is Ledoit and Wolf's
        intensity on the standardised rows, the same target; that one is
        ``covariance_estimator=``). Each uses the sufficient statistics only, so it works on
        every data path.
    covariance_estimator : scikit-learn covariance estimator or None, default=None
        An unfitted estimator with ``fit`` and ``covariance_`` (``LedoitWolf()``, ``OAS()``,
        ``MinCovDet()``, ``GraphicalLasso()``, ...): the pooled covariance becomes its
        ``covariance_`` fitted on the class-centred rows (its own divisor), before ``shrinkage``
        and ``reg_param``. In-memory complete rows without sample weights only.
    n_components : int or None, default=None
        Canonical variates kept by :meth:`transform`, at most ``min(n_classes - 1,
        n_features)`` and at most the dimensions the prior-weighted class means span (None keeps
        them all). Variates of no between-class variance (below the rounding of the first's: a
        class of prior 0 adds no dimension, nor do class means on a line) are left out, as MASS's
        ``lda`` and scikit-learn do, since their directions are arbitrary.
    em_max_iter : int >= 1, default=1000
        Most EM iterations when the fit runs EM (rows with missing values, or unlabelled rows with
        ``unlabeled``); a ConvergenceWarning that names this parameter says when they ran out.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels; ``classes_[k]`` is population ``Pi_{k+1}`` of the ML rule.
    priors_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
        Sample means ``mu_hat_k`` (weighted).
    covariance_ : ndarray of shape (n_features, n_features)
        Unbiased pooled covariance ``Sigma_hat`` (after shrinkage when ``reg_param > 0``).
    scalings_ : ndarray of shape (n_features, n_components)
        The canonical variates' coefficients (MASS's ``scaling``): Fisher's directions, the
        eigenvectors of ``Sigma_hat^-1 B`` with ``B = sum_k pi_k (mu_k - xbar_)(mu_k - xbar_)'``,
        scaled to unit within-class variance ``scalings_' Sigma_hat scalings_ = I``.
    xbar_ : ndarray of shape (n_features,)
        ``sum_k pi_k mu_hat_k`` with the fitted priors: the origin of :meth:`transform`.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Each variate's share of the between-class variance (MASS's "proportion of trace").
    shrinkage_ : float
        Only with ``shrinkage``: the intensity applied.
    coef_ : ndarray of shape (n_classes, n_features)
        ``Sigma_hat^{-1} mu_hat_k``: half the coefficient vector of the linear discriminant function ``delta_k``.
    intercept_ : ndarray of shape (n_classes,)
        ``-mu_hat_k' Sigma_hat^{-1} mu_hat_k / 2 + log pi_k``. ``x' coef_[k] + intercept_[k]``
        gives the scores exactly in theory; far from the origin it is a difference of large
        numbers, so the classifier itself evaluates them about the mean of the class means
        (see Notes).
    a_ : ndarray of shape (n_features,)
        Only for two classes: ``Sigma_hat^{-1} (mu_hat_1 - mu_hat_2)`` of Corollary 8.1, with
        population 1 = ``classes_[0]``.
    h_ : ndarray of shape (n_features,)
        Only for two classes: ``(mu_hat_1 + mu_hat_2) / 2``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X was a DataFrame with string column names.

    See Also
    --------
    QuadraticDiscriminant : one covariance per class.
    KnownDensityClassifier : the same rule with known population densities.

    Notes
    -----
    Textbook symbols (Mardia, Kent and Bibby, 1979, ch. 11): ``means_[k]`` is ``mu_hat_{k+1}``,
    ``covariance_`` is the pooled ``Sigma_hat``, ``n_classes`` is ``g``. The linear scores are
    ``x' coef_[k] + intercept_[k] = delta_k(x) / 2 + log pi_k``, where
    ``delta_k(x) = 2 mu_k' Sigma^{-1} x - mu_k' Sigma^{-1} mu_k``; they differ from
    ``log pi_k f_k(x)`` by ``-x' Sigma^{-1} x / 2 - log|2 pi Sigma| / 2``, which is the same for
    every class. (The source notes' proof writes ``x' Sigma x`` for this term; it is
    ``x' Sigma^{-1} x``.) For two classes with equal priors the rule allocates ``x`` to
    ``classes_[0]`` iff ``a_' (x - h_) > 0``; with priors, iff
    ``a_' (x - h_) > log(pi_2 / pi_1)``.

    **Correction of the pooled covariance.** With ``S_k`` defined with divisor ``n_k - 1``, the
    source notes' ``sum_k n_k S_k / (n - g)`` is biased; the unbiased estimate used here is
    ``Sigma_hat = sum_k (n_k - 1) S_k / (n - g)``, the within-class scatter divided by
    ``n - g``. With sample weights ``n_k`` is the class's total weight and the scatter is
    ``sum_i w_i (x_i - mu_hat_k)(x_i - mu_hat_k)'``, so integer weights equal repeated rows.
    (scikit-learn's ``LinearDiscriminantAnalysis`` divides the scatter by ``n``.)

    :meth:`decision_function` (multiclass) returns the linear scores above, as scikit-learn's
    ``LinearDiscriminantAnalysis`` does; :meth:`predict_proba` uses them too (the shared term
    cancels). :meth:`log_density` returns the exact ``log f_k(x)``.

    **Translation and scale.** The means and scatter are accumulated about the first
    training row, and every product is formed about ``t``, the mean of the class means
    (relative to that row): the scores are ``(x - t)' Sigma_hat^{-1} (mu_hat_k - t) - (mu_hat_k - t)'
    Sigma_hat^{-1} (mu_hat_k - t) / 2 + log pi_k``, which differ from
    ``x' coef_[k] + intercept_[k]`` by a term common to all classes (so
    :meth:`decision_function` returns these centred scores). Translating or rescaling the
    features therefore changes the posteriors only by the rounding of the data themselves
    (about ``eps |offset| / spread`` in the standardised distances; nothing for data on a grid
    shifted exactly), not by the cancellation of ``x' coef_`` against ``intercept_``
    (``eps |offset|^2 / spread^2``). Features beyond
    ``max_feature_magnitude`` (1e102 for float64) are refused.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.discriminant import LinearDiscriminant
    >>> X = np.array([[-2.0, 0.1], [-1.0, -0.3], [-1.5, 0.4], [1.0, 0.2], [2.0, -0.1], [1.5, 0.3]])
    >>> lda = LinearDiscriminant().fit(X, [0, 0, 0, 1, 1, 1])
    >>> lda.predict([[-1.0, 0.0], [1.0, 0.0]])
    array([0, 1])
    """

    _em_covariance_type = "tied"  # the covariance the EM of incomplete data estimates (see fit)

    _parameter_constraints = {
        **_GaussianDiscriminant._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, priors: str | ArrayLike = "equal", reg_param: float = 0.0, device: Device = None,
                 unlabeled: Any = None, shrinkage: float | Literal["oas", "auto"] | None = None,
                 covariance_estimator: Any = None, n_components: int | None = None, em_max_iter: int = 1000) -> None:
        super().__init__(priors=priors, reg_param=reg_param, device=device, unlabeled=unlabeled, shrinkage=shrinkage,
                         covariance_estimator=covariance_estimator, em_max_iter=em_max_iter)
        self.n_components = n_components

    def _estimated_covariance(self, X, y_idx, means):
        """``covariance_estimator`` fitted on the class-centred rows: the pooled covariance."""
        return _estimator_covariance(self.covariance_estimator, X - means[y_idx])

    @staticmethod
    def _covariance_shape(n_classes, n_features):
        return (n_features, n_features), "(n_features_in_, n_features_in_)"

    def _check_loaded_state(self):
        """The checks of the shared Gaussian rule, and the linear scores and canonical variates: shapes
        of (n_classes, n_features_in_) and (n_features_in_, n_components), finite (``intercept_`` is
        -inf for a class of prior 0)."""
        n_features, n_classes = super()._check_loaded_state()
        by_class, by_feature = "(n_classes, n_features_in_)", "(n_features_in_,)"
        coef, intercept, scalings, xbar, ratio = state.fitted_attributes(
            self, "coef_", "intercept_", "scalings_", "xbar_", "explained_variance_ratio_")
        state.array(coef, "coef_", (n_classes, n_features), dims=by_class)
        state.array(intercept, "intercept_", (n_classes,), dims="(n_classes,)", finite=False)
        n_variates = state.array(scalings, "scalings_", (n_features, None), dims="(n_features_in_, any)").shape[1]
        if n_variates > min(n_classes - 1, n_features):
            raise state.FittedStateError(f"scalings_ has {n_variates} columns, more than min(n_classes - 1, "
                                         f"n_features_in_) = {min(n_classes - 1, n_features)}")
        state.array(xbar, "xbar_", (n_features,), dims=by_feature)
        state.array(ratio, "explained_variance_ratio_", (n_variates,), dims="(scalings_.shape[1],)", nonnegative=True)
        centred = hasattr(self, "_origin")  # a model from before it existed: predictions ask for a refit
        if n_classes == 2:
            for name in ("a_", "h_", "_odds_coef") if centred else ("a_", "h_"):
                state.array(state.fitted_attributes(self, name)[0], name, (n_features,), dims=by_feature)
        if centred:
            center, coef_c, intercept_c, xbar_c = state.fitted_attributes(
                self, "_center", "_coef_c", "_intercept_c", "_xbar_c")
            state.array(center, "_center", (n_features,), dims=by_feature)
            state.array(coef_c, "_coef_c", (n_classes, n_features), dims=by_class)
            state.array(intercept_c, "_intercept_c", (n_classes,), dims="(n_classes,)")
            state.array(xbar_c, "_xbar_c", (n_features,), dims=by_feature)
        return n_features, n_classes

    def _regularised_covariance(self, scatter, totals, rows, estimated=None):
        """The pooled covariance (d, d) of class scatters (K, d, d) about the class means and class
        totals (K,), after ``shrinkage`` and ``reg_param``; and the shrinkage intensity (or None)."""
        dof = _pooled_divisor(totals, rows, "LinearDiscriminant")
        cov = scatter.sum(axis=0) / dof if estimated is None else np.asarray(estimated, dtype=np.float64)
        intensity = None
        if self.shrinkage is not None:  # towards the scaled identity (or the diagonal), then reg_param towards I
            cov, intensity = gm.shrunk_covariance(cov, self.shrinkage, scatter.sum(axis=0) / totals.sum(), totals.sum())
        return gm.shrink(cov, self.reg_param), intensity

    def _fit_covariance(self, scatter, totals, rows, estimated=None):
        dof = totals.sum() - totals.shape[0]
        n_features = scatter.shape[1]
        cov = self._regularised_covariance_fitted(scatter, totals, rows, estimated)
        try:
            chol = cholesky_factors(cov[None])[0]
        except SingularCovarianceError as exc:
            # features of no variance within the classes (digits' blank pixels) keep a variance of 0
            # under every shrinkage towards the diagonal ("auto"): name them
            count, shown = listed_indices(np.diag(cov) <= 0)
            constant = (f" {count} feature(s) (index {shown}) are constant within every class: remove them, or "
                        "shrink towards the identity (reg_param, shrinkage='oas' or a float).") if count else ""
            raise ValueError(
                f"the pooled covariance is {exc}: the features are collinear (or constant), or "
                f"there are too few samples (n - g = {dof:g} for {n_features} features). Remove "
                f"redundant features or set reg_param > 0 (for example reg_param=0.01).{constant}"
            ) from None
        self.covariance_ = cov
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.priors_)
        coef, intercept = gm.linear_coefficients(self.means_, chol)
        self.coef_, self.intercept_ = coef, intercept + log_prior
        # The scores are evaluated about the mean of the class means (see linear_coefficients):
        # coef_ and intercept_ above are the seed's, exact in theory but a difference of large
        # numbers for data far from the origin.
        self._center = self._means_c.mean(axis=0)
        # kept without the log-priors, which predictions add (the fitted ones or those of the call)
        self._coef_c, self._intercept_c = gm.linear_coefficients(self._means_c, chol, self._center)
        inv, log_det_2pi = inverse_factors(chol[None])
        self._chol_inv, self._log_det_2pi = inv[0], log_det_2pi[0]
        self._fit_canonical_variates()
        if self.classes_.shape[0] == 2:
            self.a_ = self._coef_c[0] - self._coef_c[1]
            self.h_ = 0.5 * (self.means_[0] + self.means_[1])
            self._odds_coef = self._coef_c[1] - self._coef_c[0]
        else:  # a refit on more classes: no earlier two-class fit's attributes stay behind
            for name in ("a_", "h_", "_odds_coef"):
                vars(self).pop(name, None)

    def _fit_canonical_variates(self):
        """``scalings_``, ``xbar_`` and ``explained_variance_ratio_`` of the canonical variates.

        Fisher's directions: the singular vectors of the prior-weighted class means, centred on
        their weighted mean and whitened by the pooled covariance (``W = L^-1``, ``Sigma = L L'``),
        mapped back by ``W'``. The variates have unit within-class variance, as MASS's ``lda``.
        """
        n_classes, n_features = self._means_c.shape
        bound = min(n_classes - 1, n_features)
        if self.n_components is not None and self.n_components > bound:
            raise ValueError(
                f"n_components={self.n_components} exceeds min(n_classes - 1, n_features) = {bound}: "
                f"{n_classes} classes give at most {bound} canonical variates. Lower n_components."
            )
        weights = self.priors_ / self.priors_.sum()
        center_c = weights @ self._means_c
        whitened = (self._means_c - center_c) @ self._chol_inv.T  # rows W (mu_k - mu_bar)
        _, singular, vt = np.linalg.svd(np.sqrt(weights)[:, None] * whitened, full_matrices=False)
        variance = singular[:bound] ** 2
        # A variate whose between-class variance is below the rounding of the largest carries no
        # separation: its direction is any of the null space, set by rounding (a class of prior 0,
        # or class means on a line). Only variates that carry some are kept, as MASS and scikit-learn do.
        rank = int(np.sum(variance > np.finfo(np.float64).eps * variance[0]))
        if self.n_components is not None and self.n_components > rank:
            raise ValueError(
                f"n_components={self.n_components} exceeds the {rank} canonical variate(s) that separate the "
                f"classes: the prior-weighted class means span {rank} dimension(s) (a class of prior 0 adds none; "
                "the other directions carry no between-class variance). Lower n_components."
            )
        keep = rank if self.n_components is None else self.n_components
        total = variance.sum()
        self.scalings_ = self._chol_inv.T @ vt[:keep].T
        self.xbar_ = center_c + self._origin
        self.explained_variance_ratio_ = variance[:keep] / total if total > 0 else np.zeros(keep)
        self._xbar_c = center_c

    @blockwise
    def transform(self, X: ArrayLike) -> Array:
        """Project rows onto the canonical variates (Fisher's discriminant directions).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NaN marks a missing value: such a row gives the conditional expectation of its
            variates given its observed features under the fitted model,
            ``E[z | x_o] = scalings_' (sum_k p(k | x_o) E_k[x | x_o] - xbar_)`` (the variates are
            linear in x), with the class posteriors of :meth:`predict_proba`.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            ``(x - xbar_) @ scalings_``: uncorrelated variates of unit within-class variance,
            ordered by the share of the between-class variance they carry
            (``explained_variance_ratio_``).
        """
        X = self._validate_for_predict(X)
        if isinstance(X, np.ndarray) and np.isnan(X).any():
            X = self._expected_rows(X)
        X = ops.as_float64(X) - ops.like(self._origin + self._xbar_c, X, "float64")
        return X @ ops.like(self.scalings_, X)

    def _expected_rows(self, X):
        """Rows with their missing entries replaced by ``E[x_m | x_o]`` under the fitted mixture of classes.

        ``X`` is validated already: the posteriors come from its densities (predict_proba would
        validate it again, and warn that an array has no feature names)."""
        posterior = rule_from_joint(self._log_density(X) + self._fitted_log_prior(), "proba", self.classes_)
        return np.einsum("nk,knd->nd", posterior, self._conditioned(X).completed)

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> np.ndarray:
        """Names of the canonical variates: ``lineardiscriminant0``, ``lineardiscriminant1``, ...

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored (checked against ``feature_names_in_`` when given).

        Returns
        -------
        names : ndarray of str objects
        """
        from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

        check_is_fitted(self)
        _check_feature_names_in(self, input_features)
        return np.asarray([f"lineardiscriminant{j}" for j in range(self.scalings_.shape[1])], dtype=object)

    def _mahalanobis(self, X):
        return gm.mahalanobis_tied(X, self._means_c, self._chol_inv, self._origin)

    def _joint_log_likelihood(self, X, log_prior=None):
        # log pi_k f_k(x) up to a term common to all classes: the posteriors and the rule are
        # unchanged, and it costs O(n K D) instead of O(n D^2).
        X = self._validate_for_predict(X)
        log_prior = self._fitted_log_prior() if log_prior is None else log_prior
        incomplete = _incomplete_rows(X)
        if incomplete is not None:
            return self._scores_with_missing(X, incomplete) + log_prior
        return to_numpy(self._linear_scores(X) + ops.like(log_prior, X))

    def _scores_with_missing(self, X, incomplete):
        """:meth:`_linear_scores` of host rows some of which (``incomplete``, (n,) bool) have missing values."""
        scores = np.empty((X.shape[0], self.classes_.shape[0]))
        scores[~incomplete] = self._linear_scores(X[~incomplete])
        scores[incomplete] = self._marginal_linear_scores(X[incomplete])
        return scores

    def _linear_scores(self, X):
        """``log f_k(x) - log f_c(x)``, linear in x (c the centre of the class means), where X lives."""
        X = self._centred(X)
        # A C-ordered (D, K) operand: numpy's matmul can miss BLAS for a transposed view.
        scores = X @ ops.like(np.ascontiguousarray(self._coef_c.T), X)
        scores += ops.like(self._intercept_c, X)
        return scores

    def _marginal_linear_scores(self, X):
        """:meth:`_linear_scores` of rows with missing values, in the marginal of their observed entries.

        ``log f_k(x_o) - log f_c(x_o)``: linear in x_o, the score of a complete row where nothing is
        missing, so that a row's scores never depend on the other rows of the call (or chunk).
        """
        centre = (self._origin + self._center)[None, :]
        maha, _ = self._conditioned(X, np.concatenate([self.means_, centre])).marginal  # one covariance: one log |S_oo|
        return -0.5 * (maha[:, :-1] - maha[:, -1:])

    def _centred(self, X):
        """Rows about the mean of the class means, in float64, where they live."""
        X = ops.as_float64(X) - ops.like(self._origin, X, "float64")
        X -= ops.like(self._center, X)
        return X

    def _log_odds(self, X, log_prior=None):
        # Corollary 8.1: with two classes only -a'(x - h) (plus the log prior ratio) matters;
        # one matrix-vector product.
        X = self._validate_for_predict(X)
        log_prior = self._fitted_log_prior() if log_prior is None else log_prior
        incomplete = _incomplete_rows(X)
        if incomplete is not None:  # rows with missing values: scores in their marginals
            scores = self._scores_with_missing(X, incomplete)
            return scores[:, 1] - scores[:, 0] + (log_prior[1] - log_prior[0])
        X = self._centred(X)
        intercept = self._intercept_c + log_prior
        odds = X @ ops.like(self._odds_coef, X)
        odds += intercept[1] - intercept[0]
        return to_numpy(odds)

    @blockwise
    def decision_function(self, X: ArrayLike, priors: str | ArrayLike | None = None) -> Array:
        """Linear discriminant scores (scikit-learn's convention).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors : "equal" or array-like of shape (n_classes,), default=None
            Prior probabilities of the classes for this call (see :meth:`predict_proba`); None
            uses ``priors_``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes the log posterior odds of ``classes_[1]`` against ``classes_[0]``,
            ``-a_' (x - h_) + log(pi_2 / pi_1)``; otherwise ``delta_k(x) / 2 + log pi_k``
            (``X @ coef_.T + intercept_`` up to a term common to all classes, evaluated about
            the mean of the class means), the log joint densities up to a term that is the
            same for every class.
        """
        return super().decision_function(X, priors)


class QuadraticDiscriminant(_GaussianDiscriminant):
    """Sample ML discriminant rule for normal populations with one covariance per class (QDA).

    Each class k is modelled as ``N_p(mu_k, Sigma_k)`` with its own sample mean and unbiased
    sample covariance; the ML rule (or the Bayes rule, with priors) is then
    ``argmax_k log pi_k f_k(x)``, a quadratic rule (for one feature, see :func:`normal_boundaries`).

    Parameters
    ----------
    priors : {"equal", "empirical"} or array-like of shape (n_classes,), default="equal"
        "equal" gives the ML rule; "empirical" the (weighted) class frequencies; an array the
        prior probabilities in the order of ``classes_`` (the Bayes rule; a pandas Series indexed
        by the labels is read by label).
    reg_param : float in [0, 1], default=0.0
        Shrinks each class covariance towards the identity, ``(1 - r) S_k + r I`` (the same
        regularisation as scikit-learn's ``QuadraticDiscriminantAnalysis``). Needed when a
        class has no more samples than features or collinear features.
    device : str, torch.device or None, default=None
        Where the O(n d^2) passes run: None with numpy on the host (or, for a torch tensor X,
        with torch on X's device); "cpu", "cuda", "cuda:1" or a ``torch.device`` with torch
        there (needs PyTorch). Fitted attributes are numpy on the host; prediction methods
        return in the namespace and on the device of their input.
    unlabeled : scalar or None, default=None
        The label that marks an unlabelled row of ``y`` (NaN marks one too), e.g. -1: the fit is
        then semi-supervised, by EM over the unlabelled rows. None: every row is labelled and
        every label is a class, except that -1 beside the class 0 (scikit-learn's mark of an
        unlabelled row) is refused with an error that names this parameter; -1 and 1 alone (the
        +-1 encoding of two classes) are classes.
    shrinkage : float in [0, 1], "oas", "auto" or None, default=None
        Shrinks each class covariance towards the identity scaled to its mean variance,
        ``(1 - s) S_k + s (tr S_k / d) I``, after ``pooling`` and before ``reg_param``: a fixed
        ``s``, or "oas", the oracle approximating shrinkage of Chen et al. (2010) from the
        class's own scatter and total weight (scikit-learn's ``OAS`` on the class's rows); with
        ``pooling`` ``a``, from ``(1 - a)`` times the class's scatter and weight plus ``a`` times
        the within-class ones (pooling=1: :class:`LinearDiscriminant`'s intensity). Both
        depend on the features' units (standardise them first). "auto" does not: the OAS
        intensity of the class's correlation matrix, towards its diagonal,
        ``(1 - s) S_k + s diag(S_k)`` (see :class:`LinearDiscriminant`).
    covariance_estimator : scikit-learn covariance estimator or None, default=None
        An unfitted estimator with ``fit`` and ``covariance_`` (``LedoitWolf()``, ``OAS()``,
        ``MinCovDet()``, ...): each class covariance becomes its ``covariance_`` fitted on the
        class's rows (its own divisor), and with ``pooling`` the pooled covariance its
        ``covariance_`` fitted on the class-centred rows (as :class:`LinearDiscriminant`'s),
        before ``pooling``, ``shrinkage`` and ``reg_param``. In-memory complete rows without
        sample weights only.
    pooling : float in [0, 1], default=0.0
        Friedman's regularised discriminant analysis (RDA): each class covariance moves towards
        the pooled one, ``(1 - a) S_k + a S_pooled`` (``S_pooled`` as :class:`LinearDiscriminant`
        estimates it), before ``reg_param`` shrinks it towards the identity. 0 is QDA; 1 gives
        LDA's covariance to every class (and LDA's posteriors).
    em_max_iter : int >= 1, default=1000
        Most EM iterations when the fit runs EM (rows with missing values, or unlabelled rows with
        ``unlabeled``); a ConvergenceWarning that names this parameter says when they ran out.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    covariance_ : ndarray of shape (n_classes, n_features, n_features)
        Unbiased ``S_k`` (divisor ``n_k - 1``; with weights, the class's total weight minus
        one), after pooling and shrinkage.
    shrinkage_ : ndarray of shape (n_classes,)
        Only with ``shrinkage``: the intensity applied to each class.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X was a DataFrame with string column names.

    See Also
    --------
    LinearDiscriminant : a common covariance, i.e. a linear rule.

    Notes
    -----
    Textbook symbols (Mardia, Kent and Bibby, 1979, ch. 11): ``means_[k]`` is ``mu_hat_{k+1}``
    and ``covariance_[k]`` is the sample covariance ``S_{k+1}``. Log densities use the Cholesky factor ``L_k`` of each
    covariance: ``log f_k(x) = -||L_k^{-1}(x - mu_k)||^2 / 2 - log|2 pi S_k| / 2``; all classes
    are evaluated with one matrix product per block of rows. :meth:`decision_function` follows
    scikit-learn's convention (binary: log posterior odds of ``classes_[1]``; multiclass:
    ``log pi_k f_k(x)``); :meth:`log_density` gives ``log f_k(x)``.

    Means, scatter and distances are computed about the first training row and the mean of the
    class means, so translating the features changes the posteriors only by the rounding of the
    data themselves (nothing for data on a grid shifted exactly), and rescaling them only by
    rounding. Features beyond ``max_feature_magnitude`` (1e102 for float64) are refused.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.discriminant import QuadraticDiscriminant
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (50, 2)), rng.normal(3, 2, (50, 2))])
    >>> qda = QuadraticDiscriminant().fit(X, [0] * 50 + [1] * 50)
    >>> qda.predict([[0.0, 0.0], [8.0, 8.0]])
    array([0, 1])
    """

    _parameter_constraints = {
        **_GaussianDiscriminant._parameter_constraints,
        "pooling": [Interval(Real, 0, 1, closed="both")],
    }

    @property
    def _em_covariance_type(self):
        """The covariance the EM of incomplete data estimates (see fit): pooling=1 is LDA's model,
        one covariance for every class, so its EM is LDA's. (With unlabelled rows the rule acts after
        EM: a full-covariance EM assigned those rows under per-class covariances that the pooling
        then discarded, and the posteriors differed from LDA's by up to 0.998.)"""
        return "tied" if self.pooling == 1 else "full"

    def __init__(self, priors: str | ArrayLike = "equal", reg_param: float = 0.0, device: Device = None,
                 unlabeled: Any = None, shrinkage: float | Literal["oas", "auto"] | None = None,
                 covariance_estimator: Any = None, pooling: float = 0.0, em_max_iter: int = 1000) -> None:
        super().__init__(priors=priors, reg_param=reg_param, device=device, unlabeled=unlabeled, shrinkage=shrinkage,
                         covariance_estimator=covariance_estimator, em_max_iter=em_max_iter)
        self.pooling = pooling

    def _estimated_covariance(self, X, y_idx, means):
        """``covariance_estimator`` fitted on each class's rows, (n_classes, d, d), and on the
        class-centred rows, (d, d), as :class:`LinearDiscriminant`'s pooled covariance; each None
        where ``pooling`` leaves it out (1 and 0)."""
        own = pooled = None
        if self.pooling < 1:
            own = np.stack([_estimator_covariance(self.covariance_estimator, X[y_idx == k])
                            for k in range(means.shape[0])])
        if self.pooling > 0:
            pooled = _estimator_covariance(self.covariance_estimator, X - means[y_idx])
        return own, pooled

    def _regularised_covariance(self, scatter, totals, rows, estimated=None):
        """The class covariances (K, d, d) of class scatters (K, d, d) about the class means and
        class totals (K,), after ``pooling``, ``shrinkage`` and ``reg_param``; and the shrinkage
        intensities (K,) (or None)."""
        for k in range(totals.shape[0]):
            if not _above(totals[k], 1.0) and self.pooling < 1:
                label = self.classes_[k] if hasattr(self, "classes_") else k
                if rows[k] > 1:  # rows enough, weight not: weights that do not count rows (normalised ones)
                    raise ValueError(
                        f"class {_show(label)} has {rows[k]} samples but a total sample_weight of {totals[k]:g}; "
                        "QuadraticDiscriminant needs a total weight above 1 in every class to estimate its "
                        "covariance (divisor n_k - 1): sample_weight are frequency weights (a weight of 2 "
                        "counts its row twice): scale them to sum to the number of samples."
                    )
                raise ValueError(
                    f"class {_show(label)} has {rows[k]} sample(s) (total weight {totals[k]:g}); "
                    "QuadraticDiscriminant needs a total weight above 1 (at least 2 samples) in "
                    "every class to estimate its covariance: add samples, set pooling=1 (its "
                    "covariance is then the pooled one) or use LinearDiscriminant."
                )
        cov = self._class_covariances(scatter, totals, rows, estimated)
        intensity = None
        if self.shrinkage is not None:  # towards the scaled identity (or the diagonal), then reg_param towards I
            # the intensity from the statistics of the matrix shrunk: the class's scatter and weight
            # mixed with the pooled ones by pooling (pooling=1: LDA's, the same for every class; from
            # the class's own, a one-row class got intensity 1 and a sphere beside LDA's covariance)
            a = self.pooling
            size = (1.0 - a) * totals + a * totals.sum()
            emp = ((1.0 - a) * scatter + a * scatter.sum(axis=0)) / size[:, None, None]
            shrunk = [gm.shrunk_covariance(cov[k], self.shrinkage, emp[k], size[k]) for k in range(totals.shape[0])]
            cov = np.stack([c for c, _ in shrunk])
            intensity = np.array([s for _, s in shrunk])
        return gm.shrink(cov, self.reg_param), intensity

    @staticmethod
    def _covariance_shape(n_classes, n_features):
        return (n_classes, n_features, n_features), "(n_classes, n_features_in_, n_features_in_)"

    def _fit_covariance(self, scatter, totals, rows, estimated=None):
        n_features = scatter.shape[1]
        cov = self._regularised_covariance_fitted(scatter, totals, rows, estimated)
        try:
            chol = cholesky_factors(cov)
        except SingularCovarianceError as exc:
            k = exc.index
            raise ValueError(
                f"the covariance of class {_show(self.classes_[k])} is {exc}: it has {rows[k]} "
                f"samples for {n_features} features, or collinear (constant) features in that "
                "class. Set reg_param > 0 (for example reg_param=0.01) or remove redundant "
                "features."
            ) from None
        self.covariance_ = cov
        self._chol_inv, self._log_det_2pi = inverse_factors(chol)

    def _class_covariances(self, scatter, totals, rows, estimated=None):
        """Unbiased class covariances, moved towards the pooled one by ``pooling`` (Friedman's RDA);
        ``estimated``: the class and pooled covariances of ``covariance_estimator`` in their place
        (see :meth:`_estimated_covariance`)."""
        own_estimated, pooled_estimated = (None, None) if estimated is None else estimated
        if self.pooling < 1:  # (with pooling=1 a class may have one row: no 0 / 0 for a covariance unused)
            own = (scatter / (totals - 1.0)[:, None, None] if own_estimated is None
                   else np.asarray(own_estimated, np.float64))
        if self.pooling == 0:
            return own
        dof = _pooled_divisor(totals, rows, f"QuadraticDiscriminant with pooling={self.pooling}", "set pooling=0")
        pooled = scatter.sum(axis=0) / dof if pooled_estimated is None else np.asarray(pooled_estimated, np.float64)
        if self.pooling == 1:
            return np.broadcast_to(pooled, scatter.shape).copy()
        return (1.0 - self.pooling) * own + self.pooling * pooled

    def _mahalanobis(self, X):
        return gm.mahalanobis_full(X, self._means_c, self._chol_inv, self._origin)
