"""The command line over bad inputs (issue 17): saved models take raw rows, outputs are never
overwritten silently, --param takes literals only, and every failure is one line with exit 1.

Each command runs in-process through click's runner with ``catch_exceptions=True``: a traceback
would show up as ``result.exception`` not being a ``SystemExit``.
"""

import json
import re
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from discrim.cli._io import check_finite_probabilities, parse_params
from discrim.cli.main import cli
from discrim.datasets import list_datasets, load_benchmark, load_dataset
from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture
from discrim.persistence import load_model, save_model

# Small hyperparameters per model keep the fits affordable; the property is the data path.
_FAST = {
    "lda": [],
    "qda": ["--param", "reg_param=0.1"],
    "mda": ["--param", "n_components=1"],
    "proset": ["--param", "n_batches=1"],
    "proset-cv": ["--param", "alpha_feature_grid=[0.001]", "--param", "max_batches=1", "--param", "cv=2"],
}


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    if result.exit_code != 0:  # never a traceback: an error is a clean SystemExit with one line
        assert isinstance(result.exception, SystemExit), result.exception
    return result


def one_line_error(result, *words):
    """Assert exit 1 and a single 'Error:' line containing every word."""
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:"), result.output
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _export(name, tmp_path):
    path = tmp_path / f"{name}.csv"
    assert run("datasets", "--export", name, "--output", path).exit_code == 0
    return path


# ----- saved models predict raw rows --------------------------------------------------------------

@pytest.mark.parametrize("model", list(_FAST))
def test_saved_model_predicts_raw_rows_as_the_fitting_process(tmp_path, model):
    """The README's flow on cancer: fit --dataset, save, predict the raw rows of a CSV file."""
    path = tmp_path / "m.skops"
    assert run("fit", "--dataset", "cancer", "--model", model, *_FAST[model], "--output", path,
               "--quiet").exit_code == 0
    X_train, X_test, y_train, y_test = load_benchmark("cancer", as_frame=True, scale=False)
    raw_csv, out = tmp_path / "raw.csv", tmp_path / "pred.csv"
    X_test.to_csv(raw_csv, index=False)
    assert run("predict", "--model", path, "--csv", raw_csv, "--output", out).exit_code == 0
    predictions = pd.read_csv(out)
    written = predictions.filter(like="proba_").to_numpy()
    # What the fitting process computes: the scaler and the model fitted on the raw training part.
    final = load_model(path)[-1]
    reference = make_pipeline(StandardScaler(), clone(final)).fit(X_train, y_train).predict_proba(X_test)
    np.testing.assert_array_equal(written, reference)
    assert (predictions["predicted"] == y_test).mean() > 0.9
    # Not the class shares: the rows are told apart.
    assert np.ptp(written[:, 0]) > 0.5


@pytest.mark.parametrize("name", list(list_datasets()))
def test_every_built_in_data_set_saves_a_model_of_raw_rows(tmp_path, name):
    path = tmp_path / "m.skops"
    assert run("fit", "--dataset", name, "--model", "lda", "--param", "reg_param=0.01", "--output", path,
               "--quiet").exit_code == 0
    model = load_model(path)
    _, X_raw, _, _ = load_benchmark(name, as_frame=True, scale=False)
    _, X_scaled, _, _ = load_benchmark(name, as_frame=True)
    np.testing.assert_allclose(model.predict_proba(X_raw), model[-1].predict_proba(X_scaled.to_numpy()),
                               rtol=1e-9, atol=1e-12)


def test_exported_data_set_is_the_raw_rows_and_trains_through_csv(tmp_path):
    path = _export("iris", tmp_path)
    df = pd.read_csv(path)
    X, y = load_dataset("iris", as_frame=True)
    np.testing.assert_array_equal(df.drop(columns="target").to_numpy(), X.to_numpy())
    assert list(df.columns[:-1]) == list(X.columns) and (df["target"] == y).all()
    model = tmp_path / "m.skops"
    assert run("fit", "--csv", path, "--target", "target", "--model", "lda", "--output", model).exit_code == 0
    pred = tmp_path / "p.csv"
    assert run("predict", "--model", model, "--csv", path, "--output", pred).exit_code == 0
    assert (pd.read_csv(pred)["predicted"] == y).mean() > 0.95


