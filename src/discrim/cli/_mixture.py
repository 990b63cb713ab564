"""The ``discrim mixture`` command: fit a finite mixture to CSV columns and report it."""

import warnings

import click
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from discrim.cli._io import check_writable, numeric_features, read_csv

FAMILIES = (
    "gaussian",
    "gaussian-diag",
    "gaussian-tied",
    "gaussian-spherical",
    "poisson",
    "binomial",
    "bernoulli",
    "categorical",
)


def make_family(name, n_trials=None, n_categories=None):
    """Build the component family named on the command line.

    Parameters
    ----------
    name : str
        One of :data:`FAMILIES`.
    n_trials : int or None
        Number of trials, required by (and only by) ``"binomial"``.
    n_categories : int or None
        Number of category codes, used by (and only by) ``"categorical"``.

    Returns
    -------
    family : ComponentFamily
    """
    from discrim import distributions as d

    if name == "binomial" and n_trials is None:
        raise click.UsageError("--family binomial needs --n-trials (the number of trials per row).")
    if name != "binomial" and n_trials is not None:
        raise click.UsageError(f"--n-trials applies to --family binomial only, not {name}.")
    if name != "categorical" and n_categories is not None:
        raise click.UsageError(f"--n-categories applies to --family categorical only, not {name}.")
    if name.startswith("gaussian"):
        covariance_type = {"gaussian": "full"}.get(name, name.partition("-")[2])
        return d.Gaussian(covariance_type=covariance_type)
    if name == "binomial":
        return d.Binomial(n_trials=n_trials)
    if name == "categorical":
        return d.Categorical(n_categories=n_categories)
    return {"poisson": d.Poisson, "bernoulli": d.Bernoulli}[name]()


def read_columns(csv, columns):
    """Read the numeric columns of a CSV file.

    Parameters
    ----------
    csv : path-like
    columns : sequence of str
        Column names; empty means every numeric column.

    Returns
    -------
    X : ndarray of shape (n_samples, n_columns)
    names : list of str
    """
    import pandas as pd

    df = read_csv(csv)
    if not columns:
        columns = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
        if not columns:
            raise click.ClickException(f"CSV file {str(csv)!r} has no numeric column to fit.")
    X = numeric_features(df, columns, what="data")
    return X.to_numpy(dtype=np.float64), [str(c) for c in columns]


def _fmt(value):
    return f"{value:.6g}"


def _parameter_tables(mixture, names):
    """Rich tables of the fitted weights and parameters, one row per component."""
    from rich.markup import escape
    from rich.table import Table

    weights = np.asarray(mixture.weights_)
    n_comp = weights.shape[0]
    shared = set(mixture.family.shared_params())  # e.g. the tied covariance: no component axis
    main = Table(title="Fitted components")
    main.add_column("component", justify="right")
    main.add_column("weight", justify="right")
    cells = [[str(r), _fmt(weights[r])] for r in range(n_comp)]
    matrices = []  # (title, 2-d array, row labels, column labels)
    for pname, value in mixture.params_.items():
        arr = np.asarray(value, dtype=float)
        if pname in shared:
            arr = arr.reshape(-1, arr.shape[-1]) if arr.ndim else arr.reshape(1, 1)
            rows = names if arr.shape[0] == len(names) else [str(i) for i in range(arr.shape[0])]
            cols = names if arr.shape[1] == len(names) else [str(j) for j in range(arr.shape[1])]
            matrices.append((f"{pname} (shared by all components)", arr, rows, cols))
        elif arr.ndim == 1 and arr.shape[0] == n_comp:
            main.add_column(escape(pname), justify="right")
            for r in range(n_comp):
                cells[r].append(_fmt(arr[r]))
        elif arr.ndim == 2 and arr.shape[0] == n_comp:
            labels = names if arr.shape[1] == len(names) else [str(j) for j in range(arr.shape[1])]
            for j, lab in enumerate(labels):
                main.add_column(escape(f"{pname}[{lab}]"), justify="right")  # not rich markup
                for r in range(n_comp):
                    cells[r].append(_fmt(arr[r, j]))
        elif arr.ndim == 3 and arr.shape[0] == n_comp:
            # (K, d, d) covariances, or (K, d, C) category probabilities (columns: codes).
            rows = names if arr.shape[1] == len(names) else [str(j) for j in range(arr.shape[1])]
            cols = names if pname == "covariance" else [str(j) for j in range(arr.shape[2])]
            for r in range(n_comp):
                matrices.append((f"{pname}, component {r}", arr[r], rows, cols))
        else:
            flat = arr.reshape(arr.shape[0], -1) if arr.ndim else arr.reshape(1, 1)
            matrices.append((pname, flat, [str(i) for i in range(flat.shape[0])],
                             [str(j) for j in range(flat.shape[1])]))
    for row in cells:
        main.add_row(*row)
    tables = [main]
    for title, arr, rows, cols in matrices:
        t = Table(title=escape(title))
        t.add_column("")
        for c in cols:
            t.add_column(escape(str(c)), justify="right")
        for i, lab in enumerate(rows):
            t.add_row(escape(str(lab)), *(_fmt(v) for v in arr[i]))
        tables.append(t)
    return tables


