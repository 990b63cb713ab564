"""Tests of export/explain in the user's units, n_batches, log_likelihood, reports and the unfamiliar-rows warning."""

import functools
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import percentileofscore
from sklearn.metrics import log_loss
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from discrim.datasets import load_benchmark
from discrim.prototype import PrototypeClassifier, UnfamiliarDataWarning, explain, export, familiarity, write_report
from discrim.prototype._explain import dominant_set

NAMES = ["a", "b", "c"]
SCALE = np.array([1.0, 250.0, 0.01])
OFFSET = np.array([0.0, 1000.0, -3.0])


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    y = np.where(Z[:, 0] + Z[:, 1] ** 2 > 1.0, "yes", np.where(Z[:, 0] < -0.5, "left", "no"))
    return pd.DataFrame(Z * SCALE + OFFSET, columns=NAMES), y


@functools.lru_cache(maxsize=None)
def _pipe(scaler="standard"):
    X, y = _data()
    pre = StandardScaler() if scaler == "standard" else MinMaxScaler()
    return make_pipeline(pre, PrototypeClassifier(n_batches=3, n_candidates=60, random_state=0)).fit(X, y)


def _rebuild(table, X, names, weight, value):
    """predict_proba from an export table alone (the formula of its Notes)."""
    X = np.asarray(X, dtype=np.float64)
    classes = list(table.attrs["marginals"])
    q = np.tile(list(table.attrs["marginals"].values()), (X.shape[0], 1))
    for _, row in table.iterrows():
        e = np.zeros(X.shape[0])
        for d, f in enumerate(names):
            v = row[f"{f}_{weight}"]
            if v > 0:
                e += (v * (X[:, d] - row[f"{f}_{value}"])) ** 2
        q[:, classes.index(row["target"])] += row["prototype_weight"] * np.exp(-0.5 * e)
    return q / q.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("scaler", ["standard", "minmax"])
def test_export_rebuilds_predict_proba_in_both_units(scaler):
    pipe = _pipe(scaler)
    X, _ = _data(80, seed=1)
    table = export(pipe)
    assert {f"{f}_{k}" for f in NAMES for k in ("weight", "value", "weight_original", "original")} <= set(table)
    want = pipe.predict_proba(X)
    # raw rows with the weights and values in original units
    np.testing.assert_allclose(_rebuild(table, X, NAMES, "weight_original", "original"), want, rtol=1e-9, atol=1e-12)
    # scaled rows with the model's units
    np.testing.assert_allclose(_rebuild(table, pipe[0].transform(X), NAMES, "weight", "value"), want,
                               rtol=1e-9, atol=1e-12)
    # the original values are the prototypes' training rows where the feature is active
    Xtr, _ = _data()
    for _, row in table.iterrows():
        for d, f in enumerate(NAMES):
            if row[f"{f}_weight"] > 0:
                np.testing.assert_allclose(row[f"{f}_original"], Xtr.iloc[row["sample_index"], d], rtol=1e-10)
            else:
                assert np.isnan(row[f"{f}_original"])


def test_export_n_batches_feature_and_sample_names():
    pipe = _pipe()
    full = export(pipe)
    part = export(pipe, n_batches=1, feature_names=["A", "B", "C"], sample_names=[f"row{i}" for i in range(300)])
    assert set(part["batch"]) == {1} and len(part) == (full["batch"] == 1).sum()
    assert "A_original" in part and "a_value" not in part
    assert list(part["sample_name"]) == [f"row{i}" for i in part["sample_index"]]
    with pytest.raises(ValueError, match="sample_names has 5 names"):
        export(pipe, sample_names=list("abcde"))
    with pytest.raises(ValueError, match=r"n_batches must be None or an integer in \[0, 3\]"):
        export(pipe, n_batches=4)


