import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from discrim.cli.main import cli
from discrim.datasets import load_benchmark


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_datasets_and_models_are_listed():
    out = run("datasets").output
    assert "iris-2f" in out and "xor-6+6f" in out
    out = run("models").output
    assert "lda" in out and "proset" in out


@pytest.fixture
def iris_csv(tmp_path):
    X_train, _, y_train, _ = load_benchmark("iris", as_frame=True)
    df = X_train.assign(species=y_train)
    path = tmp_path / "iris.csv"
    df.to_csv(path, index=False)
    return path


def test_fit_on_a_dataset_prints_scores_saves_model_and_plot(tmp_path):
    model_path, plot_path = tmp_path / "m.skops", tmp_path / "regions.png"
    result = run("fit", "--dataset", "iris-2f", "--model", "lda", "--output", str(model_path), "--plot", str(plot_path))
    assert result.exit_code == 0, result.output
    for word in ("log-loss", "accuracy", "balanced accuracy", "ROC-AUC", "fit time"):
        assert word in result.output
    assert model_path.stat().st_size > 0
    assert plot_path.read_bytes()[:4] == b"\x89PNG"


def test_fit_on_csv_then_predict_round_trip(tmp_path, iris_csv):
    model_path, out_path = tmp_path / "m.skops", tmp_path / "pred.csv"
    result = run("fit", "--csv", str(iris_csv), "--target", "species", "--model", "qda", "--output", str(model_path))
    assert result.exit_code == 0, result.output
    result = run("predict", "--model", str(model_path), "--csv", str(iris_csv), "--output", str(out_path))
    assert result.exit_code == 0, result.output
    pred = pd.read_csv(out_path)
    assert list(pred.columns) == ["predicted", "proba_setosa", "proba_versicolor", "proba_virginica"]
    np.testing.assert_allclose(pred.filter(like="proba_").sum(axis=1), 1.0)
    truth = pd.read_csv(iris_csv)["species"]
    assert (pred["predicted"] == truth).mean() > 0.9


def test_predict_keeps_the_columns_it_is_asked_to(tmp_path, iris_csv):
    # a row identifier (not a feature) and a feature, copied beside the predictions
    model_path = tmp_path / "m.skops"
    assert run("fit", "--csv", str(iris_csv), "--target", "species", "--model", "lda",
               "--output", str(model_path)).exit_code == 0
    table = pd.read_csv(iris_csv)
    table.insert(0, "flower_id", np.arange(1000, 1000 + len(table)))
    with_id = tmp_path / "with_id.csv"
    table.to_csv(with_id, index=False)
    plain = pd.read_csv(_written(tmp_path, model_path, iris_csv))
    result = run("predict", "--model", str(model_path), "--csv", str(with_id), "--output", str(tmp_path / "kept.csv"),
                 "--keep", "flower_id", "--keep", "petal length (cm)")
    assert result.exit_code == 0, result.output
    kept = pd.read_csv(tmp_path / "kept.csv")
    assert list(kept.columns) == ["flower_id", "petal length (cm)", *plain.columns]
    np.testing.assert_array_equal(kept["flower_id"], table["flower_id"])
    np.testing.assert_array_equal(kept["petal length (cm)"], table["petal length (cm)"])
    pd.testing.assert_frame_equal(kept[list(plain.columns)], plain)
    for keep, message in (("colour", "--keep column(s) 'colour' not in the input"),
                          ("species", None)):
        result = CliRunner().invoke(cli, ["predict", "--model", str(model_path), "--csv", str(with_id), "--keep", keep])
        if message is None:  # the target column is not a feature: it may be kept
            assert result.exit_code == 0 and result.output.startswith("species,predicted,")
        else:
            assert result.exit_code != 0 and message in result.output
    clash = tmp_path / "clash.csv"
    table.rename(columns={"flower_id": "proba_setosa"}).to_csv(clash, index=False)
    result = CliRunner().invoke(cli, ["predict", "--model", str(model_path), "--csv", str(clash), "--keep",
                                      "proba_setosa"])
    assert result.exit_code != 0 and "have the names of prediction columns" in result.output


