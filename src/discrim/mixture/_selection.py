"""Model choice for finite mixtures: fit a grid of families and component counts, rank by BIC, AIC or ICL."""

from __future__ import annotations

from collections.abc import Iterable

import itertools
import warnings
from dataclasses import dataclass, field
from numbers import Integral

from typing import TYPE_CHECKING, Any

import numpy as np

from discrim._typing import ArrayLike, Device, RandomStateLike
from discrim.backend._device import is_tensor, rows_on_device
from discrim.exceptions import CollapsingComponentWarning, FitFailedWarning
from discrim.utils._dask import align_rows, is_dask, persist_if_it_fits, refuse_device, row_chunked
from discrim.utils._random import as_seed_sequence
from discrim.utils._parallel import check_n_jobs, run_unordered
from discrim.utils._warnings import user_stacklevel
from discrim.utils.validation import (
    check_feature_magnitude,
    check_mixture_table,
    check_sample_weight,
    weighted_feature_variance,
)

if TYPE_CHECKING:
    import pandas as pd

    from discrim.distributions._base import ComponentFamily
    from discrim.mixture.finite_mixture import FiniteMixture

_COLUMNS = [
    "family", "n_components", "n_parameters", "log_likelihood", "bic", "aic", "icl", "converged", "n_iter",
    "min_rows", "min_rel_variance", "degenerate", "degenerate_reason",
]
# Grid cells select_mixture fits at most: each is a full EM fit.
MAX_GRID_CELLS = 10_000
# A component whose covariance, less reg_covar, has an eigenvalue below this fraction of the
# features' variance (in the data's standardised units) is singular: collapsed onto tied values
# or a lower-dimensional set, where its likelihood grows without bound as reg_covar shrinks.
# mclust refuses such fits (its eps on the reciprocal condition number); rounding alone stays
# near 1e-16.
SINGULAR_RTOL = 1e-8
# A cell whose fit has a component sinking towards reg_covar is continued from its parameters to
# this tolerance (at most this many more iterations) before it is judged: see _continued.
CONTINUE_TOL = 1e-10
CONTINUE_MAX_ITER = 1000


