"""Tests of PrototypeClassifierCV: the grid, the 1-SE selection, the refit, parallel and Dask runs."""

import contextlib

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from discrim.datasets import load_benchmark
from discrim.model_selection import PrototypeClassifierCV, SearchProgress
from discrim.model_selection._search import fit_path, select_one_se, weighted_log_loss
from discrim.prototype import PrototypeClassifier

GRID = [1e-3, 3e-2]
SMALL = dict(alpha_feature_grid=GRID, max_batches=2, cv=3, n_candidates=60)


@pytest.fixture(scope="module")
def iris():
    return load_benchmark("iris-2f")


@pytest.fixture(scope="module")
def fitted(iris):
    X_train, _, y_train, _ = iris
    return PrototypeClassifierCV(**SMALL, random_state=0).fit(X_train, y_train)


def test_cv_results_layout(fitted):
    res = fitted.cv_results_
    n = len(GRID) * 3
    frame = pd.DataFrame(res)
    assert frame.shape[0] == n
    for key in ["alpha_feature", "n_batches", "param_alpha_feature", "param_n_batches", "mean_test_log_loss",
                "std_test_log_loss", "rank_test_log_loss", "split0_test_log_loss", "split2_test_log_loss",
                "mean_n_prototypes", "mean_n_features", "mean_fit_time"]:
        assert key in res and len(res[key]) == n
    np.testing.assert_array_equal(res["n_batches"], [0, 1, 2, 0, 1, 2])
    splits = np.column_stack([res[f"split{i}_test_log_loss"] for i in range(3)])
    np.testing.assert_allclose(res["mean_test_log_loss"], splits.mean(axis=1))
    np.testing.assert_allclose(res["std_test_log_loss"], splits.std(axis=1, ddof=1))
    assert res["params"][4] == {"alpha_feature": GRID[1], "n_batches": 1}
    assert res["rank_test_log_loss"][np.argmin(res["mean_test_log_loss"])] == 1
    # zero batches is the marginal model: the same for every alpha, and without prototypes
    zero = res["n_batches"] == 0
    np.testing.assert_allclose(res["mean_test_log_loss"][zero], res["mean_test_log_loss"][zero][0])
    assert np.all(res["mean_n_prototypes"][zero] == 0)


def test_selection_follows_one_se_rule(fitted):
    res = fitted.cv_results_
    mean = res["mean_test_log_loss"]
    threshold = mean.min() + res["std_test_log_loss"][np.argmin(mean)]
    assert fitted.threshold_ == pytest.approx(threshold)
    ok = mean <= threshold
    alpha = res["alpha_feature"][ok].max()
    batches = res["n_batches"][ok & (res["alpha_feature"] == alpha)].min()
    assert fitted.best_params_ == {"alpha_feature": alpha, "n_batches": batches}
    assert res["params"][fitted.best_index_] == fitted.best_params_


def test_refit_and_delegation(fitted, iris):
    _, X_test, _, y_test = iris
    best = fitted.best_estimator_
    assert isinstance(best, PrototypeClassifier)
    assert best.alpha_feature == fitted.best_params_["alpha_feature"]
    assert best.n_batches == len(best.batches_) == fitted.best_params_["n_batches"]
    assert best.tol == fitted.refit_tol
    np.testing.assert_array_equal(fitted.classes_, best.classes_)
    np.testing.assert_allclose(fitted.predict_proba(X_test), best.predict_proba(X_test))
    np.testing.assert_allclose(fitted.predict_log_proba(X_test), np.log(best.predict_proba(X_test)))
    np.testing.assert_array_equal(fitted.predict(X_test), best.predict(X_test))
    assert fitted.score(X_test, y_test) == pytest.approx(np.mean(best.predict(X_test) == y_test))
    assert fitted.n_features_in_ == 2 and fitted.n_splits_ == 3


