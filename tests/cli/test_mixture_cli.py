"""Tests of the ``discrim mixture`` command through click's CliRunner."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from discrim.cli._mixture import mixture, parse_components
from discrim.cli.main import cli
from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def data_csv(tmp_path, rng):
    n = 120
    frame = pd.DataFrame(
        {
            "x": np.concatenate([rng.normal(-4, 1, n // 2), rng.normal(4, 1, n // 2)]),
            "y": np.concatenate([rng.normal(0, 1, n // 2), rng.normal(3, 0.5, n // 2)]),
            "z": rng.normal(size=n),
            "count": rng.poisson(3.0, n),
            "label": np.repeat(["p", "q"], n // 2),
        }
    )
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _run(args):
    return CliRunner().invoke(mixture, [str(a) for a in args])


def test_prints_parameters_trace_and_criteria(data_csv):
    result = _run(["--csv", data_csv, "--columns", "x", "--components", 2, "--random-state", 0])
    assert result.exit_code == 0, result.output
    out = result.output
    for text in ("Fitted components", "weight", "mean[x]", "Log-likelihood trace", "BIC", "AIC",
                 "converged"):
        assert text in out
    # The printed numbers are those of the same fit made through the library.
    X = pd.read_csv(data_csv)[["x"]].to_numpy()
    model = FiniteMixture(Gaussian(covariance_type="full"), n_components=2, random_state=0).fit(X)
    for value in (*np.ravel(model.weights_), *np.ravel(model.params_["mean"]), model.bic(X)):
        assert f"{value:.6g}"[:6] in out
    assert sorted(np.ravel(model.params_["mean"])) == pytest.approx([-4, 4], abs=0.6)
    trace = out[out.index("Log-likelihood trace"):]
    for i, bound in enumerate(model.lower_bounds_):
        assert f"{bound:.8g}" in trace
    assert "0 (start)" in trace


def test_registered_in_the_main_group(data_csv):
    result = CliRunner().invoke(cli, ["mixture", "--csv", str(data_csv), "--columns", "x,y"])
    assert result.exit_code == 0, result.output
    assert "covariance, component 1" in result.output


@pytest.mark.parametrize("args", [["--columns", "x,x"], ["--columns", "x", "--columns", "x"]])
def test_a_column_named_twice_is_refused_by_name(data_csv, args):
    # it reached pandas as a two-column frame: "internal error (AttributeError: 'DataFrame' object has no attribute 'dtype')"
    result = CliRunner().invoke(cli, ["mixture", "--csv", str(data_csv), *args])
    assert result.exit_code == 2
    assert "--columns names 'x' more than once" in result.output and "internal error" not in result.output


def test_a_column_whose_name_holds_a_comma_is_named_whole(tmp_path, rng):
    # --columns was split on commas before the header was read: "length, mm" became two unknown columns
    path = tmp_path / "commas.csv"
    pd.DataFrame({"length, mm": rng.normal(size=60), "b": rng.normal(size=60), "c": rng.normal(size=60)}).to_csv(
        path, index=False)
    result = _run(["--csv", path, "--columns", "length, mm", "--columns", "b", "--components", 1])
    assert result.exit_code == 0, result.output
    assert "mean[length, mm]" in result.output and "mean[b]" in result.output and "mean[c]" not in result.output
    listed = _run(["--csv", path, "--columns", "b,c", "--components", 1])
    assert listed.exit_code == 0 and "mean[c]" in listed.output


def test_default_columns_are_the_numeric_ones(data_csv):
    result = _run(["--csv", data_csv, "--family", "gaussian-diag", "--components", 1])
    assert result.exit_code == 0, result.output
    assert "3 column" not in result.output and "4 column(s): x, y, z, count" in result.output
    assert "mean (columns:" in result.output  # wide data: one row per feature


def test_a_table_of_text_categories_says_to_name_them_categorical(tmp_path):
    path = tmp_path / "colours.csv"
    pd.DataFrame({"colour": ["red", "blue", None, "red"], "size": ["S", "M", "L", "S"]}).to_csv(path, index=False)
    result = _run(["--csv", path, "--components", 2])
    assert result.exit_code == 1
    assert "no numeric column to fit: name its text columns with --categorical" in result.output
    result = _run(["--csv", path, "--columns", "colour", "--components", 2])
    assert result.exit_code == 1
    assert "non-numeric data column(s) 'colour': fit them as categories with --categorical colour" in result.output


def _mixed_table(tmp_path, rng, n=400):
    """Two groups that differ in a number, a colour and a size; some cells empty."""
    z = rng.integers(0, 2, n)
    colours, sizes = np.array(["blue", "green", "red"]), np.array(["L", "M", "S"])
    frame = pd.DataFrame({
        "colour": np.where(z == 0, colours[rng.choice(3, n, p=[0.1, 0.2, 0.7])],
                           colours[rng.choice(3, n, p=[0.7, 0.2, 0.1])]).astype(object),
        "height": rng.normal(3.0 * z, 1.0),
        "size": np.where(z == 0, sizes[rng.choice(3, n, p=[0.1, 0.3, 0.6])], sizes[rng.choice(3, n, p=[0.6, 0.3, 0.1])]),
        "region": "north",
    })
    frame.loc[rng.random(n) < 0.15, "colour"] = None
    frame.loc[rng.random(n) < 0.15, "height"] = np.nan
    path = tmp_path / "mixed.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_categorical_columns_beside_a_numeric_family_are_the_product_fit_in_python(tmp_path, rng):
    from discrim.distributions import Categorical, Product

    path, frame = _mixed_table(tmp_path, rng)
    out = tmp_path / "completed.csv"
    result = _run(["--csv", path, "--categorical", "colour,size", "--components", 2, "--quiet", "--impute", out])
    assert result.exit_code == 0, result.output
    # the same model through the library: categories in sorted order, the product of the families
    family = Product([("numeric", Gaussian(), [1]),
                      ("categorical", Categorical(categories=[["blue", "green", "red"], ["L", "M", "S"]]), [0, 2])])
    X = family.encode(frame[["colour", "height", "size"]].astype(object).where(frame.notna(), None).to_numpy())
    model = FiniteMixture(family, 2, random_state=0).fit(X)
    assert f"{model.bic(X):.8g}" in result.output
    assert "gaussian + categorical mixture with 2 component(s) on 3 column(s)" in result.output
    # the probabilities of each categorical column, labelled by its values
    for column, values in (("colour", ("blue", "green", "red")), ("size", ("L", "M", "S"))):
        table = result.output[result.output.index(f"categorical__probs of {column}"):]
        assert all(f" {v} " in table[:400] for v in values)
    for p in np.ravel(model.params_["categorical__probs"][:, :, :3]):
        assert f"{p:.6g}"[:6] in result.output
    # the completed table: categories written back as values, the observed cells unchanged
    completed = pd.read_csv(out)
    missing = frame["colour"].isna()
    assert set(completed["colour"]) <= {"blue", "green", "red"} and not completed.isna().any().any()
    np.testing.assert_array_equal(completed["colour"][~missing].to_numpy(object), frame["colour"][~missing].to_numpy(object))
    codes = model.impute(X)[:, 0]
    expected = np.array(["blue", "green", "red"], dtype=object)[codes[missing.to_numpy()].astype(int)]
    np.testing.assert_array_equal(completed["colour"][missing].to_numpy(), expected)


def test_categorical_columns_alone_and_their_usage_errors(tmp_path, rng):
    path, _ = _mixed_table(tmp_path, rng)
    result = _run(["--csv", path, "--columns", "colour,size", "--categorical", "colour", "--categorical", "size",
                   "--components", "1-2", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "categorical mixture with" in result.output and "probs of size" in result.output
    result = _run(["--csv", path])  # the text columns are left out, and the note says how to fit them
    assert result.exit_code == 0 and "1 column(s): height" in result.output
    assert "--categorical colour,size" in result.output
    for args, message in (
            (["--columns", "colour,size", "--categorical", "colour,size", "--family", "poisson"],
             "every fitted column is categorical: leave --family out"),
            (["--columns", "height", "--categorical", "colour"], "'colour' are not among --columns"),
            (["--categorical", "shade"], "--categorical column(s) 'shade' not in the CSV"),
            (["--categorical", "colour,region"], "--categorical column 'region' holds one value only ('north')"),
            (["--categorical", "colour,size", "--plot-kind", "density", "--plot", tmp_path / "p.png"],
             "with --categorical columns, --plot draws the overview")):
        result = _run(["--csv", path, *args])
        assert result.exit_code != 0 and message in result.output, result.output


@pytest.mark.parametrize("family", ["gaussian-tied", "gaussian-spherical"])
def test_gaussian_covariance_types(data_csv, family):
    result = _run(["--csv", data_csv, "--columns", "x", "--columns", "y", "--family", family])
    assert result.exit_code == 0, result.output
    assert "Log-likelihood trace" in result.output


def test_discrete_families(data_csv):
    result = _run(["--csv", data_csv, "--columns", "count", "--family", "poisson", "--components", 1])
    assert result.exit_code == 0, result.output
    assert "rate" in result.output
    result = _run(["--csv", data_csv, "--columns", "count", "--family", "binomial", "--n-trials", 20])
    assert result.exit_code == 0, result.output
    assert "prob" in result.output


def test_model_choice_over_families_and_counts(data_csv):
    result = _run(["--csv", data_csv, "--columns", "x", "--family", "gaussian", "--family", "gaussian-spherical",
                   "--components", "1-3", "--random-state", 0])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Model choice by BIC" in out
    table = out[: out.index("mixture with")]
    rows = [line for line in table.splitlines() if line.startswith("│ gaussian")]
    assert len(rows) == 6
    bics = [float(r.split("│")[5]) for r in rows]
    best = [r for r in rows if r.rstrip().endswith("* │")]
    assert len(best) == 1 and float(best[0].split("│")[5]) == min(bics)
    # Two well-separated groups: two components win, and the report goes on with that model.
    assert best[0].split("│")[2].strip() == "2"
    assert "with 2 component(s)" in out and "Log-likelihood trace" in out


@pytest.mark.parametrize("text, counts", [("3", [3]), ("1-4", [1, 2, 3, 4]), ("2,4,1-2", [1, 2, 4])])
def test_parse_components(text, counts):
    assert parse_components(text) == counts


@pytest.mark.parametrize("text", ["0", "3-1", "a", "1-", ""])
def test_bad_components_are_usage_errors(data_csv, text):
    result = _run(["--csv", data_csv, "--columns", "x", "--components", text])
    assert result.exit_code == 2
    assert "--components" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["--family", "binomial"],  # needs --n-trials
        ["--family", "poisson", "--n-trials", 5],
        ["--family", "poisson", "--n-categories", 3],
    ],
)
def test_family_options_are_checked(data_csv, args):
    result = _run(["--csv", data_csv, "--columns", "count", *args])
    assert result.exit_code == 2
    assert "--n-" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--columns", "nope"], "'nope' not in the CSV"),
        (["--columns", "label"], "non-numeric"),
        (["--columns", "x", "--family", "poisson"], "Error:"),
    ],
)
def test_errors_are_one_line_with_nonzero_exit(data_csv, args, message):
    result = _run(["--csv", data_csv, *args])
    assert result.exit_code == 1
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_missing_csv(tmp_path):
    result = _run(["--csv", tmp_path / "absent.csv"])
    assert result.exit_code != 0
    assert "does not exist" in result.output


@pytest.mark.parametrize("columns", ["x", "x,y", "x,y,z"])
def test_plot_writes_a_png(data_csv, tmp_path, columns):
    out = tmp_path / "fit.png"
    result = _run(["--csv", data_csv, "--columns", columns, "--plot", out])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "fit.png"]  # no temp files left


def test_model_choice_plot(data_csv, tmp_path):
    out = tmp_path / "choice.svg"
    result = _run(["--csv", data_csv, "--columns", "x", "--components", "1-3", "--plot", out])
    assert result.exit_code == 0, result.output
    svg = out.read_text()
    assert svg.count("<svg") == 1
    assert svg.count('id="axes_') == 3  # BIC against K, convergence, density


def test_plot_into_missing_folder_fails_before_fitting(data_csv, tmp_path):
    out = tmp_path / "no" / "fit.png"
    result = _run(["--csv", data_csv, "--columns", "x", "--plot", out])
    assert result.exit_code == 1
    assert "does not exist" in result.output
    assert "Fitted components" not in result.output
    assert not out.exists()


def test_fit_command_trains_the_registered_mda():
    result = CliRunner().invoke(cli, ["fit", "--dataset", "iris-2f", "--model", "mda", "--param", "n_components=1",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    assert "mda" in result.output and "log-loss" in result.output


def test_identifier_columns_are_left_out_not_suggested_as_categories(tmp_path, rng):
    """The note on left-out text columns suggests --categorical only for columns that can be categories.

    A row identifier (every value distinct) fitted as categorical would give each row its own
    category; the note used to suggest it ("--categorical customer_id,colour"). It is named as left
    out instead, as is a column with one value, which --categorical refuses.
    """
    n = 60
    path = tmp_path / "customers.csv"
    pd.DataFrame({
        "customer_id": [f"C{i:05d}" for i in range(n)],
        "height": rng.normal(size=n),
        "colour": rng.choice(["red", "blue"], n),
        "region": "north",
    }).to_csv(path, index=False)
    result = CliRunner().invoke(mixture, ["--csv", str(path), "--components", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    note = next(line for line in result.output.splitlines() if line.startswith("note:"))
    assert "--categorical colour." in note or "--categorical colour;" in note
    assert "identifier column(s) 'customer_id' left out" in note
    assert "column(s) 'region' left out (one value or none)" in note


def test_a_numeric_row_identifier_chosen_by_default_is_pointed_out(tmp_path, rng):
    # a numbered id column among the default columns was clustered on silently (component means
    # 46, 232, 131 of customer_id); `discrim fit` points such a column out, and so does `mixture`
    path = tmp_path / "customers.csv"
    pd.DataFrame({"customer_id": np.arange(1000, 1060), "height": rng.normal(size=60),
                  "weight": rng.normal(size=60)}).to_csv(path, index=False)
    result = CliRunner().invoke(mixture, ["--csv", str(path), "--components", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    assert ("note: column(s) 'customer_id' hold a different whole number on every row, in order, as a row "
            "identifier does; they are fitted here: --columns height,weight leaves them out.") in result.output
    chosen = CliRunner().invoke(mixture, ["--csv", str(path), "--columns", "customer_id,height", "--components", "1",
                                          "--quiet"])
    assert chosen.exit_code == 0 and "note:" not in chosen.output  # named by the user: no note


def test_true_false_text_columns_are_fitted_as_numbers(tmp_path, rng):
    """A True/False column (empty cells missing) is fitted as 0/1, as the same column written 1/0.

    It used to be left out as text, so a CSV and its Parquet copy (a boolean column) fitted
    different columns.
    """
    n = 80
    flag = rng.random(n) < 0.5
    frame = pd.DataFrame({"height": rng.normal(3.0 * flag, 1.0), "flag": np.where(flag, "True", "False")})
    frame.loc[::10, "flag"] = None
    words, numbers = tmp_path / "words.csv", tmp_path / "numbers.csv"
    frame.to_csv(words, index=False)
    frame.assign(flag=frame["flag"].map({"True": 1.0, "False": 0.0})).to_csv(numbers, index=False)
    reports = [_run(["--csv", path, "--family", "gaussian-diag", "--components", 2, "--quiet"])
               for path in (words, numbers)]
    assert all(r.exit_code == 0 for r in reports), [r.output for r in reports]
    assert "on 2 column(s): height, flag" in reports[0].output
    assert reports[0].output == reports[1].output


def test_a_failed_plot_leaves_no_imputed_table(tmp_path, rng, monkeypatch):
    """The imputed table was written before the plot: when the plot failed the run exited 1 but
    left the table, and its rerun was refused because the output 'exists'."""
    import discrim.cli._mixture as command

    path, _ = _mixed_table(tmp_path, rng)
    out = tmp_path / "completed.csv"

    def failing_plot(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(command, "_write_plot", failing_plot)
    result = _run(["--csv", path, "--components", 2, "--quiet", "--impute", out, "--plot", tmp_path / "p.png"])
    assert result.exit_code == 1 and "cannot write the plot" in result.output
    assert not out.exists() and not list(tmp_path.glob(".completed.csv*"))
    monkeypatch.undo()
    result = _run(["--csv", path, "--components", 2, "--quiet", "--impute", out, "--plot", tmp_path / "p.png"])
    assert result.exit_code == 0, result.output
    assert out.exists() and not pd.read_csv(out)["height"].isna().any()


def test_overwrite_help_names_the_impute_file_too():
    """--overwrite governs --impute as well as --plot (an existing --impute file needs it); the help says so."""
    result = _run(["--help"])
    help_text = " ".join(result.output.split())
    assert "Replace the --plot and --impute files if they exist." in help_text


def test_the_never_chosen_footnote_only_under_marked_rows(tmp_path, rng):
    """The model-choice table explains "too few rows" only when some row is marked so.

    The footnote used to be printed under every table, where it explained nothing.
    """
    path = tmp_path / "tiny.csv"
    pd.DataFrame(np.vstack([rng.normal(0, 1, (6, 2)), rng.normal(6, 1, (6, 2))]), columns=["a", "b"]).to_csv(
        path, index=False)
    footnote = "never chosen: a component with too few rows"
    few = _run(["--csv", path, "--components", "1-2", "--quiet"])
    many = _run(["--csv", path, "--components", "1-4", "--quiet"])
    assert few.exit_code == 0 and many.exit_code == 0, few.output + many.output
    assert "too few rows" not in few.output and footnote not in " ".join(few.output.split())
    assert "too few rows │" in many.output and footnote in " ".join(many.output.split())


def test_categorical_family_counts_codes_beside_empty_cells(tmp_path):
    """--family categorical takes its number of codes from the largest one, ignoring empty cells (a NaN in the
    maximum failed with Python's 'cannot convert float NaN to integer')."""
    path = tmp_path / "codes.csv"
    pd.DataFrame({"f0": [np.nan, 1, 0, 1, 2, 0], "f1": [0, 1, 0, 1, 1, 0.0]}).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["mixture", "--csv", str(path), "--family", "categorical", "--components", "1"])
    assert result.exit_code == 0, result.output
    assert "cannot convert" not in result.output