def test_explain_contributions_add_up_to_predict_proba_and_dominant_set():
    pipe = _pipe()
    X, y = _data(20, seed=2)
    for i in range(5):
        ex = explain(pipe, X.iloc[[i]], y[i], n_prototypes=None)
        proba = pipe.predict_proba(X.iloc[[i]])[0]
        np.testing.assert_allclose(ex.proba.to_numpy(), proba, rtol=1e-10)
        for k, label in enumerate(pipe.classes_):
            # spec: p_k(x) = (p_0k + sum_{j: y_j = k} w_j K_j) / (1 + sum_j w_j K_j)
            total = ex.marginal[label] + ex.prototypes[f"p_{label}"].sum()
            np.testing.assert_allclose(total, proba[k], rtol=1e-10)
        assert ex.true_class == y[i] and ex.name == str(X.index[i])
        # raw row values and prototype values back in original units
        row = ex.features.set_index("feature")
        np.testing.assert_allclose(row["original"], X.iloc[i][row.index].to_numpy(), rtol=1e-10)
        # slope: model units per input unit (the scaler's 1 / scale)
        np.testing.assert_allclose(row["slope"], 1.0 / pipe[0].scale_[X.columns.get_indexer(row.index)], rtol=1e-12)
        dom = ex.prototypes["dominant_set"].to_numpy()
        if dom.any():  # the dominant set decides: its classes' shares alone give the predicted class
            share = ex.marginal.to_numpy() + ex.prototypes.loc[dom, [f"p_{c}" for c in pipe.classes_]].sum().to_numpy()
            assert pipe.classes_[np.argmax(share)] == ex.predicted
            assert ex.prototypes["impact"][dom].min() >= np.max(ex.prototypes["impact"].to_numpy()[~dom], initial=0)


def test_dominant_set_by_hand():
    marginals = np.array([0.5, 0.5])
    # one heavy prototype of class 1 decides; the light ones cannot overturn it
    impact = np.array([0.01, 5.0, 0.02])
    target = np.array([0, 1, 0])
    np.testing.assert_array_equal(dominant_set(impact, target, marginals), [False, True, False])
    # far from everything: empty
    np.testing.assert_array_equal(dominant_set(np.zeros(3), target, marginals), [False] * 3)
    # two equal heavy prototypes of different classes and a light tie-breaker: all needed
    np.testing.assert_array_equal(dominant_set(np.array([1.0, 1.0, 0.1]), np.array([0, 1, 1]), marginals),
                                  [True, True, True])


def test_familiarity_quantile_equals_independent_ecdf():
    pipe = _pipe()
    Xtr, _ = _data()
    X, _ = _data(10, seed=3)
    Z = pipe[0].transform(Xtr)
    model = pipe[-1]
    # independent familiarity: the seed's kernel, summed directly
    ref = np.zeros(len(Z))
    for batch in model.batches_:
        diff = Z[:, None, batch.feature_index] - batch.prototypes[None]
        ref += np.exp(-0.5 * ((diff * batch.feature_weights) ** 2).sum(axis=2)) @ batch.prototype_weights
    np.testing.assert_allclose(familiarity(pipe, Xtr), ref, rtol=1e-9)
    for i in range(4):
        ex = explain(pipe, X.iloc[[i]], reference=Xtr)
        assert ex.familiarity_quantile == pytest.approx(percentileofscore(ref, ex.familiarity, kind="weak") / 100)


def test_n_batches_equals_truncated_model_and_staged():
    X, y = _data()
    Xt, yt = _data(60, seed=4)
    full = PrototypeClassifier(n_batches=3, n_candidates=60, random_state=0).fit(X, y)
    staged = list(full.staged_predict_proba(Xt))
    for k in range(4):
        # batch b always draws from stream b: a model fitted with k batches is the first k of the full one
        short = PrototypeClassifier(n_batches=k, n_candidates=60, random_state=0).fit(X, y)
        np.testing.assert_allclose(full.predict_proba(Xt, n_batches=k), short.predict_proba(Xt), rtol=1e-12)
        np.testing.assert_array_equal(full.predict(Xt, n_batches=k), short.predict(Xt))
        assert full.score(Xt, yt, n_batches=k) == short.score(Xt, yt)
        np.testing.assert_allclose(full.predict_proba(Xt, n_batches=k), staged[k], rtol=1e-12)
    listed = full.predict_proba(Xt, n_batches=[3, 0, 2])
    assert isinstance(listed, list) and len(listed) == 3
    for got, k in zip(listed, [3, 0, 2]):
        np.testing.assert_allclose(got, staged[k], rtol=1e-12)
    np.testing.assert_allclose(np.exp(full.predict_log_proba(Xt, n_batches=[1])[0]), staged[1], rtol=1e-10)
    np.testing.assert_array_equal(full.score(Xt, yt, n_batches=[0, 3]),
                                  [full.score(Xt, yt, n_batches=0), full.score(Xt, yt)])
    assert [p.tolist() for p in full.staged_predict(Xt, n_batches=2)] == [
        full.predict(Xt, n_batches=k).tolist() for k in range(3)]
    assert len(list(full.staged_predict_proba(Xt, n_batches=1))) == 2