def test_plot_of_a_dataset_is_drawn_in_the_raw_units(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from discrim.plotting.decision_surface import plot_decision_surface

    model = tmp_path / "m.skops"
    assert run("fit", "--dataset", "iris-2f", "--model", "lda", "--output", model).exit_code == 0
    X_raw, _, y, _ = load_benchmark("iris-2f", as_frame=True, scale=False)
    ax = plot_decision_surface(load_model(model), X_raw, y)
    lo, hi = ax.get_xlim()
    assert lo < X_raw.iloc[:, 0].min() and hi > X_raw.iloc[:, 0].max() and lo > 3.0  # centimetres


# ----- never overwrite silently ----------------------------------------------------------------------

def test_fit_output_onto_its_training_csv_is_refused_even_with_overwrite(tmp_path):
    data = _export("iris-2f", tmp_path)
    before = data.read_bytes()
    for extra in ([], ["--overwrite"]):
        result = run("fit", "--csv", data, "--target", "target", "--model", "lda", "--output", data, *extra)
        one_line_error(result, "--output", "input")
        assert data.read_bytes() == before
    result = run("fit", "--csv", data, "--target", "target", "--model", "lda", "--plot", data, "--overwrite")
    one_line_error(result, "--plot", "input")
    assert data.read_bytes() == before


@pytest.mark.parametrize("command", ["fit-output", "fit-plot", "predict", "mixture", "export"])
def test_existing_outputs_need_overwrite(tmp_path, command):
    data = _export("iris-2f", tmp_path)
    model = tmp_path / "m.skops"
    assert run("fit", "--dataset", "iris-2f", "--model", "lda", "--output", model).exit_code == 0
    target = tmp_path / "existing.out"
    target.write_text("precious")
    args = {
        "fit-output": ["fit", "--dataset", "iris-2f", "--model", "lda", "--output", target],
        "fit-plot": ["fit", "--dataset", "iris-2f", "--model", "lda", "--plot", target.with_suffix(".png")],
        "predict": ["predict", "--model", model, "--csv", data, "--output", target],
        "mixture": ["mixture", "--csv", data, "--columns", "sepal length (cm)", "--plot", target.with_suffix(".png")],
        "export": ["datasets", "--export", "wine", "--output", target],
    }[command]
    written = args[-1]
    if written != target:
        written.write_text("precious")
    one_line_error(run(*args), "exists", "--overwrite")
    assert written.read_text() == "precious"
    result = run(*args, "--overwrite")
    assert result.exit_code == 0, result.output
    assert written.read_bytes() != b"precious"


def test_predict_output_onto_the_model_or_the_csv_is_refused(tmp_path):
    data = _export("iris-2f", tmp_path)
    model = tmp_path / "m.skops"
    assert run("fit", "--dataset", "iris-2f", "--model", "lda", "--output", model).exit_code == 0
    for target in (model, data):
        before = target.read_bytes()
        one_line_error(run("predict", "--model", model, "--csv", data, "--output", target, "--overwrite"), "input")
        assert target.read_bytes() == before


def test_fit_output_and_plot_on_one_file_is_refused(tmp_path):
    target = tmp_path / "both.png"
    one_line_error(run("fit", "--dataset", "iris-2f", "--model", "lda", "--output", target, "--plot", target),
                   "same file")
    assert not target.exists()


def test_tune_refuses_a_folder_of_an_earlier_run_without_overwrite(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "model.skops").write_text("earlier")
    fast = ["--max-batches", "1", "--cv", "2", "--n-alphas", "1", "--quiet"]
    one_line_error(run("tune", "--dataset", "iris-2f", *fast, "--output", out), "model.skops", "--overwrite")
    assert (out / "model.skops").read_text() == "earlier"
    assert run("tune", "--dataset", "iris-2f", *fast, "--output", out, "--overwrite").exit_code == 0
    assert load_model(out / "model.skops").predict_proba(load_benchmark("iris-2f", scale=False)[1]).shape == (45, 3)
    assert not [p for p in out.iterdir() if p.name.startswith(".tune-")]


# ----- --param literals ---------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["[" * 100_000 + "]" * 100_000, "[[1]]", "{'a': 1}", "{1, 2}", "9" * 5000,
                                   "[" + ",".join(["1"] * 2000) + "]", "1j", "[1, 2"])
def test_param_accepts_literals_only(value):
    result = run("fit", "--dataset", "iris-2f", "--model", "lda", "--param", f"reg_param={value}")
    one_line_error(result, "--param reg_param")


@settings(max_examples=50, deadline=None)
@given(value=st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False, allow_infinity=False),
                       st.booleans(), st.none(), st.text(alphabet="abcxyz_", min_size=1, max_size=20),
                       st.lists(st.floats(-1e6, 1e6), max_size=5)))
def test_param_literals_round_trip(value):
    parsed = parse_params([f"key={value!r}"])["key"]
    assert parsed == value


def test_param_bare_words_are_strings_and_true_false_booleans():
    assert parse_params(["a=auto", "b=true", "c=False", "d=None"]) == {"a": "auto", "b": True, "c": False, "d": None}


def test_param_given_twice_is_refused():
    # "--param shrinkage=auto --param shrinkage=oas" fitted with 'oas' alone, silently
    result = run("fit", "--dataset", "iris-2f", "--model", "lda", "--param", "shrinkage=auto", "--param",
                 " shrinkage = oas")
    assert one_line_error(result) == "Error: --param shrinkage is given twice; give each parameter once."


# ----- one-line errors for models the command cannot use --------------------------------------------

def test_predict_and_explain_on_a_finite_mixture_say_it_is_not_a_classifier(tmp_path):
    data = _export("iris-2f", tmp_path)
    path = tmp_path / "mix.skops"
    save_model(FiniteMixture(Gaussian(), n_components=2, random_state=0).fit(load_dataset("iris-2f")[0]), path)
    one_line_error(run("predict", "--model", path, "--csv", data), "FiniteMixture", "not a classifier")
    one_line_error(run("explain", "--model", path, "--csv", data, "--row", "0"), "FiniteMixture")


@pytest.mark.parametrize("command", ["predict", "predict-parquet", "explain"])
def test_a_model_saved_before_it_was_fitted_is_named_so(tmp_path, command):
    # save_model writes unfitted estimators; predict said "non-numeric features column(s) 'target':
    # the model learnt them as numbers" and explain "holds a PrototypeClassifier, not a prototype set model"
    from discrim.prototype import PrototypeClassifier

    data = _export("iris-2f", tmp_path)
    path = tmp_path / "unfitted.skops"
    save_model(make_pipeline(StandardScaler(), PrototypeClassifier()), path)
    args = {"predict": ["--csv", data], "explain": ["--csv", data, "--row", "0"],
            "predict-parquet": ["--parquet", tmp_path / "rows.parquet", "--output", tmp_path / "out.parquet"]}[command]
    pd.read_csv(data).to_parquet(tmp_path / "rows.parquet")
    one_line_error(run(command.split("-")[0], "--model", path, *args),
                   "unfitted.skops' holds a PrototypeClassifier that was saved before it was fitted")
    assert not (tmp_path / "out.parquet").exists()


def test_explain_on_a_model_without_a_fitted_attribute_is_one_line(tmp_path):
    data = _export("iris-2f", tmp_path)
    good, bad = tmp_path / "m.skops", tmp_path / "bad.skops"
    assert run("fit", "--dataset", "iris-2f", "--model", "proset", *_FAST["proset"], "--output", good).exit_code == 0
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.infolist():
            raw = zin.read(item.filename)
            if item.filename == "schema.json":
                schema = json.loads(raw)
                final = schema["content"]["content"]["steps"]["content"][-1]["content"][1]["content"]["content"]
                del final["classes_"]
                raw = json.dumps(schema).encode()
            zout.writestr(item, raw)
    for args in (["predict", "--model", bad, "--csv", data],
                 ["explain", "--model", bad, "--csv", data, "--row", "0"]):
        line = one_line_error(run(*args))
        assert "bad.skops" in line or "classes_" in line


def test_non_finite_probabilities_are_never_reported():
    import click

    check_finite_probabilities(np.array([[0.25, 0.75]]))
    with pytest.raises(click.ClickException, match="non-finite probabilities for 1 row.*data row 1.*nothing was written"):
        check_finite_probabilities(np.array([[0.5, 0.5], [np.nan, 0.5], [1.0, 0.0]]))


