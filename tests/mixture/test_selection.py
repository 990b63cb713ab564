"""Tests of select_mixture: the BIC/AIC table, the chosen model and its agreement with FiniteMixture."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joblib import parallel_config

from discrim.distributions import Gaussian, Poisson
from discrim.mixture import FiniteMixture, gaussian_models, select_mixture
from discrim.mixture._selection import FitFailedWarning, MixtureSelection

MCLUST = {
    "VVV": Gaussian(covariance_type="full"),
    "VII": Gaussian(covariance_type="spherical"),
}


@pytest.fixture
def three_blobs(rng):
    centres = np.array([[0.0, 0.0], [8.0, 0.0], [4.0, 8.0]])
    return np.vstack([rng.normal(c, 0.8, size=(70, 2)) for c in centres])


def test_picks_the_true_number_of_components(three_blobs):
    result = select_mixture(three_blobs, MCLUST, range(1, 6), random_state=0, n_init=2)
    assert isinstance(result, MixtureSelection)
    assert result.best_params["n_components"] == 3
    assert result.table.shape[0] == 2 * 5
    assert list(result.table["family"].unique()) == ["VVV", "VII"]
    best = result.table.iloc[result.best_index]
    assert best["bic"] == result.table["bic"].min()
    assert np.asarray(result.best_estimator.weights_).shape == (3,)


def test_table_criteria_equal_finite_mixture_and_the_formula(three_blobs):
    X = three_blobs
    n, d = X.shape
    result = select_mixture(X, {"VVV": Gaussian(covariance_type="full")}, [1, 2, 3], random_state=1)
    for i, est in enumerate(result.estimators):
        row = result.table.iloc[i]
        k = row["n_components"]
        assert np.isclose(row["bic"], est.bic(X), rtol=1e-12)
        assert np.isclose(row["aic"], est.aic(X), rtol=1e-12)
        log_lik = np.sum(est.score_samples(X))
        assert np.isclose(row["log_likelihood"], log_lik, rtol=1e-12)
        p = k * (d + d * (d + 1) // 2) + (k - 1)  # means, covariances, free weights
        assert row["n_parameters"] == p
        assert np.isclose(row["bic"], -2 * log_lik + p * np.log(n), rtol=1e-10)
        assert np.isclose(row["aic"], -2 * log_lik + 2 * p, rtol=1e-10)



def test_noise_component_cells_count_its_weight_and_volume(three_blobs):
    # with noise, weights_ ends with the noise's weight and V is estimated: mclust's count
    # nMclParams(noise=TRUE) = the components' parameters + k free weights + 1
    X = np.vstack([three_blobs, np.random.default_rng(3).uniform(-4, 12, size=(20, 2))])
    n, d = X.shape
    result = select_mixture(X, {"VVV": Gaussian(covariance_type="full")}, [1, 2, 3], noise=True, random_state=0)
    for i, est in enumerate(result.estimators):
        row = result.table.iloc[i]
        k = row["n_components"]
        assert row["error"] == ""
        assert np.asarray(est.weights_).shape == (k + 1,)
        assert row["n_parameters"] == k * (d + d * (d + 1) // 2) + k + 1
        assert np.isclose(row["bic"], est.bic(X), rtol=1e-12)
        assert np.isclose(row["min_rows"], np.min(est.weights_[:k]) * n, rtol=1e-12)
    assert result.best_params["n_components"] == 3

def test_degenerate_fits_are_marked_and_never_chosen(rng):
    # Three tight groups plus one outlier far away: with four full-covariance components, one
    # component collapses onto the outlier, whose likelihood is then bounded only by reg_covar.
    X = np.vstack([rng.normal(c, 0.5, size=(60, 2)) for c in ([8.0, 0.0], [0.0, 8.0], [8.0, 8.0])])
    X = np.vstack([X, [[30.0, -30.0]]])
    result = select_mixture(X, {"VVV": Gaussian(covariance_type="full")}, [3, 4], random_state=0)
    table = result.table
    np.testing.assert_allclose(
        table["min_rows"], [np.min(e.weights_) * X.shape[0] for e in result.estimators], rtol=1e-12
    )
    assert list(table["degenerate"]) == list(table["min_rows"] < 3)  # d + 1 rows for a full covariance
    assert not table["degenerate"].iloc[result.best_index]
    # Here the collapsed fit has the lower BIC, so it would have won without the mark.
    assert table["degenerate"].iloc[1] and table["bic"].iloc[1] < table["bic"].iloc[0]
    assert result.best_index == 0


def test_aic_criterion_and_int_range(three_blobs):
    result = select_mixture(three_blobs, [Gaussian(covariance_type="diag")], 4, criterion="aic", random_state=0)
    assert result.criterion == "aic"
    assert list(result.table["n_components"]) == [1, 2, 3, 4]
    assert result.table["family"].iloc[0] == "Gaussian(covariance_type='diag')"
    assert result.best_index == int(np.argmin(result.table["aic"]))


def test_list_labels_show_default_options():
    X = np.arange(20.0)[:, None] % 7
    result = select_mixture(X, [Gaussian(), Poisson()], [1], random_state=0)
    assert list(result.table["family"]) == ["Gaussian(covariance_type='full')", "Poisson()"]


def test_result_does_not_depend_on_n_jobs(three_blobs):
    serial = select_mixture(three_blobs, MCLUST, [1, 2, 3], random_state=5)
    with parallel_config(backend="threading"):
        parallel = select_mixture(three_blobs, MCLUST, [1, 2, 3], random_state=5, n_jobs=2)
    np.testing.assert_array_equal(serial.table["bic"], parallel.table["bic"])


def test_same_random_state_same_table(three_blobs):
    a = select_mixture(three_blobs, MCLUST, [2, 3], random_state=11)
    b = select_mixture(three_blobs, MCLUST, [2, 3], random_state=11)
    np.testing.assert_array_equal(a.table["log_likelihood"], b.table["log_likelihood"])


def test_discrete_family_and_weighted_log_likelihood(rng):
    X = np.concatenate([rng.poisson(2.0, 150), rng.poisson(15.0, 150)])[:, None].astype(float)
    w = rng.integers(1, 3, size=X.shape[0]).astype(float)
    result = select_mixture(X, {"Poisson": Poisson()}, [1, 2, 3], sample_weight=w, random_state=0)
    assert result.best_params == {"family": "Poisson", "n_components": 2}
    one = FiniteMixture(Poisson(), n_components=1).fit(X, sample_weight=w)
    assert np.isclose(result.table["log_likelihood"].iloc[0], np.sum(w * one.score_samples(X)), rtol=1e-10)


def test_failed_cells_hold_nan_and_warn(rng):
    X = np.repeat(rng.normal(size=(4, 1)), 2, axis=0)  # 8 rows, 4 distinct: 6 components cannot be fitted
    with pytest.warns(FitFailedWarning, match="n_components=6"):
        result = select_mixture(X, [Gaussian(covariance_type="full")], [1, 6], random_state=0)
    assert np.isnan(result.table["bic"].iloc[1])
    assert result.table["error"].iloc[1]
    assert result.best_index == 0
    assert result.estimators[1] is None


def test_markdown_rendering_marks_the_best_row(three_blobs):
    result = select_mixture(three_blobs, MCLUST, [1, 3], random_state=0)
    text = result.to_markdown()
    lines = text.splitlines()
    assert lines[0].startswith("| family | n_components | n_parameters | log_likelihood | bic | aic")
    marked = [line for line in lines if line.endswith("| * |")]
    assert len(marked) == 1 and "| 3 |" in marked[0]
    assert "lower is better" in text
    assert str(result) == text


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(family_options=[], n_components_range=[1]), ValueError, "family_options is empty"),
        (dict(family_options=["gaussian"], n_components_range=[1]), TypeError, "not a component family"),
        (dict(family_options=[Poisson(), Poisson()], n_components_range=[1]), ValueError, "pass a dict"),
        (dict(family_options=[Poisson()], n_components_range=[]), ValueError, "n_components_range is empty"),
        (dict(family_options=[Poisson()], n_components_range=[0, 1]), ValueError, "ints >= 1"),
        (dict(family_options=[Poisson()], n_components_range=[1], criterion="hqc"), ValueError, "criterion"),
        (dict(family_options=[Poisson()], n_components_range=[1], n_components=2), TypeError, "n_components_range"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, error, match):
    X = np.arange(10.0)[:, None]
    with pytest.raises(error, match=match):
        select_mixture(X, **kwargs)


@pytest.mark.parametrize("family_options, where", [
    ("VVV", "family_options is 'VVV'"),
    ([Poisson(), "VVV"], r"family_options\[1\] is 'VVV'"),
    ({"counts": Poisson(), "full": "VVV"}, r"family_options\['full'\] is 'VVV'"),
])
def test_a_non_family_is_named_as_the_user_wrote_it(family_options, where):
    """The error names the argument as written (position or key), not a label built from a family's repr.

    A string was shown as ``family_options['str()']``, a label that exists nowhere in the call;
    an mclust model name also points to gaussian_models, which takes such names.
    """
    X = np.arange(10.0)[:, None]
    with pytest.raises(TypeError, match=rf"^{where}, not a component family") as err:
        select_mixture(X, family_options, [1])
    assert "gaussian_models('VVV')" in str(err.value)


@pytest.mark.filterwarnings("ignore::discrim.mixture._selection.FitFailedWarning")  # tiny samples
@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n=st.integers(8, 60),
    d=st.integers(1, 3),
    ks=st.lists(st.integers(1, 4), min_size=1, max_size=3, unique=True),
    criterion=st.sampled_from(["bic", "aic", "icl"]),
)
def test_table_invariants(seed, n, d, ks, criterion):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, size=d)
    families = {"VVV": Gaussian(covariance_type="full"), "VII": Gaussian(covariance_type="spherical")}
    result = select_mixture(X, families, ks, criterion=criterion, random_state=seed)
    table = result.table
    # grid order, as given; on one feature VVV and VII are one model, mclust's V
    assert list(table["n_components"]) == ks * (1 if d == 1 else 2)
    ok = table["error"] == ""
    p, ll = table["n_parameters"][ok], table["log_likelihood"][ok]
    np.testing.assert_allclose(table["bic"][ok], -2 * ll + p * np.log(n), rtol=1e-9)
    np.testing.assert_allclose(table["aic"][ok], -2 * ll + 2 * p, rtol=1e-9)
    usable = table[ok & ~table["degenerate"]]
    if len(usable):
        assert table[criterion].iloc[result.best_index] == usable[criterion].min()


def _row_threads_in_task(i):
    from discrim.utils._threads import row_threads

    return row_threads()


def test_parallel_fits_share_the_cores_instead_of_oversubscribing(three_blobs, monkeypatch):
    # In a worker of the parallel layer, each fit's E-step threads follow the worker's share of
    # the BLAS threads (n_threads=None), which the layer sets to cores // workers. The fork pool's
    # workers, as in a process without other threads (earlier tests leave idle ones, with which the
    # layer starts joblib's workers, which cannot import this test module's task).
    from joblib import cpu_count

    from discrim.utils import _parallel
    from discrim.utils._parallel import run_unordered

    monkeypatch.setattr(_parallel, "_no_other_threads", lambda: True)

    seen = set(run_unordered(_row_threads_in_task, [(i,) for i in range(4)], n_jobs=2))
    assert seen == {max(1, cpu_count() // 2)}
    result = select_mixture(three_blobs, MCLUST, [1, 2], random_state=0, n_jobs=2)
    assert {m.n_threads for m in result.estimators} == {None}


def test_a_data_frame_names_the_features_of_every_fitted_mixture():
    import warnings

    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(60, 2)), columns=["height", "width"])
    result = select_mixture(X, {"VVV": Gaussian("full")}, [1, 2], random_state=0)
    for estimator in result.estimators:
        assert list(estimator.feature_names_in_) == ["height", "width"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scikit-learn warns when names go missing between fit and predict
        result.best_estimator.predict(X)


def test_invalid_fit_parameters_still_fail_every_cell(three_blobs):
    # the grid validates each family's parameters once and then skips scikit-learn's validation in
    # the fits: a parameter that fails is still reported by every cell, as before
    X = three_blobs
    with pytest.warns(FitFailedWarning, match="InvalidParameterError"):
        with pytest.raises(ValueError, match="every fit in the grid failed"):
            select_mixture(X, {"VVV": Gaussian("full")}, [1, 2], tol=-1.0, random_state=0)


def test_data_every_cell_refuses_is_reported_without_advice_about_the_fits(three_blobs):
    # negative values under a Poisson family fail every count the same way: the advice to try
    # fewer components or a larger reg_covar would mislead, so the family's own message stands alone
    from discrim.distributions import Poisson

    with pytest.warns(FitFailedWarning):
        with pytest.raises(ValueError, match="failed with the same error: ValueError: X is outside the support") as info:
            select_mixture(three_blobs, {"poisson": Poisson()}, [1, 2, 3], random_state=0)
    assert "reg_covar" not in str(info.value) and ".." not in str(info.value)


def test_skipped_validation_gives_the_validated_fits(three_blobs):
    # a cell fitted by select_mixture equals the same FiniteMixture fitted on its own (which validates)
    X = three_blobs
    result = select_mixture(X, {"VVV": Gaussian("full"), "VII": Gaussian("spherical")}, [2, 3], random_state=0)
    for i, estimator in enumerate(result.estimators):
        alone = FiniteMixture(**estimator.get_params(deep=False)).fit(X)
        assert alone.lower_bound_ == estimator.lower_bound_
        np.testing.assert_array_equal(alone.weights_, estimator.weights_)


def test_a_candidate_held_only_by_reg_covar_on_tied_values_is_not_chosen():
    # iris setosa: 29 rows share Petal.Width = 0.2. EVE, EVI and EVV with 3 components put a
    # component on them whose variance only reg_covar holds (3e-6): mclust reports those cells as
    # NA (singular) and chooses EEE,2; discrim chose EVE,3 with a CollapsingComponentWarning
    import warnings

    from sklearn.datasets import load_iris

    from discrim.exceptions import CollapsingComponentWarning
    from discrim.mixture import gaussian_models

    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        warnings.simplefilter("error", CollapsingComponentWarning)
        result = select_mixture(X[y == 0], gaussian_models(), [1, 2, 3], init_params="hierarchical", random_state=0)
    assert result.best_params == {"family": "EEE", "n_components": 2}
    held = result.table[result.table.degenerate_reason == "variance at reg_covar"]
    assert {"EVE"} <= set(held.family) and (held.n_components == 3).all() and held.degenerate.all()


def test_on_one_feature_the_models_are_mclusts_e_and_v():
    # 14 identical columns on one feature (EII = EEI = ... there): mclust fits and prints E and V.
    # Oracle: mclust 6.0.0, mclustBIC(faithful$waiting, G = 1:3, control = emControl(tol = c(1e-12,
    # sqrt(eps)))): E -2201.789205 -2090.426729 -2101.638337, V -2201.789205 -2096.032510
    # -2111.837640 (its sign); Mclust chooses E,2
    import warnings
    from pathlib import Path

    import pandas as pd

    from discrim.mixture import gaussian_models

    X = pd.read_csv(Path(__file__).parent / "data" / "faithful.csv")[["waiting"]].to_numpy(dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = select_mixture(X, gaussian_models(), [1, 2, 3], init_params="hierarchical", random_state=0,
                                tol=1e-9, max_iter=10000)
    table = result.criterion_table()
    assert list(table.columns) == ["E", "V"] and result.best_params == {"family": "E", "n_components": 2}
    np.testing.assert_allclose(-table.to_numpy(), [[-2201.789205, -2201.789205], [-2090.426729, -2096.032510],
                                                   [-2101.638337, -2111.837640]], rtol=1e-6)
    with pytest.raises(ValueError, match="'V' is mclust's name of a model of one feature; X has 2"):
        FiniteMixture(Gaussian("V"), 2).fit(np.random.default_rng(0).normal(size=(50, 2)))


def test_a_family_with_invalid_options_is_refused_at_once_by_its_label():
    # an unknown model name failed every cell with a warning each, then an error advising fewer
    # components or a larger reg_covar
    X = np.random.default_rng(0).normal(size=(60, 2))
    with pytest.raises(ValueError, match=r"family 'bad': covariance_type must be one of .*got 'X'"):
        select_mixture(X, {"EII": Gaussian("EII"), "bad": Gaussian("X")}, [1, 2])


def test_the_chosen_model_refits_on_other_rows_with_its_own_parameters(three_blobs):
    # with the hierarchical start every cell kept the grid's partition of X as init_params (a
    # 150-entry array in its repr), so the chosen model could not be refitted on other rows
    from sklearn.base import clone

    X = three_blobs
    result = select_mixture(X, [Gaussian()], [2, 3], init_params="hierarchical", random_state=0)
    assert result.best_estimator.get_params()["init_params"] == "hierarchical"
    refit = clone(result.best_estimator).fit(X[: X.shape[0] // 2])
    assert refit.n_components == result.best_params["n_components"]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_the_grid_warns_of_a_constant_feature_once(rng, n_jobs):
    # every cell's fit warned in the same words: 28 times on 14 models x 2 counts
    X = np.c_[rng.normal(size=(100, 2)), np.ones(100)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        select_mixture(X, gaussian_models(), [1, 2], random_state=0, n_jobs=n_jobs)
    constant = [w for w in caught if "constant over their observed values" in str(w.message)]
    assert len(constant) == 1 and "index 2" in str(constant[0].message)


@pytest.mark.parametrize("n_jobs", [0, "2", 1.5, True])
def test_n_jobs_is_checked_by_name(rng, n_jobs):
    # joblib's "n_jobs == 0 in Parallel has no meaning", or "'<' not supported between 'str' and 'int'"
    from discrim.mixture import bootstrap_lrt

    X = rng.normal(size=(30, 2))
    with pytest.raises(ValueError, match="n_jobs must be a non-zero int"):
        select_mixture(X, Gaussian(), [1, 2], n_jobs=n_jobs)
    with pytest.raises(ValueError, match="n_jobs must be a non-zero int"):
        bootstrap_lrt(X, Gaussian(), 2, n_boot=3, n_jobs=n_jobs)


def test_mixtures_take_a_generator_as_random_state(rng):
    # FiniteMixture and MixtureDiscriminant refused one, which every other estimator and function takes
    from discrim.discriminant import MixtureDiscriminant

    X, y = rng.normal(size=(60, 2)), np.repeat([0, 1], 30)
    fits = [FiniteMixture(Gaussian(), 2, random_state=np.random.default_rng(5)).fit(X) for _ in range(2)]
    np.testing.assert_array_equal(fits[0].means_, fits[1].means_)
    assert MixtureDiscriminant(Gaussian(), 2, random_state=np.random.default_rng(5)).fit(X, y).classes_.tolist() == [0, 1]


def test_scale_warnings_have_a_category_of_their_own(rng):
    # they were bare UserWarnings, which a user could silence only by their text
    from discrim.discriminant import MixtureDiscriminant
    from discrim.exceptions import DataScaleWarning
    from discrim.prototype import PrototypeClassifier

    X = np.c_[rng.normal(size=(60, 2)), np.ones(60)]
    with pytest.warns(DataScaleWarning, match="constant over their observed values"):
        FiniteMixture(Gaussian(), 1).fit(X)
    with pytest.warns(DataScaleWarning, match="constant within a class"):
        MixtureDiscriminant(Gaussian(), 1).fit(X, np.repeat([0, 1], 30))
    with pytest.warns(DataScaleWarning, match="ended without prototypes"):
        PrototypeClassifier(n_batches=1, random_state=0).fit(rng.normal(size=(60, 2)) * 1e4, np.repeat([0, 1], 30))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        select_mixture(X, Gaussian(), [1], random_state=0)
    constant = [w.category for w in caught if "constant over" in str(w.message)]
    assert constant == [DataScaleWarning]


def test_a_filter_on_scikit_learns_fit_failed_warning_catches_discrims(rng):
    # discrim's FitFailedWarning shared the name, not the class: sklearn's filter let it through
    import sklearn.exceptions
    from sklearn.exceptions import ConvergenceWarning

    X = np.repeat([[0.0, 0.0], [5.0, 5.0]], 3, axis=0)  # two distinct rows: three components fail
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", sklearn.exceptions.FitFailedWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        result = select_mixture(X, Gaussian(), [1, 3], random_state=0)
    assert result.table["error"].iloc[1] != ""
