"""Mixture discriminant analysis: one finite mixture per class, decided by the ML or Bayes rule."""

from __future__ import annotations

import dataclasses
import warnings
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from discrim._typing import ArrayLike, Device, RandomStateLike
from discrim.backend import ops, to_numpy
from discrim.backend._device import is_tensor
from discrim.base import BaseLikelihoodClassifier
from discrim.discriminant._validation import validate_training_data
from discrim.exceptions import CollapsingComponentWarning, DataScaleWarning
from discrim._posterior import listed_indices
from discrim.mixture.finite_mixture import _INIT_SAMPLE_ROWS, MAX_N_INIT, reg_covar_findings_collected
from discrim.utils._dask import (
    align_rows,
    class_rows,
    gather_sample,
    is_dask,
    label_counts_per_chunk,
    labelled_statistics,
    validated_rows,
    weight_totals,
    weighted_total,
)
from discrim.utils import _fitted_state as state
from discrim.utils._param_validation import HasMethods, Interval, StrOptions, fit_context
from discrim.utils._random import as_seed_sequence
from discrim.utils._warnings import user_stacklevel
from discrim.utils.validation import (
    check_class_totals,
    check_classes_observed,
    check_labels,
    check_no_missing_labels,
    check_no_unlabelled_marker,
    class_index,
    is_labelled_series,
    plain_label,
    plain_known_labels,
    unlabelled_rows,
)

if TYPE_CHECKING:
    from discrim.discriminant._summary import DiscriminantSummary
    from discrim.distributions import ComponentFamily


def _as_counts(value, name):
    """An int or a sequence of ints >= 1 as a sorted list of distinct ints."""
    values = [value] if isinstance(value, Integral) or np.ndim(value) == 0 else list(value)
    if not values or any(isinstance(v, bool) or not isinstance(v, Integral) or v < 1 for v in values):
        raise ValueError(
            f"{name} must be an int >= 1 or a non-empty list of such ints (to choose by BIC); got {value!r}."
        )
    return sorted({int(v) for v in values})


def _n_distinct_rows(X, needed):
    """Distinct rows of X, counted exactly when there are fewer than ``needed``.

    The first ``4 * needed`` rows usually settle it, which spares sorting every row.
    """
    head = np.unique(X[: 4 * needed], axis=0).shape[0]
    if head >= needed or X.shape[0] <= 4 * needed:
        return head
    return np.unique(X, axis=0).shape[0]


def _selection_state(selection):
    """A :class:`~discrim.mixture.MixtureSelection` as plain containers that skops saves.

    skops cannot save a pandas table (pandas objects have no default ``__reduce__``), so the
    table is kept column by column: numeric and boolean columns as ndarrays, text columns (the
    family labels and the error messages) as lists of str. Every other field is kept as it is.

    Parameters
    ----------
    selection : MixtureSelection

    Returns
    -------
    state : dict
        Field name -> value, the table as ``{"columns": [...], "values": {column: values}}``;
        :func:`_selection_from_state` rebuilds ``selection`` from it.
    """
    state = {f.name: getattr(selection, f.name) for f in dataclasses.fields(selection)}
    table = state.pop("table")
    numeric = {name for name in table.columns if table[name].dtype.kind in "biuf"}
    values = {name: table[name].to_numpy() if name in numeric else table[name].tolist() for name in table.columns}
    state["table"] = {"columns": list(table.columns), "values": values}
    return state


def _selection_from_state(state):
    """The :class:`~discrim.mixture.MixtureSelection` saved by :func:`_selection_state`.

    Containers are copied, so that changing a returned selection leaves the fitted model as it was.
    """
    import pandas as pd

    from discrim.mixture._selection import MixtureSelection

    fields = {name: type(value)(value) if isinstance(value, (dict, list)) else value
              for name, value in state.items() if name != "table"}
    columns = state["table"]["columns"]
    table = pd.DataFrame({name: state["table"]["values"][name] for name in columns}, columns=columns)
    return MixtureSelection(table=table, **fields)


def _best_in_each_family(selections, options):
    """Each class's best mixture within every family that fits all classes, with the summed criterion.

    Parameters
    ----------
    selections : list of MixtureSelection
        One per class, each over the grid ``options x`` the class's component counts.
    options : dict of str -> ComponentFamily

    Returns
    -------
    candidates : dict of str -> (float, list of FiniteMixture)
        By family label: the criterion (BIC) of the classes' best fits summed over the classes,
        and those fits, in class order.
    """
    best = []  # per class: family label -> (criterion, row)
    for selection in selections:
        table = selection.table
        usable = (table["error"] == "") & ~table["degenerate"].astype(bool)
        by_label = {}
        for row in np.flatnonzero(usable.to_numpy()):
            label, value = table["family"].iloc[row], float(table[selection.criterion].iloc[row])
            if label not in by_label or value < by_label[label][0]:
                by_label[label] = (value, row)
        best.append(by_label)
    common = [label for label in options if all(label in b for b in best)]
    if not common:
        raise ValueError("common_family=True: no family could be fitted to every class; pass other families.")
    return {label: (sum(b[label][0] for b in best), [s.estimators[b[label][1]] for s, b in zip(selections, best)])
            for label in common}


