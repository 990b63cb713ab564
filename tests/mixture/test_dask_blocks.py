"""EM over the row chunks of a dask array: the same fit as in memory, for any chunking."""

import numpy as np
import pytest

from discrim.distributions import Binomial, Gaussian, Poisson
from discrim.mixture._em import DaskRowBlocks, RowBlocks, run_em

da = pytest.importorskip("dask.array")


def _case(name, rng, n=600):
    if name == "gaussian":
        X = np.concatenate([rng.normal(size=(n // 2, 3)), rng.normal(size=(n - n // 2, 3)) * 2 + 3]) + 1e3
        family = Gaussian("full")
        params = family.make_params({"mean": [[1e3, 1e3, 1e3], [1e3 + 2, 1e3 + 2, 1e3 + 2]],
                                     "covariance": [np.eye(3), 2 * np.eye(3)]}, 2, 3)
    elif name == "poisson":
        X = rng.poisson([[1.0, 6.0]], size=(n, 2)).astype(float)
        family = Poisson()
        params = family.make_params({"rate": [[1.0, 2.0], [3.0, 5.0]]}, 2, 2)
    else:
        trials = rng.integers(1, 20, n)
        X = rng.binomial(trials[:, None], [0.3, 0.7], size=(n, 2)).astype(float)
        family = Binomial(n_trials=trials)
        params = family.make_params({"prob": [[0.2, 0.5], [0.6, 0.8]]}, 2, 2)
    return X, family.check_options(), params


@pytest.mark.parametrize("name", ["gaussian", "poisson", "binomial-per-row-trials"])
@pytest.mark.parametrize("chunk", [1, 37, 250, 600])
def test_em_over_dask_chunks_equals_the_in_memory_fit(name, chunk, rng):
    X, family, params = _case(name, rng, n=600 if chunk > 1 else 60)  # chunks of one row: fewer rows
    w = rng.uniform(0.5, 2.0, X.shape[0])
    rows = family.row_data(X.shape[0])
    in_memory = run_em(family, RowBlocks(X, w, 128, rows=rows), np.full(2, 0.5), params, tol=0.0, max_iter=8)
    dask_rows = None if rows is None else {k: da.from_array(v, chunks=chunk) for k, v in rows.items()}
    blocks = DaskRowBlocks(da.from_array(X, chunks=(chunk, -1)), da.from_array(w, chunks=chunk), 16, rows=dask_rows)
    on_dask = run_em(family, blocks, np.full(2, 0.5), params, tol=0.0, max_iter=8)
    np.testing.assert_allclose(on_dask.lower_bounds, in_memory.lower_bounds, rtol=1e-10)
    for key, value in in_memory.params.as_dict().items():
        np.testing.assert_allclose(on_dask.params.as_dict()[key], value, rtol=1e-9, atol=1e-12, err_msg=key)
    np.testing.assert_allclose(on_dask.weights, in_memory.weights, rtol=1e-10)


def test_dask_blocks_with_a_mask_equal_the_in_memory_fit(rng):
    X, family, params = _case("gaussian", rng)
    mask = rng.random(X.shape) < 0.8
    Xm = np.where(mask, X, 0.0)
    w = np.ones(X.shape[0])
    in_memory = run_em(family, RowBlocks(Xm, w, 100, mask=mask), np.full(2, 0.5), params, tol=0.0, max_iter=5)
    blocks = DaskRowBlocks(da.from_array(Xm, chunks=(70, -1)), da.from_array(w, chunks=70), 32,
                           mask=da.from_array(mask, chunks=(70, -1)))
    on_dask = run_em(family, blocks, np.full(2, 0.5), params, tol=0.0, max_iter=5)
    np.testing.assert_allclose(on_dask.lower_bounds, in_memory.lower_bounds, rtol=1e-10)


def test_dask_blocks_need_row_chunks_only(rng):
    X, family, params = _case("poisson", rng)
    with pytest.raises(ValueError, match="chunked along rows only"):
        DaskRowBlocks(da.from_array(X, chunks=(100, 1)), da.ones(X.shape[0], chunks=100), 64)


class _Truncated(Poisson):
    """Poisson counts up to 100: a larger count has density zero under every component."""

    def log_prob(self, X, params, *, mask=None, rows=None):
        out = super().log_prob(X, params, mask=mask, rows=rows)
        out[X.max(axis=1) > 100] = -np.inf
        return out


def test_a_row_without_density_names_its_global_index(rng):
    # the error names the row's index in the whole array, not in its chunk
    X, _, params = _case("poisson", rng, n=300)
    X[250] = [500.0, 1.0]
    blocks = DaskRowBlocks(da.from_array(X, chunks=(100, -1)), da.ones(300, chunks=100), 32)
    with pytest.raises(ValueError, match="250"):
        run_em(_Truncated(), blocks, np.full(2, 0.5), params, tol=0.0, max_iter=1)
