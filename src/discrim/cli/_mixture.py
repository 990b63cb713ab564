"""The ``discrim mixture`` command: fit a finite mixture to CSV columns and report it."""

import functools
import warnings
from contextlib import ExitStack

import click
import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from discrim.cli._io import (
    SEED,
    check_device_data,
    check_distinct_outputs,
    check_output,
    features_named,
    check_output_suffix,
    header_cells,
    check_plot_format,
    checked_device,
    column_list,
    device_option,
    numeric_features,
    read_csv,
    missing_words,
    read_csv_as_written,
    read_label_columns,
    refuse_numbers_with_text,
    sequence_columns,
    split_names,
    truth_values_as_numbers,
)
from discrim.cli._lazy import (
    dask_cluster,
    em_progress,
    input_bytes,
    lazy_features,
    lazy_options,
    numeric_columns,
    read_lazy,
)
from discrim.cli._warnings import OPTION_OF, command_line_advice
from discrim.distributions import FAMILY_CLASSES
from discrim.distributions._gaussian_prior import PRIOR_MODELS
from discrim.utils._files import atomic_output

#: ``--family`` name -> (family class, the options the name stands for), from the classes.
FAMILY_NAMES = {name: (cls, options) for cls in FAMILY_CLASSES for name, options in cls.cli_names.items()}
FAMILIES = tuple(FAMILY_NAMES)
# ``--family`` name -> the options its class takes (what the flags below may set).
_ACCEPTED = {name: set(cls().get_params(deep=False)) for name, (cls, _) in FAMILY_NAMES.items()}
#: ``--family mclust``: every Gaussian covariance model of mclust, labelled by its name in the output.
MCLUST_FAMILIES = {name.removeprefix("gaussian-"): name for name in FAMILIES
                   if name.removeprefix("gaussian-") in {"EII", "VII", "EEI", "VEI", "EVI", "VVI", "EEE", "VEE", "EVE",
                                                          "VVE", "EEV", "VEV", "EVV", "VVV"}}
_PLOT_KINDS = ("overview", "classification", "uncertainty", "density")


def make_family(name, n_trials=None, n_categories=None, prior=False):
    """Build the component family named on the command line.

    Parameters
    ----------
    name : str
        One of :data:`FAMILIES`.
    n_trials : int or None
        Number of trials, required by families with an ``n_trials`` option (binomial).
    n_categories : int or None
        Number of category codes, for families with an ``n_categories`` option (categorical).
    prior : bool, default=False
        mclust's default conjugate prior (``--prior``), for the families with a ``prior`` option.

    Returns
    -------
    family : ComponentFamily
    """
    cls, options = FAMILY_NAMES[name]
    accepted = _ACCEPTED[name]
    flags = {"n_trials": n_trials, "n_categories": n_categories, "prior": "default" if prior else None}
    if "n_trials" in accepted and n_trials is None:
        raise click.UsageError(f"--family {name} needs --n-trials (the number of trials per row).")
    return cls(**options, **{k: v for k, v in flags.items() if k in accepted and v is not None})


def family_takes(name, option):
    """Whether the family named ``name`` has the option ``option`` (e.g. "n_trials")."""
    return option in _ACCEPTED[name]


def completed_cells(csv, X, completed, names):
    """The CSV's table as written, with the missing cells of the fitted columns filled in.

    The other columns (an identifier, the text columns left out) and the observed cells keep their
    text (an integer stays "1", not "1.0"), so that the table stays the user's table.

    Parameters
    ----------
    csv : path-like
    X : ndarray of shape (n_samples, n_columns)
        The fitted columns as read (NaN where missing).
    completed : array-like of shape (n_samples, n_columns)
        The completed columns (categorical ones decoded to their values).
    names : list of str
        The fitted columns.

    Returns
    -------
    table : DataFrame
    """
    table = read_csv_as_written(csv)  # every cell as its text
    # its columns as read_csv names them, stripped ("a, b" names b; " b" raised KeyError: 'b')
    table.columns = [str(c).strip() for c in table.columns]
    completed = np.asarray(completed, dtype=object)
    for j, name in enumerate(names):
        gaps = np.isnan(X[:, j])
        # a column written as whole numbers (category codes 1, 2, 3) gets its whole values so written
        whole = bool(table.loc[~gaps, name].str.fullmatch(r"-?\d+").all())
        table.loc[gaps, name] = [_cell_text(v, whole) for v in completed[gaps, j]]
    # the header as written too, but for padding: pandas named its empty cells (a spreadsheet's
    # trailing ",,") "Unnamed: 5"
    written = header_cells(csv)
    if len(written) == table.shape[1]:
        table.columns = written
    return table


