"""Every estimator on Dask, through a dask.distributed cluster: the in-memory fit, for any chunking.

The oracle is the in-memory fit of the same rows from the same start: EM starts identically (all
rows seed k-means++ when they number at most 2^17), the class moments are merged exactly, and the
prototype fit draws the same candidates; only the order of sums differs.
"""

import functools
import threading
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from discrim.discriminant import LinearDiscriminant, MixtureDiscriminant, QuadraticDiscriminant
from discrim.distributions import Bernoulli, Binomial, Categorical, Gaussian, Poisson, Product
from discrim.mixture import FiniteMixture, select_mixture
from discrim.prototype import PrototypeClassifier

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.dask, pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")]


@pytest.fixture(scope="module")
def client():
    """Two in-process workers of one thread: a real scheduler, without processes to start."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def _family_data(name, rng):
    n = 240
    if name.startswith("gaussian"):
        X = np.concatenate([rng.normal(size=(n // 2, 3)), rng.normal(size=(n // 2, 3)) * 2 + 4]) + 50
        return Gaussian(name.split("-")[1]), X
    if name == "poisson":
        return Poisson(), rng.poisson([[1.0, 6.0]], size=(n, 2)).astype(float)
    if name == "binomial":
        return Binomial(n_trials=12), rng.binomial(12, [0.3, 0.7], size=(n, 2)).astype(float)
    if name == "bernoulli":
        return Bernoulli(), (rng.random((n, 4)) < [0.2, 0.5, 0.7, 0.9]).astype(float)
    return Categorical(n_categories=3), rng.integers(0, 3, (n, 2)).astype(float)


FAMILIES = ["gaussian-full", "gaussian-diag", "gaussian-tied", "gaussian-spherical", "poisson", "binomial",
            "bernoulli", "categorical"]


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("chunk", [1, 37, 240])
def test_finite_mixture_on_dask_equals_the_in_memory_fit(client, name, chunk, rng):
    family, X = _family_data(name, rng)
    if chunk == 1:
        X = X[:40]  # chunks of one row: fewer rows
    w = rng.uniform(0.5, 2.0, X.shape[0])
    options = dict(n_components=2, random_state=3, tol=0.0, max_iter=6)
    in_memory = FiniteMixture(family, **options).fit(X, sample_weight=w)
    on_dask = FiniteMixture(family, **options).fit(da.from_array(X, chunks=(chunk, -1)),
                                                   sample_weight=da.from_array(w, chunks=chunk))
    assert _rel(on_dask.lower_bounds_, in_memory.lower_bounds_) < 1e-10
    np.testing.assert_allclose(on_dask.weights_, in_memory.weights_, rtol=1e-9)
    proba = on_dask.predict_proba(da.from_array(X, chunks=(chunk, -1)))
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), in_memory.predict_proba(X), atol=1e-9)
    np.testing.assert_allclose(on_dask.score_samples(da.from_array(X, chunks=(chunk, -1))).compute(),
                               in_memory.score_samples(X), rtol=1e-10)
    assert on_dask.score(da.from_array(X, chunks=(chunk, -1))) == pytest.approx(in_memory.score(X), rel=1e-12)


def test_finite_mixture_from_a_dask_dataframe_keeps_the_feature_names(client, rng):
    import pandas as pd

    X = pd.DataFrame(rng.normal(size=(300, 2)) + [[0, 5]], columns=["height", "width"])
    frame = dd.from_pandas(X, npartitions=4)
    fm = FiniteMixture(Gaussian("diag"), 2, random_state=0, tol=0.0, max_iter=4).fit(frame)
    reference = FiniteMixture(Gaussian("diag"), 2, random_state=0, tol=0.0, max_iter=4).fit(X)
    assert list(fm.feature_names_in_) == ["height", "width"]
    assert _rel(fm.lower_bounds_, reference.lower_bounds_) < 1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "X does not have valid feature names" from the chunks
        labels = fm.predict(frame)
        assert isinstance(labels, da.Array)
        np.testing.assert_array_equal(labels.compute(), reference.predict(X))


def test_a_large_dask_x_is_seeded_from_a_sample_and_fits_as_well(client, rng, monkeypatch):
    import discrim.mixture.finite_mixture as fm_module

    monkeypatch.setattr(fm_module, "_INIT_SAMPLE_ROWS", 200)  # fewer rows than X: seeding from a sample
    X = np.concatenate([rng.normal(size=(600, 2)), rng.normal(size=(600, 2)) + 6])
    fm = FiniteMixture(Gaussian(), 2, random_state=0, tol=1e-8).fit(da.from_array(X, chunks=(250, -1)))
    reference = FiniteMixture(Gaussian(), 2, random_state=0, tol=1e-8).fit(X)
    assert fm.lower_bound_ == pytest.approx(reference.lower_bound_, rel=1e-6)  # the same optimum
    np.testing.assert_allclose(np.sort(fm.params_["mean"][:, 0]), np.sort(reference.params_["mean"][:, 0]), atol=1e-5)


def test_select_mixture_on_dask_gives_the_in_memory_table(client, rng):
    X = np.concatenate([rng.normal(size=(150, 2)), rng.normal(size=(150, 2)) * 0.5 + 4])
    families = {"VVV": Gaussian("full"), "VII": Gaussian("spherical")}
    in_memory = select_mixture(X, families, range(1, 4), random_state=0)
    on_dask = select_mixture(da.from_array(X, chunks=(70, -1)), families, range(1, 4), random_state=0)
    assert on_dask.best_params == in_memory.best_params
    for column in ("log_likelihood", "bic", "aic"):
        assert _rel(on_dask.table[column], in_memory.table[column]) < 1e-10


def _sorted_wine():
    X, y = load_wine(return_X_y=True)
    order = np.argsort(y, kind="stable")  # sorted by class: most chunks miss some class
    return StandardScaler().fit_transform(X)[order] + 10, y[order]


@pytest.mark.parametrize("cls", [LinearDiscriminant, QuadraticDiscriminant])
@pytest.mark.parametrize("chunk", [1, 25, 178])
def test_gaussian_rules_on_dask_merge_the_class_moments_exactly(client, cls, chunk, rng):
    X, y = _sorted_wine()
    w = rng.uniform(0.5, 2.0, X.shape[0])
    in_memory = cls(priors="empirical").fit(X, y, sample_weight=w)
    on_dask = cls(priors="empirical").fit(da.from_array(X, chunks=(chunk, -1)), da.from_array(y, chunks=chunk),
                                          sample_weight=da.from_array(w, chunks=chunk))
    np.testing.assert_allclose(on_dask.means_, in_memory.means_, rtol=1e-12)
    np.testing.assert_allclose(on_dask.covariance_, in_memory.covariance_, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(on_dask.priors_, in_memory.priors_, rtol=1e-12)
    dX = da.from_array(X, chunks=(chunk, -1))
    for method in ("predict_proba", "predict_log_proba", "decision_function", "log_density"):
        out = getattr(on_dask, method)(dX)
        assert isinstance(out, da.Array), method
        np.testing.assert_allclose(out.compute(), getattr(in_memory, method)(X), rtol=1e-8, atol=1e-10, err_msg=method)
    np.testing.assert_array_equal(on_dask.predict(dX).compute(), in_memory.predict(X))


@pytest.mark.parametrize("n_components", [2, [1, 2]])
def test_mixture_discriminant_on_dask_with_classes_missing_from_chunks(client, n_components):
    X, y = _sorted_wine()
    options = dict(family=Gaussian("diag"), n_components=n_components, random_state=0, tol=0.0, max_iter=5)
    in_memory = MixtureDiscriminant(**options).fit(X, y)
    on_dask = MixtureDiscriminant(**options).fit(da.from_array(X, chunks=(40, -1)), da.from_array(y, chunks=40))
    for a, b in zip(on_dask.mixtures_, in_memory.mixtures_):
        assert _rel(a.lower_bounds_, b.lower_bounds_) < 1e-10
    np.testing.assert_allclose(on_dask.predict_proba(da.from_array(X, chunks=(40, -1))).compute(),
                               in_memory.predict_proba(X), atol=1e-9)


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X[:, :8]), y  # few features: fewer solver evaluations


@pytest.mark.parametrize("max_samples", [None, 300])
def test_prototype_batches_on_dask_draw_the_in_memory_candidates(client, cancer, max_samples):
    from discrim.prototype._distributed import DaskTrainingRows

    X, y = cancer
    model = PrototypeClassifier(n_batches=1, max_samples=max_samples, random_state=0)
    model._start(X, np.array([0, 1]), y, np.ones(X.shape[0]))
    rows = np.arange(X.shape[0])
    sub, cand, ref_pos = model._split(y, rows, model._unscaled(X), np.random.default_rng(5), 0)
    dask_rows = DaskTrainingRows(da.from_array(X, chunks=(100, -1)), da.from_array(y, chunks=100),
                                 da.ones(X.shape[0], chunks=100), 2)
    dask_rows.set_scores(model)
    ranks, _ = dask_rows.draw(model, np.random.default_rng(5), 0)
    X_cand, y_cand, dask_cand, class_total, ref_total = dask_rows.candidates(ranks)
    np.testing.assert_array_equal(dask_cand, cand)  # the same rows, in the same order
    np.testing.assert_array_equal(X_cand, X[cand])
    np.testing.assert_allclose(class_total, np.bincount(y[sub], minlength=2))
    np.testing.assert_allclose(ref_total, np.bincount(y[rows[ref_pos]], minlength=2))


@pytest.mark.parametrize("max_samples", [None, 300])
def test_prototype_classifier_on_dask_fits_as_in_memory(client, cancer, max_samples):
    from sklearn.metrics import log_loss

    X, y = cancer
    options = dict(max_samples=max_samples, random_state=0)
    in_memory = PrototypeClassifier(n_batches=1, **options).fit(X, y)
    on_dask = PrototypeClassifier(n_batches=1, **options).fit(da.from_array(X, chunks=(150, -1)),
                                                              da.from_array(y, chunks=150))
    np.testing.assert_allclose(on_dask.center_, in_memory.center_)
    # The same objective from the same start over the same candidates (above): the solves stop,
    # within their tolerance, at points that move only with the rounding of the sums. Where the
    # objective is flat that play is large: with 300 rows, the stops (171 and 159 iterations)
    # differ by 1e-3 in value and 0.03 in probability on one machine's BLAS, and by 1e-5 on another's.
    assert on_dask.objective_values_[0] == pytest.approx(in_memory.objective_values_[0], rel=5e-3)
    proba = on_dask.predict_proba(da.from_array(X, chunks=(150, -1)))
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), in_memory.predict_proba(X), atol=0.1)
    familiarity = on_dask.familiarity(da.from_array(X, chunks=(150, -1)))
    assert isinstance(familiarity, da.Array) and familiarity.shape == (X.shape[0],)
    # Later batches draw from the bins of the new scores, where a row on the decision boundary
    # may change bin with that rounding: the models stay as good, not identical.
    two = [PrototypeClassifier(n_batches=2, **options).fit(data, labels)
           for data, labels in [(X, y), (da.from_array(X, chunks=(150, -1)), da.from_array(y, chunks=150))]]
    losses = [log_loss(y, model.predict_proba(X)) for model in two]
    assert losses[1] == pytest.approx(losses[0], rel=0.05)


def test_the_distributed_objective_is_the_in_memory_objective(client, cancer, rng):
    """At any theta, the sum of the chunks' objectives is the objective of all scoring rows."""
    from discrim.prototype._distributed import DaskTrainingRows
    from discrim.prototype._likelihood import PrototypeLikelihood

    X, y = cancer
    model = PrototypeClassifier(n_batches=1, random_state=0)
    model._start(X, np.array([0, 1]), y, np.ones(X.shape[0]))
    rows = DaskTrainingRows(da.from_array(X, chunks=(100, -1)), da.from_array(y, chunks=100),
                            da.ones(X.shape[0], chunks=100), 2)
    rows.set_scores(model)
    ranks, _ = rows.draw(model, np.random.default_rng(0), 0)
    X_cand, y_cand, cand, class_total, ref_total = rows.candidates(ranks)
    factor = class_total / ref_total
    S = X_cand - model.center_
    distributed_fit = rows.likelihood(model, ranks, class_total.sum(), factor, S, y_cand)
    ref = np.setdiff1d(np.arange(X.shape[0]), cand)
    coef = np.ones(ref.shape[0]) / X.shape[0] * factor[y[ref]]
    whole = PrototypeLikelihood(X[ref] - model.center_, y[ref], coef, model._unscaled(X[ref]), S, y_cand, 2, np)
    for _ in range(3):
        theta = rng.uniform(0, 0.5, X.shape[1] + cand.shape[0])
        value, grad = distributed_fit.value_and_grad(theta)
        expected_value, expected_grad = whole.value_and_grad(theta)
        assert value == pytest.approx(expected_value, rel=1e-12)
        np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-14)
    assert distributed_fit.value_at_zero() == pytest.approx(whole.value_at_zero(), rel=1e-12)