def test_every_batch_count_scored_from_one_fit_equals_separate_fits(iris, rng):
    # The invariant of STYLE.md: scoring all batch counts at once equals one count at a time.
    X, _, y, _ = iris
    classes, y_idx = np.unique(y, return_inverse=True)
    w = rng.uniform(0.5, 2.0, size=y.shape[0])
    train, test = next(StratifiedKFold(3, shuffle=True, random_state=1).split(X, y_idx))
    template = PrototypeClassifier(n_candidates=60)
    res = fit_path(template, train, test, 0, np.array(GRID), np.arange(2), seed=7, max_batches=2,
                   warm_start=False, X=X, y_idx=y_idx, sample_weight=w)
    for i, alpha in enumerate(GRID):
        for b in range(3):
            model = PrototypeClassifier(n_batches=b, n_candidates=60, alpha_feature=alpha, random_state=7)
            model.fit(X[train], y_idx[train], sample_weight=w[train])
            expected = log_loss(y_idx[test], model.predict_proba(X[test]), sample_weight=w[test],
                                labels=np.arange(classes.shape[0]))
            assert res.log_loss[i, b] == pytest.approx(expected, rel=1e-9)
            assert res.n_prototypes[i, b] == sum(bt.prototype_weights.shape[0] for bt in model.batches_)


def test_warm_start_changes_starting_point_only(iris):
    # The first alpha of a path starts cold, so it scores the same with and without warm starts.
    X, _, y, _ = iris
    kwargs = dict(SMALL, random_state=3)
    warm = PrototypeClassifierCV(**kwargs, warm_start=True).fit(X, y).cv_results_
    cold = PrototypeClassifierCV(**kwargs, warm_start=False).fit(X, y).cv_results_
    first = warm["alpha_feature"] == min(GRID)
    np.testing.assert_allclose(warm["mean_test_log_loss"][first], cold["mean_test_log_loss"][first])


def test_same_random_state_same_search(iris, fitted):
    X, _, y, _ = iris
    again = PrototypeClassifierCV(**SMALL, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.cv_results_["mean_test_log_loss"], fitted.cv_results_["mean_test_log_loss"])
    assert again.best_params_ == fitted.best_params_


@pytest.mark.parametrize("backend", [None, "threading", "loky"])
def test_parallel_equals_sequential(iris, backend):
    # The path of each fold is cut into pieces that hand their warm start over, possibly to
    # another process: the fits, and so every score, are exactly those of one sequential task.
    # None is the fork pool on Linux; loky is joblib's default, the fork pool's fallback elsewhere.
    X, _, y, _ = iris
    params = dict(SMALL, alpha_feature_grid=[1e-4, 1e-3, 1e-2, 3e-2], random_state=0)
    sequential = PrototypeClassifierCV(**params, n_jobs=1).fit(X, y)
    context = joblib.parallel_config(backend=backend) if backend else contextlib.nullcontext()
    with context:
        parallel = PrototypeClassifierCV(**params, n_jobs=2).fit(X, y)
    for key in ("mean_test_log_loss", "std_test_log_loss", "split0_test_log_loss", "mean_n_prototypes"):
        np.testing.assert_array_equal(parallel.cv_results_[key], sequential.cv_results_[key])
    assert parallel.best_params_ == sequential.best_params_
    np.testing.assert_array_equal(parallel.predict_proba(X), sequential.predict_proba(X))


# warnings.catch_warnings is process-global, so on the threading backend the search's silenced
# iteration-limit warnings can escape from a neighbouring thread
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_more_workers_than_folds_splits_the_path(iris):
    X, _, y, _ = iris
    seen = []
    with joblib.parallel_backend("threading"):  # cheap workers; the plan depends on n_jobs only
        search = PrototypeClassifierCV(**SMALL, random_state=0, n_jobs=6, callback=seen.append).fit(X, y)
    assert len(seen) == 6  # 3 folds x 2 chunks of one alpha each
    assert np.all(np.isfinite(search.cv_results_["mean_test_log_loss"]))


