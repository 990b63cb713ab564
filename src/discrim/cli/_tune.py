"""The ``discrim tune`` command: cross-validated search for a prototype set, with plots and a report."""

import os
import shutil
import tempfile
from pathlib import Path

import click
import numpy as np
from rich.console import Console
from rich.table import Table

from discrim.cli._io import (
    SEED,
    check_finite_probabilities,
    check_writable_folder,
    drop_option,
    checked_device,
    device_option,
    drawable_rows,
    on_host,
    remember_training_rows,
)
from discrim.utils._files import current_umask

console = Console()

_METRICS = [("log-loss", "log_loss"), ("ROC-AUC", "roc_auc"), ("balanced accuracy", "balanced_accuracy"),
            ("accuracy", "accuracy")]


_OUTPUT_NAMES = ("model.skops", "search.png", "prototype_map.png", "decision_surface.png", "report.md", "report.html")


def _number_list(text, option):
    """Comma-separated numbers as a list of float (None for None), or a ClickException naming ``option``."""
    if text is None:
        return None
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise click.ClickException(f"{option} takes numbers separated by commas, e.g. 1e-8,1e-4; got {text!r}.") from None
    if not values:
        raise click.ClickException(f"{option} takes numbers separated by commas, e.g. 1e-8,1e-4; got {text!r}.")
    return values


def _prepare_output(output, overwrite, csv):
    """Check DIR before any work; return its Path, or None without --output."""
    if output is None:
        return None
    path = Path(output)
    if path.exists() and not path.is_dir():
        raise click.ClickException(f"--output: {str(path)!r} exists and is not a folder.")
    if csv is not None and Path(csv).resolve().parent == path.resolve() and Path(csv).name in _OUTPUT_NAMES:
        raise click.ClickException(f"--output: the input {csv!r} would be replaced; choose another folder.")
    existing = [name for name in _OUTPUT_NAMES if (path / name).exists()]
    if existing and not overwrite:
        raise click.ClickException(
            f"--output: {str(path)!r} already holds {', '.join(existing)}; give --overwrite to replace them, "
            "or another folder."
        )
    check_writable_folder(path if path.exists() else path.resolve().parent, "--output")
    return path


def _checked_n_jobs(n_jobs):
    """``--n-jobs``, refused where it is 0 (joblib's counts are positive, or -1 for every core)."""
    if n_jobs == 0:
        raise click.BadParameter("0 runs nothing: give a positive count of tasks, or -1 for every core.",
                                 param_hint="'--n-jobs'")
    return n_jobs


def _check_folds(n_folds, y_train):
    """Refuse more ``--cv`` folds than the smallest class of the training part has rows (each fold of
    the stratified split needs one of each), naming the option and the most it can be."""
    classes, counts = np.unique(np.asarray(y_train).astype(str), return_counts=True)
    smallest = int(counts.min())
    if n_folds > smallest:
        raise click.ClickException(
            f"--cv {n_folds}: class {str(classes[counts.argmin()])!r} has {smallest} training rows, and every fold of the "
            f"stratified cross-validation needs one of each class: give --cv {max(smallest, 2)} or fewer"
            + (" (or more rows of that class)." if smallest >= 2 else ", with more rows of that class."))