def test_inf_in_one_chunk_gives_the_in_memory_error(client):
    X, y = load_iris(return_X_y=True)
    X = X.copy()
    X[77, 2] = np.inf
    with pytest.raises(ValueError) as in_memory:
        PrototypeClassifier(n_batches=1).fit(X, y)
    with pytest.raises(ValueError) as on_dask:
        PrototypeClassifier(n_batches=1).fit(da.from_array(X, chunks=(30, -1)), da.from_array(y, chunks=30))
    assert "infinity" in str(in_memory.value)
    assert str(on_dask.value) == str(in_memory.value)


def _incomplete_iris(unlabelled=False):
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    X = StandardScaler().fit_transform(X)
    X[rng.random(X.shape) < 0.15] = np.nan
    if unlabelled:
        y = np.where(rng.random(y.shape[0]) < 0.6, -1, y)
    return X, y


@pytest.mark.parametrize("make, unlabelled", [
    (lambda: FiniteMixture(Gaussian(), 3, random_state=0), False),
    (lambda: FiniteMixture(Gaussian("diag"), 3, random_state=0, unlabeled=-1), True),
    (lambda: LinearDiscriminant(), False),
    (lambda: QuadraticDiscriminant(reg_param=0.1, unlabeled=-1), True),
    (lambda: MixtureDiscriminant(Gaussian("diag"), n_components=1, unlabeled=-1, random_state=0), True),
])
def test_missing_values_and_unlabelled_rows_on_dask_fit_as_in_memory(client, make, unlabelled):
    # issue 21 on the Dask path: the same masked EM, the labels chunked like the rows
    X, y = _incomplete_iris(unlabelled)
    in_memory = make().fit(X, y)
    on_dask = make().fit(da.from_array(X, chunks=(40, -1)), da.from_array(y, chunks=40))
    np.testing.assert_allclose(on_dask.predict_proba(da.from_array(X, chunks=(40, -1))).compute(),
                               in_memory.predict_proba(X), rtol=1e-8, atol=1e-10)


