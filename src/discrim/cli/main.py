"""Entry point of the ``discrim`` command: data sets, fitting, prediction and the subcommands."""

import importlib
import importlib.util
import logging
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import click
import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from discrim.cli._io import (
    SEED,
    check_classifier,
    check_device_data,
    check_distinct_outputs,
    check_finite_probabilities,
    check_output,
    check_output_folder,
    check_output_suffix,
    check_plot_format,
    checked_device,
    column_list,
    damaged_model_errors,
    device_option,
    drawable_rows,
    drop_option,
    dropped_columns,
    features_named,
    first_names,
    model_features,
    model_from_params,
    no_label_message,
    on_host,
    parse_params,
    read_csv,
    read_csv_as_written,
    read_labels,
    remember_training_rows,
    split_names,
    split_target,
    table_notes,
    write_csv_atomic,
)
from discrim.cli._lazy import lazy_options

console = Console()

# Subcommands that live in their own modules, imported only when used.
_LAZY_COMMANDS = {
    "mixture": "discrim.cli._mixture:mixture",
    "explain": "discrim.cli._explain:explain",
    "tune": "discrim.cli._tune:tune",
}


_USER_ERRORS = (ValueError, TypeError, ImportError, OSError, np.linalg.LinAlgError)
_CLICK_FLOW = (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit)


def _one_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _LazyGroup(click.Group):
    def list_commands(self, ctx):
        # A subcommand whose module is not installed is left out of the listing.
        available = [n for n, t in _LAZY_COMMANDS.items() if importlib.util.find_spec(t.split(":")[0])]
        return sorted([*super().list_commands(ctx), *available])

    def get_command(self, ctx, name):
        if name in _LAZY_COMMANDS:
            module, attr = _LAZY_COMMANDS[name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)

    def invoke(self, ctx):
        # Library errors (bad input, unreadable files) become a one-line message and exit 1.
        # Anything else that escapes a library call is a defect, still reported in one line.
        try:
            return super().invoke(ctx)
        except _CLICK_FLOW:
            raise
        except _USER_ERRORS as exc:
            if os.environ.get("DISCRIM_DEBUG"):
                raise
            from discrim.cli._warnings import command_line_advice

            # "pass unlabeled=-1" is "--param unlabeled=-1" here (where the command has --param)
            command = self.get_command(ctx, ctx.invoked_subcommand) if ctx.invoked_subcommand else None
            raise click.ClickException(command_line_advice(_one_line(exc), command)) from None
        except MemoryError:
            if os.environ.get("DISCRIM_DEBUG"):
                raise
            raise click.ClickException("out of memory: use fewer rows, features or a smaller model.") from None
        except Exception as exc:
            if os.environ.get("DISCRIM_DEBUG"):
                raise
            raise click.ClickException(
                f"internal error ({type(exc).__name__}: {_one_line(exc)[:300]}); set DISCRIM_DEBUG=1 to see the "
                "traceback, and please report it."
            ) from None


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="discrim")
def cli():
    """discrim: likelihood-based classification and mixture modelling."""


_OVERWRITE = click.option("--overwrite", is_flag=True, help="Replace output files that exist.")


@cli.command()
@click.option("--export", "export_name", metavar="NAME", help="Write all rows of this data set, in its own units, as CSV.")
@click.option("--output", type=click.Path(dir_okay=False), help="CSV file for --export (features and a 'target' column).")
@click.option("--random-state", default=0, show_default=True, type=SEED, help="Seed of the synthetic data sets.")
@_OVERWRITE
def datasets(export_name, output, random_state, overwrite):
    """List the built-in data sets, or export one as CSV.

    The exported file has the raw feature columns under their names and the class in a column
    named 'target': `discrim fit --csv FILE --target target` trains on it, and `discrim predict`
    takes its feature columns as they are.
    """
    from discrim.datasets import list_datasets, load_dataset

    if export_name is not None or output is not None:
        if export_name is None or output is None:
            raise click.UsageError("--export NAME and --output FILE go together.")
        if export_name not in list_datasets():
            raise click.ClickException(
                f"unknown data set {export_name!r}; `discrim datasets` lists them: {', '.join(list_datasets())}."
            )
        check_output(output, "--output", overwrite=overwrite)
        check_output_suffix(output, "--output", "csv", "end the file name in .csv.")
        X, y = load_dataset(export_name, random_state=random_state, as_frame=True)
        if "target" in X.columns:
            raise click.ClickException(f"data set {export_name!r} has a feature named 'target'.")
        write_csv_atomic(X.assign(target=y), output)
        console.print(f"{len(y)} rows of {export_name} written to {output}")
        return
    table = Table("name", "description", title="built-in data sets")
    for name, description in list_datasets().items():
        table.add_row(name, description)
    console.print(table)