def _written(tmp_path, model_path, csv):
    out = tmp_path / "plain.csv"
    assert run("predict", "--model", str(model_path), "--csv", str(csv), "--output", str(out)).exit_code == 0
    return out


@pytest.mark.parametrize(
    "args, message",
    [
        (["fit", "--dataset", "nope", "--model", "lda"], "unknown data set 'nope'"),
        (["fit", "--dataset", "iris", "--model", "nope"], "unknown model 'nope'"),
        (["fit", "--dataset", "iris", "--model", "lda", "--plot", "x.png"], "two-feature"),
        (["fit", "--csv", "absent.csv", "--target", "y", "--model", "lda"], "does not exist"),
        (["fit", "--dataset", "iris", "--model", "lda", "--output", "/no/such/dir/m.skops"], "does not exist"),
        (["predict", "--model", "absent.skops", "--csv", "absent.csv"], "does not exist"),
    ],
)
def test_bad_input_gives_one_line_error_and_no_output(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code != 0
    assert message in result.output
    assert list(tmp_path.iterdir()) == []


def test_non_numeric_columns_and_missing_target(tmp_path, iris_csv):
    df = pd.read_csv(iris_csv).assign(colour="red")
    bad = tmp_path / "bad.csv"
    df.to_csv(bad, index=False)
    result = run("fit", "--csv", str(bad), "--target", "species", "--model", "lda")
    assert result.exit_code != 0 and "non-numeric" in result.output and "colour" in result.output
    result = run("fit", "--csv", str(iris_csv), "--target", "kind", "--model", "lda")
    assert result.exit_code != 0 and "target column 'kind'" in result.output


def test_corrupted_model_file_is_rejected(tmp_path, iris_csv):
    junk = tmp_path / "junk.skops"
    junk.write_text("garbage")
    out_path = tmp_path / "pred.csv"
    result = run("predict", "--model", str(junk), "--csv", str(iris_csv), "--output", str(out_path))
    assert result.exit_code != 0 and "not a readable skops model file" in result.output
    assert not out_path.exists()


def test_warnings_show_as_one_paragraph_with_the_command_line_spelling(tmp_path, capsys):
    """The entry point shows a model's warning without scikit-learn's file, line and source line,
    and recalls that parameters named in its advice are set with --param."""
    import warnings

    from sklearn.datasets import load_wine

    from discrim.cli.main import main

    frame = load_wine(as_frame=True).frame
    features = frame.drop(columns="target")
    features = features.mask(np.random.default_rng(0).random(features.shape) < 0.2)
    path = tmp_path / "wine_nan.csv"
    features.assign(target=frame["target"]).to_csv(path, index=False)
    with warnings.catch_warnings():  # main installs its own display of warnings: restored after
        warnings.simplefilter("default")
        with pytest.raises(SystemExit) as ended:
            main(["fit", "--csv", str(path), "--target", "target", "--model", "qda", "--param", "em_max_iter=20",
                  "--quiet"])
    assert ended.value.code == 0
    err = capsys.readouterr().err
    assert "ConvergenceWarning: QuadraticDiscriminant: the EM" in err
    assert "(On the command line a model parameter is set with --param NAME=VALUE.)" in err
    assert "base.py" not in err and "return fit_method" not in err


def test_true_false_columns_are_features_0_1(tmp_path, iris_csv):
    """A CSV column of True/False (any case, empty cells missing) is a feature with values 0/1.

    It fits and predicts exactly as the same column written as 1/0 does; it used to be refused as
    non-numeric, although Parquet's booleans were features and it is the commonest flag encoding.
    """
    df = pd.read_csv(iris_csv)
    flag = df["petal length (cm)"] > df["petal length (cm)"].median()
    empty = np.arange(len(df)) % 9 == 0
    words = pd.Series(np.where(flag, "True", "false"), dtype=object).mask(empty)
    words[1::7] = words[1::7].str.upper()
    numbers = pd.Series(flag.astype(float)).mask(empty)
    paths = {}
    for name, column in (("words", words), ("numbers", numbers)):
        paths[name] = tmp_path / f"{name}.csv"
        df.assign(flag=column).to_csv(paths[name], index=False)
    predictions = []
    for name, path in paths.items():
        model, out = tmp_path / f"{name}.skops", tmp_path / f"{name}_pred.csv"
        result = run("fit", "--csv", str(path), "--target", "species", "--model", "lda", "--param", "reg_param=0.1",
                     "--quiet", "--output", str(model))
        assert result.exit_code == 0, result.output
        assert run("predict", "--model", str(model), "--csv", str(path), "--output", str(out)).exit_code == 0
        predictions.append(pd.read_csv(out))
    pd.testing.assert_frame_equal(predictions[0], predictions[1])


def test_a_warning_in_a_command_without_param_does_not_offer_it(capsys):
    """discrim mixture has no --param: its warnings offered "--param NAME=VALUE", an option it refuses."""
    import click

    from discrim.cli._warnings import show_warning

    @click.command()
    def bare():
        show_warning(UserWarning("Raise reg_covar (for example reg_covar=1e-3)."), UserWarning, "f.py", 1)

    @click.command()
    @click.option("--param", multiple=True)
    def tunable(param):
        show_warning(UserWarning("Raise reg_covar (for example reg_covar=1e-3)."), UserWarning, "f.py", 1)

    for command, want, not_want in ((bare, "set it in Python", "--param"), (tunable, "--param NAME=VALUE", "in Python")):
        with pytest.raises(SystemExit):
            command.main([], standalone_mode=True)
        err = capsys.readouterr().err
        assert want in err and not_want not in err


@pytest.mark.parametrize("command", [["fit", "--dataset", "iris-2f", "--model", "lda", "--output"],
                                     ["datasets", "--export", "iris", "--output"]])
def test_an_output_folder_where_no_file_can_be_created_is_refused_first(command, monkeypatch, tmp_path):
    """Permission bits pass /proc (or a read-only mount) for root: the write failed after the fit,
    naming the temporary file ('/proc/.x.csv.dqhfbi5i.csv'). A file is now created there first."""
    import tempfile

    from click.testing import CliRunner

    from discrim.cli.main import cli

    def refuse(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    result = CliRunner().invoke(cli, [*command, str(tmp_path / "out.csv")])
    assert result.exit_code == 1
    assert f"--output: no file can be written in folder {str(tmp_path)!r} (Read-only file system)" in result.output
    assert "accuracy" not in result.output and not list(tmp_path.iterdir())


@pytest.mark.parametrize("cell", ["-", "abc", "n/a "])
def test_a_stray_text_cell_in_a_column_of_numbers_is_named_with_its_row(cell, tmp_path):
    """A '-' for a missing value, a blank space or a typo made the whole column "non-numeric ... encode
    them as numbers (e.g. one-hot)": the wrong fix for a column of numbers."""
    from click.testing import CliRunner

    from discrim.cli.main import cli

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=40).round(3).astype(str), "b": rng.normal(size=40),
                          "y": np.repeat(["u", "v"], 20)})
    frame.loc[7, "a"] = cell
    path = tmp_path / "stray.csv"
    frame.to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["fit", "--csv", str(path), "--target", "y", "--model", "lda", "--quiet"])
    assert result.exit_code == 1
    assert f"column 'a' of the features holds numbers but also {cell!r} (data row 7" in result.output
    assert "one-hot" not in result.output


