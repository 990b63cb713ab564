"""The ``discrim explain`` command: why a saved prototype set model predicts what it does for one row."""

import click
import numpy as np
from rich.console import Console
from rich.table import Table

from discrim.cli._io import check_finite_probabilities, damaged_model_errors, model_features, read_csv


def _prototype_step(model, model_path):
    """Split a loaded model into (preprocessing pipeline or None, fitted PrototypeClassifier)."""
    pre, final = None, model
    if hasattr(model, "steps"):
        pre, final = (model[:-1] if len(model.steps) > 1 else None), model.steps[-1][1]
    final = getattr(final, "best_estimator_", None) or final  # PrototypeClassifierCV
    if not hasattr(final, "batches_"):
        raise click.ClickException(
            f"{model_path!r} holds a {type(final).__name__}, not a prototype set model: explain works on "
            "models fitted with `discrim fit --model proset` (or proset-cv)."
        )
    return pre, final


def _model_feature_names(pre, final, n_inputs_names):
    """Names of the features the prototype model sees, when they can be told."""
    names = getattr(final, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    if pre is not None:
        try:
            out = [str(n) for n in pre.get_feature_names_out()]
        except (AttributeError, ValueError, TypeError):
            out = None
        if out is not None and len(out) == final.n_features_in_:
            return out
    if n_inputs_names is not None and len(n_inputs_names) == final.n_features_in_:
        return list(n_inputs_names)
    return None


def _fmt(value):
    return f"{value:.4g}"


@click.command()
@click.option("--model", "model_path", required=True, type=click.Path(dir_okay=False),
              help="Model file from `discrim fit --model proset --output FILE`.")
@click.option("--csv", required=True, type=click.Path(dir_okay=False), help="CSV file with the model's feature columns.")
@click.option("--row", required=True, type=int, help="Position of the row to explain among the CSV's data rows, from 0.")
@click.option("--n-prototypes", default=10, show_default=True, type=click.IntRange(min=0),
              help="How many of the most influential prototypes to list.")
def explain(model_path, csv, row, n_prototypes):
    """Explain one prediction of a prototype set model: class probabilities split into the marginals'
    and the prototypes' shares, the most influential prototypes, and each active feature's
    contribution to the log-probability of the predicted class."""
    from discrim.persistence import load_model
    from discrim.prototype._explain import explain_prediction

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
    with damaged_model_errors(model_path):
        X = model_features(model, df)
    X_row = X.iloc[[row]] if hasattr(X, "iloc") else X[[row]]
    input_names = list(X.columns) if hasattr(X, "columns") else None
    try:
        with damaged_model_errors(model_path):
            X_model = pre.transform(X_row) if pre is not None else X_row
            names = _model_feature_names(pre, final, input_names)
            if names is not None and getattr(final, "feature_names_in_", None) is None and hasattr(X_model, "iloc"):
                X_model = X_model.to_numpy()
            ex = explain_prediction(final, X_model, n_prototypes=n_prototypes, feature_names=names)
    except ValueError as exc:
        raise click.ClickException(f"cannot explain row {row}: {str(exc).splitlines()[0]}") from None
    check_finite_probabilities(np.asarray(ex.proba, dtype=float)[None, :], f"the model at row {row}")
    # CSV values next to the model's, when preprocessing keeps the columns one to one (e.g. scaling)
    raw = dict(zip(input_names, np.asarray(X_row, dtype=float)[0])) if pre is not None and input_names else {}

    console = Console()
    console.print(
        f"[bold]row {row}[/bold] of {csv}: predicted [bold]{ex.predicted!r}[/bold] "
        f"(probability {ex.proba[ex.predicted]:.4f}); familiarity {ex.familiarity:.4g} "
        f"(total kernel weight of the {ex.n_prototypes_total} prototypes at this row; low = far from the training data)"
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
    table = Table("batch", "sample index", "class", "weight", "similarity", "impact", "adds to p(class)",
                  title=f"the {shown} most influential of {ex.n_prototypes_total} prototypes")
    protos = ex.prototypes
    for cells in zip(protos["batch"], protos["sample_index"], protos["target"], protos["prototype_weight"],
                     protos["similarity"], protos["impact"], protos["contribution"]):
        batch, sample, target, weight, similarity, impact, contribution = cells
        table.add_row(str(batch), str(sample), str(target), _fmt(weight), _fmt(similarity), _fmt(impact),
                      f"{contribution:.4f}")
    console.print(table)
    console.print("impact = weight x similarity (the kernel value); a prototype adds impact / (1 + familiarity) "
                  "to the probability of its class. sample index = the prototype's row in the X the model was "
                  "fitted on.")
