"""The shared base of classifiers that decide by the maximum-likelihood or Bayes rule."""

from __future__ import annotations

from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from discrim._typing import Array, ArrayLike
from discrim._posterior import PosteriorMixin, check_joint, check_log_odds
from discrim.backend._device import rows_on_device
from discrim.utils import _fitted_state as state
from discrim.utils._dask import blockwise, is_dask, lazy_accuracy
from discrim.backend import host_input
from discrim.utils.validation import (
    check_class_totals,
    check_feature_magnitude,
    check_labels,
    check_no_unlabelled_marker,
    check_priors,
    check_sample_weight,
    check_true_labels,
    plain_known_labels,
    unlabelled_rows,
)


class BaseLikelihoodClassifier(PosteriorMixin, ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Classifier that allocates x by the ML rule (equal priors) or the Bayes rule.

    Subclasses fit class-conditional densities and implement :meth:`_log_density`; this base
    adds the priors and a scikit-learn decision function, and :class:`~discrim._posterior.PosteriorMixin`
    turns the joint log-likelihood into posteriors and decisions, the one implementation of the
    rule that every model in discrim shares.

    Fitted subclasses must set ``classes_`` (n_classes,) and ``priors_`` (n_classes,).
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN is a missing value: marginal class densities
        return tags

    @abstractmethod
    def _log_density(self, X):
        """Class-conditional log-densities of validated X: a fresh (n_samples, n_classes) array."""

    def _validate_for_predict(self, X):
        check_is_fitted(self)

        def validate(X):
            # NaN is a missing value: the rules score such rows by the marginal density of the rest
            X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan")
            # As at fit: beyond this the squared distances overflow and the posteriors would be NaN.
            return check_feature_magnitude(X, "X")

        # the marginal densities of rows with missing values are host code, over the fitted
        # attributes (host arrays on every device): such rows stay on the host, as numpy
        return rows_on_device(self, X, validate, reset=False, dtype=None, nan_on_host=True)

    def _prepare_targets(self, y, sample_weight, n_samples):
        """Encode y and validate weights; returns classes, y_idx, weights, class totals.

        With an ``unlabeled`` parameter set, the rows whose label equals it (or is NaN) are
        unlabelled: their index is -1 and the totals count the labelled rows only.
        """
        unlabeled = getattr(self, "unlabeled", None)
        if unlabeled is None and hasattr(self, "unlabeled"):
            check_no_unlabelled_marker(y)
        known = unlabelled_rows(y, unlabeled)
        if known is None:
            classes, y_idx = check_labels(y)
        else:
            classes, known_idx = check_labels(plain_known_labels(np.asarray(host_input(y))[known]))
            y_idx = np.full(known.shape[0], -1, dtype=known_idx.dtype)
            y_idx[known] = known_idx
        w = check_sample_weight(sample_weight, n_samples)
        labelled = y_idx >= 0
        totals = np.bincount(y_idx[labelled], weights=w[labelled], minlength=classes.shape[0])
        check_class_totals(classes, totals)
        return classes, y_idx, w, totals

    def _resolve_priors(self, totals, classes):
        """``priors_`` from the class totals (n_classes,) and the sorted classes (n_classes,)."""
        return check_priors(self.priors, totals, labels=classes)

    def _check_loaded_state(self):
        """Check the fitted state a model file gave this classifier: ``n_features_in_``, ``classes_``,
        ``priors_`` (and ``feature_names_in_``); raise FittedStateError naming the attribute.

        Subclasses check their own attributes after these (see
        :func:`discrim.persistence.load_model`).

        Returns
        -------
        n_features : int
        n_classes : int
        """
        n_features, classes, priors = state.fitted_attributes(self, "n_features_in_", "classes_", "priors_")
        n_features = state.count(n_features, "n_features_in_", minimum=1)
        n_classes = state.array(classes, "classes_", (None,), kind=None).shape[0]
        if n_classes == 0:
            raise state.FittedStateError("classes_ is empty")
        state.probabilities(priors, "priors_", n_classes, dims="(n_classes,)")
        if getattr(self, "feature_names_in_", None) is not None:
            state.array(self.feature_names_in_, "feature_names_in_", (n_features,), kind=None, dims="(n_features_in_,)")
        return n_features, n_classes

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Mean (weighted) accuracy on ``X`` and ``y``: scikit-learn's ``score`` of a classifier.

        A dask X is scored in one pass over its chunks, where they live: only the weighted count of
        correct predictions and the total weight come to the client.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            True labels (a dask array or Series with a dask X). An unlabelled row (NaN, None, or
            the ``unlabeled`` mark) is refused in memory: accuracy would count it as an error.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        if is_dask(X):
            return lazy_accuracy(self.predict(X), y, sample_weight)
        check_true_labels(y, getattr(self, "unlabeled", None))
        return super().score(X, y, sample_weight=sample_weight)

    @blockwise
    def log_density(self, X: ArrayLike) -> Array:
        """Log-density of each row under each class, ``log f_k(x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_dens : ndarray of shape (n_samples, n_classes)
        """
        return self._log_density(self._validate_for_predict(X))

    def _fitted_log_prior(self):
        with np.errstate(divide="ignore"):
            return np.log(self.priors_)

    def _joint_log_likelihood(self, X, log_prior=None):
        X = self._validate_for_predict(X)  # first, so an unfitted model fails with NotFittedError
        return self._log_density(X) + (self._fitted_log_prior() if log_prior is None else log_prior)

    @blockwise
    def decision_function(self, X: ArrayLike, priors: str | ArrayLike | None = None) -> Array:
        """Log joint likelihood ``log f_k(x) + log pi_k`` (scikit-learn's convention).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors : "equal" or array-like of shape (n_classes,), default=None
            Prior probabilities of the classes for this call (see :meth:`predict_proba`); None
            uses ``priors_``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes the log posterior odds of ``classes_[1]`` against ``classes_[0]``
            (positive means ``classes_[1]``); otherwise one column per class. With equal priors
            these are the log-densities up to a constant; :meth:`log_density` returns them
            exactly.
        """
        log_prior = self._log_prior(priors)
        if self._is_binary():
            odds = self._log_odds(X, log_prior)
            check_log_odds(odds)
            return odds
        jll = self._joint_log_likelihood(X, log_prior)
        check_joint(jll)
        return jll
