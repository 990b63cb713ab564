"""Posteriors and the ML/Bayes rule in log space: the one implementation every model uses.

The discriminant classifiers (class densities and priors), :class:`~discrim.mixture.FiniteMixture`
(component densities and mixing weights: its responsibilities) and the prototype set classifier
(the unnormalised class scores ``q_k(x)``) all reduce to a joint log-likelihood ``log pi_k f_k(x)``
per row and label, known up to a term common to the row. :class:`PosteriorMixin` turns it into
``predict``, ``predict_proba`` and ``predict_log_proba``, with the checks that keep NaN away from
every decision. This module is a leaf: it imports nothing else from discrim but the array ops and the
Dask data path (a dask X gives a dask array, computed chunk by chunk).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
from scipy.special import expit, log_expit
from sklearn.utils.validation import check_is_fitted

from discrim._typing import Array, ArrayLike
from discrim.backend import _ops as ops
from discrim.backend import to_numpy
from discrim.utils._dask import blockwise


def log_posterior(log_dens, log_prior, xp: ModuleType = np):
    """Posterior log-probabilities from log-densities and log-priors.

    Parameters
    ----------
    log_dens : array of shape (n_samples, n_classes)
        ``log f_k(x_i)``.
    log_prior : array of shape (n_classes,)
        ``log pi_k``; ``-inf`` for a class with prior zero.
    xp : namespace, default=numpy

    Returns
    -------
    log_post : array of shape (n_samples, n_classes)
        ``log P(k | x_i)``, normalised in log space so that far-away points do not underflow to
        0/0.
    log_norm : array of shape (n_samples,)
        ``log sum_k pi_k f_k(x_i)``, the log marginal density (``-inf`` where every joint
        density is zero; ``log_post`` is NaN on those rows and callers must reject them).
    """
    joint = log_dens + log_prior
    log_norm = ops.logsumexp(joint, axis=1, xp=xp)
    return joint - log_norm[:, None], log_norm


def listed_indices(mask, first_row=0):
    """How many indices ``mask`` holds at, and the first few of them listed, for messages: ``(count, "i, j ...")``."""
    bad = np.flatnonzero(mask) + first_row
    return bad.size, ", ".join(str(i) for i in bad[:5]) + (" ..." if bad.size > 5 else "")


def check_some_density(log_norm, labels="class", first_row=0):
    """Raise if some row has zero density under every class (or every mixture component).

    Parameters
    ----------
    log_norm : ndarray of shape (n_samples,)
        Output of :func:`log_posterior`, or the largest joint log-likelihood of each row.
    labels : {"class", "component"}, default="class"
        What the columns are, for the message: a mixture's components need a different fix.
    first_row : int, default=0
        Index of ``log_norm[0]`` in X, when it is a block of rows.
    """
    count, shown = listed_indices(~np.isfinite(log_norm), first_row)
    if count:
        fix = (
            "check that the rows lie in the support of the class densities"
            if labels == "class"
            else "check that X lies in the support of the family, or that params_init/weights_init "
            "give every region of the data some mass"
        )
        raise ValueError(
            f"{count} row(s) of X (index {shown}) have zero density (or a non-finite one) under "
            f"every {labels} with positive weight, so no {labels} can be chosen: {fix}."
        )


def check_joint(jll, labels="class"):
    """Raise unless every row has finite joint log-likelihoods where it has any, and some.

    Parameters
    ----------
    jll : ndarray of shape (n_samples, n_classes)
        ``log pi_k f_k(x_i)`` (up to a term common to the row). ``-inf`` (zero density or zero
        prior) is allowed as long as some class of the row is finite.
    labels : {"class", "component"}, default="class"
        What the columns are, for the messages.

    Raises
    ------
    ValueError
        If an entry is NaN (an invalid density or parameter: the rule would otherwise pick a
        label from NaN scores), ``+inf`` (a density without a finite value there), or a row
        is ``-inf`` under every class.
    """
    count, shown = listed_indices(np.isnan(jll).any(axis=1))
    if count:
        classes = np.flatnonzero(np.isnan(jll).any(axis=0)).tolist()
        raise ValueError(
            f"{count} row(s) of X (index {shown}) have a NaN log-density under {labels} index(es) "
            f"{classes}: a {labels} density is invalid (for example a negative scale) or undefined "
            "at these rows; no posterior or class can be computed from NaN. Check the density "
            "parameters and X."
        )
    count, shown = listed_indices(np.isposinf(jll).any(axis=1))
    if count:
        raise ValueError(
            f"{count} row(s) of X (index {shown}) have an infinite log-density: a {labels} density "
            "is degenerate (a point mass) at these rows, so the posteriors are undefined."
        )
    check_some_density(jll.max(axis=1), labels)


def check_log_odds(odds, labels="class"):
    """Raise if a two-class log odds is NaN (zero density under both classes, or invalid).

    Parameters
    ----------
    odds : ndarray of shape (n_samples,)
    labels : {"class", "component"}, default="class"
        What the two labels are, for the message.
    """
    count, shown = listed_indices(np.isnan(odds))
    if count:
        raise ValueError(
            f"{count} row(s) of X (index {shown}) have NaN log odds: zero (or an invalid, NaN) "
            f"density under both {'classes' if labels == 'class' else labels + 's'}, so no {labels} can be chosen. "
            f"Check that the rows lie in the support of the {labels} densities and that the densities are valid."
        )


def proba_from_joint(jll, log=False, labels="class"):
    """Posterior probabilities from joint log-likelihoods, without forming logsumexp twice.

    Parameters
    ----------
    jll : ndarray of shape (n_samples, n_classes)
        ``log pi_k f_k(x_i)``, possibly up to a term that is the same for every class. It is
        overwritten (callers pass a temporary).
    log : bool, default=False
        Return log-probabilities.
    labels : {"class", "component"}, default="class"
        What the columns are, for the messages.

    Returns
    -------
    proba : ndarray of shape (n_samples, n_classes)
        Posterior (log-)probabilities; rows sum to one.

    Raises
    ------
    ValueError
        If some row has zero density under every class, or a NaN or ``+inf`` log-likelihood
        (see :func:`check_joint`).
    """
    check_joint(jll, labels)
    if jll.shape[1] == 2:
        return proba_from_log_odds(jll[:, 1] - jll[:, 0], log=log, labels=labels)
    top = jll.max(axis=1, keepdims=True)
    jll -= top
    if log:
        jll -= np.log(np.exp(jll).sum(axis=1, keepdims=True))
        return jll
    np.exp(jll, out=jll)
    jll /= jll.sum(axis=1, keepdims=True)
    return jll


def proba_from_log_odds(odds, log=False, labels="class"):
    """Two-class posterior probabilities from the log odds of the second class.

    Parameters
    ----------
    odds : ndarray of shape (n_samples,)
        ``log P(class 1 | x) - log P(class 0 | x)``; NaN (zero density under both classes, or an
        invalid density) raises ValueError.
    log : bool, default=False
        Return log-probabilities.
    labels : {"class", "component"}, default="class"
        What the two labels are, for the message.

    Returns
    -------
    proba : ndarray of shape (n_samples, 2)
        ``[sigma(-odds), sigma(odds)]``, each computed directly, so a tiny probability keeps its
        relative precision (``1 - p`` would not).
    """
    check_log_odds(odds, labels)
    link = log_expit if log else expit
    out = np.empty((2, odds.shape[0]), dtype=np.result_type(odds.dtype, np.float32))
    np.negative(odds, out=out[0])
    link(out[0], out=out[0])
    link(odds, out=out[1])
    return out.T  # contiguous writes; an (n, 2) view as scikit-learn returns


def rule_from_log_odds(odds, kind, labels, label_kind="class"):
    """The decision of the rule between two labels from the log odds of the second.

    Parameters
    ----------
    odds : ndarray of shape (n_samples,)
        ``log P(label 1 | x) - log P(label 0 | x)``; NaN raises ValueError.
    kind : {"predict", "proba", "log_proba"}
        The labels of largest posterior probability, the posteriors, or their logs.
    labels : array-like of shape (2,)
        The labels, in the order of the columns.
    label_kind : {"class", "component"}, default="class"
        What the labels are, for the messages.

    Returns
    -------
    out : ndarray of shape (n_samples,) for ``"predict"``, else (n_samples, 2)
    """
    if kind == "predict":
        check_log_odds(odds, label_kind)
        return np.asarray(labels)[(odds > 0).astype(np.intp)]
    return proba_from_log_odds(odds, log=kind == "log_proba", labels=label_kind)


def rule_from_joint(jll, kind, labels, label_kind="class"):
    """The decision of the ML/Bayes rule from joint log-likelihoods: labels, posteriors or their logs.

    Parameters
    ----------
    jll : ndarray of shape (n_samples, n_labels)
        ``log pi_k f_k(x_i)``, possibly up to a term common to the row; overwritten.
    kind : {"predict", "proba", "log_proba"}
        The labels of largest posterior probability, the posteriors, or their logs.
    labels : array-like of shape (n_labels,)
        The labels, in the order of the columns.
    label_kind : {"class", "component"}, default="class"
        What the labels are, for the messages.

    Returns
    -------
    out : ndarray of shape (n_samples,) for ``"predict"``, else (n_samples, n_labels)
        Two labels go through the log odds, so a tiny probability keeps its relative precision.
    """
    if jll.shape[1] == 2:
        check_joint(jll, label_kind)
        return rule_from_log_odds(jll[:, 1] - jll[:, 0], kind, labels, label_kind)
    if kind == "predict":
        check_joint(jll, label_kind)
        return np.asarray(labels)[np.argmax(jll, axis=1)]
    return proba_from_joint(jll, log=kind == "log_proba", labels=label_kind)


class PosteriorMixin:
    """``predict``, ``predict_proba`` and ``predict_log_proba`` from a joint log-likelihood.

    A subclass implements ``_joint_log_likelihood(X, log_prior=None)``: validated rows in, a fresh
    (n_samples, n_labels) array of ``log pi_k f_k(x)`` out (up to a term common to the row), and
    ``_rule_labels()``, the labels of the columns (``classes_`` by default). Two labels go through
    the log odds (``_log_odds``, which a subclass may compute more cheaply), so a tiny probability
    keeps its relative precision. NaN scores, ``+inf`` and rows of zero density everywhere raise
    (see :func:`check_joint`); no label is ever chosen from them.
    """

    # What the labels are, in error messages: "class", or "component" for a mixture.
    _rule_label_kind = "class"

    def _joint_log_likelihood(self, X, log_prior=None):
        """``log pi_k f_k(x)`` of validated rows; ``log_prior`` (n_labels,) replaces the fitted log-priors."""
        raise NotImplementedError

    def _rule_labels(self):
        return self.classes_

    def _is_binary(self):
        check_is_fitted(self)  # before reading the labels, so an unfitted model says so
        return len(self._rule_labels()) == 2

    def _log_prior(self, priors):
        """The log of priors given at prediction time (None: the fitted ones), checked against the labels."""
        if priors is None:
            return None
        from discrim.utils.validation import check_priors

        check_is_fitted(self)  # before reading the labels, so an unfitted model says so
        n_labels = len(self._rule_labels())
        order = "classes_" if self._rule_label_kind == "class" else "weights_"
        if isinstance(priors, str) and priors != "equal":
            # a model keeps no frequencies of its training rows: "empirical" is a choice at fit
            hint = (" The training frequencies are priors='empirical' at fit; at prediction give them as an array, "
                    "e.g. np.unique(y_train, return_counts=True)[1] / len(y_train).") if priors == "empirical" else ""
            raise ValueError(f"priors at prediction time must be 'equal' or an array of {n_labels} probabilities "
                             f"in the order of {order}; got {priors!r}.{hint}")
        with np.errstate(divide="ignore"):  # a prior of 0 rules its label out
            return np.log(check_priors(priors, np.ones(n_labels), self._rule_label_kind, order,
                                       labels=np.asarray(self._rule_labels()) if self._rule_label_kind == "class" else None))

    def _log_odds(self, X, log_prior=None):
        """Two labels: ``log P(label 1 | x) - log P(label 0 | x)``, shape (n_samples,)."""
        jll = self._joint_log_likelihood(X, log_prior)
        check_joint(jll, self._rule_label_kind)  # a NaN (invalid density) or a row of zero density says why
        return jll[:, 1] - jll[:, 0]

    def _apply_rule(self, X, priors, kind):
        """``predict``, ``predict_proba`` or ``predict_log_proba`` (``kind``) of rows X."""
        log_prior = self._log_prior(priors)
        if self._is_binary():
            return rule_from_log_odds(self._log_odds(X, log_prior), kind, self._rule_labels(), self._rule_label_kind)
        return rule_from_joint(self._joint_log_likelihood(X, log_prior), kind, self._rule_labels(),
                               self._rule_label_kind)

    @blockwise
    def predict_log_proba(self, X: ArrayLike, priors: str | ArrayLike | None = None) -> Array:
        """Posterior log-probabilities of the labels, computed in log space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors : "equal" or array-like of shape (n_labels,), default=None
            Prior probabilities of the labels for this call, in the order of ``classes_`` (a
            mixture: mixing weights): the Bayes rule under other label frequencies, without
            refitting. None uses the fitted ones.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_labels)
            Columns in the order of ``classes_`` (a mixture: of its components).
        """
        return self._apply_rule(X, priors, "log_proba")

    @blockwise
    def predict_proba(self, X: ArrayLike, priors: str | ArrayLike | None = None) -> Array:
        """Posterior probabilities of the labels (a mixture: the responsibilities).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors : "equal" or array-like of shape (n_labels,), default=None
            Prior probabilities of the labels for this call, in the order of ``classes_`` (a
            mixture: mixing weights): the Bayes rule under other label frequencies, without
            refitting. None uses the fitted ones.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_labels)
            Rows sum to one; columns in the order of ``classes_`` (a mixture: of its components).
        """
        return self._apply_rule(X, priors, "proba")

    @blockwise
    def predict(self, X: ArrayLike, priors: str | ArrayLike | None = None) -> Array:
        """The label of largest posterior probability (the ML rule with equal priors, else Bayes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        priors : "equal" or array-like of shape (n_labels,), default=None
            Prior probabilities of the labels for this call, in the order of ``classes_`` (a
            mixture: mixing weights): the Bayes rule under other label frequencies, without
            refitting. None uses the fitted ones.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._apply_rule(X, priors, "predict")


def map_log_probability(proba: ArrayLike):
    """Log of each row's largest class or component probability (that of its MAP assignment).

    Parameters
    ----------
    proba : ndarray, torch.Tensor or dask.array.Array of shape (n_samples, n_classes)

    Returns
    -------
    log_p : ndarray (or dask.array.Array for a dask input) of shape (n_samples,)
    """
    if hasattr(proba, "map_blocks"):
        return proba.map_blocks(map_log_probability, drop_axis=1, dtype=np.float64)
    p = np.asarray(to_numpy(proba), dtype=np.float64)
    return np.log(p.max(axis=1))