def _cell_text(value, whole):
    """A completed cell as text: a number as Python writes it (exactly), ``whole`` ones without '.0'."""
    if not isinstance(value, (float, np.floating)):
        return str(value)
    return str(int(value)) if whole and float(value).is_integer() else repr(float(value))


def read_columns(csv, columns, categorical=()):
    """Read the columns of a CSV file to fit: numeric ones, and categorical ones as codes.

    Parameters
    ----------
    csv : path-like
    columns : sequence of str
        Column names, or comma-separated lists of them (the options' values); empty means every
        numeric column and every ``categorical`` one.
    categorical : sequence of str, default=()
        Columns (as ``columns``) modelled as categorical (text or numbers): each becomes codes 0..C-1 of its
        distinct values as written (:func:`~discrim.cli._io.read_labels`: "01" is not 1), sorted; an empty
        cell is missing (NaN).

    Returns
    -------
    X : ndarray of shape (n_samples, n_columns)
    names : list of str
    categories : dict of int to list
        Position in ``names`` of each categorical column -> its values in code order.
    """
    import pandas as pd

    from discrim.distributions import Categorical

    df = read_csv(csv)
    columns, categorical = split_names(columns, df.columns, unique=False), split_names(categorical, df.columns)
    for option, names in (("--columns", columns), ("--categorical", categorical)):
        unknown = [c for c in names if c not in df.columns]
        if unknown:
            raise click.ClickException(f"{option} column(s) {', '.join(map(repr, unknown))} not in the CSV; it has: "
                                       f"{column_list(df.columns)}.")
        repeated = sorted({c for c in names if list(names).count(c) > 1})
        if repeated:
            raise click.UsageError(f"{option} names {', '.join(map(repr, repeated))} more than once; name each column once.")
    # True/False columns are numbers 0/1, as Parquet's booleans are (a --categorical one keeps its values)
    df = truth_values_as_numbers(df, [c for c in df.columns if c not in categorical])
    # a column of numbers with a mark for missing cells ("?") is numbers: neither left out as text
    # by the default choice nor sent to --categorical
    refuse_numbers_with_text(df, [c for c in (columns or df.columns) if c not in categorical], "data",
                             "" if columns else " (or leave the column out with --columns)")
    chosen_by_default = not columns
    if chosen_by_default:
        columns = [c for c in df.columns if c in categorical or pd.api.types.is_numeric_dtype(df[c])]
        skipped = [c for c in df.columns if c not in columns]
        if skipped and columns:
            click.echo(_left_out_note(df, skipped), err=True)
        if not columns:
            raise click.ClickException(
                f"CSV file {str(csv)!r} has no numeric column to fit: name its text columns with --categorical "
                "(e.g. --categorical colour,size) to fit them as categories."
            )
    outside = [c for c in categorical if c not in columns]
    if outside:
        raise click.UsageError(f"--categorical column(s) {', '.join(map(repr, outside))} are not among --columns.")
    text = [c for c in columns if c not in categorical and not pd.api.types.is_numeric_dtype(df[c])]
    if text:
        raise click.ClickException(
            f"non-numeric data column(s) {', '.join(map(repr, text))}: fit them as categories with "
            f"--categorical {','.join(map(str, text))}, or leave them out."
        )
    numeric = [c for c in columns if c not in categorical]
    X = np.empty((df.shape[0], len(columns)))
    if numeric:
        frame = numeric_features(df, numeric, what="data")
        X[:, [columns.index(c) for c in numeric]] = frame.to_numpy(np.float64)
        ids = sequence_columns(frame) if chosen_by_default else []
        if ids and len(ids) < len(columns):
            rest = ",".join(str(c) for c in columns if str(c) not in ids)
            click.echo(f"note: column(s) {', '.join(map(repr, ids))} hold a different whole number on every row, in "
                       f"order, as a row identifier does; they are fitted here: --columns {rest} leaves them out.",
                       err=True)
    categories = {}
    # as written, as the target of discrim fit: pandas read "01" and "1" as one category 1.0 (an
    # --impute cell then came out "1", a value the column does not hold) and "NA" as missing
    as_written = read_label_columns(csv, categorical) if categorical else {}
    for c in categorical:
        cells = as_written[c]
        words = missing_words(cells)
        if words:
            click.echo(f"note: {c!r} has the category(ies) {', '.join(map(repr, words))}, which some exports write "
                       "for a missing value; if so, leave those cells empty (the mixture then fits those rows by "
                       "their other columns, and --impute completes them).", err=True)
        values = cells.dropna()
        if values.empty:
            raise click.ClickException(f"data column {c!r} has no value at all: leave it out.")
        levels = sorted(values.unique().tolist(), key=lambda v: (isinstance(v, str), v))
        if len(levels) < 2:
            raise click.ClickException(f"--categorical column {c!r} holds one value only ({levels[0]!r}): it says nothing "
                                       "about the components; leave it out.")
        cells = cells.to_frame().astype(object).where(cells.notna().to_frame(), None).to_numpy()  # None: missing
        X[:, columns.index(c)] = Categorical(categories=[levels]).encode(cells)[:, 0]
        categories[columns.index(c)] = levels
    return X, [str(c) for c in columns], categories


