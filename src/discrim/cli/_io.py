"""Reading tables and writing outputs for the command-line tool, with one-line errors."""

import ast
import contextvars
import os
import re
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path

import click
import numpy as np
import pandas as pd

from discrim.utils._files import atomic_output, not_a_file
from discrim.utils.validation import feature_magnitudes, max_feature_magnitude, vanishing_features


def read_csv(path):
    """Read a CSV file into a DataFrame, or raise a one-line ClickException."""
    path = Path(path)
    if not path.is_file():
        raise click.ClickException(f"CSV file {str(path)!r} {not_a_file(path)}.")
    try:
        with warnings.catch_warnings():
            # index_col=False: pandas would otherwise take the first field of rows longer than the
            # header as their index and shift every column (a thousands separator as in 1,000, or
            # row names without a header cell); it still drops a trailing empty field (rows ending
            # in the delimiter), and warns where it would drop a value, which is an error here
            warnings.simplefilter("error", pd.errors.ParserWarning)
            # skipinitialspace: "a, b, label" files (a space after each comma) read as "a,b,label",
            # their empty cells ", ," as missing rather than as the text ' '
            df = pd.read_csv(path, index_col=False, skipinitialspace=True)
    except pd.errors.ParserWarning:
        with open(path, encoding="utf-8", errors="replace") as file:
            header = file.readline().strip()
        if "," not in header:  # "1;2,5" rows beside a "a;b" header: decimal commas split the rows
            _refuse_other_separator(path, header)
            # else a title or comment line above the header: one field, then rows of several
            raise click.ClickException(
                f"CSV file {str(path)!r} starts with {header[:40]!r}, a line of one field above rows of several: a "
                "title or comment above the header (remove it: the first line must hold the column names), or, in a "
                "one-column file, values written with a thousands separator or a decimal comma (remove those).")
        raise click.ClickException(
            f"CSV file {str(path)!r} has rows with more fields than its header: a value written with a thousands "
            "separator (1,000) or a decimal comma, or row names without a header cell? Remove the separators, "
            "quote such values, or give the first column a header."
        ) from None
    except UnicodeDecodeError:
        start = path.read_bytes()[:4]
        if path.suffix.lower() in (".parquet", ".pq") or start == b"PAR1":
            raise click.ClickException(f"{str(path)!r} is a Parquet file, not a CSV file: give it with --parquet.") from None
        if start[:2] in (b"\xff\xfe", b"\xfe\xff"):  # the byte-order mark of UTF-16
            raise click.ClickException(
                f"CSV file {str(path)!r} is UTF-16 text (a 'Unicode text' export): save it as UTF-8, e.g. "
                "iconv -f utf-16 -t utf-8 FILE > FILE.utf8.csv."
            ) from None
        raise click.ClickException(
            f"CSV file {str(path)!r} is not UTF-8 text (an export in Latin-1 or Windows-1252?): save it as UTF-8, "
            "e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8.csv."
        ) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, OSError) as exc:
        raise click.ClickException(f"cannot read CSV file {str(path)!r}: {exc}".splitlines()[0]) from None
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise click.ClickException(f"CSV file {str(path)!r} has no data rows.")
    if df.shape[1] == 1:
        _refuse_other_separator(path, str(df.columns[0]))
    header = header_cells(path)
    _refuse_header(path, header)
    # columns without a header cell and without a value: the trailing ",," of spreadsheet exports
    blank = [c for c in df.columns if str(c).startswith("Unnamed: ") and df[c].isna().all()]
    if blank and len(blank) < df.shape[1]:
        df = df.drop(columns=blank)
    padded = [str(c) for c in df.columns if isinstance(c, str) and c != c.strip()]
    if padded:  # "a, b, label": the header " label" would not match --target label
        df = df.rename(columns={c: c.strip() for c in padded})
    return df


def header_cells(path):
    """The cells of a CSV file's first line, as written (pandas renames repeated ones a.1, a.2).

    Read by pandas, as the table was: a compressed file (.csv.gz) and a byte-order mark too."""
    first = pd.read_csv(path, header=None, nrows=1, dtype=str, keep_default_na=False, index_col=False,
                        skipinitialspace=True)
    return [str(cell).strip() for cell in first.iloc[0]] if first.shape[0] else []


def _refuse_header(path, header):
    """Refuse a header that repeats a name, or that is a row of numbers (a file without a header)."""
    repeated = sorted({cell for cell in header if cell and header.count(cell) > 1})
    if repeated:
        raise click.ClickException(
            f"CSV file {str(path)!r} names column(s) {', '.join(map(repr, repeated[:5]))} more than once in its "
            "header: give every column its own name."
        )
    if header and all(_is_number(cell) for cell in header):
        shown = f"{', '.join(header[:3])}{', ...' if len(header) > 3 else ''}"
        if header == [str(j) for j in range(len(header))]:
            # what pd.DataFrame(X).to_csv(path, index=False) writes: "has no header" was wrong, and no
            # fix; it is refused all the same, since a first row of counts 0, 1, 2 reads alike
            raise click.ClickException(
                f"CSV file {str(path)!r} starts with the line {shown}: the column names pandas gives a table "
                "without names (pd.DataFrame(X).to_csv), or a first row of data; discrim cannot tell which. "
                "Write the file with column names, e.g. pd.DataFrame(X, columns=['x0', 'x1', ...]).to_csv(path, "
                "index=False) (a model fitted on an array takes the columns in order, whatever their names).")
        raise click.ClickException(
            f"CSV file {str(path)!r} has no header: its first line is numbers ({shown}). Add a first line of "
            "column names."
        )


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _refuse_other_separator(path, header):
    """Refuse a file whose header looks separated by tabs or semicolons (discrim reads commas)."""
    for mark, name in (("\t", "tabs"), (";", "semicolons")):
        if mark in header:
            raise click.ClickException(
                f"CSV file {str(path)!r} looks separated by {name} (its header {header[:60]!r}), where discrim reads "
                "comma-separated files with decimal points: save it with commas and decimal points."
            ) from None


