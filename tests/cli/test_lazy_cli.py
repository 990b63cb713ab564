"""The command line on Parquet and Zarr tables read lazily by Dask (issue 19, deliverable 3)."""

import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from discrim.cli.main import cli
from discrim.utils._files import current_umask

pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")
pytestmark = pytest.mark.dask


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def table(tmp_path, rng):
    X = np.concatenate([rng.normal(0, 1, (600, 3)), rng.normal(3, 1, (600, 3))])
    frame = pd.DataFrame(X, columns=["f1", "f2", "f3"]).assign(label=np.repeat(["a", "b"], 600))
    folder = tmp_path / "rows"
    folder.mkdir()
    shuffled = frame.sample(frac=1, random_state=0).reset_index(drop=True)
    for i, start in enumerate(range(0, 1200, 400)):
        shuffled.iloc[start : start + 400].to_parquet(folder / f"part-{i}.parquet", index=False)
    return frame, folder


def test_fit_and_predict_from_parquet_write_parquet_predictions(tmp_path, table):
    frame, folder = table
    model = tmp_path / "m.skops"
    result = run("fit", "--parquet", str(folder / "*.parquet"), "--target", "label", "--model", "qda",
                 "--output", str(model), "--quiet")
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and "training rows" in result.output
    out = tmp_path / "predictions.parquet"
    result = run("predict", "--model", str(model), "--parquet", str(folder), "--output", str(out))
    assert result.exit_code == 0, result.output
    predictions = pd.read_parquet(out)
    assert list(predictions.columns) == ["predicted", "proba_a", "proba_b"]
    assert predictions.shape[0] == frame.shape[0]
    np.testing.assert_allclose(predictions[["proba_a", "proba_b"]].sum(axis=1), 1.0)
    assert (predictions["predicted"] == pd.read_parquet(folder)["label"].to_numpy()).mean() > 0.95
    # the same model on the same rows through the CSV path gives the same probabilities
    csv = tmp_path / "rows.csv"
    pd.read_parquet(folder).to_csv(csv, index=False)
    in_memory = tmp_path / "p.csv"
    assert run("predict", "--model", str(model), "--csv", str(csv), "--output", str(in_memory)).exit_code == 0
    np.testing.assert_allclose(pd.read_csv(in_memory)["proba_a"], predictions["proba_a"], rtol=1e-10, atol=1e-15)
    # --keep copies columns (the label here) beside the predictions, in their own type
    kept = tmp_path / "kept.parquet"
    assert run("predict", "--model", str(model), "--parquet", str(folder), "--output", str(kept),
               "--keep", "label,f2").exit_code == 0
    with_label = pd.read_parquet(kept)
    assert list(with_label.columns) == ["label", "f2", "predicted", "proba_a", "proba_b"]
    rows = pd.read_parquet(folder)
    assert with_label["label"].tolist() == rows["label"].tolist()
    np.testing.assert_array_equal(with_label["f2"], rows["f2"])
    np.testing.assert_allclose(with_label["proba_a"], predictions["proba_a"], rtol=1e-12)

    # an existing output is never replaced without --overwrite
    result = CliRunner().invoke(cli, ["predict", "--model", str(model), "--parquet", str(folder), "--output", str(out)])
    assert result.exit_code != 0 and "--overwrite" in result.output


@pytest.mark.parametrize("model", ["lda", "proset"])
def test_an_unscaled_lazy_fit_takes_its_columns_by_name(tmp_path, table, model):
    """fit --parquet --no-scale saved a model without feature names, which took a CSV's columns in
    order: with the columns reversed every row was predicted from the wrong features, silently."""
    frame, folder = table
    path = tmp_path / "m.skops"
    assert run("fit", "--parquet", str(folder), "--target", "label", "--model", model, "--no-scale",
               "--output", str(path), "--quiet").exit_code == 0
    reversed_csv = tmp_path / "reversed.csv"
    frame[frame.columns[::-1]].to_csv(reversed_csv, index=False)  # label, f3, f2, f1
    out = tmp_path / "p.csv"
    result = run("predict", "--model", str(path), "--csv", str(reversed_csv), "--output", str(out))
    assert result.exit_code == 0, result.output
    from discrim.persistence import load_model

    np.testing.assert_array_equal(pd.read_csv(out)[["proba_a", "proba_b"]].to_numpy(),
                                  load_model(path).predict_proba(frame[["f1", "f2", "f3"]]))
    assert (pd.read_csv(out)["predicted"] == frame["label"]).mean() > 0.95