def test_imputed_category_codes_are_written_as_the_column_writes_them(tmp_path, rng):
    """Codes 1, 2, 3 with gaps read as floats: their imputed cells came out '1.0' beside '1'."""
    n = 90
    frame = pd.DataFrame({"x": np.concatenate([rng.normal(0, 1, n // 2), rng.normal(5, 1, n // 2)]),
                          "grade": np.repeat([1, 2], n // 2).astype(float)})
    frame.loc[[3, 50], "grade"] = np.nan
    path = tmp_path / "grades.csv"
    frame.to_csv(path, index=False, float_format="%g")
    out = tmp_path / "done.csv"
    result = _run(["--csv", path, "--categorical", "grade", "--components", 2, "--quiet", "--impute", out])
    assert result.exit_code == 0, result.output
    grades = pd.read_csv(out, dtype=str)["grade"]
    assert set(grades) == {"1", "2"} and grades[3] == "1" and grades[50] == "2"


def test_imputed_table_keeps_a_padded_or_empty_header(tmp_path):
    """A header padded with spaces ("a, b") made --impute fail with "internal error (KeyError: 'b')", and
    a spreadsheet's empty header cells (a trailing ",,") came back named "Unnamed: 3", "Unnamed: 4"."""
    path, out = tmp_path / "rows.csv", tmp_path / "done.csv"
    path.write_text("a, b ,label,,\n1, 2,x,,\n3,,y,,\n5,6,x,,\n7,8,y,,\n2,3,x,,\n")
    result = _run(["--csv", path, "--columns", "a,b", "--components", 1, "--quiet", "--impute", out])
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert lines[0] == "a,b,label,," and lines[1] == "1,2,x,,"
    assert lines[2].startswith("3,") and lines[2].endswith(",y,,") and float(lines[2].split(",")[1]) > 0


def test_categories_are_read_as_written(tmp_path, rng):
    """Codes "01", "02", "10", "20" were read as the numbers 1, 2, 10, 20 (shown 1.0, 2.0, ...): an imputed
    cell came out "2", a value the column does not hold, and "01" beside "1" would be one category;
    a category "NA" was read as missing and replaced by --impute."""
    n = 120
    group = np.repeat([0, 1], n // 2)
    code = np.where(group == 1, rng.choice(["01", "02"], n), rng.choice(["10", "NA"], n)).astype(object)
    code[::10] = ""
    frame = pd.DataFrame({"x": rng.normal(size=n) + 5.0 * group, "code": code})
    path, out = tmp_path / "codes.csv", tmp_path / "done.csv"
    frame.to_csv(path, index=False)
    result = _run(["--csv", path, "--categorical", "code", "--components", 2, "--quiet", "--impute", out])
    assert result.exit_code == 0, result.output
    table = result.output[result.output.index("categorical__probs of code"):]
    assert all(f"│ {value} " in table for value in ("01", "02", "10", "NA")) and "│ 1.0 " not in table
    assert "note: 'code' has the category(ies) 'NA', which some exports write for a missing value" in result.output
    written = pd.read_csv(out, dtype=str, keep_default_na=False)["code"]
    assert set(written) == {"01", "02", "10", "NA"}
    assert (written[code != ""] == code[code != ""]).all()  # only the empty cells are completed


def test_prior_fits_mclusts_map_em_and_applies_to_gaussian_families_only(tmp_path):
    # mclustBIC(iris[, 1:4], G = 2, modelNames = c("VEV", "EEE"), prior = priorControl()) in mclust 6.0.0:
    # -580.813553997 and -689.590487672 (mclust reports BIC negated)
    from sklearn.datasets import load_iris

    path = tmp_path / "iris.csv"
    load_iris(as_frame=True).frame.drop(columns="target").to_csv(path, index=False)
    result = CliRunner().invoke(mixture, ["--csv", str(path), "--family", "gaussian-VEV", "--family", "gaussian-EEE",
                                          "--components", "2", "--prior", "--init", "hierarchical", "--tol", "1e-8",
                                          "--max-iter", "2000", "--quiet"])
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line.split("│")[5].strip() for line in result.output.splitlines()
            if line.startswith("│ VEV") or line.startswith("│ EEE")}
    assert rows == {"VEV": "580.81", "EEE": "689.59"}
    refused = CliRunner().invoke(mixture, ["--csv", str(path), "--family", "poisson", "--prior"])
    assert refused.exit_code != 0 and "--prior applies to the Gaussian families only" in refused.output


def test_prior_leaves_mclusts_models_without_one_out(tmp_path, rng):
    # --help promised that --family mclust --prior leaves VEE, EVE, VVE and EVV out; they were fitted
    # and reported as rows "failed: ValueError: prior is not available for covariance_type='VEE'"
    path = tmp_path / "rows.csv"
    pd.DataFrame(np.concatenate([rng.normal(0, 1, (60, 2)), rng.normal(4, 1, (60, 2))]),
                 columns=["a", "b"]).to_csv(path, index=False)
    result = CliRunner().invoke(mixture, ["--csv", str(path), "--family", "mclust", "--prior", "--components", "1-2",
                                          "--quiet"])
    assert result.exit_code == 0, result.output
    models = {line.split("│")[1].strip() for line in result.output.splitlines() if line.startswith("│ ")}
    assert {"EII", "VVV", "VEV", "EEE"} <= models and not models & {"VEE", "EVE", "VVE", "EVV"}
    assert "failed" not in result.output
    refused = CliRunner().invoke(mixture, ["--csv", str(path), "--family", "gaussian-EVV", "--prior"])
    assert refused.exit_code == 2 and "--prior: mclust has no conjugate prior for --family gaussian-EVV" in (
        refused.output)


def test_noise_adds_a_uniform_component_reported_by_name(tmp_path, rng):
    X = np.concatenate([rng.normal(0, 1, (150, 2)), rng.normal(6, 1, (150, 2)), rng.uniform(-10, 16, (40, 2))])
    path = tmp_path / "noisy.csv"
    pd.DataFrame(X, columns=["a", "b"]).to_csv(path, index=False)
    result = CliRunner().invoke(mixture, ["--csv", str(path), "--components", "2", "--noise", "--quiet"])
    assert result.exit_code == 0, result.output
    expected = FiniteMixture(Gaussian("full"), 2, noise=True, random_state=0).fit(X)
    noise_row = next(line for line in result.output.splitlines() if line.startswith("│     noise"))
    assert float(noise_row.split("│")[2]) == pytest.approx(expected.weights_[-1], rel=1e-5)
    fit_rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in result.output.splitlines()
                if line.count("│") == 3}
    assert fit_rows["components"] == "2 and noise"
    assert fit_rows["BIC (lower is better)"] == f"{expected.bic(X):.8g}"
    with_nan = tmp_path / "gaps.csv"
    pd.DataFrame(np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X), columns=["a", "b"]).to_csv(
        with_nan, index=False)
    refused = CliRunner().invoke(mixture, ["--csv", str(with_nan), "--components", "2", "--noise", "--quiet"])
    assert refused.exit_code != 0 and "Impute the missing values first, or fit without noise" in refused.output
    parquet = CliRunner().invoke(mixture, ["--parquet", str(path), "--noise"])
    assert parquet.exit_code != 0 and "--noise fits rows in memory: give --csv" in parquet.output


def test_an_empty_column_list_is_refused(data_csv):
    # "--columns ''" fitted every numeric column, silently
    for option in ("--columns", "--categorical"):
        result = _run(["--csv", data_csv, option, ""])
        assert result.exit_code == 2 and f"{option} is empty: name the columns, or leave {option} out." in result.output


def test_noise_on_three_columns_draws_the_density_plot(tmp_path, rng):
    # plot_density of a noise fit on more than two columns failed, so the whole fit ended in
    # "cannot write the plot" (blaming NaN values the CSV did not have)
    X = np.vstack([rng.normal(0, 1, (100, 3)), rng.normal(5, 1, (100, 3)), rng.uniform(-5, 10, (20, 3))])
    path = tmp_path / "noise3.csv"
    pd.DataFrame(X, columns=["a", "b", "c"]).to_csv(path, index=False)
    out = tmp_path / "density.png"
    result = _run(["--csv", path, "--components", "2", "--noise", "--quiet", "--plot", out, "--plot-kind", "density"])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_noise_help_names_the_box_the_noise_uses():
    # the help said "the rows' bounding box"; the volume is the smaller of it and the principal-axes box
    text = " ".join(CliRunner().invoke(mixture, ["--help"], terminal_width=200).output.split())
    assert "smaller of the rows' bounding box and their box along the principal axes" in text