def read_csv_as_written(path, **options):
    """A CSV file's cells as their text, read as :func:`read_csv` reads the table (padded cells too).

    Parameters
    ----------
    path : str or path-like
    **options
        More options of :func:`pandas.read_csv` (``usecols``, ``na_values``).

    Returns
    -------
    table : DataFrame of str
        An empty cell is "" unless ``na_values`` says otherwise.
    """
    return pd.read_csv(path, dtype=str, keep_default_na=False, index_col=False, skipinitialspace=True, **options)


# a number written with a decimal comma (0,126) or thousands separators (1,260 or 1,260.5)
_COMMA_NUMBER = re.compile(r"-?\d+,\d+|-?\d{1,3}(,\d{3})+(\.\d+)?")
# values written so that they are not numbers, and the fix for each (one-hot would be the wrong one)
_WRITTEN_AS = (
    (_COMMA_NUMBER, "numbers written with a decimal comma or a thousands separator: write them with a decimal "
                    "point and no separators"),
    (re.compile(r"-?\d+(\.\d+)?\s*%"), "percentages: write the numbers without the % sign"),
    (re.compile(r"\d{4}-\d{2}-\d{2}([ T][\d:.]+)?"), "dates: give a number derived from them (a day count, a "
                                                       "month), or leave them out"),
    (re.compile(r"-?\d+(\.\d+)?\s*[A-Za-z]+"), "numbers with a unit: write the numbers without it (one unit "
                                                "per column, named in the header)"),
)

# the cell texts read as truth values, whatever their case (pandas reads a column of them as
# bool, or as object when a cell is empty)
_TRUTH_WORDS = {"true": 1.0, "false": 0.0}


def _truth_value(cell):
    """0.0 or 1.0 for a truth value (a bool, or the text True/False in any case), else None."""
    if isinstance(cell, (bool, np.bool_)):
        return float(cell)
    if isinstance(cell, str):
        return _TRUTH_WORDS.get(cell.strip().lower())
    return None


def truth_values_as_numbers(df, columns=None):
    """``df`` with its columns of truth values as features 0/1 (NaN where a cell is empty).

    A Parquet ``bool``/``boolean`` column is numeric to pandas; its CSV copy is text (True/False)
    or, with an empty cell, a column of objects. Both become the same floats here, so a model
    reads one table the same way from either format.

    Parameters
    ----------
    df : DataFrame
    columns : sequence of str or None
        The columns to convert where they hold truth values only; None: all of them.

    Returns
    -------
    df : DataFrame
        A copy where a column changed, else ``df`` itself.
    """
    converted = {}
    for c in df.columns if columns is None else columns:
        column = df[c]
        if pd.api.types.is_bool_dtype(column.dtype):  # bool, or pandas' nullable boolean
            converted[c] = column.astype("Float64").astype(float)
        elif pd.api.types.is_object_dtype(column.dtype) or pd.api.types.is_string_dtype(column.dtype):
            cells = column.astype(object).where(column.notna(), None).tolist()  # None: an empty cell
            values = [None if v is None else _truth_value(v) for v in cells]
            written = [v for v, cell in zip(values, cells) if cell is not None]
            if written and all(v is not None for v in written):
                converted[c] = pd.Series([np.nan if v is None else v for v in values], index=column.index, dtype=float)
    return df.assign(**converted) if converted else df


def non_numeric_message(what, columns, written=()):
    """The one-line refusal of non-numeric columns, for CSV and Parquet alike.

    Parameters
    ----------
    what : str
        Word for the columns ("features", "data").
    columns : sequence of str
    written : sequence of str, default=()
        Some of their values as written, where known (Parquet is not read to check them): numbers
        written with a decimal comma or a thousands separator get their own advice, since
        one-hot encoding would be the wrong fix for them.

    Returns
    -------
    message : str
    """
    head = f"non-numeric {what} column(s) {', '.join(map(repr, map(str, columns)))}: "
    for pattern, advice in _WRITTEN_AS:
        if written and all(pattern.fullmatch(v.strip()) for v in written):
            return head + f"their values look like {advice} ({written[0]!r})."
    context = click.get_current_context(silent=True)
    if context is not None and context.info_name in ("predict", "explain"):  # the model's own features
        return head + "the model learnt them as numbers: give the rows as the training table had them."
    return head + ("encode them as numbers (e.g. one-hot) or leave them out (--drop in fit and tune, --columns in "
                   "mixture).")


def refuse_numbers_with_text(df, columns, what, fix=""):
    """Refuse a column of numbers with a few cells of text ("?", "-", "n/a", a typo), naming the first.

    Such a cell is usually a missing value written as a mark: the column is numbers, and advice to
    encode it as categories (or to leave it out as text) would be wrong.

    Parameters
    ----------
    df : DataFrame
        As read from the CSV (its index the data rows, from 0).
    columns : list of str
        The columns to look at; those of a numeric dtype, or with fewer than half their cells
        numbers, pass.
    what : str
        Word used in the message ("features", "data").
    fix : str, default=""
        More advice, appended to the message.
    """
    for c in columns:
        if pd.api.types.is_numeric_dtype(df[c]):
            continue
        cells = df[c].dropna()
        numbers = pd.to_numeric(cells, errors="coerce")
        if len(cells) and numbers.notna().mean() >= 0.5 and numbers.isna().any():
            first = numbers.index[numbers.isna()][0]
            raise click.ClickException(
                f"column {str(c)!r} of the {what} holds numbers but also {str(cells[first])!r} (data row "
                f"{df.index.get_loc(first)}, counted from 0), which is not a number: leave a missing value's "
                f"cell empty, or correct the value{fix}."
            )