def test_callback_reports_every_task(iris):
    X, _, y, _ = iris
    seen = []
    PrototypeClassifierCV(**SMALL, random_state=0, callback=seen.append).fit(X, y)
    # each fold's path of two alphas runs as two tasks, the second continuing from the first
    assert [p.n_done for p in seen] == [1, 2, 3, 4, 5, 6]
    assert all(isinstance(p, SearchProgress) and p.n_tasks == 6 for p in seen)
    assert sorted(p.fold for p in seen) == [0, 0, 1, 1, 2, 2]
    for fold in range(3):
        assert [p.alpha_features for p in seen if p.fold == fold] == [(GRID[0],), (GRID[1],)]


def test_without_warm_starts_every_fit_runs_once(iris):
    X, _, y, _ = iris
    seen = []
    PrototypeClassifierCV(**SMALL, random_state=0, warm_start=False, n_jobs=2, callback=seen.append).fit(X, y)
    # one task per (fold, alpha), none repeated
    assert sorted((p.fold, p.alpha_features) for p in seen) == [(f, (a,)) for f in range(3) for a in GRID]
    assert [p.n_done for p in seen] == list(range(1, 7)) and all(p.n_tasks == 6 for p in seen)


def test_only_the_final_refit_logs_its_batches_at_info(iris, caplog):
    # the search's hundreds of internal batches are DEBUG; the returned model's are progress
    X, _, y, _ = iris
    with caplog.at_level("INFO", logger="discrim"):
        search = PrototypeClassifierCV(**SMALL, random_state=0).fit(X, y)
    lines = [r for r in caplog.records if r.name == "discrim.prototype.classifier" and r.levelname == "INFO"
             and r.getMessage().startswith("batch ")]
    assert search.best_params_["n_batches"] >= 1
    assert len(lines) == search.best_params_["n_batches"]


def test_verbose_logs_tasks(iris, caplog):
    X, _, y, _ = iris
    with caplog.at_level("INFO", logger="discrim.model_selection"):
        PrototypeClassifierCV(**SMALL, random_state=0, verbose=1).fit(X, y)
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("discrim.model_selection")]
    assert sum("search task" in m for m in messages) == 6  # 3 folds x 2 pieces of the path
    assert any("selected alpha_feature" in m for m in messages)


def test_groups_keep_rows_together(iris):
    X, _, y, _ = iris
    groups = np.arange(y.shape[0]) // 3
    search = PrototypeClassifierCV(**SMALL, random_state=0)
    assert isinstance(search._splitter(0, groups), StratifiedGroupKFold)
    assert isinstance(search._splitter(0, None), StratifiedKFold)
    search.fit(X, y, groups=groups)
    assert search.n_splits_ == 3


def test_custom_splitter_and_sample_weight(iris, rng):
    X, _, y, _ = iris
    w = rng.uniform(0.5, 2.0, size=y.shape[0])
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    search = PrototypeClassifierCV(alpha_feature_grid=[1e-2], max_batches=1, cv=cv, n_candidates=60,
                                   random_state=0).fit(X, y, sample_weight=w)
    assert search.n_splits_ == 4
    assert search.cv_results_["split3_test_log_loss"].shape == (2,)