def _search_with_progress(model, X_train, y_train, quiet):
    """Fit ``model`` (a search, or a pipeline ending in one) with a rich progress bar."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    search = model[-1] if hasattr(model, "steps") else model
    if quiet:
        model.fit(X_train, y_train)
        return
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        bar = progress.add_task("cross-validated search", total=None)

        def advance(info):
            progress.update(bar, total=info.n_tasks, completed=info.n_done)

        search.set_params(callback=advance)
        try:
            model.fit(X_train, y_train)
        finally:
            search.set_params(callback=None)  # a saved model must not hold the progress bar


def _write_outputs(folder, model, search, X_train, y_train, report_text_fn, fmt):
    """Write model, figures and report into ``folder`` (a fresh temporary folder)."""
    from discrim.model_selection._report import write_text_atomic
    from discrim.persistence import save_model
    from discrim.plotting._mpl import pyplot, save_figure_atomic
    from discrim.plotting.prototype_map import plot_prototype_map
    from discrim.plotting.search import plot_search

    plt = pyplot()
    written = ["model.skops"]
    save_model(on_host(model), folder / "model.skops")
    figures = {"Cross-validated search": "search.png", "Prototype map": "prototype_map.png"}
    for draw, name in [(plot_search, "search.png"), (plot_prototype_map, "prototype_map.png")]:
        ax = draw(search)
        save_figure_atomic(ax.figure, folder / name, dpi=120, bbox_inches="tight")
        plt.close(ax.figure)
        written.append(name)
    drawn = drawable_rows(X_train, y_train)
    if X_train.shape[1] == 2 and drawn.any():
        from discrim.plotting.decision_surface import plot_decision_surface

        ax = plot_decision_surface(model, X_train[drawn], y_train[drawn])
        save_figure_atomic(ax.figure, folder / "decision_surface.png", dpi=120, bbox_inches="tight")
        plt.close(ax.figure)
        figures["Decision surface (training data)"] = "decision_surface.png"
        written.append("decision_surface.png")
    report_name = f"report.{fmt}"
    write_text_atomic(report_text_fn(figures), folder / report_name)
    written.append(report_name)
    return written


@click.command()
@click.option("--dataset", help="Built-in data set (see `discrim datasets`).")
@click.option("--csv", type=click.Path(dir_okay=False), help="CSV file with features and a target column.")
@click.option("--target", help="Target column of the CSV file.")
@click.option("--test-size", default=0.3, show_default=True,
              type=click.FloatRange(0, 1, min_open=True, max_open=True), help="Fraction held out for testing.")
@click.option("--max-batches", default=10, show_default=True, type=click.IntRange(0), help="Largest batch count tried.")
@click.option("--n-alphas", default=11, show_default=True, type=click.IntRange(1),
              help="alpha_feature values tried, log-spaced from 1e-6 to 1e-1 (1: just 1e-3).")
@click.option("--n-batches-no-change", default=None, type=click.IntRange(1),
              help="Stop a search fit after this many batches in a row that did not lower its validation "
                   "loss (default: no stop). With --max-batches 20 to 50, 5 keeps the cost linear in the "
                   "batches that help.")
@click.option("--search-max-iter", default=30, show_default=True, type=click.IntRange(1),
              help="The search's solver iteration cap per batch (the final refit is not capped); 100 for "
                   "searches over many batches.")
@click.option("--selection", type=click.Choice(["one_se", "best"]), default="one_se", show_default=True,
              help="one_se: proset's '1-SE' rule, the sparsest point (largest alpha_feature, then fewest "
                   "batches) whose mean is within one standard deviation over the folds of the best mean; "
                   "best: the lowest mean validation loss.")
@click.option("--scoring", type=click.Choice(["log_loss", "roc_auc", "balanced_accuracy"]), default="log_loss",
              show_default=True, help="The validation score the rule selects by.")
@click.option("--alpha-prototype", "alpha_prototypes", default=None, metavar="VALUES",
              help="alpha_prototype values to search as a second grid axis, comma-separated (e.g. 1e-8,1e-4); "
                   "default: the fixed 1e-8.")
@click.option("--n-candidates", default=1000, show_default=True, type=click.IntRange(1),
              help="Candidates drawn per batch (at most half of each class).")
@click.option("--cv", "n_folds", default=5, show_default=True, type=click.IntRange(2), help="Cross-validation folds.")
@click.option("--n-jobs", default=None, type=int, callback=lambda ctx, param, value: _checked_n_jobs(value),
              help="Parallel search tasks (-1: all cores; default: one task at a time).")
@click.option("--random-state", default=0, show_default=True, type=SEED, help="Seed of the split and the search.")
@click.option("--scale/--no-scale", default=True, show_default=True,
              help="Standardise the features inside the model: fitted on each fold's training part during the "
                   "search and on the whole training part for the final model.")
@click.option("--output", type=click.Path(file_okay=False), help="Folder for model.skops, the plots and the report.")
@click.option("--overwrite", is_flag=True, help="Replace the files of an earlier run in the --output folder.")
@click.option("--report-format", type=click.Choice(["md", "html"]), default="md", show_default=True,
              help="The report's format in the --output folder: Markdown (report.md) or HTML (report.html).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@drop_option
@device_option
def tune(dataset, csv, target, test_size, max_batches, n_alphas, n_batches_no_change, search_max_iter, selection,
         scoring, alpha_prototypes, n_candidates, n_folds, n_jobs, random_state, scale, output, overwrite,
         report_format, quiet, drop, device):
    """Select alpha_feature and the batch count of a prototype set by cross-validation.

    Runs PrototypeClassifierCV on the training part, prints the selected hyperparameters and the
    test metrics, and with --output DIR writes model.skops, search.png, prototype_map.png,
    decision_surface.png (two-feature data) and the report into DIR.

    A search over many batches (the proset report's optima of digits and xor-6f lay at 24 and 33):
    --max-batches 50 --n-batches-no-change 5 --search-max-iter 100 --selection best.
    """
    from sklearn.preprocessing import StandardScaler

    from discrim.cli.main import _load_training_data
    from discrim.evaluation import score_probabilities
    from discrim.model_selection import PrototypeClassifierCV
    from discrim.model_selection._report import model_summary, search_report
    from discrim.model_selection._search import threshold_label

    device = checked_device(device)
    prototype_grid = _number_list(alpha_prototypes, "--alpha-prototype")
    out_dir = _prepare_output(output, overwrite, csv)
    X_train, X_test, y_train, y_test = _load_training_data(dataset, csv, target, test_size, random_state, drop=drop)
    _check_folds(n_folds, y_train)
    grid = np.logspace(-6, -1, n_alphas) if n_alphas > 1 else np.array([1e-3])
    # the scaler is fitted inside every fold on its training part, and with the final model on all rows
    search = PrototypeClassifierCV(alpha_feature_grid=grid, max_batches=max_batches, cv=n_folds, n_jobs=n_jobs,
                                   n_batches_no_change=n_batches_no_change, search_max_iter=search_max_iter,
                                   selection=selection, n_candidates=n_candidates, random_state=random_state,
                                   device=device, scoring=scoring, alpha_prototype_grid=prototype_grid,
                                   transformer=StandardScaler() if scale else None)
    model = search
    try:
        _search_with_progress(model, X_train, y_train, quiet)
    except ValueError as exc:
        raise click.ClickException(f"the search failed: {exc}".splitlines()[0]) from None
    remember_training_rows(model, X_train, csv)
    proba = model.predict_proba(X_test)
    check_finite_probabilities(proba, "the tuned model on the test part")
    metrics = score_probabilities(y_test, proba, model.classes_)
    summary = model_summary(search)
    source = dataset or csv

    table = Table("hyperparameter / model", "value", title=f"selected on {source} ({len(y_train)} training rows)")
    table.add_row("alpha_feature", f"{search.best_params_['alpha_feature']:.3g}")
    if "alpha_prototype" in search.best_params_:
        table.add_row("alpha_prototype", f"{search.best_params_['alpha_prototype']:.3g}")
    table.add_row("n_batches", str(search.best_params_["n_batches"]))
    table.add_row(f"threshold ({threshold_label(scoring)})", f"{search.threshold_:.4f}")
    table.add_row("active features", str(len(summary["active_features"])))
    table.add_row("prototypes", str(summary["n_prototypes"]))
    table.add_row("search time", f"{search.search_time_:.2f} s")
    console.print(table)
    scores = Table("metric", "value", title=f"test metrics ({len(y_test)} rows)")
    for label, key in _METRICS:
        scores.add_row(label, f"{metrics[key]:.4f}")
    console.print(scores)
    if summary["n_prototypes"] == 0:
        # the rule's pick, but a model that predicts the training class frequencies for every row
        console.print(
            f"note: the search chose a model without prototypes ({search.best_params_['n_batches']} batches): "
            "it predicts the training class frequencies for every row, as the 1-SE rule allows where the folds' "
            "scores spread widely. Try --selection best, more rows, or a larger --max-batches.")

    if out_dir is None:
        return
    data = {
        "source": source,
        "training rows": len(y_train),
        "test rows": len(y_test),
        "features": X_train.shape[1],
        "classes": ", ".join(map(str, np.asarray(model.classes_))),
        "features standardised inside the model": "yes" if scale else "no",
    }
    report_metrics = {label: metrics[key] for label, key in _METRICS}

    def report_text(figures):
        return search_report(search, title=f"discrim tune: {source}", data=data, metrics=report_metrics,
                             figures=figures, fmt=report_format)

    created = not out_dir.exists()
    out_dir.mkdir(exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out_dir, prefix=".tune-"))
    try:
        written = _write_outputs(staging, model, search, X_train, y_train, report_text, report_format)
        mode = 0o666 & ~current_umask()  # temporary files are private; the outputs get the usual mode
        for name in written:  # every file is complete before it takes its final name
            os.chmod(staging / name, mode)
            os.replace(staging / name, out_dir / name)
        # the earlier run's outputs that this one did not write (the other report format, a decision
        # surface of two-feature data) would read as this run's: --overwrite replaced the run
        for name in _OUTPUT_NAMES:
            if name not in written and (out_dir / name).is_file():
                (out_dir / name).unlink()
    except BaseException as exc:  # an interruption too: no staging folder is left behind
        shutil.rmtree(staging, ignore_errors=True)
        if created and not any(out_dir.iterdir()):
            out_dir.rmdir()
        if not isinstance(exc, Exception):
            raise
        raise click.ClickException(f"could not write the outputs into {str(out_dir)!r}: {exc}".splitlines()[0]) from None
    shutil.rmtree(staging, ignore_errors=True)
    console.print(f"wrote {', '.join(written)} into {out_dir}")
