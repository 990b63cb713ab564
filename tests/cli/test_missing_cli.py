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
    original = pd.read_csv(wine_with_gaps)[columns].to_numpy()
    completed = pd.read_csv(out).to_numpy()
    observed = ~np.isnan(original)
    assert not np.isnan(completed).any()
    np.testing.assert_allclose(completed[observed], original[observed], rtol=1e-12)
    assert f"{(~observed).sum()} missing cell(s) completed" in result.output


def test_tune_takes_empty_cells(wine_with_gaps, tmp_path):
    result = run("tune", "--csv", wine_with_gaps, "--target", "target", "--cv", "2", "--max-batches", "1",
                 "--n-alphas", "1", "--output", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "model.skops").exists()