def numeric_features(df, columns=None, *, what="features", allow_empty=False):
    """Select the numeric columns of ``df`` as the feature table; empty cells are missing (NaN).

    Columns of truth values (True/False, in any case) are features 0/1, as Parquet's booleans are.

    Parameters
    ----------
    df : DataFrame
    columns : list of str or None
        Columns to take; all columns when None.
    what : str
        Word used in error messages.
    allow_empty : bool, default=False
        Accept a column with no value at all: rows to predict may lack a feature that the
        model learnt (its marginal densities leave it out); a fit learns nothing from it.

    Returns
    -------
    X : DataFrame of float
    """
    columns = list(df.columns) if columns is None else list(columns)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise click.ClickException(
            f"column(s) {', '.join(map(repr, missing))} not in the CSV; it has: {column_list(df.columns)}."
        )
    X = truth_values_as_numbers(df[columns])
    non_numeric = [c for c in columns if not pd.api.types.is_numeric_dtype(X[c])]
    if non_numeric:
        refuse_numbers_with_text(X, non_numeric, what)
        written = [str(v) for c in non_numeric for v in X[c].dropna().head(20)]
        raise click.ClickException(non_numeric_message(what, non_numeric, written))
    # An empty cell is a missing value (NaN), which the models handle by likelihood; infinity is an error.
    infinite = [c for c in columns if np.any(np.isinf(X[c].to_numpy(dtype=float)))]
    if infinite:
        raise click.ClickException(
            f"{what} column(s) {', '.join(map(repr, infinite))} contain infinite values: replace or drop those "
            "rows first."
        )
    empty = [] if allow_empty else [c for c in columns if X[c].isna().all()]
    if empty:
        raise click.ClickException(f"{what} column(s) {', '.join(map(repr, empty))} have no value at all: leave them out.")
    # Checked before any scaling: StandardScaler squares the values, so 1e300 becomes a silent 0.
    limit = max_feature_magnitude(np.float64)
    largest = feature_magnitudes(X.to_numpy(dtype=float).reshape(len(X), len(columns)))
    too_large = [c for c, m in zip(columns, largest) if m > limit]
    if too_large:
        raise click.ClickException(
            f"{what} column(s) {', '.join(map(repr, too_large))} hold values beyond +-{limit:.0e}: change their "
            "units (e.g. divide by a power of ten) first."
        )
    # and the other end: a column whose every value lies within +-1e-102 (but not all 0) squares to
    # 0 in the variances, so the models called it constant
    vanishing = vanishing_features(largest)
    too_small = [c for c, small in zip(columns, vanishing) if small]
    if too_small:
        raise click.ClickException(
            f"{what} column(s) {', '.join(map(repr, too_small))} hold only values within +-{1.0 / limit:.0e} (at "
            f"most {largest[vanishing].max():.1e}), whose squares vanish in float64: change their units "
            "(e.g. multiply by a power of ten) first."
        )
    return X.astype(float)


# A feature list by position in a library message ("feature(s) [0, 3]", "feature(s) of X ([5])"),
# as an estimator writes it when it was given an array without column names
_FEATURE_POSITIONS = re.compile(r"(feature\(s\)(?: of X)? \(?)\[(\d+(?:, \d+)*)\]")
# and as the library's index lister writes them: "feature(s) of X (index 1, 4 ...)", "feature(s)
# (index 13)", and per class "(index 13 in class 'a'; index 2, 5 in class 'b')" (rows are listed
# as "row(s) of X (index ...)", which neither matches)
_FEATURE_INDEXES = re.compile(r"(feature\(s\)(?: of X)? \()index (\d+(?:, \d+)*)|\bindex (\d+(?:, \d+)*)(?= in class )")
# and a prototype set's "none of the model's active features (3, 6, 9, 12)" (", ..." past eight)
_ACTIVE_FEATURES = re.compile(r"(active features \()(\d+(?:, \d+)*)(?=(?:, \.\.\.)?\))")

#: The feature columns of the fit in progress (set by :func:`features_named`), by which a shown
#: warning names the features its message lists by position.
FEATURE_NAMES = contextvars.ContextVar("discrim_cli_feature_names", default=None)


def name_feature_positions(message, names):
    """``message`` with its lists of feature positions replaced by the columns' names.

    Parameters
    ----------
    message : str
    names : sequence of str
        The input's feature columns, in the order the estimator saw them.

    Returns
    -------
    message : str
        Unchanged where it names no feature by position (or by a position beyond ``names``).
    """
    def listed(text):
        positions = [int(j) for j in text.split(", ")]
        return None if max(positions) >= len(names) else str([str(names[j]) for j in positions])

    def named(match):
        shown = listed(match.group(2))
        return match.group(0) if shown is None else match.group(1) + shown

    def indexed(match):
        shown = listed(match.group(2) or match.group(3))
        return match.group(0) if shown is None else (match.group(1) or "") + shown

    message = _FEATURE_INDEXES.sub(indexed, _FEATURE_POSITIONS.sub(named, message))
    return _ACTIVE_FEATURES.sub(named, message)


@contextmanager
def features_named(names):
    """Report the features of an estimator's ValueError, and of the warnings shown meanwhile, by the
    input's column names.

    The scaler of the saved pipeline hands the estimator an array (the saved models keep their
    column names on the scaler), so a refusal such as "1 feature(s) of X ([5]) are constant"
    would name a position, which the user must count out in the file.

    Parameters
    ----------
    names : sequence of str
        The feature columns, in the order the estimator sees them.
    """
    names = [str(n) for n in names]
    token = FEATURE_NAMES.set(names)  # the warnings shown meanwhile name them too
    try:
        yield
    except ValueError as exc:
        message = name_feature_positions(str(exc), names)
        if message == str(exc):
            raise
        raise ValueError(message) from exc
    finally:
        FEATURE_NAMES.reset(token)


