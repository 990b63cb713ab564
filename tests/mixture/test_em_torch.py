"""EM's loop on torch tensors (issue 20, first step): the E-step runs in the namespace of the rows."""

import numpy as np
import pytest

from discrim.distributions import Bernoulli, Binomial, Categorical, Gaussian, Poisson
from discrim.mixture._em import RowBlocks, run_em

torch = pytest.importorskip("torch")


def _case(name, rng):
    n = 400
    if name.startswith("gaussian"):
        ctype = name.split("-")[1]
        X = np.concatenate([rng.normal(size=(n // 2, 3)), rng.normal(size=(n // 2, 3)) + 3]) + 100
        covariance = {"full": [np.eye(3)] * 2, "tied": np.eye(3), "diag": np.ones((2, 3)), "spherical": np.ones(2)}
        family = Gaussian(ctype).check_options()
        return X, family, family.make_params({"mean": [[100.0] * 3, [103.0] * 3], "covariance": covariance[ctype]}, 2, 3)
    if name == "poisson":
        family = Poisson().check_options()
        return rng.poisson([[1.0, 6.0]], size=(n, 2)).astype(float), family, family.make_params(
            {"rate": [[1.0, 2.0], [3.0, 5.0]]}, 2, 2)
    if name == "binomial":
        family = Binomial(n_trials=10).check_options()
        return rng.binomial(10, [0.3, 0.7], size=(n, 2)).astype(float), family, family.make_params(
            {"prob": [[0.2, 0.5], [0.6, 0.8]]}, 2, 2)
    if name == "bernoulli":
        family = Bernoulli().check_options()
        return (rng.random((n, 3)) < [0.2, 0.5, 0.8]).astype(float), family, family.make_params(
            {"prob": [[0.1, 0.5, 0.7], [0.4, 0.6, 0.9]]}, 2, 3)
    family = Categorical(n_categories=3).check_options()
    return rng.integers(0, 3, (n, 2)).astype(float), family, family.make_params(
        {"probs": rng.dirichlet([1, 1, 1], size=(2, 2))}, 2, 2)


@pytest.mark.parametrize("name", ["gaussian-full", "gaussian-diag", "gaussian-tied", "gaussian-spherical",
                                  "poisson", "binomial", "bernoulli", "categorical"])
def test_em_on_torch_cpu_tensors_equals_em_on_numpy(name, rng):
    X, family, params = _case(name, rng)
    w = rng.uniform(0.5, 2.0, X.shape[0])
    on_numpy = run_em(family, RowBlocks(X, w, 128), np.full(2, 0.5), params, tol=0.0, max_iter=6)
    on_torch = run_em(family, RowBlocks(torch.as_tensor(X), torch.as_tensor(w), 128), np.full(2, 0.5), params,
                      tol=0.0, max_iter=6)
    np.testing.assert_allclose(on_torch.lower_bounds, on_numpy.lower_bounds, rtol=1e-10)
    for key, value in on_numpy.params.as_dict().items():
        np.testing.assert_allclose(on_torch.params.as_dict()[key], value, rtol=1e-9, atol=1e-12, err_msg=key)


class _Truncated(Poisson):
    """Poisson counts up to 100: a larger count has density zero under every component."""

    def log_prob(self, X, params, *, mask=None, rows=None):
        out = super().log_prob(X, params, mask=mask, rows=rows)
        out[X[:, 0] > 100] = -float("inf")  # numpy and torch alike
        return out


def test_a_row_without_density_is_named_on_torch_too(rng):
    X, _, params = _case("poisson", rng)
    X[7, 0] = 500.0
    with pytest.raises(ValueError, match=r"index 7\)"):
        run_em(_Truncated().check_options(), RowBlocks(torch.as_tensor(X), torch.ones(X.shape[0], dtype=torch.float64),
                                                       64), np.full(2, 0.5), params, tol=0.0, max_iter=1)


def test_torch_cpu_threads_are_held_at_one_while_em_runs_and_restored_after(rng, monkeypatch):
    """Row blocks run in discrim's threads on CPU tensors as on numpy arrays; torch's own intra-op pool
    is held at one thread meanwhile (its OpenMP threads spin at every small block operation, 40x
    slower beside other work on 2 cores) and gets its count back after."""
    from discrim.mixture import FiniteMixture
    from discrim.mixture import _em

    X, family, params = _case("gaussian-full", rng)
    seen = []
    e_step = _em._e_step_block

    def watched(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return e_step(*args, **kwargs)

    monkeypatch.setattr(_em, "_e_step_block", watched)
    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        fitted = {}
        for name, rows in (("numpy", X), ("torch", torch.as_tensor(X))):
            fitted[name] = FiniteMixture(Gaussian("full"), 2, n_threads=2, chunk_size=64, max_iter=5, tol=0.0,
                                         random_state=0).fit(rows)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(previous)
    assert seen and set(seen) == {1}
    np.testing.assert_allclose(fitted["torch"].lower_bounds_, fitted["numpy"].lower_bounds_, rtol=1e-10)
    assert FiniteMixture._block_threads(RowBlocks(torch.as_tensor(X), None, 64), 2) == 2