def _is_identifier(column):
    """Whether a text column looks like a row identifier: (nearly) every value distinct.

    Such a column has as many categories as rows: fitted as categorical, each of its values
    would describe a row or two, not a component.
    """
    values = column.dropna()
    return len(values) >= 2 and values.nunique() >= 0.9 * len(values)


def _left_out_note(df, skipped):
    """The note on text columns that the default column choice leaves out.

    It suggests ``--categorical`` for the columns that could be categories, and names apart the
    row identifiers (a category per row) and the columns with a single value, which
    ``--categorical`` would not fit.
    """
    identifiers = [str(c) for c in skipped if _is_identifier(df[c])]
    constant = [str(c) for c in skipped if str(c) not in identifiers and df[c].nunique() < 2]
    categories = [str(c) for c in skipped if str(c) not in identifiers + constant]
    parts = []
    if categories:
        parts.append(f"text column(s) {', '.join(map(repr, categories))} left out; fit them as categories with "
                     f"--categorical {','.join(categories)}")
    if identifiers:
        parts.append(f"identifier column(s) {', '.join(map(repr, identifiers))} left out (every value, or nearly, "
                     "is distinct)")
    if constant:
        parts.append(f"column(s) {', '.join(map(repr, constant))} left out (one value or none)")
    return f"note: {'; '.join(parts)}."


def with_categorical_columns(family, categories, n_columns):
    """The family of the fitted columns: ``family`` on the others, Categorical on ``categories``.

    Parameters
    ----------
    family : ComponentFamily or None
        The family of the columns that are not categorical (None when there are none).
    categories : dict of int to list
        Position of each categorical column -> its values in code order (see :func:`read_columns`).
    n_columns : int

    Returns
    -------
    family : ComponentFamily
        ``family`` itself without categorical columns, a Categorical without other columns, else a
        Product of the two.
    """
    from discrim.distributions import Categorical, Product

    if not categories:
        return family
    cat_columns = sorted(categories)
    nominal = Categorical(categories=[categories[j] for j in cat_columns])
    others = [j for j in range(n_columns) if j not in categories]
    if not others:
        return nominal
    # named parts: the fitted parameters are numeric__mean, categorical__probs, ...
    return Product([("numeric", family, others), ("categorical", nominal, cat_columns)])


def _fmt(value):
    return f"{value:.6g}"


def _part_columns(family, pname, names, categories):
    """The names of the columns a parameter describes, and their categories' values where categorical.

    Returns
    -------
    names : list of str
        ``names`` itself, or for a Product's parameter ``"part__name"`` the names of that part's columns.
    levels : list of list or None
        The values of each of those columns in code order, when they are all categorical.
    """
    from discrim.distributions import Product

    columns = list(range(len(names)))
    if isinstance(family, Product) and "__" in pname:
        part = pname.split("__", 1)[0]
        columns = next(cols.tolist() for name, _, cols in family._parts() if name == part)
    levels = [categories[j] for j in columns] if columns and all(j in categories for j in columns) else None
    return [names[j] for j in columns], levels