def read_labels(path, target):
    """A column of classes or categories of a CSV file as written: text, where only an empty cell is
    missing (NaN).

    pandas's defaults would read "None", "NA" or "null" as missing (a class would become
    unlabelled rows) and "01" and "1" as the same number; integers written plainly (0, 1, 12)
    stay integers. The target column of ``discrim fit`` and the ``--categorical`` columns of
    ``discrim mixture`` are read so.

    Parameters
    ----------
    path : str or path-like
        A CSV file that :func:`read_csv` read.
    target : str

    Returns
    -------
    labels : pandas.Series or None
        None where the file has no column ``target``.
    """
    return read_label_columns(path, [target])[target]


def read_label_columns(path, columns):
    """:func:`read_labels` of several columns, in one read of the file.

    Parameters
    ----------
    path : str or path-like
        A CSV file that :func:`read_csv` read.
    columns : sequence of str

    Returns
    -------
    labels : dict of str to pandas.Series or None
        Each column as :func:`read_labels` returns it (None where the file has no such column).
    """
    wanted = {str(c) for c in columns}
    try:
        # a header padded with spaces ("a, b, label") names its columns as read_csv strips them
        table = read_csv_as_written(path, usecols=lambda column: str(column).strip() in wanted, na_values=[""])
    except ValueError:
        return dict.fromkeys(columns)
    places = {}
    for j, column in enumerate(table.columns):
        places.setdefault(str(column).strip(), []).append(j)
    # a column found once; none (split_target names it, with the columns there are) or several: None
    return {c: _as_labels(table.iloc[:, places[c][0]], c) if len(places.get(c, ())) == 1 else None for c in columns}


def _as_labels(cells, name):
    """A column's cells as written (NaN where empty) as labels: stripped, and plain integers as ints."""
    # surrounding spaces are not part of a class ("cat " and "cat" are one class), as read_csv
    # strips the cells' leading ones
    labels = cells.rename(name).str.strip().replace("", np.nan)
    written = labels.dropna()
    if len(written) and written.map(lambda v: re.fullmatch(r"-?(0|[1-9][0-9]*)", v) is not None).all():
        out = labels.astype(object)  # ints beside NaN: an object column (pandas would make floats)
        out[labels.notna()] = [int(v) for v in written]
        return out
    return labels


#: The type of every --random-state: a seed as numpy and scikit-learn take one (a negative seed, or
#: one of 2**32 or more, failed inside the library, blamed on its parameter or on the split).
SEED = click.IntRange(0, 2**32 - 1)


def drop_option(command):
    """The ``--drop`` option of the commands that take every other column as a feature."""
    return click.option("--drop", "drop", multiple=True, metavar="COLUMNS",
                        help="Columns to leave out of the features, e.g. a row identifier (comma-separated; "
                             "repeatable).")(command)


def split_names(specs, columns, unique=True):
    """Column names from options given as comma-separated lists, repeated or not.

    A whole option value that names a column is that column, commas and all ("naive, col").

    Parameters
    ----------
    specs : sequence of str
        The option's values.
    columns : sequence
        The table's columns.
    unique : bool, default=True
        Each name once; False keeps repeats (for an option that refuses them by name).

    Returns
    -------
    names : list of str
        In order.
    """
    known = {str(c) for c in columns}
    names = []
    for spec in specs:
        names += [spec.strip()] if spec.strip() in known else [name.strip() for name in spec.split(",")]
    names = [name for name in names if name]
    return list(dict.fromkeys(names)) if unique else names


def dropped_columns(drop, columns, target=None):
    """The column names of ``--drop``, checked against the table's ``columns``.

    Parameters
    ----------
    drop : sequence of str
        The option's values, each a comma-separated list.
    columns : sequence
        The table's columns.
    target : str or None
        The target column, which cannot be dropped.

    Returns
    -------
    names : list of str
    """
    names = split_names(drop, columns)
    unknown = [name for name in names if name not in columns]
    if unknown:
        raise click.ClickException(f"--drop column(s) {', '.join(map(repr, unknown))} not in the table; it has: "
                                   f"{column_list(columns)}.")
    if target is not None and target in names:
        raise click.UsageError(f"--drop names the target column {target!r}; it is not a feature anyway.")
    return names


# target cells that R, SQL or spreadsheet exports write for an unknown label
_MISSING_WORDS = ("na", "n/a", "nan", "none", "null", "missing")


def table_notes(X, y, target):
    """Notes on a training table that is read as asked but probably not as meant.

    - A class written "NA" or "None": read_labels keeps it as written (a class may be called so),
      where an export often means an unknown label.
    - A column holding a different whole number on every row, in order: a row identifier, used as a
      feature (an accuracy of 1.0 on a file sorted by class).

    Parameters
    ----------
    X : DataFrame of float
        The feature columns.
    y : ndarray of shape (n_samples,)
        The labels (NaN where a cell is empty).
    target : str

    Returns
    -------
    notes : list of str
    """
    notes = []
    words = missing_words(y)
    if words:
        notes.append(f"{target!r} has the class(es) {', '.join(map(repr, words))}, which some exports write for an "
                     "unknown label; if so, leave those cells empty (lda, qda and mda then learn from those rows "
                     "without a label).")
    ids = sequence_columns(X)
    if ids:
        notes.append(f"column(s) {', '.join(map(repr, ids))} hold a different whole number on every row, in order, "
                     f"as a row identifier does; they are features here: --drop {','.join(ids)} leaves them out.")
    return notes


