"""PrototypeClassifierCV's transformer, alpha_prototype grid, scoring options and batch-count cost."""

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, log_loss, roc_auc_score
from sklearn.preprocessing import StandardScaler

import discrim.prototype.classifier as classifier_module
from discrim.datasets import load_benchmark
from discrim.model_selection import PrototypeClassifierCV
from discrim.prototype import PrototypeClassifier
from discrim.utils._random import as_seed_sequence

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

SMALL = dict(alpha_feature_grid=[1e-3], max_batches=2, n_candidates=40, n_jobs=1)


def _fold_seeds(random_state, n_splits):
    """The seed of every fold's fits, derived as PrototypeClassifierCV derives it."""
    seeds = [int(s.generate_state(1)[0]) for s in as_seed_sequence(random_state).spawn(3)]
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seeds[1]).spawn(n_splits)]


def _manual_staged(search, X_train, y_train, X_test, seed):
    """A fold's fit as a plain PrototypeClassifier with the search's settings: staged probabilities."""
    model = PrototypeClassifier(
        n_batches=search.max_batches, alpha_feature=search.alpha_feature_grid[0], n_candidates=search.n_candidates,
        tol=search.search_tol, max_iter=search.search_max_iter, ftol=search.search_ftol, random_state=seed,
    ).fit(X_train, y_train)
    return model, list(model.staged_predict_proba(X_test))


def _splits(y, n_splits=2):
    rng = np.random.default_rng(0)
    fold = rng.permutation(np.arange(y.shape[0]) % n_splits)
    return [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(n_splits)]


@pytest.fixture(scope="module")
def raw_iris():
    X_train, _, y_train, _ = load_benchmark("iris-2f", scale=False)
    return 100.0 * X_train + 5.0, y_train  # far from unit scale: the scaler matters


def test_transformer_inside_folds_equals_a_manual_per_fold_pipeline(raw_iris):
    X, y = raw_iris
    splits = _splits(y)
    search = PrototypeClassifierCV(**SMALL, cv=splits, transformer=StandardScaler(), random_state=3).fit(X, y)
    for f, (seed, (train, test)) in enumerate(zip(_fold_seeds(3, 2), splits)):
        scaler = StandardScaler().fit(X[train])
        model, staged = _manual_staged(search, scaler.transform(X[train]), y[train], scaler.transform(X[test]), seed)
        expected = [log_loss(y[test], p, labels=model.classes_) for p in staged]
        np.testing.assert_allclose(search.cv_results_[f"split{f}_test_log_loss"], expected, rtol=1e-12)
    # the refitted transformer is fitted on all rows, and the search predicts raw rows through it
    scaler = StandardScaler().fit(X)
    np.testing.assert_array_equal(search.transformer_.mean_, scaler.mean_)
    np.testing.assert_array_equal(search.predict_proba(X), search.best_estimator_.predict_proba(scaler.transform(X)))
    assert search.score(X, y) == search.best_estimator_.score(scaler.transform(X), y)
    # and the fold scaling differs from scaling once before the split (the leak it removes)
    leaky = PrototypeClassifierCV(**SMALL, cv=splits, random_state=3).fit(scaler.transform(X), y)
    assert not np.array_equal(leaky.cv_results_["mean_test_log_loss"], search.cv_results_["mean_test_log_loss"])