def test_predict_rows_beyond_the_magnitude_limit_writes_nothing(tmp_path):
    model = tmp_path / "m.skops"
    assert run("fit", "--dataset", "iris-2f", "--model", "proset", *_FAST["proset"], "--output", model).exit_code == 0
    X, _ = load_dataset("iris-2f", as_frame=True)
    X.iloc[3, 0] = 1e300
    data, out = tmp_path / "far.csv", tmp_path / "pred.csv"
    X.to_csv(data, index=False)
    one_line_error(run("predict", "--model", model, "--csv", data, "--output", out))
    assert not out.exists()


@pytest.mark.parametrize("args, words", [
    (["datasets", "--export", "iris"], ["--export", "--output"]),
    (["datasets", "--export", "nope", "--output", "x.csv"], ["unknown data set 'nope'"]),
    (["fit", "--dataset", "iris", "--model", "lda", "--param", "reg_param=-1"], ["reg_param"]),
    (["fit", "--dataset", "iris", "--model", "lda", "--param", "no_such=1"], ["no_such"]),
    (["fit", "--dataset", "iris", "--model", "proset", "--param", "n_batches=10**9"], ["n_batches"]),
])
def test_bad_options_are_one_line(tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code in (1, 2), result.output
    text = result.output
    for word in words:
        assert word in text, text
    assert "Traceback" not in text
    assert not list(tmp_path.iterdir())


# ----- the grid: every command over bad CSV files ---------------------------------------------------

def _bad_tables():
    """name -> DataFrame with features a, b and target y (iris-like rows, then one defect)."""
    rng = np.random.default_rng(0)
    n = 30
    good = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "y": np.repeat(["p", "q", "r"], n // 3)})
    tables = {}
    for name in ["nan", "inf", "huge", "string", "empty", "one_row", "one_class", "constant", "collinear",
                 "offset", "tiny", "header_only", "missing_target", "duplicate_rows"]:
        df = good.copy()
        if name == "nan":
            df.loc[3, "a"] = np.nan
        elif name == "inf":
            df.loc[3, "a"] = np.inf
        elif name == "huge":
            df.loc[3, "a"] = 1e300
        elif name == "string":
            df["a"] = df["a"].astype(str)
            df.loc[3, "a"] = "seven"
        elif name == "empty":
            df = df.iloc[:0]
        elif name == "one_row":
            df = df.iloc[:1]
        elif name == "one_class":
            df["y"] = "p"
        elif name == "constant":
            df["b"] = 4.0
        elif name == "collinear":
            df["b"] = 2 * df["a"]
        elif name == "offset":
            df[["a", "b"]] += 1e9
        elif name == "tiny":
            df[["a", "b"]] *= 1e-150
        elif name == "header_only":
            df = df.iloc[:0][["a"]]
        elif name == "missing_target":
            df.loc[5, "y"] = None
        elif name == "duplicate_rows":
            df = pd.concat([df.iloc[[0]]] * 30, ignore_index=True).assign(y=np.repeat(["p", "q", "r"], 10))
        tables[name] = df
    return tables


_TABLES = _bad_tables()
_COMMANDS = {
    "fit-lda": lambda csv, out, model: ["fit", "--csv", csv, "--target", "y", "--model", "lda", "--output", out],
    "fit-qda": lambda csv, out, model: ["fit", "--csv", csv, "--target", "y", "--model", "qda", "--output", out],
    "fit-mda": lambda csv, out, model: ["fit", "--csv", csv, "--target", "y", "--model", "mda", "--param", "n_components=1",
                                 "--output", out],
    "fit-proset": lambda csv, out, model: ["fit", "--csv", csv, "--target", "y", "--model", "proset", "--param", "n_batches=1",
                                    "--output", out],
    "predict": lambda csv, out, model: ["predict", "--model", model, "--csv", csv, "--output", out],
    "explain": lambda csv, out, model: ["explain", "--model", model, "--csv", csv, "--row", "0"],
    "mixture": lambda csv, out, model: ["mixture", "--csv", csv, "--columns", "a,b", "--components", "1-2", "--plot", out],
    "tune": lambda csv, out, model: ["tune", "--csv", csv, "--target", "y", "--max-batches", "1", "--cv", "2", "--n-alphas",
                              "1", "--quiet", "--output", out],
}


@pytest.fixture(scope="module")
def proset_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "m.skops"
    df = _TABLES["constant"].assign(b=np.random.default_rng(1).normal(size=30))
    csv = path.with_suffix(".csv")
    df.to_csv(csv, index=False)
    assert run("fit", "--csv", csv, "--target", "y", "--model", "proset", "--param", "n_batches=1",
               "--output", path).exit_code == 0
    return path


@pytest.mark.parametrize("table", list(_TABLES))
@pytest.mark.parametrize("command", list(_COMMANDS))
def test_every_command_over_bad_csv_files(tmp_path, proset_model, command, table):
    """A clean one-line error (exit 1 or click's usage exit 2) and nothing written, or success with
    finite output: never a traceback, never NaN, never a partial file."""
    csv = tmp_path / "data.csv"
    _TABLES[table].to_csv(csv, index=False)
    out = tmp_path / ("out" if command == "tune" else "out.png" if command == "mixture" else "out.csv")
    before = set(tmp_path.iterdir())
    result = run(*_COMMANDS[command](csv, out, proset_model))
    assert "Traceback" not in result.output
    if result.exit_code != 0:
        assert result.exit_code in (1, 2), result.output
        lines = [line for line in result.output.splitlines() if line.strip() and not line.startswith(("Usage:", "Try "))]
        assert len(lines) == 1 and lines[0].startswith("Error:"), result.output
        assert set(tmp_path.iterdir()) == before  # nothing written, not even a temporary file
        return
    assert not re.search(r"\bnan\b", result.output, flags=re.IGNORECASE), result.output  # no NaN score printed
    if command == "predict":
        written = pd.read_csv(out).filter(like="proba_").to_numpy()
        assert np.all(np.isfinite(written)) and np.allclose(written.sum(axis=1), 1.0)
    if command.startswith("fit"):
        assert load_model(out).predict_proba(_TABLES[table][["a", "b"]]).shape[1] >= 1
    assert not [p for p in tmp_path.rglob(".*") if p.is_file() or p.is_dir()]


def test_predict_on_a_file_that_holds_data_or_a_damaged_pipeline_is_one_line(tmp_path):
    import skops.io as sio

    csv = tmp_path / "x.csv"
    csv.write_text("a,b\n1,2\n")
    data = tmp_path / "data.skops"
    data.write_bytes(sio.dumps({"a": 1}))  # written by skops directly: save_model refuses it
    result = CliRunner().invoke(cli, ["predict", "--model", str(data), "--csv", str(csv)])
    assert result.exit_code != 0 and "holds a dict, not a model" in result.output
    assert "internal error" not in result.output


def test_plot_format_unknown_key_and_huge_component_range_fail_before_any_output(tmp_path):
    rng = np.random.default_rng(0)
    csv = tmp_path / "d.csv"
    pd.DataFrame(rng.normal(size=(60, 2)), columns=["x1", "x2"]).assign(label=np.repeat(["a", "b"], 30)).to_csv(
        csv, index=False)
    model = tmp_path / "m.skops"
    result = CliRunner().invoke(cli, ["fit", "--csv", str(csv), "--target", "label", "--model", "lda",
                                      "--output", str(model), "--plot", str(tmp_path / "out.xyz"), "--quiet"])
    assert result.exit_code != 0 and "--plot" in result.output and ".png" in result.output
    assert not model.exists()  # nothing written before the error
    result = CliRunner().invoke(cli, ["fit", "--csv", str(csv), "--target", "label", "--model", "qda",
                                      "--param", "foo=1", "--quiet"])
    assert result.exit_code != 0 and "--param: qda has no parameter 'foo'" in result.output and "reg_param" in result.output
    result = CliRunner().invoke(cli, ["mixture", "--csv", str(csv), "--columns", "x1,x2",
                                      "--components", "1-1000000000", "--quiet"])
    assert result.exit_code != 0 and "--components" in result.output and "at most 1,000" in result.output


def test_decimal_commas_and_semicolons_are_named_with_their_fix(tmp_path):
    commas = tmp_path / "commas.csv"
    commas.write_text('x1,x2,label\n"0,126",1.0,a\n"1,5",2.0,b\n"2,25",1.0,a\n"3,5",2.0,b\n')
    result = CliRunner().invoke(cli, ["fit", "--csv", str(commas), "--target", "label", "--model", "lda"])
    assert result.exit_code != 0 and "decimal comma" in result.output and "one-hot" not in result.output
    semicolons = tmp_path / "semicolons.csv"
    semicolons.write_text("x1;x2;label\n1;2;a\n3;4;b\n")
    result = CliRunner().invoke(cli, ["fit", "--csv", str(semicolons), "--target", "label", "--model", "lda"])
    assert result.exit_code != 0 and "separated by semicolons" in result.output


def _two_features_with_a_gap(tmp_path):
    """A two-feature CSV (a, b, label y) with one empty cell in a."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(np.vstack([rng.normal(0, 1, (20, 2)), rng.normal(3, 1, (20, 2))]), columns=["a", "b"])
    frame.loc[1, "a"] = np.nan
    path = tmp_path / "two.csv"
    frame.assign(y=np.repeat(["p", "q"], 20)).to_csv(path, index=False)
    return path


def test_a_failing_plot_leaves_no_model_file(tmp_path, monkeypatch):
    """fit --output --plot writes both files or neither: a plot that cannot be saved leaves no model.

    The model used to be saved before the plot was drawn, so a failed plot (exit 1) left the model
    file of a failed run behind, against the promise of no partial output.
    """
    from matplotlib.figure import Figure

    csv = _two_features_with_a_gap(tmp_path)

    def refuse(self, *args, **kwargs):
        raise OSError("no space left on device")

    monkeypatch.setattr(Figure, "savefig", refuse)
    result = run("fit", "--csv", csv, "--target", "y", "--model", "lda", "--quiet",
                 "--output", tmp_path / "m.skops", "--plot", tmp_path / "r.png")
    assert result.exit_code == 1  # after the scores: the fit itself succeeded
    assert result.output.strip().splitlines()[-1] == "Error: no space left on device"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["two.csv"]  # no model, no plot, no temporary file


def test_a_constant_column_is_named_not_numbered(tmp_path):
    """A constant feature beside missing cells is refused by its CSV column name.

    The scaler of the pipeline hands the model an unnamed array, so its message said
    "feature(s) of X ([1])": a position the user had to count out in the file.
    """
    csv = _two_features_with_a_gap(tmp_path)
    pd.read_csv(csv).assign(b=5.0).to_csv(csv, index=False)
    result = run("fit", "--csv", csv, "--target", "y", "--model", "qda", "--quiet")
    one_line_error(result, "1 feature(s) of X (['b']) are constant")


def test_feature_positions_in_messages_become_column_names():
    """Every list of feature positions in a message is named; names, and positions beyond the columns, stay.

    Both of the library's spellings ("feature(s) of X ([5])", "feature(s) [0, 3]") are covered:
    the CLI applies this to any refusal of its models.
    """
    from discrim.cli._io import name_feature_positions

    names = ["age", "visits", "amount", "const"]
    assert (name_feature_positions("2 feature(s) of X ([1, 3]) are constant", names)
            == "2 feature(s) of X (['visits', 'const']) are constant")
    assert (name_feature_positions("class a: feature(s) [0]; class b: feature(s) [2, 3].", names)
            == "class a: feature(s) ['age']; class b: feature(s) ['amount', 'const'].")
    # the library's index lister: "(index 1, 3)", per class "(index 3 in class 'a'; ...)"
    assert (name_feature_positions("2 feature(s) of X (index 1, 3) are constant", names)
            == "2 feature(s) of X (['visits', 'const']) are constant")
    assert (name_feature_positions("1 feature(s) (index 3) are constant within every class", names)
            == "1 feature(s) (['const']) are constant within every class")
    assert (name_feature_positions("feature(s) constant within a class (index 3 in class 'a'; index 0, 2 in class "
                                   "'b')", names)
            == "feature(s) constant within a class (['const'] in class 'a'; ['age', 'amount'] in class 'b')")
    assert (name_feature_positions("observe none of the model's active features (0, 3, ...): a missing", names)
            == "observe none of the model's active features (['age', 'const'], ...): a missing")
    for unchanged in ("1 feature(s) of X (['const']) are constant", "1 feature(s) of X ([7]) are constant",
                      "class 2 has [3] rows", "2 row(s) of X (index 1, 3) have zero density",
                      "1 feature(s) of X (index 7) are constant"):
        assert name_feature_positions(unchanged, names) == unchanged


@pytest.mark.parametrize("args, named", [
    # LDA's refusal listed the constant feature as "(index 2)"
    (["fit", "--model", "lda"], "1 feature(s) (['const']) are constant within every class"),
    # the warnings were shown with positions: MDA's per class, a mixture's of X
    (["fit", "--model", "mda", "--param", "n_components=1"],
     "feature(s) constant within a class (['const'] in class 'p'; ['const'] in class 'q')"),
    (["mixture", "--columns", "a,b,const", "--components", "1"],
     "1 feature(s) of X (['const']) are constant over their observed values"),
])
def test_a_constant_column_is_named_in_errors_and_warnings(tmp_path, args, named):
    from discrim.cli._warnings import show_warning

    csv = _two_features_with_a_gap(tmp_path)
    pd.read_csv(csv).dropna().assign(const=5.0).to_csv(csv, index=False)
    source = ["--csv", csv, "--quiet"] + (["--target", "y"] if args[0] == "fit" else [])
    with warnings.catch_warnings():  # shown as the discrim command shows them
        warnings.simplefilter("always")
        warnings.showwarning = show_warning
        result = run(*args, *source)
    assert named in result.output, result.output
    assert "index 2" not in result.output


# --- a command-line user's files (tour of 2026-11-27) ---------------------------------------


def _rows(rng, n=60):
    X = rng.normal(size=(n, 3))
    return X, np.where(X[:, 0] > 0, "cat", "dog")


def _one_error_line(result):
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    return result.output.strip().splitlines()[-1]


def test_headers_that_repeat_a_name_or_are_numbers_are_refused(tmp_path, rng):
    # pandas renamed a repeated header a.1 (a model then asked for 'a.1' at predict) and read a file
    # without a header with its first row as column names (one row fewer, numbers as names)
    X, y = _rows(rng)
    repeated, headerless = tmp_path / "dup.csv", tmp_path / "nohead.csv"
    repeated.write_text("a,a,c,label\n" + "".join(f"{r[0]},{r[1]},{r[2]},{c}\n" for r, c in zip(X, y)))
    headerless.write_text("".join(f"{r[0]},{r[1]},{r[2]}\n" for r in X))
    line = _one_error_line(run("fit", "--csv", repeated, "--target", "label", "--model", "lda"))
    assert "names column(s) 'a' more than once in its header: give every column its own name." in line
    line = _one_error_line(run("mixture", "--csv", headerless, "--quiet"))
    assert "has no header: its first line is numbers" in line and "Add a first line of column names." in line
    # the header is read as pandas reads the table: a compressed file is read too
    import gzip

    packed = tmp_path / "rows.csv.gz"
    packed.write_bytes(gzip.compress(("a,b,c,label\n" + "".join(f"{r[0]},{r[1]},{r[2]},{c}\n"
                                                                 for r, c in zip(X, y))).encode()))
    assert run("fit", "--csv", packed, "--target", "label", "--model", "lda").exit_code == 0


def test_pandas_default_column_names_are_named_with_the_fix(tmp_path, rng):
    # pd.DataFrame(X).to_csv(path, index=False) writes the header 0,1,2, which was refused as "has no
    # header" (it has one) with no way out; it stays refused (a first row of counts reads alike)
    X, _ = _rows(rng)
    rows = tmp_path / "rows.csv"
    pd.DataFrame(X).to_csv(rows, index=False)
    line = _one_error_line(run("mixture", "--csv", rows, "--quiet"))
    assert "starts with the line 0, 1, 2: the column names pandas gives a table without names" in line
    assert "Write the file with column names, e.g. pd.DataFrame(X, columns=['x0', 'x1', ...])" in line
    pd.DataFrame(X, columns=["x0", "x1", "x2"]).to_csv(rows, index=False)  # the fix
    assert run("mixture", "--csv", rows, "--components", "1", "--quiet").exit_code == 0


def test_utf16_text_gets_its_own_advice(tmp_path, rng):
    X, y = _rows(rng)
    path = tmp_path / "unicode.csv"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y).to_csv(path, index=False, encoding="utf-16")
    line = _one_error_line(run("fit", "--csv", path, "--target", "label", "--model", "lda"))
    assert "is UTF-16 text" in line and "iconv -f utf-16 -t utf-8" in line


def test_labels_are_read_without_surrounding_spaces(tmp_path, rng):
    # "cat " and "cat" were two classes (leading spaces were stripped, trailing ones kept)
    X, y = _rows(rng)
    padded = y.astype(object)
    padded[:11] = [label + " " for label in padded[:11]]
    path, model = tmp_path / "trail.csv", tmp_path / "m.skops"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=padded).to_csv(path, index=False)
    assert run("fit", "--csv", path, "--target", "label", "--model", "lda", "--output", model).exit_code == 0
    assert list(load_model(model).classes_) == ["cat", "dog"]


def test_predict_keeps_columns_as_written(tmp_path, rng):
    # read as numbers, an id column with one empty cell became floats (9007199254740993 -> ...992.0)
    X, y = _rows(rng, n=40)
    train, model = tmp_path / "train.csv", tmp_path / "m.skops"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y).to_csv(train, index=False)
    assert run("fit", "--csv", train, "--target", "label", "--model", "lda", "--output", model).exit_code == 0
    ids = ["9007199254740993", "", "0042"] + [str(i) for i in range(3, 40)]
    rows = tmp_path / "rows.csv"
    rows.write_text("id,a,b,c\n" + "".join(f"{i},{r[0]},{r[1]},{r[2]}\n" for i, r in zip(ids, X)))
    result = run("predict", "--model", model, "--csv", rows, "--keep", "id")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "id,predicted,proba_cat,proba_dog"
    assert [line.split(",")[0] for line in lines[1:4]] == ["9007199254740993", "", "0042"]


def test_parquet_files_with_other_columns_are_named(tmp_path, rng):
    # a column missing from a later file failed in a later pass ("internal error: KeyError"), an
    # extra one was dropped silently; columns in another order are read by name
    X, y = _rows(rng, n=100)
    frame = pd.DataFrame(X, columns=["x1", "x2", "x3"]).assign(label=y)
    for name, later in (("lacking", frame.iloc[50:].drop(columns="x3")), ("adding", frame.iloc[50:].assign(x4=1.0)),
                        ("reordered", frame.iloc[50:][["x2", "x1", "x3", "label"]])):
        folder = tmp_path / name
        folder.mkdir()
        frame.iloc[:50].to_parquet(folder / "p0.parquet")
        later.to_parquet(folder / "p1.parquet")
        result = run("fit", "--parquet", folder, "--target", "label", "--model", "qda", "--quiet")
        if name == "reordered":
            assert result.exit_code == 0, result.output
        else:
            line = _one_error_line(result)
            assert "has other columns than" in line and ("it lacks 'x3'" if name == "lacking" else "it adds 'x4'") in line



def test_parquet_files_with_a_column_of_other_type_are_named(tmp_path, rng):
    # a later file with text in a column of numbers failed at compute with only "could not convert
    # string to float: 'oops'", naming neither the column nor the file
    X, y = _rows(rng, n=100)
    frame = pd.DataFrame(X, columns=["x1", "x2", "x3"]).assign(label=y)
    frame.iloc[:50].to_parquet(tmp_path / "p0.parquet")
    frame.iloc[50:].astype({"x2": str}).assign(x2=lambda f: f["x2"].where(f.index != 60, "oops")).to_parquet(
        tmp_path / "p1.parquet")
    line = _one_error_line(run("fit", "--parquet", tmp_path, "--target", "label", "--model", "qda", "--quiet"))
    assert "p1.parquet" in line and "'x2' (text there, numbers in the first)" in line
    # a column with no value in a file (null) is of any type: read
    frame.iloc[50:].assign(x3=None).to_parquet(tmp_path / "p1.parquet")
    assert run("fit", "--parquet", tmp_path, "--target", "label", "--model", "qda", "--quiet").exit_code == 0

def test_targets_that_cannot_be_split_and_tables_without_features_say_why(tmp_path, rng):
    X, y = _rows(rng)
    path = tmp_path / "t.csv"
    table = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    table.to_csv(path, index=False)
    line = _one_error_line(run("fit", "--csv", path, "--target", "b", "--drop", "label", "--model", "lda"))
    assert "has 60 distinct values in 60 rows" in line and "it looks continuous" in line  # listed all 60 before
    table.loc[0, "label"] = "bird"
    table.to_csv(path, index=False)
    line = _one_error_line(run("fit", "--csv", path, "--target", "label", "--model", "lda"))
    assert "has 1 class(es) of one row ('bird')" in line
    line = _one_error_line(run("fit", "--csv", path, "--target", "label", "--model", "lda", "--drop", "a,b,c"))
    assert "no feature column is left beside the target 'label'" in line  # "at least one array or dtype"


def test_a_pgf_plot_without_latex_is_refused_before_the_fit(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)
    line = _one_error_line(run("fit", "--dataset", "iris-2f", "--model", "lda", "--plot", tmp_path / "r.pgf"))
    assert "a .pgf figure needs LaTeX" in line
    assert list(tmp_path.iterdir()) == []


def test_a_wide_tables_columns_are_listed_shortly(tmp_path, rng):
    # the message listed all 1,001 names (about 6 KB on one line)
    path = tmp_path / "wide.csv"
    pd.DataFrame(rng.normal(size=(5, 1001)), columns=[f"f{j}" for j in range(1001)]).to_csv(path, index=False)
    line = _one_error_line(run("fit", "--csv", path, "--target", "label", "--model", "lda"))
    assert "it has: f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, ... (1,001 columns)." in line
    assert len(line) < 200


def test_trailing_empty_columns_of_a_spreadsheet_export_are_left_out(tmp_path, rng):
    # rows ending in ",," read as columns 'Unnamed: 4', 'Unnamed: 5' with no value, which were refused
    X, y = _rows(rng)
    path, plain = tmp_path / "excel.csv", tmp_path / "plain.csv"
    lines = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y).to_csv(index=False).splitlines()
    path.write_text("".join(line + ",,\n" for line in lines))
    plain.write_text("".join(line + "\n" for line in lines))
    result, expected = (run("fit", "--csv", p, "--target", "label", "--model", "lda") for p in (path, plain))
    assert result.exit_code == 0, result.output
    def scores(output):  # the rows of the tables, but the time (the file's name wraps with its path)
        return [line for line in output.splitlines() if line.startswith("│") and "fit time" not in line]

    assert len(scores(result.output)) == 4 and scores(result.output) == scores(expected.output)  # the 4 scores


@pytest.mark.parametrize("cells, advice", [
    (lambda v: f"{abs(v) * 10:.1f} kg", "numbers with a unit: write the numbers without it"),
    (lambda v: f"{abs(v) * 10:.0f}%", "percentages: write the numbers without the % sign"),
    (lambda v: "2020-01-0" + str(int(abs(v) * 3) % 9 + 1), "dates: give a number derived from them"),
])
def test_numbers_written_with_units_percent_signs_or_as_dates_get_their_own_advice(cells, advice, tmp_path, rng):
    # one-hot encoding was suggested for "12 kg", "45%" and dates alike
    X, y = _rows(rng)
    path = tmp_path / "t.csv"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(w=[cells(v) for v in X[:, 1]], label=y).to_csv(path, index=False)
    line = _one_error_line(run("fit", "--csv", path, "--target", "label", "--model", "lda"))
    assert f"non-numeric features column(s) 'w': their values look like {advice}" in line


def test_predict_on_text_in_a_models_feature_says_the_model_learnt_numbers(tmp_path, rng):
    X, y = _rows(rng)
    train, rows, model = tmp_path / "train.csv", tmp_path / "rows.csv", tmp_path / "m.skops"
    table = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    table.to_csv(train, index=False)
    table.assign(a="x").to_csv(rows, index=False)
    assert run("fit", "--csv", train, "--target", "label", "--model", "lda", "--output", model).exit_code == 0
    line = _one_error_line(run("predict", "--model", model, "--csv", rows))
    assert "'a': the model learnt them as numbers: give the rows as the training table had them." in line


@pytest.mark.parametrize("command", ["predict", "explain"])
def test_a_model_without_feature_names_says_how_to_set_text_columns_aside(tmp_path, rng, command):
    """A model saved from Python after a fit on an array takes every column in order; a CSV of its
    features and a label was refused as "non-numeric features column(s) 'label': the model learnt
    them as numbers", which it never saw. The message says what the model takes and the fix."""
    from discrim.prototype import PrototypeClassifier

    X, y = _rows(rng)
    rows, model = tmp_path / "rows.csv", tmp_path / "m.skops"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y).to_csv(rows, index=False)
    save_model(PrototypeClassifier(n_batches=1, random_state=0).fit(X, y), model)
    args = ["--row", "0"] if command == "explain" else []
    line = _one_error_line(run(command, "--model", model, "--csv", rows, *args))
    assert ("the model has no feature names (it was fitted on an array): it takes every column as a feature, in "
            "training order, and column(s) 'label' are text beside its 3 numeric ones: ") in line
    assert ("--keep label" if command == "predict" else "--target sets aside") in line
    fixed = ["--keep", "label"] if command == "predict" else ["--target", "label"]
    assert run(command, "--model", model, "--csv", rows, *args, *fixed).exit_code == 0


def test_an_export_named_like_another_format_is_refused(tmp_path):
    # it wrote CSV text into x.parquet, which --parquet then failed to read
    result = run("datasets", "--export", "iris", "--output", tmp_path / "x.parquet")
    assert result.exit_code == 2 and "writes CSV text there, not '.parquet'; end the file name in .csv" in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command, option, name, written", [
    ("predict", "--output", "p.parquet", "CSV text"),
    ("predict-lazy", "--output", "p.csv", "a folder of Parquet files"),
    ("mixture", "--impute", "completed.parquet", "CSV text"),
])
def test_an_output_named_like_another_format_is_refused(tmp_path, rng, command, option, name, written):
    # predict wrote CSV text into p.parquet (and a Parquet folder named p.csv), mixture --impute
    # CSV text into completed.parquet: a reader going by the name then failed on them
    X, y = _rows(rng)
    train, model = tmp_path / "train.csv", tmp_path / "m.skops"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y).to_csv(train, index=False)
    assert run("fit", "--csv", train, "--target", "label", "--model", "lda", "--output", model).exit_code == 0
    if command == "predict":
        args = ["predict", "--model", model, "--csv", train]
    elif command == "predict-lazy":
        pytest.importorskip("dask.dataframe")
        pd.read_csv(train).to_parquet(tmp_path / "rows.parquet")
        args = ["predict", "--model", model, "--parquet", tmp_path / "rows.parquet"]
    else:
        args = ["mixture", "--csv", train, "--columns", "a,b", "--quiet"]
    before = sorted(tmp_path.iterdir())
    result = run(*args, option, tmp_path / name)
    assert result.exit_code == 2, result.output
    assert f"{option}: this command writes {written} there, not '{Path(name).suffix}'" in result.output
    assert sorted(tmp_path.iterdir()) == before