def missing_words(values):
    """The values of a column read as written that R, SQL or spreadsheet exports write for a missing
    one ("NA", "None", ...), sorted; :func:`read_labels` keeps them as written (a class or category
    may be called so), and the commands say so in a note.

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        As :func:`read_labels` returns them (NaN where a cell is empty).

    Returns
    -------
    words : list of str
    """
    values = np.asarray(values, dtype=object)
    return sorted({str(v) for v in pd.unique(values[~pd.isna(values)])
                   if isinstance(v, str) and v.strip().lower() in _MISSING_WORDS})


def sequence_columns(X):
    """The columns that hold a different whole number on every row, in order: row identifiers.

    Parameters
    ----------
    X : DataFrame of float
        Numeric columns (more than 20 rows for a column to count).

    Returns
    -------
    names : list of str
    """
    ids = []
    for name in X.columns:
        values = X[name].to_numpy(dtype=float)
        if (values.shape[0] > 20 and np.all(np.isfinite(values)) and np.all(values == np.round(values))
                and (np.all(np.diff(values) > 0) or np.all(np.diff(values) < 0))):
            ids.append(str(name))
    return ids


def no_label_message(target, n_rows):
    """The message for a target column that labels none of its rows (empty cells, or the model's
    ``unlabeled`` marker in every row)."""
    return (f"target column {target!r} has no label in any of its {n_rows} rows: give the column of classes as "
            "--target, or fill in the classes of some rows.")


def split_target(df, labels, target, unlabelled=None):
    """Split a table into numeric features and the target column.

    ``labels``: the target column as :func:`read_labels` reads it (None where the file has no such
    column). ``unlabelled`` names a model that fits by EM over rows without a label: their empty
    target cells are kept (NaN in the returned y); None refuses them, naming the models that take them.
    """
    if target not in df.columns or labels is None:  # (a one-column file of another separator: read_csv)
        raise click.ClickException(
            f"target column {target!r} not in the CSV; it has: {column_list(df.columns)}."
        )
    if labels.isna().all():
        raise click.ClickException(no_label_message(target, len(labels)))
    if labels.isna().any() and unlabelled is None:
        raise click.ClickException(
            f"target column {target!r} has {int(labels.isna().sum())} missing value(s): drop those rows first, or fit "
            "--model lda, qda or mda, which learn from rows without a label too (semi-supervised EM)."
        )
    features = [c for c in df.columns if c != target]
    if not features:
        raise click.ClickException(f"no feature column is left beside the target {target!r}: the table needs at "
                                   "least one (check --drop).")
    X = numeric_features(df, features)
    return X, labels.to_numpy()


def drawable_rows(X, y):
    """Which training rows a decision-region plot can draw: labelled, with every feature observed.

    A row without a label has no class to colour it by; one with a missing cell has no place on
    the plane (its NaN would make the axis limits NaN). The model itself learns from all rows.

    Parameters
    ----------
    X : DataFrame of shape (n_samples, 2)
    y : ndarray of shape (n_samples,)
        NaN where a row has no label.

    Returns
    -------
    drawn : ndarray of bool of shape (n_samples,)
    """
    return ~pd.isna(np.asarray(y, dtype=object)) & X.notna().all(axis=1).to_numpy()


def remember_training_rows(model, X_train, csv):
    """Record on a fitted model's PrototypeClassifier the CSV data rows it was fitted on, as ``training_rows_``.

    A prototype is one training row, numbered by its position in the training part (a shuffled
    split of the CSV); ``discrim explain`` shows the CSV row instead, from this record. It is kept
    on the classifier (a pipeline's last step, a search's ``best_estimator_``), whose next fit drops
    it: a pipeline refitted on other rows would otherwise name its prototypes after the old ones.

    Parameters
    ----------
    model : estimator
        Fitted, about to be saved; a model without prototypes records nothing.
    X_train : DataFrame
        The training rows, indexed by their position among the CSV's data rows.
    csv : str or None
        The CSV read; None (a built-in data set) records nothing.
    """
    from discrim.prototype._report import split_model

    if csv is None:
        return
    try:
        _, final, _ = split_model(model)
    except TypeError:  # not a prototype set model: nothing names its rows
        return
    final.training_rows_ = np.asarray(X_train.index, dtype=np.int64)


# --param values are Python literals of these kinds; anything longer or deeper is refused
# before parsing, since ast.literal_eval recurses (RecursionError) and builds whatever it is
# given (MemoryError on huge expressions).
_MAX_PARAM_LENGTH = 1000
_MAX_PARAM_ITEMS = 1000
_SCALARS = (bool, int, float, str, type(None))


def _literal(key, text):
    """Parse one --param value: a number, bool, None, string, or a flat list/tuple of those."""
    if len(text) > _MAX_PARAM_LENGTH:
        raise click.ClickException(
            f"--param {key}: the value is {len(text):,} characters long; at most {_MAX_PARAM_LENGTH:,} are accepted."
        )
    if _bracket_depth(text) > 1:
        raise click.ClickException(
            f"--param {key}: give a number, true/false, None, a string, or a flat list such as [1, 2, 3]; "
            f"nested lists, sets and dicts are not accepted (got {text[:60]!r})."
        )
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        if text[:1] in "([":
            raise click.ClickException(f"--param {key}: cannot read {text[:60]!r} as a list of literals.") from None
        return {"true": True, "false": False}.get(text.lower(), text)  # a bare word is a string
    if isinstance(value, (list, tuple)):
        if len(value) > _MAX_PARAM_ITEMS or not all(isinstance(v, _SCALARS) for v in value):
            raise click.ClickException(
                f"--param {key}: a list takes at most {_MAX_PARAM_ITEMS:,} numbers, strings, true/false or None."
            )
    elif not isinstance(value, _SCALARS):  # complex numbers, bytes, sets
        raise click.ClickException(f"--param {key}: {type(value).__name__} values are not accepted.")
    return value


