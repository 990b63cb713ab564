"""``discrim mixture``: mclust's 14 models by ``--family mclust``, the printed summaries, pairs plots."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from discrim.cli._mixture import MCLUST_FAMILIES, mixture
from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture, summarize_mixture

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def data_csv(tmp_path, rng):
    frame = pd.DataFrame(np.vstack([rng.normal([0, 0, 0], 1, (50, 3)), rng.normal([5, 3, -2], 0.7, (50, 3))]),
                         columns=["a", "b", "c"])
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _run(args):
    return CliRunner().invoke(mixture, [str(a) for a in args])


def test_mclust_compares_the_fourteen_models_by_name(data_csv):
    assert list(MCLUST_FAMILIES) == [
        "EII", "VII", "EEI", "VEI", "EVI", "VVI", "EEE", "VEE", "EVE", "VVE", "EEV", "VEV", "EVV", "VVV"]
    assert all(MCLUST_FAMILIES[name] == f"gaussian-{name}" for name in MCLUST_FAMILIES)
    result = _run(["--csv", data_csv, "--family", "mclust", "--components", "1-2", "--quiet"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = lines.index("BIC by component count (rows) and family (columns), lower is better:")
    assert lines[header + 1].split() == list(MCLUST_FAMILIES)
    assert [line.split()[0] for line in lines[header + 3:header + 5]] == ["1", "2"]
    top = lines.index("Top 3 models by BIC (-2 log L + p log n, lower is better):")
    best = lines[top + 1].split()[0]
    model, k = best.split(",")
    assert f"{model} mixture with {k} component(s) on 3 column(s): a, b, c" in result.output


def test_the_chosen_models_summary_is_printed(data_csv):
    result = _run(["--csv", data_csv, "--family", "gaussian-VEV", "--components", "2", "--quiet",
                   "--random-state", "0"])
    assert result.exit_code == 0, result.output
    X = pd.read_csv(data_csv).to_numpy()
    expected = summarize_mixture(
        FiniteMixture(Gaussian(covariance_type="VEV"), 2, random_state=0).fit(X), X).to_text(parameters=False)
    assert expected in result.output


@pytest.mark.parametrize("kind", ["classification", "uncertainty", "density"])
def test_pairs_plots(data_csv, tmp_path, kind):
    out = tmp_path / f"{kind}.png"
    result = _run(["--csv", data_csv, "--components", "2", "--quiet", "--plot", out, "--plot-kind", kind])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_unknown_plot_kind_is_a_usage_error(data_csv, tmp_path):
    result = _run(["--csv", data_csv, "--plot", tmp_path / "p.png", "--plot-kind", "pie"])
    assert result.exit_code == 2 and "--plot-kind" in result.output


def test_mclust_starts_as_mclust_and_chooses_its_model(tmp_path):
    # mclust 6.0.0: Mclust(iris[, 1:2], G = 1:4) chooses VEV with 2 components, BIC -501.9588 (its sign)
    from sklearn.datasets import load_iris

    path = tmp_path / "iris.csv"
    pd.DataFrame(load_iris().data[:, :2], columns=["sepal_length", "sepal_width"]).to_csv(path, index=False)
    result = _run(["--csv", path, "--family", "mclust", "--components", "1-4", "--quiet"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    top = lines.index("Top 3 models by BIC (-2 log L + p log n, lower is better):")
    assert lines[top + 1].split()[0] == "VEV,2"
    assert float(lines[top + 2].split()[1]) == pytest.approx(501.9588, abs=0.02)  # reg_covar=1e-6 aside
    kmeans = _run(["--csv", path, "--family", "mclust", "--components", "1-4", "--quiet", "--init", "kmeans++"])
    assert kmeans.exit_code == 0, kmeans.output