def test_pandas_feature_names(iris):
    X, X_test, y, _ = load_benchmark("iris-2f", as_frame=True)
    search = PrototypeClassifierCV(**SMALL, random_state=0).fit(X, y)
    np.testing.assert_array_equal(search.feature_names_in_, X.columns)
    np.testing.assert_array_equal(search.best_estimator_.feature_names_in_, X.columns)
    assert search.predict_proba(X_test).shape == (X_test.shape[0], 3)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(alpha_feature_grid=[]), "alpha_feature_grid"),
        (dict(alpha_feature_grid=[1e-3, -1.0]), "alpha_feature_grid"),
        (dict(alpha_feature_grid=[1e-3, 1e-3]), "alpha_feature_grid"),
        (dict(max_batches=-1), "max_batches"),
        (dict(n_candidates=0), "n_candidates"),
        (dict(search_tol=0.0), "search_tol"),
        # absurd work is refused before any fit, naming the parameter and its bound
        (dict(max_batches=10**9), r"'max_batches' parameter .* in the range \[0, 10000\]"),
        (dict(alpha_feature_grid=np.logspace(-6, -1, 10**6)), "alpha_feature_grid holds 1000000 values; at most 1000"),
        (dict(max_fraction=1e-12), "max_fraction=1e-12 needs at least 999999999999 per class"),
    ],
)
def test_bad_parameters(iris, params, match):
    X, _, y, _ = iris
    with pytest.raises(ValueError, match=match):
        PrototypeClassifierCV(**{**SMALL, **params}).fit(X, y)


@pytest.mark.parametrize(
    "params, name",
    [
        (dict(max_iter=0), "max_iter"),
        (dict(max_iter=-5), "max_iter"),
        (dict(max_iter=2.5), "max_iter"),
        # search_max_iter=None: the search itself would run with max_iter
        (dict(max_iter=0, search_max_iter=None), "max_iter"),
        (dict(empty_check_iter=0), "empty_check_iter"),
        (dict(max_fraction=1.0), "max_fraction"),
        (dict(l1_ratio_feature=1.5), "l1_ratio_feature"),
        (dict(alpha_prototype=-1.0), "alpha_prototype"),
        (dict(max_samples=0), "max_samples"),
        (dict(dtype="float16"), "dtype"),
        (dict(backend="jax"), "backend"),
        (dict(n_jobs=0), "n_jobs"),
    ],
)
def test_pass_through_and_n_jobs_are_validated_as_the_classifier_does_before_any_work(iris, params, name):
    # they reached only the refitted PrototypeClassifier, which the search built without validating it (max_iter=0
    # refitted a model stopped after one iteration), or joblib (n_jobs=0: "n_jobs == 0 in Parallel has no meaning")
    from discrim.utils._param_validation import InvalidParameterError

    X, _, y, _ = iris
    seen = []
    with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter of PrototypeClassifierCV must be"):
        PrototypeClassifierCV(**{**SMALL, **params}, callback=seen.append).fit(X, y)
    assert seen == []  # no task ran
    if name != "n_jobs":  # the classifier refuses the value too, with the same constraint
        constraint = PrototypeClassifierCV._parameter_constraints[name]
        assert constraint == PrototypeClassifier._parameter_constraints[name]
        with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter of PrototypeClassifier must be"):
            PrototypeClassifier(**{k: v for k, v in params.items() if k != "search_max_iter"}).fit(X, y)


def test_negative_n_jobs_is_still_accepted(iris):
    X, _, y, _ = iris
    search = PrototypeClassifierCV(alpha_feature_grid=[1e-2], max_batches=1, cv=2, n_candidates=40, random_state=0,
                                   n_jobs=-1).fit(X, y)
    assert search.n_splits_ == 2


def test_generator_random_state_gives_the_same_search_when_seeded_alike(iris):
    # PrototypeClassifier takes a Generator; the search refused one although its seeds come from
    # as_seed_sequence, which draws them from it
    X, _, y, _ = iris
    first = PrototypeClassifierCV(**SMALL, random_state=np.random.default_rng(11)).fit(X, y)
    second = PrototypeClassifierCV(**SMALL, random_state=np.random.default_rng(11)).fit(X, y)
    for key in ("mean_test_log_loss", "split0_test_log_loss", "mean_n_prototypes"):
        np.testing.assert_array_equal(first.cv_results_[key], second.cv_results_[key])
    assert first.best_params_ == second.best_params_
    np.testing.assert_array_equal(first.predict_proba(X), second.predict_proba(X))