def _bracket_depth(text):
    """Deepest nesting of brackets and braces outside quotes (a set or dict counts as nesting)."""
    depth = deepest = 0
    quote = None
    for char in text:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
            deepest = max(deepest, depth + (char == "{"))
        elif char in ")]}":
            depth -= 1
    return deepest


def parse_params(items):
    """Parse ``KEY=VALUE`` options into constructor keyword arguments.

    Values are Python literals: numbers, ``True``/``False`` (or ``true``/``false``), ``None``,
    quoted strings, and flat lists or tuples of those; any other word is taken as a string. Long or
    nested values, and a key given twice, are refused with a one-line error naming the key.
    """
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.ClickException(f"--param expects KEY=VALUE, got {item[:60]!r}.")
        if key.strip() in params:  # the last one silently won: a typo for another parameter, or a slip
            raise click.ClickException(f"--param {key.strip()} is given twice; give each parameter once.")
        params[key.strip()] = _literal(key.strip(), value.strip())
    return params


def model_from_params(model_name, params):
    """The registered model ``model_name`` built with ``--param`` values; an unknown key names the valid ones."""
    from discrim._registry import MODELS, make_model

    try:
        return make_model(model_name, **params)
    except TypeError as exc:
        if "unexpected keyword" not in str(exc):
            raise
        valid = sorted(MODELS[model_name].factory().get_params(deep=False))
        unknown = sorted(set(params) - set(valid))
        raise click.ClickException(f"--param: {model_name} has no parameter {', '.join(map(repr, unknown)) or ''}; "
                                   f"its parameters: {', '.join(valid)}.") from None


def check_plot_format(path, option="--plot"):
    """Fail early, before any work or output, if matplotlib cannot write ``path``'s format.

    Parameters
    ----------
    path : str or None
        The figure's path (its suffix names the format); nothing is checked when None.
    option : str, default="--plot"
    """
    if path is None:
        return
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise click.ClickException(f"{option} needs matplotlib: pip install matplotlib (discrim's plot extra).") from None
    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = Path(path).suffix.lstrip(".").lower()
    if suffix not in formats:
        raise click.ClickException(f"{option}: {str(path)!r} has no image format matplotlib writes; end it in "
                                   f"one of {', '.join('.' + f for f in sorted(formats))}.")
    if suffix == "pgf":  # matplotlib measures the text of a PGF figure with LaTeX, after all the work
        import shutil

        import matplotlib

        tex = matplotlib.rcParams["pgf.texsystem"]
        if shutil.which(tex) is None:
            raise click.ClickException(f"{option}: a .pgf figure needs LaTeX ({tex}), which is not installed here; "
                                       "write .pdf or .svg instead.")


# Suffixes that name a format other than the one an output is written in: a CSV file named
# .parquet (or a Parquet folder named .csv) is what its reader would fail on.
_OTHER_FORMAT_SUFFIXES = {
    "csv": (".parquet", ".pq", ".zarr", ".xlsx", ".xls", ".json", ".skops", ".feather", ".html"),
    "parquet": (".csv", ".tsv", ".txt", ".xlsx", ".xls", ".json", ".skops", ".zarr", ".feather", ".html"),
}


def check_output_suffix(path, option, written, fix):
    """Refuse, before any work, an output name whose suffix names another format than the one written.

    Parameters
    ----------
    path : str or None
        The output path given for ``option``; nothing is checked when None.
    option : str
        Name of the command-line option, for the message.
    written : {"csv", "parquet"}
        What the command writes there: CSV text, or a folder of Parquet files.
    fix : str
        The end of the message: how to name the output instead.
    """
    if path is None:
        return
    suffix = Path(path).suffix.lower()
    if suffix in _OTHER_FORMAT_SUFFIXES[written]:
        what = "CSV text" if written == "csv" else "a folder of Parquet files"
        raise click.UsageError(f"{option}: this command writes {what} there, not {suffix!r}; {fix}")


def check_output(path, option, *, overwrite=False, inputs=()):
    """Fail early, before any work, if ``path`` cannot or must not be written.

    Parameters
    ----------
    path : str or None
        The output path given for ``option``; nothing is checked when None.
    option : str
        Name of the command-line option, for the messages.
    overwrite : bool, default=False
        Whether an existing file may be replaced (``--overwrite``).
    inputs : sequence of str or None
        Files the command reads: an output onto one of them is refused even with ``overwrite``.
    """
    if path is None:
        return
    _refuse_standard_output(path, option)
    if str(path).endswith(("/", os.sep)):  # Path() drops the slash: "out/" became a file named out
        raise click.ClickException(f"{option}: {str(path)!r} names a folder (it ends in a slash); give a file name.")
    target = Path(path)
    for source in inputs:
        if source is not None and _same_file(target, Path(source)):
            raise click.ClickException(
                f"{option}: {str(target)!r} is an input of this command; write the output to another file."
            )
    if target.is_dir():
        raise click.ClickException(f"{option}: {str(target)!r} is a folder; give a file name.")
    if target.exists() and not target.is_file():  # --overwrite put a regular file in place of /dev/null
        raise click.ClickException(f"{option}: {str(target)!r} is not a regular file (a device, pipe or socket), "
                                   "which the output would replace; give a file name.")
    if target.exists() and not overwrite:
        raise click.ClickException(
            f"{option}: {str(target)!r} exists; give --overwrite to replace it, or another file name."
        )
    check_writable_folder(target.resolve().parent, option)