def _parameter_tables(mixture, names, categories=None):
    """Rich tables of the fitted weights and parameters, one row per component.

    ``categories`` (position -> values in code order) labels the probabilities of categorical
    columns by their values: one table per column, its categories by components.
    """
    from rich.markup import escape
    from rich.table import Table

    categories = categories or {}
    weights = np.asarray(mixture.weights_)
    n_comp = mixture.n_components  # the components with parameters (a noise weight comes after them)
    shared = set(mixture.family_.shared_params())  # e.g. the tied covariance: no component axis
    main = Table(title="Fitted components")
    main.add_column("component", justify="right", overflow="fold")
    main.add_column("weight", justify="right", overflow="fold")
    # with noise, the last weight is the noise component's (it has no parameters)
    cells = [["noise" if r >= n_comp else str(r), _fmt(weights[r])] for r in range(weights.shape[0])]
    matrices = []  # (title, 2-d array, row labels, column labels)
    components = [str(r) for r in range(n_comp)]
    for pname, value in mixture.params_.items():
        arr = np.asarray(value, dtype=float)
        own, levels = _part_columns(mixture.family_, pname, names, categories)
        if pname in shared:
            arr = arr.reshape(-1, arr.shape[-1]) if arr.ndim else arr.reshape(1, 1)
            rows = own if arr.shape[0] == len(own) else [str(i) for i in range(arr.shape[0])]
            cols = own if arr.shape[1] == len(own) else [str(j) for j in range(arr.shape[1])]
            matrices.append((f"{pname} (shared by all components)", arr, rows, cols))
        elif arr.ndim == 1 and arr.shape[0] == n_comp:
            main.add_column(escape(pname), justify="right", overflow="fold")
            for r in range(n_comp):
                cells[r].append(_fmt(arr[r]))
        elif arr.ndim == 2 and arr.shape[0] == n_comp and arr.shape[1] > 3:
            # Wide data: one row per feature, one column per component, so the table stays narrow.
            rows = own if arr.shape[1] == len(own) else [str(j) for j in range(arr.shape[1])]
            matrices.append((f"{pname} (columns: components)", arr.T, rows, components))
        elif arr.ndim == 2 and arr.shape[0] == n_comp:
            labels = own if arr.shape[1] == len(own) else [str(j) for j in range(arr.shape[1])]
            for j, lab in enumerate(labels):
                # escaped: "mean[x]" is not rich markup
                main.add_column(escape(f"{pname}[{lab}]"), justify="right", overflow="fold")
                for r in range(n_comp):
                    cells[r].append(_fmt(arr[r, j]))
        elif arr.ndim == 3 and arr.shape[0] == n_comp and levels is not None and arr.shape[1] == len(own):
            # (K, d, C) probabilities of categorical columns with known values: per column, its
            # categories (rows) by components
            for j, (column, values) in enumerate(zip(own, levels)):
                matrices.append((f"{pname} of {column} (columns: components)", arr[:, j, :len(values)].T,
                                 [str(v) for v in values], components))
        elif arr.ndim == 3 and arr.shape[0] == n_comp:
            # (K, d, d) covariances, or (K, d, C) category probabilities (columns: codes).
            rows = own if arr.shape[1] == len(own) else [str(j) for j in range(arr.shape[1])]
            cols = own if pname.endswith("covariance") else [str(j) for j in range(arr.shape[2])]
            for r in range(n_comp):
                matrices.append((f"{pname}, component {r}", arr[r], rows, cols))
        else:
            flat = arr.reshape(arr.shape[0], -1) if arr.ndim else arr.reshape(1, 1)
            matrices.append((pname, flat, [str(i) for i in range(flat.shape[0])],
                             [str(j) for j in range(flat.shape[1])]))
    width = max(len(row) for row in cells)
    for row in cells:
        main.add_row(*row, *[""] * (width - len(row)))  # the noise row has no parameters
    tables = [main]
    for title, arr, rows, cols in matrices:
        t = Table(title=escape(title))
        t.add_column("", overflow="fold")
        for c in cols:
            t.add_column(escape(str(c)), justify="right", overflow="fold")
        for i, lab in enumerate(rows):
            t.add_row(escape(str(lab)), *(_fmt(v) for v in arr[i]))
        tables.append(t)
    return tables


def _trace_table(mixture):
    from rich.table import Table

    bounds = np.asarray(mixture.lower_bounds_, dtype=float)
    t = Table(title="Log-likelihood trace (mean weighted log-likelihood per row)")
    t.add_column("iteration", justify="right", overflow="fold")
    t.add_column("log-likelihood", justify="right", overflow="fold")
    t.add_column("change", justify="right", overflow="fold")
    for i, b in enumerate(bounds):  # entry 0 is the initial parameters, then one per EM step
        change = "" if i == 0 else f"{b - bounds[i - 1]:.3e}"
        t.add_row("0 (start)" if i == 0 else str(i), f"{b:.8g}", change)
    return t


def _summary_table(mixture, X):
    from rich.table import Table

    log_lik = float(np.sum(mixture.score_samples(X)))
    t = Table(title="Fit")
    t.add_column("quantity", overflow="fold")
    t.add_column("value", justify="right", overflow="fold")
    t.add_row("rows", str(X.shape[0]))
    noise = np.asarray(mixture.weights_).shape[0] > mixture.n_components
    t.add_row("components", f"{mixture.n_components}{' and noise' if noise else ''}")
    t.add_row("converged", str(bool(mixture.converged_)))
    t.add_row("iterations", str(int(mixture.n_iter_)))
    t.add_row("log-likelihood", f"{log_lik:.8g}")
    t.add_row("BIC (lower is better)", f"{float(mixture.bic(X)):.8g}")
    t.add_row("AIC (lower is better)", f"{float(mixture.aic(X)):.8g}")
    return t


