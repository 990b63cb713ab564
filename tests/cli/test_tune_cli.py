"""Tests of `discrim tune`: printed selection and metrics, the output folder, errors."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from discrim.cli.main import cli
from discrim.datasets import load_benchmark
from discrim.persistence import load_model

FAST = ["--max-batches", "1", "--cv", "2", "--n-alphas", "2", "--quiet"]


def run(*args):
    return CliRunner().invoke(cli, ["tune", *args], catch_exceptions=False)


def test_tune_dataset_writes_model_plots_and_report(tmp_path):
    out = tmp_path / "run"
    result = run("--dataset", "iris-2f", *FAST, "--output", str(out))
    assert result.exit_code == 0, result.output
    for word in ("alpha_feature", "n_batches", "log-loss", "ROC-AUC", "balanced accuracy", "accuracy"):
        assert word in result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == ["decision_surface.png", "model.skops", "prototype_map.png", "report.md", "search.png"]
    for png in ("search.png", "prototype_map.png", "decision_surface.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    model = load_model(out / "model.skops")
    # The saved search standardises inside (its transformer, fitted in every fold and on all training
    # rows): it takes the raw rows and agrees with its refitted classifier on scaled rows.
    _, X_raw, _, _ = load_benchmark("iris-2f", as_frame=True, scale=False)
    _, X_scaled, _, _ = load_benchmark("iris-2f", as_frame=True)
    search = model
    assert type(search.transformer_).__name__ == "StandardScaler"
    np.testing.assert_allclose(model.predict_proba(X_raw), search.best_estimator_.predict_proba(X_scaled.to_numpy()),
                               rtol=1e-9, atol=1e-12)
    report = (out / "report.md").read_text()
    assert "## Selected hyperparameters" in report and "![Prototype map](prototype_map.png)" in report
    assert f"| n_batches | {search.best_params_['n_batches']} |" in report
    assert search.callback is None  # the progress bar is not saved with the model


def test_tune_csv_standardises_inside_the_search_and_writes_html(tmp_path):
    X_train, _, y_train, _ = load_benchmark("wine", as_frame=True)
    csv = tmp_path / "wine.csv"
    X_train.assign(cultivar=y_train).to_csv(csv, index=False)
    out = tmp_path / "run"
    result = run("--csv", str(csv), "--target", "cultivar", *FAST, "--output", str(out), "--report-format", "html")
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == ["model.skops", "prototype_map.png", "report.html", "search.png"]  # 13 features: no surface
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    model = load_model(out / "model.skops")
    assert type(model).__name__ == "PrototypeClassifierCV"
    assert type(model.transformer).__name__ == "StandardScaler" and model.transformer_.n_features_in_ == 13


def test_tune_many_batch_options_reach_the_search(tmp_path):
    """--n-batches-no-change, --search-max-iter, --selection and --n-candidates set the saved search's
    parameters, and the selection follows the rule asked for."""
    out = tmp_path / "run"
    result = run("--dataset", "wine", "--max-batches", "4", "--cv", "2", "--n-alphas", "2", "--quiet",
                 "--n-batches-no-change", "2", "--search-max-iter", "50", "--selection", "best",
                 "--n-candidates", "40", "--output", str(out))
    assert result.exit_code == 0, result.output
    search = load_model(out / "model.skops")
    params = search.get_params()
    assert (params["n_batches_no_change"], params["search_max_iter"], params["selection"],
            params["n_candidates"]) == (2, 50, "best", 40)
    # "best": the selected row has the lowest mean validation loss of the grid
    means = search.cv_results_["mean_test_log_loss"]
    assert means[search.best_index_] == np.nanmin(means)


def test_tune_searches_by_another_score_and_an_alpha_prototype_grid(tmp_path):
    # the command had neither the search's scoring nor its alpha_prototype grid
    out = tmp_path / "run"
    result = run("--dataset", "wine", *FAST, "--scoring", "roc_auc", "--alpha-prototype", "1e-8,1e-3",
                 "--output", str(out))
    assert result.exit_code == 0, result.output
    search = load_model(out / "model.skops")
    assert search.scoring == "roc_auc" and list(search.alpha_prototype_grid) == [1e-8, 1e-3]
    assert "threshold (max mean CV ROC-AUC - std)" in result.output and "alpha_prototype" in result.output
    assert "whose mean CV ROC-AUC is at least the threshold" in (out / "report.md").read_text()
    bad = CliRunner().invoke(cli, ["tune", "--dataset", "wine", *FAST, "--alpha-prototype", "1e-8,x"])
    assert bad.exit_code != 0 and "--alpha-prototype takes numbers separated by commas" in bad.output


def test_tune_without_output_only_prints():
    result = run("--dataset", "iris-2f", *FAST)
    assert result.exit_code == 0, result.output
    assert "wrote" not in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dataset", "nope"], "unknown data set"),
        (["--csv", "missing.csv", "--target", "y"], "does not exist"),
        (["--dataset", "iris-2f", "--csv", "x.csv"], "exactly one"),
    ],
)
def test_tune_errors(args, message):
    result = CliRunner().invoke(cli, ["tune", *args, *FAST])
    assert result.exit_code != 0
    assert message in result.output


def test_tune_output_must_be_a_folder(tmp_path):
    target = tmp_path / "file.txt"
    target.write_text("x")
    result = CliRunner().invoke(cli, ["tune", "--dataset", "iris-2f", *FAST, "--output", str(target)])
    assert result.exit_code != 0 and "is a file" in result.output


def test_failed_write_leaves_no_partial_output(tmp_path, monkeypatch):
    import discrim.persistence

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(discrim.persistence, "save_model", broken)
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["tune", "--dataset", "iris-2f", *FAST, "--output", str(out)])
    assert result.exit_code == 1 and "disk full" in result.output
    assert not out.exists()
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine")
    result = CliRunner().invoke(cli, ["tune", "--dataset", "iris-2f", *FAST, "--output", str(existing)])
    assert result.exit_code == 1
    assert sorted(p.name for p in existing.iterdir()) == ["keep.txt"]


def test_overwrite_leaves_no_output_of_the_earlier_run(tmp_path):
    """A rerun with --overwrite --report-format html left the first run's report.md beside the new
    report.html, as if both described the new model."""
    out = tmp_path / "out"
    assert run("--dataset", "iris-2f", *FAST, "--output", str(out)).exit_code == 0
    assert (out / "report.md").is_file()
    (out / "notes.txt").write_text("mine")
    result = run("--dataset", "iris-2f", *FAST, "--output", str(out), "--overwrite", "--report-format", "html")
    assert result.exit_code == 0, result.output
    assert (out / "report.html").is_file() and not (out / "report.md").exists()
    assert (out / "notes.txt").read_text() == "mine"  # files of its own are never touched


def test_a_search_that_chooses_no_prototype_says_so(tmp_path):
    # the 1-SE rule may pick 0 batches on weak data: the model then predicts the class frequencies
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + rng.normal(size=60) * 2 > 0, "cat", "dog")
    path = tmp_path / "weak.csv"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["tune", "--csv", str(path), "--target", "label", "--max-batches", "1",
                                      "--n-alphas", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "│ prototypes" in result.output and "note: the search chose a model without prototypes" in result.output


def test_tune_names_its_options_for_folds_and_jobs_it_cannot_run():
    # --cv 40 on iris-2f (35 training rows of setosa) failed as "the search failed: n_splits=40
    # cannot be greater than the number of members in each class", and --n-jobs 0 named
    # PrototypeClassifierCV's n_jobs: neither named the option
    from click.testing import CliRunner

    from discrim.cli.main import cli

    result = CliRunner().invoke(cli, ["tune", "--dataset", "iris-2f", "--quiet", "--cv", "40"])
    assert result.exit_code == 1
    assert result.output.strip() == ("Error: --cv 40: class 'setosa' has 35 training rows, and every fold of the "
                                     "stratified cross-validation needs one of each class: give --cv 35 or fewer "
                                     "(or more rows of that class).")
    result = CliRunner().invoke(cli, ["tune", "--dataset", "iris-2f", "--quiet", "--n-jobs", "0"])
    assert result.exit_code == 2
    assert "Invalid value for '--n-jobs': 0 runs nothing: give a positive count of tasks, or -1" in result.output