@dataclass
class MixtureSelection:
    """Result of :func:`select_mixture`: the criterion table and the chosen mixture.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (family, n_components) cell in grid order, with columns ``family`` (label),
        ``n_components``, ``n_parameters``, ``log_likelihood`` (total, sample-weighted),
        ``bic``, ``aic``, ``icl`` (all lower is better), ``converged``, ``n_iter``, ``min_rows`` (the
        weighted row count of the smallest component), ``min_rel_variance`` (Gaussian families:
        the smallest eigenvalue of a component covariance less ``reg_covar``, in units of the
        features' variances; Gamma, LogNormal and Exponential: a component's spread free of the
        units, over the largest of the components', see ``ComponentFamily.min_relative_variance``;
        NaN for other families), ``degenerate`` (True: never chosen),
        ``degenerate_reason`` ("too few rows", "singular covariance", "variance at reg_covar" (a
        candidate for the choice whose variance stayed at the floor ``reg_covar`` when its EM was
        continued to a tight tolerance: mclust's fit there is singular), or empty) and ``error``
        (empty unless the fit failed, in which case the numbers are NaN).
    criterion : {"bic", "aic", "icl"}
        The column that chose the best model.
    best_index : int
        Row of ``table`` with the smallest criterion among the rows that neither failed nor are
        degenerate.
    best_params : dict
        ``{"family": label, "n_components": k}`` of the chosen model.
    best_estimator : FiniteMixture
        The fitted mixture of that row.
    families : dict
        Label -> family object, as used in the grid.
    estimators : list of FiniteMixture or None
        The fitted mixture of every row of ``table`` (None where the fit failed).

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Gaussian
    >>> from discrim.mixture import select_mixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (60, 2)), rng.normal(5, 1, (60, 2))])
    >>> selection = select_mixture(X, {"VVV": Gaussian("full")}, range(1, 4), random_state=0)
    >>> selection.best_params
    {'family': 'VVV', 'n_components': 2}
    >>> list(selection.table.columns[:4])
    ['family', 'n_components', 'n_parameters', 'log_likelihood']
    """

    table: pd.DataFrame
    criterion: str
    best_index: int
    best_params: dict[str, Any]
    best_estimator: FiniteMixture
    families: dict[str, ComponentFamily] = field(repr=False)
    estimators: list[FiniteMixture | None] = field(repr=False)

    def to_markdown(self, floatfmt: str = ".2f") -> str:
        """Render the table as Markdown, the chosen row marked with ``*``.

        Parameters
        ----------
        floatfmt : str, default=".2f"
            Format of the floating-point columns.

        Returns
        -------
        text : str
        """
        cols = [c for c in _COLUMNS if c in self.table.columns]
        rows = []
        for i, rec in enumerate(self.table[cols].itertuples(index=False)):
            cells = []
            for name, value in zip(cols, rec):
                if isinstance(value, (float, np.floating)):
                    cells.append("NA" if np.isnan(value) else format(value, floatfmt))
                else:
                    cells.append(str(value))
            cells.append("*" if i == self.best_index else "")
            rows.append(cells)
        header = [*cols, "best"]
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines.append("")
        lines.append(
            f"Best by {self.criterion.upper()} (lower is better): family {self.best_params['family']}, "
            f"n_components={self.best_params['n_components']}."
        )
        return "\n".join(lines)

    def __str__(self):
        return self.to_markdown()

    def _criterion(self, criterion):
        criterion = self.criterion if criterion is None else criterion
        if criterion not in ("bic", "aic", "icl"):
            raise ValueError(f"criterion must be 'bic', 'aic', 'icl' or None; got {criterion!r}.")
        return criterion

    def _usable_values(self, criterion, include_degenerate):
        """The criterion per row, NaN where the fit failed (and, unless included, where it is degenerate)."""
        values = self.table[criterion].to_numpy(dtype=float).copy()
        if not include_degenerate:
            values[self.table["degenerate"].to_numpy(dtype=bool)] = np.nan
        return values

    def criterion_table(self, criterion: str | None = None, *, mclust_sign: bool = False, include_degenerate: bool = False) -> pd.DataFrame:
        """The criterion as a wide table: one row per component count, one column per family.

        This is the table that R's mclust prints for ``mclustBIC(X)``.

        Parameters
        ----------
        criterion : {"bic", "aic", "icl"} or None, default=None
            The column of :attr:`table` to show; None: :attr:`criterion`.
        mclust_sign : bool, default=False
            False: discrim's sign (``-2 log L + penalty``, lower is better). True: mclust's, the
            negative (``2 log L - p log n`` for BIC, higher is better).
        include_degenerate : bool, default=False
            Show the values of degenerate fits (column ``degenerate`` of :attr:`table`); by
            default they are NaN, as mclust prints NA for the fits it refuses. Failed fits are
            NaN always.

        Returns
        -------
        wide : pandas.DataFrame of shape (n_counts, n_families)
            Indexed by ``n_components`` (increasing), the columns the family labels in grid order.
        """
        criterion = self._criterion(criterion)
        long = self.table[["family", "n_components"]].copy()
        long["value"] = self._usable_values(criterion, include_degenerate) * (-1.0 if mclust_sign else 1.0)
        wide = long.pivot(index="n_components", columns="family", values="value")
        wide = wide.reindex(columns=list(dict.fromkeys(self.table["family"]))).sort_index()
        wide.columns.name = None
        return wide

    def top_models(self, n: int = 3, criterion: str | None = None, *, mclust_sign: bool = False) -> pd.DataFrame:
        """The best ``n`` models by a criterion, with their differences from the best.

        The table of R's ``summary(mclustBIC(X))``. Failed and degenerate fits are left out
        (they are never chosen); ties keep grid order.

        Parameters
        ----------
        n : int, default=3
            How many models (fewer when fewer fits are usable).
        criterion : {"bic", "aic", "icl"} or None, default=None
            The column of :attr:`table` to rank by; None: :attr:`criterion`.
        mclust_sign : bool, default=False
            Report values and differences with mclust's sign (the negatives, higher is better).

        Returns
        -------
        top : pandas.DataFrame of shape (n, 4)
            Best first, indexed by mclust-style labels ``"family,K"``, with columns ``family``,
            ``n_components``, the criterion (e.g. ``bic``) and ``difference`` (the value less
            the best value: >= 0 in discrim's sign, <= 0 in mclust's).
        """
        import pandas as pd

        if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
            raise ValueError(f"n must be a positive int; got {n!r}.")
        criterion = self._criterion(criterion)
        values = self._usable_values(criterion, include_degenerate=False)
        if np.all(np.isnan(values)):  # every fit degenerate: rank them anyway, as select_mixture chooses
            values = self._usable_values(criterion, include_degenerate=True)
        rows = [i for i in np.argsort(values, kind="stable") if not np.isnan(values[i])][:n]
        sign = -1.0 if mclust_sign else 1.0
        top = pd.DataFrame({
            "family": self.table["family"].to_numpy()[rows],
            "n_components": self.table["n_components"].to_numpy()[rows],
            criterion: sign * values[rows],
            "difference": sign * (values[rows] - values[rows[0]]) + 0.0,  # + 0.0: no "-0" for the best
        }, index=[f"{self.table['family'].iloc[i]},{self.table['n_components'].iloc[i]}" for i in rows])
        return top

    def summary(self, n: int = 3, criterion: str | None = None, *, mclust_sign: bool = False) -> str:
        """Text of the best ``n`` models by a criterion, as R's ``summary(mclustBIC(X))``.

        Parameters
        ----------
        n : int, default=3
            How many models.
        criterion : {"bic", "aic", "icl"} or None, default=None
            The criterion to rank by; None: :attr:`criterion`.
        mclust_sign : bool, default=False
            Values with mclust's sign (higher is better).

        Returns
        -------
        text : str

        Examples
        --------
        >>> import numpy as np
        >>> from discrim.mixture import gaussian_models, select_mixture
        >>> rng = np.random.default_rng(0)
        >>> X = np.concatenate([rng.normal(-5, 1, (100, 2)), rng.normal(5, 1, (100, 2))])
        >>> result = select_mixture(X, gaussian_models(["EII", "VVV"]), range(1, 4), random_state=0)
        >>> print(result.summary(n=2))  # doctest: +ELLIPSIS
        Top 2 models by BIC (-2 log L + p log n, lower is better):
        ...
        """
        criterion = self._criterion(criterion)
        top = self.top_models(n, criterion, mclust_sign=mclust_sign)
        meaning = {"bic": ("-2 log L + p log n", "2 log L - p log n"), "aic": ("-2 log L + 2 p", "2 log L - 2 p"),
                   "icl": ("BIC - 2 sum log max_k z_ik", "BIC + 2 sum log max_k z_ik")}[criterion][int(mclust_sign)]
        if mclust_sign:
            meaning = f"mclust's sign, {meaning}"
        better = "higher" if mclust_sign else "lower"
        name = criterion.upper()
        values = top[[criterion, "difference"]].T
        values.index = [name, f"{name} diff"]
        return (f"Top {len(top)} models by {name} ({meaning}, {better} is better):\n"
                + values.to_string(float_format=lambda v: f"{v:.4f}"))


