"""Tests of export, explain, shrink and familiarity of the prototype set classifier."""

import copy
import dataclasses
import functools
import re

import _oracles
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from discrim.prototype import PrototypeClassifier
from discrim.prototype._explain import (
    Explanation,
    explain_prediction,
    export_model,
    familiarity,
    shrink_model,
)

NAMES = ["a", "b", "noise1", "noise2"]


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + X[:, 1] ** 2 > 1.0, "yes", np.where(X[:, 0] < -0.5, "left", "no"))
    return pd.DataFrame(X, columns=NAMES), y


@functools.lru_cache(maxsize=None)
def _model(n_batches=2):
    X, y = _data()
    return PrototypeClassifier(n_batches=n_batches, n_candidates=60, random_state=0).fit(X, y)


def _kernel_oracle(model, X):
    """(n, J_total) kernels, weights and targets straight from the seed's formula, no GEMM."""
    X = np.asarray(X, dtype=np.float64)
    K, w, t = [], [], []
    for batch in model.batches_:
        K.append(_oracles.kernel(X[:, batch.feature_index], batch.prototypes, batch.feature_weights))
        w.append(batch.prototype_weights)
        t.append(batch.target)
    return np.concatenate(K, axis=1), np.concatenate(w), np.concatenate(t)


# ------------------------------------------------------------------ export


def test_export_one_row_per_prototype_matching_batches():
    model = _model()
    table = export_model(model)
    assert len(table) == sum(len(b.target) for b in model.batches_)
    assert list(table.columns[:4]) == ["batch", "sample_index", "target", "prototype_weight"]
    assert list(table.columns[4:]) == [f"{f}_{k}" for f in NAMES for k in ("weight", "value")]
    assert table.attrs["marginals"] == dict(zip(model.classes_.tolist(), model.marginals_.tolist()))
    for b, batch in enumerate(model.batches_, start=1):
        part = table[table["batch"] == b]
        assert np.all(np.diff(part["prototype_weight"].to_numpy()) <= 0)  # decreasing weight
        got = sorted(zip(part["sample_index"], part["target"], part["prototype_weight"]))
        want = sorted(zip(batch.sample_index, model.classes_[batch.target], batch.prototype_weights))
        assert got == want
        for d, name in enumerate(NAMES):
            weight = part[f"{name}_weight"].to_numpy()
            values = part[f"{name}_value"].to_numpy()
            if d in batch.feature_index:
                i = list(batch.feature_index).index(d)
                np.testing.assert_array_equal(weight, batch.feature_weights[i])
                order = {s: row[i] for s, row in zip(batch.sample_index, batch.prototypes)}
                np.testing.assert_array_equal(values, [order[s] for s in part["sample_index"]])
            else:
                assert np.all(weight == 0) and np.all(np.isnan(values))


def test_export_rebuilds_predict_proba():
    model = _model()
    table = export_model(model)
    X, _ = _data(n=30, seed=1)
    q = np.tile(model.marginals_, (len(X), 1))
    for _, row in table.iterrows():
        z = 0.0
        for name in NAMES:
            if row[f"{name}_weight"] > 0:
                z = z + (row[f"{name}_weight"] * (X[name].to_numpy() - row[f"{name}_value"])) ** 2
        k = list(model.classes_).index(row["target"])
        q[:, k] += row["prototype_weight"] * np.exp(-0.5 * z)
    np.testing.assert_allclose(q / q.sum(axis=1, keepdims=True), model.predict_proba(X), rtol=1e-10, atol=1e-12)


def test_export_method_delegates_and_default_names():
    X, y = _data()
    model = PrototypeClassifier(n_candidates=40, random_state=1).fit(X.to_numpy(), y)
    table = model.export()
    assert "x0_weight" in table.columns and "x3_value" in table.columns


def test_export_of_model_without_active_features():
    X, y = _data()
    model = PrototypeClassifier(alpha_feature=100.0, n_candidates=40, random_state=0).fit(X, y)
    table = export_model(model)
    assert len(table) == sum(len(b.target) for b in model.batches_)
    assert all(np.all(table[f"{f}_weight"] == 0) for f in NAMES)
    with pytest.raises(ValueError, match="no active features"):
        shrink_model(model)


@functools.lru_cache(maxsize=None)
def _model_named(*names):
    X, y = _data()
    return PrototypeClassifier(n_candidates=60, random_state=0).fit(X.set_axis(list(names), axis=1), y)