def joint_family(family, sizes, n_features):
    """The family of all classes' components as one mixture: what a :class:`Fixed` fixes in each class, in every class.

    A Fixed family's ``components`` number the components of one class (each class's mixture fixes
    its own component 0); in the joint mixture the classes' components follow one another, so the
    joint family fixes those components of every class, with the same values. It fixed them of the
    first class only: the joint fit estimated the others freely, and the class mixtures cut out of it
    then held their fixed entries beside parameters fitted without them.

    Parameters
    ----------
    family : ComponentFamily
    sizes : list of int
        The component count of every class, in class order.
    n_features : int

    Returns
    -------
    family : ComponentFamily
        ``family`` itself where nothing is fixed by component.
    """
    from discrim.distributions import Fixed, Product

    if isinstance(family, Product):
        parts = family._parts()
        inner = [joint_family(part, sizes, cols.shape[0]) for _, part, cols in parts]
        if all(a is b for a, b in zip(inner, (p[1] for p in parts))):
            return family
        return Product([(name, part, cols.tolist()) for (name, _, cols), part in zip(parts, inner)])
    if not isinstance(family, Fixed):
        return family
    inner = joint_family(family.family, sizes, n_features)
    if family.components is None:
        return family if inner is family.family else Fixed(inner, family.params)
    comps = [int(c) for c in family.components]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    shared = set(family.family.shared_params())
    shapes = family.family.param_shapes(1, n_features)
    params = {}
    for name, value in family.params.items():
        array = np.asarray(value, dtype=np.float64)
        if name in shapes and name not in shared and array.ndim == len(shapes[name]) and array.shape[0] == len(comps) > 1:
            value = np.concatenate([array] * len(sizes))  # a value per fixed component: the same in every class
        params[name] = value
    return Fixed(inner, params, [int(o) + c for o in offsets for c in comps])


def joint_fit_numbers(mixtures, class_data, proportions):
    """The log-likelihood and parameter count of class densities as one mixture (mclust's EDDA).

    ``l = sum_i w_i log sum_k pi_k f_k(x_i)`` over the labelled rows, with ``pi_k`` the classes'
    proportions: the log-likelihood of the classes' densities as one mixture, as mclust's
    ``MclustDA`` reports it. ``p`` counts the family's parameters of all components together (a
    shared parameter once) and each class's mixing weights, not the class proportions.

    Parameters
    ----------
    mixtures : list of FiniteMixture
        The class densities, in class order.
    class_data : list of (X_k, w_k)
        Each class's rows and weights (in memory or dask).
    proportions : ndarray of shape (n_classes,)
        0 for a class without rows (or weight) among ``class_data``: its rows add nothing.

    Returns
    -------
    log_likelihood : float
    n_parameters : int
    total_weight : float
    """
    from scipy.special import logsumexp

    log_lik, total = 0.0, 0.0
    with np.errstate(divide="ignore"):  # a class of proportion 0 adds nothing to any row's density
        log_prop = np.log(proportions)
    for (X_k, w_k), share in zip(class_data, proportions):
        if share == 0:  # a class without rows or weight (a summary of test rows): nothing to add
            continue
        joint = np.column_stack([to_numpy(m.score_samples(X_k)) for m in mixtures]) + log_prop
        value, weight = weighted_total(logsumexp(joint, axis=1), w_k)
        log_lik, total = log_lik + value, total + weight
    sizes = [m.n_components for m in mixtures]
    d = mixtures[0].n_features_in_
    family = joint_family(mixtures[0].family_, sizes, d)
    n_params = family.n_parameters(d, sum(sizes)) + sum(r - 1 for r in sizes)
    return float(log_lik), int(n_params), float(total)


def _joint_bic(mixtures, class_data, proportions):
    """mclust's BIC of class densities fitted jointly (EDDA): ``-2 l + p log n`` (:func:`joint_fit_numbers`)."""
    log_lik, n_params, total = joint_fit_numbers(mixtures, class_data, proportions)
    return float(-2.0 * log_lik + n_params * np.log(total))