def test_log_likelihood_is_minus_log_loss():
    X, y = _data()
    Xt, yt = _data(60, seed=5)
    model = PrototypeClassifier(n_batches=2, n_candidates=60, random_state=0).fit(X, y)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(yt))
    for k in (0, 1, 2):
        proba = model.predict_proba(Xt, n_batches=k)
        assert model.log_likelihood(Xt, yt, n_batches=k) == pytest.approx(
            -log_loss(yt, proba, labels=model.classes_), rel=1e-10)
        assert model.log_likelihood(Xt, yt, sample_weight=w, n_batches=k) == pytest.approx(
            -log_loss(yt, proba, sample_weight=w, labels=model.classes_), rel=1e-10)
    np.testing.assert_allclose(model.log_likelihood(Xt, yt, n_batches=[0, 2]),
                               [model.log_likelihood(Xt, yt, n_batches=0), model.log_likelihood(Xt, yt)])
    with pytest.raises(ValueError, match="among classes_"):
        model.log_likelihood(Xt, np.where(yt == "yes", "maybe", yt))


@pytest.mark.parametrize("bad", [-1, 3, 1.5, True, [], [0, 9], "2", np.array(1.0), np.array(True), np.array(3)])
def test_bad_n_batches_one_line(bad):
    X, y = _data()
    model = PrototypeClassifier(n_batches=2, n_candidates=60, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"n_batches must") as info:
        model.predict_proba(X, n_batches=bad)
    assert "\n" not in str(info.value)


def test_raw_rows_to_a_model_fitted_on_scaled_rows_warn():
    X, y = _data()
    pipe = _pipe()
    model = pipe[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnfamiliarDataWarning)
        model.predict_proba(pipe[0].transform(X))  # scaled rows: no warning
        pipe.predict_proba(X)  # the pipeline scales them
        explain(pipe, X.iloc[[0]])
    with pytest.warns(UnfamiliarDataWarning, match=r"fitted on scaled features .* Pipeline\(scaler, model\)"):
        model.predict_proba(X.to_numpy())
    with pytest.warns(UnfamiliarDataWarning):
        model.predict(X.to_numpy(), n_batches=[1, 2])
    with pytest.warns(UnfamiliarDataWarning):
        model.explain(X.to_numpy()[0])



def test_raw_rows_to_a_model_of_few_wide_prototypes_warn():
    # one batch of iris, scaled: raw rows' familiarity (median 3.9e-6) lay above the share of the total
    # weight (2e-7) on 57 % of them, so nothing warned (accuracy 0.96 -> 0.21); against the prototypes'
    # own typical familiarity (487) 90 of 150 lie more than a million times below
    from sklearn.datasets import load_iris
    from sklearn.preprocessing import StandardScaler

    X, y = load_iris(return_X_y=True)
    Z = StandardScaler().fit_transform(X)
    model = PrototypeClassifier(n_batches=1, n_candidates=40, random_state=0).fit(Z, y)
    with pytest.warns(UnfamiliarDataWarning, match=r"90 of 150 rows of X lie far from every prototype \(familiarity "
                                                    r"below 1e-06 times the 487 typical of the prototypes themselves\)"):
        model.predict(X)
    noisy = Z + np.random.default_rng(0).normal(scale=0.5, size=Z.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnfamiliarDataWarning)
        model.predict(Z)  # the rows it was fitted on, and rows near them, do not warn
        model.predict(noisy)