@cli.command()
def models():
    """List the models that `discrim fit --model` accepts."""
    from discrim._registry import MODELS

    table = Table("name", "description", title="models")
    for name, spec in MODELS.items():
        table.add_row(name, spec.description)
    console.print(table)


def _load_training_data(dataset, csv, target, test_size, random_state, unlabelled=None, marker=None, drop=()):
    """Return X_train, X_test, y_train, y_test in the data's own units (a built-in set unscaled).

    ``drop``: the ``--drop`` option's values, columns left out of the features.

    With ``unlabelled`` (a model name that fits by EM over rows without a label), CSV rows with an
    empty target cell, or with the label ``marker`` (the model's ``unlabeled``, e.g. -1), join the
    training part after the split of the labelled rows (their y is NaN); otherwise they are refused.
    """
    from sklearn.model_selection import train_test_split

    from discrim.datasets import list_datasets, load_benchmark

    if (dataset is None) == (csv is None):
        raise click.UsageError("give exactly one of --dataset NAME or --csv FILE.")
    if dataset is not None:
        if target is not None:
            raise click.UsageError("--target names the label column of --csv; a built-in --dataset has its own.")
        if dataset not in list_datasets():
            raise click.ClickException(
                f"unknown data set {dataset!r}; `discrim datasets` lists them: {', '.join(list_datasets())}."
            )
        # Unscaled: the scaling is fitted inside the model, so a saved model takes raw rows.
        try:
            X_train, X_test, y_train, y_test = load_benchmark(dataset, random_state=random_state,
                                                              test_size=test_size, as_frame=True, scale=False)
        except ValueError as exc:  # the name is known and the data fixed: the split failed
            raise click.ClickException(_split_failure(exc, test_size)) from None
        names = dropped_columns(drop, list(X_train.columns))
        return X_train.drop(columns=names), X_test.drop(columns=names), y_train, y_test
    if target is None:
        raise click.UsageError("--csv needs --target COLUMN.")
    df = read_csv(csv)
    df = df.drop(columns=dropped_columns(drop, list(df.columns), target))
    X, y = split_target(df, read_labels(csv, target), target, unlabelled)
    for note in table_notes(X, y, target):
        console.print(f"note: {note}")
    if unlabelled is not None and marker is not None and not pd.isna(marker):
        # the marked rows are unlabelled as the empty cells are: never in the test part, whose
        # scores need a label (they reached log_loss as a class it did not know)
        y = np.array(y, dtype=object)  # a copy: pandas's may be read-only
        # a text column holds the marker as text: unlabeled=-1 marks the cells '-1'
        y[np.array([label == marker or (isinstance(label, str) and label == str(marker)) for label in y],
                   dtype=bool)] = np.nan
    missing = pd.isna(y)
    if missing.all():  # every cell the marker (the empty ones split_target refused)
        raise click.ClickException(no_label_message(target, len(y)))
    labelled = np.asarray(y[~missing].tolist())  # one dtype (an object y holds ints beside empty cells' NaN)
    _refuse_few_rows_per_class(labelled, target)
    try:
        X_train, X_test, y_train, y_test = train_test_split(X[~missing], labelled, test_size=test_size,
                                                            stratify=labelled, random_state=random_state)
    except ValueError as exc:
        raise click.ClickException(_split_failure(exc, test_size)) from None
    if missing.any():
        X_train, y_train = pd.concat([X_train, X[missing]]), np.concatenate([y_train, y[missing]])
    return X_train, X_test, y_train, y_test