class MixtureDiscriminant(BaseLikelihoodClassifier):
    """Mixture discriminant analysis (MDA): a finite mixture fitted by EM for each class.

    Each class density ``f_k`` is a :class:`~discrim.mixture.FiniteMixture` of ``family``
    components fitted by EM to the rows of that class; a new row is allocated by the
    maximum-likelihood rule (``priors="equal"``) or the Bayes rule (other priors), through the
    same code as every discriminant rule in discrim (:class:`discrim.base.BaseLikelihoodClassifier`).

    Parameters
    ----------
    family : ComponentFamily, dict of str -> ComponentFamily or list of ComponentFamily
        The distribution of every mixture component, for example
        ``Gaussian(covariance_type="full")``, ``Poisson()`` or ``Binomial(n_trials=10)``. Several
        candidates (a dict labels them, e.g. mclust's covariance models ``{"VVV":
        Gaussian("full"), "VVI": Gaussian("diag"), ...}``): each class's family and count are
        chosen together by BIC, as mclust's ``MclustDA`` does (see ``common_family``).
    n_components : int, list of int or dict, default=2
        Number of mixture components per class: one int for all classes; a list (or range) of
        candidate counts, from which each class's count is chosen by BIC (as mclust's
        ``MclustDA`` does); or a dict (or a pandas Series indexed by the labels) mapping every
        class label to its own int or list. A class needs at least as many distinct rows (with
        positive weight) as components; candidates above that are skipped.
    priors : {"equal", "empirical"} or array-like of shape (n_classes,), default="equal"
        "equal" gives the maximum-likelihood rule; "empirical" the (sample-weighted) class
        frequencies; an array the Bayes rule with those priors, in the order of ``classes_`` (a
        pandas Series indexed by the labels is read by label).
    init_params : str, default="kmeans++"
        Initialisation of each class's EM run, passed to :class:`~discrim.mixture.FiniteMixture`.
    n_init : int, default=1
        Number of EM restarts per class (at most ``MAX_N_INIT``, 10,000); the run with the highest
        likelihood is kept.
    max_iter : int, default=100
        Maximum number of EM iterations per run (0: the initialisation's parameters).
    tol : float, default=1e-3
        EM stops when the mean weighted log-likelihood improves by less than ``tol``.
    reg_covar : float or None, default=None
        Added to the diagonal of Gaussian covariances: a float sets the family's ``reg_covar``
        option (ignored by families without one); None keeps the family's own (1e-6 for
        :class:`~discrim.distributions.Gaussian`).
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the EM initialisation. Each class gets its own independent stream spawned from it.
    device : str, torch.device or None, default=None
        Where each class's EM and the class densities run (see
        :class:`~discrim.mixture.FiniteMixture`): None with numpy on the host (or, for a torch
        tensor X, with torch on X's device); "cpu", "cuda", ... with torch there. Fitted
        attributes are numpy on the host; prediction methods return in the namespace and on the
        device of their input.
    unlabeled : scalar or None, default=None
        The label that marks an unlabelled row of ``y`` (NaN marks one too), e.g. -1: the fit is
        then semi-supervised, by EM over the unlabelled rows. None: every row is labelled and
        every label is a class, except that -1 beside the class 0 (scikit-learn's mark of an
        unlabelled row) is refused with an error that names this parameter; -1 and 1 alone (the
        +-1 encoding of two classes) are classes.
    joint : bool, default=False
        After the class fits, refine all classes' mixtures in one EM over all rows, each row's
        class fixed (:class:`~discrim.mixture.FiniteMixture` with ``component_labels``): what a
        family shares across components is then shared across classes. With
        ``Gaussian("tied")`` every subclass of every class has one covariance: Hastie and
        Tibshirani's (1996) mixture discriminant analysis. Unlabelled rows always take this path.
    common_family : bool, default=False
        With several candidate families: one family for all classes. Without ``joint``, the one
        whose best BIC summed over the classes is lowest (each class keeps its own parameters
        and its best count in that family). With ``joint=True`` each candidate is fitted jointly
        and the one with the lowest BIC of the joint model wins, so that what a family shares
        across components (EEE's covariance, VEV's shape, EII's volume, ...) is shared across
        classes when it is judged: with one component per class and mclust's 14 covariance
        models this is mclust's EDDA (``MclustDA(modelType = "EDDA")``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, sorted.
    priors_ : ndarray of shape (n_classes,)
        Prior probabilities used by the rule.
    n_components_ : ndarray of shape (n_classes,) of int
        Number of components of each class's mixture (the chosen one where several were given).
    mixtures_ : list of FiniteMixture of length n_classes
        The fitted class densities, in the order of ``classes_``.
    selections_ : list of (MixtureSelection or None) of length n_classes
        The BIC table of each class whose count was chosen from several candidates (see
        :func:`discrim.mixture.select_mixture`); None where the count was fixed. Built on each
        access from plain arrays and lists kept by the fitted model, so that the model can be
        saved (skops cannot save the pandas table itself).
    family_bic_ : dict of str -> float or None
        With several candidate families, ``common_family=True`` and a joint fit (``joint=True``
        or unlabelled rows): the BIC of the joint model of each candidate, lowest chosen, as
        mclust's EDDA computes it: ``-2 sum_i w_i log sum_k pi_k f_k(x_i) + p log n`` over the
        labelled rows, ``pi_k`` the class proportions and ``p`` the free parameters of the class
        densities (not the class proportions); None otherwise.
    n_iter_ : ndarray of shape (n_classes,) of int
        EM iterations of each class's kept run.
    converged_ : bool
        Whether EM converged for every class.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, defined only when X has string column names.

    See Also
    --------
    discrim.mixture.FiniteMixture : the class density fitted here.
    discrim.discriminant.QuadraticDiscriminant : the one-component Gaussian case (with
        unbiased rather than maximum-likelihood covariances).

    Notes
    -----
    The class-conditional density of class :math:`k` is

    .. math:: f_k(x) = \\sum_{r=1}^{R_k} \\lambda_{kr}\\, p(x \\mid \\theta_{kr}),

    fitted by EM on the rows with :math:`y_i = k` (weights ``sample_weight``). The rule allocates
    :math:`x` to :math:`\\arg\\max_k \\pi_k f_k(x)` and the posterior is
    :math:`\\pi_k f_k(x) / \\sum_j \\pi_j f_j(x)`, computed in log space.

    ========================  ==========================================
    symbol                    parameter / attribute
    ========================  ==========================================
    :math:`R_k`               ``n_components`` (``n_components_[k]``)
    :math:`\\lambda_{kr}`      ``mixtures_[k].weights_[r]``
    :math:`\\theta_{kr}`       ``mixtures_[k].params_`` (component ``r``)
    :math:`\\pi_k`             ``priors`` (``priors_[k]``)
    ========================  ==========================================

    With one component per class and a full-covariance Gaussian family this is the quadratic
    rule with maximum-likelihood (divisor :math:`n_k`) class covariances. Hastie and Tibshirani's
    original MDA shares one covariance across all subclasses of all classes: that is
    ``Gaussian("tied")`` with ``joint=True``. Without ``joint`` each class's mixture is fitted
    independently (as in mclust's ``MclustDA``), and ``Gaussian("tied")`` shares a covariance
    within a class only.
    A Binomial family needs one ``n_trials`` for all rows here (per-row trial counts belong to
    the rows of one data set and cannot follow the split into classes).

    References
    ----------
    Hastie, T. and Tibshirani, R. (1996). Discriminant analysis by Gaussian mixtures. JRSS B 58.

    Fraley, C. and Raftery, A. E. (2002). Model-based clustering, discriminant analysis, and
    density estimation. JASA 97.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.discriminant import MixtureDiscriminant
    >>> from discrim.distributions import Gaussian
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-3, 1, (50, 2)), rng.normal(3, 1, (50, 2))])
    >>> y = np.repeat([0, 1], 50)
    >>> mda = MixtureDiscriminant(Gaussian(covariance_type="full"), n_components=1).fit(X, y)
    >>> mda.predict([[-3.0, -3.0], [3.0, 3.0]])
    array([0, 1])
    """

    _parameter_constraints = {
        "family": [HasMethods(["log_prob", "n_parameters"]), dict, list],
        "n_components": [Interval(Integral, 1, None, closed="left"), dict, "array-like"],
        "priors": [StrOptions({"equal", "empirical"}), "array-like"],
        "init_params": [str],
        "n_init": [Interval(Integral, 1, MAX_N_INIT, closed="both")],  # FiniteMixture's bounds: passed to it
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "reg_covar": [Interval(Real, 0, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator],
        "device": "no_validation",  # check_device names what is wrong, in fit and predict
        "unlabeled": "no_validation",  # any label value, or None
        "joint": ["boolean"],
        "common_family": ["boolean"],
    }

    def __init__(
        self,
        family: ComponentFamily | dict[Any, ComponentFamily] | list[ComponentFamily],
        n_components: int | list[int] | dict[Any, int] = 2,
        *,
        priors: str | ArrayLike = "equal",
        init_params: str = "kmeans++",
        n_init: int = 1,
        max_iter: int = 100,
        tol: float = 1e-3,
        reg_covar: float | None = None,
        random_state: RandomStateLike = None,
        device: Device = None,
        unlabeled: Any = None,
        joint: bool = False,
        common_family: bool = False,
    ) -> None:
        self.family = family
        self.n_components = n_components
        self.priors = priors
        self.init_params = init_params
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.reg_covar = reg_covar
        self.random_state = random_state
        self.device = device
        self.unlabeled = unlabeled
        self.joint = joint
        self.common_family = common_family

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit one mixture per class by EM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, passed to each class's EM run; integer weights act as repeated rows.

        Returns
        -------
        self : MixtureDiscriminant
        """
        from discrim.mixture import FiniteMixture, select_mixture  # lazy: keeps the import cheap

        if is_dask(X):
            classes, totals, class_data, y_idx, w, unlabelled = self._dask_classes(X, y, sample_weight)
        else:
            X, y = validate_training_data(self, X, y, keep_float32=True, allow_nan=True)
            if is_tensor(X) and ops.any_nan(X):  # the class mixtures' EM of missing values is host code
                raise ValueError(
                    "X has missing values (NaN), which MixtureDiscriminant fits on the host (numpy) path only: "
                    "fit with device=None, or impute them first."
                )
            classes, y_idx, w, totals = self._prepare_targets(y, sample_weight, X.shape[0])
            class_data = [(ops.take_rows(X, np.flatnonzero(y_idx == k)), w[y_idx == k])
                          for k in range(classes.shape[0])]
            unlabelled = bool(np.any(y_idx < 0))
            if isinstance(X, np.ndarray):  # rows on a device hold no NaN (refused before they cross)
                check_classes_observed(X, y_idx, w, [repr(plain_label(label)) for label in classes],
                                       getattr(self, "feature_names_in_", None))
        candidates = self._check_n_components(classes, class_data)
        priors = self._resolve_priors(totals, classes)

        # One independent stream per class; FiniteMixture takes an int seed.
        seeds = [int(s.generate_state(1)[0]) for s in as_seed_sequence(self.random_state).spawn(len(classes))]
        em = dict(init_params=self.init_params, n_init=self.n_init, max_iter=self.max_iter, tol=self.tol,
                  reg_covar=self.reg_covar, device=self.device)
        options = self._family_options()
        if (unlabelled or self.joint) and len(options) > 1 and not self.common_family:
            raise ValueError(
                "joint=True and unlabelled rows fit all classes in one EM, which needs one family; family has "
                f"{len(options)} candidates: pass one family, or common_family=True."
            )
        mixtures, selections, findings = [], [], []
        for k, (X_k, w_k) in enumerate(class_data):
            # a feature of little or no variance within a class is said once for all classes, naming
            # them (below), not per class about "X" (whose feature may well vary)
            with reg_covar_findings_collected() as found:
                if len(candidates[k]) == 1 and len(options) == 1:
                    mixture = FiniteMixture(next(iter(options.values())), n_components=candidates[k][0],
                                            random_state=seeds[k], **em)
                    mixture._warn_collapsing = False  # said once for all classes, naming them (below)
                    # with unlabelled rows (or joint) the class fits are the start: the joint EM, over
                    # all rows, says which features no row observes together
                    mixture._warn_unobserved_pairs = not (unlabelled or self.joint)
                    mixtures.append(mixture.fit(X_k, sample_weight=w_k))
                    selections.append(None)
                else:  # mclust's MclustDA: each class's family and number of components chosen by BIC
                    with warnings.catch_warnings():
                        # said once for all classes, naming them (below), not per class for "the selected
                        # model" (the cells' own fits do not warn of collapse inside select_mixture)
                        warnings.simplefilter("ignore", CollapsingComponentWarning)
                        if unlabelled or self.joint:  # as above: the joint EM says it
                            warnings.filterwarnings("ignore", message=r".* are never observed together")
                        selection = select_mixture(X_k, options, candidates[k],
                                                   sample_weight=w_k if sample_weight is not None else None,
                                                   random_state=seeds[k], **em)
                    mixtures.append(selection.best_estimator)
                    selections.append(selection)
            findings.append(found)
        self._warn_if_reg_covar_dominates(classes, findings)
        candidates = None
        if self.common_family and len(options) > 1:
            candidates = _best_in_each_family(selections, options)
            if not (unlabelled or self.joint):
                mixtures = min(candidates.values(), key=lambda c: c[0])[1]

        joint = None
        self.family_bic_ = None
        if (unlabelled or self.joint) and candidates is not None:
            # EDDA: every candidate fitted jointly, judged by the BIC of the joint model
            fits = {label: self._joint_fit(X, y_idx, w, per_class, priors, class_data, totals)
                    for label, (_, per_class) in candidates.items()}
            proportions = totals / totals.sum()
            self.family_bic_ = {label: _joint_bic(fit[0], class_data, proportions) for label, fit in fits.items()}
            mixtures, priors, joint = fits[min(self.family_bic_, key=self.family_bic_.get)]
        elif unlabelled or self.joint:  # one EM over all classes' components, from the class fits
            mixtures, priors, joint = self._joint_fit(X, y_idx, w, mixtures, priors, class_data, totals)

        candidates_fitted = [e for s in selections if s is not None for e in [s.best_estimator, *(s.estimators or [])]]
        for m in [*mixtures, *candidates_fitted]:
            # fitted, the class densities (and the BIC tables' fits, selections_) compute where this
            # model's predict puts the rows (its own device; with device=None, numpy rows on the host
            # and a tensor on its device), so that set_params(device=...) moves the whole model and a
            # saved one runs on machines without that device
            m.set_params(device=None)
        self.classes_ = classes
        self.priors_ = priors
        self.n_components_ = np.array([m.n_components for m in mixtures])
        self.mixtures_ = mixtures
        self._selections = [None if s is None else _selection_state(s) for s in selections]
        self.n_iter_ = np.array([m.n_iter_ if joint is None else joint.n_iter_ for m in mixtures])
        self.converged_ = bool(all(m.converged_ for m in mixtures)) if joint is None else bool(joint.converged_)
        self._fitted_jointly = joint is not None  # joint=True or unlabelled rows: the summary's EDDA count
        # a class's variances are small beside the data's (a one-row class has only reg_covar)
        scale = float(np.nanmax(np.nanvar(X, axis=0), initial=0.0)) if isinstance(X, np.ndarray) else None
        self._warn_if_collapsing(scale)
        return self

    @staticmethod
    def _warn_if_reg_covar_dominates(classes, findings):
        """One warning for the features constant within some classes and one for those of a variance
        small beside reg_covar, naming the classes (``findings``: each class's list of
        :class:`~discrim.mixture.finite_mixture.RegCovarFindings`, from its mixtures' fits)."""
        constant, small, smallest, reg = [], [], np.inf, 0.0
        for label, found in zip(classes, findings):
            if not found:
                continue
            reg = max([reg] + [f.reg_covar for f in found])
            is_constant = np.logical_or.reduce([f.constant for f in found])
            is_small = np.logical_or.reduce([f.small for f in found]) & ~is_constant
            name = f"class {plain_label(label)!r}"
            if is_constant.any():
                constant.append(f"index {listed_indices(is_constant)[1]} in {name}")
            if is_small.any():
                small.append(f"index {listed_indices(is_small)[1]} in {name}")
                smallest = min([smallest] + [float(f.variance[is_small].min()) for f in found])
        if constant:
            warnings.warn(
                f"MixtureDiscriminant: feature(s) constant within a class ({'; '.join(constant)}): the class's mixture "
                f"has the variance reg_covar={reg:g} alone along them, a density of near certainty. A feature constant within "
                "a class can still tell it from the others: keep it unless it is constant in X too, and for a small "
                "class set a larger reg_covar, a constrained covariance_type (\"spherical\" pools the variance over "
                "the features) or give the class more rows.", DataScaleWarning, stacklevel=user_stacklevel())
        if small:
            warnings.warn(
                f"MixtureDiscriminant: reg_covar={reg:g} exceeds a tenth of the within-class variance of feature(s) "
                f"({'; '.join(small)}; smallest variance {smallest:.3g}): added to every covariance, it dominates the "
                "class densities along them. Rescale X (e.g. StandardScaler) or lower reg_covar, an absolute "
                "variance; for a small class, a constrained covariance_type or more rows.",
                DataScaleWarning, stacklevel=user_stacklevel())

    def _warn_if_collapsing(self, scale=None):
        """Name the classes whose mixture has a collapsing component (a variance near reg_covar).

        ``scale``: the data's largest feature variance (None: each mixture's own largest variance).
        """
        found = {plain_label(label): m.family_.collapsing_components(m._params, scale).tolist()
                 for label, m in zip(self.classes_, self.mixtures_)}
        found = {label: comps for label, comps in found.items() if comps}
        if found:
            listed = "; ".join(f"class {label!r}: component(s) {comps}" for label, comps in found.items())
            warnings.warn(
                f"MixtureDiscriminant: the mixture of some classes is degenerate ({listed}): a variance has sunk "
                "to near reg_covar, as where a component holds too few rows for its covariance (or rows with "
                "missing values leave a direction unobserved), and its density means nothing along it. Use fewer "
                "n_components, a larger reg_covar or a constrained covariance_type.", CollapsingComponentWarning,
                stacklevel=user_stacklevel())

    def _family_options(self):
        """The candidate families as label -> family (one entry for a single family)."""
        if isinstance(self.family, dict):
            if not self.family:
                raise ValueError("family as a dict needs at least one family (label -> ComponentFamily).")
            return dict(self.family)
        if isinstance(self.family, list):
            if not self.family:
                raise ValueError("family as a list needs at least one ComponentFamily.")
            return {repr(f): f for f in self.family}
        return {"family": self.family}

    def _joint_fit(self, X, y_idx, w, mixtures, priors, class_data, totals):
        """The class mixtures refined by one EM over all rows (``joint``, or unlabelled rows).

        One mixture of all classes' components, started from the mixtures fitted to the
        labelled rows: a labelled row keeps its responsibility within its class's components
        (``component_labels``), an unlabelled row spreads it over all, and parameters the family
        shares across components (a tied covariance) are shared by every class's subclasses.
        Returns the class mixtures cut out of it and the classes' shares of its weights (the
        priors when ``priors="empirical"``). ``class_data`` holds each class's labelled rows and
        weights, ``totals`` their total weights; X, y_idx (-1: unlabelled) and w are in memory
        or dask.
        """
        from discrim.mixture import FiniteMixture

        family = mixtures[0].family
        sizes = [m.n_components for m in mixtures]
        start_priors = totals / totals.sum()
        weights = np.concatenate([p * m.weights_ for p, m in zip(start_priors, mixtures)])
        names = list(mixtures[0].params_)
        shared = set(family.shared_params()) if hasattr(family, "shared_params") else set()
        params = {name: (mixtures[0].params_[name] if name in shared else
                         np.concatenate([m.params_[name] for m in mixtures])) for name in names}
        joint = FiniteMixture(joint_family(family, sizes, mixtures[0].n_features_in_), sum(sizes),
                              weights_init=weights / weights.sum(), params_init=params,
                              component_labels=np.repeat(np.arange(len(mixtures)), sizes), unlabeled=-1,
                              max_iter=self.max_iter, tol=self.tol, reg_covar=self.reg_covar, device=self.device)
        joint._warn_collapsing = False  # fit() names the classes instead
        joint.fit(X, y=y_idx, sample_weight=w)
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        class_weights = np.add.reduceat(joint.weights_, bounds[:-1])
        refined = []
        for k, m in enumerate(mixtures):
            part = slice(bounds[k], bounds[k + 1])
            with reg_covar_findings_collected():  # the class fits above said it of these rows
                class_mixture = FiniteMixture(
                    family, sizes[k], weights_init=joint.weights_[part] / class_weights[k], max_iter=0,
                    params_init={n: (v if n in shared else v[part]) for n, v in joint.params_.items()},
                    reg_covar=self.reg_covar, device=self.device)
                class_mixture._warn_unobserved_pairs = False  # the joint EM's parameters: it said so
                refined.append(class_mixture.fit(class_data[k][0]))
        empirical = isinstance(self.priors, str) and self.priors == "empirical"
        return refined, (class_weights if empirical else priors), joint

    def summary(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> DiscriminantSummary:
        """The fit on labelled rows, as mclust's ``summary(MclustDA)``: the model of each class, the
        log-likelihood, df and BIC, the training confusion matrix, the error and the Brier score.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Usually the training rows.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        summary : DiscriminantSummary
            ``print(summary)`` prints it (see :func:`discrim.discriminant.summarize_discriminant`).
        """
        from discrim.discriminant._summary import summarize_discriminant

        return summarize_discriminant(self, X, y, sample_weight)

    @property
    def selections_(self):
        """list of (MixtureSelection or None): the BIC table of each class (see Attributes)."""
        # A property rather than an attribute: the fitted model keeps plain containers that
        # skops saves (see _selection_state); an unfitted model raises AttributeError.
        return [None if s is None else _selection_from_state(s) for s in self._selections]

    def _dask_classes(self, X, y, sample_weight):
        """Classes, their total weights and (rows, weights) of each class of a dask X, kept lazy.

        One pass validates X and finds the classes and their weights; another counts each
        class's rows per chunk, so that each class's rows form a dask array of known chunks.
        Also returns the rows' class indices (dask, -1 for an unlabelled row), the validated
        weights and whether some row is unlabelled.
        """
        dtype = np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
        X, checked = validated_rows(self, X, dtype=dtype, sample_weight=sample_weight, min_samples=2,
                                    allow_nan=True)
        w = checked.sample_weight
        y = align_rows(y, X, name="y")
        labels, stats, _ = labelled_statistics(X, y, w, weight_totals)
        check_no_missing_labels(labels, self)
        if self.unlabeled is None:
            check_no_unlabelled_marker(labels)
        known = unlabelled_rows(labels, self.unlabeled)
        classes, totals = (labels, stats.weight) if known is None else (plain_known_labels(labels[known]), stats.weight[known])
        check_labels(classes)
        check_class_totals(classes, totals)
        counts = label_counts_per_chunk(y, classes)
        class_data = [(class_rows(X, y, c, counts[k]), class_rows(w, y, c, counts[k])) for k, c in enumerate(classes)]
        y_idx = y.map_blocks(class_index, classes, self.unlabeled, dtype=np.int64)
        return classes, totals, class_data, y_idx, w, known is not None

    def _check_n_components(self, classes, class_data):
        """Candidate component counts of every class; errors name the class and the fix.

        Returns a list (one entry per class) of sorted lists of ints; counts above the number of
        distinct rows of a class are dropped when there are other candidates.
        """
        spec = self.n_components
        if is_labelled_series(spec):  # counts per class (list() read its values as candidates for every class)
            spec = spec.to_dict()
        if isinstance(spec, dict):
            missing = [plain_label(c) for c in classes if c not in spec]
            extra = [c for c in spec if not np.any(classes == c)]
            if missing or extra:
                raise ValueError(
                    "n_components as a dict must map every class label to a count (or a list of "
                    f"counts); missing classes: {missing}, unknown keys: {extra}."
                )
            per_class = [(f"n_components[{plain_label(c)!r}]", spec[c]) for c in classes]
        else:
            per_class = [("n_components", spec)] * classes.shape[0]
        out = []
        for k, (name, value) in enumerate(per_class):
            counts = _as_counts(value, name)
            X_k, w_k = class_data[k]
            if is_dask(X_k):  # distinct rows among those the initialisation would see
                X_k, w_k = gather_sample(X_k, w_k, _INIT_SAMPLE_ROWS, np.random.default_rng(0))
            elif is_tensor(X_k):  # the same, of rows on a device
                X_k, w_k = to_numpy(X_k[:_INIT_SAMPLE_ROWS]), w_k[:_INIT_SAMPLE_ROWS]
            n_rows = _n_distinct_rows(X_k[w_k > 0], needed=counts[-1])
            fitting = [r for r in counts if r <= n_rows]
            if not fitting:
                raise ValueError(
                    f"class {plain_label(classes[k])!r} has {n_rows} distinct row(s) with positive weight "
                    f"but {name}={value!r} asks for at least {counts[0]} component(s): give that class "
                    f"at most {n_rows} (n_components may be a dict per class) or more rows."
                )
            out.append(fitting)
        return out

    def _check_loaded_state(self):
        """:meth:`BaseLikelihoodClassifier._check_loaded_state`, and one fitted FiniteMixture per class, of
        ``n_features_in_`` features and ``n_components_[k]`` components (the mixtures' own state is
        theirs to check, before this: :func:`discrim.persistence.load_model` checks the estimators a
        model holds before the model)."""
        from discrim.mixture import FiniteMixture

        n_features, n_classes = super()._check_loaded_state()
        n_components, mixtures = state.fitted_attributes(self, "n_components_", "mixtures_")
        state.array(n_components, "n_components_", (n_classes,), kind="i", dims="(n_classes,)", positive=True)
        if not isinstance(mixtures, list) or len(mixtures) != n_classes:
            raise state.FittedStateError(f"mixtures_ is not a list of n_classes = {n_classes} mixtures")
        for k, mixture in enumerate(mixtures):
            if not isinstance(mixture, FiniteMixture) or not state.is_fitted(mixture):
                raise state.FittedStateError(f"mixtures_[{k}] is a {type(mixture).__name__}, not a fitted "
                                             "FiniteMixture")
            if mixture.n_features_in_ != n_features:
                raise state.FittedStateError(f"mixtures_[{k}] takes {mixture.n_features_in_} features, not "
                                             f"n_features_in_ = {n_features}")
            if mixture._params.n_components != n_components[k]:
                raise state.FittedStateError(f"mixtures_[{k}] has {mixture._params.n_components} component(s), "
                                             f"not n_components_[{k}] = {n_components[k]}")
        return n_features, n_classes

    def _log_density(self, X):
        """``log f_k(x)`` from each class's mixture: (n_samples, n_classes)."""
        return np.column_stack([to_numpy(m.score_samples(X)) for m in self.mixtures_])
