"""Empty cells on the command line (issue 21): missing values handled by likelihood, or refused clearly."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from discrim.cli.main import cli
from discrim.datasets import load_benchmark


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def wine_with_gaps(tmp_path):
    X, _, y, _ = load_benchmark("wine", as_frame=True)
    gaps = X.mask(np.random.default_rng(0).random(X.shape) < 0.15)
    path = tmp_path / "wine.csv"
    gaps.assign(target=np.asarray(y)).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("model", ["lda", "qda", "mda", "proset"])
def test_fit_and_predict_take_empty_cells(model, wine_with_gaps, tmp_path):
    fitted = run("fit", "--csv", wine_with_gaps, "--target", "target", "--model", model, "--param",
                 {"mda": "n_components=1", "proset": "n_batches=1"}.get(model, "reg_param=0.1"), "--quiet", "--output", tmp_path / "m.skops")
    assert fitted.exit_code == 0, fitted.output
    predicted = run("predict", "--model", tmp_path / "m.skops", "--csv", wine_with_gaps, "--output", tmp_path / "p.csv")
    assert predicted.exit_code == 0, predicted.output
    proba = pd.read_csv(tmp_path / "p.csv").filter(like="proba_").to_numpy()
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)


def test_mixture_imputes_the_empty_cells(wine_with_gaps, tmp_path):
    columns = ["alcohol", "malic_acid", "ash"]
    out = tmp_path / "completed.csv"
    result = run("mixture", "--csv", wine_with_gaps, "--columns", ",".join(columns), "--components", "2",
                 "--quiet", "--impute", out)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(wine_with_gaps)
    original = table[columns].to_numpy()
    written = pd.read_csv(out)
    completed = written[columns].to_numpy()
    observed = ~np.isnan(original)
    assert not np.isnan(completed).any()
    np.testing.assert_allclose(completed[observed], original[observed], rtol=1e-12)
    assert f"{(~observed).sum()} missing cell(s) completed" in result.output
    # the rest of the table as it was: the other columns, gaps and all (they were dropped), the
    # observed cells as written ("1", not "1.0")
    pd.testing.assert_frame_equal(written.drop(columns=columns), table.drop(columns=columns))
    raw_in = pd.read_csv(wine_with_gaps, dtype=str, keep_default_na=False)
    raw_out = pd.read_csv(out, dtype=str, keep_default_na=False)
    written_cells = raw_in.to_numpy() != ""
    assert (raw_out.to_numpy()[written_cells] == raw_in.to_numpy()[written_cells]).all()


def test_tune_takes_empty_cells(wine_with_gaps, tmp_path):
    result = run("tune", "--csv", wine_with_gaps, "--target", "target", "--cv", "2", "--max-batches", "1",
                 "--n-alphas", "1", "--output", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "model.skops").exists()


@pytest.fixture
def wine_with_few_labels(tmp_path):
    X, _, y, _ = load_benchmark("wine", as_frame=True)
    labels = pd.Series(np.asarray(y), dtype=object).mask(np.random.default_rng(0).random(len(y)) < 0.6)
    path = tmp_path / "few_labels.csv"
    X.assign(target=labels.to_numpy()).to_csv(path, index=False)
    return path, int(labels.isna().sum())


def test_fit_learns_from_rows_without_a_label(wine_with_few_labels, tmp_path):
    # the empty target cells join the training part and the model fits by EM over them: the saved
    # model is the API's semi-supervised fit of the same training part
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from discrim.cli.main import _load_training_data
    from discrim.discriminant import LinearDiscriminant
    from discrim.persistence import load_model

    path, n_unlabelled = wine_with_few_labels
    result = run("fit", "--csv", path, "--target", "target", "--model", "lda", "--quiet", "--output",
                 tmp_path / "m.skops")
    assert result.exit_code == 0, result.output
    assert f"{n_unlabelled} of the training rows have no label" in result.output
    X_train, X_test, y_train, _ = _load_training_data(None, path, "target", 0.3, 0, "lda")
    assert pd.isna(y_train).sum() == n_unlabelled
    expected = make_pipeline(StandardScaler(), LinearDiscriminant(unlabeled=np.nan)).fit(X_train, y_train)
    np.testing.assert_allclose(load_model(tmp_path / "m.skops").predict_proba(X_test), expected.predict_proba(X_test),
                               rtol=1e-12)


def test_a_model_without_unlabelled_rows_refuses_them_naming_those_that_take_them(wine_with_few_labels):
    path, n_unlabelled = wine_with_few_labels
    result = run("fit", "--csv", path, "--target", "target", "--model", "proset", "--quiet")
    assert result.exit_code != 0
    assert f"has {n_unlabelled} missing value(s)" in result.output and "lda, qda or mda" in result.output


def test_rows_labelled_with_the_unlabeled_marker_are_unlabelled_rows(wine_with_few_labels, tmp_path):
    """-1 for "no label": the error said "pass unlabeled=-1" (Python's spelling), and with --param
    unlabeled=-1 the marked rows went to the test part, whose log-loss refused the class -1."""
    path, n_unlabelled = wine_with_few_labels
    frame = pd.read_csv(path)
    marked = tmp_path / "marked.csv"
    codes = frame["target"].astype("category").cat.codes  # the classes as 0, 1, 2 and -1 where no label
    frame.assign(target=codes).to_csv(marked, index=False)
    result = run("fit", "--csv", marked, "--target", "target", "--model", "lda", "--quiet")
    assert result.exit_code != 0
    assert "pass unlabeled=-1" in result.output and "--param NAME=VALUE" in result.output
    result = run("fit", "--csv", marked, "--target", "target", "--model", "lda", "--param", "unlabeled=-1", "--quiet",
                 "--output", tmp_path / "marked.skops")
    assert result.exit_code == 0, result.output
    assert f"{n_unlabelled} of the training rows have no label" in result.output
    # the model of the file with empty cells instead: the same rows unlabelled, the same fit
    assert run("fit", "--csv", path, "--target", "target", "--model", "lda", "--quiet", "--output",
               tmp_path / "empty.skops").exit_code == 0
    from discrim.persistence import load_model

    X = frame.drop(columns="target")
    np.testing.assert_allclose(load_model(tmp_path / "marked.skops").predict_proba(X),
                               load_model(tmp_path / "empty.skops").predict_proba(X), rtol=1e-10)


def test_predict_takes_a_file_whose_feature_column_is_empty(wine_with_gaps, tmp_path):
    """One row to score whose feature was not measured: predicted from the other features' marginals."""
    model = tmp_path / "m.skops"
    assert run("fit", "--csv", wine_with_gaps, "--target", "target", "--model", "lda", "--quiet",
               "--output", model).exit_code == 0
    row = pd.read_csv(wine_with_gaps).drop(columns="target").iloc[[3]].copy()
    row["ash"] = np.nan
    one = tmp_path / "one.csv"
    row.to_csv(one, index=False)
    result = run("predict", "--model", model, "--csv", one, "--output", tmp_path / "p.csv")
    assert result.exit_code == 0, result.output
    from discrim.persistence import load_model

    expected = load_model(model).predict_proba(row)
    np.testing.assert_allclose(pd.read_csv(tmp_path / "p.csv").filter(like="proba_").to_numpy(), expected, rtol=1e-9)
    # a fit learns nothing from a column without a value: still refused, naming it
    data = pd.read_csv(wine_with_gaps).assign(ash=np.nan)
    data.to_csv(tmp_path / "empty.csv", index=False)
    result = run("fit", "--csv", tmp_path / "empty.csv", "--target", "target", "--model", "lda", "--quiet")
    assert result.exit_code != 0 and "'ash'" in result.output and "no value at all" in result.output


def test_integer_labels_stay_integers_beside_empty_target_cells(wine_with_gaps, tmp_path):
    data = pd.read_csv(wine_with_gaps)
    codes = data["target"].str[-1].astype(int)  # 'class_0' -> 0
    # written as 0, 1, 2 and empty cells, which pandas's own reading would turn into floats
    data["target"] = codes.astype("Int64").mask(np.random.default_rng(1).random(len(data)) < 0.3)
    path = tmp_path / "partial.csv"
    data.to_csv(path, index=False)
    assert run("fit", "--csv", path, "--target", "target", "--model", "lda", "--quiet",
               "--output", tmp_path / "m.skops").exit_code == 0
    result = run("predict", "--model", tmp_path / "m.skops", "--csv", wine_with_gaps, "--output", tmp_path / "p.csv")
    assert result.exit_code == 0, result.output
    predictions = pd.read_csv(tmp_path / "p.csv")
    assert list(predictions.columns) == ["predicted", "proba_0", "proba_1", "proba_2"]
    assert predictions["predicted"].dtype.kind == "i"


def test_labels_are_read_as_written(tmp_path):
    """Only an empty target cell is unlabelled: "None" and "NA" are classes, "01" and "1" two of them."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    for labels, expected in ((["None", "High", "Low"], ["High", "Low", "None"]), (["01", "1", "02"], ["01", "02", "1"])):
        path = tmp_path / "labels.csv"
        pd.DataFrame(X + np.repeat(np.arange(3), 30)[:, None], columns=["x1", "x2"]).assign(
            kind=np.repeat(labels, 30)).to_csv(path, index=False)
        model = tmp_path / f"{labels[0]}.skops"
        result = run("fit", "--csv", path, "--target", "kind", "--model", "lda", "--quiet", "--output", model)
        assert result.exit_code == 0 and "no label" not in result.output, result.output
        from discrim.persistence import load_model

        assert load_model(model).classes_.tolist() == expected


def test_rows_longer_than_the_header_are_refused_not_shifted(tmp_path):
    path = tmp_path / "thousands.csv"
    path.write_text("income,age,segment\n" + "".join(f"{30 + i},{100 + i},{40 + i},{'lo' if i % 2 else 'hi'}\n"
                                                    for i in range(40)))  # income written as 30,100
    result = run("fit", "--csv", path, "--target", "segment", "--model", "lda")
    assert result.exit_code != 0 and "more fields than its header" in result.output
    trailing = tmp_path / "trailing.csv"  # every row ends in the delimiter: read as written
    trailing.write_text("x1,x2,kind\n" + "".join(f"{i % 7},{i % 5},{'ab'[i % 2]},\n" for i in range(40)))
    assert run("fit", "--csv", trailing, "--target", "kind", "--model", "lda", "--quiet").exit_code == 0


def _two_features_with_gaps(tmp_path):
    """Two features (a, b) and a label y; some cells of a and b are empty."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(np.vstack([rng.normal(0, 1, (30, 2)), rng.normal(3, 1, (30, 2))]), columns=["a", "b"])
    frame = frame.mask(rng.random(frame.shape) < 0.1)
    path = tmp_path / "two.csv"
    frame.assign(y=np.repeat(["p", "q"], 30)).to_csv(path, index=False)
    return path


def test_fit_plot_leaves_out_rows_with_empty_cells(tmp_path):
    """fit --plot on two features with empty cells draws the complete rows and saves the model.

    The rows with a missing cell used to reach the plot, whose axis limits became NaN: matplotlib
    failed ("Axis limits cannot be NaN or Inf") after the fit.
    """
    csv = _two_features_with_gaps(tmp_path)
    model, plot = tmp_path / "m.skops", tmp_path / "regions.png"
    result = run("fit", "--csv", csv, "--target", "y", "--model", "lda", "--quiet", "--output", model, "--plot", plot)
    assert result.exit_code == 0, result.output
    assert plot.read_bytes()[:4] == b"\x89PNG" and model.stat().st_size > 0


def test_tune_draws_the_decision_surface_of_two_features_with_empty_cells(tmp_path):
    """tune on two features with empty cells writes decision_surface.png from the complete rows.

    The plot took every training row, so a missing cell made its axis limits NaN and the whole
    output folder failed.
    """
    csv = _two_features_with_gaps(tmp_path)
    out = tmp_path / "report"
    result = run("tune", "--csv", csv, "--target", "y", "--max-batches", "1", "--cv", "2", "--n-alphas", "1",
                 "--quiet", "--output", out)
    assert result.exit_code == 0, result.output
    assert (out / "decision_surface.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("command", [["fit", "--target", "target", "--model", "lda"], ["mixture"]])
def test_device_with_empty_cells_is_refused_before_the_fit(command, wine_with_gaps):
    """Missing values are computed on the host only: --device cpu fitted, then failed at the scores
    with "set_params(device=None)" (Python's words, after the work)."""
    pytest.importorskip("torch")
    result = run(command[0], "--csv", wine_with_gaps, *command[1:], "--device", "cpu", "--quiet")
    assert result.exit_code == 2
    assert "empty cells (missing values), which are computed on the host (numpy) only: leave out --device" in \
        " ".join(result.output.split())


def test_a_class_written_as_na_is_pointed_out(tmp_path):
    """'NA' in the target is kept as a class (a class may be called so), where an R export means an
    unknown label: a 4-class model came out without a word."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60),
                          "y": np.tile(["u", "v", "NA"], 20)})
    path = tmp_path / "na.csv"
    frame.to_csv(path, index=False)
    result = run("fit", "--csv", path, "--target", "y", "--model", "lda", "--quiet")
    assert result.exit_code == 0, result.output
    assert "note: 'y' has the class(es) 'NA', which some exports write for an unknown label" in \
        " ".join(result.output.split())
    frame.assign(y=np.tile(["u", "v", "w"], 20)).to_csv(path, index=False)
    assert "note:" not in run("fit", "--csv", path, "--target", "y", "--model", "lda", "--quiet").output


def test_student_t_with_empty_cells_is_pointed_to_its_diagonal_option(wine_with_gaps):
    result = run("mixture", "--csv", wine_with_gaps, "--columns", "alcohol,malic_acid", "--family", "student-t",
                 "--quiet")
    assert result.exit_code == 2 and "use --family student-t-diag" in result.output
    assert "covariance_type" not in result.output
    assert run("mixture", "--csv", wine_with_gaps, "--columns", "alcohol,malic_acid", "--family", "student-t-diag",
               "--components", "2", "--quiet").exit_code == 0


@pytest.mark.parametrize("columns", [[], ["--columns", "a,b"]])
def test_mixture_names_a_mark_for_a_missing_cell_in_a_column_of_numbers(columns, tmp_path):
    # 'b' is numbers with '?' for a missing cell: the default choice left it out as a text column
    # (the mixture fitted 'a' alone) and advised --categorical b, as --columns a,b did
    path = tmp_path / "marked.csv"
    rng = np.random.default_rng(0)
    b = rng.normal(size=20).round(3).astype(object)
    b[1] = "?"
    pd.DataFrame({"a": rng.normal(size=20), "b": b, "label": ["x", "y"] * 10}).to_csv(path, index=False)
    result = run("mixture", "--csv", path, *columns, "--quiet")
    assert result.exit_code != 0
    assert "column 'b' of the data holds numbers but also '?' (data row 1, counted from 0)" in result.output
    assert "--categorical b" not in result.output
    # as a category, on purpose, it is fitted
    assert run("mixture", "--csv", path, "--columns", "a,b", "--categorical", "b", "--quiet").exit_code == 0