def test_drop_leaves_columns_out_and_an_identifier_column_is_noted(tmp_path):
    """fit and tune took every column but the target as a feature, with no way to leave one out:
    an integer row id was used silently (accuracy 1.0 on a sorted file), and the refusal of a text
    column said "leave them out" without an option to do it."""
    from click.testing import CliRunner

    from discrim.cli.main import cli
    from discrim.persistence import load_model

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": np.arange(60), "a": rng.normal(size=60), "b": rng.normal(size=60),
                          "site": np.tile(["north", "south"], 30), "y": np.repeat(["u", "v"], 30)})
    frame["a"] += (frame["y"] == "v") * 2
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)

    def fit(*args):
        return CliRunner().invoke(cli, ["fit", "--csv", str(path), "--target", "y", "--model", "lda", "--quiet", *args])

    result = fit()
    assert result.exit_code == 1 and "'site'" in result.output and "--drop" in result.output
    result = fit("--drop", "site")
    assert result.exit_code == 0, result.output
    assert "note: column(s) 'id' hold a different whole number on every row" in " ".join(result.output.split())
    result = fit("--drop", "id,site", "--output", str(tmp_path / "m.skops"))
    assert result.exit_code == 0 and "note:" not in result.output
    assert list(load_model(tmp_path / "m.skops").feature_names_in_) == ["a", "b"]
    # the same model as from the file without those columns
    frame.drop(columns=["id", "site"]).to_csv(tmp_path / "ab.csv", index=False)
    assert CliRunner().invoke(cli, ["fit", "--csv", str(tmp_path / "ab.csv"), "--target", "y", "--model", "lda",
                                    "--quiet", "--output", str(tmp_path / "ab.skops")]).exit_code == 0
    X = frame[["a", "b"]]
    np.testing.assert_allclose(load_model(tmp_path / "m.skops").predict_proba(X),
                               load_model(tmp_path / "ab.skops").predict_proba(X))
    for args, message in ((("--drop", "nope"), "--drop column(s) 'nope' not in the table"),
                          (("--drop", "y,site"), "--drop names the target column 'y'")):
        result = fit(*args)
        assert result.exit_code != 0 and message in result.output


