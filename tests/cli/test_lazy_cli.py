"""The command line on Parquet and Zarr tables read lazily by Dask (issue 19, deliverable 3)."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from discrim.cli.main import cli

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
    # an existing output is never replaced without --overwrite
    result = CliRunner().invoke(cli, ["predict", "--model", str(model), "--parquet", str(folder), "--output", str(out)])
    assert result.exit_code != 0 and "--overwrite" in result.output


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