def test_predict_notes_a_feature_that_no_row_gives(tmp_path, rng):
    X, y = _rows(rng)
    train, rows, model = tmp_path / "train.csv", tmp_path / "rows.csv", tmp_path / "m.skops"
    table = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    table.to_csv(train, index=False)
    table.assign(b=np.nan).to_csv(rows, index=False)
    assert run("fit", "--csv", train, "--target", "label", "--model", "lda", "--output", model).exit_code == 0
    result = CliRunner().invoke(cli, ["predict", "--model", str(model), "--csv", str(rows), "--output",
                                      str(tmp_path / "p.csv")])
    assert result.exit_code == 0
    assert "note: feature(s) 'b' are empty in every row: the predictions use the other features" in result.output


def test_a_column_whose_name_holds_a_comma_can_be_named(tmp_path, rng):
    # "--drop 'naive, col'" split into 'naive' and 'col', neither of which the table had
    X, y = _rows(rng)
    path, model = tmp_path / "t.csv", tmp_path / "m.skops"
    pd.DataFrame(X, columns=["a", "b", "naive, col"]).assign(label=y).to_csv(path, index=False)
    result = run("fit", "--csv", path, "--target", "label", "--model", "lda", "--drop", "naive, col", "--output", model)
    assert result.exit_code == 0, result.output
    assert list(load_model(model).feature_names_in_) == ["a", "b"]
    kept = run("predict", "--model", model, "--csv", path, "--keep", "naive, col", "--keep", "label")
    assert kept.exit_code == 0 and kept.output.startswith('"naive, col",label,predicted,')