def test_overwrite_replaces_only_an_earlier_parquet_output(tmp_path, table, monkeypatch):
    """--overwrite replaced the whole --output folder: a folder of the user's files, the folder of
    the input table, the current folder, or a CSV file turned into a folder. It now replaces only
    a folder of Parquet files, refused before any work otherwise, and nothing else is touched."""
    frame, folder = table
    model = tmp_path / "m.skops"
    assert run("fit", "--parquet", str(folder), "--target", "label", "--model", "lda", "--output", str(model),
               "--quiet").exit_code == 0

    def predict(output, source=folder):
        return CliRunner().invoke(cli, ["predict", "--model", str(model), "--parquet", str(source), "--output",
                                        str(output), "--overwrite"])

    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("x")
    result = predict(precious)
    assert result.exit_code != 0 and "'notes.txt'" in result.output and "new folder name" in result.output
    assert (precious / "notes.txt").read_text() == "x"
    result = predict(folder)  # the input's own folder
    assert result.exit_code != 0 and "input" in result.output
    assert sorted(p.name for p in folder.iterdir()) == ["part-0.parquet", "part-1.parquet", "part-2.parquet"]
    result = predict(tmp_path)  # a folder holding the input and the model
    assert result.exit_code != 0 and model.exists()
    work = tmp_path / "work"
    work.mkdir()
    (work / "keep.txt").write_text("y")
    monkeypatch.chdir(work)
    result = predict(".")
    assert result.exit_code != 0 and "current folder" in result.output and (work / "keep.txt").exists()
    csv = tmp_path / "p.csv"
    csv.write_text("a,b\n")
    result = predict(csv)
    assert result.exit_code != 0 and "is a file" in result.output and csv.read_text() == "a,b\n"
    # a copy of a data set (Parquet files, but not predictions) was replaced by the predictions
    dataset = tmp_path / "dataset_copy"
    shutil.copytree(folder, dataset)
    result = predict(dataset)
    assert result.exit_code != 0 and "not discrim predictions" in result.output and "'part-0.parquet'" in result.output
    pd.testing.assert_frame_equal(pd.read_parquet(dataset), pd.read_parquet(folder))
    # an earlier prediction is replaced, with the usual permissions (not mkdtemp's 0700)
    out = tmp_path / "predictions"
    assert predict(out).exit_code == 0 and predict(out).exit_code == 0
    assert pd.read_parquet(out).shape[0] == frame.shape[0]
    assert out.stat().st_mode & 0o055 == 0o055 & ~current_umask()


def test_mixture_from_zarr_equals_the_csv_fit(tmp_path, table):
    zarr = pytest.importorskip("zarr")
    frame, _ = table
    X = frame[["f1", "f2", "f3"]].to_numpy()
    store = zarr.create_array(str(tmp_path / "rows.zarr"), shape=X.shape, chunks=(500, 3), dtype="f8")
    store[:] = X
    store.attrs["columns"] = ["f1", "f2", "f3"]
    csv = tmp_path / "rows.csv"
    frame.drop(columns="label").to_csv(csv, index=False)
    lazy = run("mixture", "--zarr", str(tmp_path / "rows.zarr"), "--components", "2", "--quiet")
    eager = run("mixture", "--csv", str(csv), "--components", "2", "--quiet")
    assert lazy.exit_code == 0, lazy.output
    assert "f1, f2, f3" in lazy.output
    # the same report: the same start (all rows seed k-means++) and the same EM, to rounding
    lines = lambda text: [line for line in text.splitlines() if "log-likelihood" in line]  # noqa: E731
    assert lines(lazy.output) == lines(eager.output)


def test_lazy_inputs_give_one_line_errors(tmp_path, table):
    _, folder = table
    result = CliRunner().invoke(cli, ["fit", "--parquet", str(tmp_path / "none*.parquet"), "--target", "label",
                                      "--model", "lda"])
    assert result.exit_code == 1 and "no Parquet file" in result.output
    result = CliRunner().invoke(cli, ["fit", "--parquet", str(folder), "--target", "nope", "--model", "lda"])
    assert result.exit_code == 1 and "target column 'nope'" in result.output
    result = CliRunner().invoke(cli, ["fit", "--parquet", str(folder), "--csv", "x.csv", "--target", "label",
                                      "--model", "lda"])
    assert result.exit_code == 2 and "exactly one" in result.output
    result = CliRunner().invoke(cli, ["predict", "--model", "m.skops", "--parquet", str(folder)])
    assert result.exit_code == 2 and "--output" in result.output