def gaussian_models(names: str | Iterable[str] | None = None, **options: object) -> dict:
    """mclust's Gaussian covariance models as families labelled by their names, for :func:`select_mixture`.

    ``select_mixture(X, gaussian_models(), range(1, 10))`` fits what R's ``Mclust(X, G=1:9)``
    fits: the 14 covariance models of Celeux and Govaert (1995) for every component count,
    with the models' names as the family labels (the columns of
    :meth:`MixtureSelection.criterion_table`).

    Parameters
    ----------
    names : str or sequence of str, default=None
        Some of "EII", "VII", "EEI", "VEI", "EVI", "VVI", "EEE", "VEE", "EVE", "VVE", "EEV",
        "VEV", "EVV", "VVV" (see :class:`~discrim.distributions.Gaussian`); None: all 14.
    **options
        Further options of every :class:`~discrim.distributions.Gaussian`, such as
        ``reg_covar``.

    Returns
    -------
    families : dict of str to Gaussian
        ``{name: Gaussian(covariance_type=name, **options)}``, in mclust's order when ``names``
        is None, else in the given order.

    Examples
    --------
    >>> from discrim.mixture import gaussian_models
    >>> list(gaussian_models())[:4]
    ['EII', 'VII', 'EEI', 'VEI']
    >>> gaussian_models("VEV")
    {'VEV': Gaussian(covariance_type='VEV')}
    """
    from discrim.distributions import Gaussian
    from discrim.distributions._covariance_models import COVARIANCE_MODELS

    if names is None:
        names = list(COVARIANCE_MODELS)
    elif isinstance(names, str):
        names = [names]
    names = list(names)
    unknown = [name for name in names if name not in COVARIANCE_MODELS]
    if unknown or not names or len(set(names)) < len(names):
        raise ValueError(
            f"names must be distinct mclust model names among {', '.join(COVARIANCE_MODELS)}; got {names!r}."
        )
    return {name: Gaussian(covariance_type=name, **options) for name in names}


def _family_label(family):
    """``Gaussian(covariance_type='full')``: every structural option shown, defaults included.

    Options of the fit (``family.fit_options``, e.g. reg_covar) are shown only when they differ
    from their defaults.
    """
    params = family.get_params(deep=False) if hasattr(family, "get_params") else {}
    if params.get("categories") is not None:  # Categorical: the categories give the counts, not n_categories
        params.pop("n_categories", None)
    fit_options = getattr(family, "fit_options", ())
    if fit_options:
        defaults = type(family)().get_params(deep=False)
        params = {k: v for k, v in params.items() if k not in fit_options or v != defaults[k]}
    return f"{type(family).__name__}({', '.join(f'{k}={v!r}' for k, v in sorted(params.items()))})"


def _check_family(where, family):
    """Raise TypeError unless ``family`` is a component family; ``where`` names it as the user wrote it."""
    if hasattr(family, "log_prob") and hasattr(family, "n_parameters"):
        return
    from discrim.distributions._covariance_models import COVARIANCE_MODELS

    hint = ""
    if isinstance(family, str) and family in COVARIANCE_MODELS:  # an mclust name, as Mclust(modelNames=) takes
        hint = f" mclust's model names go through gaussian_models: pass gaussian_models({family!r})."
    raise TypeError(
        f"{where} is {family!r}, not a component family: pass objects such as "
        f"discrim.distributions.Gaussian(covariance_type='full').{hint}"
    )


def _warn_reg_covar_once(families, fit_params, X, w):
    """The warnings of FiniteMixture.fit about reg_covar beside X's variances, once for the grid.

    Every fit of a cell would give them, in the same words (28 times on a grid of 14 models x 2);
    here once per distinct ``reg_covar`` of the grid's Gaussian families, and the cells keep quiet.
    """
    from discrim.mixture import FiniteMixture
    from discrim.mixture.finite_mixture import _warn_if_reg_covar_dominates

    seen = set()
    for family in families.values():
        try:
            effective = FiniteMixture(family, reg_covar=fit_params.get("reg_covar"))._family()
        except ValueError:  # the family's cells fail, each with its message in the table
            continue
        reg = getattr(effective, "reg_covar", None)
        if reg not in seen:
            seen.add(reg)
            _warn_if_reg_covar_dominates(effective, X, w)


def _warn_if_mixed_measures(families):
    """Warn where discrete and continuous families are compared: their likelihoods are in other units.

    A mass function is a probability and a density a probability per unit of the data, so the
    criterion's ranking of one against the other depends on the data's units (it chose an
    Exponential that put a rate of 1e12 on the zeros of counts). Products, whose columns may be of
    either kind, are left out.
    """
    from discrim.distributions import Product

    kinds = {}
    for label, family in families.items():
        if not isinstance(family, Product):
            kinds.setdefault(bool(family.is_discrete), []).append(str(label))
    if len(kinds) > 1:
        warnings.warn(
            f"select_mixture compares discrete families ({', '.join(kinds[True][:3])}) with continuous ones "
            f"({', '.join(kinds[False][:3])}): a mass function and a density are on different scales, so the "
            "criterion's choice between them depends on the data's units. Compare families of one kind.",
            UserWarning, stacklevel=3)


