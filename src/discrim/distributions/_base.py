"""The component-family interface shared by EM, the plug-in discriminant rules and the reducers."""

from abc import ABCMeta, abstractmethod
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator

__all__ = ["ComponentFamily", "Params", "Stats"]

# Smallest log we evaluate: a probability or rate of exactly 0 gives a density that is tiny but
# finite, so that 0 * log(0) never turns into NaN inside a matrix product.
LOG_TINY = float(np.log(np.finfo(np.float64).tiny))


@dataclass(frozen=True)
class Params:
    """Parameters of all K components of a family, each array with a leading component axis.

    Subclasses are frozen dataclasses whose fields are the parameter names.
    """

    def as_dict(self):
        """Return ``{parameter name: array}`` (arrays are not copied)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def _cached(self, key, compute):
        # Derived quantities (e.g. Cholesky factors) computed once per parameter set; the
        # dataclass is frozen, so the cache can never go stale.
        cache = self.__dict__.setdefault("_derived", {})
        if key not in cache:
            cache[key] = compute()
        return cache[key]


@dataclass(frozen=True)
class Stats:
    """Sufficient statistics of all K components; ``a + b`` merges two row blocks.

    Every family's statistics have a field ``weight`` of shape (n_components,): the total
    (sample-weighted) responsibility of each component, from which EM takes the mixing weights.

    The default ``__add__`` adds field by field, which is right for plain sums. Families whose
    statistics are centred moments override it with the exact merge rule.
    """

    def __add__(self, other):
        if isinstance(other, int) and other == 0:  # lets sum() start from 0
            return self
        return type(self)(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def __radd__(self, other):
        return self.__add__(other)


class ComponentFamily(BaseEstimator, metaclass=ABCMeta):
    """A parametric family of component densities, evaluated for all K components at once.

    A family object holds only structural options (such as ``covariance_type`` or ``n_trials``);
    parameters and statistics are dataclasses of arrays with a leading component axis. Families
    derive from scikit-learn's ``BaseEstimator`` only for ``get_params``/``set_params``, ``clone``
    and a readable ``repr``, so that ``FiniteMixture(family=...)`` clones and grid-searches like
    any nested estimator (e.g. ``set_params(family__covariance_type="diag")``).

    Subclasses define ``arg_constraints`` (parameter name -> constraint), ``params_class``,
    ``support`` (the constraint rows of X must satisfy) and implement the abstract methods.
    """

    arg_constraints: ClassVar[dict] = {}
    params_class: ClassVar[type] = Params
    support = None

    # --- the interface -------------------------------------------------------------------

    @abstractmethod
    def log_prob(self, X, params):
        """Log-density of every row under every component.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        params : Params
            Parameters of K components.

        Returns
        -------
        log_prob : array of shape (n_samples, n_components)
        """

    @abstractmethod
    def suff_stats(self, X, resp, sample_weight=None):
        """Sufficient statistics of X under weighted responsibilities.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        resp : array of shape (n_samples, n_components)
            Responsibilities (soft assignments), rows summing to one.
        sample_weight : array of shape (n_samples,) or None

        Returns
        -------
        stats : Stats
            Additive over row blocks: ``suff_stats(X1, ...) + suff_stats(X2, ...)`` equals the
            statistics of the stacked rows.
        """

    @abstractmethod
    def params_from_stats(self, stats, reg_covar=0.0):
        """Weighted maximum-likelihood parameters from sufficient statistics (the M-step).

        Parameters
        ----------
        stats : Stats
        reg_covar : float, default=0.0
            Non-negative floor added to variances (used by continuous families only).

        Returns
        -------
        params : Params
            Finite for every component; a component with zero total weight gets placeholder
            values that the caller must replace.
        """

    @abstractmethod
    def sample(self, params, n_per_component, rng):
        """Draw rows from each component.

        Parameters
        ----------
        params : Params
        n_per_component : array-like of int of shape (n_components,)
        rng : numpy.random.Generator

        Returns
        -------
        X : ndarray of shape (sum(n_per_component), n_features)
            Rows of component 0 first, then component 1, and so on.
        """

    @abstractmethod
    def n_parameters(self, n_features, n_components=1):
        """Number of free parameters of ``n_components`` components (mixing weights excluded).

        Parameters
        ----------
        n_features : int
        n_components : int, default=1

        Returns
        -------
        n_parameters : int
        """

    @abstractmethod
    def param_shapes(self, n_components, n_features):
        """Expected shape of every parameter array.

        Parameters
        ----------
        n_components : int
        n_features : int

        Returns
        -------
        shapes : dict of str to tuple of int
        """

    # --- shared behaviour ----------------------------------------------------------------

    def row_footprint(self, n_components, n_features):
        """Floats per row in the largest temporaries of :meth:`log_prob` and :meth:`suff_stats`.

        EM sizes its row blocks with it, so that one block's temporaries stay in cache.

        Parameters
        ----------
        n_components : int
        n_features : int

        Returns
        -------
        n_floats : int
        """
        return n_components + n_features

    def shared_params(self):
        """Names of parameters shared by all components (no leading component axis)."""
        return ()

    # --- what model choice, plots and the CLI need to know of a family -----------------------

    #: Whether the family's support is a set of integers (a mass function, drawn as bars and
    #: markers) or the real line (a density, drawn as curves and contours).
    is_discrete = True

    def support_upper(self):
        """Largest value of the support, or None when it is unbounded (Poisson, Gaussian).

        Returns
        -------
        upper : int or None
        """
        return None

    def rows_per_component(self, n_features):
        """Weighted rows a component needs for non-degenerate parameters (0: any positive weight).

        With fewer, the likelihood of a fit can grow without bound as the component shrinks
        onto its rows (a Gaussian covariance): model choice never selects such a fit.

        Parameters
        ----------
        n_features : int

        Returns
        -------
        n_rows : int
        """
        return 0

    def min_relative_variance(self, params, occupied, feature_var, reg_covar):
        """Smallest variance of a fitted component in units of the features' variances.

        Families with a variance parameter that can collapse onto tied values (Gaussian)
        return the smallest eigenvalue of a component covariance less ``reg_covar``, in the
        standardised units of the data; the others return NaN (nothing to collapse).

        Parameters
        ----------
        params : Params
        occupied : ndarray of shape (n_components,) of bool
            Components with positive mixing weight.
        feature_var : ndarray of shape (n_features,)
            Weighted variance of every feature of the data (zero for a constant one).
        reg_covar : float

        Returns
        -------
        rel : float
        """
        return float("nan")

    def fit_params(self, X, resp, sample_weight=None, reg_covar=0.0):
        """Weighted MLE from responsibilities: ``params_from_stats(suff_stats(...))``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        resp : array of shape (n_samples, n_components)
        sample_weight : array of shape (n_samples,) or None
        reg_covar : float, default=0.0

        Returns
        -------
        params : Params
        """
        return self.params_from_stats(self.suff_stats(X, resp, sample_weight), reg_covar=reg_covar)

    def rows(self, index):
        """The family for a subset of rows (only per-row structural options change).

        Parameters
        ----------
        index : slice or array of int

        Returns
        -------
        family : ComponentFamily
        """
        return self

    def check_data(self, X):
        """Raise ``ValueError`` if some row of X is outside the support of the family.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)

        Returns
        -------
        X : ndarray
            Unchanged.
        """
        if self.support is not None and not self.support.check(X):
            raise ValueError(
                f"X is outside the support of {self!r}: its entries must be {self.support.name} "
                f"({self.support.description})."
            )
        return X

    def make_params(self, params, n_components, n_features):
        """Validate a dict (or Params) of parameters and return a Params instance.

        Parameters
        ----------
        params : dict or Params
            By parameter name; every parameter of the family must be given.
        n_components : int
        n_features : int

        Returns
        -------
        params : Params

        Raises
        ------
        ValueError
            Naming the parameter, for a missing or unknown name, a wrong shape, or a value
            outside the parameter's constraint.
        """
        if isinstance(params, Params):
            params = params.as_dict()
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict by parameter name; got {type(params).__name__}.")
        shapes = self.param_shapes(n_components, n_features)
        missing = set(shapes) - set(params)
        unknown = set(params) - set(shapes)
        if missing or unknown:
            raise ValueError(
                f"{type(self).__name__} parameters are {sorted(shapes)}; "
                + (f"missing {sorted(missing)}" if missing else "")
                + ("; " if missing and unknown else "")
                + (f"unknown {sorted(unknown)}" if unknown else "")
                + "."
            )
        out = {}
        for name, shape in shapes.items():
            try:
                value = np.array(params[name], dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"parameter {name!r} must be numeric: {exc}") from None
            if value.shape != tuple(shape):
                raise ValueError(
                    f"parameter {name!r} has shape {value.shape}; expected {tuple(shape)} "
                    f"(n_components={n_components}, n_features={n_features})."
                )
            self.arg_constraints[name].validate(value, f"parameter {name!r}")
            out[name] = value
        return self.params_class(**out)