def _trace_table(mixture):
    from rich.table import Table

    bounds = np.asarray(mixture.lower_bounds_, dtype=float)
    t = Table(title="Log-likelihood trace (mean weighted log-likelihood per row)")
    t.add_column("iteration", justify="right")
    t.add_column("log-likelihood", justify="right")
    t.add_column("change", justify="right")
    for i, b in enumerate(bounds):  # entry 0 is the initial parameters, then one per EM step
        change = "" if i == 0 else f"{b - bounds[i - 1]:.3e}"
        t.add_row("0 (start)" if i == 0 else str(i), f"{b:.8g}", change)
    return t


def _summary_table(mixture, X):
    from rich.table import Table

    log_lik = float(np.sum(mixture.score_samples(X)))
    t = Table(title="Fit")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_row("rows", str(X.shape[0]))
    t.add_row("components", str(np.asarray(mixture.weights_).shape[0]))
    t.add_row("converged", str(bool(mixture.converged_)))
    t.add_row("iterations", str(int(mixture.n_iter_)))
    t.add_row("log-likelihood", f"{log_lik:.8g}")
    t.add_row("BIC (lower is better)", f"{float(mixture.bic(X)):.8g}")
    t.add_row("AIC (lower is better)", f"{float(mixture.aic(X)):.8g}")
    return t


def _write_plot(mixture, X, names, path):
    # A bare Figure renders with Agg without touching pyplot's global backend or figure list.
    from matplotlib.figure import Figure

    from discrim.plotting._mpl import save_figure_atomic
    from discrim.plotting.mixture import plot_convergence, plot_mixture_density

    with_density = X.shape[1] <= 2
    fig = Figure(figsize=(11 if with_density else 6, 4.5))
    axes = fig.subplots(1, 2 if with_density else 1, squeeze=False)
    plot_convergence(mixture, ax=axes[0, 0])
    if with_density:
        ax = plot_mixture_density(mixture, X, ax=axes[0, 1])
        ax.set_xlabel(names[0])
        if X.shape[1] == 2:
            ax.set_ylabel(names[1])
    fig.tight_layout()
    save_figure_atomic(fig, path)


@click.command("mixture")
@click.option("--csv", "csv", required=True, type=click.Path(dir_okay=False),
              help="CSV file with a header row.")
@click.option("--columns", multiple=True,
              help="Columns to fit, comma-separated or repeated (default: every numeric column).")
@click.option("--family", type=click.Choice(FAMILIES), default="gaussian", show_default=True,
              help="Component distribution; gaussian is full-covariance.")
@click.option("--components", "n_components", type=click.IntRange(min=1), default=2, show_default=True,
              help="Number of mixture components K.")
@click.option("--n-trials", type=click.IntRange(min=1), default=None,
              help="Trials per row, for --family binomial.")
@click.option("--n-categories", type=click.IntRange(min=2), default=None,
              help="Category codes 0..C-1, for --family categorical (default: largest code + 1).")
@click.option("--n-init", type=click.IntRange(min=1), default=1, show_default=True,
              help="EM restarts; the best run is kept.")
@click.option("--max-iter", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--tol", type=click.FloatRange(min=0), default=1e-3, show_default=True,
              help="Stop when the mean log-likelihood improves by less than this.")
@click.option("--random-state", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Write the convergence curve (and, for one or two columns, the fitted density) "
                   "to this image file (format from the suffix, e.g. .png, .pdf, .svg).")
def mixture(csv, columns, family, n_components, n_trials, n_categories, n_init, max_iter, tol, random_state, plot_path):
    """Fit a finite mixture by EM to columns of a CSV file.

    Prints the fitted weights and parameters, the log-likelihood trace, BIC and AIC.
    """
    from rich.console import Console

    from discrim.mixture import FiniteMixture

    check_writable(plot_path, "--plot")
    columns = [c.strip() for spec in columns for c in spec.split(",") if c.strip()]
    X, names = read_columns(csv, columns)
    if family == "categorical" and n_categories is None:
        n_categories = max(2, int(np.max(X)) + 1)
    fam = make_family(family, n_trials, n_categories)
    model = FiniteMixture(fam, n_components=n_components, n_init=n_init, max_iter=max_iter, tol=tol,
                          random_state=random_state)
    try:
        with warnings.catch_warnings():  # reported below as one line instead
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X)
        tables = [*_parameter_tables(model, names), _trace_table(model), _summary_table(model, X)]
    except (ValueError, TypeError) as exc:
        raise click.ClickException(str(exc)) from None

    console = Console(soft_wrap=False)
    console.print(f"{type(fam).__name__} mixture with {n_components} component(s) on "
                  f"{len(names)} column(s): {', '.join(names)}", markup=False)
    for table in tables:
        console.print(table)
    if not model.converged_:
        console.print(f"warning: EM did not converge in {max_iter} iterations; raise --max-iter or --tol.")
    if plot_path is not None:
        try:
            _write_plot(model, X, names, plot_path)
        except (ValueError, OSError) as exc:
            raise click.ClickException(f"cannot write the plot {plot_path}: {exc}") from None
        console.print(f"plot written to {plot_path}")