def _check_family_options(family_options):
    """The families to compare by label, each checked where the user wrote it.

    A dict's keys are the labels; a list's (or a single family's) labels are the families'
    reprs (:func:`_family_label`), which must differ.
    """
    if isinstance(family_options, dict):
        named = [(f"family_options[{k!r}]", str(k), fam) for k, fam in family_options.items()]
    elif isinstance(family_options, (list, tuple)):
        named = [(f"family_options[{i}]", None, fam) for i, fam in enumerate(family_options)]
    else:
        named = [("family_options", None, family_options)]
    if not named:
        raise ValueError("family_options is empty: give at least one family.")
    # checked before labelling: a label is built from the family's parameters
    for where, _, fam in named:
        _check_family(where, fam)
    families = {}
    for _, label, fam in named:
        if label is None:
            label = _family_label(fam)
            if label in families:
                raise ValueError(
                    f"family_options holds two families labelled {label!r}: pass a dict "
                    "label -> family to tell them apart."
                )
        families[label] = fam
    return families


def _check_range(n_components_range, n_samples, n_families):
    if isinstance(n_components_range, Integral) and not isinstance(n_components_range, bool):
        n_components_range = range(1, int(n_components_range) + 1)
    ends = (n_components_range[0], n_components_range[-1]) if isinstance(n_components_range, range) and len(
        n_components_range) else ()
    if ends and max(ends) > n_samples:
        # Checked before the range is expanded (range(1, 10**9) would not fit in memory).
        raise ValueError(
            f"n_components_range goes up to {max(ends)} but X has {n_samples} rows: a mixture "
            "needs at least one row per component. Give counts up to n_samples."
        )
    limit = MAX_GRID_CELLS // max(1, n_families)
    ks = list(itertools.islice(n_components_range, limit + 1))
    if len(ks) > limit:
        raise ValueError(
            f"n_components_range holds more than {limit} counts ({MAX_GRID_CELLS} grid cells over "
            f"{n_families} families): each is an EM fit; give fewer counts."
        )
    if not ks:
        raise ValueError("n_components_range is empty: give component counts such as range(1, 10).")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
            raise ValueError(f"n_components_range must hold ints >= 1; got {k!r}.")
        if k > n_samples:
            raise ValueError(
                f"n_components_range holds {k} but X has {n_samples} rows: a mixture needs at least one row "
                "per component. Give counts up to n_samples."
            )
    return [int(k) for k in ks]


def _dask_rows_and_variance(X, sample_weight):
    """A dask X row-chunked (persisted once for all the cells when it fits), its float64 weights, the
    weighted variance of every feature (over its observed entries, as :func:`~discrim.utils.validation.weighted_feature_variance`)
    and the total weight."""
    import dask
    import dask.array as da

    X = persist_if_it_fits(row_chunked(X))
    if sample_weight is None:
        w = None
        weights = da.ones(X.shape[0], chunks=(X.chunks[0],))
    else:
        w = weights = align_rows(sample_weight, X, name="sample_weight", dtype=np.float64)
    Xf = X.astype(np.float64)
    observed = ~da.isnan(Xf)
    Xf = da.where(observed, Xf, 0.0)
    entry_weights = weights[:, None] * observed  # (n, d): the weight of each observed entry
    total, feature_total, weighted_sum = dask.compute(weights.sum(), entry_weights.sum(axis=0),
                                                      (entry_weights * Xf).sum(axis=0))
    mean = weighted_sum / feature_total
    feature_var = (entry_weights * (Xf - mean) ** 2).sum(axis=0).compute() / feature_total
    return X, w, feature_var, float(total)


class _Grid:
    """What :func:`~discrim.backend._device.rows_on_device` asks of an estimator: its device."""

    def __init__(self, device):
        self.device = device


def _string_columns(X):
    """The column names of a data frame whose columns are all strings (scikit-learn's rule), else None."""
    columns = getattr(X, "columns", None)
    if columns is None or not all(isinstance(c, str) for c in columns):
        return None
    return np.asarray(list(columns), dtype=object)


def _distinct_on_one_feature(families):
    """The Gaussian models of one feature: mclust's two, "E" and "V" (equal or varying variance).

    On one feature every model with the same volume letter is the same model (shape and
    orientation mean nothing there): of the families labelled with a covariance model's name
    (:func:`gaussian_models`), one of each is kept under mclust's univariate name, as ``Mclust``
    on one column fits and prints "E" and "V". Families labelled otherwise pass unchanged.
    """
    from sklearn.base import clone

    from discrim.distributions import Gaussian
    from discrim.distributions._covariance_models import (
        COVARIANCE_MODELS, SKLEARN_TYPES, UNIVARIATE_TYPES, model_name,
    )

    named = {*COVARIANCE_MODELS, *SKLEARN_TYPES, *UNIVARIATE_TYPES}
    out, seen = {}, set()
    for label, family in families.items():
        if type(family) is Gaussian and label in named and family.covariance_type in named:
            volume = model_name(family.covariance_type)[0]
            options = {name: value for name, value in family.get_params().items() if name != "covariance_type"}
            key = (volume, repr(sorted(options.items())))
            if key in seen:
                continue
            seen.add(key)
            label, family = volume, clone(family).set_params(covariance_type=volume)
        out[label] = family
    return out


def _refuse_invalid_options(families):
    """Raise at once for a Gaussian of an unknown covariance model (a misspelt name: every one of its
    cells would fail, each with a warning). Other invalid options fail their cells, whose rows hold
    NaN: ``gaussian_models(prior="default")`` fits the models that take a prior, as mclust."""
    from discrim.distributions import Gaussian
    from discrim.distributions.gaussian import _COVARIANCE_TYPES

    for label, family in families.items():
        if isinstance(family, Gaussian) and family.covariance_type not in _COVARIANCE_TYPES:
            try:
                family.check_options()
            except ValueError as exc:
                raise ValueError(f"family {label!r}: {exc}") from None


