"""Binomial and Bernoulli components: independent counts of successes per feature."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from discrim._typing import ArrayLike
from discrim.distributions import _constraints as constraints
from discrim.backend import ops
from discrim.distributions._base import (
    LOG_TINY,
    ComponentFamily,
    Params,
    Stats,
    component_totals,
    host,
    observed_entries,
    weighted_resp_t,
)
from discrim.distributions._special import log_binomial_coefficient_rows

__all__ = ["Bernoulli", "BinomialParams", "BinomialStats", "Binomial"]


@dataclass(frozen=True)
class BinomialParams(Params):
    """Success probabilities ``prob`` of shape (n_components, n_features)."""

    prob: np.ndarray


@dataclass(frozen=True)
class BinomialStats(Stats):
    """Weighted responsibility totals (K,), weighted successes (K, d), weighted trials (K,).

    With a mask, ``trials`` counts the observed entries only and has shape (K, d).
    """

    weight: np.ndarray
    successes: np.ndarray
    trials: np.ndarray


def _column(n):
    """Trial counts as a column to broadcast over features: a float stays a float."""
    return n if np.ndim(n) == 0 else n[:, None]


def _log_prob_and_log_complement(prob):
    """``log p`` and ``log(1 - p)``, floored at LOG_TINY so that p in {0, 1} stays finite."""
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(prob), LOG_TINY), np.maximum(np.log1p(-prob), LOG_TINY)


class Binomial(ComponentFamily):
    """Independent binomial counts per feature: ``x_d ~ Binomial(n_trials, prob_kd)``.

    Parameters
    ----------
    n_trials : int or array-like of shape (n_samples,), default=1
        Number of trials behind every count. An int applies to every row; an array gives the
        trial count of each row of the data the family is used with (fit, score), and is
        checked against the number of rows. To score new rows with other trial counts, use
        ``mixture.set_params(family__n_trials=new_counts)``.

    Notes
    -----
    The parameter ``prob`` has shape (n_components, n_features). With one feature and
    ``n_trials=10`` this is the coin model of EM's two-coin example: ``prob[k, 0]`` is ``p_k`` and
    the weighted MLE is ``p_k = sum_i w_ik x_i / sum_i w_ik n_i`` (``n_i = 10`` there).
    Probabilities of exactly 0 or 1 are evaluated as the smallest positive float, so that a
    count outside their support gets a tiny finite density rather than NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Binomial
    >>> fam = Binomial(n_trials=10)
    >>> params = fam.make_params({"prob": [[0.6], [0.5]]}, n_components=2, n_features=1)
    >>> fam.log_prob(np.array([[5.0]]), params).shape
    (1, 2)
    """

    arg_constraints = {"prob": constraints.unit_interval}
    params_class = BinomialParams
    cli_names = {"binomial": {}}

    def __init__(self, n_trials: int | ArrayLike = 1) -> None:
        self.n_trials = n_trials

    # options and per-row data --------------------------------------------------------

    def check_options(self):
        n = self.n_trials
        if isinstance(n, Integral) and not isinstance(n, bool):
            if n < 1:
                raise ValueError(f"n_trials must be a positive integer; got {n}.")
            return self
        arr = np.asarray(n)
        if arr.ndim != 1 or arr.dtype.kind not in "iuf" or not constraints.nonnegative_integer.check(arr):
            raise ValueError(
                "n_trials must be a positive int or a 1-d array of non-negative whole numbers "
                f"(one trial count per row of X); got {n!r}."
            )
        return self

    def row_data(self, n_samples):
        if np.ndim(self.n_trials) == 0:
            return None
        n = np.asarray(self.n_trials, dtype=np.float64)
        if n.shape[0] != n_samples:
            raise ValueError(
                f"n_trials has {n.shape[0]} per-row trial counts but X has {n_samples} rows: "
                "give one count per row, or set family__n_trials to the counts of the new rows."
            )
        return {"n_trials": n}

    # Per-row trial counts: the start completes a row by each feature's success share times the
    # row's trials (the column's mean count, 16 successes, completed rows of 1 trial and started EM
    # at prob = 1)
    def completion_stats(self, X, mask, sample_weight, rows=None):
        if rows is None or np.ndim(self.n_trials) == 0:
            return super().completion_stats(X, mask, sample_weight, rows)
        # the observed successes as for any family; in place of the observing rows' weight, their trials
        stats = super().completion_stats(X, mask, sample_weight, rows)
        n = np.asarray(rows["n_trials"], dtype=np.float64)[:, None]
        stats[0] = (np.asarray(sample_weight, dtype=np.float64)[:, None] * mask * n).sum(axis=0)
        return stats

    def completion(self, stats, rows=None):
        if rows is None or np.ndim(self.n_trials) == 0:
            return super().completion(stats, rows)
        n = np.asarray(rows["n_trials"], dtype=np.float64)[:, None]
        share = stats[1] / np.maximum(stats[0], np.finfo(float).tiny)
        return np.clip(np.round(share * n), 0.0, n)

    def _trials(self, X, rows):
        """Trial counts: a float, or an array of shape (n_samples,) in X's namespace."""
        if np.ndim(self.n_trials) == 0:
            return float(self.n_trials)
        if rows is None:  # called directly, outside EM: the option holds the rows' counts
            rows = self.check_options().row_data(X.shape[0])
        n = rows["n_trials"]
        return ops.like(n, X, dtype="float64")

    def support_upper(self):
        return int(np.max(self.n_trials))

    def check_data(self, X, rows=None):
        n = self._trials(X, rows)
        high = n if np.ndim(n) == 0 else n[:, None]
        if not constraints.integer_interval(0, high).check(X):
            raise ValueError(
                f"X must hold counts of successes for {self!r}: whole numbers between 0 and "
                "n_trials (the trial count of the row)."
            )
        return X

    # interface -----------------------------------------------------------------------

    def param_shapes(self, n_components, n_features):
        return {"prob": (n_components, n_features)}

    def log_prob(self, X, params, *, mask=None, rows=None):
        n = self._trials(X, rows)
        log_p, log_q = _log_prob_and_log_complement(params.prob)
        Xo = observed_entries(X, mask)
        # sum_d [x log p + (n - x) log(1 - p)] = (log p - log q) . x + n sum_d log q, computed as
        # (K, n_samples) so that the posterior and the statistics run over contiguous rows.
        out = ops.like(log_p - log_q, X) @ Xo.T
        if mask is not None:
            out += ops.like(log_q, X) @ (ops.like(mask, X) * ops.like(_column(n), X)).T
        elif np.ndim(n) == 0:
            out += ops.like(log_q.sum(axis=1) * n, X)[:, None]
        else:
            out += ops.like(log_q.sum(axis=1), X)[:, None] * ops.like(n, X)[None, :]
        out += ops.like(log_binomial_coefficient_rows(n, Xo), X)
        return out.T

    def suff_stats(self, X, resp, sample_weight=None, *, mask=None, rows=None, params=None):
        n = self._trials(X, rows)
        wr_t = weighted_resp_t(resp, sample_weight)
        weight = component_totals(wr_t)
        if mask is not None:  # trials of the observed entries only: (K, d)
            trials = host(ops.matmul(wr_t, ops.like(mask, X) * ops.like(_column(n), X)))
        elif np.ndim(n) == 0:
            trials = weight * n
        else:
            trials = host(ops.as_float64(wr_t) @ n)
        return BinomialStats(weight=weight, successes=host(ops.matmul(wr_t, observed_entries(X, mask))), trials=trials)

    def params_from_stats(self, stats, current=None):
        trials = stats.trials[:, None] if stats.trials.ndim == 1 else stats.trials
        prob = np.where(trials > 0, stats.successes / np.where(trials > 0, trials, 1.0), 0.5)
        return BinomialParams(prob=np.clip(prob, 0.0, 1.0))

    def component_means(self, params, n_rows=1, rows=None):
        if np.ndim(self.n_trials) == 0:
            return float(self.n_trials) * params.prob
        n = (rows or self.check_options().row_data(n_rows))["n_trials"]
        return np.asarray(n, dtype=np.float64)[None, :, None] * params.prob[:, None, :]

    def conditional_sample(self, X, params, observed, components, rng, rows=None):
        if np.ndim(self.n_trials) == 0:
            return super().conditional_sample(X, params, observed, components, rng, rows)
        # per-row trial counts: each row's missing entries are drawn with its own count (sample()
        # draws rows of one count only)
        n = np.asarray(host(self._trials(X, rows)), dtype=np.int64)
        draws = rng.binomial(n[:, None], params.prob[components])
        return np.where(observed, X, draws.astype(np.float64))

    def sample(self, params, n_per_component, rng):
        if np.ndim(self.n_trials) != 0:
            raise ValueError("sampling needs an integer n_trials; per-row trial counts belong to observed rows.")
        n = int(self.n_trials)
        blocks = [rng.binomial(n, p, size=(int(m), p.shape[0])) for p, m in zip(params.prob, n_per_component)]
        return np.concatenate(blocks, axis=0).astype(np.float64)

    def n_parameters(self, n_features, n_components=1):
        return n_components * n_features


class Bernoulli(Binomial):
    """Independent binary features: ``x_d ~ Bernoulli(prob_kd)``, i.e. :class:`Binomial` with one trial.

    Notes
    -----
    The parameter ``prob`` has shape (n_components, n_features); its weighted MLE is the
    responsibility-weighted mean of each feature.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.distributions import Bernoulli
    >>> fam = Bernoulli()
    >>> params = fam.make_params({"prob": [[0.2, 0.9]]}, n_components=1, n_features=2)
    >>> float(np.exp(fam.log_prob(np.array([[1.0, 1.0]]), params))[0, 0])  # doctest: +ELLIPSIS
    0.18...
    """

    cli_names = {"bernoulli": {}}

    def __init__(self) -> None:
        pass

    @property
    def n_trials(self):
        return 1

    def check_options(self):
        return self