def test_binomial_rows_of_their_own_trials_with_missing_values_start_on_dask_as_in_memory(client):
    # the family's start completion (a feature's success share times each row's trials) on Dask too:
    # the column's mean count had completed rows of 1 trial with more successes than trials
    rng = np.random.default_rng(2)
    n_trials = np.where(rng.random(240) < 0.5, 1, 40)
    X = rng.binomial(n_trials[:, None], np.where(rng.random(240) < 0.5, 0.3, 0.7)[:, None], size=(240, 2)).astype(float)
    X[(n_trials == 1) & (rng.random(240) < 0.5), 0] = np.nan

    def fit(data, max_iter):
        return FiniteMixture(Binomial(n_trials=n_trials), 2, random_state=0, max_iter=max_iter).fit(data)

    Xd = da.from_array(X, chunks=(50, -1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=ConvergenceWarning)
        np.testing.assert_allclose(fit(Xd, 1).params_["prob"], fit(X, 1).params_["prob"], rtol=1e-10)
    np.testing.assert_allclose(fit(Xd, 100).predict_proba(X), fit(X, 100).predict_proba(X), rtol=1e-8, atol=1e-10)


def test_prototypes_on_dask_skip_rows_with_missing_values(client):
    X, y = _incomplete_iris()
    in_memory = PrototypeClassifier(n_batches=2, random_state=0).fit(X, y)
    on_dask = PrototypeClassifier(n_batches=2, random_state=0).fit(da.from_array(X, chunks=(40, -1)),
                                                                   da.from_array(y, chunks=40))
    for a, b in zip(on_dask.batches_, in_memory.batches_):
        np.testing.assert_array_equal(a.sample_index, b.sample_index)
        assert not np.isnan(X[a.sample_index]).any()
    # the first batch's objectives differ by the order of their sums, which L-BFGS-B carries along its
    # path to a stop within its tolerance (3.3e-5 apart on a CPU with AVX-512, below 1e-5 on another);
    # later ones also by the solver's path from different first batches (the second 1.25e-3 apart here)
    assert on_dask.objective_values_[0] == pytest.approx(in_memory.objective_values_[0], rel=1e-4)
    np.testing.assert_allclose(on_dask.objective_values_, in_memory.objective_values_, rtol=1e-2)


def test_prototypes_on_dask_without_a_complete_row_say_why(client):
    X, y = _incomplete_iris()
    X[np.arange(X.shape[0]), np.arange(X.shape[0]) % 4] = np.nan
    with pytest.raises(ValueError, match="every row of positive weight has a missing value"):
        PrototypeClassifier(n_batches=1).fit(da.from_array(X, chunks=(40, -1)), da.from_array(y, chunks=40))


@pytest.mark.parametrize("make", [lambda: LinearDiscriminant(unlabeled="?"),
                                  lambda: QuadraticDiscriminant(reg_param=0.1, unlabeled=-1),
                                  lambda: MixtureDiscriminant(Gaussian("diag"), n_components=1, unlabeled=-1,
                                                              random_state=0)])
def test_missing_string_labels_on_dask_mark_unlabelled_rows_as_in_memory(client, make):
    # None, NaN or pandas' NA among string labels mark unlabelled rows in memory; Dask refused them,
    # asking for a marker label and unlabeled= (of PrototypeClassifier too, which has no such parameter)
    X, y = _incomplete_iris()
    labels = np.array(["a", "b", "c"], dtype=object)[y]
    hidden = np.flatnonzero(np.arange(y.shape[0]) % 5 == 0)
    labels[hidden] = [(None, np.nan, pd.NA)[i % 3] for i in range(hidden.shape[0])]
    labels[40:50] = None  # a chunk of chunks=10 without a label
    in_memory = make().fit(X, labels)
    assert list(in_memory.classes_) == ["a", "b", "c"]
    for y_lazy in (da.from_array(labels, chunks=10), dd.from_pandas(pd.Series(labels, dtype=object), npartitions=4)):
        on_dask = make().fit(da.from_array(X, chunks=(40, -1)), y_lazy)
        assert list(on_dask.classes_) == ["a", "b", "c"]
        np.testing.assert_allclose(on_dask.predict_proba(X), in_memory.predict_proba(X), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("make", [lambda: LinearDiscriminant(unlabeled=-1),
                                  lambda: MixtureDiscriminant(Gaussian("diag"), n_components=1, unlabeled=-1,
                                                              random_state=0)])
def test_text_labels_beside_a_numeric_marker_on_dask_fit_as_in_memory(client, make):
    # an object y of text labels and the number -1 (unlabeled=-1) fits in memory; on Dask every chunk's labels
    # went through np.unique, which cannot sort 'a' beside -1: TypeError "'<' not supported between instances
    # of 'str' and 'int'"; labels of mixed types (1 beside 'a') likewise, where memory names them
    X, y = _incomplete_iris()
    labels = np.array(["a", "b", "c"], dtype=object)[y]
    labels[::4] = -1
    in_memory = make().fit(X, labels)
    for chunks in (10, 1):
        on_dask = make().fit(da.from_array(X, chunks=(chunks, -1)), da.from_array(labels, chunks=chunks))
        assert list(on_dask.classes_) == ["a", "b", "c"]
        np.testing.assert_allclose(on_dask.predict_proba(X), in_memory.predict_proba(X), rtol=1e-8, atol=1e-10)
    labels[::4] = 1
    with pytest.raises(ValueError, match=r"y mixes labels of types \['number', 'str'\]"):
        make().fit(da.from_array(X, chunks=(10, -1)), da.from_array(labels, chunks=10))


@pytest.mark.parametrize("make", [lambda: LinearDiscriminant(unlabeled=-1),
                                  lambda: QuadraticDiscriminant(reg_param=0.1, unlabeled=-1),
                                  lambda: MixtureDiscriminant(Gaussian("diag"), n_components=1, unlabeled=-1,
                                                              random_state=0)])
def test_integer_labels_with_gaps_on_dask_keep_the_in_memory_classes(client, make):
    # an Int64 label column with <NA> (as read_parquet gives) fits in memory with classes_ [5, 6, 7]; on Dask the
    # labelled rows' labels stayed an object array of ints, which scikit-learn's check calls "Unknown label type:
    # unknown ... a regression target"; ints beside a text marker ("?") gave classes_ of dtype object
    X, y = _incomplete_iris()
    labels = pd.Series(y + 5, dtype="Int64").mask(np.arange(y.shape[0]) % 4 == 0)
    in_memory = make().fit(X, labels)
    assert in_memory.classes_.tolist() == [5, 6, 7] and in_memory.classes_.dtype == np.int64
    marked = labels.astype(object).fillna("?").to_numpy()
    for X_lazy, y_lazy, marker in ((dd.from_pandas(pd.DataFrame(X), npartitions=3), dd.from_pandas(labels, npartitions=3), -1),
                                   (da.from_array(X, chunks=(40, -1)), da.from_array(marked, chunks=40), "?")):
        on_dask = make().set_params(unlabeled=marker).fit(X_lazy, y_lazy)
        assert on_dask.classes_.tolist() == [5, 6, 7] and on_dask.classes_.dtype == np.int64
        np.testing.assert_allclose(on_dask.predict_proba(X), in_memory.predict_proba(X), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("make", [LinearDiscriminant, lambda: PrototypeClassifier(n_batches=1)])
def test_missing_string_labels_on_dask_without_unlabeled_give_the_in_memory_message(client, make):
    X, y = _incomplete_iris()
    labels = pd.Series(np.array(["a", "b", "c"])[y], dtype=object).mask(np.arange(y.shape[0]) % 5 == 0)
    with pytest.raises(ValueError) as in_memory:
        make().fit(X, labels)
    with pytest.raises(ValueError) as on_dask:
        make().fit(da.from_array(X, chunks=(40, -1)), dd.from_pandas(labels, npartitions=3))
    assert str(on_dask.value) == str(in_memory.value)
    if isinstance(make(), PrototypeClassifier):
        assert "unlabeled" not in str(on_dask.value) and "drop those rows" in str(on_dask.value)


def test_a_feature_missing_everywhere_on_dask_is_named(client):
    X, y = _incomplete_iris()
    X[:, 1] = np.nan
    with pytest.raises(ValueError, match=r"feature\(s\) \[1\] of X are missing"):
        FiniteMixture(Gaussian(), 2).fit(da.from_array(X, chunks=(40, -1)))


def test_bad_weights_and_lengths_name_the_parameter(client, rng):
    X = da.from_array(rng.normal(size=(50, 2)), chunks=(20, -1))
    with pytest.raises(ValueError, match="sample_weight contains negative"):
        FiniteMixture(Gaussian(), 2).fit(X, sample_weight=da.from_array(-np.ones(50), chunks=20))
    with pytest.raises(ValueError, match="sample_weight has 40 rows but X has 50"):
        FiniteMixture(Gaussian(), 2).fit(X, sample_weight=np.ones(40))
    with pytest.raises(ValueError, match="y has 49 rows but X has 50"):
        LinearDiscriminant().fit(X, np.arange(49) % 2)


def test_nullable_weight_columns_on_dask_are_read_as_in_memory(client, rng):
    # a Float64 weight column with <NA> failed in dask's conversion ("float() argument must be a string or a real
    # number, not 'NAType'"), where memory names the NaN weight; a Float64 column without <NA> weighs as floats
    X = rng.normal(size=(60, 2))
    lazy = dd.from_pandas(pd.DataFrame(X, columns=["a", "b"]), npartitions=3)
    weights = pd.Series(rng.uniform(0.5, 2.0, 60)).astype("Float64")
    on_dask = LinearDiscriminant().fit(lazy, np.arange(60) % 2, sample_weight=dd.from_pandas(weights, npartitions=3))
    in_memory = LinearDiscriminant().fit(X, np.arange(60) % 2, sample_weight=weights.to_numpy(float))
    np.testing.assert_allclose(on_dask.means_, in_memory.means_, rtol=1e-12)
    weights[7] = pd.NA
    for make in (lambda: FiniteMixture(Gaussian(), 2), LinearDiscriminant):
        fit = make().fit if isinstance(make(), FiniteMixture) else functools.partial(make().fit, y=np.arange(60) % 2)
        with pytest.raises(ValueError, match="sample_weight contains NaN or infinity"):
            fit(lazy, sample_weight=dd.from_pandas(weights, npartitions=3))


def test_a_lost_worker_is_recomputed_or_reported_never_a_wrong_model(rng):
    """A worker process killed mid-fit: Dask recomputes its chunks from the graph; the fit is the in-memory one."""
    X = np.concatenate([rng.normal(size=(2000, 3)), rng.normal(size=(2000, 3)) + 3])
    options = dict(n_components=2, random_state=0, tol=0.0, max_iter=12)
    reference = FiniteMixture(Gaussian(), **options).fit(X)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        killed = threading.Event()

        class KillOnce:
            """Kills one worker process when EM logs its third iteration."""

            level = 0

            def handle(self, record):
                if getattr(record, "em_iteration", None) == 3 and not killed.is_set():
                    killed.set()
                    worker = next(iter(cluster.workers.values()))
                    worker.process.process.kill()  # the worker's process dies without a goodbye
                return True

        import logging

        logger = logging.getLogger("discrim.mixture._em")
        handler = logging.Handler()
        handler.handle = KillOnce().handle
        logger.addHandler(handler)
        old_level = logger.level
        logger.setLevel(logging.DEBUG)
        try:
            fit = FiniteMixture(Gaussian(), **options).fit(da.from_array(X, chunks=(500, -1)))
        except Exception as exc:  # a clear error is acceptable; a wrong model is not
            assert "worker" in str(exc).lower() or "killed" in str(exc).lower(), exc
            return
        finally:
            logger.removeHandler(handler)
            logger.setLevel(old_level)
        assert killed.is_set()
        assert _rel(fit.lower_bounds_, reference.lower_bounds_) < 1e-10
        assert client.status == "running"


def test_minus_one_beside_class_zero_on_dask_names_the_unlabeled_parameter(client):
    X, y = _incomplete_iris(unlabelled=True)
    for make in (LinearDiscriminant, lambda: MixtureDiscriminant(Gaussian("diag"), n_components=1)):
        with pytest.raises(ValueError, match="pass unlabeled=-1"):
            make().fit(da.from_array(np.nan_to_num(X), chunks=(40, -1)), da.from_array(y, chunks=40))


def test_joint_mixture_discriminant_on_dask_is_the_in_memory_fit(client):
    X, y = load_iris(return_X_y=True)
    make = lambda: MixtureDiscriminant(Gaussian("tied"), n_components=2, joint=True, random_state=0)  # noqa: E731
    in_memory = make().fit(X, y)
    on_dask = make().fit(da.from_array(X, chunks=(40, -1)), da.from_array(y, chunks=40))
    np.testing.assert_allclose(on_dask.predict_proba(X), in_memory.predict_proba(X), rtol=1e-8, atol=1e-10)


def test_select_mixture_on_dask_with_missing_values_screens_as_in_memory(client, rng):
    """The feature variances the degeneracy screen compares with leave the missing entries out."""
    X = rng.normal(size=(600, 2)) + 3 * rng.integers(0, 2, 600)[:, None]
    X[rng.random(X.shape) < 0.1] = np.nan
    in_memory = select_mixture(X, Gaussian("full"), [1, 2], random_state=0)
    on_dask = select_mixture(da.from_array(X, chunks=(300, -1)), Gaussian("full"), [1, 2], random_state=0)
    np.testing.assert_allclose(on_dask.table["min_rel_variance"], in_memory.table["min_rel_variance"], rtol=1e-10)
    assert not on_dask.table["degenerate"].any()


def test_qda_on_incomplete_rows_runs_the_in_memory_em_class_by_class_on_dask(client, rng):
    y = rng.integers(0, 3, 300)
    X = rng.normal(size=(300, 4)) + 2.0 * y[:, None]
    X[rng.random(X.shape) < 0.3] = np.nan
    in_memory = QuadraticDiscriminant().fit(X, y)
    on_dask = QuadraticDiscriminant().fit(da.from_array(X, chunks=(70, -1)), da.from_array(y, chunks=70))
    np.testing.assert_allclose(on_dask.covariance_, in_memory.covariance_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(on_dask.means_, in_memory.means_, rtol=1e-10, atol=1e-12)


def test_impute_on_dask_is_lazy_and_equals_the_in_memory_completion(client, rng):
    X = rng.normal(size=(400, 3)) + 3 * rng.integers(0, 2, 400)[:, None]
    X[rng.random(X.shape) < 0.2] = np.nan
    mixture = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    chunked = da.from_array(X, chunks=(90, -1))
    completed = mixture.impute(chunked)
    assert isinstance(completed, da.Array)  # nothing of size N on the client until computed
    np.testing.assert_allclose(completed.compute(), mixture.impute(X), rtol=1e-12, atol=1e-12)
    drawn = mixture.impute(chunked, draw=True, random_state=1).compute()
    np.testing.assert_array_equal(drawn, mixture.impute(chunked, draw=True, random_state=1).compute())
    observed = ~np.isnan(X)
    np.testing.assert_array_equal(drawn[observed], X[observed])
    assert not np.isnan(drawn).any()


@pytest.mark.parametrize("make", [lambda: FiniteMixture(Gaussian(), 2), lambda: LinearDiscriminant(),
                                  lambda: PrototypeClassifier(n_batches=1)])
def test_a_one_dimensional_dask_x_is_refused_with_the_reshape(client, make):
    # a 1-d dask array or Series failed with a bare IndexError inside the feature-name check
    x = np.random.default_rng(0).random(100)
    y = np.arange(100) % 2
    for X in (da.from_array(x, chunks=30), dd.from_pandas(pd.Series(x), npartitions=2)):
        with pytest.raises(ValueError, match=r"X must have shape \(n_samples, n_features\); the dask .* has 1 "
                                             r"dimension\(s\) \(one feature: X.reshape\(-1, 1\)"):
            make().fit(X, da.from_array(y, chunks=30))


def test_nullable_integer_columns_with_nulls_read_as_missing_on_dask(client):
    # read_parquet gives an integer column with nulls as Int64 with <NA>: dask's float conversion
    # failed on NAType, where the in-memory fit reads <NA> as missing
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": pd.array([1, None, 3, 4, 5, 6] * 20, dtype="Int64"), "b": rng.random(120),
                          "label": np.arange(120) % 2})
    lazy = dd.from_pandas(frame, npartitions=3)
    on_dask = LinearDiscriminant().fit(lazy[["a", "b"]], lazy["label"])
    in_memory = LinearDiscriminant().fit(frame[["a", "b"]], frame["label"])
    np.testing.assert_allclose(on_dask.means_, in_memory.means_, rtol=1e-12)
    np.testing.assert_allclose(on_dask.predict_proba(lazy[["a", "b"]]).compute(),
                               in_memory.predict_proba(frame[["a", "b"]]), rtol=1e-10)


def test_nullable_boolean_columns_with_nulls_read_as_missing_on_dask(client):
    # read_parquet gives a boolean column with nulls as pandas' boolean with <NA>: it was left out of the nullable
    # columns read as floats, and dask's conversion failed on NAType ("float() argument must be a string or a real
    # number, not 'NAType'"), where the in-memory fit reads <NA> as missing
    rng = np.random.default_rng(0)
    flags = rng.random((120, 3)) < np.repeat([[0.2, 0.3, 0.8], [0.9, 0.6, 0.1]], 60, axis=0)
    frame = pd.DataFrame(flags, columns=list("abc")).astype("boolean")
    frame.loc[::5, "b"] = pd.NA
    lazy = dd.from_pandas(frame, npartitions=3)
    in_memory = FiniteMixture(Bernoulli(), 2, random_state=0).fit(frame)
    on_dask = FiniteMixture(Bernoulli(), 2, random_state=0).fit(lazy)
    np.testing.assert_allclose(on_dask.weights_, in_memory.weights_, rtol=1e-10)
    np.testing.assert_allclose(on_dask.predict_proba(lazy).compute(), in_memory.predict_proba(frame), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(on_dask.impute(lazy).compute(), in_memory.impute(frame), rtol=1e-10)


@pytest.mark.parametrize("make", [LinearDiscriminant, QuadraticDiscriminant,
                                  lambda: MixtureDiscriminant(Gaussian(), n_components=1),
                                  lambda: PrototypeClassifier(n_batches=2, random_state=0)])
def test_scores_on_dask_read_x_once_and_bring_nothing_of_size_n_to_the_client(make, monkeypatch):
    # scikit-learn's accuracy_score pulled the predictions and y to the client, computing them 3 times
    # (18 chunk reads of a 6-chunk X); PrototypeClassifier.log_likelihood the whole (N, 2) log-probabilities
    import dask

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] > 0).astype(int)
    w = rng.random(3000)
    model = make().fit(X, y)
    reads, pulled = [0], []

    def counted(block):
        reads[0] += 1
        return block

    to_numpy = da.Array.__array__
    monkeypatch.setattr(da.Array, "__array__", lambda a, *args, **kw: pulled.append(a.shape) or to_numpy(a, *args, **kw))
    X_lazy = da.from_array(X, chunks=(500, -1)).map_blocks(counted)  # 6 chunks
    y_lazy = da.from_array(y, chunks=700)
    scores = [("score", lambda *a, **kw: model.score(*a, **kw))]
    if isinstance(model, PrototypeClassifier):
        scores += [("log_likelihood", model.log_likelihood),
                   ("score of a list of batch counts", lambda *a, **kw: model.score(*a, n_batches=[0, 2], **kw)),
                   ("log_likelihood of a list", lambda *a, **kw: model.log_likelihood(*a, n_batches=[0, 2], **kw))]
    with dask.config.set(scheduler="synchronous"):
        for name, score in scores:
            for weights in (None, w):
                reads[0] = 0
                value = score(X_lazy, y_lazy, sample_weight=weights)
                assert reads[0] == 6, (name, reads[0])
                assert not any(shape and shape[0] == 3000 for shape in pulled), (name, pulled)
                np.testing.assert_allclose(value, score(X, y, sample_weight=weights), rtol=1e-12)


@pytest.mark.parametrize("make", [LinearDiscriminant, QuadraticDiscriminant,
                                  lambda: MixtureDiscriminant(Gaussian(), n_components=1),
                                  lambda: PrototypeClassifier(n_batches=1)])
@pytest.mark.parametrize("with_missing_values", [False, True])
def test_nan_labels_without_unlabeled_on_dask_give_the_numpy_message(client, make, with_missing_values, recwarn):
    # the Dask path had no check of missing labels: scikit-learn's bare "Input y contains NaN." and a
    # RuntimeWarning about the cast came instead of the in-memory message and its fix
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    if with_missing_values:
        X[3, 1] = np.nan
    y = np.r_[np.zeros(20), np.ones(20)]
    y[::5] = np.nan
    with pytest.raises(ValueError) as in_memory:
        make().fit(X, y)
    with pytest.raises(ValueError) as on_dask:
        make().fit(da.from_array(X, chunks=(20, -1)), da.from_array(y, chunks=20))
    assert "missing labels (NaN or None)" in str(in_memory.value)
    assert str(on_dask.value) == str(in_memory.value)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("convert_string", [True, False])
def test_object_columns_of_numbers_on_dask_are_read_as_numbers_as_in_memory(client, convert_string):
    # pandas keeps numbers with a gap (None) in an object column, which dask turns into a string column
    # (dataframe.convert-string): every estimator reads it as numbers in memory, but on Dask refused it,
    # advising to one-hot encode it
    import dask

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": pd.Series(list(rng.normal(size=60)), dtype=object)})
    X.loc[3, "b"] = None
    floats = X.astype(float)
    y = np.r_[np.zeros(30, int), np.ones(30, int)]
    makers = [LinearDiscriminant, QuadraticDiscriminant, lambda: MixtureDiscriminant(Gaussian(), n_components=1),
              lambda: PrototypeClassifier(n_batches=1, random_state=0), lambda: FiniteMixture(Gaussian(), 2, random_state=0)]
    with dask.config.set({"dataframe.convert-string": convert_string}):
        lazy, lazy_floats = dd.from_pandas(X, npartitions=2), dd.from_pandas(floats, npartitions=2)
        for make in makers:
            labels = None if isinstance(make(), FiniteMixture) else y
            on_dask, reference = make().fit(lazy, labels), make().fit(lazy_floats, labels)
            assert list(on_dask.feature_names_in_) == ["a", "b"]
            np.testing.assert_allclose(on_dask.predict_proba(lazy).compute(), reference.predict_proba(floats),
                                       rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(LinearDiscriminant().fit(lazy, y).means_, LinearDiscriminant().fit(X, y).means_,
                                   rtol=1e-12)
        for text in (X.assign(c=list("uv") * 30), X.assign(c=pd.Categorical(list("uv") * 30))):
            with pytest.raises(ValueError, match=r"X has non-numeric column\(s\) \['c'\]: .*OneHotEncoder"):
                LinearDiscriminant().fit(dd.from_pandas(text, npartitions=2), y)


def test_per_row_trial_counts_score_and_impute_dask_rows_chunk_by_chunk(client, rng):
    # a Binomial of per-row trial counts scored a dask X chunk by chunk with all the counts: "n_trials has 300
    # per-row trial counts but X has 1 rows" (the probe's row), then as many for each chunk of 70
    from discrim.distributions import Binomial

    trials = rng.integers(5, 20, 300)
    X = rng.binomial(trials[:, None], 0.3, (300, 2)).astype(float)
    X[rng.random(X.shape) < 0.2] = np.nan
    model = FiniteMixture(Binomial(n_trials=trials), 2, random_state=0).fit(X)
    lazy = da.from_array(X, chunks=(70, -1))
    assert float(model.score(lazy)) == pytest.approx(model.score(X), rel=1e-12)
    np.testing.assert_allclose(model.predict_proba(lazy).compute(), model.predict_proba(X), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(model.impute(lazy).compute(), model.impute(X), rtol=1e-12)
    drawn = model.impute(lazy, draw=True, random_state=0).compute()
    assert np.all((drawn >= 0) & (drawn <= trials[:, None])) and not np.isnan(drawn).any()


def test_models_on_positive_rows_predict_dask_rows(client, rng):
    # the output's shape was probed on a zero row, outside a Gamma's or LogNormal's support and of densities on
    # x > 0: every predict method of such a model refused a dask X whose entries are all positive ("X has observed
    # entries <= 0 but Gamma() needs x > 0"; KnownDensityClassifier: "1 row(s) of X (index 0) have zero density")
    from scipy.stats import lognorm

    from discrim.discriminant import KnownDensityClassifier
    from discrim.distributions import Gamma, LogNormal, Product

    X = np.concatenate([rng.gamma(2.0, 1.0, (60, 2)), rng.gamma(9.0, 1.0, (60, 2))]) + 0.5
    y = np.repeat(["low", "high"], 60)
    lazy = da.from_array(X, chunks=(35, -1))
    models = [FiniteMixture(Gamma(), 2, random_state=0).fit(X),
              FiniteMixture(Product([(LogNormal(), [0]), (Gaussian(), [1])]), 2, random_state=0).fit(X),
              MixtureDiscriminant(LogNormal(), n_components=1, random_state=0).fit(X, y),
              KnownDensityClassifier([lognorm(0.3, scale=10.0), lognorm(0.5, scale=2.0)]).fit(X[:, :1], y)]
    for model in models:
        rows, lazy_rows = (X[:, :1], lazy[:, :1]) if isinstance(model, KnownDensityClassifier) else (X, lazy)
        np.testing.assert_allclose(model.predict_proba(lazy_rows).compute(), model.predict_proba(rows),
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(model.predict(lazy_rows).compute(), model.predict(rows))
    assert float(models[0].score(lazy)) == pytest.approx(models[0].score(X), rel=1e-12)
    # a row the model refuses is still refused, naming it
    with pytest.raises(ValueError, match=r"for Gamma\(\)"):
        models[0].predict(da.from_array(-X, chunks=(35, -1)))


def test_encode_and_decode_of_dask_rows_stay_lazy(client, rng):
    # Product.encode and Categorical.encode read a dask DataFrame with np.asarray: the whole table was computed into
    # memory, silently, and the codes came back as numpy; decode of a dask imputation likewise
    from dask.callbacks import Callback

    class Computes(Callback):
        def __init__(self):
            super().__init__()
            self.count = 0

        def _start(self, dsk):
            self.count += 1

    frame = pd.DataFrame({"spend": rng.gamma(2.0, 50.0, 300), "visits": rng.poisson(4, 300).astype(float),
                          "channel": rng.choice(["shop", "web", "phone"], 300)})
    frame.loc[::17, "channel"] = None
    channel = Categorical(categories=[["shop", "web", "phone"]])
    family = Product([("spend", Gaussian("diag"), [0]), ("visits", Poisson(), [1]), ("channel", channel, [2])])
    lazy = dd.from_pandas(frame, npartitions=4)
    computes = Computes()
    with computes:
        codes = family.encode(lazy)
    assert isinstance(codes, da.Array) and computes.count == 0
    np.testing.assert_array_equal(codes.compute(), family.encode(frame))
    np.testing.assert_array_equal(channel.encode(lazy[["channel"]]).compute(), channel.encode(frame[["channel"]]))
    model = FiniteMixture(family, 2, random_state=0).fit(family.encode(frame))
    decoded = family.decode(model.impute(codes))
    assert isinstance(decoded, da.Array)
    np.testing.assert_array_equal(decoded.compute(), family.decode(model.impute(family.encode(frame))))
    bad = frame.assign(channel=frame["channel"].where(frame.index != 200, "mail"))
    with pytest.raises(ValueError, match=r"X\[50, 2\] = 'mail' is not one of .* count from index 150"):
        family.encode(dd.from_pandas(bad, npartitions=4)).compute()