@pytest.mark.parametrize("model, cells, extra", [
    ("lda", "", []),            # empty cells: lda learns from unlabelled rows, but needs some labelled
    ("proset", "", []),         # it said "drop those rows first", which leaves none
    ("lda", "-1", ["--param", "unlabeled=-1"]),
])
def test_fit_refuses_a_target_without_any_label(tmp_path, rng, model, cells, extra):
    # lda failed inside scikit-learn's split: "With n_samples=0, test_size=0.3 ... Adjust any of
    # the aforementioned parameters", which names no option of the command
    X, _ = _rows(rng)
    csv = tmp_path / "rows.csv"
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=cells).to_csv(csv, index=False)
    one_line_error(run("fit", "--csv", csv, "--target", "label", "--model", model, *extra),
                   "target column 'label' has no label in any of its 60 rows", "--target")


@pytest.mark.parametrize("source", [["--dataset", "wine"], ["--csv", "wine.csv", "--target", "target"]])
@pytest.mark.parametrize("command, test_size", [("fit", "0.99"), ("fit", "0.001"), ("tune", "0.001")])
def test_a_test_size_that_leaves_a_part_without_every_class_names_the_option(tmp_path, source, command, test_size):
    # scikit-learn's "The train_size = 1 should be greater or equal to the number of classes = 3"
    # came alone, naming neither --test-size nor what to give
    if "--csv" in source:
        source = ["--csv", _export("wine", tmp_path), "--target", "target"]
    extra = ["--model", "lda"] if command == "fit" else ["--quiet"]
    one_line_error(run(command, *source, *extra, "--test-size", test_size),
                   f"--test-size {test_size}: cannot split", "number of classes = 3",
                   "leaves each part at least one row of every class")