@pytest.mark.parametrize("suffix", [".xlsx", ".html"])
def test_reports_are_written_with_expected_sheets(tmp_path, suffix):
    pipe = _pipe()
    X, y = _data(5, seed=6)
    table = export(pipe, report=tmp_path / f"export{suffix}")
    ex = explain(pipe, X.iloc[[0]], y[0], reference=_data()[0], n_prototypes=4, report=tmp_path / f"ex{suffix}")
    if suffix == ".xlsx":
        openpyxl = pytest.importorskip("openpyxl")
        book = openpyxl.load_workbook(tmp_path / "export.xlsx")
        assert book.sheetnames == ["prototypes", "marginals", "feature_weights"]
        assert book["prototypes"].max_row == len(table) + 1  # header + one row per prototype
        header = [c.value for c in book["prototypes"][1]]
        assert header == list(table.columns)
        assert book["marginals"].max_row == 1 + len(pipe.classes_)
        assert book["feature_weights"].max_row == 1 + 3
        book = openpyxl.load_workbook(tmp_path / "ex.xlsx")
        assert book.sheetnames == ["summary", "classes", "prototypes", "features"]
        assert book["prototypes"].max_row == 5
        items = {r[0].value: r[1].value for r in book["summary"].iter_rows(min_row=2)}
        assert items["true class"] == y[0] and items["familiarity quantile"] == pytest.approx(ex.familiarity_quantile)
        assert items["batches"] == "all"  # every batch (the cell was blank)
    else:
        bs4 = pytest.importorskip("bs4")
        page = bs4.BeautifulSoup((tmp_path / "export.html").read_text(), "html.parser")
        assert [h.text for h in page.find_all("h2")] == ["prototypes", "marginals", "feature_weights"]
        assert len(page.find(id="prototypes").find("tbody").find_all("tr")) == len(table)
        page = bs4.BeautifulSoup((tmp_path / "ex.html").read_text(), "html.parser")
        assert [h.text for h in page.find_all("h2")] == ["summary", "classes", "prototypes", "features"]
        assert len(page.find(id="prototypes").find("tbody").find_all("tr")) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([f"export{suffix}", f"ex{suffix}"])  # no temp files


def test_report_failure_leaves_no_file(tmp_path, monkeypatch):
    target = tmp_path / "out.html"
    target.write_text("old")

    class Boom(pd.DataFrame):
        def to_html(self, *args, **kwargs):
            raise RuntimeError("disk full")

    frame = pd.DataFrame({"a": [1]})
    monkeypatch.setattr(pd.DataFrame, "to_html", Boom.to_html)
    with pytest.raises(RuntimeError, match="disk full"):
        write_report(target, {"x": frame})
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.html"]
    with pytest.raises(ValueError, match=r"\.xlsx or \.html"):
        write_report(tmp_path / "out.csv", {"x": frame})


def test_search_with_a_transformer_explains_raw_rows():
    from discrim.model_selection import PrototypeClassifierCV

    X, y = _data(150)
    search = PrototypeClassifierCV([1e-3, 1e-2], max_batches=1, transformer=StandardScaler(), cv=2, n_candidates=40,
                                   random_state=0).fit(X, y)
    table = export(search)
    assert "a_original" in table
    np.testing.assert_allclose(_rebuild(table, X.iloc[:20], NAMES, "weight_original", "original"),
                               search.predict_proba(X.iloc[:20]), rtol=1e-9, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnfamiliarDataWarning)
        ex = explain(search, X.iloc[[0]])
    np.testing.assert_allclose(ex.proba.to_numpy(), search.predict_proba(X.iloc[[0]])[0], rtol=1e-10)


def test_a_0d_count_is_an_int_and_lists_are_flat_everywhere():
    X, y = _data()
    Xt, yt = _data(40, seed=7)
    model = PrototypeClassifier(n_batches=2, n_candidates=60, random_state=0).fit(X, y)
    one = np.array(1)
    got = model.predict_proba(Xt, n_batches=one)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, model.predict_proba(Xt, n_batches=1))
    assert model.score(Xt, yt, n_batches=one) == model.score(Xt, yt, n_batches=1)
    assert model.log_likelihood(Xt, yt, n_batches=one) == model.log_likelihood(Xt, yt, n_batches=1)
    pd.testing.assert_frame_equal(model.export(n_batches=one), model.export(n_batches=1))
    pd.testing.assert_frame_equal(explain(model, Xt.iloc[[0]], n_batches=one).prototypes,
                                  explain(model, Xt.iloc[[0]], n_batches=1).prototypes)
    np.testing.assert_array_equal(familiarity(model, Xt, n_batches=one), familiarity(model, Xt, n_batches=1))
    assert len(list(model.staged_predict_proba(Xt, n_batches=one))) == 2
    # a tuple or a 1-D array is a list of counts
    for counts in [(0, 2), np.array([0, 2])]:
        listed = model.predict_proba(Xt, n_batches=counts)
        assert isinstance(listed, list) and len(listed) == 2
        np.testing.assert_array_equal(listed[1], model.predict_proba(Xt))
    # nested lists and 2-D arrays are refused, not flattened
    for nested in [[[1, 2]], np.array([[1, 2]])]:
        with pytest.raises(ValueError, match=r"n_batches must be .* not a nested list or a 2-D array"):
            model.predict(Xt, n_batches=nested)
    # a list where one count is taken
    for call in [lambda: model.export(n_batches=[1]), lambda: familiarity(model, Xt, n_batches=[1]),
                 lambda: model.staged_predict(Xt, n_batches=[1])]:
        with pytest.raises(ValueError, match=r"n_batches must be None or an integer in \[0, 2\].*one count here"):
            call()