def _write_plot(mixture, X, names, path, selection=None, kind="overview", density=True):
    # A bare Figure renders with Agg without touching pyplot's global backend or figure list.
    from matplotlib.figure import Figure

    from discrim.plotting._mpl import save_figure_atomic
    from discrim.plotting.mixture import (
        plot_classification,
        plot_convergence,
        plot_density,
        plot_mixture_density,
        plot_selection,
        plot_uncertainty,
    )

    if kind != "overview":  # a pairs grid of every column, named
        draw = {"classification": plot_classification, "uncertainty": plot_uncertainty, "density": plot_density}[kind]
        side = max(3.0 * X.shape[1], 4.5)
        fig = Figure(figsize=(side, side))
        draw(mixture, pd.DataFrame(X, columns=names), fig=fig)
        save_figure_atomic(fig, path)
        return
    panels = ["selection"] * (selection is not None) + ["convergence"] + ["density"] * (density and X.shape[1] <= 2)
    fig = Figure(figsize=(5.5 * len(panels), 4.5))
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, panel in zip(axes, panels):
        if panel == "selection":
            plot_selection(selection, ax=ax)
        elif panel == "convergence":
            plot_convergence(mixture, ax=ax)
        else:
            plot_mixture_density(mixture, X, ax=ax)
            ax.set_xlabel(names[0])
            if X.shape[1] == 2:
                ax.set_ylabel(names[1])
    fig.tight_layout()
    save_figure_atomic(fig, path)


def _in_memory_sample(X, max_rows=100_000):
    """X itself in memory, or (a dask array) a uniform sample of about ``max_rows`` of its rows to draw."""
    from discrim.utils._dask import gather_sample, is_dask

    if not is_dask(X):
        return X
    import dask.array as da

    return gather_sample(X, da.ones(X.shape[0], chunks=(X.chunks[0],)), max_rows, np.random.default_rng(0))[0]


def _plotted_rows(model, X):
    """The rows a plot draws: the complete ones, or all rows completed by the mixture if none is."""
    complete = ~np.isnan(X).any(axis=1)
    return X[complete] if complete.any() else model.impute(X)


#: The largest component count ``--components`` takes.
_MAX_COMPONENTS = 1000


def parse_components(text):
    """Parse ``--components``: ``"3"``, a range ``"1-6"`` or a list ``"2,4,8"``.

    Parameters
    ----------
    text : str

    Returns
    -------
    counts : list of int
        Distinct component counts >= 1, in increasing order.
    """
    counts = set()
    try:
        for part in (p.strip() for p in text.split(",")):
            lo, dash, hi = part.partition("-")
            a, b = int(lo), int(hi) if dash else int(lo)
            if a < 1 or b < a:
                raise ValueError
            if b > _MAX_COMPONENTS:  # before building the list: 1-1000000000 would take all the memory
                raise click.BadParameter(f"{text!r} asks for up to {b:,} components; at most {_MAX_COMPONENTS:,} "
                                         "are fitted (and at most one per row).", param_hint="--components")
            counts.update(range(a, b + 1))
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not a component count: give K (e.g. 3), a range A-B (1-6) or a list (2,4,8) "
            "of whole numbers >= 1.",
            param_hint="--components",
        ) from None
    return sorted(counts)


def _selection_table(result):
    from rich.markup import escape
    from rich.table import Table

    crit = result.criterion.upper()
    # the footnote explains the rows marked "too few rows" or "singular covariance": only when there are some
    marked = any(not row.error and row.degenerate_reason for row in result.table.itertuples(index=False))
    t = Table(
        title=f"Model choice by {crit} (lower is better; mclust reports the negative)",
        caption="never chosen: a component with too few rows for its covariance, or a singular covariance "
                "(collapsed onto tied values)" if marked else None,
    )
    for name in ("family", "K", "params", "log-lik", "BIC", "AIC", "conv", "best"):
        t.add_column(name, justify="left" if name == "family" else "right", overflow="fold")
    for i, row in enumerate(result.table.itertuples(index=False)):
        if row.error:
            cells = ["", "", f"failed: {row.error}"[:80], "", "", ""]
        else:
            cells = [str(int(row.n_parameters)), f"{row.log_likelihood:.2f}", f"{row.bic:.2f}",
                     f"{row.aic:.2f}", "yes" if row.converged else "no"]
            cells.append("*" if i == result.best_index else row.degenerate_reason)
        t.add_row(escape(row.family), str(row.n_components), *(escape(c) for c in cells))
    return t


@click.command("mixture")
@click.option("--csv", "csv", type=click.Path(dir_okay=False),
              help="CSV file with a header row.")
@click.option("--columns", multiple=True, metavar="NAMES",
              help="Columns to fit, comma-separated or repeated (default: every numeric column, and the "
                   "--categorical ones).")
@click.option("--categorical", multiple=True, metavar="NAMES",
              help="Columns to fit as categories (text or numbers; comma-separated or repeated): each is a "
                   "categorical feature with its own distinct values, beside --family on the other columns "
                   "(a product of the two per component). CSV input only.")