@pytest.mark.parametrize("seed", ["-5", str(2**32)])
@pytest.mark.parametrize("command", [["datasets", "--export", "checker", "--output", "checker.csv"],
                                     ["fit", "--dataset", "iris-2f", "--model", "lda"],
                                     ["tune", "--dataset", "iris-2f", "--quiet"]])
def test_a_seed_out_of_range_is_refused_as_the_option(tmp_path, monkeypatch, command, seed):
    # fit and tune blamed --test-size for scikit-learn's refusal of the split's random_state, and
    # datasets named random_state, a Python parameter: the seed is checked as the option now
    monkeypatch.chdir(tmp_path)
    result = run(*command, "--random-state", seed)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '--random-state': {seed} is not in the range 0<=x<=4294967295" in result.output
    assert "--test-size" not in result.output and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["fit", "--target", "label", "--model", "lda"],
                                     ["mixture", "--columns", "a,b", "--quiet"]])
def test_a_column_of_vanishing_values_is_refused_not_called_constant(tmp_path, rng, command):
    # wine's alcohol in units of 1e-200 varies, but its squares are 0 in float64: LDA refused it as
    # "constant within every class" and a mixture warned it "constant ... Leave them out of X"
    X, y = _rows(rng)
    csv = tmp_path / "rows.csv"
    pd.DataFrame(X * [1e-200, 1.0, 1.0], columns=["a", "b", "c"]).assign(label=y).to_csv(csv, index=False)
    line = one_line_error(run(command[0], "--csv", csv, *command[1:]), "column(s) 'a' hold only values within "
                          "+-1e-102", "change their units (e.g. multiply by a power of ten) first.")
    assert "constant" not in line