def test_explain_through_a_pandas_pipeline_warns_nothing():
    X, y = _data()
    pipe = make_pipeline(StandardScaler(), PrototypeClassifier(n_batches=2, n_candidates=60, random_state=0))
    pipe.set_output(transform="pandas").fit(X, y)
    row = X.iloc[[7]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "X does not have valid feature names" from the last step
        ex = explain(pipe, row, y[7], reference=X)
        fam = familiarity(pipe, row)
        table = export(pipe)
    np.testing.assert_allclose(ex.proba.to_numpy(), pipe.predict_proba(row)[0], rtol=1e-12)
    assert ex.name == "7" and ex.familiarity == pytest.approx(fam[0], rel=1e-12)
    assert "a_original" in ex.prototypes and "a_original" in table


def test_explain_takes_a_true_class_or_a_sequence_of_one():
    pipe = _pipe()
    X, y = _data(5, seed=8)
    assert explain(pipe, X.iloc[[0]], [y[0]]).true_class == y[0]
    assert explain(pipe, X.iloc[[0]], pd.Series([y[0]], index=[3])).true_class == y[0]
    assert isinstance(explain(pipe, X.iloc[[0]], np.array([y[0]])).true_class, str)
    for bad in [[y[0], y[1]], np.array([[y[0]]]), []]:
        with pytest.raises(ValueError, match=r"y must be the row's true class, one label \(or a sequence of one"):
            explain(pipe, X.iloc[[0]], bad)
    with pytest.raises(ValueError, match=r"y must be one of the model's classes"):
        explain(pipe, X.iloc[[0]], ["maybe"])


def test_log_likelihood_names_the_shape_of_a_column_y():
    X, y = _data()
    model = PrototypeClassifier(n_batches=1, n_candidates=60, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=r"y must be a 1-D array of labels, one per row of X; got shape "
                                         r"\(300, 1\) \(use y.ravel\(\) for a column\)"):
        model.log_likelihood(X, y[:, None])


def test_unfamiliar_rows_warn_at_the_callers_line():
    X, _ = _data()
    pipe = _pipe()
    model = pipe[-1]
    raw = X.to_numpy()
    calls = [lambda: model.predict_proba(raw), lambda: model.predict(raw, n_batches=[1, 2]),
             lambda: model.score(raw, _data()[1]), lambda: model.explain(raw[0]), lambda: explain(model, raw[0])]
    for call in calls:
        with pytest.warns(UnfamiliarDataWarning) as record:
            call()
        assert {w.filename for w in record if issubclass(w.category, UnfamiliarDataWarning)} == {__file__}


def test_a_report_in_a_missing_folder_names_the_path(tmp_path):
    target = tmp_path / "no" / "such" / "report.html"
    with pytest.raises(FileNotFoundError, match=r"cannot write the report .*report\.html.*: its folder .*such' "
                                                r"does not exist"):
        export(_pipe(), report=target)
    assert not (tmp_path / "no").exists()


def test_original_unit_columns_that_repeat_are_refused(tmp_path):
    X, y = _data()
    # a and a_weight both give a_weight_original once the pipeline adds the original units
    pipe = make_pipeline(StandardScaler(), PrototypeClassifier(n_candidates=60, random_state=0))
    pipe.fit(X.set_axis(["a", "a_weight", "c"], axis=1), y)
    row = X.iloc[[0]].set_axis(["a", "a_weight", "c"], axis=1)
    with pytest.raises(ValueError, match=r"\['a', 'a_weight'\] would give the export table the column\(s\) "
                                         r"\['a_weight_original'\] twice"):
        export(pipe)
    table = export(pipe, feature_names=["a", "aw", "c"])
    assert table.columns.is_unique and "aw_weight_original" in table
    assert explain(pipe, row).prototypes.columns.is_unique
    # the report's feature_weights sheet has one column per feature beside batch
    pipe = make_pipeline(StandardScaler(), PrototypeClassifier(n_candidates=60, random_state=0))
    pipe.fit(X.set_axis(["batch", "b", "c"], axis=1), y)
    assert export(pipe).columns.is_unique
    with pytest.raises(ValueError, match=r"\['batch'\] would give the report's feature_weights sheet the "
                                         r"column\(s\) \['batch'\] twice"):
        export(pipe, report=tmp_path / "export.html")
    assert list(tmp_path.iterdir()) == []


def test_fit_and_export_notes_warn_at_the_callers_line():
    from sklearn.preprocessing import PolynomialFeatures

    X, y = _data(80)
    with pytest.warns(UserWarning, match="ended without prototypes") as record:
        PrototypeClassifier(alpha_feature=1e3, n_candidates=20, random_state=0).fit(X, y)  # through fit_context
    assert record[0].filename == __file__
    pipe = make_pipeline(PolynomialFeatures(2, include_bias=False),
                         PrototypeClassifier(n_candidates=20, random_state=0)).fit(X, y)
    with pytest.warns(UserWarning, match="the model's units only") as record:
        export(pipe)
    assert record[0].filename == __file__


def test_rows_that_observe_no_active_feature_are_warned_about():
    # factor 1 for every missing feature: a blank row was the most familiar of all and got a
    # confident prediction without a word
    X, _, y, _ = load_benchmark("iris", as_frame=True)
    model = PrototypeClassifier(n_batches=2, n_candidates=40, random_state=0).fit(X, y)
    blank = X.iloc[:3].copy()
    blank.iloc[1, :] = np.nan
    with pytest.warns(UnfamiliarDataWarning, match=r"1 of 3 rows of X observe none of the model's active features "
                                                   r"\(.*petal.*\): a missing feature contributes the factor 1"):
        model.predict_proba(blank)
    active = np.unique(np.concatenate([b.feature_index for b in model.batches_]))
    partly = X.iloc[:3].copy()
    partly.iloc[1, np.setdiff1d(np.arange(X.shape[1]), active[:1])] = np.nan  # one active feature observed
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnfamiliarDataWarning)
        model.predict_proba(partly)


