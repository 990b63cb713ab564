"""Printed summary of a fitted finite mixture: log-likelihood, df, BIC, ICL and a component table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from discrim._typing import ArrayLike
from discrim.utils._markdown import markdown_cell

if TYPE_CHECKING:
    import pandas as pd

    from discrim.mixture.finite_mixture import FiniteMixture

__all__ = ["MixtureSummary", "summarize_mixture"]

#: mclust's description of each covariance model (``mclustModelNames(name)$type``).
MODEL_DESCRIPTIONS = {
    "EII": "spherical, equal volume",
    "VII": "spherical, varying volume",
    "EEI": "diagonal, equal volume and shape",
    "VEI": "diagonal, equal shape",
    "EVI": "diagonal, equal volume, varying shape",
    "VVI": "diagonal, varying volume and shape",
    "EEE": "ellipsoidal, equal volume, shape and orientation",
    "VEE": "ellipsoidal, equal shape and orientation",
    "EVE": "ellipsoidal, equal volume and orientation",
    "VVE": "ellipsoidal, equal orientation",
    "EEV": "ellipsoidal, equal volume and shape",
    "VEV": "ellipsoidal, equal shape",
    "EVV": "ellipsoidal, equal volume",
    "VVV": "ellipsoidal, varying volume, shape, and orientation",
}
#: mclust's description of its two models of one feature (``mclustModelNames("E")$type``).
UNIVARIATE_DESCRIPTIONS = {"E": "univariate, equal variance", "V": "univariate, unequal variance"}


def gaussian_covariances(mixture: FiniteMixture):
    """Means and full covariance matrices of a fitted Gaussian mixture, or None for other families.

    Parameters
    ----------
    mixture : FiniteMixture
        Fitted.

    Returns
    -------
    means : ndarray of shape (n_components, n_features)
    covariances : ndarray of shape (n_components, n_features, n_features)
        Expanded from any of the four storage layouts: "full" (K, d, d), "tied" (d, d),
        "diag" (K, d) and "spherical" (K,). None (instead of the pair) when the family is not a
        :class:`~discrim.distributions.Gaussian`.
    """
    from discrim.distributions import Gaussian
    from discrim.distributions._covariance_models import storage_of

    if not isinstance(mixture.family_, Gaussian):
        return None
    means = np.asarray(mixture.params_["mean"], dtype=float)
    k, d = means.shape
    cov = np.asarray(mixture.params_["covariance"], dtype=float)
    storage = storage_of(mixture.family_.covariance_type)
    if storage == "full":
        full = cov.reshape(k, d, d)
    elif storage == "tied":
        full = np.broadcast_to(cov.reshape(d, d), (k, d, d))
    elif storage == "diag":
        full = np.einsum("kd,de->kde", cov.reshape(k, d), np.eye(d))
    else:
        full = cov.reshape(k)[:, None, None] * np.eye(d)
    return means, np.array(full)


def _decomposition(covariances):
    """mclust's ``Sigma_k = lambda_k D_k A_k D_k'``: volumes (K,), shapes (K, d) descending with
    product 1, orientations (K, d, d) with the axes as columns in the shapes' order."""
    d = covariances.shape[-1]
    values, vectors = np.linalg.eigh(covariances)
    values, vectors = values[:, ::-1], vectors[:, :, ::-1]
    volumes = np.exp(np.linalg.slogdet(covariances)[1] / d)
    return volumes, values / volumes[:, None], vectors


def _family_description(mixture):
    """(label of the family, mclust model name or None, its description or None)."""
    from discrim.mixture._selection import _family_label

    name = getattr(mixture.family_, "model_name", None)
    if isinstance(name, str) and name in MODEL_DESCRIPTIONS:
        if mixture.n_features_in_ == 1:
            # one feature: shape and orientation mean nothing, and mclust names the model by its volume
            return _family_label(mixture.family_), name[0], UNIVARIATE_DESCRIPTIONS[name[0]]
        return _family_label(mixture.family_), name, MODEL_DESCRIPTIONS[name]
    return _family_label(mixture.family_), None, None


