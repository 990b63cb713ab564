"""Fixed: any family with some parameters, or the parameters of some components, held at given values."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from collections.abc import Mapping, Sequence

from discrim._typing import ArrayLike
from discrim.distributions._base import ComponentFamily

__all__ = ["Fixed"]

# mclust's models whose components share a volume, shape or orientation (EEE shares the whole
# matrix, stored once, and is fixed whole): a covariance fixed for some components, or to values
# that differ, would leave the free components' M-step breaking the model's constraint
_SHARED_PARTS = {"EII": "volume", "EEI": "volume and shape", "VEI": "shape", "EVI": "volume",
                 "VEE": "shape and orientation", "EVE": "volume and orientation", "VVE": "orientation",
                 "EEV": "volume and shape", "VEV": "shape", "EVV": "volume"}


class Fixed(ComponentFamily):
    """A family whose parameters ``params`` (of the components ``components``) are not estimated.

    Parameters
    ----------
    family : ComponentFamily
        The family whose other parameters EM estimates.
    params : dict of str to array-like
        Fixed values by parameter name (as in ``family.param_shapes``). Each value is broadcast
        against the parameter (``components=None``) or against the rows of the chosen components,
        ``parameter[components]``; e.g. ``{"dof": 4.0}`` for a Student-t or
        ``{"covariance": np.eye(2)}`` for the full covariances of a Gaussian. A parameter shared
        by all components (a tied covariance) is always fixed whole.
    components : list of int or None, default=None
        The components whose parameters are fixed; None: all of them. To fix different
        parameters of different components, nest: ``Fixed(Fixed(family, a, [0]), b, [1])``.

    Notes
    -----
    Every M-step is the family's M-step with the fixed entries held
    (:meth:`ComponentFamily.params_given`): the free parameters maximise the expected
    complete-data log-likelihood given the fixed ones, so EM keeps its monotone likelihood. The
    number of parameters (for BIC and AIC) is the family's less the free parameters of the fixed
    entries (:meth:`ComponentFamily.param_sizes`). Starting values (``params_init``) and every
    M-step hold the fixed entries; the rest delegates to ``family``.

    A Gaussian's fixed mean moves its covariance step to the scatter about that mean
    (:meth:`Gaussian.params_given`); with a full or tied covariance a component's mean is
    fixed whole. Under a covariance model whose components share a volume, shape or orientation
    (EII, EEI, VEI, EVI, VEE, EVE, VVE, EEV, VEV, EVV) a covariance is fixed for every component
    and to one value, which any of those constraints allows; a partial fix is refused.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Fixed, StudentT
    >>> fam = Fixed(StudentT(covariance_type="diag"), {"dof": 4.0}, components=[0])
    >>> fam.n_parameters(n_features=2, n_components=2)  # 2 * (2 + 2 + 1), less one dof
    9
    """

    def __init__(self, family: ComponentFamily, params: Mapping[str, ArrayLike], components: Sequence[int] | None = None) -> None:
        self.family = family
        self.params = params
        self.components = components

    # --- what is fixed -------------------------------------------------------------------------

    def check_options(self):
        if not isinstance(self.family, ComponentFamily):
            raise ValueError(f"family must be a component family (e.g. Gaussian()); got {self.family!r}.")
        self.family.check_options()
        if not isinstance(self.params, dict) or not self.params:
            raise ValueError(f"params must be a non-empty dict of fixed values by parameter name; got {self.params!r}.")
        comps = self.components
        if comps is not None and (isinstance(comps, (str, bytes)) or not hasattr(comps, "__len__") or not len(comps)
                                  or not all(isinstance(c, Integral) and not isinstance(c, bool) and c >= 0
                                             for c in comps)):
            raise ValueError(f"components must be None or a non-empty list of component indices; got {comps!r}.")
        return self

    def _fixed(self, shapes):
        """``{name: (value, where)}`` of full parameter shapes, from the shapes of a parameter set."""
        shared = set(self.family.shared_params())
        k = next(s[0] for n, s in shapes.items() if n not in shared)
        unknown = set(self.params) - set(shapes)
        if unknown:
            raise ValueError(f"params has names {sorted(unknown)} that {type(self.family).__name__} does not have; "
                             f"its parameters are {sorted(shapes)}.")
        comps = None if self.components is None else np.asarray(self.components, dtype=np.intp)
        if comps is not None and comps.max() >= k:
            raise ValueError(f"components={self.components!r} names a component >= n_components={k}.")
        out = {}
        for name, value in self.params.items():
            shape = tuple(shapes[name])
            where = np.zeros(shape, dtype=bool)
            full = np.zeros(shape)
            target = slice(None) if comps is None or name in shared else comps
            try:
                full[target] = np.asarray(value, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"params[{name!r}] does not fit the parameter's shape {shape} "
                                 f"(n_components={k}) for components={self.components!r}: {exc}") from None
            where[target] = True
            if name == "covariance":
                self._check_shared_covariance(full, where, k)
            constraint = self.family.arg_constraints[name]
            if not constraint.check(full[target]):
                raise ValueError(f"params[{name!r}] must be {constraint.name} ({constraint.description}).")
            out[name] = (full, where)
        return out

    def _check_shared_covariance(self, value, where, n_components):
        """Refuse fixed covariances that a model's shared volume, shape or orientation cannot hold.

        Allowed there: one value for every component, which satisfies any of the constraints.
        """
        base = self.family
        while isinstance(base, Fixed):
            base = base.family
        shared = _SHARED_PARTS.get(getattr(base, "model_name", None))
        if shared is None:
            return
        every = where.reshape(n_components, -1).all(axis=1).all()
        if not (every and np.all(value == value[:1])):
            raise ValueError(
                f"params['covariance'] fixes the covariance of some components, or to different values, under "
                f"{base.model_name}, whose components share their {shared}: the free components' M-step would "
                f"break that constraint. Fix one value for every component (components=None), or use a model "
                f"without shared parts (VVV, VVI, VII) or a tied one (EEE).")

    def _hold(self, params):
        """A parameter set with the fixed entries substituted."""
        values = params.as_dict()
        for name, (value, where) in self._fixed({n: np.shape(v) for n, v in values.items()}).items():
            values[name] = np.where(where, value, values[name])
        return type(params)(**values)

    # --- the M-step ----------------------------------------------------------------------------

    def params_from_stats(self, stats, current=None):
        return self.params_given(stats, {}, current)

    def params_given(self, stats, fixed, current=None):
        reference = current if current is not None else self.family.params_from_stats(stats)
        own = self._fixed({n: np.shape(v) for n, v in reference.as_dict().items()})
        for name, (value, where) in fixed.items():  # an outer Fixed's entries
            if name in own:
                v0, w0 = own[name]
                own[name] = (np.where(where, value, v0), w0 | where)
            else:
                own[name] = (value, where)
        return self.family.params_given(stats, own, current)

    def make_params(self, params, n_components, n_features):
        return self._hold(self.family.make_params(params, n_components, n_features))

    def n_parameters(self, n_features, n_components=1):
        sizes = self.family.param_sizes(n_features)
        shared = set(self.family.shared_params())
        m = n_components if self.components is None else len(set(self.components))
        removed = sum(sizes[name] * (1 if name in shared else m) for name in self.params if name in sizes)
        return self.family.n_parameters(n_features, n_components) - removed

    def param_sizes(self, n_features):
        sizes = dict(self.family.param_sizes(n_features))
        if self.components is None:  # per component: only whole fixing removes a parameter from every one
            sizes.update({name: 0 for name in self.params if name in sizes})
        return sizes

    # --- delegated -----------------------------------------------------------------------------

    @property
    def params_class(self):
        return self.family.params_class

    @property
    def arg_constraints(self):
        return self.family.arg_constraints

    @property
    def support(self):
        return self.family.support

    @property
    def is_discrete(self):
        return self.family.is_discrete

    def log_prob(self, X, params, *, mask=None, rows=None):
        return self.family.log_prob(X, params, mask=mask, rows=rows)

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        return self.family.suff_stats(X, resp, sample_weight, mask=mask, rows=rows, params=params)

    def sample(self, params, n_per_component, rng):
        return self.family.sample(params, n_per_component, rng)

    def param_shapes(self, n_components, n_features):
        return self.family.param_shapes(n_components, n_features)

    def row_data(self, n_samples):
        return self.family.row_data(n_samples)

    def check_data(self, X, rows=None):
        return self.family.check_data(X, rows)

    def component_means(self, params, n_rows=1, rows=None):
        return self.family.component_means(params, n_rows, rows)

    def conditional_mean(self, X, params, observed, rows=None):
        return self.family.conditional_mean(X, params, observed, rows)

    def conditional_estimate(self, X, params, observed, resp, rows=None):
        return self.family.conditional_estimate(X, params, observed, resp, rows)

    def conditional_sample(self, X, params, observed, components, rng, rows=None):
        return self.family.conditional_sample(X, params, observed, components, rng, rows)

    def row_footprint(self, n_components, n_features):
        return self.family.row_footprint(n_components, n_features)

    def shared_params(self):
        return self.family.shared_params()

    def support_upper(self):
        return self.family.support_upper()

    def takes_missing_values(self):
        return self.family.takes_missing_values()

    def rows_per_component(self, n_features):
        return self.family.rows_per_component(n_features)

    def min_relative_variance(self, params, occupied, feature_var):
        return self.family.min_relative_variance(params, occupied, feature_var)

    def collapsing_components(self, params, scale=None):
        return self.family.collapsing_components(params, scale)

    def log_penalty(self, params, stats):
        return self.family.log_penalty(params, stats)
