"""Product families (a family per group of columns) and Categorical's per-feature counts and named categories."""

import warnings

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from discrim.distributions import Binomial, Categorical, Fixed, Gamma, Gaussian, Poisson, Product, StudentT, constraints
from discrim.mixture import FiniteMixture
from discrim.persistence import load_model, save_model


def _family():
    # columns out of order: the Gaussian takes 0 and 3
    return Product([("g", Gaussian("full"), [0, 3]), ("p", Poisson(), [1]), ("c", Categorical(n_categories=[3, 2]), [2, 4])])


_PARAMS = {
    "g__mean": [[0.0, 0.0], [5.0, 5.0]],
    "g__covariance": [np.eye(2), [[2.0, 0.5], [0.5, 1.0]]],
    "p__rate": [[1.0], [6.0]],
    "c__probs": [[[0.7, 0.2, 0.1], [0.4, 0.6, 0.0]], [[0.1, 0.2, 0.7], [0.9, 0.1, 0.0]]],
}


def _oracle(X, mask=None):
    """scipy's log-densities of every row under both components, the marginal over missing entries."""
    mask = np.ones(X.shape, bool) if mask is None else mask
    out = np.zeros((X.shape[0], 2))
    for k in range(2):
        for i, (x, m) in enumerate(zip(X, mask)):
            g = np.array([0, 3])[m[[0, 3]]]
            if g.size:
                sel = m[[0, 3]]
                out[i, k] += scipy.stats.multivariate_normal(np.asarray(_PARAMS["g__mean"][k])[sel],
                                                             np.asarray(_PARAMS["g__covariance"][k])[np.ix_(sel, sel)]
                                                             ).logpdf(x[g])
            if m[1]:
                out[i, k] += scipy.stats.poisson(_PARAMS["p__rate"][k][0]).logpmf(x[1])
            for j, col in enumerate([2, 4]):
                if m[col]:
                    out[i, k] += np.log(_PARAMS["c__probs"][k][j][int(x[col])])
    return out


def test_log_prob_is_the_sum_of_the_parts_densities(rng):
    fam = _family()
    p = fam.make_params(_PARAMS, 2, 5)
    X = fam.sample(p, [20, 20], rng)
    np.testing.assert_allclose(fam.log_prob(X, p), _oracle(X), rtol=1e-11)
    mask = rng.random(X.shape) < 0.6
    mask[0] = False
    np.testing.assert_allclose(fam.log_prob(np.where(mask, X, 0.0), p, mask=mask), _oracle(X, mask), rtol=1e-11,
                               atol=1e-12)


def test_sample_puts_each_part_in_its_columns(rng):
    fam = _family()
    p = fam.make_params(_PARAMS, 2, 5)
    X = fam.sample(p, [0, 20000], rng)
    np.testing.assert_allclose(X[:, [0, 3]].mean(axis=0), [5.0, 5.0], atol=0.05)
    assert X[:, 1].mean() == pytest.approx(6.0, rel=0.02)
    assert set(np.unique(X[:, 4])) == {0.0, 1.0}  # the second categorical column has 2 categories
    fam.check_data(X)


def test_parameters_count_and_shapes_are_the_parts():
    fam = _family()
    assert fam.n_parameters(5, 2) == Gaussian("full").n_parameters(2, 2) + Poisson().n_parameters(1, 2) + 2 * (2 + 1)
    assert fam.n_parameters(5, 2) == 2 * sum(fam.param_sizes(5).values())
    assert fam.param_shapes(2, 5) == {"g__mean": (2, 2), "g__covariance": (2, 2, 2), "p__rate": (2, 1),
                                      "c__probs": (2, 2, 3)}