def _part_of(family, pname, names):
    """The family that owns parameter ``pname`` (a Product's part for ``part__name``) and its features' names."""
    if "__" in pname and hasattr(family, "_parts"):
        part = pname.split("__", 1)[0]
        for name, member, columns in family._parts():
            if name == part:
                return member, [names[c] if c < len(names) else str(c) for c in columns]
    return family, list(names)


def _parameter_columns(mixture, names):
    """Columns of the component table from the per-component parameters of a non-Gaussian family.

    Vectors give one column, (K, d) arrays one per feature; (K, d, C) category probabilities one
    per feature and category (``probs[colour=red]``), and a Product's (K, d, d) covariances their
    variances.
    """
    k = mixture.n_components
    columns = {}
    shared = set(mixture.family_.shared_params()) if hasattr(mixture.family_, "shared_params") else set()
    for pname, value in mixture.params_.items():
        arr = np.asarray(value)
        if pname in shared or arr.ndim == 0 or arr.shape[0] != k or arr.dtype.kind not in "biuf":
            continue
        family, features = _part_of(mixture.family_, pname, names)
        labels = features if arr.ndim > 1 and arr.shape[1] == len(features) else [str(j) for j in range(
            arr.shape[1] if arr.ndim > 1 else 0)]
        if arr.ndim == 1:
            columns[pname] = arr.astype(float)
        elif arr.ndim == 2:
            for j, lab in enumerate(labels):
                columns[f"{pname}[{lab}]"] = arr[:, j].astype(float)
        elif arr.ndim == 3 and arr.shape[1] == arr.shape[2] and pname.endswith("covariance"):
            for j, lab in enumerate(labels):
                columns[f"{pname}[{lab}]"] = arr[:, j, j].astype(float)  # the variances
        elif arr.ndim == 3:  # category probabilities: the categories of each feature, as named
            categories = getattr(family, "categories", None)
            counts = family._counts(arr.shape[1]) if hasattr(family, "_counts") else np.full(arr.shape[1], arr.shape[2])
            for j, lab in enumerate(labels):
                for c in range(int(counts[j])):
                    category = categories[j][c] if categories is not None else c
                    columns[f"{pname}[{lab}={category}]"] = arr[:, j, c].astype(float)
    return columns