def _refuse_standard_output(path, option):
    """Refuse '-', the usual name of standard output, where an option writes files only (it became a
    file named '-'): only ``discrim predict --csv`` writes its predictions there."""
    if str(path) == "-":
        raise click.ClickException(f"{option}: '-' (standard output) is taken by `discrim predict --csv ... --output -` "
                               "only; here give a file name.")


def check_writable_folder(folder, option):
    """Refuse, naming ``option``, a folder that does not exist or where no file can be created.

    The outputs are written through a temporary file beside them: one is created and removed here,
    before any work (permission bits alone pass /proc or a read-only mount for root, and the
    failure came after the fit, naming the temporary file).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise click.ClickException(f"{option}: folder {str(folder)!r} does not exist.")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise click.ClickException(f"{option}: no file can be written in folder {str(folder)!r} "
                                   f"({exc.strerror or exc}); give a path in a writable folder.") from None


# What a Parquet folder discrim writes (dask's to_parquet) may hold: an existing folder with
# anything else is never replaced, whatever --overwrite says
_PARQUET_FOLDER_FILES = ("*.parquet", "_metadata", "_common_metadata")


def check_output_folder(path, option, *, overwrite=False, inputs=()):
    """Fail early, before any work, if a Parquet output folder cannot or must not be written.

    ``--overwrite`` replaces a whole folder, so it is refused where that would remove anything
    but an earlier output: a folder holding other files, a file (a CSV is not a Parquet folder),
    the current folder or one above it, and a folder holding (or inside) one of the command's
    inputs.

    Parameters
    ----------
    path : str
        The output folder given for ``option``.
    option : str
        Name of the command-line option, for the messages.
    overwrite : bool, default=False
        Whether an earlier output folder may be replaced (``--overwrite``).
    inputs : sequence of str or None
        Files and folders the command reads.
    """
    _refuse_standard_output(path, option)
    target = Path(path).resolve()
    if target == Path.cwd().resolve() or target in Path.cwd().resolve().parents:
        raise click.ClickException(
            f"{option}: {str(path)!r} is the current folder or holds it; give a new folder name for the predictions."
        )
    for source in inputs:
        if source is None:
            continue
        source = Path(source).resolve()
        if source == target or target in source.parents or source in target.parents:
            raise click.ClickException(
                f"{option}: {str(path)!r} holds, or lies inside, the input {str(source)!r}; write the predictions "
                "to a folder of their own."
            )
    if not target.exists():
        check_writable_folder(target.parent, option)
        return
    if not target.is_dir():
        raise click.ClickException(
            f"{option}: {str(path)!r} is a file; the predictions of a Parquet or Zarr input are a Parquet folder: "
            "give a folder name."
        )
    if not overwrite:
        raise click.ClickException(f"{option}: {str(path)!r} exists; give --overwrite to replace it, or another name.")
    others = sorted(entry.name for entry in target.iterdir()
                    if not (entry.is_file() and any(entry.match(pattern) for pattern in _PARQUET_FOLDER_FILES)))
    if others:
        raise click.ClickException(
            f"{option}: {str(path)!r} holds files that are not Parquet output ({first_names(others)}); --overwrite "
            "replaces only a folder of Parquet files, such as an earlier prediction: give a new folder name."
        )
    foreign = sorted(entry.name for entry in target.glob("*.parquet") if not _is_prediction_file(entry))
    if foreign:
        raise click.ClickException(
            f"{option}: {str(path)!r} holds Parquet files that are not discrim predictions ({first_names(foreign)}: "
            "no 'predicted' column first); --overwrite replaces only an earlier prediction: give a new folder name."
        )


def column_list(columns, shown=12):
    """A table's column names for a message: all of a narrow table's, the first ``shown`` of a wide one's.

    Parameters
    ----------
    columns : sequence
    shown : int, default=12

    Returns
    -------
    text : str
        E.g. "a, b, c" or "f0, f1, ..., f11, ... (1,001 columns)"; a name holding a line break or
        another unprintable character is quoted and escaped ('sepal\\nlength'): as written, it broke the
        one-line message in two.
    """
    names = [str(c) if str(c).isprintable() else repr(str(c)) for c in columns]
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])}, ... ({len(names):,} columns)"


def first_names(names, shown=3):
    """The first ``shown`` names, quoted, and "..." when there are more."""
    return ", ".join(repr(name) for name in names[:shown]) + (", ..." if len(names) > shown else "")


def _is_prediction_file(path):
    """Whether a Parquet file's first column is ``predicted``, as ``discrim predict`` writes it."""
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except Exception:  # not readable as Parquet: not ours
        return False
    return bool(names) and names[0] == "predicted"


def check_distinct_outputs(**paths):
    """Refuse two output options naming the same file (the second would replace the first)."""
    seen = {}
    for option, path in paths.items():
        if path is None:
            continue
        for other, other_path in seen.items():
            if _same_file(Path(path), Path(other_path)):
                raise click.ClickException(f"{option} and {other} name the same file {str(path)!r}; give two names.")
        seen[option] = path


