"""Export and explanation of prototype set models in the user's units, through pipelines, and as reports."""

from __future__ import annotations

import dataclasses
import html
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from discrim._typing import ArrayLike, PathLike, PrototypeModel
from discrim.prototype import _explain
from discrim.utils._warnings import user_stacklevel

# The inverse of the preprocessing counts as column-wise (and as affine) when the cross-terms
# (and the departure from a straight line) of unit steps are below this share of the largest step.
_LINEAR_RTOL = 1e-9


def split_model(model):
    """The preprocessing and the fitted PrototypeClassifier behind ``model``.

    Parameters
    ----------
    model : PrototypeClassifier, PrototypeClassifierCV or Pipeline
        Fitted; a pipeline's last step is one of the other two (a search gives its
        ``best_estimator_``).

    Returns
    -------
    pre : transformer or None
        ``model[:-1]`` for a pipeline of several steps, followed by a search's fitted
        ``transformer_``; None when neither applies.
    final : PrototypeClassifier
    input_names : list of str or None
        The pipeline's ``feature_names_in_``, when it has them.
    """
    pre, final, names = None, model, None
    if hasattr(model, "steps"):
        final = model.steps[-1][1]
        pre = model[:-1] if len(model.steps) > 1 else None
        names = getattr(model, "feature_names_in_", None)
    search_transform = getattr(final, "transformer_", None)  # PrototypeClassifierCV(transformer=...)
    if names is None and search_transform is not None:
        names = getattr(final, "feature_names_in_", None)
    final = getattr(final, "best_estimator_", None) or final
    if search_transform is not None:
        from sklearn.pipeline import Pipeline

        steps = ([("pre", pre)] if pre is not None else []) + [("transformer", search_transform)]
        pre = Pipeline(steps) if len(steps) > 1 else search_transform
    _explain._check_model(final)
    return pre, final, None if names is None else [str(n) for n in names]


@dataclasses.dataclass(frozen=True)
class _Units:
    """How the model's features map to the pipeline's input columns (column-wise preprocessing only).

    ``inverse`` maps model rows (n, D) to input rows; ``slope`` (D,) is d(model feature) /
    d(input feature) where the map is affine, NaN where it is not.
    """

    inverse: object
    slope: np.ndarray
    names: list


def _units(pre, final, input_names):
    """:class:`_Units` of a column-wise preprocessing, or None with a warning saying why not."""
    D = final.n_features_in_
    if not hasattr(pre, "inverse_transform"):
        warnings.warn(f"the preprocessing {pre!r} has no inverse_transform: the report shows the model's units only.",
                      UserWarning, stacklevel=user_stacklevel())
        return None
    c = np.asarray(getattr(final, "center_", np.zeros(D)), dtype=np.float64)
    probe = np.vstack([c, c + np.eye(D), c + 2 * np.eye(D)])
    try:
        back = np.asarray(pre.inverse_transform(probe), dtype=np.float64)
    except (ValueError, TypeError, AttributeError) as exc:
        warnings.warn(f"the preprocessing cannot map the model's features back ({str(exc).splitlines()[0]}): the "
                      "report shows the model's units only.", UserWarning, stacklevel=user_stacklevel())
        return None
    if back.shape != (2 * D + 1, D):
        warnings.warn(f"the preprocessing maps {back.shape[1]} input columns to the model's {D} features: the report "
                      "shows the model's units only (original units need a column-wise transform such as a scaler).",
                      UserWarning, stacklevel=user_stacklevel())
        return None
    step = back[1:D + 1] - back[0]
    size = np.abs(step).max()
    off = step - np.diag(np.diag(step))
    if not np.all(np.isfinite(step)) or size == 0 or np.abs(off).max() > _LINEAR_RTOL * size:
        warnings.warn("the preprocessing mixes features: the report shows the model's units only (original units "
                      "need a column-wise transform such as a scaler).", UserWarning,
                      stacklevel=user_stacklevel())
        return None
    diag = np.diag(step)
    twice = np.diag(back[D + 1:] - back[0])
    affine = np.abs(twice - 2 * diag) <= _LINEAR_RTOL * np.maximum(np.abs(diag), size)
    slope = np.where(affine & (diag != 0), 1.0 / np.where(diag != 0, diag, 1.0), np.nan)
    names = input_names if input_names is not None and len(input_names) == D else _explain._feature_names(final)
    return _Units(inverse=pre.inverse_transform, slope=np.abs(slope), names=list(names))