def test_files_of_other_shapes_are_read_or_named(tmp_path):
    """A header and cells padded after each comma ("sl, sw, species") missed --target species and
    read ', ,' as the text ' '; tab- or semicolon-separated files, a Latin-1 export and a Parquet
    file given as --csv got pandas's or the codec's words."""
    from click.testing import CliRunner

    from discrim.cli.main import cli

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=40).round(3), "b": rng.normal(size=40).round(3),
                          "species": np.repeat(["setosa", "versicolor"], 20)})
    lines = ["a, b, species"] + [f"{'' if i == 3 else a}, {b}, {y}" for i, (a, b, y) in enumerate(frame.to_numpy())]
    padded = tmp_path / "padded.csv"
    padded.write_text("\n".join(lines) + "\n")

    def fit(path):
        return CliRunner().invoke(cli, ["fit", "--csv", str(path), "--target", "species", "--model", "lda", "--quiet"])

    result = fit(padded)
    assert result.exit_code == 0, result.output
    for name, text, message in (
            ("tabs.tsv", frame.to_csv(sep="\t", index=False), "separated by tabs"),
            ("semicolons.csv", frame.to_csv(sep=";", index=False, decimal=","), "separated by semicolons"),
    ):
        (tmp_path / name).write_text(text)
        result = fit(tmp_path / name)
        assert result.exit_code == 1 and message in result.output, result.output
    (tmp_path / "latin1.csv").write_bytes(frame.assign(species="caf\xe9").to_csv(index=False).encode("latin-1"))
    result = fit(tmp_path / "latin1.csv")
    assert result.exit_code == 1 and "is not UTF-8 text" in result.output
    pytest.importorskip("pyarrow")
    frame.to_parquet(tmp_path / "rows.parquet")
    result = fit(tmp_path / "rows.parquet")
    assert result.exit_code == 1 and "is a Parquet file, not a CSV file: give it with --parquet" in result.output