def _same_file(a, b):
    """Whether two paths are one file (existing: same inode; otherwise the same resolved path)."""
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_finite_probabilities(proba, what="the model"):
    """Refuse to report probabilities that are not finite (defence in depth for the writers)."""
    bad = ~np.all(np.isfinite(proba), axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise click.ClickException(
            f"{what} gave non-finite probabilities for {rows.size} row(s) (first: data row {rows[0]}); "
            "nothing was written. Check those rows for values far outside the training data."
        )


def write_csv_atomic(df, path):
    """Write ``df`` to ``path`` through a temporary file, so no partial file is left on failure."""
    with atomic_output(path) as tmp:
        df.to_csv(tmp, index=False)


def model_features(model, df):
    """The columns of ``df`` a fitted model takes, in its order."""
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        return numeric_features(df, list(names), allow_empty=True)
    n_expected = getattr(model, "n_features_in_", None)
    # a model fitted on an array (save_model from Python) has no names to pick its columns by: every
    # column is one of its features, in order, so text beside numeric columns that are as many as its
    # features (a label, a name) was refused as "non-numeric features ... the model learnt them as numbers"
    table = truth_values_as_numbers(df)
    text = [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])]
    if text and n_expected is not None and table.shape[1] - len(text) == n_expected:
        context = click.get_current_context(silent=True)
        fix = (f"set them aside with --keep {','.join(map(str, text))}, or leave them out of the CSV"
               if context is None or context.info_name == "predict" else
               "leave them out of the CSV (of the --csv rows, --target sets aside the column of the true class)")
        raise click.ClickException(
            f"the model has no feature names (it was fitted on an array): it takes every column as a feature, in "
            f"training order, and column(s) {', '.join(map(repr, map(str, text)))} are text beside its "
            f"{n_expected} numeric ones: {fix}.")
    X = numeric_features(df, allow_empty=True)
    if n_expected is not None and X.shape[1] != n_expected:
        raise click.ClickException(
            f"the model takes {n_expected} features but the CSV has {X.shape[1]} columns: give only "
            "the feature columns, in training order."
        )
    return X.to_numpy()


def check_classifier(model, model_path):
    """Refuse a loaded model that cannot report class probabilities (e.g. a FiniteMixture).

    ``model`` comes from :func:`~discrim.persistence.load_model`, which refuses a file that holds
    data (a dict, list or array) rather than an estimator.
    """
    from sklearn.base import is_classifier

    # a Pipeline with damaged steps (none, or not (name, estimator) pairs) fails with a ValueError too
    with damaged_model_errors(model_path, also=(ValueError,)):
        final = model[-1] if hasattr(model, "steps") else model
        classifier = is_classifier(model)
    if not (classifier and hasattr(final, "predict_proba")):
        hint = (
            "; a mixture's components are not classes: use FiniteMixture.predict_proba in Python, or fit a "
            "classifier (e.g. --model mda) with `discrim fit`"
            if type(final).__name__ == "FiniteMixture"
            else "; give a model file written by `discrim fit --output` or `discrim tune --output`"
        )
        raise click.ClickException(f"{str(model_path)!r} holds a {type(final).__name__}, not a classifier{hint}.")
    check_fitted(final, model_path)


def check_fitted(model, model_path):
    """Refuse a loaded model (or a Pipeline's last step) that was saved before it was fitted.

    save_model writes unfitted estimators too; predicting with one failed on the first check of the
    rows, as "non-numeric features column(s) 'target': the model learnt them as numbers" (it learnt
    nothing), and explain called an unfitted PrototypeClassifier "not a prototype set model".
    """
    from discrim.utils._fitted_state import is_fitted

    if not is_fitted(model):
        raise click.ClickException(f"{str(model_path)!r} holds a {type(model).__name__} that was saved before it was "
                                   "fitted: give a model file of a fitted model (`discrim fit --output`, or save_model "
                                   "after fit).")


@contextmanager
def damaged_model_errors(model_path, also=()):
    """Turn errors of a model whose fitted state is incomplete or inconsistent into one line.

    A file that passed the loader's type checks can still lack a fitted attribute or hold arrays
    of the wrong shapes (edited, or written by another version); using it raises AttributeError,
    KeyError, IndexError or TypeError deep inside the estimator. ``also``: more exception types
    that mean a damaged model where the block only reads the model's structure (not where a
    ValueError may be the user's data).
    """
    try:
        yield
    except (AttributeError, KeyError, IndexError, TypeError, *also) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise click.ClickException(
            f"model file {str(model_path)!r} is damaged or from another version of discrim ({type(exc).__name__}: "
            f"{detail[:200]}); fit and save the model again."
        ) from None


def device_option(command, saves_models=True):
    """Add ``--device`` to a click command: where the model computes (torch), default numpy."""
    saved = "Saved models compute with numpy wherever they are loaded. " if saves_models else ""
    return click.option(
        "--device", default=None, metavar="DEVICE",
        help=f"Compute with PyTorch on this device: cpu, cuda, cuda:1 (default: numpy on the host). {saved}"
             "Data with empty cells are computed on the host only.",
    )(command)


def check_device_data(device, *tables):
    """Refuse ``--device`` before any work when the data have empty cells (handled on the host only).

    Parameters
    ----------
    device : str or None
        :func:`checked_device`'s value.
    *tables : DataFrame or ndarray
    """
    if device is not None and any(np.isnan(np.asarray(table, dtype=float)).any() for table in tables):
        raise click.UsageError(
            "the data have empty cells (missing values), which are computed on the host (numpy) only: leave out "
            "--device, or fill the cells first."
        )


def checked_device(device):
    """``--device`` as the estimators take it, or a one-line error (no torch, no such device)."""
    if device is None:
        return None
    from discrim.backend._device import check_device

    try:
        check_device(device, name="--device")
    except (ImportError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    return device


def on_host(model):
    """Set ``device=None`` on every discrim estimator of ``model`` (a fitted model to save).

    Fitted attributes are numpy already: the saved model then computes with numpy wherever it is
    loaded, instead of asking for a device that machine may lack.
    """
    parts = [step for _, step in getattr(model, "steps", [("", model)])]
    for part in parts:  # a search's set_params moves its refitted model, a discriminant's mixtures follow it
        if "device" in part.get_params(deep=False):
            part.set_params(device=None)
    return model