@pytest.mark.parametrize("masked", [False, True])
def test_statistics_are_additive_and_the_m_step_is_the_parts(masked, rng):
    fam = _family()
    p = fam.make_params(_PARAMS, 2, 5)
    X = fam.sample(p, [45, 45], rng)
    mask = rng.random(X.shape) < 0.7 if masked else None
    Xm = X if mask is None else np.where(mask, X, 0.0)
    resp = rng.dirichlet([1.0, 1.0], size=90)
    w = rng.uniform(0.2, 3.0, size=90)
    whole = fam.params_from_stats(fam.suff_stats(Xm, resp, w, mask=mask, params=p), current=p).as_dict()
    parts = sum(fam.suff_stats(Xm[s], resp[s], w[s], mask=None if mask is None else mask[s], params=p)
                for s in (slice(0, 13), slice(13, 61), slice(61, 90)))
    blocked = fam.params_from_stats(parts, current=p).as_dict()
    for name in whole:
        np.testing.assert_allclose(blocked[name], whole[name], rtol=1e-10, atol=1e-12, err_msg=name)
    m = None if mask is None else mask[:, [1]]
    rate = Poisson().fit_params(Xm[:, [1]], resp, w, mask=m).rate
    np.testing.assert_allclose(whole["p__rate"], rate, rtol=1e-13)


def test_em_recovers_a_simulated_mixture_with_missing_values(tmp_path):
    rng = np.random.default_rng(0)
    fam = _family()
    truth = fam.make_params(_PARAMS, 2, 5)
    X = fam.sample(truth, [3000, 3000], rng)
    X[rng.random(X.shape) < 0.15] = np.nan
    fm = FiniteMixture(fam, 2, random_state=0, tol=1e-9, max_iter=500).fit(X)
    assert np.all(np.diff(fm.lower_bounds_) > -1e-10)
    order = np.argsort(fm.params_["g__mean"][:, 0])
    for name, value in truth.as_dict().items():
        np.testing.assert_allclose(fm.params_[name][order], value, atol=0.15, err_msg=name)
    save_model(fm, tmp_path / "product.skops")
    loaded = load_model(tmp_path / "product.skops")
    np.testing.assert_array_equal(loaded.score_samples(X), fm.score_samples(X))
    assert loaded.bic(X) == fm.bic(X)
    completed = fm.impute(X[:20])
    assert not np.isnan(completed).any()


def test_string_categories_go_through_encode(rng):
    fam = Product([("size", Gamma(), [0]), ("colour", Categorical(categories=[["red", "green", "blue"]]), [1])])
    colours = np.array(["red", "green", "blue"], dtype=object)
    z = rng.integers(0, 2, 400)
    raw = np.empty((400, 2), dtype=object)
    raw[:, 0] = rng.gamma(np.where(z == 0, 2.0, 30.0), 1.0)
    raw[:, 1] = np.where(z == 0, colours[rng.integers(0, 2, 400)], "blue")
    raw[0, 1] = None  # missing
    X = fam.encode(raw)
    assert np.isnan(X[0, 1]) and X.dtype == np.float64
    fm = FiniteMixture(fam, 2, random_state=0).fit(X)
    draws, _ = fm.sample(5)
    values = fam.decode(draws)
    assert set(values[:, 1]) <= {"red", "green", "blue"}
    with pytest.raises(ValueError, match="'purple' is not one of categories"):
        fam.encode([[1.0, "purple"]])
    with pytest.raises(ValueError, match="must be numeric"):
        Product([("a", Poisson(), [0]), ("b", Poisson(), [1])]).encode([["x", 1]])
    # the strings given to the mixture itself: an error that says how to encode them
    with pytest.raises(ValueError, match=r"not numbers \(could not convert string.*Encode categorical columns first"):
        FiniteMixture(fam, 2, random_state=0).fit(raw)
    with pytest.raises(ValueError, match="Encode categorical columns first"):
        fm.predict(raw)


def test_per_row_data_follow_their_part(rng):
    n = rng.integers(1, 10, size=60)
    fam = Product([("b", Binomial(n_trials=n), [0]), ("g", Gaussian("diag"), [1])])
    X = np.c_[rng.binomial(n, 0.3), rng.normal(size=60)]
    fm = FiniteMixture(fam, 1).fit(X)
    want = X[:, 0].sum() / n.sum()
    assert fm.params_["b__prob"][0, 0] == pytest.approx(want, rel=1e-12)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 3))