def test_a_feature_name_that_repeats_a_column_is_refused_with_the_fix():
    model = _model_named("prototype", "b", "noise1", "noise2")
    row = _data(n=1)[0].set_axis(model.feature_names_in_, axis=1)
    for call, table in [(lambda **kw: export_model(model, **kw), "export table"),
                        (lambda **kw: explain_prediction(model, row, **kw), "explanation's prototype table")]:
        with pytest.raises(ValueError, match=rf"the feature name\(s\) \['prototype'\] would give the {table} the "
                                             rf"column\(s\) \['prototype_weight'\] twice .* feature_names="):
            call()
        call(feature_names=["proto", "b", "noise1", "noise2"])  # the fix the message names
    table = export_model(model, feature_names=["proto", "b", "noise1", "noise2"])
    assert list(table.columns) == ["batch", "sample_index", "target", "prototype_weight"] + [
        f"{f}_{k}" for f in ["proto", "b", "noise1", "noise2"] for k in ("weight", "value")]
    # a class label can clash too: p_<class> against the feature p's p_weight
    X, y = _data()
    named = PrototypeClassifier(n_candidates=60, random_state=0).fit(
        X.set_axis(["p", "b", "c", "d"], axis=1), np.where(y == "yes", "weight", y))
    with pytest.raises(ValueError, match=r"\['p'\] would give .* the column\(s\) \['p_weight'\] twice"):
        explain_prediction(named, X.iloc[[0]].set_axis(["p", "b", "c", "d"], axis=1))


def test_feature_names_must_be_distinct_as_text():
    model = _model()
    for names, repeated in [(["a", "a", "b", "c"], "['a']"), ([1, "1", "b", "c"], "['1']")]:
        with pytest.raises(ValueError, match=rf"feature_names must be distinct \(as text\); {re.escape(repeated)} "
                                             r"appear more than once"):
            export_model(model, feature_names=names)


# ------------------------------------------------------------------ explain


def _log_p(model, x, c, t):
    """log p_c(x) with each active feature's exponent scaled by t[f] (union of active features)."""
    active = np.unique(np.concatenate([b.feature_index for b in model.batches_]))
    q = model.marginals_.copy()
    for batch in model.batches_:
        scale = t[np.searchsorted(active, batch.feature_index)]
        e = 0.5 * (batch.feature_weights * (x[batch.feature_index] - batch.prototypes)) ** 2 @ scale
        np.add.at(q, batch.target, batch.prototype_weights * np.exp(-e))
    return np.log(q[c]) - np.log(q.sum())


def test_explain_identities_and_probabilities():
    model = _model()
    X, _ = _data(n=5, seed=2)
    for i in range(len(X)):
        ex = explain_prediction(model, X.iloc[i], n_prototypes=None)
        assert isinstance(ex, Explanation)
        proba = model.predict_proba(X.iloc[[i]])[0]
        np.testing.assert_allclose(ex.proba.to_numpy(), proba, rtol=1e-12)
        assert ex.predicted == model.classes_[np.argmax(proba)]
        assert ex.n_prototypes_total == len(ex.prototypes) == sum(len(b.target) for b in model.batches_)
        # proset's decomposition: marginal share + prototype contributions = probability
        per_class = ex.prototypes.groupby("target")["contribution"].sum().reindex(model.classes_, fill_value=0)
        np.testing.assert_allclose(ex.marginal.to_numpy() + per_class.to_numpy(), proba, rtol=1e-12)
        np.testing.assert_allclose(ex.familiarity, familiarity(model, X.iloc[[i]])[0], rtol=1e-12)
        # feature contributions add up to log p_c(x) - log p_c(all kernels 1)
        np.testing.assert_allclose(ex.features["contribution"].sum(), ex.log_proba - ex.baseline_log_proba,
                                   rtol=1e-8, atol=1e-9)
        np.testing.assert_allclose(ex.log_proba, np.log(proba.max()), rtol=1e-12)
        impact = ex.prototypes["impact"].to_numpy()
        assert np.all(np.diff(impact) <= 0)
        np.testing.assert_allclose(impact, ex.prototypes["prototype_weight"] * ex.prototypes["similarity"], rtol=1e-12)


def test_explain_similarity_factorises_over_features():
    model = _model()
    X, _ = _data(n=1, seed=3)
    ex = explain_prediction(model, X.iloc[0], n_prototypes=None)
    sims = ex.prototypes[[f"{f}_similarity" for f in ex.features["feature"]]].to_numpy()
    np.testing.assert_allclose(np.nanprod(sims, axis=1), ex.prototypes["similarity"], rtol=1e-10)
    for f in ex.features["feature"]:
        value = X[f].iloc[0]
        assert np.isclose(ex.features.set_index("feature").loc[f, "value"], value)