def test_a_small_memory_budget_starts_a_local_cluster(table):
    from discrim.cli._lazy import dask_cluster

    with dask_cluster(None, nbytes=10, memory_budget=100) as where:
        assert where == "Dask threads in this process"
    with dask_cluster(None, nbytes=10**9, memory_budget=2**29) as where:
        from distributed import get_client

        assert "local Dask cluster" in where
        assert len(get_client().scheduler_info()["workers"]) >= 1


def test_lazy_rows_without_a_label_are_refused_in_one_line(tmp_path, table):
    frame, _ = table
    gaps = tmp_path / "gaps.parquet"
    frame.assign(label=frame["label"].mask(np.arange(len(frame)) % 7 == 0)).to_parquet(gaps, index=False)
    result = CliRunner().invoke(cli, ["fit", "--parquet", str(gaps), "--target", "label", "--model", "lda"])
    assert result.exit_code == 1
    assert "has 172 missing value(s): --parquet and --zarr fit labelled rows only" in result.output


def _mixed_types(tmp_path, rng, n=300):
    """A table with a float, an Int64 and a nullable boolean feature (empty cells), and text labels.

    Written as Parquet (the pandas dtypes kept) and as CSV (the booleans as True/False text).
    """
    group = np.repeat([0, 1], n // 2)
    frame = pd.DataFrame({
        "x": rng.normal(2.0 * group, 1.0),
        "count": pd.array(rng.poisson(2 + 3 * group), dtype="Int64"),
        "flag": pd.array(rng.random(n) < np.where(group == 1, 0.8, 0.2), dtype="boolean"),
        "label": np.where(group == 1, "b", "a"),
    })
    frame.loc[rng.random(n) < 0.05, "flag"] = pd.NA
    frame.loc[rng.random(n) < 0.05, "x"] = np.nan
    parquet, csv = tmp_path / "mixed.parquet", tmp_path / "mixed.csv"
    frame.to_parquet(parquet, index=False)
    frame.to_csv(csv, index=False)
    return frame, parquet, csv


def test_parquet_refuses_a_text_feature_as_the_csv_does(tmp_path, rng):
    """A text feature column stops fit and mixture --columns with one message for both formats.

    It used to be dropped silently from Parquet (a model without it, exit 0) while the CSV copy of
    the same table was refused: two formats of one table gave different models.
    """
    frame, _, _ = _mixed_types(tmp_path, rng)
    frame = frame.assign(city=np.where(rng.random(len(frame)) < 0.5, "north", "south"))
    parquet, csv = tmp_path / "city.parquet", tmp_path / "city.csv"
    frame.to_parquet(parquet, index=False)
    frame.to_csv(csv, index=False)
    errors = []
    for source in (["--parquet", str(parquet)], ["--csv", str(csv)]):
        result = CliRunner().invoke(cli, ["fit", *source, "--target", "label", "--model", "lda", "--quiet",
                                          "--output", str(tmp_path / "m.skops")])
        assert result.exit_code == 1, result.output
        errors.append(result.output.strip().splitlines()[-1])
    assert errors[0] == errors[1] == ("Error: non-numeric features column(s) 'city': encode them as numbers "
                                      "(e.g. one-hot) or leave them out (--drop in fit and tune, --columns in "
                                      "mixture).")
    assert not (tmp_path / "m.skops").exists()
    result = CliRunner().invoke(cli, ["mixture", "--parquet", str(parquet), "--columns", "x,city", "--quiet"])
    assert result.exit_code == 1 and "non-numeric data column(s) 'city'" in result.output


def test_booleans_are_features_0_1_from_parquet_and_csv_alike(tmp_path, rng):
    """A nullable boolean from Parquet and its True/False text in CSV are one feature, 0/1.

    A model fitted on the Parquet copy predicts the CSV copy with the same probabilities (the CSV's
    True/False column used to be refused as non-numeric), and mixture fits the same columns and
    the same mixture from either copy (the CSV's flag used to be left out).
    """
    frame, parquet, csv = _mixed_types(tmp_path, rng)
    model = tmp_path / "m.skops"
    result = run("fit", "--parquet", str(parquet), "--target", "label", "--model", "lda", "--quiet",
                 "--output", str(model))
    assert result.exit_code == 0, result.output
    from discrim.persistence import load_model

    assert list(load_model(model).feature_names_in_) == ["x", "count", "flag"]
    lazy, eager = tmp_path / "lazy.parquet", tmp_path / "eager.csv"
    assert run("predict", "--model", str(model), "--parquet", str(parquet), "--output", str(lazy)).exit_code == 0
    result = run("predict", "--model", str(model), "--csv", str(csv), "--output", str(eager))
    assert result.exit_code == 0, result.output
    np.testing.assert_allclose(pd.read_csv(eager)["proba_a"], pd.read_parquet(lazy)["proba_a"], rtol=1e-10)
    reports = [run("mixture", *source, "--components", "2", "--quiet")
               for source in (["--parquet", str(parquet)], ["--csv", str(csv)])]
    assert all(r.exit_code == 0 for r in reports), [r.output for r in reports]
    assert all("on 3 column(s): x, count, flag" in r.output for r in reports)
    lines = lambda text: [line for line in text.splitlines() if "log-likelihood" in line]  # noqa: E731
    assert lines(reports[0].output) == lines(reports[1].output)


def test_lazy_commands_show_no_internal_dask_warning(tmp_path, rng):
    """fit and predict on Parquet with pandas extension dtypes (text labels, Int64, boolean) warn nothing.

    Dask warned "limited support for converting pandas extension dtypes" when the text labels
    became an array: a library's internal note, which the user can do nothing about.
    """
    import warnings

    _, parquet, _ = _mixed_types(tmp_path, rng)
    model, out = tmp_path / "m.skops", tmp_path / "p.parquet"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert run("fit", "--parquet", str(parquet), "--target", "label", "--model", "qda", "--quiet",
                   "--output", str(model)).exit_code == 0
        assert run("predict", "--model", str(model), "--parquet", str(parquet), "--output", str(out)).exit_code == 0
        assert run("mixture", "--parquet", str(parquet), "--components", "2", "--quiet").exit_code == 0
    dask_notes = [str(w.message) for w in caught if "pandas extension dtypes" in str(w.message)]
    assert dask_notes == []


def test_a_constant_parquet_column_is_named(tmp_path, rng):
    """A constant feature beside missing cells is refused by its column name, not its position.

    The model sees the scaled columns as an array, so its message said "feature(s) of X ([2])".
    """
    frame, _, _ = _mixed_types(tmp_path, rng)
    path = tmp_path / "constant.parquet"
    frame.drop(columns="flag").assign(level=1.0).to_parquet(path, index=False)
    result = CliRunner().invoke(cli, ["fit", "--parquet", str(path), "--target", "label", "--model", "qda", "--quiet"])
    assert result.exit_code == 1
    assert "1 feature(s) of X (['level']) are constant" in result.output


def test_drop_leaves_a_column_of_a_lazy_table_out(tmp_path, table):
    frame, folder = table
    model = tmp_path / "m.skops"
    result = run("fit", "--parquet", str(folder), "--target", "label", "--model", "lda", "--drop", "f3",
                 "--output", str(model), "--quiet")
    assert result.exit_code == 0, result.output
    from discrim.persistence import load_model

    assert list(load_model(model).feature_names_in_) == ["f1", "f2"]
    result = CliRunner().invoke(cli, ["fit", "--parquet", str(folder), "--target", "label", "--model", "lda",
                                      "--drop", "f9", "--quiet"])
    assert result.exit_code != 0 and "--drop column(s) 'f9' not in the table" in result.output


def test_predict_from_parquet_keeps_a_feature_as_written(tmp_path, rng):
    # a kept column that is also a feature was written as the model's float copy: an Int64 count 0
    # came back as 0.0 (and <NA> as NaN), where the CSV path copies the cell as written
    frame = pd.DataFrame({"count": pd.array(rng.integers(0, 5, 300), dtype="Int64"), "x": rng.normal(size=300),
                          "label": np.repeat(["a", "b"], 150)})
    frame.loc[7, "count"] = pd.NA
    frame.to_parquet(tmp_path / "rows.parquet", index=False)
    model = tmp_path / "m.skops"
    assert run("fit", "--parquet", str(tmp_path / "rows.parquet"), "--target", "label", "--model", "qda",
               "--output", str(model), "--quiet").exit_code == 0
    out = tmp_path / "kept.parquet"
    result = run("predict", "--model", str(model), "--parquet", str(tmp_path / "rows.parquet"), "--output", str(out),
                 "--keep", "count")
    assert result.exit_code == 0, result.output
    kept = pd.read_parquet(out)
    assert list(kept.columns) == ["count", "predicted", "proba_a", "proba_b"]
    assert str(kept["count"].dtype) == "Int64" and kept["count"].equals(frame["count"])