def _hierarchical_starts(X, w, ks, seed):
    """The partitions of one agglomeration at every count of the grid (mclust's ``hclass``), or None.

    Computed once for the grid for complete rows in memory (see
    :func:`~discrim.mixture._init.hierarchical_partitions`); otherwise each cell starts on its own.
    """
    from discrim.mixture._init import hierarchical_partitions

    if not isinstance(X, np.ndarray) or np.isnan(X).any():
        return None
    return hierarchical_partitions(X, w, ks, np.random.default_rng(seed))


def _validated_families(families, k, fit_params, starts):
    """The labels of the families whose mixture parameters (with ``fit_params``) pass validation.

    The cells of a family differ only in ``n_components`` (checked by :func:`_check_range`), the
    seed and the start's partition: one validation of the family's first cell stands for all of
    them, whose fits then skip scikit-learn's validation (a family that fails keeps it, and each
    of its cells reports the error).
    """
    from discrim.mixture import FiniteMixture
    from discrim.utils._param_validation import InvalidParameterError

    if starts is not None:
        fit_params = {**fit_params, "init_params": starts[k]}
    valid = set()
    for label, family in families.items():
        try:
            FiniteMixture(family, n_components=k, random_state=0, **fit_params)._validate_params()
        except (InvalidParameterError, TypeError):
            continue
        valid.add(label)
    return frozenset(valid)