@click.option("--family", "families", type=click.Choice([*FAMILIES, "mclust"]), multiple=True, show_default=True,
              default=("gaussian",),
              help="Component distribution (gaussian is full-covariance; gaussian-VEV etc. are mclust's "
                   "covariance models, and mclust all 14 of them); repeat it to compare families by BIC.")
@click.option("--components", default="2", show_default=True, metavar="K",
              help="Number of components K, or several to choose from by BIC: a range 1-6 or a "
                   "list 2,4,8.")
@click.option("--criterion", type=click.Choice(["bic", "aic", "icl"]), default="bic", show_default=True,
              help="How the model is chosen when several families or counts are given.")
@click.option("--n-trials", type=click.IntRange(min=1), default=None,
              help="Trials per row, for --family binomial.")
@click.option("--n-categories", type=click.IntRange(min=2), default=None,
              help="Category codes 0..C-1, for --family categorical (default: largest code + 1).")
@click.option("--n-init", type=click.IntRange(min=1), default=1, show_default=True,
              help="EM restarts; the best run is kept (after a hierarchical start, k-means++ restarts).")
@click.option("--init", "init_params", type=click.Choice(["kmeans++", "kmeans", "hierarchical", "random",
                                                          "random_from_data"]), default=None,
              help="How EM starts: hierarchical is mclust's model-based agglomeration.  [default: hierarchical "
                   "with --family mclust, else kmeans++]")
@click.option("--prior", is_flag=True,
              help="Gaussian families: Fraley and Raftery's conjugate prior with mclust's defaults "
                   "(priorControl()); EM then finds the posterior mode, which keeps small components from "
                   "collapsing. mclust's models without a prior (VEE, EVE, VVE, EVV) are left out.")
@click.option("--noise", is_flag=True,
              help="Add a uniform noise component (mclust's noise) whose volume is the smaller of the rows' "
                   "bounding box and their box along the principal axes (mclust's hypvol): rows that no "
                   "component explains go to it, reported as component 'noise'.")
@click.option("--max-iter", type=click.IntRange(min=1), default=100, show_default=True,
              help="EM iterations at most per start.")
@click.option("--tol", type=click.FloatRange(min=0), default=1e-3, show_default=True,
              help="Stop when the mean log-likelihood improves by less than this.")
@click.option("--random-state", type=SEED, default=0, show_default=True,
              help="Seed of the starts (k-means++, random).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Write the convergence curve (and, for one or two columns, the fitted density; "
                   "when choosing a model, BIC against K) to this image file (format from the "
                   "suffix, e.g. .png, .pdf, .svg).")
@click.option("--plot-kind", type=click.Choice(_PLOT_KINDS), default="overview", show_default=True,
              help="What --plot draws: the overview above, or a pairs grid of the columns with the rows "
                   "by most probable component and the Gaussian components' ellipses (classification), "
                   "their uncertainty as marker size (uncertainty), or the 2-D marginal densities (density).")
@click.option("--impute", "impute_path", type=click.Path(dir_okay=False), default=None,
              help="Write the CSV's table to this file with the missing cells of the fitted columns completed "
                   "under the chosen mixture (numbers: conditional expectations; categories: the most probable "
                   "one); every other cell as written.")