@dataclass(frozen=True, eq=False)
class MixtureSummary:
    """Summary of a fitted finite mixture on some data, printed like mclust's ``summary(Mclust)``.

    ``str(summary)`` gives the text, :meth:`to_markdown` a Markdown rendering and
    :attr:`components` the component table as a DataFrame.

    Attributes
    ----------
    family : str
        Label of the component family, e.g. ``"Gaussian(covariance_type='VEV')"``.
    model_name : str or None
        mclust's covariance model ("VEV", ...) of a Gaussian family; None for other families.
    description : str or None
        mclust's description of that model ("ellipsoidal, equal shape").
    n_components : int
    n_samples : int
        Rows of X.
    n : float
        Total row weight (``n_samples`` without ``sample_weight``): the ``n`` of BIC.
    log_likelihood : float
        Maximised (weighted) log-likelihood ``sum_i w_i log f(x_i)``.
    df : int
        Free parameters: the components' and ``n_components - 1`` mixing weights (unless fixed).
    bic : float
        ``-2 log L + df log n`` (lower is better; mclust reports the negative).
    icl : float
        BIC minus twice the summed log-probability of each row's MAP component (lower is better).
    aic : float
        ``-2 log L + 2 df``.
    converged : bool
    n_iter : int
    feature_names : list of str
    components : pandas.DataFrame
        One row per component: ``weight`` (mixing weight, summing to 1), ``size`` (weight of the
        rows whose most probable component it is, summing to ``n``), ``mean[f]`` per feature;
        for a Gaussian family also ``variance[f]`` per feature, ``volume`` (``|Sigma_k|^(1/d)``)
        and ``shape[1]``, ..., ``shape[d]`` (the eigenvalues of ``Sigma_k / volume``, largest
        first, product 1; not on one feature, where mclust's models are "E" and "V"); for other families the columns of the per-component parameters
        (e.g. ``rate[f]``). A mixture with a noise component (``FiniteMixture(noise=True)``)
        has a last row ``"noise"`` with its weight and size (NaN elsewhere).
    covariances : ndarray of shape (n_components, n_features, n_features) or None
        Gaussian families: every component's full covariance (expanded from its storage).
    orientations : ndarray of shape (n_components, n_features, n_features) or None
        Gaussian families: the eigenvectors of each covariance as columns, in the order of
        ``shape[1]``, ... (mclust's ``D_k``).

    Examples
    --------
    >>> from discrim.datasets import coin_tosses
    >>> from discrim.distributions import Binomial
    >>> from discrim.mixture import FiniteMixture, summarize_mixture
    >>> X = coin_tosses()
    >>> fm = FiniteMixture(Binomial(n_trials=10), 2, random_state=0).fit(X)
    >>> summary = summarize_mixture(fm, X)
    >>> summary.n_components, summary.n_samples, summary.df
    (2, 5, 3)
    >>> bool(abs(summary.bic - fm.bic(X)) < 1e-9)
    True
    """

    family: str
    model_name: str | None
    description: str | None
    n_components: int
    n_samples: int
    n: float
    log_likelihood: float
    df: int
    bic: float
    icl: float
    aic: float
    converged: bool
    n_iter: int
    feature_names: list[str]
    components: pd.DataFrame = field(repr=False)
    covariances: np.ndarray | None = field(default=None, repr=False)
    orientations: np.ndarray | None = field(default=None, repr=False)

    def _title(self):
        # the family's class name: its options (a Product's every family) follow on the model line
        kind = "Gaussian" if self.model_name is not None else self.family.split("(")[0]
        return f"{kind} finite mixture model fitted by EM algorithm"

    def _model_line(self):
        plural = "s" if self.n_components != 1 else ""
        what = f"{self.model_name} ({self.description})" if self.model_name is not None else self.family
        noise = " and a noise term" if "noise" in list(self.components.index) else ""
        return f"{what} model with {self.n_components} component{plural}{noise}:"

    def _fit_numbers(self, mclust_sign):
        import pandas as pd

        sign = -1.0 if mclust_sign else 1.0
        n = int(self.n) if float(self.n).is_integer() else self.n
        return pd.DataFrame({"log-likelihood": [self.log_likelihood], "n": [n], "df": [self.df],
                             "BIC": [sign * self.bic], "ICL": [sign * self.icl]})

    def _sign_note(self, mclust_sign):
        if mclust_sign:
            return "BIC = 2 log L - df log n, ICL = BIC + 2 sum log max_k z_ik (mclust's sign: higher is better)."
        return "BIC = -2 log L + df log n, ICL = BIC - 2 sum log max_k z_ik (lower is better; mclust reports the negatives)."

    def to_text(self, *, mclust_sign: bool = False, parameters: bool = True) -> str:
        """Render the summary as text, in the layout of mclust's ``summary(Mclust)``.

        Parameters
        ----------
        mclust_sign : bool, default=False
            Print BIC and ICL with mclust's sign (higher is better).
        parameters : bool, default=True
            Print the component table (weights, sizes, means and covariance summaries); False
            prints only the sizes, as ``summary(Mclust)`` without ``parameters=TRUE``.

        Returns
        -------
        text : str
        """
        rule = "-" * (len(self._title()) + 1)
        numbers = self._fit_numbers(mclust_sign).to_string(index=False, float_format=lambda v: f"{v:.8g}")
        sizes = self.components["size"].to_numpy()
        sizes = [str(int(s)) if float(s).is_integer() else f"{s:.4g}" for s in sizes]
        heads = [str(c) for c in self.components.index]
        width = max(len(s) for s in [*sizes, *heads])
        lines = [rule, f" {self._title()}", rule, "", self._model_line(), "", numbers, self._sign_note(mclust_sign)]
        if not self.converged:
            lines.append(f"EM did not converge ({self.n_iter} iterations).")
        lines += ["", "Clustering table (rows by most probable component):",
                  " ".join(h.rjust(width) for h in heads),
                  " ".join(s.rjust(width) for s in sizes)]
        if parameters:
            table = self.components
            if table.shape[1] > table.shape[0]:  # more quantities than components: one column per component
                table = table.T
                table.columns = [f"component {c}" if c != "noise" else "noise" for c in self.components.index]
            lines += ["", "Components:", table.to_string(float_format=lambda v: f"{v:.6g}")]
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()

    def to_markdown(self, floatfmt: str = ".6g", *, mclust_sign: bool = False) -> str:
        """Render the summary as Markdown: the model, a table of the fit and the component table.

        Parameters
        ----------
        floatfmt : str, default=".6g"
            Format of the floating-point numbers.
        mclust_sign : bool, default=False
            BIC and ICL with mclust's sign (higher is better).

        Returns
        -------
        text : str
        """
        parts = [f"**{self._title()}**: {self._model_line().rstrip(':')}.", "",
                 _markdown_table(self._fit_numbers(mclust_sign), floatfmt, index=False), "",
                 self._sign_note(mclust_sign), "",
                 _markdown_table(self.components, floatfmt, index=True)]
        return "\n".join(parts)

    def to_frame(self) -> pd.DataFrame:
        """The fit's numbers as a one-row DataFrame (the component table is :attr:`components`).

        Returns
        -------
        frame : pandas.DataFrame of shape (1, 12)
            Columns ``family``, ``model_name``, ``n_components``, ``n_samples``, ``n``,
            ``log_likelihood``, ``df``, ``bic``, ``icl``, ``aic``, ``converged``, ``n_iter``.
        """
        import pandas as pd

        keys = ["family", "model_name", "n_components", "n_samples", "n", "log_likelihood", "df", "bic", "icl",
                "aic", "converged", "n_iter"]
        return pd.DataFrame({k: [getattr(self, k)] for k in keys})