def test_em_never_decreases_the_likelihood(seed, k):
    rng = np.random.default_rng(seed)
    fam = Product([("t", StudentT("diag"), [1, 2]), ("c", Categorical(n_categories=3), [0])])
    X = np.c_[rng.integers(0, 3, 80), rng.standard_t(3, size=(80, 2))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fm = FiniteMixture(fam, k, random_state=seed, tol=0, max_iter=15).fit(X)
    lb = fm.lower_bounds_
    assert np.all(np.diff(lb) >= -1e-9 * np.maximum(1.0, np.abs(lb[1:])) - 1e-5), np.diff(lb).min()


@pytest.mark.parametrize("families, match", [
    ([], "non-empty list"),
    ([("a", Poisson(), [0]), ("a", Poisson(), [1])], "distinct"),
    ([("a", Poisson(), [0]), ("b", Poisson(), [0])], "each in exactly one group"),
    ([("a", Poisson(), [0, 2])], "0 .. n_features - 1"),
    ([("a", "poisson", [0])], "not a component family"),
    ([("a__b", Poisson(), [0])], "without '__'"),
    ([("a", Poisson(), [])], "columns"),
])
def test_bad_specifications(families, match):
    with pytest.raises(ValueError, match=match):
        Product(families).check_options()


def test_wrong_width_and_unknown_parameters():
    fam = Product([(Poisson(), [0]), (Gaussian("diag"), [1])])  # named "0" and "1"
    with pytest.raises(ValueError, match="X has 3 columns but Product's families cover 2"):
        FiniteMixture(fam, 1).fit(np.ones((5, 3)))
    with pytest.raises(ValueError, match="unknown"):
        fam.make_params({"0__rate": [[1.0]], "0__lam": 1}, 1, 2)
    with pytest.raises(ValueError, match="part '1'.*missing"):
        fam.make_params({"0__rate": [[1.0]]}, 1, 2)


# --- Categorical: a count per feature and named categories --------------------------------------------


def test_categorical_per_feature_counts(rng):
    fam = Categorical(n_categories=[2, 4])
    X = np.c_[rng.integers(0, 2, 200), rng.integers(0, 4, 200)].astype(float)
    resp = rng.dirichlet([1.0, 1.0], size=200)
    p = fam.fit_params(X, resp)
    assert p.probs.shape == (2, 2, 4)
    np.testing.assert_array_equal(p.probs[:, 0, 2:], 0.0)
    np.testing.assert_allclose(p.probs[:, 0, :2].sum(axis=1), 1.0)
    assert fam.n_parameters(2, 2) == 2 * (1 + 3)
    with pytest.raises(ValueError, match=r"between 0 and \[1, 3\]"):
        fam.check_data(np.array([[2.0, 0.0]]))
    with pytest.raises(ValueError, match="one entry per column"):
        fam.check_data(np.zeros((1, 3)))
    empty = fam.params_from_stats(fam.suff_stats(X, np.c_[np.ones(200), np.zeros(200)]))
    np.testing.assert_allclose(empty.probs[1], [[0.5, 0.5, 0, 0], [0.25] * 4])


def test_categorical_probabilities_beyond_a_features_count_are_refused():
    """Codes beyond a feature's categories: their probability left the feature's own summing below one.

    Categorical([2, 3]) took probs [0.3, 0.3, 0.4] for its 2-category feature (from params_init, make_params
    or Fixed): the density summed to 0.6 over that feature's categories, the mean log-likelihood fell by
    0.51 nats a row (-2.289 against -1.778) and draws put code 2 there, which check_data refuses.
    """
    fam = Categorical(n_categories=[2, 3])
    probs = [[0.3, 0.3, 0.4], [0.2, 0.3, 0.5]]
    match = r"'probs'\] must be simplex .*0 beyond the count of categories of each feature, \[2, 3\]"
    with pytest.raises(ValueError, match=match.replace(r"'probs'\]", "parameter 'probs'")):
        fam.make_params({"probs": [probs]}, 1, 2)
    with pytest.raises(ValueError, match=match.replace(r"'probs'\]", r"params\['probs'\]")):
        FiniteMixture(Fixed(fam, {"probs": probs}), 1).fit(np.array([[0.0, 2.0], [1.0, 0.0]]))
    proper = fam.make_params({"probs": [[[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]]}, 1, 2)  # the feature's own simplex
    np.testing.assert_allclose(np.exp(fam.log_prob(np.array([[0.0, 2.0]]), proper)), [[0.25]])
    assert Categorical(n_categories=[3, 3]).arg_constraints["probs"] is constraints.simplex


class _HighUniforms:
    """A generator whose uniforms all lie above 1 - 1e-7: draws at the top of every feature's cumulative sum."""

    def random(self, size):
        return np.full(size, 1.0 - 1e-8)


def test_categorical_draws_stay_within_each_features_categories():
    """Probabilities that sum to 1 less a rounding (the simplex check allows 1e-6) left a uniform above a
    feature's total, which drew the widest feature's last code: code 2 on a 2-category feature (check_data
    refuses it), or a category of probability 0."""
    fam = Categorical(n_categories=[2, 3])
    params = fam.make_params({"probs": [[[0.5, 0.5 - 1e-7, 0.0], [0.6, 0.4 - 1e-7, 0.0]]]}, 1, 2)
    draws = fam.sample(params, [4], _HighUniforms())
    np.testing.assert_array_equal(draws, [[1.0, 1.0]] * 4)  # each feature's last category of positive probability
    fam.check_data(draws, None)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_categories": [2, 1]}, "n_categories"),
    ({"categories": [["a"]]}, "at least 2 distinct"),
    ({"categories": [["a", "a"]]}, "lists 'a' more than once"),
    ({"categories": "ab"}, "one list of category values per feature"),
    ({"categories": [["a", "b"]], "n_categories": 3}, "disagrees"),
])
def test_categorical_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Categorical(**kwargs).check_options()