def test_categorical_column_is_named_as_by_the_classifier(iris):
    X, _, y, _ = iris
    frame = pd.DataFrame({"a": pd.Categorical(np.where(X[:, 0] > np.median(X[:, 0]), "hi", "lo")), "b": X[:, 1]})
    match = r"X has non-numeric column\(s\) \['a'\]: encode them"
    with pytest.raises(ValueError, match=match):
        PrototypeClassifier(n_candidates=40).fit(frame, y)
    with pytest.raises(ValueError, match=match):
        PrototypeClassifierCV(**SMALL).fit(frame, y)


def test_rare_class_error_names_the_label_and_the_fold(iris):
    # the error named the internal class index ("class 2") and "the training data" of one fold
    X, _, y, _ = iris
    labels = np.array(["cat", "dog", "emu"])[np.unique(y, return_inverse=True)[1]]
    emu = np.flatnonzero(labels == "emu")
    labels[emu[2:]] = "dog"  # emu keeps 2 rows: too few even for all the data, so fewer folds do not help
    with pytest.raises(ValueError, match=r"class 'emu' has 1 row\(s\) with positive weight in the training part "
                                         r"of fold \d of 2 of the cross-validated search, .*needs at least 3 per "
                                         r"class .*: add rows of that class or merge rare classes\.$"):
        PrototypeClassifierCV(**{**SMALL, "cv": 2}).fit(X, labels)


def test_rare_class_error_offers_more_folds_where_they_help():
    # two stratified folds leave 2 of class 'b''s 4 rows for training; four folds would leave 3
    rng = np.random.default_rng(0)
    y = np.array(["a"] * 40 + ["b"] * 4)
    X = rng.normal(size=(44, 2)) + (y == "b")[:, None]
    params = dict(alpha_feature_grid=[1e-3], max_batches=1, n_candidates=20, random_state=0)
    with pytest.raises(ValueError, match=r"class 'b' has 2 row\(s\) .* training part of fold 1 of 2 .*: use more "
                                         r"folds in cv \(larger training parts\), add rows of that class, or merge "
                                         r"rare classes\.$"):
        PrototypeClassifierCV(**params, cv=2).fit(X, y)
    assert PrototypeClassifierCV(**params, cv=4).fit(X, y).n_splits_ == 4


def test_rare_class_in_a_fold_s_subsample_is_named_by_label_with_max_samples_as_the_fix():
    """With ``max_samples``, each fold's fits draw a class-stratified subsample: a class left with
    too few rows there was refused deep in the search by its class index ("class 1") with advice
    that did not mention max_samples; it is now found before any fit."""
    rng = np.random.default_rng(0)
    y = np.array(["big"] * 290 + ["tiny"] * 10)
    X = rng.normal(size=(300, 3))
    params = dict(alpha_feature_grid=[1e-3], max_batches=1, n_candidates=20, random_state=0, cv=3)
    with pytest.raises(ValueError, match=r"class 'tiny' has 1 row\(s\) .* subsample of max_samples=40 rows of the "
                                         r"training part of fold 1 of 3 .*: raise max_samples \(or set it to None\), "
                                         r"add rows of that class, or merge rare classes\.$"):
        PrototypeClassifierCV(**params, max_samples=40).fit(X, y)
    assert PrototypeClassifierCV(**params, max_samples=200).fit(X, y).n_splits_ == 3


@pytest.mark.parametrize("name", ["alpha_feature_grid", "alpha_prototype_grid"])
def test_nested_grid_is_refused_not_flattened(iris, name):
    """A 2-D grid (``[[1e-3, 1e-2]]``) must raise naming the parameter, not be searched flattened.

    Its shape says the user meant something other than one list of values; flattening it ran a
    search nobody asked for without a word.
    """
    X, _, y, _ = iris
    with pytest.raises(ValueError, match=rf"{name} must be one list of values \(1-D\).*shape \(1, 2\)"):
        PrototypeClassifierCV(**{**SMALL, name: [[1e-3, 1e-2]]}).fit(X, y)


