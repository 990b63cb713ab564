"""Printed summary of a fitted mixture discriminant, as mclust's ``summary(MclustDA)``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from discrim._typing import ArrayLike

if TYPE_CHECKING:
    import pandas as pd

    from discrim.discriminant import MixtureDiscriminant

__all__ = ["DiscriminantSummary", "summarize_discriminant"]


@dataclass(frozen=True)
class DiscriminantSummary:
    """The fit of a :class:`~discrim.discriminant.MixtureDiscriminant` on labelled rows.

    Attributes
    ----------
    kind : {"EDDA", "MclustDA"}
        "EDDA": the class densities fitted jointly (``joint=True``, unlabelled rows, or a family
        chosen for all classes by the joint model's BIC), the family's parameters counted once in ``df``;
        "MclustDA": each class fitted on its own rows, ``df`` the sum of the classes' parameter
        counts (mclust's two summaries). For both, ``log_likelihood`` is that of the classes as
        one mixture with the class proportions, ``sum_i w_i log sum_k (n_k / n) f_k(x_i)``, as
        mclust's ``logLik.MclustDA`` computes it.
    classes : pandas.DataFrame
        One row per class: ``n`` (weight), ``%``, ``model`` (the family's mclust name, "E" or
        "V" on one feature, or its class) and ``G`` (components).
    log_likelihood, n, df, bic : float
        ``bic = -2 log_likelihood + df log n`` (lower is better; mclust reports the negative).
    confusion : pandas.DataFrame
        Training confusion matrix: true classes by row, predicted by column (weighted counts).
    error : float
        Share (by weight) of the rows predicted into another class.
    brier : float
        ``sum_i w_i sum_k (p_ik - [y_i = k])^2 / (2 sum_i w_i)``, mclust's ``BrierScore``.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from discrim.discriminant import MixtureDiscriminant
    >>> from discrim.distributions import Gaussian
    >>> X, y = load_wine(return_X_y=True)
    >>> summary = MixtureDiscriminant(Gaussian("VVI"), n_components=2, random_state=0).fit(X, y).summary(X, y)
    >>> summary.kind, list(summary.classes["G"]), summary.confusion.shape
    ('MclustDA', [2, 2, 2], (3, 3))
    """

    kind: str
    classes: pd.DataFrame = field(repr=False)
    log_likelihood: float
    n: float
    df: int
    bic: float
    confusion: pd.DataFrame = field(repr=False)
    error: float
    brier: float

    def to_text(self, *, mclust_sign: bool = False) -> str:
        """The summary in the layout of mclust's ``summary(MclustDA)``.

        Parameters
        ----------
        mclust_sign : bool, default=False
            Print BIC with mclust's sign (higher is better).

        Returns
        -------
        text : str
        """
        import pandas as pd

        title = "Gaussian finite mixture model for classification" if self._gaussian() else \
            "Finite mixture model for classification"
        rule = "-" * (len(title) + 1)
        n = int(self.n) if float(self.n).is_integer() else self.n
        numbers = pd.DataFrame({"log-likelihood": [self.log_likelihood], "n": [n], "df": [self.df],
                                "BIC": [(-1.0 if mclust_sign else 1.0) * self.bic]})
        sign = ("BIC = 2 log L - df log n (mclust's sign: higher is better)." if mclust_sign else
                "BIC = -2 log L + df log n (lower is better; mclust reports the negative).")
        return "\n".join([
            rule, f" {title}", rule, "", f"{self.kind} model summary:", "",
            numbers.to_string(index=False, float_format=lambda v: f"{v:.8g}"), sign, "",
            self.classes.to_string(float_format=lambda v: f"{v:.4g}"), "",
            "Training confusion matrix (rows: class, columns: predicted):",
            self.confusion.to_string(float_format=lambda v: f"{v:.4g}"),
            f"Classification error = {self.error:.4g}",
            f"Brier score          = {self.brier:.4g}",
        ])

    def _gaussian(self):
        from discrim.distributions._covariance_models import COVARIANCE_MODELS

        return all(model in COVARIANCE_MODELS or model in ("E", "V") for model in self.classes["model"])

    def __str__(self):
        return self.to_text()


def summarize_discriminant(model: MixtureDiscriminant, X: ArrayLike, y: ArrayLike,
                           sample_weight: ArrayLike | None = None) -> DiscriminantSummary:
    """Summarise a fitted mixture discriminant on labelled rows, as mclust's ``summary(MclustDA)``.

    Parameters
    ----------
    model : MixtureDiscriminant
        Fitted.
    X : array-like of shape (n_samples, n_features)
        Usually the training rows, in memory.
    y : array-like of shape (n_samples,)
        Their classes, among ``model.classes_``.
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    summary : DiscriminantSummary

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from discrim.discriminant import MixtureDiscriminant
    >>> from discrim.distributions import Gaussian
    >>> X, y = load_iris(return_X_y=True)
    >>> mda = MixtureDiscriminant(Gaussian("VEV"), n_components=1, joint=True, priors="empirical").fit(X, y)
    >>> summary = mda.summary(X, y)
    >>> summary.kind, round(-summary.bic, 2), summary.error   # mclust: EDDA, -555.80, 0.02
    ('EDDA', -555.8, 0.02)
    """
    import pandas as pd
    from sklearn.utils.validation import check_is_fitted

    from discrim.backend import to_numpy
    from discrim.backend._device import is_tensor
    from discrim.discriminant.mixture import joint_fit_numbers
    from discrim.utils.validation import check_sample_weight, check_true_labels

    check_is_fitted(model, "mixtures_")
    check_true_labels(y, getattr(model, "unlabeled", None), "the summary's error rate and classification table "
                      "need each row's class")
    classes = np.asarray(model.classes_)
    y = np.asarray(y)
    index = np.searchsorted(classes, y).clip(0, classes.shape[0] - 1)
    if y.ndim != 1 or not np.array_equal(classes[index], y):
        raise ValueError(f"y must hold one label per row among classes_ {classes.tolist()}.")
    proba = np.asarray(to_numpy(model.predict_proba(X)), dtype=np.float64)
    if proba.shape[0] != y.shape[0]:
        raise ValueError(f"X has {proba.shape[0]} rows but y has {y.shape[0]}.")
    w = check_sample_weight(sample_weight, y.shape[0])
    totals = np.bincount(index, weights=w, minlength=classes.shape[0])
    # each class's rows; the class mixtures were fitted on the validated array (a DataFrame's names
    # stay with the classifier)
    rows = X if is_tensor(X) else np.asarray(X, dtype=np.float64)
    class_data = [(rows[index == k], w[index == k]) for k in range(classes.shape[0])]
    sizes = [m.n_components for m in model.mixtures_]
    # the classes as one mixture with their proportions, for both kinds (mclust's logLik.MclustDA)
    log_lik, df, _ = joint_fit_numbers(model.mixtures_, class_data, totals / totals.sum())
    # one EM over all classes (joint=True, or unlabelled rows, which always take that path; a model
    # saved before the flag existed: joint): what the family shares is shared by the classes
    if getattr(model, "_fitted_jointly", model.joint) or model.family_bic_ is not None:
        kind = "EDDA"  # the family's parameters counted once
    else:
        kind = "MclustDA"  # each class's own parameters and mixing weights
        df = int(sum(m._n_parameters() for m in model.mixtures_))
    n = float(w.sum())
    predicted = classes[np.argmax(proba, axis=1)]
    truth = np.eye(classes.shape[0])[index]
    table = pd.DataFrame({"n": totals, "%": 100.0 * totals / totals.sum(),
                          "model": [_model_label(m.family_, m.n_features_in_) for m in model.mixtures_], "G": sizes},
                         index=pd.Index([str(c) for c in classes], name="class"))
    confusion = pd.crosstab(pd.Series(y, name="class"), pd.Series(predicted, name="predicted"), values=w,
                            aggfunc="sum").reindex(index=classes, columns=classes).fillna(0.0)
    return DiscriminantSummary(
        kind=kind, classes=table, log_likelihood=log_lik, n=n, df=df, bic=float(-2.0 * log_lik + df * np.log(n)),
        confusion=confusion, error=float(w @ (predicted != y) / n),
        brier=float(w @ ((proba - truth) ** 2).sum(axis=1) / (2.0 * n)),
    )


def _model_label(family, n_features):
    """mclust's name of a Gaussian family's model ("E" or "V" on one feature, as mclust), or the family's class."""
    from discrim.distributions._covariance_models import COVARIANCE_MODELS

    name = getattr(family, "model_name", None)
    if not isinstance(name, str):
        return type(family).__name__
    return name[0] if n_features == 1 and name in COVARIANCE_MODELS else name