def test_features_far_from_every_prototype_are_named():
    X, _, y, _ = load_benchmark("wine", as_frame=True)
    model = PrototypeClassifier(n_batches=1, n_candidates=40, random_state=0).fit(X, y)
    active = np.unique(np.concatenate([b.feature_index for b in model.batches_]))
    shifted = X.copy()
    shifted.iloc[:, active[0]] += 1e3
    with pytest.warns(UnfamiliarDataWarning, match=str(X.columns[active[0]])):
        model.predict_proba(shifted)


# text that a spreadsheet would take for a formula; the last two are not formulas to openpyxl
FORMULA_LIKE = ['=HYPERLINK("http://example.invalid/?x","click")', "=1+2", "+3", "-4", "@SUM(A1)", "\t=5"]


def _sheet_texts(path):
    """Per sheet of the workbook at ``path``: whether it holds a formula (<f>), and the text of its cells."""
    import zipfile
    from xml.etree import ElementTree

    ns = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    out = {}
    with zipfile.ZipFile(path) as book:
        for name in book.namelist():
            if name.startswith("xl/worksheets/sheet"):
                root = ElementTree.fromstring(book.read(name))
                texts = {t.text for t in root.iter(f"{ns}t")}
                out[name] = (any(True for _ in root.iter(f"{ns}f")), texts)
    return out