def _to_original(units, final, values, columns):
    """Model-unit values (n, len(columns)) of the features ``columns`` in input units (NaN stays NaN; no
    rows give no rows, without calling the inverse, which refuses an empty array)."""
    if values.shape[0] == 0:
        return np.zeros((0, len(columns)))
    full = np.tile(np.asarray(getattr(final, "center_", np.zeros(final.n_features_in_)), dtype=np.float64),
                   (values.shape[0], 1))
    full[:, columns] = np.where(np.isnan(values), full[:, columns], values)
    out = np.asarray(units.inverse(full), dtype=np.float64)[:, columns]
    return np.where(np.isnan(values), np.nan, out)


def _model_names(pre, final, feature_names, units):
    """The feature names to show: given, the pipeline's input names (column-wise), the model's, or x0, x1, ..."""
    if feature_names is not None:
        return _explain._check_feature_names(final, feature_names)
    if units is not None:
        return units.names
    if pre is not None and getattr(final, "feature_names_in_", None) is None:
        try:
            out = [str(n) for n in pre.get_feature_names_out()]
        except (AttributeError, ValueError, TypeError):
            out = None
        if out is not None and len(out) == final.n_features_in_:
            return out
    return _explain._feature_names(final)


def _default_sample_names(model, final, sample_names):
    """``sample_names``, or the CSV data rows a command-line fit recorded (``training_rows_``) on the
    PrototypeClassifier ``final`` (or on ``model`` itself, where model files written before the record
    moved to the classifier keep it)."""
    if sample_names is not None:
        return sample_names
    recorded = getattr(final, "training_rows_", None)
    return getattr(model, "training_rows_", None) if recorded is None else recorded