def test_options_that_would_be_ignored_are_refused(tmp_path):
    """fit --dataset with --target, and mixture --plot-kind without --plot, ran as if the option
    were not there."""
    from click.testing import CliRunner

    from discrim.cli.main import cli

    path = tmp_path / "rows.csv"
    pd.DataFrame({"a": np.arange(30.0), "b": np.arange(30.0) ** 0.5}).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["mixture", "--csv", str(path), "--plot-kind", "density", "--quiet"])
    assert result.exit_code == 2 and "--plot-kind density chooses what --plot draws: give --plot FILE too" in \
        result.output
    result = CliRunner().invoke(cli, ["fit", "--dataset", "iris", "--target", "species", "--model", "lda"])
    assert result.exit_code == 2 and "--target names the label column of --csv" in result.output


def test_the_prototype_set_answers_to_its_class_name_too():
    # --model prototype (the class's word, which a proset user typed) was an unknown model
    from discrim._registry import make_model
    from discrim.prototype import PrototypeClassifier

    result = CliRunner().invoke(cli, ["fit", "--dataset", "iris-2f", "--model", "prototype", "--param", "n_batches=1",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    assert type(make_model("prototype")) is PrototypeClassifier
    result = CliRunner().invoke(cli, ["fit", "--dataset", "iris", "--model", "nope"])
    assert "choose one of: lda, qda, mda, proset, proset-cv (or prototype" in result.output


def test_advice_names_a_commands_own_options_for_the_parameters_it_names():
    # discrim mixture has --components, --max-iter, --prior...: its advice said it had no option
    from discrim.cli._mixture import mixture
    from discrim.cli._warnings import command_line_advice

    text = "n_components=2 exceeds n_samples=1: a mixture needs at least one row per component. Reduce n_components."
    assert command_line_advice(text, mixture).endswith("(On the command line: --components.)")
    assert command_line_advice("raise max_iter=100 or tol=0.001", mixture).endswith(
        "(On the command line: --max-iter, --tol.)")
    assert command_line_advice("set reg_covar=1e-3", mixture).endswith(
        "(This command has no option for that parameter: set it in Python, on the estimator.)")
    assert command_line_advice("set reg_param=0.1", cli.commands["fit"]).endswith(
        "(On the command line a model parameter is set with --param NAME=VALUE.)")


def test_advice_leaves_out_the_settings_a_message_reports():
    # a mixture's collapse said "EM stopped at tol=0.001 ... Raise reg_covar, set a prior, or use
    # fewer components. (On the command line: --tol.)", and its constant feature "... is
    # reg_covar=1e-06 alone. Leave them out of X. (This command has no option for that
    # parameter ...)": the value in force was taken for the advice
    from discrim.cli._mixture import mixture
    from discrim.cli._warnings import command_line_advice

    collapse = ("EM stopped at tol=0.001, but its fit is degenerate. Component(s) [0] are collapsing. Raise reg_covar, "
                "set a prior, or use fewer components.")
    assert command_line_advice(collapse, mixture) == collapse + " (On the command line: --prior.)"
    constant = ("1 feature(s) of X (index 1) are constant: their variance is reg_covar=1e-06 alone. Leave them out "
                "of X.")
    assert command_line_advice(constant, mixture) == constant
    # advice that names the parameters bare keeps pointing at the options
    unconverged = ("EM did not converge in max_iter=100 iterations (|change| >= tol=0.001). Increase max_iter or tol, "
                   "or check the initialisation.")
    assert command_line_advice(unconverged, mixture).endswith("(On the command line: --max-iter, --tol.)")
    em = "did not converge in em_max_iter=20 iterations: not yet the maximum. Raise em_max_iter; reg_param helps."
    assert command_line_advice(em, cli.commands["fit"]).endswith(
        "(On the command line a model parameter is set with --param NAME=VALUE.)")


def test_fit_help_describes_target_and_test_size_for_lazy_tables_too():
    # --help said "--target: Target column of the CSV file" and a stratified hold-out, where
    # --parquet and --zarr need --target as well and hold out a random split
    text = " ".join(CliRunner().invoke(cli, ["fit", "--help"]).output.split())
    assert "--target TEXT Target column (the classes) of the --csv, --parquet or --zarr table." in text
    assert "(stratified; a random split of --parquet and --zarr tables)" in text
