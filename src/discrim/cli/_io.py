"""Reading tables and writing outputs for the command-line tool, with one-line errors."""

import ast
import os
from pathlib import Path

import click
import numpy as np
import pandas as pd

from discrim.utils._files import atomic_output


def read_csv(path):
    """Read a CSV file into a DataFrame, or raise a one-line ClickException."""
    path = Path(path)
    if not path.is_file():
        raise click.ClickException(f"CSV file {str(path)!r} does not exist.")
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
        raise click.ClickException(f"cannot read CSV file {str(path)!r}: {exc}".splitlines()[0]) from None
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise click.ClickException(f"CSV file {str(path)!r} has no data rows.")
    return df


def numeric_features(df, columns=None, *, what="features"):
    """Select numeric, complete columns of ``df`` as the feature table.

    Parameters
    ----------
    df : DataFrame
    columns : list of str or None
        Columns to take; all columns when None.
    what : str
        Word used in error messages.

    Returns
    -------
    X : DataFrame of float
    """
    columns = list(df.columns) if columns is None else list(columns)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise click.ClickException(
            f"column(s) {', '.join(map(repr, missing))} not in the CSV; it has: {', '.join(map(str, df.columns))}."
        )
    X = df[columns]
    non_numeric = [c for c in columns if not pd.api.types.is_numeric_dtype(X[c])]
    if non_numeric:
        raise click.ClickException(
            f"non-numeric {what} column(s) {', '.join(map(repr, non_numeric))}: encode them as numbers "
            "(e.g. one-hot) or leave them out."
        )
    incomplete = [c for c in columns if not np.all(np.isfinite(X[c].to_numpy(dtype=float)))]
    if incomplete:
        raise click.ClickException(
            f"{what} column(s) {', '.join(map(repr, incomplete))} contain missing or infinite values: "
            "impute or drop those rows first."
        )
    return X.astype(float)


def split_target(df, target):
    """Split a table into numeric features and the target column."""
    if target not in df.columns:
        raise click.ClickException(
            f"target column {target!r} not in the CSV; it has: {', '.join(map(str, df.columns))}."
        )
    y = df[target]
    if y.isna().any():
        raise click.ClickException(f"target column {target!r} has missing values: drop those rows first.")
    X = numeric_features(df, [c for c in df.columns if c != target])
    return X, y.to_numpy()


def parse_params(items):
    """Parse ``KEY=VALUE`` options into constructor keyword arguments (values as Python literals)."""
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.ClickException(f"--param expects KEY=VALUE, got {item!r}.")
        try:
            params[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            params[key.strip()] = value.strip()
    return params


def check_writable(path, option):
    """Fail early, before any work, if ``path`` cannot be written."""
    if path is None:
        return
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise click.ClickException(f"{option}: folder {str(parent)!r} does not exist.")
    if not os.access(parent, os.W_OK):
        raise click.ClickException(f"{option}: folder {str(parent)!r} is not writable.")


def write_csv_atomic(df, path):
    """Write ``df`` to ``path`` through a temporary file, so no partial file is left on failure."""
    with atomic_output(path) as tmp:
        df.to_csv(tmp, index=False)


def model_features(model, df):
    """The columns of ``df`` a fitted model takes, in its order."""
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        return numeric_features(df, list(names))
    n_expected = getattr(model, "n_features_in_", None)
    X = numeric_features(df)
    if n_expected is not None and X.shape[1] != n_expected:
        raise click.ClickException(
            f"the model takes {n_expected} features but the CSV has {X.shape[1]} columns: give only "
            "the feature columns, in training order."
        )
    return X.to_numpy()