def export(model: PrototypeModel, *, n_batches: int | None = None, feature_names: Sequence[str] | None = None,
           sample_names: ArrayLike | None = None, report: PathLike | None = None) -> pd.DataFrame:
    """Tabulate the prototypes of a fitted model, one row per prototype, in the model's and the input's units.

    Parameters
    ----------
    model : PrototypeClassifier, PrototypeClassifierCV or Pipeline
        Fitted; a pipeline exports its last step, with its prototypes and feature weights also in
        the units of the pipeline's input when the steps before it transform column by column
        (e.g. a StandardScaler).
    n_batches : int or None, default=None
        Export the first ``n_batches`` batches; None: all.
    feature_names : list of str or None, default=None
        Names of the features; default the pipeline's input names, the model's
        ``feature_names_in_``, or ``x0``, ``x1``, ...
    sample_names : array-like of shape (n_training_samples,) or None, default=None
        Names of the training rows: a column ``sample_name`` next to ``sample_index``. None: the
        PrototypeClassifier's ``training_rows_`` when it has them (a model saved by ``discrim fit``
        or ``discrim tune`` from a CSV: the CSV's data rows, as ``discrim explain`` shows them; a
        new fit drops them).
    report : str, path-like or None, default=None
        Also write the table to this ``.xlsx`` (needs openpyxl, the ``report`` extra) or
        ``.html`` file, with the sheets ``prototypes``, ``marginals`` and ``feature_weights``;
        written atomically (a failure leaves no file). Its path is checked first (see
        :func:`write_report`), before anything is computed.

    Returns
    -------
    table : DataFrame of shape (n_prototypes_total, n_columns)
        The columns of :func:`discrim.prototype._explain.export_model` (``batch``,
        ``sample_index``, [``sample_name``], ``target``, ``prototype_weight``, and per feature f
        ``<f>_weight`` and ``<f>_value`` in the model's units); through a column-wise pipeline,
        after each feature's pair, ``<f>_weight_original`` (the feature weight per input unit,
        ``v_bf * |d z_f / d x_f|``, NaN for a non-affine transform) and ``<f>_original`` (the
        prototype's value in input units). ``table.attrs["marginals"]`` holds ``p_0k``.

    Raises
    ------
    ValueError
        If two columns (of the table or of the report's sheets) would share a name, e.g. for a
        feature named ``prototype`` (a second ``prototype_weight``), or features ``a`` and
        ``a_weight`` through a pipeline (``a_weight_original`` twice): pass other names with
        ``feature_names``.

    Notes
    -----
    ``predict_proba`` of the model (or pipeline) is rebuilt from the table alone:
    ``q_k(x) = p_0k + sum over rows with target k of prototype_weight * exp(-1/2 sum_f
    (<f>_weight * (x_f - <f>_value))^2)`` over the features with positive weight in the row's
    batch (a feature its batch does not use has weight 0 and value NaN: leave it out of the sum),
    or the same with ``<f>_weight_original`` and ``<f>_original`` on the raw rows of an affine
    preprocessing; ``p_k(x) = q_k(x) / sum_l q_l(x)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from discrim.prototype import PrototypeClassifier, export
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)) * [1.0, 100.0]; y = (X[:, 0] > 0).astype(int)
    >>> pipe = make_pipeline(StandardScaler(), PrototypeClassifier(n_candidates=20, random_state=0)).fit(X, y)
    >>> table = export(pipe)
    >>> [c for c in table.columns if c.startswith("x1")]
    ['x1_weight', 'x1_value', 'x1_weight_original', 'x1_original']
    """
    if report is not None:
        _check_report_path(report)
    pre, final, input_names = split_model(model)
    sample_names = _default_sample_names(model, final, sample_names)
    units = _units(pre, final, input_names) if pre is not None else None
    names = _model_names(pre, final, feature_names, units)
    if units is not None:
        columns = _explain.export_columns(names, sample_names is not None, original=True)
        _explain.check_distinct_columns(columns, "export table")
    table = _explain.export_model(final, n_batches=n_batches, feature_names=names, sample_names=sample_names)
    if units is not None:  # the columns also when no prototype is shown (n_batches=0, every batch empty)
        D = final.n_features_in_
        values = table[[f"{n}_value" for n in names]].to_numpy(dtype=np.float64)
        original = _to_original(units, final, values, np.arange(D))
        for d, name in enumerate(names):
            table[f"{name}_weight_original"] = table[f"{name}_weight"].to_numpy() * units.slope[d]
            table[f"{name}_original"] = original[:, d]
        marginals = table.attrs["marginals"]
        table = table[[column for column, _ in columns]]
        table.attrs["marginals"] = marginals
    if report is not None:
        write_report(report, _export_frames(table, names, units is not None),
                     title=f"prototype set model: {len(table)} prototypes")
    return table


def _export_frames(table, names, original):
    """The sheets of an export report: prototypes, marginals, and feature weights per batch."""
    marginals = pd.DataFrame({"class": list(table.attrs["marginals"]), "p0": list(table.attrs["marginals"].values())})
    suffixes = ("", "_original") if original else ("",)
    _explain.check_distinct_columns([("batch", None)] + [(n + suffix, n) for n in names for suffix in suffixes],
                                    "report's feature_weights sheet")
    weights = {"batch": []}
    for name in names:
        weights[name] = []
        if original:
            weights[f"{name}_original"] = []
    for b, part in table.groupby("batch", sort=True):
        weights["batch"].append(b)
        for name in names:
            weights[name].append(float(part[f"{name}_weight"].iloc[0]))
            if original:
                weights[f"{name}_original"].append(float(part[f"{name}_weight_original"].iloc[0]))
    return {"prototypes": table, "marginals": marginals, "feature_weights": pd.DataFrame(weights)}