def test_xlsx_reports_hold_labels_and_names_as_text_not_formulas(tmp_path):
    # openpyxl stored text starting with "=" as a live formula: a label from an untrusted CSV ran
    # in the reader's spreadsheet, and names like "=1+1_weight" were broken formulas
    openpyxl = pytest.importorskip("openpyxl")
    frame = pd.DataFrame({f"{text}_weight": [text, 1.5] for text in FORMULA_LIKE})
    write_report(tmp_path / "direct.xlsx", {"names": frame})
    (formula, texts), = _sheet_texts(tmp_path / "direct.xlsx").values()
    assert not formula and set(FORMULA_LIKE) | set(frame.columns) <= texts
    sheet = openpyxl.load_workbook(tmp_path / "direct.xlsx")["names"]
    assert [c.value for c in sheet[1]] == list(frame.columns) and [c.value for c in sheet[2]] == FORMULA_LIKE
    # every sheet of export and explain, labels and feature names from the user's data
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(90, 2)), columns=["=1+1", "@b"])
    y = np.array(FORMULA_LIKE[:3])[np.digitize(X["=1+1"], [-0.4, 0.4])]
    model = PrototypeClassifier(n_candidates=30, random_state=0).fit(X, y)
    table = export(model, report=tmp_path / "export.xlsx")
    ex = explain(model, X.iloc[[0]], y[0], report=tmp_path / "explain.xlsx")
    for path, frames in [("export.xlsx", {"prototypes": table}), ("explain.xlsx", ex.to_frames())]:
        sheets = _sheet_texts(tmp_path / path)
        assert len(sheets) >= len(frames) and not any(formula for formula, _ in sheets.values())
        read = pd.read_excel(tmp_path / path, sheet_name=None)
        for name, want in frames.items():
            assert list(read[name].columns) == [str(c) for c in want.columns]
    read = pd.read_excel(tmp_path / "export.xlsx", sheet_name=None)
    assert list(read["prototypes"]["target"]) == list(table["target"])
    assert list(read["marginals"]["class"]) == list(table.attrs["marginals"])
    assert list(read["feature_weights"].columns) == ["batch", "=1+1", "@b"]
    read = pd.read_excel(tmp_path / "explain.xlsx", sheet_name=None)
    assert list(read["classes"]["class"]) == list(model.classes_)
    assert list(read["prototypes"]["target"]) == list(ex.prototypes["target"])
    items = dict(zip(read["summary"]["item"], read["summary"]["value"]))
    assert items["predicted"] == ex.predicted and items["true class"] == y[0]


@pytest.mark.parametrize("suffix", [".html", ".xlsx"])
def test_a_report_path_that_is_a_folder_is_refused_first(tmp_path, suffix):
    # it failed after the report was rendered, with IsADirectoryError naming the temporary file
    folder = tmp_path / f"out{suffix}"
    folder.mkdir()
    model = _pipe()
    X, _ = _data(3, seed=9)
    for call in [lambda: export(model, report=folder), lambda: explain(model, X.iloc[[0]], report=folder),
                 lambda: write_report(folder, {"x": pd.DataFrame({"a": [1]})})]:
        with pytest.raises(IsADirectoryError, match="^" + re.escape(
                f"cannot write the report '{folder}': it is a folder; give a file name such as "
                f"'{folder / ('report' + suffix)}'.") + "$"):
            call()
    assert [p.name for p in tmp_path.iterdir()] == [folder.name] and list(folder.iterdir()) == []