def test_categorical_encode_decode_round_trip():
    fam = Categorical(categories=[["a", "b", "c"], [10, 20]])
    raw = np.array([["c", 20], ["a", None], ["b", 10]], dtype=object)
    codes = fam.encode(raw)
    np.testing.assert_array_equal(codes, [[2, 1], [0, np.nan], [1, 0]])
    np.testing.assert_array_equal(fam.decode(codes), raw)
    assert fam.param_shapes(1, 2) == {"probs": (1, 2, 3)}


def test_an_unknown_category_is_named_by_its_column_in_the_users_table():
    family = Product([("g", Gaussian(), [0]), ("c", Categorical(categories=[["a", "b", "c"]]), [1])])
    with pytest.raises(ValueError, match=r"X\[0, 1\] = 'zz' is not one of categories\[0\] = \['a', 'b', 'c'\] of part 'c'"):
        family.encode(np.array([[0.5, "zz"]], dtype=object))


def test_encode_reads_pandas_nullable_columns_with_their_gaps():
    """``pandas.NA`` in an Int64, Float64 or boolean column is a missing value, as None and NaN are (it was
    refused as a non-numeric column, naming categories the family does not take)."""
    import pandas as pd

    frame = pd.DataFrame({"x": pd.array([1.5, None, 2.0], dtype="Float64"),
                          "n": pd.array([1, pd.NA, 3], dtype="Int64"),
                          "flag": pd.array([True, None, False], dtype="boolean"),
                          "c": ["a", "b", None]})
    family = Product([(Gaussian(), [0]), (Poisson(), [1]), (Poisson(), [2]), (Categorical(categories=[["a", "b"]]), [3])])
    np.testing.assert_array_equal(family.encode(frame),
                                  [[1.5, 1.0, 1.0, 0.0], [np.nan, np.nan, np.nan, 1.0], [2.0, 3.0, 0.0, np.nan]])