def familiarity(model: PrototypeModel, X: ArrayLike, n_batches: int | None = None) -> np.ndarray:
    """Familiarity ``sum_bj w_bj K_vb(x - s_bj)`` of rows given to a model or a pipeline.

    Parameters
    ----------
    model : PrototypeClassifier, PrototypeClassifierCV or Pipeline
        Fitted; a pipeline transforms X with its steps before the last.
    X : array-like of shape (n_samples, n_features)
        Rows in the units the model (or pipeline) takes.
    n_batches : int or None, default=None
        Sum over the first ``n_batches`` batches; None: all.

    Returns
    -------
    familiarity : ndarray of shape (n_samples,)

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from discrim.prototype import PrototypeClassifier, familiarity
    >>> X, y = load_iris(return_X_y=True)
    >>> familiarity(PrototypeClassifier(random_state=0).fit(X, y), X[:3]).shape
    (3,)
    """
    pre, final, _ = split_model(model)
    return _explain.familiarity(final, pre.transform(X) if pre is not None else X, n_batches=n_batches)


def explain(model: PrototypeModel, X: ArrayLike, y: object = None, *, reference: ArrayLike | None = None,
            n_prototypes: int | None = 10, n_batches: int | None = None, feature_names: Sequence[str] | None = None,
            sample_names: ArrayLike | None = None, report: PathLike | None = None) -> _explain.Explanation:
    """Explain one prediction of a prototype set model, in the model's and the input's units.

    Parameters
    ----------
    model : PrototypeClassifier, PrototypeClassifierCV or Pipeline
        Fitted; a pipeline transforms X (and ``reference``) with its steps before the last and
        shows values also in its input units where those steps work column by column.
    X : array-like of shape (n_features,) or (1, n_features)
        The row, in the units the model (or pipeline) takes; a one-row DataFrame names it by its
        index label.
    y : object, default=None
        The row's true class, or a list, array or Series holding just it.
    reference : array-like of shape (n_reference, n_features), default=None
        Rows in the same units (e.g. the training rows): the explanation's
        ``familiarity_quantile`` is the share of them whose familiarity is at most the row's.
    n_prototypes : int or None, default=10
        How many prototypes to list, by decreasing impact; None lists all.
    n_batches : int or None, default=None
        Explain the model of the first ``n_batches`` batches; None: all.
    feature_names : list of str or None, default=None
        Names of the features (see :func:`export`).
    sample_names : array-like of shape (n_training_samples,) or None, default=None
        Names of the training rows, shown as ``sample_name`` next to each prototype's
        ``sample_index``. None: the PrototypeClassifier's ``training_rows_`` when it has them (see
        :func:`export`).
    report : str, path-like or None, default=None
        Also write the explanation to this ``.xlsx`` (needs openpyxl) or ``.html`` file, with
        the sheets ``summary``, ``classes``, ``prototypes`` and ``features``; written atomically,
        its path checked first (see :func:`write_report`).

    Returns
    -------
    explanation : Explanation
        Per prototype: its contribution to each class probability (``p_<class>``), whether it is
        in the dominant set, its values (and, through a pipeline, ``<f>_original``); the row's
        true class and familiarity quantile when given. See :class:`Explanation`.

    Raises
    ------
    ValueError
        If two columns of the prototype table would share a name (e.g. for a feature named
        ``prototype``): pass other names with ``feature_names``.

    Examples
    --------
    >>> import numpy as np
    >>> from discrim.prototype import PrototypeClassifier, explain
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)); y = (X[:, 0] > 0).astype(int)
    >>> clf = PrototypeClassifier(n_candidates=20, random_state=0).fit(X, y)
    >>> ex = explain(clf, X[:1], y[0], reference=X)
    >>> 0.0 <= ex.familiarity_quantile <= 1.0
    True
    """
    if report is not None:
        _check_report_path(report)
    pre, final, input_names = split_model(model)
    sample_names = _default_sample_names(model, final, sample_names)
    units = _units(pre, final, input_names) if pre is not None else None
    names = _model_names(pre, final, feature_names, units)
    name = None
    if isinstance(X, (pd.DataFrame, pd.Series)):
        name = X.index[0] if isinstance(X, pd.DataFrame) and len(X) else X.name
    raw = X
    if pre is not None:
        if units is not None:
            _explain.check_distinct_columns(
                _explain.prototype_columns(names, final.classes_, sample_names is not None, original=True),
                "explanation's prototype table")
        if not isinstance(raw, (pd.DataFrame, pd.Series)) and np.ndim(raw) == 1:
            raw = np.asarray(raw)[None, :]
        if isinstance(raw, pd.Series):
            raw = raw.to_frame().T
        # as the pipeline hands it to its last step: a DataFrame (set_output(transform="pandas")) keeps the
        # feature names the model was fitted with, and the row keeps the name it had (None for an array)
        X = pre.transform(raw)
        if isinstance(X, pd.DataFrame):
            X = X.set_axis(pd.Index([name] * len(X), dtype=object), axis=0)
        if reference is not None:
            reference = pre.transform(reference)
    ex = _explain.explain_prediction(final, X, n_prototypes, names, y=y, reference=reference, n_batches=n_batches,
                                     sample_names=sample_names, name=name)
    if units is not None:
        ex = _with_original_units(ex, units, final, names)
    if report is not None:
        write_report(report, ex.to_frames(), title=f"explanation of row {ex.name if ex.name is not None else ''}")
    return ex


