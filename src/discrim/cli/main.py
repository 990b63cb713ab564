"""Entry point of the ``discrim`` command: data sets, fitting, prediction and the subcommands."""

import importlib
import importlib.util
import logging
import os
import time

import click
import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from discrim.cli._io import (
    check_distinct_outputs,
    check_finite_probabilities,
    check_classifier,
    check_output,
    damaged_model_errors,
    model_features,
    parse_params,
    read_csv,
    split_target,
    write_csv_atomic,
)

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
            raise click.ClickException(_one_line(exc)) from None
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
@click.option("--random-state", default=0, show_default=True, type=int, help="Seed of the synthetic data sets.")
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


def _load_training_data(dataset, csv, target, test_size, random_state):
    """Return X_train, X_test, y_train, y_test in the data's own units (a built-in set unscaled)."""
    from sklearn.model_selection import train_test_split

    from discrim.datasets import list_datasets, load_benchmark

    if (dataset is None) == (csv is None):
        raise click.UsageError("give exactly one of --dataset NAME or --csv FILE.")
    if dataset is not None:
        if dataset not in list_datasets():
            raise click.ClickException(
                f"unknown data set {dataset!r}; `discrim datasets` lists them: {', '.join(list_datasets())}."
            )
        # Unscaled: the scaling is fitted inside the model, so a saved model takes raw rows.
        return load_benchmark(dataset, random_state=random_state, test_size=test_size, as_frame=True, scale=False)
    if target is None:
        raise click.UsageError("--csv needs --target COLUMN.")
    X, y = split_target(read_csv(csv), target)
    try:
        parts = train_test_split(X, y, test_size=test_size, stratify=y, random_state=random_state)
    except ValueError as exc:
        raise click.ClickException(f"cannot split the data into training and test parts: {exc}") from None
    return parts


def _show_progress_logs():
    """Print discrim's INFO log records (e.g. per-batch progress of long fits) on stderr."""
    from rich.logging import RichHandler

    logger = logging.getLogger("discrim")
    if not any(isinstance(h, RichHandler) for h in logger.handlers):
        handler = RichHandler(console=Console(stderr=True), show_path=False, show_time=True)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)


@cli.command()
@click.option("--dataset", help="Built-in data set (see `discrim datasets`).")
@click.option("--csv", type=click.Path(dir_okay=False), help="CSV file with features and a target column.")
@click.option("--target", help="Target column of the CSV file.")
@click.option("--model", "model_name", required=True, help="Model name (see `discrim models`).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE", help="Model parameter; repeatable.")
@click.option("--test-size", default=0.3, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True))
@click.option("--random-state", default=0, show_default=True, type=int, help="Seed of the split and the model.")
@click.option("--scale/--no-scale", default=True, show_default=True,
              help="Standardise the features inside the model, with the training part's mean and spread.")
@click.option("--output", type=click.Path(dir_okay=False), help="Save the fitted model here (skops format).")
@click.option("--plot", type=click.Path(dir_okay=False), help="Draw the decision regions (two-feature data) here.")
@_OVERWRITE
@click.option("--quiet", is_flag=True, help="Do not show progress of long fits.")
def fit(dataset, csv, target, model_name, params, test_size, random_state, scale, output, plot, overwrite, quiet):
    """Train a model, evaluate it on a stratified hold-out and print the scores."""
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from discrim._registry import MODELS, make_model
    from discrim.evaluation import score_probabilities
    from discrim.persistence import save_model

    if model_name not in MODELS:
        raise click.ClickException(f"unknown model {model_name!r}; choose one of: {', '.join(MODELS)}.")
    check_output(output, "--output", overwrite=overwrite, inputs=[csv])
    check_output(plot, "--plot", overwrite=overwrite, inputs=[csv])
    check_distinct_outputs(**{"--output": output, "--plot": plot})
    X_train, X_test, y_train, y_test = _load_training_data(dataset, csv, target, test_size, random_state)
    if plot is not None and X_train.shape[1] != 2:
        raise click.ClickException(
            f"--plot draws decision regions for two-feature data; this data has {X_train.shape[1]} features."
        )
    kwargs = parse_params(params)
    estimator = make_model(model_name, **kwargs)
    if "random_state" in estimator.get_params() and "random_state" not in kwargs:
        estimator.set_params(random_state=random_state)
    model = make_pipeline(StandardScaler(), estimator) if scale else clone(estimator)
    if not quiet:
        _show_progress_logs()
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    proba = model.predict_proba(X_test)
    check_finite_probabilities(proba, f"{model_name} on the test part")
    scores = score_probabilities(y_test, proba, model.classes_)

    console.print(f"{model_name} on {dataset or csv}: {len(y_train)} training rows, {len(y_test)} test rows")
    table = Table("metric", "value")
    for label, key in [("log-loss", "log_loss"), ("accuracy", "accuracy"), ("balanced accuracy", "balanced_accuracy"), ("ROC-AUC", "roc_auc")]:
        table.add_row(label, f"{scores[key]:.4f}")
    table.add_row("fit time", f"{fit_seconds:.3f} s")
    console.print(table)
    if output is not None:
        save_model(model, output)
        console.print(f"model saved to {output}")
    if plot is not None:
        from discrim.plotting._mpl import pyplot, save_figure_atomic
        from discrim.plotting.decision_surface import plot_decision_surface

        ax = plot_decision_surface(model, X_train, y_train)
        save_figure_atomic(ax.figure, plot, dpi=120, bbox_inches="tight")
        pyplot().close(ax.figure)
        console.print(f"decision regions drawn to {plot}")


@cli.command()
@click.option("--model", "model_path", required=True, type=click.Path(dir_okay=False), help="Model file from `discrim fit --output`.")
@click.option("--csv", required=True, type=click.Path(dir_okay=False), help="CSV file with the model's feature columns.")
@click.option("--output", type=click.Path(dir_okay=False), help="Write predictions here (CSV); standard output otherwise.")
@_OVERWRITE
def predict(model_path, csv, output, overwrite):
    """Write the predicted class and the class probabilities of every row."""
    from discrim.persistence import load_model

    check_output(output, "--output", overwrite=overwrite, inputs=[model_path, csv])
    model = load_model(model_path)
    check_classifier(model, model_path)
    df = read_csv(csv)
    with damaged_model_errors(model_path):
        X = model_features(model, df)
        proba = np.asarray(model.predict_proba(X), dtype=float)
        classes = np.asarray(model.classes_)
    check_finite_probabilities(proba)
    result = pd.DataFrame({"predicted": classes[np.argmax(proba, axis=1)]})
    for j, label in enumerate(classes):
        result[f"proba_{label}"] = proba[:, j]
    if output is None:
        click.echo(result.to_csv(index=False), nl=False)
    else:
        write_csv_atomic(result, output)
        console.print(f"{len(result)} predictions written to {output}")


def main(argv=None):
    """Run the ``discrim`` command line (SIGINT/SIGTERM clean up and exit with 130/143)."""
    from discrim.cli._signals import run_command

    return run_command(cli, argv, prog_name="discrim")


if __name__ == "__main__":
    main()