def _split_failure(exc, test_size):
    """The one-line message of a stratified split that failed (a --test-size too small or too large
    for the number of classes), naming the option and its fix."""
    if not re.search(r"\b(train|test)_size\b|n_samples=", str(exc)):
        return f"cannot split the labelled rows into a training and a test part: {_one_line(exc)}"
    return (f"--test-size {test_size:g}: cannot split the labelled rows into a training and a test part "
            f"({_one_line(exc).rstrip('.')}); give a --test-size that leaves each part at least one row of every "
            "class (the default is 0.3).")


def _show_progress_logs():
    """Print discrim's INFO log records (e.g. per-batch progress of long fits) on stderr."""
    from rich.logging import RichHandler

    logger = logging.getLogger("discrim")
    if not any(isinstance(h, RichHandler) for h in logger.handlers):
        handler = RichHandler(console=Console(stderr=True), show_path=False, show_time=True)
        handler.setLevel(logging.INFO)  # EM's per-iteration DEBUG records feed a progress bar instead
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)


@cli.command()
@click.option("--dataset", help="Built-in data set (see `discrim datasets`); or give --csv, --parquet or --zarr.")
@click.option("--csv", type=click.Path(dir_okay=False), help="CSV file with features and a target column.")
@click.option("--target", help="Target column (the classes) of the --csv, --parquet or --zarr table.")
@click.option("--model", "model_name", required=True, help="Model name (see `discrim models`).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Model parameter, the value a Python literal (reg_param=0.1, priors='empirical', "
                   "alpha_feature_grid=[0.001, 0.01]); repeatable.")