def _with_original_units(ex, units, final, names):
    """``ex`` with ``<f>_original`` prototype columns and an ``original`` feature column."""
    index = {name: d for d, name in enumerate(names)}
    active = [index[f] for f in ex.features["feature"]]
    protos = ex.prototypes.copy()
    shown = [name for name in names if f"{name}_value" in protos.columns]
    if shown:
        cols = np.array([index[n] for n in shown])
        original = _to_original(units, final, protos[[f"{n}_value" for n in shown]].to_numpy(np.float64), cols)
        for i, name in enumerate(shown):
            at = protos.columns.get_loc(f"{name}_value") + 1
            protos.insert(at, f"{name}_original", original[:, i])
    features = ex.features.copy()
    if len(features):
        original = _to_original(units, final, features["value"].to_numpy(np.float64)[None, :], np.array(active))[0]
        features.insert(2, "original", original)
        # model units per input unit: a feature weight times it is the weight in the input units
        features.insert(3, "slope", units.slope[active])
    return dataclasses.replace(ex, prototypes=protos, features=features)


# ------------------------------------------------------------------ report files


def write_report(path: PathLike, frames: Mapping[str, pd.DataFrame], title: str = "report") -> None:
    """Write tables to an ``.xlsx`` workbook (one sheet each) or an ``.html`` page, atomically.

    Parameters
    ----------
    path : str or path-like
        The file; its suffix chooses the format. Written under a temporary name and renamed
        when complete, so a failure leaves no file (and an existing file unchanged). Either
        format holds every number in full: a workbook as numbers, a page as the shortest text
        that reads back as the same float64 (so an export's prototype table rebuilds
        ``predict_proba`` from either); a missing value is an empty cell.
    frames : dict of str to DataFrame
        Sheet (or section) name to table, in order. Text (cells and column names) is stored as
        text, never as a formula: a label such as ``=1+2`` shows as written.
    title : str, default="report"
        The HTML page's title and heading.

    Raises
    ------
    ValueError
        If the suffix is neither ``.xlsx`` nor ``.html``/``.htm``.
    FileNotFoundError
        If the folder of ``path`` does not exist (the message names ``path``).
    IsADirectoryError
        If ``path`` is a folder.
    ImportError
        For ``.xlsx`` without openpyxl (``pip install openpyxl``, the ``report`` extra).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from discrim.prototype import write_report
    >>> frames = {"summary": pd.DataFrame({"item": ["rows"], "value": [3]}),
    ...           "scores": pd.DataFrame({"row": [0, 1, 2], "score": [0.5, 0.25, 0.125]})}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "report.html"
    ...     write_report(path, frames, title="three rows")
    ...     page = path.read_text(encoding="utf-8")
    >>> "<h1>three rows</h1>" in page and 'id="scores"' in page
    True
    """
    from discrim.utils._files import atomic_output

    suffix = _check_report_path(path)
    if suffix == ".xlsx":
        import importlib.util

        if importlib.util.find_spec("openpyxl") is None:
            raise ImportError("xlsx reports need openpyxl: install it with `pip install openpyxl` (discrim's "
                              "report extra), or write an .html report.") from None
        with atomic_output(path) as tmp:
            with pd.ExcelWriter(tmp, engine="openpyxl") as writer:
                for sheet, frame in frames.items():
                    _for_file(frame).to_excel(writer, sheet_name=sheet[:31], index=False)
                for worksheet in writer.book.worksheets:
                    _as_written(worksheet)
        return
    parts = [f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>",
             "<style>table{border-collapse:collapse;font-family:sans-serif;font-size:12px}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    for sheet, frame in frames.items():
        parts.append(f"<h2>{html.escape(sheet)}</h2>")
        # repr: the shortest text that reads back as the same float (6 digits lost the prototypes' 1e-5)
        parts.append(_for_file(frame).to_html(index=False, na_rep="", float_format=lambda v: repr(float(v)),
                                              table_id=sheet, escape=True))
    parts.append("</body></html>\n")
    with atomic_output(path) as tmp:
        Path(tmp).write_text("\n".join(parts), encoding="utf-8")


def _check_report_path(path):
    """The suffix of a report ``path`` (lower case), checked before anything is computed or written.

    Raises ValueError for a suffix other than .xlsx, .html and .htm, FileNotFoundError when the
    folder is missing and IsADirectoryError when ``path`` is a folder, each naming ``path``.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in {".xlsx", ".html", ".htm"}:
        raise ValueError(f"a report is an .xlsx or .html file; got {str(path)!r}.")
    folder = Path(path).parent
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write the report {str(path)!r}: its folder {str(folder)!r} does not exist "
                                "(create it first).")
    if Path(path).is_dir():
        raise IsADirectoryError(f"cannot write the report {str(path)!r}: it is a folder; give a file name such as "
                                f"{str(Path(path) / ('report' + suffix))!r}.")
    return suffix


def _as_written(worksheet):
    """Make the cells store what the tables hold: text as text, every float in full.

    openpyxl takes text starting with "=" (a label or a feature name from the user's data) for a
    formula: such cells are stored as text, so that the workbook shows the tables' text and runs
    nothing (openpyxl writes other text as inline strings, which a spreadsheet never evaluates,
    whatever their first character: "+", "-", "@", tab). It writes a number with 16 significant
    digits, which loses the last digit of some float64 (154.03068714498795 read back as
    154.030687144988): those are written as the shortest text that reads back as the same float,
    still a number cell.
    """
    for row in worksheet.iter_rows():
        for cell in row:
            if cell.data_type == "f":
                cell.data_type = "s"
            elif cell.data_type == "n" and isinstance(cell.value, float) and np.isfinite(cell.value):
                if float(f"{cell.value:.16g}") != cell.value:
                    cell.value = repr(float(cell.value))  # openpyxl writes a text value of a number cell as given
                    cell.data_type = "n"


def _for_file(frame):
    """A copy whose object columns hold plain values (labels as str where they are not numbers)."""
    out = frame.copy()
    out.attrs = {}
    for column in out.columns:
        if out[column].dtype == object:
            out[column] = out[column].map(lambda v: v if v is None or isinstance(v, (int, float, str, bool))
                                          else str(v))
    return out