def _fit_cell(index, label, family, k, seed, *, X, w, weighted, total_weight, fit_params, feature_var, starts,
              validated=frozenset(), reg_covar_warned=False):
    """Fit one grid cell and score it; returns (index, row dict, fitted mixture or None)."""
    from contextlib import nullcontext

    from sklearn import config_context

    from discrim.mixture import FiniteMixture

    if starts is not None:  # the partition into k clusters of the one agglomeration of the grid
        fit_params = {**fit_params, "init_params": starts[k]}
    row = dict.fromkeys(_COLUMNS, np.nan)
    row.update(family=label, n_components=k, converged=False, degenerate=False, degenerate_reason="", error="")
    try:
        mixture = FiniteMixture(family, n_components=k, random_state=seed, **fit_params)
        mixture._warn_collapsing = False  # the table's degenerate column judges every cell instead
        mixture._warn_reg_covar = not reg_covar_warned  # select_mixture warned once for all cells
        # parameters validated once for the family's cells (_validated_families)
        with config_context(skip_parameter_validation=True) if label in validated else nullcontext():
            mixture.fit(X, sample_weight=w if weighted else None)
    except (ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"
        return index, row, None
    row.update(_scores(mixture, X.shape, weighted, total_weight, feature_var))
    if starts is not None:
        # the fitted model's parameters say how to fit it again (on any rows), not the grid's partition of X
        mixture.set_params(init_params="hierarchical")
    return index, row, mixture


def _scores(mixture, shape, weighted, total_weight, feature_var, n_iter=None):
    """A fitted cell's entries of the table: likelihood, criteria, and whether it is degenerate.

    Parameters
    ----------
    mixture : FiniteMixture
        Fitted on the grid's rows.
    shape : tuple of int
        ``(n_samples, n_features)`` of X.
    weighted : bool
    total_weight : float
    feature_var : ndarray of shape (n_features,)
    n_iter : int or None, default=None
        The iterations to report (None: the fit's own).

    Returns
    -------
    scores : dict
    """
    k = mixture.n_components
    # The fit's last E-step scored X at the fitted parameters: its mean log-likelihood is
    # lower_bound_, and its mean log-probability of each row's MAP component ICL's penalty for overlap.
    log_lik = mixture.lower_bound_ * total_weight
    log_map = mixture._train_map_log_probability * total_weight
    # the fitted model's count: the family's, the free weights (the noise's included) and V where estimated
    n_params = int(mixture._n_parameters())
    # n is the total weight, so that integer weights score like repeated rows.
    bic = -2.0 * log_lik + n_params * np.log(total_weight if weighted else shape[0])
    aic = -2.0 * log_lik + 2.0 * n_params
    # the k components' weights (with noise, weights_ ends with the noise component's)
    component_weights = np.asarray(mixture.weights_)[:k]
    min_rows = float(np.min(component_weights) * total_weight)
    # The family says what makes its fit degenerate (a Gaussian: too few rows for a covariance,
    # or a covariance collapsed onto tied values); mclust reports such fits as missing.
    occupied = component_weights > 0
    rel = mixture.family_.min_relative_variance(mixture._params, occupied, feature_var)
    # rows counted to the nearest whole row: under EM's soft assignments a component of d + 1 rows
    # holds a little less than d + 1 rows' weight (2.996 of 3), and mclust keeps such fits
    if min_rows < mixture.family_.rows_per_component(shape[1]) - 0.5:
        reason = "too few rows"
    elif rel < SINGULAR_RTOL:
        reason = "singular covariance"
    else:
        reason = ""
    return dict(
        min_rows=min_rows,
        min_rel_variance=rel,
        degenerate=bool(reason),
        degenerate_reason=reason,
        n_parameters=n_params,
        log_likelihood=log_lik,
        bic=float(bic),
        aic=float(aic),
        icl=float(bic - 2.0 * log_map),
        converged=bool(mixture.converged_),
        n_iter=int(mixture.n_iter_) if n_iter is None else n_iter,
    )


def _continued_choice(table, criterion, usable, estimators, X, sample_weight, total_weight, feature_var):
    """The row of the best cell, each candidate with a component sinking towards ``reg_covar``
    first continued by :func:`_continued` (its row of ``table`` updated in place, and its estimator).

    A continued cell that collapses is marked singular and the next best is taken; one that
    converges keeps its place if it is still the best. Only the cells that would be chosen are
    continued: the others of the grid rarely matter, and continuing every cell with a small
    variance doubled wine's grid (13 features, up to 9 components on 178 rows).

    Returns
    -------
    best : int
    """
    scale = _largest_variance(feature_var)
    usable = usable.copy()
    continued = set()
    while True:
        best = int(np.nanargmin(usable))
        mixture = estimators[best]
        if (best in continued or mixture is None or mixture.max_iter == 0
                or not mixture.family_.collapsing_components(mixture._params, scale).size):
            return best
        continued.add(best)
        mixture, more = _continued(mixture, X, sample_weight)
        if more == 0:  # the continuation failed: the fit stays as it was
            return best
        estimators[best] = mixture
        row = _scores(mixture, X.shape, sample_weight is not None, total_weight, feature_var,
                      n_iter=int(table.at[best, "n_iter"]) + more)
        if (not row["degenerate"] and mixture.family_.collapsing_components(mixture._params, scale).size
                and _held_by_the_floor(mixture, X, sample_weight, feature_var)):
            # mclust's unregularised EM takes such a variance to 0 and reports the fit as singular
            row.update(degenerate=True, degenerate_reason="variance at reg_covar")
        for column, value in row.items():
            table.at[best, column] = value
        if row["degenerate"] and np.isfinite(usable).sum() > 1:
            usable[best] = np.nan
        else:
            usable[best] = row[criterion]


def _held_by_the_floor(mixture, X, sample_weight, feature_var):
    """Whether a continued fit's smallest variance is held up by ``reg_covar`` alone.

    Continued again with a floor 100 times lower: a component collapsing onto tied values (29 of
    iris setosa's rows share a petal width) follows the floor down, since its likelihood grows
    without bound, while a genuinely thin cluster (rows near a line) keeps the spread of its data.
    """
    reg_covar = getattr(mixture.family_, "reg_covar", 0.0) or 0.0
    if reg_covar <= 0:
        return False
    lower, more = _continued(mixture, X, sample_weight, reg_covar=reg_covar / 100)
    if more == 0:
        return False

    def smallest(fit):
        return fit.family_.min_relative_variance(fit._params, np.asarray(fit.weights_)[:fit.n_components] > 0,
                                                 feature_var)

    return bool(smallest(lower) < 0.1 * smallest(mixture))


def _largest_variance(feature_var):
    """The largest finite variance of the features: the scale collapse is judged against."""
    return float(feature_var[np.isfinite(feature_var)].max(initial=0.0))


def _continued(mixture, X, sample_weight, **options):
    """A fit with a component sinking towards ``reg_covar``, continued by EM to a tight tolerance.

    EM stopped at ``tol`` can leave a component that is only starting to collapse: on tied or
    rounded data its likelihood creeps up by less than ``tol`` per iteration at first, then
    accelerates as its variance sinks onto the tied values (on a 3 x 3 integer grid, EVV with 4
    components stopped after 2 iterations at a mean log-likelihood of -0.96; continued, it reached
    +3.87, singular). mclust's EM goes on to its tolerance and reports such fits as singular.
    Continued from its parameters to ``CONTINUE_TOL``, the fit either converges where it is (a
    genuinely thin cluster) or collapses, and the singularity test judges it.

    Parameters
    ----------
    mixture : FiniteMixture
        Fitted; left unchanged.
    X : array
    sample_weight : ndarray or None
    **options
        Further parameters of the continued copy (``reg_covar``).

    Returns
    -------
    mixture : FiniteMixture
        The continued fit (with the caller's ``tol``, ``max_iter`` and ``warm_start`` set back),
        or ``mixture`` where the continuation failed.
    n_iter : int
        The iterations the continuation ran.
    """
    import copy

    from sklearn.exceptions import ConvergenceWarning

    kept = {name: getattr(mixture, name) for name in ("tol", "max_iter", "warm_start")}
    continued = copy.deepcopy(mixture).set_params(tol=CONTINUE_TOL, max_iter=CONTINUE_MAX_ITER, warm_start=True,
                                                  **options)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # the table's converged column says so
            continued.fit(X, sample_weight=sample_weight)
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        return mixture, 0
    return continued.set_params(**kept), int(continued.n_iter_)


def select_mixture(
    X: ArrayLike,
    family_options: Any,
    n_components_range: int | Iterable[int],
    *,
    criterion: str = "bic",
    sample_weight: ArrayLike | None = None,
    random_state: RandomStateLike = None,
    n_jobs: int | None = None,
    device: Device = None,
    **fit_params: Any,
) -> MixtureSelection:
    """Fit a finite mixture for every family and component count and rank them by BIC, AIC or ICL.

    This is the model choice that R's ``mclust`` offers (``Mclust(X, G=1:9)``): each cell of the
    grid ``family_options x n_components_range`` is fitted by EM, and the table of
    log-likelihoods, parameter counts and information criteria is returned with the best model.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    family_options : ComponentFamily, list of ComponentFamily or dict of str -> ComponentFamily
        The families to compare. With a list the labels name the family and all its options
        (``"Gaussian(covariance_type='diag')"``); a dict gives the labels, for example mclust's names for the Gaussian covariance models::

            {"VVV": Gaussian(covariance_type="full"), "VVI": Gaussian(covariance_type="diag"),
             "EEE": Gaussian(covariance_type="tied"), "VII": Gaussian(covariance_type="spherical")}

    n_components_range : int or iterable of int
        Component counts to try; an int ``G`` means ``1, ..., G``.
    criterion : {"bic", "aic", "icl"}, default="bic"
        Criterion that picks the best model (the smallest value wins). "icl" is BIC minus twice
        the summed log-probability of each row's MAP component (:meth:`FiniteMixture.icl`),
        mclust's ICL with the sign turned: it prefers well-separated components.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights passed to every fit. The log-likelihood in the table is weighted and the
        :math:`n` of BIC is the total weight, so integer weights act as repeated rows (from the
        same starts: the "hierarchical" start agglomerates each row of positive weight once).
    random_state : int, RandomState instance or None, default=None
        Each grid cell gets its own independent stream spawned from it, so the result does not
        depend on ``n_jobs``.
    n_jobs : int or None, default=None
        Number of parallel fits (joblib); ``None`` means 1 unless in a joblib context, -1 all
        cores. A Dask cluster is reached with ``joblib.parallel_backend("dask")``.
    device : str, torch.device or None, default=None
        Where every fit computes (:class:`~discrim.mixture.FiniteMixture`'s ``device``): None
        with numpy, or for a torch tensor X on X's device; "cpu", "cuda", ... with torch there.
        X goes to the device once for the whole grid, whose cells then run one after another.
    **fit_params
        Further :class:`~discrim.mixture.FiniteMixture` parameters for every fit, such as
        ``n_init``, ``max_iter``, ``tol``, ``reg_covar`` or ``init_params``. With
        ``init_params="hierarchical"`` (mclust's start) one agglomeration gives every cell's
        start, as mclust's ``hclass`` does (with a ``noise`` component each cell agglomerates the
        rows that do not start as noise, as a single fit does).

    Returns
    -------
    result : MixtureSelection
        ``result.table`` (pandas DataFrame), ``result.best_params``, ``result.best_estimator``
        and ``result.to_markdown()``.

    Warns
    -----
    FitFailedWarning
        When a cell cannot be fitted (for example more components than distinct rows); its row
        holds NaN and the error message, and it is never chosen.
    CollapsingComponentWarning
        When every fitted model is degenerate (column ``degenerate``), so that the choice is made
        among them anyway, or when the selected model collapses as EM runs on.

    Raises
    ------
    ValueError
        Before any fit, when a component count exceeds the number of rows or the grid has more
        than ``MAX_GRID_CELLS`` (10,000) cells.

    Notes
    -----
    With :math:`\\ell` the (weighted) maximised log-likelihood, :math:`p` the number of free
    parameters and :math:`n` the number of rows,

    .. math:: \\mathrm{BIC} = -2\\ell + p \\log n, \\qquad \\mathrm{AIC} = -2\\ell + 2p,

    the scikit-learn convention, where lower is better. mclust reports
    :math:`2\\ell - p \\log n`, the negative, and picks the largest: the ranking is the same.

    A Gaussian component fitted to fewer rows than its covariance needs (``d + 1`` for a full
    covariance, 2 for a diagonal or spherical one; its weight counted to the nearest row, since
    under EM's soft assignments a component of ``d + 1`` rows holds a little less than that weight,
    and mclust keeps it) is singular but for ``reg_covar``, and its
    likelihood grows without bound as it collapses onto those rows. So does a component that
    collapses onto rows sharing a value in some direction (tied or rounded data): its covariance
    less ``reg_covar`` has an eigenvalue below ``SINGULAR_RTOL`` (1e-8) times the features'
    variance (column ``min_rel_variance``). Both are marked ``degenerate`` with the reason and
    never chosen, as mclust reports singular fits as missing. EM stopped at ``tol`` can leave a
    component only starting to collapse (on tied data its likelihood creeps up by less than ``tol``
    per iteration at first): a cell about to be chosen with a variance near ``reg_covar`` is first
    continued to a tolerance of 1e-10, as mclust's EM would go on, and passed over if it collapses.

    mclust's 14 covariance models are ``Gaussian(covariance_type=name)`` with mclust's names
    ("EII", ..., "VVV"); :func:`gaussian_models` gives them as a dict labelled by name, so
    ``select_mixture(X, gaussian_models(), range(1, 10))`` is ``Mclust(X, G=1:9)``, and
    :meth:`MixtureSelection.criterion_table` and :meth:`MixtureSelection.summary` print
    ``mclustBIC``'s table and summary. scikit-learn's four covariance types are the models
    "VVV" ("full"), "EEE" ("tied"), "VVI" ("diag") and "VII" ("spherical").

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Gaussian
    >>> from discrim.mixture import select_mixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-5, 1, (100, 1)), rng.normal(5, 1, (100, 1))])
    >>> result = select_mixture(X, {"V": Gaussian(covariance_type="full")}, range(1, 4),
    ...                         random_state=0)
    >>> result.best_params
    {'family': 'V', 'n_components': 2}
    """
    import pandas as pd
    from sklearn.utils import check_array

    if criterion not in ("bic", "aic", "icl"):
        raise ValueError(f"criterion must be 'bic', 'aic' or 'icl'; got {criterion!r}.")
    clash = sorted({"family", "n_components"} & set(fit_params))
    if clash:
        raise TypeError(
            f"select_mixture got {clash} as fit parameters: pass families in family_options and "
            "component counts in n_components_range."
        )
    families = _check_family_options(family_options)
    check_n_jobs(n_jobs)
    names = None
    if is_dask(X):
        refuse_device(device)
        # Each fit's E-steps run on the cluster already: the cells go one after another.
        X, w, feature_var, total_weight = _dask_rows_and_variance(X, sample_weight)
        n_jobs = 1
    else:
        names = _string_columns(X)
        X = rows_on_device(_Grid(device), X, lambda X: check_feature_magnitude(
            check_array(check_mixture_table(X), dtype=[np.float64, np.float32], ensure_all_finite="allow-nan")),
            reset=True, dtype=None)
        w = check_sample_weight(sample_weight, X.shape[0])
        total_weight = float(w.sum())
        feature_var = weighted_feature_variance(X, w)
        if is_tensor(X):
            n_jobs = 1  # one device: the cells take turns on it
    fit_params = {**fit_params, "device": device}
    if X.shape[1] == 1:
        families = _distinct_on_one_feature(families)
    _refuse_invalid_options(families)
    _warn_if_mixed_measures(families)
    warned = not is_dask(X)  # a dask X's cells warn themselves (its variances are computed there)
    if warned:
        _warn_reg_covar_once(families, fit_params, X, w)
    ks = _check_range(n_components_range, X.shape[0], len(families))

    cells = [(label, fam, k) for label, fam in families.items() for k in ks]
    # one stream per cell, and the last for the rows a hierarchical start agglomerates
    streams = as_seed_sequence(random_state).spawn(len(cells) + 1)
    seeds = [int(s.generate_state(1)[0]) for s in streams[:-1]]
    # The cells through discrim's parallel layer: in a worker, each fit's E-step threads follow
    # the worker's share of the cores (FiniteMixture's n_threads=None), so nothing oversubscribes.
    # with a noise component each fit agglomerates its own rows: those that start as noise take no
    # part in the components' start (FiniteMixture's rule), so one shared agglomeration would differ
    noise = fit_params.get("noise") not in (None, False)
    starts = (_hierarchical_starts(X, w, ks, streams[-1])
              if fit_params.get("init_params") == "hierarchical" and not noise else None)
    shared = dict(X=X, w=w, weighted=sample_weight is not None, total_weight=total_weight, fit_params=fit_params,
                  feature_var=feature_var, starts=starts, reg_covar_warned=warned,
                  validated=_validated_families(families, ks[0], fit_params, starts))
    tasks = [(i, label, fam, k, seed) for i, ((label, fam, k), seed) in enumerate(zip(cells, seeds))]
    out = sorted(run_unordered(_fit_cell, tasks, n_jobs, shared=shared), key=lambda result: result[0])
    rows = [row for _, row, _ in out]
    estimators = [m for _, _, m in out]
    for row in rows:
        if row["error"]:
            warnings.warn(
                f"select_mixture: family {row['family']!r} with n_components={row['n_components']} "
                f"failed ({row['error']}); its row holds NaN.",
                FitFailedWarning,
                stacklevel=2,
            )
    table = pd.DataFrame(rows, columns=[*_COLUMNS, "error"])
    table["n_components"] = table["n_components"].astype(int)
    table["degenerate"] = table["degenerate"].astype(bool)
    scores = table[criterion].to_numpy(dtype=float)
    if np.all(np.isnan(scores)):
        errors = list(dict.fromkeys(row["error"] for row in rows))
        if len(errors) == 1:  # the same for every count and family: the data, not the fits, are at fault
            raise ValueError(f"every fit in the grid failed with the same error: {errors[0]}")
        raise ValueError(
            f"every fit in the grid failed; first error: {errors[0].rstrip('.')}. Try fewer components or a "
            "larger reg_covar."
        )
    usable = np.where(table["degenerate"].to_numpy(), np.nan, scores)
    if np.all(np.isnan(usable)):
        warnings.warn(
            "select_mixture: every fitted model has a component with too few rows or a singular "
            "covariance (column 'degenerate'); choosing among them anyway. Try fewer components "
            "or a larger reg_covar.",
            CollapsingComponentWarning,  # every fit succeeded: FitFailedWarning is for cells that failed
            stacklevel=user_stacklevel(),
        )
        usable = scores
    best = _continued_choice(table, criterion, usable, estimators, X, w if sample_weight is not None else None,
                             total_weight, feature_var)
    chosen = estimators[best]
    # judged as the continuation judged it (against the features' variance too)
    collapsing = (chosen.family_.collapsing_components(chosen._params, _largest_variance(feature_var))
                  if chosen is not None else np.zeros(0))
    if collapsing.size:
        # mclust excludes singular fits only (as the 'degenerate' column does); a variance near
        # reg_covar is a fit FiniteMixture warns about, so the choice says so too
        warnings.warn(
            f"select_mixture: the selected model ({rows[best]['family']}, {rows[best]['n_components']} components) "
            f"has collapsing component(s) {collapsing.tolist()}: a variance has sunk to near reg_covar, where the "
            "likelihood grows without bound and the density means nothing along it. Compare the next models in "
            "the table, or refit with a larger reg_covar or a constrained covariance model.",
            CollapsingComponentWarning, stacklevel=user_stacklevel())
    if names is not None:  # the cells saw an array: the fitted mixtures keep the frame's column names
        for estimator in estimators:
            if estimator is not None:
                estimator.feature_names_in_ = names
    return MixtureSelection(
        table=table,
        criterion=criterion,
        best_index=best,
        best_params={"family": rows[best]["family"], "n_components": rows[best]["n_components"]},
        best_estimator=estimators[best],
        families=families,
        estimators=estimators,
    )
