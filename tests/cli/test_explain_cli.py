"""Tests of the ``discrim explain`` command."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from discrim.cli.main import cli
from discrim.persistence import save_model
from discrim.prototype import PrototypeClassifier


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("explain")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(150, 3)) * [1.0, 3.0, 1.0] + [0, 5, 0], columns=["u", "v", "w"])
    y = np.where(X["u"] + (X["v"] - 5) / 3 > 0, "up", "down")
    csv = tmp / "data.csv"
    X.assign(label=y).to_csv(csv, index=False)
    plain = tmp / "plain.skops"
    save_model(PrototypeClassifier(n_candidates=50, random_state=0).fit(X, y), plain)
    piped = tmp / "piped.skops"
    result = run("fit", "--csv", str(csv), "--target", "label", "--model", "proset", "--param", "n_candidates=50",
                 "--output", str(piped), "--quiet")
    assert result.exit_code == 0, result.output
    return {"csv": csv, "plain": plain, "piped": piped, "tmp": tmp}


@pytest.mark.parametrize("model", ["plain", "piped"])
def test_explain_prints_the_explanation(files, model):
    result = run("explain", "--model", str(files[model]), "--csv", str(files["csv"]), "--row", "7",
                 "--n-prototypes", "3")
    assert result.exit_code == 0, result.output
    out = result.output
    for text in ("row 7", "predicted", "familiarity", "class probabilities", "from marginals", "up", "down",
                 "feature contributions", "most influential", "impact"):
        assert text in out, text
    assert "u" in out
    if model == "piped":
        assert "value (CSV)" in out  # the scaler keeps columns one to one: CSV values shown too


def test_explain_matches_the_library(files):
    from discrim.persistence import load_model
    from discrim.prototype._explain import explain_prediction

    model = load_model(files["plain"])
    X = pd.read_csv(files["csv"])[["u", "v", "w"]]
    ex = explain_prediction(model, X.iloc[[4]])
    out = run("explain", "--model", str(files["plain"]), "--csv", str(files["csv"]), "--row", "4").output
    assert f"{ex.proba[ex.predicted]:.4f}" in out


@pytest.mark.parametrize("row", ["-1", "150", "9999"])
def test_bad_row_index_fails_cleanly(files, row):
    result = run("explain", "--model", str(files["plain"]), "--csv", str(files["csv"]), "--row", row)
    assert result.exit_code != 0
    assert "out of range" in result.output and "150 data rows" in result.output
    assert "Traceback" not in result.output


def test_errors_are_one_line(files):
    tmp = files["tmp"]
    bad = tmp / "bad.skops"
    bad.write_bytes(b"not a model")
    result = run("explain", "--model", str(bad), "--csv", str(files["csv"]), "--row", "0")
    assert result.exit_code != 0 and "Traceback" not in result.output
    missing = tmp / "missing.csv"
    pd.read_csv(files["csv"]).drop(columns="v").to_csv(missing, index=False)
    result = run("explain", "--model", str(files["plain"]), "--csv", str(missing), "--row", "0")
    assert result.exit_code != 0 and "'v'" in result.output
    lda = tmp / "lda.skops"
    assert run("fit", "--csv", str(files["csv"]), "--target", "label", "--model", "lda", "--output", str(lda),
               "--quiet").exit_code == 0
    result = run("explain", "--model", str(lda), "--csv", str(files["csv"]), "--row", "0")
    assert result.exit_code != 0 and "not a prototype set model" in result.output


def test_a_refitted_model_does_not_name_its_prototypes_after_the_rows_of_the_saved_fit(files):
    # the record stayed on the pipeline: refitted on the CSV's first 60 rows, prototype 2 (CSV row 2) was
    # named by the 105 rows of the saved fit's training part (row 163 in the tour)
    from discrim.persistence import load_model
    from discrim.prototype import explain, export

    model = load_model(files["piped"])
    data = pd.read_csv(files["csv"])
    assert "sample_name" in export(model)
    model.fit(data[["u", "v", "w"]].iloc[:60], data["label"].iloc[:60])
    assert "sample_name" not in export(model) and "sample_name" not in explain(model, data.iloc[[0], :3]).prototypes
    np.testing.assert_array_equal(export(model, sample_names=np.arange(60) + 1000)["sample_name"],
                                  export(model)["sample_index"] + 1000)
    # a shrunk model refitted is a model of the columns it is given
    shrunk = PrototypeClassifier(n_candidates=50, random_state=0).fit(data[["u", "v", "w"]], data["label"]).shrink()
    assert hasattr(shrunk, "active_features_")
    shrunk.fit(data[["u", "v", "w"]], data["label"])
    assert not hasattr(shrunk, "active_features_")


def test_prototypes_are_named_by_their_csv_row(files):
    """`discrim fit` splits the CSV: its models record the training rows, so a prototype is shown as
    the CSV row it is (not its position in the hidden training part)."""
    from discrim.persistence import load_model
    from discrim.prototype import explain, export

    model = load_model(files["piped"])
    data = pd.read_csv(files["csv"])
    rows = np.asarray(model[-1].training_rows_)  # on the classifier, which a new fit makes drop them
    assert rows.shape == (105,) and np.unique(rows).size == rows.size  # the 70 % training part
    table = export(model, sample_names=rows)
    # the library's export and explain name them so by default (they gave positions in the training part)
    pd.testing.assert_frame_equal(export(model), table)
    assert "sample_name" in explain(model, data.drop(columns="label").iloc[[7]]).prototypes
    at = table["sample_name"].astype(int).to_numpy()
    np.testing.assert_array_equal(data["label"].to_numpy()[at], table["target"].to_numpy())
    np.testing.assert_allclose(data["v"].to_numpy()[at], table["v_original"], rtol=1e-12)
    out = run("explain", "--model", str(files["piped"]), "--csv", str(files["csv"]), "--row", "7",
              "--n-prototypes", "200").output
    assert "CSV row" in out and "training row" not in out
    # a model fitted in Python records nothing: positions among its training rows
    out = run("explain", "--model", str(files["plain"]), "--csv", str(files["csv"]), "--row", "7").output
    assert "training row" in out


def test_target_is_read_as_fit_reads_it(tmp_path):
    """--target read the cell with pandas's defaults: the class '0.0' of `discrim fit` came back as
    0.0 (unknown to the model), a class 'NA' as NaN, and a row without a label was an error."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(120, 2)), columns=["u", "v"])
    labels = np.where(X["u"] > 0, "NA", "0.0")
    csv = tmp_path / "labels.csv"
    X.assign(label=labels).to_csv(csv, index=False)
    model = tmp_path / "m.skops"
    assert run("fit", "--csv", str(csv), "--target", "label", "--model", "proset", "--param", "n_candidates=40",
               "--output", str(model), "--quiet").exit_code == 0
    for row in (int(np.flatnonzero(labels == "NA")[0]), int(np.flatnonzero(labels == "0.0")[0])):
        result = run("explain", "--model", str(model), "--csv", str(csv), "--row", str(row), "--target", "label")
        assert result.exit_code == 0, result.output
        assert f"true class '{labels[row]}'" in " ".join(result.output.split())
    blank = tmp_path / "blank.csv"
    X.assign(label=pd.Series(labels).where(np.arange(120) != 3)).to_csv(blank, index=False)
    result = run("explain", "--model", str(model), "--csv", str(blank), "--row", "3", "--target", "label")
    assert result.exit_code == 0, result.output
    assert "row 3 has no label in 'label'" in result.output and "true class '" not in result.output


def test_a_reference_without_the_model_columns_is_named(files):
    # "column(s) 'w' not in the CSV" named neither --reference nor its file, beside a --csv whose
    # columns were right
    reference = files["tmp"] / "reference_without_w.csv"
    pd.read_csv(files["csv"]).drop(columns="w").to_csv(reference, index=False)
    result = run("explain", "--model", str(files["piped"]), "--csv", str(files["csv"]), "--row", "0",
                 "--reference", str(reference))
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines == [f"Error: --reference {str(reference)!r}: column(s) 'w' not in the CSV; it has: u, v, label."]