@click.option("--overwrite", is_flag=True, help="Replace the --plot and --impute files if they exist.")
@click.option("--quiet", is_flag=True, help="Do not show EM's progress.")
@functools.partial(device_option, saves_models=False)
@lazy_options
def mixture(csv, columns, categorical, families, components, criterion, n_trials, n_categories, n_init, init_params, prior,
            noise, max_iter, tol, random_state, plot_path, plot_kind, impute_path, overwrite, quiet, device, parquet,
            zarr, scheduler):
    """Fit a finite mixture by EM to columns of a CSV, Parquet or Zarr table.

    Prints the fitted weights and parameters, the log-likelihood trace, BIC and AIC, and a
    summary as mclust's. With several --family options or component counts,
    every combination is fitted and the one with the lowest BIC (or AIC, ICL) is reported,
    after the table of all of them, mclust's table of the criterion (counts by families) and
    the top three models. --family mclust compares mclust's 14 Gaussian covariance models.
    With --parquet or --zarr the columns are read lazily by Dask and every E-step runs chunk by
    chunk.
    """
    ks = parse_components(components)
    if init_params is None:  # mclust's models from mclust's start
        init_params = "hierarchical" if "mclust" in families else "kmeans++"
    # repeated names once, in order; "mclust" stands for its 14 models
    named = list(families)
    families = list(dict.fromkeys(m for f in families for m in (MCLUST_FAMILIES.values() if f == "mclust" else [f])))
    if prior:  # mclust has no prior for VEE, EVE, VVE and EVV: left out of "mclust", refused when named
        without = [name for model, name in MCLUST_FAMILIES.items() if model not in PRIOR_MODELS]
        refused = [name for name in named if name in without]
        if refused:
            raise click.UsageError(f"--prior: mclust has no conjugate prior for --family {', '.join(refused)}; leave "
                                   f"--prior out, or fit another model (those with one: "
                                   f"{', '.join(sorted(PRIOR_MODELS))}).")
        families = [name for name in families if name not in without]
    for option, value in (("n_trials", n_trials), ("n_categories", n_categories), ("prior", prior or None)):
        takers = [name for name in FAMILIES if family_takes(name, option)]
        if value is not None and not any(name in takers for name in families):
            which = "the Gaussian families" if option == "prior" else f"--family {' or '.join(takers)}"
            raise click.UsageError(f"{OPTION_OF[option]} applies to {which} only.")
    check_output(plot_path, "--plot", overwrite=overwrite, inputs=[csv])
    check_plot_format(plot_path)
    check_output(impute_path, "--impute", overwrite=overwrite, inputs=[csv])
    check_output_suffix(impute_path, "--impute", "csv", "end the file name in .csv.")
    check_distinct_outputs(**{"--plot": plot_path, "--impute": impute_path})
    for option, specs in (("--columns", columns), ("--categorical", categorical)):
        if specs and not any(spec.strip(" ,") for spec in specs):  # an empty value read as "every column"
            raise click.UsageError(f"{option} is empty: name the columns, or leave {option} out.")
    # split on commas once the header is read: a column whose name holds a comma is named whole
    columns, categorical = list(columns), list(categorical)
    if sum(x is not None for x in (csv, parquet, zarr)) != 1:
        raise click.UsageError("give exactly one of --csv, --parquet or --zarr.")
    device = checked_device(device)
    if device is not None and csv is None:
        raise click.UsageError("--device computes in-memory data; --parquet and --zarr run on Dask's workers.")
    if noise and csv is None:
        raise click.UsageError("--noise fits rows in memory: give --csv (--parquet and --zarr are read lazily).")
    if impute_path is not None and csv is None:
        raise click.UsageError("--impute completes a CSV table; --parquet and --zarr data are not read into memory.")
    if categorical and csv is None:
        raise click.UsageError("--categorical reads the categories of a CSV table; encode them as codes 0..C-1 for "
                               "--parquet and --zarr (--family categorical).")
    if plot_kind != "overview" and plot_path is None:
        raise click.UsageError(f"--plot-kind {plot_kind} chooses what --plot draws: give --plot FILE too.")
    if categorical and plot_kind != "overview":
        raise click.UsageError(f"--plot-kind {plot_kind} draws numeric columns in pairs; with --categorical "
                               "columns, --plot draws the overview.")
    with ExitStack() as stack:
        if csv is None:
            stack.enter_context(dask_cluster(scheduler, input_bytes(parquet, zarr)))
            X, names = read_lazy_columns(parquet, zarr, columns)
            categories = {}
        else:
            X, names, categories = read_columns(csv, columns, categorical)
        if categories and len(categories) == len(names) and families != ["gaussian"]:
            raise click.UsageError("--family applies to the columns not named in --categorical, and every fitted "
                                   "column is categorical: leave --family out.")
        _fit_and_report(X, names, families, ks, criterion, n_trials, n_categories, n_init, max_iter, tol,
                        random_state, plot_path, progress=not quiet, device=device, impute_path=impute_path,
                        plot_kind=plot_kind, init_params=init_params, categories=categories, source=csv,
                        prior=prior, noise=noise)


def read_lazy_columns(parquet, zarr, columns):
    """Numeric columns of a Parquet or Zarr table as a row-chunked dask array, nothing read yet.

    As for a CSV: without ``columns``, every numeric (or boolean) column, and a note naming the
    others; named columns must all be numeric.
    """
    from discrim.utils._dask import row_chunked

    frame = read_lazy(parquet, zarr)
    columns = split_names(columns, frame.columns, unique=False)
    if not columns:
        columns = numeric_columns(frame)
        skipped = [str(c) for c in frame.columns if c not in columns]
        if not columns:
            raise click.ClickException("the table has no numeric column to fit: encode its columns as numbers "
                                       "(categories as codes 0..C-1, for --family categorical).")
        if skipped:
            click.echo(f"note: non-numeric column(s) {', '.join(map(repr, skipped))} left out; --categorical "
                       "reads CSV tables only (here, encode categories as codes 0..C-1).", err=True)
    frame = lazy_features(frame, columns, what="data")
    return row_chunked(frame), [str(c) for c in frame.columns]