@pytest.mark.parametrize("command", ["predict", "explain"])
def test_a_row_without_active_features_is_named_by_column(tmp_path, rng, command):
    # a prototype set's warning listed "the model's active features (0, 1, 2)", positions in the
    # scaled array the pipeline hands it, where the user has column names
    from discrim.cli._warnings import show_warning

    X, y = _rows(rng)
    train, rows, model = tmp_path / "train.csv", tmp_path / "rows.csv", tmp_path / "m.skops"
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y)
    frame.to_csv(train, index=False)
    frame.assign(a=np.nan, b=np.nan, c=np.nan).head(3).to_csv(rows, index=False)
    assert run("fit", "--csv", train, "--target", "label", "--model", "proset", "--output", model,
               "--quiet").exit_code == 0
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show_warning
        result = run(command, "--model", model, "--csv", rows, *(["--row", "0"] if command == "explain" else []))
    assert result.exit_code == 0, result.output
    assert re.search(r"observe none of the model's active features \(\['[abc]'(, '[abc]')*\]\)", result.output), \
        result.output


@pytest.mark.parametrize("command", [["datasets", "--export", "iris", "--output"],
                                     ["fit", "--dataset", "iris", "--model", "lda", "--output"]])
def test_an_output_ending_in_a_slash_is_a_folder_not_a_file(tmp_path, monkeypatch, command):
    # "--output models/" wrote a file named models: the slash said a folder was meant
    monkeypatch.chdir(tmp_path)
    one_line_error(run(*command, "models/"), "--output: 'models/' names a folder (it ends in a slash); give a file name.")
    assert list(tmp_path.iterdir()) == []


