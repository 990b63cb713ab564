"""Tests of ``discrim explain``'s reports, reference rows, true class and batch count."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from discrim.cli.main import cli
from discrim.persistence import load_model


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("explain_report")
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(150, 3)) * [1.0, 300.0, 1.0] + [0, 5000, 0], columns=["u", "v", "w"])
    y = np.where(X["u"] + (X["v"] - 5000) / 300 > 0, "up", "down")
    csv = tmp / "data.csv"
    X.assign(label=y).to_csv(csv, index=False)
    reference = tmp / "reference.csv"
    X.to_csv(reference, index=False)
    model = tmp / "piped.skops"
    result = run("fit", "--csv", str(csv), "--target", "label", "--model", "proset", "--param", "n_batches=2",
                 "--param", "n_candidates=50", "--output", str(model), "--quiet")
    assert result.exit_code == 0, result.output
    return {"csv": csv, "reference": reference, "model": model, "tmp": tmp, "X": X, "y": y}


@pytest.mark.parametrize("suffix", [".xlsx", ".html"])
def test_report_reference_and_true_class(files, suffix):
    from discrim.prototype import explain

    out = files["tmp"] / f"row3{suffix}"
    result = run("explain", "--model", str(files["model"]), "--csv", str(files["csv"]), "--row", "3",
                 "--target", "label", "--reference", str(files["reference"]), "--report", str(out),
                 "--n-prototypes", "2")
    assert result.exit_code == 0, result.output
    model = load_model(files["model"])
    ex = explain(model, files["X"].iloc[[3]], files["y"][3], reference=files["X"], n_prototypes=None)
    text = " ".join(result.output.split())  # rich wraps at the console's width, wherever a path's length puts it
    assert f"true class '{files['y'][3]}'" in text
    # the quantile counts the reference rows at or below the row's familiarity
    assert f"at or above {100 * ex.familiarity_quantile:.0f}% of the reference rows" in text
    assert "value (CSV)" in result.output and "dominant" in result.output
    if suffix == ".xlsx":
        openpyxl = pytest.importorskip("openpyxl")
        book = openpyxl.load_workbook(out)
        assert book.sheetnames == ["summary", "classes", "prototypes", "features"]
        assert book["prototypes"].max_row == 1 + ex.n_prototypes_total  # every prototype, not only the 2 shown
        header = [c.value for c in book["prototypes"][1]]
        assert "u_original" in header and "dominant_set" in header
    else:
        text = out.read_text()
        assert text.count("<tr") > ex.n_prototypes_total and "familiarity quantile" in text
    # an existing report is kept without --overwrite, and replaced with it
    before = out.read_bytes()
    result = run("explain", "--model", str(files["model"]), "--csv", str(files["csv"]), "--row", "4",
                 "--report", str(out))
    assert result.exit_code != 0 and "--overwrite" in result.output and out.read_bytes() == before
    result = run("explain", "--model", str(files["model"]), "--csv", str(files["csv"]), "--row", "4",
                 "--report", str(out), "--overwrite")
    assert result.exit_code == 0 and out.read_bytes() != before
    assert sorted(p.name for p in files["tmp"].iterdir() if p.name.startswith((".row3", "row3")) and p.name.endswith(suffix)) == [out.name]


def test_n_batches_and_bad_options_one_line(files):
    result = run("explain", "--model", str(files["model"]), "--csv", str(files["csv"]), "--row", "0",
                 "--n-batches", "0")
    assert result.exit_code == 0, result.output
    assert "of 0 prototypes" in result.output
    for args, text in [
        (["--report", str(files["tmp"] / "x.pdf")], "must end in .xlsx or .html"),
        (["--target", "nope"], "is not a column"),
        (["--n-batches", "7"], "the model has 2 batches"),
    ]:
        result = run("explain", "--model", str(files["model"]), "--csv", str(files["csv"]), "--row", "0", *args)
        assert result.exit_code != 0 and text in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1
