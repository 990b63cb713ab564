"""The ``discrim explain`` command: why a saved prototype set model predicts what it does for one row."""

import dataclasses

import click
import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from discrim.cli._io import (
    check_distinct_outputs,
    check_finite_probabilities,
    check_fitted,
    check_output,
    damaged_model_errors,
    features_named,
    model_features,
    read_csv,
    read_labels,
)


def _prototype_step(model, model_path):
    """Split a loaded model into (preprocessing pipeline or None, fitted PrototypeClassifier)."""
    pre, final = None, model
    if hasattr(model, "steps"):
        pre, final = (model[:-1] if len(model.steps) > 1 else None), model.steps[-1][1]
    check_fitted(final, model_path)
    final = getattr(final, "best_estimator_", None) or final  # PrototypeClassifierCV
    if not hasattr(final, "batches_"):
        raise click.ClickException(
            f"{model_path!r} holds a {type(final).__name__}, not a prototype set model: explain works on "
            "models fitted with `discrim fit --model proset` (or proset-cv)."
        )
    return pre, final


def _fmt(value):
    return f"{value:.4g}"


def _reference_features(model, reference):
    """The model's feature columns of the ``--reference`` CSV; an error names the option and the file
    (it said "not in the CSV", beside the --csv file whose columns were right)."""
    try:
        return model_features(model, read_csv(reference))
    except click.ClickException as exc:
        raise click.ClickException(f"--reference {reference!r}: {exc.message}") from None


@click.command()
@click.option("--model", "model_path", required=True, type=click.Path(dir_okay=False),
              help="Model file from `discrim fit --model proset --output FILE`.")
@click.option("--csv", required=True, type=click.Path(dir_okay=False), help="CSV file with the model's feature columns.")
@click.option("--row", required=True, type=int, help="Position of the row to explain among the CSV's data rows, from 0.")
@click.option("--n-prototypes", default=10, show_default=True, type=click.IntRange(min=0),
              help="How many of the most influential prototypes to list.")
@click.option("--n-batches", default=None, type=click.IntRange(min=0),
              help="Explain the model of the first N batches (default: all).")
@click.option("--target", "target", default=None,
              help="Column of the CSV with the true class, shown next to the prediction.")
@click.option("--reference", default=None, type=click.Path(dir_okay=False),
              help="CSV of reference rows (e.g. the training data): the row's familiarity is ranked among theirs.")
@click.option("--report", default=None, type=click.Path(dir_okay=False),
              help="Also write the explanation to this .xlsx or .html file (all prototypes; written atomically).")