def _markdown_table(frame, floatfmt, index):
    def cell(value):
        if isinstance(value, (float, np.floating)):
            return "NA" if np.isnan(value) else format(value, floatfmt)
        return markdown_cell(value)

    header = ([markdown_cell(frame.index.name or "")] if index else []) + [markdown_cell(c) for c in frame.columns]
    rows = [([cell(i)] if index else []) + [cell(v) for v in rec]
            for i, rec in zip(frame.index, frame.itertuples(index=False))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def summarize_mixture(mixture: FiniteMixture, X: ArrayLike, sample_weight: ArrayLike | None = None) -> "MixtureSummary":
    """Summarise a fitted finite mixture on X, as mclust's ``summary(Mclust)``.

    Parameters
    ----------
    mixture : FiniteMixture
        Fitted.
    X : array-like of shape (n_samples, n_features)
        Usually the training data (NaN marks a missing value); a dask array is read chunk by
        chunk (without ``sample_weight``).
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights, as in :meth:`FiniteMixture.bic`: the log-likelihood is weighted, ``n`` is
        the total weight and the sizes are sums of weights.

    Returns
    -------
    summary : MixtureSummary
        ``str(summary)`` prints it; its numbers are the estimator's own:
        ``summary.bic == mixture.bic(X)``, ``summary.icl == mixture.icl(X)``,
        ``summary.log_likelihood == mixture.score(X) * n``.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Gaussian
    >>> from discrim.mixture import FiniteMixture, summarize_mixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-5, 1, (100, 2)), rng.normal(5, 1, (100, 2))])
    >>> mixture = FiniteMixture(Gaussian(covariance_type="VII"), 2, random_state=0).fit(X)
    >>> summary = summarize_mixture(mixture, X)
    >>> summary.df, summary.components["size"].tolist()
    (7, [100.0, 100.0])
    >>> print(summary.to_text(parameters=False))  # doctest: +NORMALIZE_WHITESPACE
    -----------------------------------------------------
     Gaussian finite mixture model fitted by EM algorithm
    -----------------------------------------------------
    <BLANKLINE>
    VII (spherical, varying volume) model with 2 components:
    <BLANKLINE>
     log-likelihood   n  df       BIC       ICL
         -702.34725 200   7 1441.7827 1441.7827
    BIC = -2 log L + df log n, ICL = BIC - 2 sum log max_k z_ik (lower is better; mclust reports the negatives).
    <BLANKLINE>
    Clustering table (rows by most probable component):
      0   1
    100 100
    """
    import pandas as pd
    from sklearn.utils.validation import check_is_fitted

    from discrim.utils._dask import is_dask, weighted_total
    from discrim.utils.validation import check_sample_weight

    check_is_fitted(mixture, "weights_")
    k = mixture.n_components
    log_lik, n = weighted_total(mixture.score_samples(X), sample_weight)
    labels = mixture.predict(X)
    n_samples = int(labels.shape[0])
    noise = getattr(mixture, "noise_volume_", None) is not None  # a last, uniform noise component (label -1)
    slots = k + noise
    if is_dask(X):
        if sample_weight is not None:
            raise ValueError("summarize_mixture takes sample_weight with X in memory only; compute a dask X first.")
        import dask.array as da

        slot = da.where(labels < 0, k, labels).astype(np.int64)
        sizes = da.bincount(slot, minlength=slots).compute().astype(float)
    else:
        slot = np.where(np.asarray(labels) < 0, k, np.asarray(labels)).astype(np.int64)
        sizes = np.bincount(slot, weights=check_sample_weight(sample_weight, n_samples), minlength=slots).astype(float)
    names = [str(f) for f in getattr(mixture, "feature_names_in_", [f"x{j}" for j in range(mixture.n_features_in_)])]
    label, model, description = _family_description(mixture)
    columns = {"weight": np.asarray(mixture.weights_, dtype=float), "size": sizes}
    covariances = orientations = None
    gaussian = gaussian_covariances(mixture)
    if gaussian is not None:
        means, covariances = gaussian
        volumes, shapes, orientations = _decomposition(covariances)
        columns.update({f"mean[{f}]": means[:, j] for j, f in enumerate(names)})
        columns.update({f"variance[{f}]": covariances[:, j, j] for j, f in enumerate(names)})
        if len(names) > 1:  # on one feature the volume is the variance and the shape 1
            columns["volume"] = volumes
            columns.update({f"shape[{j + 1}]": shapes[:, j] for j in range(shapes.shape[1])})
    else:
        columns.update(_parameter_columns(mixture, names))
    # With noise its row comes last: its weight and size, NaN for the parameters it does not have.
    columns = {name: np.append(v, np.nan) if noise and len(v) == k else v for name, v in columns.items()}
    components = pd.DataFrame(columns, index=pd.Index([*range(k), *["noise"] * noise], name="component"))
    return MixtureSummary(
        family=label,
        model_name=model,
        description=description,
        n_components=k,
        n_samples=n_samples,
        n=float(n),
        log_likelihood=float(log_lik),
        df=int(mixture._n_parameters()),
        bic=float(mixture.bic(X, sample_weight)),
        icl=float(mixture.icl(X, sample_weight)),
        aic=float(mixture.aic(X, sample_weight)),
        converged=bool(mixture.converged_),
        n_iter=int(mixture.n_iter_),
        feature_names=names,
        components=components,
        covariances=covariances,
        orientations=orientations,
    )