def _label(name, families):
    """A family's label in the output: mclust's model name when every family is one of its models."""
    models = {cli: model for model, cli in MCLUST_FAMILIES.items()}
    return models[name] if all(f in models for f in families) else name


def _fit_and_report(X, names, families, ks, criterion, n_trials, n_categories, n_init, max_iter, tol, random_state,
                    plot_path, progress=True, device=None, impute_path=None, plot_kind="overview",
                    init_params="kmeans++", categories=None, source=None, prior=False, noise=False):
    """Fit the mixture (or choose among several) and print the report; X in memory or a dask array.

    ``categories``: the categorical columns (position -> values in code order), fitted by a
    Categorical beside each family (see :func:`with_categorical_columns`). ``source``: the CSV file
    X was read from, whose table ``impute_path`` receives completed.
    """
    from rich.console import Console

    from discrim.mixture import FiniteMixture, select_mixture, summarize_mixture
    from discrim.exceptions import FitFailedWarning

    categories = categories or {}
    others = [j for j in range(len(names)) if j not in categories]
    if not others:  # every column categorical: one family
        options = {"categorical": with_categorical_columns(None, categories, len(names))}
    else:
        if any(family_takes(name, "n_categories") for name in families) and n_categories is None:
            largest = np.nanmax(X[:, others]) if np.isfinite(X[:, others]).any() else 0.0  # empty cells: NaN
            n_categories = max(2, int(largest) + 1)
        suffix = " + categorical" if categories else ""
        options = {_label(name, families) + suffix: with_categorical_columns(
            make_family(name, n_trials, n_categories, prior), categories, len(names)) for name in families}
    if "student-t" in families and isinstance(X, np.ndarray) and np.isnan(X).any():
        # the library's refusal names covariance_type='diag', which is --family student-t-diag here
        raise click.UsageError("--family student-t (full covariance) takes no empty cells: use --family "
                               "student-t-diag, or fill the cells first.")
    families = list(options)
    check_device_data(device, X)
    em = dict(n_init=n_init, max_iter=max_iter, tol=tol, device=device, init_params=init_params, noise=noise)

    selection = None
    try:
        with warnings.catch_warnings(), em_progress(progress), features_named(names):  # warnings: reported below
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", FitFailedWarning)
            if len(options) * len(ks) == 1:
                model = FiniteMixture(options[families[0]], n_components=ks[0], random_state=random_state, **em)
                model.fit(X)
            else:
                selection = select_mixture(X, options, ks, criterion=criterion, random_state=random_state, **em)
                model = selection.best_estimator
        tables = [*_parameter_tables(model, names, categories), _trace_table(model), _summary_table(model, X)]
        summary = summarize_mixture(model, X)
    except (ValueError, TypeError) as exc:
        command = getattr(click.get_current_context(silent=True), "command", None)
        raise click.ClickException(command_line_advice(str(exc), command)) from None

    console = Console(soft_wrap=False)
    if selection is not None:
        console.print(_selection_table(selection))
        if len(options) > 1 and len(ks) > 1:
            console.print(f"{criterion.upper()} by component count (rows) and family (columns), lower is better:")
            console.print(selection.criterion_table().to_string(float_format=lambda v: f"{v:.4f}"), markup=False,
                          highlight=False, soft_wrap=True)
        console.print(selection.summary(), markup=False, highlight=False, soft_wrap=True)
    best = families[0] if selection is None else selection.best_params["family"]
    console.print(f"{best} mixture with {model.n_components} component(s) on {len(names)} column(s): "
                  f"{', '.join(names)}", markup=False)
    for table in tables:
        console.print(table)
    if summary is not None:
        console.print(summary.to_text(parameters=False), markup=False, highlight=False, soft_wrap=True)
    if not model.converged_:
        console.print(f"warning: EM did not converge in {max_iter} iterations; raise --max-iter or --tol.")
    with ExitStack() as outputs:
        # the imputed table waits in its temporary file until the plot is written too: a run that
        # fails leaves neither (and a rerun is not refused for an output of the failed one)
        if impute_path is not None:
            missing = int(np.isnan(X).sum())
            completed = model.impute(X)  # categorical columns back from codes to their values
            table_file = outputs.enter_context(atomic_output(impute_path))
            completed_cells(source, X, model.family.decode(completed) if categories else completed, names).to_csv(
                table_file, index=False)
        if plot_path is not None:
            try:
                _write_plot(model, _plotted_rows(model, _in_memory_sample(X)), names, plot_path, selection,
                            plot_kind, density=not categories)
            except (ValueError, OSError) as exc:
                raise click.ClickException(f"cannot write the plot {plot_path}: {exc}") from None
    if impute_path is not None:
        console.print(f"{missing} missing cell(s) completed; table written to {impute_path}")
    if plot_path is not None:
        console.print(f"plot written to {plot_path}")