@click.option("--overwrite", is_flag=True, help="Replace an existing --report file.")
def explain(model_path, csv, row, n_prototypes, n_batches, target, reference, report, overwrite):
    """Explain one prediction of a prototype set model: class probabilities split into the marginals'
    and the prototypes' shares, the most influential prototypes, and each active feature's
    contribution to the log-probability of the predicted class."""
    from discrim.persistence import load_model
    from discrim.prototype import explain as explain_row
    from discrim.prototype import write_report
    from discrim.utils.validation import plain_label

    if report is not None and not report.lower().endswith((".xlsx", ".html", ".htm")):
        raise click.ClickException(f"--report: {report!r} must end in .xlsx or .html.")
    check_output(report, "--report", overwrite=overwrite, inputs=(model_path, csv, reference))
    check_distinct_outputs(**{"--report": report})
    try:
        model = load_model(model_path)
    except ValueError as exc:
        raise click.ClickException(str(exc).splitlines()[0]) from None
    with damaged_model_errors(model_path):
        pre, final = _prototype_step(model, model_path)
    df = read_csv(csv)
    if not 0 <= row < len(df):
        raise click.ClickException(
            f"--row {row} is out of range: {csv!r} has {len(df)} data rows, numbered 0 to {len(df) - 1}."
        )
    if target is not None and target not in df.columns:
        raise click.ClickException(f"--target {target!r} is not a column of {csv!r}.")
    if n_batches is not None and n_batches > len(final.batches_):
        raise click.ClickException(f"--n-batches {n_batches}: the model has {len(final.batches_)} batches.")
    true_class = None
    if target is not None:
        # read as `discrim fit` reads it (text; only an empty cell is missing), so that "0.0" or "NA"
        # are the classes the model knows by those names
        true_class = read_labels(csv, target).iloc[row]
        if pd.isna(true_class):
            click.echo(f"row {row} has no label in {target!r}: its true class is not shown.")
            true_class = None
        else:
            true_class = plain_label(true_class)
            if not np.any(np.asarray(final.classes_) == true_class):
                raise click.ClickException(f"--target: row {row} has class {true_class!r}, which the model does not "
                                           f"know (its classes: {np.asarray(final.classes_).tolist()}).")
        df = df.drop(columns=[target])
    with damaged_model_errors(model_path):
        X = model_features(model, df)
        X_reference = _reference_features(model, reference) if reference is not None else None
    X_row = X.iloc[[row]] if hasattr(X, "iloc") else X[[row]]
    input_names = list(X.columns) if hasattr(X, "columns") else None
    try:
        with damaged_model_errors(model_path):
            names = None
            if getattr(final, "feature_names_in_", None) is None and pre is None and input_names is not None:
                names = input_names
            # sample_names None: the CSV rows the model was fitted on, where `discrim fit` and `discrim tune`
            # recorded them (training_rows_)
            with features_named(input_names or []):  # the warnings name the features, not positions
                ex = explain_row(model, X_row, true_class, reference=X_reference, n_prototypes=None,
                                 n_batches=n_batches, feature_names=names)
    except ValueError as exc:
        raise click.ClickException(f"cannot explain row {row}: {str(exc).splitlines()[0]}") from None
    check_finite_probabilities(np.asarray(ex.proba, dtype=float)[None, :], f"the model at row {row}")
    if report is not None:
        write_report(report, ex.to_frames(), title=f"explanation of row {row} of {csv}")
    ex = dataclasses.replace(ex, prototypes=ex.prototypes.iloc[:n_prototypes])
    # CSV values next to the model's, when preprocessing keeps the columns one to one (e.g. scaling)
    raw = dict(zip(ex.features["feature"], ex.features["original"])) if "original" in ex.features else {}

    console = Console()
    quantile = ("" if ex.familiarity_quantile is None else
                f", at or above {100 * ex.familiarity_quantile:.0f}% of the reference rows' familiarity")
    truth = "" if ex.true_class is None else f"; true class [bold]{ex.true_class!r}[/bold]"
    console.print(
        f"[bold]row {row}[/bold] of {csv}: predicted [bold]{ex.predicted!r}[/bold] "
        f"(probability {ex.proba[ex.predicted]:.4f}){truth}; familiarity {ex.familiarity:.4g} "
        f"(total kernel weight of the {ex.n_prototypes_total} prototypes at this row; low = far from the training "
        f"data{quantile})"
    )

    table = Table("class", "probability", "from marginals", "from prototypes",
                  title="class probabilities (marginal share + prototype share)")
    for label in ex.proba.index:
        table.add_row(str(label), f"{ex.proba[label]:.4f}", f"{ex.marginal[label]:.4f}",
                      f"{ex.proba[label] - ex.marginal[label]:.4f}")
    console.print(table)

    table = Table("feature", "value (model)", *(["value (CSV)"] if raw else []), "contribution",
                  title=f"feature contributions to log p({ex.predicted!r})")
    for name, value, contribution in zip(ex.features["feature"], ex.features["value"], ex.features["contribution"]):
        cells = [str(name), _fmt(value)]
        if raw:
            cells.append(_fmt(raw[name]) if name in raw else "")
        table.add_row(*cells, f"{contribution:+.4f}")
    console.print(table)
    console.print(
        f"The contributions add up to log p = {ex.log_proba:.4f} minus {ex.baseline_log_proba:.4f}, its value if the "
        "row matched every prototype on every feature. Negative: the row's distance from the prototypes along the "
        "feature lowers the probability of the predicted class; positive: it raises it."
    )

    shown = len(ex.prototypes)
    protos = ex.prototypes
    # a prototype is a training row: its CSV row where the model recorded them, else its position
    # among the rows the model was fitted on
    in_csv = "sample_name" in protos
    table = Table("batch", "CSV row" if in_csv else "training row", "class", "weight", "similarity", "impact",
                  "adds to p(class)", "dominant", title=f"the {shown} most influential of {ex.n_prototypes_total} prototypes")
    for cells in zip(protos["batch"], protos["sample_name" if in_csv else "sample_index"], protos["target"],
                     protos["prototype_weight"],
                     protos["similarity"], protos["impact"], protos["contribution"], protos["dominant_set"]):
        batch, sample, label, weight, similarity, impact, contribution, dominant = cells
        table.add_row(str(batch), str(sample), str(label), _fmt(weight), _fmt(similarity), _fmt(impact),
                      f"{contribution:.4f}", "yes" if dominant else "")
    console.print(table)
    console.print("impact = weight x similarity (the kernel value); a prototype adds impact / (1 + familiarity) "
                  "to the probability of its class. "
                  + ("CSV row = the data row of the training CSV (from 0) that the prototype is. " if in_csv else
                     "training row = the prototype's position among the rows the model was fitted on (the "
                     "training part of the split, for models saved by `discrim fit`). ")
                  + "dominant = the prototypes that decide the predicted class (proset's dominant set)."
                  + (f" Report written to {report}." if report is not None else ""))