def test_explain_feature_contributions_match_integrated_gradients_oracle():
    model = _model()
    X, _ = _data(n=1, seed=4)
    x = X.to_numpy()[0]
    ex = explain_prediction(model, X.iloc[0])
    active = np.unique(np.concatenate([b.feature_index for b in model.batches_]))
    c = list(model.classes_).index(ex.predicted)
    h = 1e-6
    for i, d in enumerate(active):
        def grad(s, i=i):
            t = np.full(len(active), s)
            up, down = t.copy(), t.copy()
            up[i] += h
            down[i] -= h
            return (_log_p(model, x, c, up) - _log_p(model, x, c, down)) / (2 * h)

        want = quad(grad, 0.0, 1.0, limit=200, epsabs=1e-10)[0]
        got = ex.features.set_index("feature").loc[NAMES[d], "contribution"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_explain_top_prototypes_are_the_largest_impacts():
    model = _model()
    X, _ = _data(n=1, seed=5)
    full = explain_prediction(model, X.iloc[0], n_prototypes=None)
    top = model.explain(X.iloc[0], n_prototypes=3)
    assert len(top.prototypes) == 3
    pd.testing.assert_frame_equal(top.prototypes, full.prototypes.iloc[:3])
    assert full.prototypes["impact"].iloc[2] >= full.prototypes["impact"].iloc[3:].max()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-4, 4, allow_nan=False), min_size=4, max_size=4))
def test_explain_identities_hold_anywhere(row):
    model = _model()
    ex = explain_prediction(model, pd.Series(row, index=NAMES), n_prototypes=None)
    np.testing.assert_allclose(ex.proba.sum(), 1.0, rtol=1e-12)
    per_class = ex.prototypes.groupby("target")["contribution"].sum().reindex(model.classes_, fill_value=0)
    np.testing.assert_allclose(ex.marginal.to_numpy() + per_class.to_numpy(), ex.proba.to_numpy(), atol=1e-12)
    np.testing.assert_allclose(ex.features["contribution"].sum(), ex.log_proba - ex.baseline_log_proba,
                               rtol=1e-8, atol=1e-9)


def test_explain_rejects_bad_input():
    model = _model()
    X, _ = _data(n=3)
    with pytest.raises(ValueError, match="exactly one row"):
        explain_prediction(model, X)
    with pytest.raises(ValueError, match="n_prototypes"):
        explain_prediction(model, X.iloc[0], n_prototypes=-1)
    with pytest.raises(ValueError):
        explain_prediction(model, np.zeros(3))
    pipe = make_pipeline(StandardScaler(), PrototypeClassifier(n_candidates=40, random_state=0)).fit(*_data())
    with pytest.raises(TypeError, match="Pipeline"):
        explain_prediction(pipe, X.iloc[0])
    with pytest.raises(ValueError, match="feature_names"):
        explain_prediction(model, X.iloc[0], feature_names=["a"])


# ------------------------------------------------------------------ shrink


def test_shrink_is_equivalent_on_active_columns():
    model = _model()
    before = model.predict_proba(_data(n=50, seed=6)[0])
    shrunk = shrink_model(model)
    active = shrunk.active_features_
    assert np.array_equal(active, np.unique(np.concatenate([b.feature_index for b in model.batches_])))
    assert shrunk.n_features_in_ == len(active) <= model.n_features_in_
    assert list(shrunk.feature_names_in_) == [NAMES[d] for d in active]
    X, _ = _data(n=50, seed=6)
    np.testing.assert_array_equal(shrunk.predict_proba(X.iloc[:, active]), model.predict_proba(X))
    np.testing.assert_array_equal(model.predict_proba(X), before)  # the original is untouched
    assert model.n_features_in_ == 4 and not hasattr(model, "active_features_")
    again = model.shrink().shrink()
    np.testing.assert_array_equal(again.active_features_, active)
    np.testing.assert_array_equal(again.predict_proba(X.iloc[:, active]), model.predict_proba(X))


def _model_on_features(columns):
    """The fitted model with every batch cut down to ``columns`` (a valid, if different, model)."""
    model = copy.deepcopy(_model())
    batches = []
    for batch in model.batches_:
        keep = np.isin(batch.feature_index, columns)
        batches.append(dataclasses.replace(batch, feature_index=batch.feature_index[keep],
                                           feature_weights=batch.feature_weights[keep],
                                           prototypes=batch.prototypes[:, keep]))
    model.batches_ = batches
    return model


def test_shrink_drops_unused_columns():
    active = np.unique(np.concatenate([b.feature_index for b in _model().batches_]))
    assert active[0] == 0 and len(active) >= 2  # "a" drives y
    kept = active[1:]
    names = [NAMES[d] for d in kept]
    model = _model_on_features(kept)
    shrunk = shrink_model(model)
    np.testing.assert_array_equal(shrunk.active_features_, kept)
    assert shrunk.n_features_in_ == len(kept) and list(shrunk.feature_names_in_) == names
    X, _ = _data(n=30, seed=9)
    np.testing.assert_array_equal(shrunk.predict_proba(X[names]), model.predict_proba(X))
    table = export_model(model)
    assert np.all(table["a_weight"] == 0) and table["a_value"].isna().all()
    ex = explain_prediction(model, X.iloc[0])
    assert sorted(ex.features["feature"]) == sorted(names)