def test_transformer_keeps_a_dataframes_column_names(raw_iris):
    """A search fitted on a DataFrame predicts DataFrames without scikit-learn's feature-name
    warning: its refitted transformer saw the column names (as `discrim tune` uses it)."""
    import warnings

    import pandas as pd

    X, y = raw_iris
    frame = pd.DataFrame(X, columns=["sepal length", "sepal width"])
    search = PrototypeClassifierCV(**SMALL, cv=2, transformer=StandardScaler(), random_state=3).fit(frame, y)
    assert list(search.transformer_.feature_names_in_) == ["sepal length", "sepal width"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = search.predict_proba(frame)
    np.testing.assert_array_equal(proba, search.predict_proba(X))


def test_alpha_prototype_grid_equals_separate_searches(raw_iris):
    X, y = raw_iris
    X = StandardScaler().fit_transform(X)
    params = dict(alpha_feature_grid=[1e-4, 1e-2], max_batches=2, n_candidates=40, cv=3, n_jobs=1, random_state=1)
    grid = [1e-8, 3e-2]
    both = PrototypeClassifierCV(**params, alpha_prototype_grid=grid).fit(X, y)
    res = both.cv_results_
    n_rows = 2 * 3  # alpha_feature values x batch counts per alpha_prototype
    assert len(res["params"]) == len(grid) * n_rows
    for p, alpha_prototype in enumerate(grid):
        alone = PrototypeClassifierCV(**params, alpha_prototype=alpha_prototype).fit(X, y)
        rows = slice(p * n_rows, (p + 1) * n_rows)
        np.testing.assert_array_equal(res["alpha_prototype"][rows], alpha_prototype)
        for key in ("split0_test_log_loss", "split1_test_log_loss", "split2_test_log_loss", "mean_n_prototypes",
                    "alpha_feature", "n_batches"):
            np.testing.assert_array_equal(res[key][rows], alone.cv_results_[key], err_msg=key)
    # the 1-SE rule: within the threshold, the largest alpha_feature, then alpha_prototype, then fewest batches
    mean = res["mean_test_log_loss"]
    best = int(np.argmin(mean))
    within = np.flatnonzero(mean <= mean[best] + res["std_test_log_loss"][best])
    key = [(res["alpha_feature"][i], res["alpha_prototype"][i], -res["n_batches"][i]) for i in within]
    assert both.best_index_ == within[max(range(len(within)), key=key.__getitem__)]
    assert both.best_params_ == res["params"][both.best_index_]
    assert both.best_estimator_.alpha_prototype == both.best_params_["alpha_prototype"]


@pytest.mark.parametrize("scoring", ["roc_auc", "balanced_accuracy"])
def test_scoring_equals_sklearn_metrics_on_the_cv_predictions(raw_iris, scoring):
    X, y = raw_iris
    X = StandardScaler().fit_transform(X)
    splits = _splits(y)
    search = PrototypeClassifierCV(**SMALL, cv=splits, scoring=scoring, random_state=2).fit(X, y)
    for f, (seed, (train, test)) in enumerate(zip(_fold_seeds(2, 2), splits)):
        model, staged = _manual_staged(search, X[train], y[train], X[test], seed)
        if scoring == "roc_auc":
            expected = [roc_auc_score(y[test], p, multi_class="ovr", average="macro", labels=model.classes_)
                        for p in staged]
        else:
            expected = [balanced_accuracy_score(y[test], model.classes_[np.argmax(p, axis=1)]) for p in staged]
        np.testing.assert_allclose(search.cv_results_[f"split{f}_test_{scoring}"], expected, rtol=1e-12)
        # the log-loss is recorded as well
        np.testing.assert_allclose(search.cv_results_[f"split{f}_test_log_loss"],
                                   [log_loss(y[test], p, labels=model.classes_) for p in staged], rtol=1e-12)
    mean, std = search.cv_results_[f"mean_test_{scoring}"], search.cv_results_[f"std_test_{scoring}"]
    best = int(np.argmax(mean))
    assert search.threshold_ == pytest.approx(mean[best] - std[best])
    assert mean[search.best_index_] >= search.threshold_
    assert search.cv_results_[f"rank_test_{scoring}"][best] == 1


def test_roc_auc_of_a_validation_part_lacking_a_class_averages_the_classes_it_has(raw_iris):
    """A class with fewer rows than folds is absent from some validation part: its one-vs-rest
    curve is undefined there, and the fold's macro ROC-AUC is the mean over the classes present.
    scikit-learn's macro average gave NaN for that fold, so every grid point's mean was NaN and
    the search crashed in numpy (``All-NaN slice encountered``)."""
    X, y = raw_iris
    X = StandardScaler().fit_transform(X)
    rare = np.unique(y)[2]
    splits = _splits(y)
    train, test = splits[0]
    moved = test[y[test] == rare]
    splits[0] = (np.sort(np.concatenate([train, moved])), test[y[test] != rare])
    search = PrototypeClassifierCV(**SMALL, cv=splits, scoring="roc_auc", random_state=2).fit(X, y)
    train, test = splits[0]
    model, staged = _manual_staged(search, X[train], y[train], X[test], _fold_seeds(2, 2)[0])
    present = [c for c in model.classes_ if c != rare]
    expected = [np.mean([roc_auc_score(y[test] == c, p[:, list(model.classes_).index(c)]) for c in present])
                for p in staged]
    np.testing.assert_allclose(search.cv_results_["split0_test_roc_auc"], expected, rtol=1e-12)
    assert np.all(np.isfinite(search.cv_results_["mean_test_roc_auc"]))


def test_roc_auc_refuses_a_validation_part_of_one_class(raw_iris):
    X, y = raw_iris
    X = StandardScaler().fit_transform(X)
    keep = np.isin(y, np.unique(y)[:2])
    X, y = X[keep], y[keep]
    first = np.flatnonzero(y == np.unique(y)[0])[:5]
    splits = [(np.setdiff1d(np.arange(y.shape[0]), first), first), (first, np.setdiff1d(np.arange(y.shape[0]), first))]
    with pytest.raises(ValueError, match=r'scoring="roc_auc": the validation part of fold 1 of 2 has rows of positive weight of class'):
        PrototypeClassifierCV(**SMALL, cv=splits, scoring="roc_auc", random_state=2).fit(X, y)


@pytest.mark.parametrize("scoring", ["log_loss", "roc_auc", "balanced_accuracy"])
def test_a_validation_part_of_zero_weight_is_refused_naming_the_fold(raw_iris, scoring):
    """Its weighted validation score is 0 / 0: the log-loss was NaN at every grid point and the
    search crashed in numpy ("All-NaN slice encountered"); balanced accuracy raised scikit-learn's
    "Sample weights must contain at least one non-zero number"."""
    X, y = raw_iris
    X = StandardScaler().fit_transform(X)
    splits = _splits(y, n_splits=3)
    weight = np.ones(y.shape[0])
    weight[splits[1][1]] = 0.0
    with pytest.raises(ValueError, match=r"the validation part of fold 2 of 3 has no rows of positive sample_weight"):
        PrototypeClassifierCV(**SMALL, cv=splits, scoring=scoring, random_state=2).fit(X, y, sample_weight=weight)


@pytest.mark.parametrize("scoring", ["roc_auc", "balanced_accuracy"])
def test_two_class_scores_and_stops_by_them_agree_with_sklearn_and_the_full_fit(raw_iris, scoring):
    """Two classes: ROC-AUC is that of the second class's probability (the documented binary case),
    and n_batches_no_change judged by the score keeps the scores of the fit continued to max_batches."""
    X, y = raw_iris
    X = StandardScaler().fit_transform(X)
    keep = y != np.unique(y)[2]
    X, y = X[keep], y[keep]
    splits = _splits(y)
    settings = dict(SMALL, max_batches=5, cv=splits, scoring=scoring, random_state=2)
    search = PrototypeClassifierCV(**settings).fit(X, y)
    stopped = PrototypeClassifierCV(**settings, n_batches_no_change=1, no_change_tol=0.0).fit(X, y)
    for f, (seed, (train, test)) in enumerate(zip(_fold_seeds(2, 2), splits)):
        model, staged = _manual_staged(search, X[train], y[train], X[test], seed)
        if scoring == "roc_auc":
            expected = [roc_auc_score(y[test] == model.classes_[1], p[:, 1]) for p in staged]
        else:
            expected = [balanced_accuracy_score(y[test], model.classes_[np.argmax(p, axis=1)]) for p in staged]
        np.testing.assert_allclose(search.cv_results_[f"split{f}_test_{scoring}"], expected, rtol=1e-12)
        scored = stopped.cv_results_[f"split{f}_test_{scoring}"]
        assert np.isfinite(scored[0])
        np.testing.assert_array_equal(scored[np.isfinite(scored)], np.asarray(expected)[np.isfinite(scored)])


def test_search_cost_is_linear_in_max_batches(raw_iris, monkeypatch):
    """Every fit of the search solves exactly max_batches batches, each with a bounded number of
    objective evaluations that does not grow with the batch count."""
    X, y = raw_iris
    X = StandardScaler().fit_transform(X)
    calls = []
    solve = classifier_module.solve_batch

    def counted(objective, *args, **kwargs):
        result = solve(objective, *args, **kwargs)
        calls.append(result.n_eval)
        return result

    monkeypatch.setattr(classifier_module, "solve_batch", counted)
    evaluations = {}
    for B in (5, 50):
        calls.clear()
        search = PrototypeClassifierCV(alpha_feature_grid=[1e-3, 1e-2], max_batches=B, n_candidates=20, cv=2,
                                       n_jobs=1, random_state=0).fit(X, y)
        # folds x alphas x batches in the search, then the refit's path (at most two fits of the
        # selected batch count)
        assert 2 * 2 * B <= len(calls) <= 2 * 2 * B + 2 * search.best_params_["n_batches"]
        evaluations[B] = np.asarray(calls[: 2 * 2 * B])
    # the evaluations per batch do not grow with the batch count: total cost is linear in B
    assert evaluations[50].mean() <= 1.5 * evaluations[5].mean()
    assert evaluations[50].sum() <= 1.5 * (50 / 5) * evaluations[5].sum()


@pytest.mark.parametrize("warm_start", [False, True])
def test_early_stop_scores_the_fitted_counts_as_the_full_search(warm_start):
    # Every count up to a fit's stop scores exactly as without the stop (a batch never depends on
    # later ones; the continued fit draws batch b from stream b); the counts after it are NaN,
    # and the selected point was scored on every fold. With warm starts this holds for the first
    # alpha of the path (a cold start): the next alpha's batches after the previous stop start
    # cold instead of from batches the stopped search never fitted.
    X, _, y, _ = load_benchmark("iris-2f")
    kwargs = dict(alpha_feature_grid=[1e-3, 1e-2, 3e-2], max_batches=6, cv=3, n_candidates=60, random_state=0,
                  warm_start=warm_start)
    full = PrototypeClassifierCV(**kwargs).fit(X, y).cv_results_
    search = PrototypeClassifierCV(**kwargs, n_batches_no_change=2).fit(X, y)
    stopped = search.cv_results_
    for fold in range(3):
        key = f"split{fold}_test_log_loss"
        scored = ~np.isnan(stopped[key])
        compared = scored & (stopped["alpha_feature"] == 1e-3) if warm_start else scored
        np.testing.assert_array_equal(stopped[key][compared], full[key][compared])
        assert not scored.all()  # the rule did stop some fit
        # a fit stops for good: once a count is missing, so are the larger ones of that alpha
        per_alpha = scored.reshape(3, 7)
        assert np.all(per_alpha[:, :-1] >= per_alpha[:, 1:])
    assert not np.isnan(stopped["mean_test_log_loss"][search.best_index_])
    assert np.isnan(stopped["mean_n_prototypes"][np.isnan(stopped["mean_test_log_loss"])]).all()


def test_early_stop_at_max_batches_changes_nothing():
    # A fit with max_batches batches can have at most max_batches without improvement after
    # batch 0: n_batches_no_change >= max_batches never stops one early.
    X, _, y, _ = load_benchmark("iris-2f")
    kwargs = dict(alpha_feature_grid=[1e-3, 1e-2], max_batches=3, cv=3, n_candidates=60, random_state=0)
    full = PrototypeClassifierCV(**kwargs).fit(X, y)
    same = PrototypeClassifierCV(**kwargs, n_batches_no_change=3).fit(X, y)
    np.testing.assert_array_equal(same.cv_results_["mean_test_log_loss"], full.cv_results_["mean_test_log_loss"])
    assert same.best_params_ == full.best_params_


def test_no_change_tol_counts_only_large_decreases_as_improvement():
    # With a tolerance of 100 % no decrease of a log-loss counts: every fit stops
    # n_batches_no_change batches after its first one, whatever its validation losses.
    X, _, y, _ = load_benchmark("iris-2f")
    kwargs = dict(alpha_feature_grid=[1e-3, 1e-2], max_batches=5, cv=3, n_candidates=60, random_state=0)
    search = PrototypeClassifierCV(**kwargs, n_batches_no_change=2, no_change_tol=1.0).fit(X, y)
    for fold in range(3):
        scored = ~np.isnan(search.cv_results_[f"split{fold}_test_log_loss"].reshape(2, 6))
        np.testing.assert_array_equal(scored, np.tile([True] * 4 + [False] * 2, (2, 1)))


def test_selection_best_takes_the_lowest_mean_and_refits_it():
    X, _, y, _ = load_benchmark("iris-2f")
    kwargs = dict(alpha_feature_grid=[1e-3, 3e-2], max_batches=3, cv=3, n_candidates=60, random_state=0)
    one_se = PrototypeClassifierCV(**kwargs).fit(X, y)
    best = PrototypeClassifierCV(**kwargs, selection="best").fit(X, y)
    mean = best.cv_results_["mean_test_log_loss"]
    np.testing.assert_array_equal(mean, one_se.cv_results_["mean_test_log_loss"])  # same search
    assert best.best_index_ == int(np.argmin(mean))
    assert mean[best.best_index_] <= mean[one_se.best_index_]
    assert best.threshold_ == one_se.threshold_
    assert best.best_estimator_.alpha_feature == best.best_params_["alpha_feature"]
    assert len(best.best_estimator_.batches_) == best.best_params_["n_batches"]


def test_a_search_answers_what_its_refitted_model_answers_in_its_input_units():
    # the search lacked log_likelihood, the staged methods, familiarity, export and explain, and its
    # score took no n_batches: each now runs the refitted model on the transformed rows
    X_train, X_test, y_train, y_test = load_benchmark("iris", scale=False)
    search = PrototypeClassifierCV(alpha_feature_grid=[1e-3, 1e-2], max_batches=2, cv=2, n_candidates=30,
                                   transformer=StandardScaler(), random_state=0).fit(X_train, y_train)
    model, Z = search.best_estimator_, search.transformer_.transform(X_test)
    counts = list(range(len(model.batches_) + 1))
    np.testing.assert_allclose(search.score(X_test, y_test, n_batches=counts), model.score(Z, y_test, n_batches=counts))
    np.testing.assert_allclose(search.log_likelihood(X_test, y_test), model.log_likelihood(Z, y_test))
    assert search.log_likelihood(X_test, y_test) == pytest.approx(-log_loss(y_test, search.predict_proba(X_test)))
    for ours, theirs in zip(search.staged_predict_proba(X_test), model.staged_predict_proba(Z), strict=True):
        np.testing.assert_allclose(ours, theirs)
    for ours, theirs in zip(search.staged_predict(X_test), model.staged_predict(Z), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_allclose(search.familiarity(X_test), model.familiarity(Z))
    table = search.export()
    assert len(table) == sum(b.prototype_weights.shape[0] for b in model.batches_)
    np.testing.assert_allclose(search.explain(X_test[:1], y_test[0]).proba.to_numpy(), search.predict_proba(X_test[:1])[0],
                               rtol=1e-10)