@click.option("--test-size", default=0.3, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Share of the rows held out for the scores printed (stratified; a random split of "
                   "--parquet and --zarr tables).")
@click.option("--random-state", default=0, show_default=True, type=SEED, help="Seed of the split and the model.")
@click.option("--scale/--no-scale", default=True, show_default=True,
              help="Standardise the features inside the model, with the training part's mean and spread.")
@click.option("--output", type=click.Path(dir_okay=False), help="Save the fitted model here (skops format).")
@click.option("--plot", type=click.Path(dir_okay=False), help="Draw the decision regions (two-feature data) here.")
@_OVERWRITE
@click.option("--quiet", is_flag=True, help="Do not show progress of long fits.")
@drop_option
@device_option
@lazy_options
def fit(dataset, csv, target, model_name, params, test_size, random_state, scale, output, plot, overwrite, quiet,
        drop, device, parquet, zarr, scheduler):
    """Train a model, evaluate it on a stratified hold-out and print the scores.

    With --parquet or --zarr the table is read lazily by Dask: the hold-out is a random split,
    the scaling and the model are fitted chunk by chunk, and the scores are computed the same way.
    """
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from discrim._registry import model_key
    from discrim.evaluation import score_probabilities

    try:
        model_name = model_key(model_name)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    check_output(output, "--output", overwrite=overwrite, inputs=[csv])
    check_output(plot, "--plot", overwrite=overwrite, inputs=[csv])
    check_plot_format(plot)
    check_distinct_outputs(**{"--output": output, "--plot": plot})
    device = checked_device(device)
    if parquet is not None or zarr is not None:
        if sum(x is not None for x in (dataset, csv, parquet, zarr)) != 1:
            raise click.UsageError("give exactly one of --dataset, --csv, --parquet or --zarr.")
        if device is not None:
            raise click.UsageError("--device computes in-memory data; --parquet and --zarr run on Dask's workers.")
        if plot is not None:
            raise click.UsageError("--plot draws in-memory data; it does not take --parquet or --zarr.")
        return _fit_lazy(model_name, params, parquet, zarr, scheduler, target, test_size, random_state, scale,
                         output, quiet, drop)
    kwargs = parse_params(params)
    estimator = model_from_params(model_name, kwargs)
    takes_unlabelled = "unlabeled" in estimator.get_params()
    X_train, X_test, y_train, y_test = _load_training_data(dataset, csv, target, test_size, random_state,
                                                           model_name if takes_unlabelled else None,
                                                           estimator.unlabeled if takes_unlabelled else None, drop)
    n_unlabelled = int(pd.isna(y_train).sum())  # only when takes_unlabelled: others refuse empty target cells
    if n_unlabelled and estimator.unlabeled is None:
        estimator.set_params(unlabeled=np.nan)  # only the empty cells: no label value is taken for a marker
    if plot is not None and X_train.shape[1] != 2:
        raise click.ClickException(
            f"--plot draws decision regions for two-feature data; this data has {X_train.shape[1]} features."
        )
    if "random_state" in estimator.get_params() and "random_state" not in kwargs:
        estimator.set_params(random_state=random_state)
    if device is not None:
        check_device_data(device, X_train, X_test)
        estimator.set_params(device=device)
    model = make_pipeline(StandardScaler(), estimator) if scale else clone(estimator)
    if not quiet:
        _show_progress_logs()
    start = time.perf_counter()
    with features_named(X_train.columns):
        model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    proba = model.predict_proba(X_test)
    check_finite_probabilities(proba, f"{model_name} on the test part")
    scores = score_probabilities(y_test, proba, model.classes_)

    console.print(f"{model_name} on {dataset or csv}: {len(y_train)} training rows, {len(y_test)} test rows")
    if n_unlabelled:
        console.print(f"{n_unlabelled} of the training rows have no label: the fit runs EM over them (semi-supervised)")
    table = Table("metric", "value")
    for label, key in [("log-loss", "log_loss"), ("accuracy", "accuracy"), ("balanced accuracy", "balanced_accuracy"), ("ROC-AUC", "roc_auc")]:
        table.add_row(label, f"{scores[key]:.4f}")
    table.add_row("fit time", f"{fit_seconds:.3f} s")
    console.print(table)
    if output is not None:
        remember_training_rows(model, X_train, csv)
    _write_fit_outputs(on_host(model), output, plot, X_train, y_train)
    if output is not None:
        console.print(f"model saved to {output}")
    if plot is not None:
        console.print(f"decision regions drawn to {plot}")


def _write_fit_outputs(model, output, plot, X_train, y_train):
    """Write the model file and the decision-region plot: both, or neither.

    The figure is drawn first; then both files are written under temporary names beside the
    outputs, and take their names only once both are complete: a plot that fails (to draw or to
    save) leaves no model file behind, as the README promises of any failed run.

    Parameters
    ----------
    model : estimator
        The fitted model, as saved.
    output, plot : str or None
        ``--output`` and ``--plot``; None writes nothing for that option.
    X_train : DataFrame
    y_train : ndarray
    """
    from contextlib import ExitStack

    from discrim.persistence import save_model
    from discrim.utils._files import atomic_output

    figure = None
    with ExitStack() as stack:
        if plot is not None:
            from discrim.plotting._mpl import pyplot
            from discrim.plotting.decision_surface import plot_decision_surface

            drawn = drawable_rows(X_train, y_train)
            if not drawn.any():
                raise click.ClickException("--plot: no training row has a label and both features to draw; leave "
                                           "--plot out.")
            figure = plot_decision_surface(model, X_train[drawn], y_train[drawn]).figure
            stack.callback(pyplot().close, figure)
        # entered in this order, the plot is moved into place first, then the model
        model_tmp = stack.enter_context(atomic_output(output)) if output is not None else None
        plot_tmp = stack.enter_context(atomic_output(plot)) if plot is not None else None
        if model_tmp is not None:
            save_model(model, model_tmp)
        if plot_tmp is not None:
            figure.savefig(plot_tmp, format=Path(plot).suffix.lstrip(".").lower(), dpi=120, bbox_inches="tight")


@cli.command()
@click.option("--model", "model_path", required=True, type=click.Path(dir_okay=False), help="Model file from `discrim fit --output`.")
@click.option("--csv", type=click.Path(dir_okay=False), help="CSV file with the model's feature columns.")
@click.option("--output", type=click.Path(), help="Write predictions here (CSV; a Parquet folder for --parquet "
              "or --zarr); standard output otherwise, or with '-' (CSV input only).")
@click.option("--keep", multiple=True, metavar="COLUMNS",
              help="Copy these input columns (comma-separated, e.g. a row identifier) into the output, before the "
                   "predictions; they are not features.")
@_OVERWRITE
@lazy_options
def predict(model_path, csv, output, keep, overwrite, parquet, zarr, scheduler):
    """Write the predicted class and the class probabilities of every row."""
    from discrim.persistence import load_model

    if sum(x is not None for x in (csv, parquet, zarr)) != 1:
        raise click.UsageError("give exactly one of --csv, --parquet or --zarr.")
    if csv is None:
        if output is None:
            raise click.UsageError("--parquet and --zarr need --output FOLDER (the predictions, as Parquet).")
        check_output_folder(output, "--output", overwrite=overwrite, inputs=[model_path, parquet, zarr])
        check_output_suffix(output, "--output", "parquet", "give a folder name such as predictions.parquet (a "
                            "--csv input gives a CSV file).")
        model = load_model(model_path)
        check_classifier(model, model_path)
        return _predict_lazy(model, model_path, parquet, zarr, scheduler, output, overwrite, keep)
    if output == "-":  # the usual name of standard output, where predictions go without --output
        output = None
    check_output(output, "--output", overwrite=overwrite, inputs=[model_path, csv])
    check_output_suffix(output, "--output", "csv", "end the file name in .csv (a --parquet or --zarr input gives "
                        "a Parquet folder).")
    model = load_model(model_path)
    check_classifier(model, model_path)
    df = read_csv(csv)
    kept = _kept_columns(keep, list(df.columns), model)
    with damaged_model_errors(model_path):
        # a model without feature names takes the numeric columns: the kept ones are not among them
        named = getattr(model, "feature_names_in_", None) is not None
        X = model_features(model, df if named else df.drop(columns=kept))
        _note_empty_features(X)
        with features_named(X.columns if hasattr(X, "columns") else []):  # its warnings name them
            result = _prediction_frame(X, model, np.asarray(model.classes_))
    if kept:  # copied as written in the file (read as numbers, ids would lose digits and 3 become 3.0)
        written = read_csv_as_written(csv, usecols=lambda column: str(column).strip() in kept)
        written.columns = [str(c).strip() for c in written.columns]
        result = pd.concat([written[kept], result], axis=1)
    if output is None:
        click.echo(result.to_csv(index=False), nl=False)
    else:
        write_csv_atomic(result, output)
        console.print(f"{len(result)} predictions written to {output}")


def _refuse_few_rows_per_class(labels, target):
    """Refuse classes of one row (the stratified split needs two), naming a few, and a target that
    looks continuous (a class per row) as such."""
    classes, counts = np.unique(labels, return_counts=True)
    single = classes[counts < 2]
    if not single.size:
        return
    shown = first_names([c.item() if hasattr(c, "item") else c for c in single], shown=5)  # numpy scalars as Python's
    if classes.size > 0.5 * labels.shape[0]:
        raise click.ClickException(
            f"target column {target!r} has {classes.size} distinct values in {labels.shape[0]} rows ({shown}): it "
            "looks continuous, and discrim classifies. Give a column of classes as --target.")
    raise click.ClickException(
        f"target column {target!r} has {single.size} class(es) of one row ({shown}): the stratified split into "
        "training and test rows needs two of each. Add rows of those classes, or leave them out.")


def _fitted_scaler(X):
    """A StandardScaler fitted to a dask DataFrame by two reductions (scikit-learn's would load it)."""
    import dask
    from sklearn.preprocessing import StandardScaler

    mean, var, n = dask.compute(X.mean(), X.var(ddof=0), X.shape[0])
    scaler = StandardScaler()
    scaler.mean_ = mean.to_numpy(dtype=np.float64)
    scaler.var_ = var.to_numpy(dtype=np.float64)
    scaler.scale_ = np.where(scaler.var_ > 0, np.sqrt(scaler.var_), 1.0)
    scaler.n_samples_seen_ = int(n)
    scaler.n_features_in_ = X.shape[1]
    scaler.feature_names_in_ = np.asarray(X.columns, dtype=object)
    return scaler


def _fit_lazy(model_name, params, parquet, zarr, scheduler, target, test_size, random_state, scale, output, quiet,
              drop=()):
    """``discrim fit`` on a table read lazily: Dask computes every pass over the rows."""
    from sklearn.pipeline import Pipeline

    from discrim.cli._lazy import dask_cluster, em_progress, input_bytes, lazy_features, plain_labels, read_lazy
    from discrim.evaluation import score_probabilities_lazy
    from discrim.persistence import save_model
    from discrim.utils._dask import align_rows, row_chunked

    if model_name == "proset-cv":
        raise click.ClickException("proset-cv searches in memory; fit --model proset on lazy data, or use --csv.")
    if target is None:
        raise click.UsageError("--parquet and --zarr need --target COLUMN.")
    frame = read_lazy(parquet, zarr)
    if target not in frame.columns:
        raise click.ClickException(f"target column {target!r} not in the table; it has: {column_list(frame.columns)}.")
    left_out = dropped_columns(drop, list(frame.columns), target)
    # refuses non-numeric columns before any pass
    names = list(lazy_features(frame, exclude=[target, *left_out]).columns)
    kwargs = parse_params(params)
    estimator = model_from_params(model_name, kwargs)
    if "random_state" in estimator.get_params() and "random_state" not in kwargs:
        estimator.set_params(random_state=random_state)
    with dask_cluster(scheduler, input_bytes(parquet, zarr)) as where:
        n_unlabelled = int(frame[target].isna().sum().compute())  # one pass over the target column alone
        if n_unlabelled:
            raise click.ClickException(
                f"target column {target!r} has {n_unlabelled} missing value(s): --parquet and --zarr fit labelled "
                "rows only; drop those rows, or fit a CSV, where --model lda, qda or mda learn from rows without "
                "a label too."
            )
        train, test = frame.random_split([1 - test_size, test_size], random_state=random_state)
        X_train, X_test = lazy_features(train, names), lazy_features(test, names)
        y_train, y_test = plain_labels(train[target]), plain_labels(test[target])
        steps = []
        if scale:
            scaler = _fitted_scaler(X_train)
            X_train = (X_train - scaler.mean_) / scaler.scale_
            X_test = (X_test - scaler.mean_) / scaler.scale_
            steps.append(("standardscaler", scaler))
        # Plain arrays, as the scaler of an in-memory pipeline hands them on: the model is fitted
        # without feature names (the scaler keeps them), like every model `discrim fit` saves.
        X_train, X_test = row_chunked(X_train), row_chunked(X_test)
        if not quiet:
            _show_progress_logs()
        start = time.perf_counter()
        with em_progress(not quiet), features_named(names):
            estimator.fit(X_train, y_train)
        fit_seconds = time.perf_counter() - start
        proba = estimator.predict_proba(X_test)
        y_test = align_rows(y_test, X_test, name="y")
        scores = score_probabilities_lazy(y_test, proba, estimator.classes_)
        n_train, n_test = X_train.shape[0], y_test.shape[0]  # known since row_chunked
    if not steps:
        # fitted on row chunks without names: the model records its columns, as the scaler does, so that
        # predict takes them by name (it took a CSV's columns in order: reversed, setosa became virginica)
        estimator.feature_names_in_ = np.asarray(names, dtype=object)
    model = Pipeline([*steps, (type(estimator).__name__.lower(), estimator)])
    console.print(f"{model_name} on {parquet or zarr} ({where}): {n_train} training rows, {n_test} test rows")
    table = Table("metric", "value")
    for label, key in [("log-loss", "log_loss"), ("accuracy", "accuracy"), ("balanced accuracy", "balanced_accuracy")]:
        table.add_row(label, f"{scores[key]:.4f}")
    table.add_row("ROC-AUC", "not computed (it sorts all rows)")
    table.add_row("fit time", f"{fit_seconds:.3f} s")
    console.print(table)
    if output is not None:
        save_model(model, output)
        console.print(f"model saved to {output}")


def _note_empty_features(X):
    """Say on stderr which of the model's features no row gives (the predictions leave them out)."""
    values = X.to_numpy(dtype=float) if hasattr(X, "to_numpy") else np.asarray(X, dtype=float)
    empty = np.isnan(values).all(axis=0)
    if empty.any():
        names = [str(c) for c in X.columns] if hasattr(X, "columns") else [str(j) for j in range(values.shape[1])]
        shown = ", ".join(repr(names[j]) for j in np.flatnonzero(empty)[:5])
        click.echo(f"note: feature(s) {shown} are empty in every row: the predictions use the other features "
                   "(the model's marginal densities).", err=True)


def _kept_columns(keep, columns, model):
    """The ``--keep`` columns (the option's values), checked against the input's columns and the model's features."""
    keep = split_names(keep, columns)
    unknown = [c for c in keep if c not in columns]
    if unknown:
        raise click.ClickException(f"--keep column(s) {', '.join(map(repr, unknown))} not in the input; it has: "
                                   f"{column_list(columns)}.")
    written = set(_prediction_columns(np.asarray(getattr(model, "classes_", []))))
    clash = [c for c in keep if c in written]
    if clash:
        raise click.UsageError(f"--keep column(s) {', '.join(map(repr, clash))} have the names of prediction columns; "
                               "rename them in the input.")
    return keep


def _prediction_columns(classes):
    """The columns ``predict`` writes: the predicted class, then one probability per class."""
    return ["predicted", *(f"proba_{label}" for label in classes)]


def _prediction_frame(part, model, classes, features=None, kept=()):
    """Predicted class and class probabilities of rows (a partition, or a CSV's table), as a DataFrame.

    ``features``: the part's columns the model takes (None: all of them); ``kept``: columns of the
    part placed before the predictions, or a dict of the part's columns to the names they are
    written under. An array (a model without feature names) gives a DataFrame numbered from 0."""
    kept = kept if isinstance(kept, dict) else {c: c for c in kept}
    proba = np.asarray(model.predict_proba(part if features is None else part[features]), dtype=float)
    check_finite_probabilities(proba)
    result = pd.DataFrame(proba, columns=_prediction_columns(classes)[1:], index=getattr(part, "index", None))
    result.insert(0, "predicted", classes[np.argmax(proba, axis=1)])
    return pd.concat([part[list(kept)].rename(columns=kept), result], axis=1) if kept else result


def _predict_lazy(model, model_path, parquet, zarr, scheduler, output, overwrite, keep=()):
    """``discrim predict`` on a table read lazily: the predictions are written partition by partition."""
    from discrim.cli._lazy import dask_cluster, input_bytes, lazy_features, read_lazy, write_parquet_atomic

    frame = read_lazy(parquet, zarr)
    names = getattr(model, "feature_names_in_", None)
    kept = _kept_columns(keep, list(frame.columns), model)
    with damaged_model_errors(model_path):
        classes = np.asarray(model.classes_)
        X = lazy_features(frame, None if names is None else list(names), exclude=kept)  # exclude: without names
        if names is None and X.shape[1] != model.n_features_in_:
            raise click.ClickException(
                f"the model takes {model.n_features_in_} features but the table has {X.shape[1]} numeric columns."
            )
        # the kept columns ride along with the features, partition by partition, as read: under names of
        # their own, so that a kept feature is written as in the table, not as the model's float copy
        riding = {f"__kept_{i}_{c}": c for i, c in enumerate(kept)}
        rows = X.assign(**{name: frame[c] for name, c in riding.items()}) if kept else X
        meta = _prediction_frame(X._meta.iloc[:0].astype(float).reindex([0]).fillna(0.0), model, classes).iloc[:0]
        if kept:  # the kept columns keep their types
            meta = pd.concat([frame._meta[kept], meta], axis=1)
        predictions = rows.map_partitions(_prediction_frame, model, classes, list(X.columns), riding, meta=meta)
        with dask_cluster(scheduler, input_bytes(parquet, zarr)) as where:
            write_parquet_atomic(predictions, output, overwrite=overwrite)
    console.print(f"predictions written to {output} (Parquet, computed by {where})")


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the ``discrim`` command line (SIGINT/SIGTERM clean up and exit with 130/143).

    The console script is :func:`discrim.cli.run`, which installs the signal handlers before this
    module's imports; this function, for callers that have imported the module, does the rest.
    """
    from discrim.cli import run

    run(argv)


if __name__ == "__main__":
    main()