def test_weighted_log_loss_is_the_validation_score(iris):
    # The split scores are sample-weighted log-losses of the fold models (oracle: scikit-learn).
    X, _, y, _ = iris
    classes, y_idx = np.unique(y, return_inverse=True)
    proba = np.full((y.shape[0], 3), 1 / 3)
    assert weighted_log_loss(proba, y_idx, np.ones(y.shape[0]), np.arange(3)) == pytest.approx(np.log(3))


def test_select_one_se_on_fitted_grid(fitted):
    res = fitted.cv_results_
    mean = res["mean_test_log_loss"].reshape(len(GRID), 3)
    std = res["std_test_log_loss"].reshape(len(GRID), 3)
    _, (a, b), threshold = select_one_se(mean, std, np.array(GRID))
    assert fitted.best_index_ == a * 3 + b and fitted.threshold_ == threshold


@pytest.mark.dask
def test_dask_backend_equals_sequential(iris, fitted):
    distributed = pytest.importorskip("dask.distributed")

    X, _, y, _ = iris
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster), joblib.parallel_backend("dask"):
            search = PrototypeClassifierCV(**SMALL, random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(search.cv_results_["mean_test_log_loss"], fitted.cv_results_["mean_test_log_loss"])
    assert search.best_params_ == fitted.best_params_


@pytest.mark.dask
def test_a_dask_dataframe_with_a_transformer_is_searched_as_the_pandas_one(iris, fitted):
    # with a transformer the search kept a dask DataFrame as given and crashed reading its length ("expected a
    # sequence of integers or a single integer, got '<dask_expr.expr.Scalar: expr=df.size() // 3'"); a dask
    # array, and a DataFrame without a transformer, are computed into memory, as the search splits rows on the host
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    from sklearn.preprocessing import StandardScaler

    X, _, y, _ = iris
    frame = pd.DataFrame(X, columns=["a", "b"])
    search = PrototypeClassifierCV(**SMALL, random_state=0, transformer=StandardScaler())
    with dask.config.set(scheduler="synchronous"):
        on_dask = search.fit(dd.from_pandas(frame, npartitions=3), y)
    in_memory = PrototypeClassifierCV(**SMALL, random_state=0, transformer=StandardScaler()).fit(frame, y)
    np.testing.assert_allclose(on_dask.cv_results_["mean_test_log_loss"], in_memory.cv_results_["mean_test_log_loss"],
                               rtol=1e-10)
    assert list(on_dask.feature_names_in_) == ["a", "b"]


@pytest.mark.dask
def test_predictions_through_a_transformer_keep_the_input_kind(iris):
    # with a transformer the search's predictions ran the transformer on the whole input: a dask X was computed into
    # memory and its predictions were numpy arrays (a torch tensor's likewise), where the model without a
    # transformer, and every other estimator, returns a lazy dask array (a tensor on the input's device)
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    torch = pytest.importorskip("torch")
    from sklearn.preprocessing import StandardScaler

    X, _, y, _ = iris
    search = PrototypeClassifierCV(**SMALL, random_state=0, transformer=StandardScaler()).fit(X, y)
    with dask.config.set(scheduler="synchronous"):
        lazy = da.from_array(X, chunks=(25, -1))
        for method in ("predict", "predict_proba", "familiarity"):
            out = getattr(search, method)(lazy)
            assert isinstance(out, da.Array)
            if method == "predict":
                np.testing.assert_array_equal(out.compute(), search.predict(X))
            else:
                np.testing.assert_allclose(out.compute(), getattr(search, method)(X), rtol=1e-12)
        assert search.score(lazy, y) == pytest.approx(search.score(X, y), rel=1e-12)
    out = search.predict_proba(torch.tensor(X))
    assert isinstance(out, torch.Tensor)
    np.testing.assert_allclose(out.numpy(), search.predict_proba(X), rtol=1e-12)


@pytest.mark.dask
def test_a_column_transformer_encodes_a_dask_dataframe_partition_by_partition(iris):
    # a search whose ColumnTransformer one-hot encodes a text column predicted no dask DataFrame: the whole frame
    # went to the transformer ("Specifying the columns using strings is only supported for dataframes"); read as a
    # dask array it would be refused for its text ("X has non-numeric column(s) ['shape']")
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    X, _, y, _ = iris
    frame = pd.DataFrame(X, columns=["a", "b"]).assign(shape=np.where(np.arange(X.shape[0]) % 3 == 0, "round", "flat"))
    encode = ColumnTransformer([("numbers", StandardScaler(), ["a", "b"]), ("text", OneHotEncoder(), ["shape"])])
    search = PrototypeClassifierCV(**SMALL, random_state=0, transformer=encode).fit(frame, y)
    with dask.config.set(scheduler="synchronous"):
        lazy = dd.from_pandas(frame, npartitions=3)
        out = search.predict_proba(lazy)
        assert isinstance(out, da.Array)
        np.testing.assert_allclose(out.compute(), search.predict_proba(frame), rtol=1e-12)
        np.testing.assert_array_equal(search.predict(lazy).compute(), search.predict(frame))
        with pytest.raises(ValueError, match="feature names"):
            search.predict(lazy[["b", "a", "shape"]])


_TOO_FEW_ROWS = (
    "the check's data has 5 or 10 rows, so a class has fewer than the 3 rows per training fold that "
    "the minimum-cases lemma needs with max_fraction=0.5; the search rightly refuses it"
)
# check_estimators_nan_inf is not listed: scikit-learn runs it only for estimators that refuse NaN,
# and the search takes NaN as a missing value (allow_nan)
EXPECTED_FAILED_CHECKS = {
    "check_n_features_in_after_fitting": _TOO_FEW_ROWS,
    "check_fit2d_1feature": _TOO_FEW_ROWS,
    # as for PrototypeClassifier: candidates are drawn at random from bins whose sizes depend on
    # the row counts, and here the folds differ too, so integer weights and repeated rows give
    # different (equally valid) fits
    "check_sample_weight_equivalence_on_dense_data": "random candidate draws and folds depend on row counts",
}


@parametrize_with_checks(
    [PrototypeClassifierCV(alpha_feature_grid=[1e-3, 1e-2], max_batches=1, cv=2, n_candidates=20, random_state=0)],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _grid_data(seed=0, n=90):
    """Three classes on a 1/64 grid within [-4, 4]: shifts by multiples of 8 up to 1e9 are exact."""
    rng = np.random.default_rng(seed)
    X = np.clip(np.round(rng.normal(size=(n, 2)) * 64) / 64, -4, 4)
    y = np.argmax(np.c_[X[:, 0], X[:, 1], -X.sum(axis=1)] + 0.3 * rng.normal(size=(n, 3)), axis=1)
    return X, y


@pytest.mark.parametrize("offset", [1e8, -8 * 123_456_789])
def test_search_is_translation_invariant(offset):
    # issue 17: at an offset of 1e8 every probability of the refitted model was 0.5. With the data
    # exact after the shift, the search's folds and refit see the same centred bits
    X, y = _grid_data()
    base = PrototypeClassifierCV(**SMALL, random_state=0).fit(X, y)
    moved = PrototypeClassifierCV(**SMALL, random_state=0).fit(X + offset, y)
    for key in ("mean_test_log_loss", "mean_n_prototypes", "mean_n_features"):
        np.testing.assert_array_equal(moved.cv_results_[key], base.cv_results_[key])
    assert moved.best_params_ == base.best_params_
    np.testing.assert_array_equal(moved.predict_proba(X + offset), base.predict_proba(X))
    assert np.ptp(base.predict_proba(X)) > 0.5  # not the marginals


def test_search_refuses_data_beyond_the_magnitude_limit(iris):
    X, _, y, _ = iris
    X = np.asarray(X, dtype=np.float64).copy()
    X[0, 0] = 1e300
    with pytest.raises(ValueError, match="X has values of magnitude up to 1e[+]300"):
        PrototypeClassifierCV(**SMALL).fit(X, y)


def test_search_predictions_refuse_rows_beyond_the_magnitude_limit(fitted, iris):
    X = np.asarray(iris[1], dtype=np.float64)[:4].copy()
    X[1, 1] = -1e308
    for method in ("predict", "predict_proba", "predict_log_proba"):
        with pytest.raises(ValueError, match="X has values of magnitude"):
            getattr(fitted, method)(X)


def test_search_with_one_overwhelming_weight_gives_finite_probabilities(iris):
    X, _, y, _ = iris
    w = np.ones(len(y))
    w[:2] = 1e308 / 4
    search = PrototypeClassifierCV(**SMALL, random_state=0).fit(X, y, sample_weight=w)
    assert np.all(np.isfinite(search.cv_results_["mean_test_log_loss"]))
    assert np.all(np.isfinite(search.predict_proba(X)))


def test_predict_methods_take_priors_and_n_batches_as_the_refitted_model():
    """Every predict method of the search passes priors= (Bayes' rule with other priors) and n_batches= to the
    refitted classifier, as the README promises of every predict method (they raised a TypeError)."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    search = PrototypeClassifierCV(alpha_feature_grid=[1e-3], max_batches=2, cv=2, random_state=0).fit(X, y)
    model = search.best_estimator_
    for name in ("predict", "predict_proba", "predict_log_proba"):
        for options in ({"priors": [0.6, 0.3, 0.1]}, {"n_batches": 1}):
            got, want = getattr(search, name)(X, **options), getattr(model, name)(X, **options)
            np.testing.assert_array_equal(got, want)
    assert not np.array_equal(search.predict_proba(X, priors=[0.6, 0.3, 0.1]), search.predict_proba(X))


def test_transformer_reads_a_raw_mixed_type_frame():
    """transformer= takes X as given: a ColumnTransformer that selects, scales and one-hot encodes a DataFrame
    with an identifier and a text column is fitted inside every fold (X was first checked as numbers, so the
    README's "any scikit-learn transformer" failed on the frame such a transformer is for)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.default_rng(0)
    n = 120
    frame = pd.DataFrame({"id": [f"C{i:05d}" for i in range(n)], "x": rng.normal(size=n),
                          "city": rng.choice(["a", "b", "c"], n)})
    y = (frame["x"] + (frame["city"] == "a") > 0.5).astype(int).to_numpy()
    columns = ColumnTransformer([("num", StandardScaler(), ["x"]), ("cat", OneHotEncoder(), ["city"])])
    search = PrototypeClassifierCV(transformer=columns, alpha_feature_grid=[1e-3], max_batches=1, cv=2,
                                   random_state=0).fit(frame, y)
    assert list(search.feature_names_in_) == ["id", "x", "city"]
    encoded = search.transformer_.transform(frame)
    np.testing.assert_array_equal(search.predict_proba(frame), search.best_estimator_.predict_proba(encoded))
    assert search.score(frame, y) > 0.8


@pytest.mark.parametrize("name, grid, match", [
    ("alpha_feature_grid", [0, 1e-3], r"alpha_feature_grid must be a non-empty list of positive, finite values "
                                      r"\(every one of them: a penalty of 0 is not searched\)"),
    ("alpha_prototype_grid", [-1e-3, 1e-3], r"alpha_prototype_grid must be a non-empty list of non-negative, finite "
                                            r"values \(every one of them\)"),
])
def test_a_grid_with_one_bad_value_is_refused_for_that_value(iris, name, grid, match):
    # the message said the grid must hold "at least one" good value, which [0, 1e-3] does
    X, _, y, _ = iris
    with pytest.raises(ValueError, match=match):
        PrototypeClassifierCV(**{**SMALL, name: grid}).fit(X, y)