def test_shrink_numpy_model():
    X, y = _data()
    model = PrototypeClassifier(n_candidates=40, random_state=2).fit(X.to_numpy(), y)
    shrunk = model.shrink()
    assert not hasattr(shrunk, "feature_names_in_") or shrunk.feature_names_in_ is None
    Xn = X.to_numpy()
    np.testing.assert_array_equal(shrunk.predict_proba(Xn[:, shrunk.active_features_]), model.predict_proba(Xn))


# ------------------------------------------------------------------ familiarity


def test_familiarity_equals_brute_force_sum():
    model = _model()
    X, _ = _data(n=40, seed=7)
    K, w, _ = _kernel_oracle(model, X)
    np.testing.assert_allclose(familiarity(model, X), K @ w, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(model.familiarity(X), K @ w, rtol=1e-10, atol=1e-14)


def test_familiarity_decreases_far_from_the_data():
    model = _model()
    X, _ = _data(n=40, seed=8)
    near = familiarity(model, X)
    assert np.all(near >= 0)
    direction = np.ones(4) / 2.0
    values = [familiarity(model, X + r * direction).mean() for r in (0.0, 2.0, 5.0, 20.0)]
    assert all(a > b for a, b in zip(values, values[1:]))
    assert values[-1] < 1e-6 * values[0]
    # far away the prediction falls back to the marginals
    np.testing.assert_allclose(model.predict_proba(X + 20 * direction), np.tile(model.marginals_, (40, 1)), atol=1e-6)


def _grid_model(offset, seed=3):
    """A model of grid data (1/64 steps within [-4, 4]) shifted by ``offset``, with a noise column."""
    rng = np.random.default_rng(seed)
    X = np.clip(np.round(rng.normal(size=(150, 3)) * 64) / 64, -4, 4)
    y = (X[:, 0] + X[:, 1] ** 2 > 1.0).astype(int)
    model = PrototypeClassifier(n_batches=2, n_candidates=40, alpha_feature=3e-2, random_state=0)
    return model.fit(X + offset, y), X + offset


@pytest.mark.parametrize("offset", [8.0 * 12_500_000, -8.0 * 3])
def test_explain_familiarity_export_and_shrink_move_with_a_translation(offset):
    # issue 17: every evaluation path centres first; shifts exact on the grid give the same bits
    base, X0 = _grid_model(0.0)
    moved, X1 = _grid_model(offset)
    np.testing.assert_array_equal(moved.familiarity(X1), base.familiarity(X0))
    for a, b in zip((moved.explain(X1[5]), moved.explain(X1[7])), (base.explain(X0[5]), base.explain(X0[7]))):
        pd.testing.assert_series_equal(a.proba, b.proba)
        np.testing.assert_array_equal(a.features["contribution"], b.features["contribution"])
        values = [c for c in a.prototypes.columns if c.endswith("_value")]
        # the prototypes are reported in the user's units
        np.testing.assert_array_equal(a.prototypes[values].to_numpy() - offset, b.prototypes[values].to_numpy())
    ea, eb = export_model(moved), export_model(base)
    values = [c for c in ea.columns if c.endswith("_value")]
    np.testing.assert_array_equal(ea[values].to_numpy() - offset, eb[values].to_numpy())
    # the shrunk model keeps the centre of the kept columns
    shrunk = shrink_model(moved)
    np.testing.assert_array_equal(shrunk.center_, moved.center_[shrunk.active_features_])
    np.testing.assert_array_equal(shrunk.predict_proba(X1[:, shrunk.active_features_]), moved.predict_proba(X1))


def test_shrink_keeps_the_centre_of_the_kept_columns():
    # a centre that differs by column: the shrunk model must take its kept columns' entries
    base, X = _grid_model(0.0)
    y = base.predict(X)
    X = X[:, [2, 0, 1]] + np.array([8.0e6, -4.0e3, 1.6e7])  # the noise column first
    model = PrototypeClassifier(n_batches=2, n_candidates=40, alpha_feature=3e-2, random_state=0).fit(X, y)
    shrunk = shrink_model(model)
    assert 0 not in shrunk.active_features_  # the test's point: the kept columns are not the first
    np.testing.assert_allclose(shrunk.predict_proba(X[:, shrunk.active_features_]), model.predict_proba(X),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("row_value", [1e308, -1e103])
def test_explain_and_familiarity_refuse_rows_beyond_the_magnitude_limit(row_value):
    model = _model()
    X, _ = _data()
    bad = X.iloc[:3].copy()
    bad.iloc[1, 2] = row_value
    with pytest.raises(ValueError, match="X has values of magnitude"):
        familiarity(model, bad)
    with pytest.raises(ValueError, match="X_row has values of magnitude"):
        explain_prediction(model, bad.iloc[[1]])