def test_a_comment_line_above_the_header_is_named(tmp_path, rng):
    # "# exported 2026-11-27" above the header was answered with thousands separators, decimal
    # commas and row names, none of which the file had
    X, y = _rows(rng)
    csv = tmp_path / "rows.csv"
    csv.write_text("# exported 2026-11-27\n" + pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=y).to_csv(index=False))
    line = one_line_error(run("fit", "--csv", csv, "--target", "label", "--model", "lda"),
                          "starts with '# exported 2026-11-27', a line of one field above rows of several",
                          "title or comment above the header (remove it")
    assert "row names" not in line


def test_predict_output_dash_is_standard_output(tmp_path, monkeypatch):
    """'--output -' wrote a file named '-' where the convention (and the help) is standard output."""
    monkeypatch.chdir(tmp_path)
    model, data = tmp_path / "m.skops", tmp_path / "rows.csv"
    assert run("fit", "--dataset", "iris-2f", "--model", "lda", "--output", model, "--quiet").exit_code == 0
    load_benchmark("iris-2f", as_frame=True, scale=False)[1].to_csv(data, index=False)
    dashed = run("predict", "--model", model, "--csv", data, "--output", "-")
    assert dashed.exit_code == 0, dashed.output
    assert dashed.output == run("predict", "--model", model, "--csv", data).output
    assert dashed.output.startswith("predicted,proba_") and sorted(p.name for p in tmp_path.iterdir()) == ["m.skops", "rows.csv"]


@pytest.mark.parametrize("command", [
    ["datasets", "--export", "iris", "--output"],
    ["fit", "--dataset", "iris", "--model", "lda", "--output"],
    ["fit", "--dataset", "iris-2f", "--model", "lda", "--plot"],
    ["mixture", "--csv", "{csv}", "--impute"],
    ["predict", "--model", "{model}", "--parquet", "{parquet}", "--output"],
], ids=["datasets", "fit-model", "fit-plot", "mixture-impute", "predict-parquet"])
def test_dash_is_refused_where_an_output_cannot_be_standard_output(tmp_path, monkeypatch, command):
    """'-' is standard output for predict's CSV only; elsewhere it wrote a file (or folder) named '-'."""
    monkeypatch.chdir(tmp_path)
    frame = load_benchmark("iris-2f", as_frame=True, scale=False)[1]
    frame.to_csv("rows.csv", index=False)
    frame.to_parquet("rows.parquet")
    assert run("fit", "--dataset", "iris-2f", "--model", "lda", "--output", "m.skops", "--quiet").exit_code == 0
    before = sorted(p.name for p in tmp_path.iterdir())
    args = [a.format(csv="rows.csv", model="m.skops", parquet="rows.parquet") for a in command]
    one_line_error(run(*args, "-"), "'-' (standard output) is taken by `discrim predict --csv ... --output -` only")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_column_name_with_a_line_break_keeps_the_message_on_one_line(tmp_path, rng):
    # the list of the table's columns showed the name as written, breaking the one-line error
    X, y = _rows(rng)
    csv = tmp_path / "rows.csv"
    pd.DataFrame(X, columns=["sepal\nlength", "b", "c"]).assign(label=y).to_csv(csv, index=False)
    one_line_error(run("fit", "--csv", csv, "--target", "nope", "--model", "lda"),
                   "target column 'nope' not in the CSV; it has: 'sepal\\nlength', b, c, label.")