def test_staged_predictions_warn_once_about_raw_rows_to_a_model_fitted_on_scaled_rows():
    # predict_proba warned and the staged methods, which compute the same probabilities, did not
    X, _ = _data()
    pipe = _pipe()
    model = pipe[-1]
    raw = X.to_numpy()
    for call in [lambda: list(model.staged_predict_proba(raw)), lambda: list(model.staged_predict(raw)),
                 lambda: list(model.staged_predict_proba(raw, n_batches=2))]:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            call()
        unfamiliar = [w for w in record if issubclass(w.category, UnfamiliarDataWarning)]
        assert len(unfamiliar) == 1 and unfamiliar[0].filename == __file__
        assert "fitted on scaled features" in str(unfamiliar[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnfamiliarDataWarning)
        staged = list(model.staged_predict_proba(pipe[0].transform(X)))  # scaled rows: no warning
    np.testing.assert_allclose(staged[-1], model.predict_proba(pipe[0].transform(X)), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_familiarity_takes_rows_in_the_model_s_dtype_as_predict_proba_does(dtype):
    # float32 rows to a float64 model were scored in float32 (1.5e-6 relative from the float64 rows'
    # familiarity, while predict_proba was identical)
    X, _, y, _ = load_benchmark("wine")
    model = PrototypeClassifier(n_batches=2, n_candidates=40, dtype=dtype, random_state=0).fit(X, y)
    other = np.float32 if dtype == "float64" else np.float64
    rows = X[:40].astype(other)
    same = rows.astype(dtype)  # the rows as the model takes them
    np.testing.assert_array_equal(model.predict_proba(rows), model.predict_proba(same))
    np.testing.assert_array_equal(model.familiarity(rows), model.familiarity(same))
    np.testing.assert_array_equal(familiarity(model, rows), familiarity(model, same))
    assert explain(model, rows[0]).familiarity == explain(model, same[0]).familiarity


def test_an_html_export_holds_every_number_in_full_and_rebuilds_predict_proba(tmp_path):
    # floats were written with 6 significant digits: the page's prototypes rebuilt predict_proba to 1e-5 only
    bs4 = pytest.importorskip("bs4")
    pipe = _pipe()
    table = export(pipe, report=tmp_path / "export.html")
    page = bs4.BeautifulSoup((tmp_path / "export.html").read_text(encoding="utf-8"), "html.parser")

    def read(sheet):
        rows = page.find(id=sheet)
        header = [th.text for th in rows.find("thead").find_all("th")]
        body = [[td.text for td in tr.find_all("td")] for tr in rows.find("tbody").find_all("tr")]
        return pd.DataFrame(body, columns=header)

    shown = read("prototypes")
    assert list(shown.columns) == list(table.columns)
    numbers = [c for c in table.columns if table[c].dtype.kind == "f"]
    got = shown[numbers].replace("", "nan").astype(np.float64)
    np.testing.assert_array_equal(got.to_numpy(), table[numbers].to_numpy())
    marginals = read("marginals")
    rebuilt = got.assign(target=shown["target"])  # the page's numbers and labels alone
    rebuilt.attrs["marginals"] = dict(zip(marginals["class"], marginals["p0"].astype(np.float64)))
    assert rebuilt.attrs["marginals"] == table.attrs["marginals"]
    X, _ = _data(80, seed=10)
    np.testing.assert_allclose(_rebuild(rebuilt, X, NAMES, "weight_original", "original"), pipe.predict_proba(X),
                               rtol=1e-12, atol=1e-15)


def test_an_empty_table_through_a_pipeline_keeps_the_original_unit_columns(tmp_path):
    # no prototype shown (n_batches=0, n_prototypes=0): the columns are those of a full table
    pipe = _pipe()
    X, y = _data(5, seed=8)
    full, empty = export(pipe), export(pipe, n_batches=0, report=tmp_path / "empty.xlsx")
    assert len(empty) == 0 and list(empty.columns) == list(full.columns)
    assert list(pd.read_excel(tmp_path / "empty.xlsx", sheet_name="prototypes").columns) == list(full.columns)
    listed, none = explain(pipe, X.iloc[[0]]), explain(pipe, X.iloc[[0]], n_prototypes=0)
    assert len(none.prototypes) == 0 and list(none.prototypes.columns) == list(listed.prototypes.columns)
    assert "a_original" in none.prototypes


def test_an_xlsx_export_holds_every_number_in_full(tmp_path):
    # openpyxl writes 16 significant digits: a prototype weight 154.03068714498795 read back as 154.030687144988
    openpyxl = pytest.importorskip("openpyxl")
    table = export(_pipe())
    lossy = [v for v in table["prototype_weight"]] + [154.03068714498795, 0.1 + 0.2]
    frame = pd.DataFrame({"value": lossy, "label": ["x"] * len(lossy)})
    assert any(float(f"{v:.16g}") != v for v in lossy)
    write_report(tmp_path / "full.xlsx", {"numbers": frame, "prototypes": table})
    cells = [row[0].value for row in openpyxl.load_workbook(tmp_path / "full.xlsx")["numbers"].iter_rows(min_row=2)]
    assert cells == lossy and all(isinstance(v, float) for v in cells)  # numbers, not text
    read = pd.read_excel(tmp_path / "full.xlsx", sheet_name="prototypes")
    numbers = [c for c in table.columns if table[c].dtype.kind == "f"]
    np.testing.assert_array_equal(read[numbers].to_numpy(), table[numbers].to_numpy())
