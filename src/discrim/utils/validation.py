"""Input checks that give errors naming the parameter and the fix."""

from collections.abc import Mapping

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from discrim.backend import host_input, to_numpy
from discrim.backend import _ops as ops


def check_sample_weight(sample_weight, n_samples, dtype=np.float64):
    """Validate ``sample_weight`` and return it as a float array.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        ``None`` means unit weights.
    n_samples : int
    dtype : numpy dtype, default=np.float64

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        If the weights have the wrong length, are not finite, are negative or sum to zero.
    """
    if sample_weight is None:
        return np.ones(n_samples, dtype=dtype)
    sample_weight = host_input(sample_weight)
    if np.isscalar(sample_weight):
        sample_weight = np.full(n_samples, sample_weight, dtype=dtype)
    try:
        w = np.asarray(sample_weight, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sample_weight must be numeric: {exc}") from None
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight has shape {w.shape} but X has {n_samples} samples: "
            "pass one weight per row of X."
        )
    check_weight_entries(w)
    with np.errstate(over="ignore"):  # an overflowing sum is reported by check_weight_total
        check_weight_total(w.sum())
    return w


def check_weight_entries(w):
    """Raise unless every weight is finite and non-negative (the checks that hold block by block)."""
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity: pass finite weights.")
    if np.any(w < 0):
        raise ValueError("sample_weight contains negative values: weights must be >= 0.")


def check_weight_total(total):
    """Raise unless the weights' total is positive and finite (checked once all blocks are summed)."""
    if not total > 0:
        raise ValueError("sample_weight sums to zero: at least one row needs a positive weight.")
    if not np.isfinite(total):
        raise ValueError(
            "sample_weight sums to infinity: divide the weights by a common factor (only their "
            "ratios matter)."
        )


def rescale_weights(sample_weight):
    """Scale weights by a power of two so that the largest lies in [1, 2).

    Only the ratios of the weights matter to a weighted fit; a uniform scale far from one
    (subnormal weights of 1e-310, or 1e300) would otherwise underflow or overflow the weighted
    sums. A power of two is exact: weights already in range are returned unchanged, bit for bit.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,)
        Finite, non-negative, with a positive maximum (as :func:`check_sample_weight` returns).

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,)
    """
    exponent = np.frexp(np.max(sample_weight))[1] - 1
    return sample_weight if exponent == 0 else np.ldexp(sample_weight, -exponent)


def max_feature_magnitude(dtype=np.float64):
    """Largest feature magnitude discrim accepts for data of ``dtype``.

    Squared distances of centred data are summed over features and rows, so values beyond about
    the cube root of the dtype's largest number would overflow (or lose every digit of their
    spread to the offset) and turn probabilities into NaN: 1e102 for float64, 1e12 for float32.
    """
    return 10.0 ** (np.finfo(dtype).maxexp * np.log10(2.0) // 3)


def check_feature_magnitude(X, name="X", training=False):
    """Refuse data too large in magnitude to be represented in squared distances (or, to fit, too small).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Floating-point values; NaN (where a caller allows missing values) is ignored.
    name : str, default="X"
        The parameter's name in the error message.
    training : bool, default=False
        Rows to fit to: a feature whose every nonzero value is tiny is refused too (to predict,
        a row's value near 0 is fine).

    Returns
    -------
    X : ndarray
        The input, unchanged.

    Raises
    ------
    ValueError
        If any ``|x|`` exceeds :func:`max_feature_magnitude` of X's dtype, or (``training``) a
        feature's every nonzero ``|x|`` lies below its reciprocal (squares, variances and their products underflow
        there: such a feature looked constant); the message names the parameter and the fix.
    """
    X = np.asarray(X)
    if X.size and X.dtype.kind == "f":
        from discrim._posterior import listed_indices

        limit = max_feature_magnitude(X.dtype)
        largest = feature_magnitudes(X)
        if largest.max() > limit:
            raise ValueError(
                f"{name} has values of magnitude up to {largest.max():.3g}; discrim supports |value| <= "
                f"{limit:.0e} for {X.dtype} data: rescale the features (e.g. with StandardScaler "
                "or a change of units)."
            )
        vanishing = vanishing_features(largest, X.dtype) if training else np.zeros(largest.shape, dtype=bool)
        count, shown = listed_indices(vanishing)
        if count:
            raise ValueError(
                f"{count} feature(s) of {name} (index {shown}) hold only values within +-{1.0 / limit:.0e} for "
                f"{X.dtype} data (at most {largest[vanishing].max():.3g}), whose "
                "squares vanish: rescale them (e.g. multiply by a power of ten, a change of units)."
            )
    return X


def feature_magnitudes(X):
    """The largest observed ``|x|`` of every feature (0 where every entry is missing, without numpy's warning).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) of float
        NaN is a missing value; a 1-d X counts as one feature.

    Returns
    -------
    largest : ndarray of shape (n_features,)
    """
    if X.ndim == 2:
        return np.max(np.abs(X), axis=0, where=~np.isnan(X), initial=0.0)
    return np.max(np.abs(X), where=~np.isnan(X), initial=0.0, keepdims=True)


def vanishing_features(largest, dtype=np.float64):
    """Features whose every nonzero value lies within the reciprocal of :func:`max_feature_magnitude`.

    Their squares, variances and the products of those underflow: such a feature looks constant to
    every model, though it varies.

    Parameters
    ----------
    largest : ndarray of shape (n_features,)
        :func:`feature_magnitudes` of the data.
    dtype : dtype, default=float64

    Returns
    -------
    vanishing : ndarray of shape (n_features,) of bool
    """
    return (largest > 0) & (largest < 1.0 / max_feature_magnitude(dtype))


def _refuse_sparse_columns(X):
    """Refuse a DataFrame's sparse columns by name: scikit-learn's message for them ("use .toarray()")
    names a method DataFrames lack, and pandas' for a NaN fill value ("fill value must be 0 when
    converting to COO matrix") names neither the columns nor the fix."""
    import pandas as pd

    sparse = [str(c) for c, dtype in X.dtypes.items() if isinstance(dtype, pd.SparseDtype)]
    if sparse:
        shown = ", ".join(map(repr, sparse[:5])) + (f" and {len(sparse) - 5} more" if len(sparse) > 5 else "")
        raise ValueError(
            f"X has sparse column(s) {shown}: discrim's estimators take dense rows. Give X.sparse.to_dense() (a "
            "sparse column whose fill value is NaN then holds its missing values as NaN, which the estimators read "
            "as missing)."
        )


def numeric_object_columns(X):
    """``X`` with the object columns of a pandas DataFrame that hold numbers and missing markers as floats.

    pandas makes a column of numbers with ``None`` or ``pandas.NA`` an object column; every estimator
    then reads it as numbers with missing values (NaN). Columns with text stay as they are, for the
    estimators' own checks to name them. A numpy object array (``DataFrame.to_numpy()`` of
    nullable columns) gets NaN for its ``pandas.NA`` cells, which numpy cannot read as a number.

    Parameters
    ----------
    X : object
        Any input; only a pandas DataFrame with object columns, or a numpy object array holding
        ``pandas.NA``, changes.

    Returns
    -------
    X : object
        ``X``, or a copy with those columns converted.
    """
    import pandas as pd

    if isinstance(X, np.ndarray) and X.dtype == object:
        missing = pd.isna(X)
        if not missing.any():
            return X
        X = X.copy()
        X[missing] = np.nan
        return X
    if not isinstance(X, pd.DataFrame) or not X.columns.is_unique:
        return X
    _refuse_sparse_columns(X)
    converted = {}
    for column in X.columns[X.dtypes.to_numpy() == object]:
        values = numbers_of_column(X[column])
        if values is not None:  # else text (or values pandas cannot read as numbers)
            converted[column] = values
    if not converted:
        return X
    X = X.copy()
    for column, values in converted.items():
        X[column] = values
    return X


ENCODE_CATEGORIES = ("Encode categorical columns first: Product([...(Categorical(categories=[[...]]), [column])...])"
                     ".encode(X) gives the codes (and decode turns drawn rows back), or Categorical(categories=...)"
                     ".encode for one family.")


def check_mixture_table(X):
    """A mixture's X with its number-holding object columns as floats (:func:`numeric_object_columns`);
    a table's text, string or category columns refused by name, with the advice to encode categories.

    numpy would read numbers written as text silently, crash on a string column's ``<NA>`` and read a
    category column of numbers by value; the classifiers refuse such columns alike
    (:func:`check_numeric_table`).

    Parameters
    ----------
    X : object
        Any input; only a table (with ``columns`` and ``dtypes``) is checked.

    Returns
    -------
    X : object
    """
    X = numeric_object_columns(X)
    text = non_numeric_columns(X)
    if text:
        dtypes = ", ".join(str(X.dtypes[c]) for c in text)
        raise ValueError(f"column(s) {text} of X hold values that are not numbers (dtypes {dtypes}). {ENCODE_CATEGORIES}")
    return X


def non_numeric_columns(X):
    """The names of a table's columns that are neither numeric nor boolean ([] for anything else).

    Parameters
    ----------
    X : object
        A table has ``dtypes`` (a pandas or dask DataFrame).

    Returns
    -------
    names : list of str
    """
    dtypes = getattr(X, "dtypes", None)
    return _non_numeric(dtypes) if dtypes is not None and hasattr(dtypes, "items") else []


def _non_numeric(dtypes):
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    return [str(c) for c, dt in dtypes.items() if not (is_numeric_dtype(dt) or is_bool_dtype(dt))]


def numbers_of_column(column):
    """A column of a table read as numbers, as every estimator reads an object column: float64 with NaN
    where a value is missing (None, NaN or pandas' NA), or None if some value is no number.

    Parameters
    ----------
    column : pandas.Series

    Returns
    -------
    values : pandas.Series of float64 or None
    """
    import pandas as pd

    try:
        return pd.to_numeric(column).astype(np.float64)
    except (ValueError, TypeError):
        return None


def check_numeric_columns(dtypes):
    """Refuse a table with non-numeric columns, before any of its rows is read.

    Parameters
    ----------
    dtypes : pandas.Series
        Column name -> dtype (a DataFrame's ``dtypes``).
    """
    refuse_columns(_non_numeric(dtypes))


def refuse_columns(columns):
    """Raise ``ValueError`` naming non-numeric columns of X and the fix, if there are any.

    Parameters
    ----------
    columns : list
        Names of the columns that hold something other than numbers.
    """
    if columns:
        raise ValueError(
            f"X has non-numeric column(s) {[str(c) for c in columns]}: encode them as numbers first (for example "
            "with sklearn.preprocessing.OneHotEncoder; for a Categorical family, as category codes: "
            "Product([...(Categorical(categories=[[...]]), [column])...]).encode(X)) or drop them."
        )


def plain_label(label):
    """A label as a Python scalar, so that messages read 'b' and 0.0 rather than np.str_('b') and np.float64(0.0)."""
    return label.item() if isinstance(label, np.generic) else label


def check_labels(y):
    """Encode classification targets.

    Parameters
    ----------
    y : array-like of shape (n_samples,)

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        Sorted unique labels.
    y_idx : ndarray of shape (n_samples,) of int
        Index of each label in ``classes``.

    Raises
    ------
    ValueError
        If the targets are continuous or hold fewer than two classes.
    """
    y = host_input(y)
    try:
        check_classification_targets(y)
    except ValueError as exc:
        kinds = label_kinds(y)
        if len(kinds) > 1:  # scikit-learn's "Unknown label type: unknown ... a regression target"
            raise ValueError(
                f"y mixes labels of types {kinds}, which cannot be sorted into classes_: give every label one "
                "type, for example y.astype(str), or map them to integers."
            ) from exc
        raise
    classes, y_idx = np.unique(y, return_inverse=True)
    if classes.shape[0] == 0:
        raise ValueError(
            "y has no labelled row (every label is the unlabeled marker, or y is empty): a classifier needs "
            "labelled samples of at least two classes."
        )
    if classes.shape[0] < 2:
        raise ValueError(
            f"y has only one class ({plain_label(classes[0])!r}); a classifier needs samples of at least "
            "two classes."
        )
    return classes, y_idx.ravel()


def label_index(classes, y):
    """Index of every label of y in ``classes``; ValueError naming the labels not among them.

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        Distinct labels, sorted (as every discrim classifier's ``classes_``) or not.
    y : ndarray of shape (n_samples,)

    Returns
    -------
    index : ndarray of shape (n_samples,) of int
    """
    y = np.asarray(y)
    classes = np.asarray(classes)
    order = np.argsort(classes, kind="stable")
    index = order[np.clip(np.searchsorted(classes[order], y), 0, len(classes) - 1)]
    if not np.array_equal(classes[index], y):
        unknown = sorted(set(y.ravel().tolist()) - set(np.asarray(classes).tolist()), key=str)
        raise ValueError(f"y must be one label per row among classes_ {classes.tolist()}; got {unknown!r}.")
    return index


def label_kinds(y):
    """The sorted type names of an object array's labels, numbers (bool included) as "number", text
    (``numpy.str_`` included) as "str".

    Parameters
    ----------
    y : ndarray of shape (n_samples,)

    Returns
    -------
    kinds : list of str
        Empty unless y is an object array.
    """
    if getattr(y, "dtype", None) != object:
        return []
    return sorted({label_kind(v) for v in np.ravel(y)})


def plain_known_labels(labels):
    """The labels of the labelled rows (the ``unlabeled`` marker and missing labels taken out) in a
    plain dtype, as y without them would have.

    Labels beside a marker of another type ("?" among ints), or an Int64 column with gaps (ints
    and None), sit in an object array: labels of one kind become a plain array (int64, text);
    labels of mixed types stay objects, for :func:`check_labels` to refuse by name (``np.array``
    would make 1 and 'a' the texts '1' and 'a').

    Parameters
    ----------
    labels : ndarray of shape (n_labels,)

    Returns
    -------
    labels : ndarray of shape (n_labels,)
    """
    labels = np.asarray(labels)
    if labels.dtype == object and len(label_kinds(labels)) <= 1:
        return np.array(labels.tolist())
    return labels


def label_kind(value):
    """The type name :func:`label_kinds` gives one label: "number" (bool included), "str"
    (``numpy.str_`` included), else the type's name."""
    from numbers import Number

    return "number" if isinstance(value, Number) else "str" if isinstance(value, str) else type(value).__name__


def check_class_totals(classes, totals):
    """Raise if some class has zero total sample weight (its density could not be estimated).

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
    totals : ndarray of shape (n_classes,)
    """
    empty = classes[totals <= 0]
    if empty.size:
        raise ValueError(
            f"class {plain_label(empty[0])!r} has zero total sample_weight: give it positive weight or "
            "remove its rows."
        )


def _prior_array(priors, n_classes, kind="class", order="classes_", labels=None):
    """``priors`` as a float64 array and the dtype they came in, or a ValueError naming the
    parameter and what it accepts.

    A mapping from label to prior (or anything else numpy cannot read as numbers) would otherwise
    fail inside numpy with a TypeError that names no parameter. A pandas Series indexed by the
    labels (``y.value_counts(normalize=True)``, most frequent first) is read by its index.
    """
    expected = f"an array of {n_classes} probabilities, one per {kind} in the order of {order}"
    listed = order if order == "classes_" else f"range(len({order}))"
    if labels is not None and _is_series(priors):
        priors = _series_by_label(priors, labels, kind, order)
    if isinstance(priors, Mapping):
        raise ValueError(f"priors must be {expected}; got a {type(priors).__name__} ({priors!r}). "
                         f"From a mapping of label to prior, pass [priors[label] for label in {listed}].")
    if is_labelled_series(priors):
        # where the labels are not known here: numpy reads a Series by position and drops its index
        # (y.value_counts(normalize=True), sorted by frequency, gave its priors to the wrong classes)
        raise ValueError(f"priors must be {expected}; got a Series indexed by {list(priors.index)[:10]!r}, whose "
                         "values numpy would read in the Series' order, not by label. Pass "
                         f"priors.reindex({listed}).to_numpy().")
    try:
        given = np.asarray(priors)
        return given.astype(np.float64), given.dtype
    except (TypeError, ValueError) as exc:
        raise ValueError(f"priors must be {expected}; got {priors!r}.") from exc


def _is_series(value):
    """Whether ``value`` is a pandas Series (without importing pandas)."""
    return type(value).__name__ == "Series" and hasattr(value, "index") and hasattr(value, "reindex")


def _has_default_index(series):
    """Whether a Series' index is the positions 0, 1, ... (a Series made from a list)."""
    import pandas as pd

    index = series.index
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def is_labelled_series(value):
    """Whether ``value`` is a pandas Series indexed by labels (not by the default 0, 1, ...).

    Parameters
    ----------
    value : object

    Returns
    -------
    labelled : bool
    """
    return _is_series(value) and not _has_default_index(value)


def _series_by_label(priors, labels, kind, order):
    """A Series of priors indexed by the labels, as an array in the order of ``labels``.

    Its values were read in their order, whatever the index: ``y.value_counts(normalize=True)``
    (most frequent first) gave class 'a' the prior of 'b'. A Series with the default index
    (0, 1, ...) that is not the labels is read in order, as a list.
    """
    index = priors.index
    if index.has_duplicates:
        raise ValueError(f"priors is a pandas Series whose index repeats a label: {index.tolist()}.")
    label_list = [plain_label(label) for label in np.asarray(labels)]
    if set(index.tolist()) == set(label_list):
        return priors.reindex(label_list).to_numpy()
    if _has_default_index(priors):
        return priors.to_numpy()
    raise ValueError(
        f"priors is a pandas Series indexed by {index.tolist()}, which are not the {kind} labels "
        f"{label_list}: index it by the labels (it is then read by label), or pass an array in the order of {order}.")


def check_priors(priors, class_weight_totals, kind="class", order="classes_", labels=None):
    """Resolve the ``priors`` parameter of a discriminant rule.

    Parameters
    ----------
    priors : {"equal", "empirical"} or array-like of shape (n_classes,)
        "equal" gives the maximum-likelihood rule; "empirical" the class frequencies
        (sample-weighted); an array gives the Bayes rule with those prior probabilities.
    class_weight_totals : ndarray of shape (n_classes,)
        Total sample weight of each class.
    kind : str, default="class"
        What the labels are, in the messages ("component" for a mixture's rule).
    order : str, default="classes_"
        Where the labels' order is to be read, in the messages.
    labels : ndarray of shape (n_classes,) or None, default=None
        The labels in the order of ``order``: a pandas Series of priors indexed by them is read
        by label (None: in its order).

    Returns
    -------
    priors : ndarray of shape (n_classes,)
        Non-negative and summing to one.
    """
    n_classes = class_weight_totals.shape[0]
    if isinstance(priors, str):
        if priors == "equal":
            return np.full(n_classes, 1.0 / n_classes)
        if priors == "empirical":
            return class_weight_totals / class_weight_totals.sum()
        raise ValueError(f"priors must be 'equal', 'empirical' or an array; got {priors!r}.")
    p, dtype = _prior_array(priors, n_classes, kind, order, labels)
    if p.shape != (n_classes,):
        raise ValueError(
            f"priors has shape {p.shape} but there are {n_classes} {kind}{'es' if kind.endswith('s') else 's'}: "
            f"give one prior per {kind} "
            f"in the order of {order}."
        )
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("priors must be finite and non-negative.")
    # to the precision of the priors as given: ten float32 0.1 sum to 1 + 1.5e-8 in float64 (1 + 1.2e-7
    # in float32), and they are the user's tenths all the same (they are renormalised below)
    eps = np.finfo(dtype).eps if np.issubdtype(dtype, np.inexact) else 0.0
    total = float(p.sum())
    if abs(total - 1.0) > max(1e-8, 10 * n_classes * eps):
        # the shortest repr that is the float (a sum of 1 + 1.5e-8 showed as 1 at 6 digits)
        raise ValueError(f"priors must sum to one; they sum to {total!r}.")
    return p / total


def refuse_text_array(X, fix):
    """Refuse a numpy array of text, numbers written as text among it, which scikit-learn's
    conversion to float would read silently.

    Parameters
    ----------
    X : object
        Any input; only a numpy array of dtype str or bytes is refused.
    fix : str
        The rest of the message, after ``"X has dtype ... (text): "``.
    """
    if isinstance(X, np.ndarray) and X.dtype.kind in "US":
        raise ValueError(f"X has dtype {X.dtype} (text): {fix}")


def check_numeric_table(X):
    """A table's number-holding object columns read as floats; its non-numeric columns refused by name.

    Shared by the estimators' ``fit`` so that a text or categorical column of a DataFrame is
    named, with the fix, rather than failing inside numpy's float conversion.

    Parameters
    ----------
    X : object
        Any input; only a table (with ``columns`` and ``dtypes``) is checked.

    Returns
    -------
    X : object
        ``X``, or a copy with its number-holding object columns as floats
        (:func:`numeric_object_columns`).

    Raises
    ------
    ValueError
        If a column of the table is neither numeric nor boolean (:func:`non_numeric_columns`),
        or X is an array of text: numeric strings too, which scikit-learn's conversion to float
        would read silently, are refused, as numpy's text is no number.
    """
    refuse_text_array(X, "the estimators need numeric features; encode them as numbers first (e.g. "
                         "X.astype(float) for numbers written as text).")
    X = numeric_object_columns(X)
    refuse_columns(non_numeric_columns(X))
    return X


def _nullable_integer_labels(y):
    """A pandas nullable integer column (Int64) with gaps as ints and None (numpy would make it floats)."""
    dtype = getattr(y, "dtype", None)
    if getattr(dtype, "kind", None) in ("i", "u") and not isinstance(dtype, np.dtype) and hasattr(y, "isna") \
            and bool(y.isna().any()):
        return y.to_numpy(dtype=object, na_value=None)
    return y


def validated_training_data(estimator, X, y, *, dtype, min_samples=2, reset=True, on_host=False, allow_nan=False):
    """X and y for a classifier's fit: X checked and where the estimator computes, y on the host.

    Parameters
    ----------
    estimator : BaseEstimator
        Receives ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame) when ``reset``.
    X : array-like or torch.Tensor of shape (n_samples, n_features)
        Finite, with ``|x| <= max_feature_magnitude``; a tensor is checked where it lives.
    y : array-like or torch.Tensor of shape (n_samples,)
    dtype : numpy dtype, str or list
        Of X: one dtype, or ``[float64, float32]`` to keep float32.
    min_samples : int, default=2
    reset : bool, default=True
    on_host : bool, default=False
        Return X as numpy on the host whatever the estimator's device (fits whose row work
        moves to the device later, by parts).
    allow_nan : bool, default=False
        Accept NaN in host X (a missing value); tensors must be finite.

    Returns
    -------
    X : ndarray or torch.Tensor of shape (n_samples, n_features)
        A tensor exactly when the estimator computes on a device and ``on_host`` is False.
    y : ndarray of shape (n_samples,)
    """
    from sklearn.utils.validation import check_consistent_length, column_or_1d, validate_data

    from discrim.backend import to_numpy
    from discrim.backend._device import rows_on_device

    targets = {}
    y = host_input(y)  # labels live on the host (a tensor's values, bfloat16 as float32)
    # with an ``unlabeled`` marker, NaN in y marks an unlabelled row too (see unlabelled_rows), which
    # scikit-learn's check of y refuses: y is then only made 1-D and matched to X's length
    nan_labels = y is not None and getattr(estimator, "unlabeled", None) is not None
    if nan_labels:
        y = _nullable_integer_labels(y)
    finite = "allow-nan" if allow_nan else True

    if y is not None and not nan_labels:  # before X's checks, which a tensor X takes where it lives
        check_no_missing_labels(y, estimator)

    def validate(X):
        if nan_labels:
            X = validate_data(estimator, X, dtype=dtype, ensure_min_samples=min_samples, reset=reset,
                              ensure_all_finite=finite)
            targets["y"] = column_or_1d(y, warn=True)
            check_consistent_length(X, targets["y"])
        else:
            X, targets["y"] = validate_data(estimator, X, y, dtype=dtype, ensure_min_samples=min_samples, reset=reset,
                                            ensure_all_finite=finite)
        # Squared distances of larger values overflow to inf and the posteriors to inf - inf = NaN.
        return check_feature_magnitude(X, "X", training=True)

    tensor_dtype = None if isinstance(dtype, (list, tuple)) else dtype
    X = rows_on_device(estimator, X, validate, reset=reset, dtype=tensor_dtype, min_samples=min_samples)
    if "y" not in targets:  # a tensor X, validated where it lives
        targets["y"] = column_or_1d(y, warn=True)
        check_consistent_length(X, targets["y"])
    return (to_numpy(X) if on_host else X), targets["y"]


def observed_mask(X):
    """Missing values (NaN) of validated rows: the rows with 0 in their place, and the mask.

    Parameters
    ----------
    X : ndarray or torch.Tensor of shape (n_samples, n_features)

    Returns
    -------
    X : ndarray or torch.Tensor of shape (n_samples, n_features)
        A copy with 0 where X was NaN; X itself when nothing is missing.
    mask : ndarray of shape (n_samples, n_features) of bool or None
        True where an entry was observed; None when every entry was (the complete-data path).
    """
    if not isinstance(X, np.ndarray):  # tensors were validated as finite (rows_on_device)
        return X, None
    missing = np.isnan(X)
    if not missing.any():
        return X, None
    return np.where(missing, 0.0, X).astype(X.dtype, copy=False), ~missing


def check_observed_columns(mask, sample_weight):
    """Raise ``ValueError`` if some feature is observed in no row of positive weight.

    Parameters
    ----------
    mask : ndarray of shape (n_samples, n_features) of bool
    sample_weight : ndarray of shape (n_samples,)
    """
    check_observed_weight((sample_weight > 0) @ mask)


def pairs_never_observed(mask, sample_weight, chunk=65536):
    """The pairs of features that no row of positive weight observes together.

    Parameters
    ----------
    mask : ndarray of shape (n_samples, n_features) of bool
        True where observed.
    sample_weight : ndarray of shape (n_samples,)
    chunk : int, default=65536
        Rows per product (bounds the float copy of the mask).

    Returns
    -------
    pairs : ndarray of shape (n_pairs, 2) of int
        ``(j, k)`` with ``j < k``, in row-major order.
    """
    seen = np.asarray(mask)[np.asarray(sample_weight) > 0]
    d = seen.shape[1]
    together = np.zeros((d, d))
    for start in range(0, seen.shape[0], chunk):
        part = seen[start:start + chunk].astype(np.float64)
        together += part.T @ part
    return np.argwhere(np.triu(together == 0, k=1))


def check_classes_observed(X, y_idx, w, class_names, feature_names=None):
    """Raise ``ValueError`` if a class has a feature that none of the rows that can belong to it observes.

    EM would keep such a class's mean of the feature at its starting value (no row carries
    information about it) and the rule would use that invented value. An unlabelled row of
    positive weight that observes the feature informs every class through its responsibilities.

    Parameters
    ----------
    X : ndarray or dask.array.Array of shape (n_samples, n_features)
        NaN where missing.
    y_idx : ndarray or dask.array.Array of shape (n_samples,) of int
        Class indices; -1 for an unlabelled row.
    w : ndarray or dask.array.Array of shape (n_samples,)
    class_names : list of str
        How to name each class in the message.
    feature_names : array-like of str or None, default=None
    """
    from discrim.utils._dask import is_dask

    observed = ~np.isnan(X) & (w > 0)[:, None]
    member = y_idx[:, None] == np.arange(len(class_names))  # (n, K); False on every unlabelled row
    seen = member.T.astype(np.float64) @ observed.astype(np.float64)  # (K, d): rows that observe it
    seen_unlabelled = ((y_idx < 0)[:, None] & observed).any(axis=0)
    if is_dask(X):
        import dask

        seen, seen_unlabelled = dask.compute(seen, seen_unlabelled)
    unseen = (np.asarray(seen) == 0) & ~np.asarray(seen_unlabelled)[None, :]
    if not unseen.any():
        return
    shown = []
    for k in np.flatnonzero(unseen.any(axis=1))[:5]:
        features = np.flatnonzero(unseen[k])
        named = [str(feature_names[j]) if feature_names is not None else int(j) for j in features[:5]]
        shown.append(f"class {class_names[k]}: feature(s) {named}{' ...' if features.size > 5 else ''}")
    raise ValueError(
        "some classes never observe some features (NaN in every row of the class with positive weight), "
        f"so their class means there cannot be estimated: {'; '.join(shown)}. Give rows of those classes "
        "where the features are observed, leave those features out, or impute them first."
    )


def check_observed_weight(seen):
    """Raise ``ValueError`` if some feature is observed in no row of positive weight.

    Parameters
    ----------
    seen : ndarray of shape (n_features,)
        Per feature, the rows (or their total weight) of positive weight that observed it.
    """
    if not seen.all():
        raise ValueError(
            f"feature(s) {np.flatnonzero(seen == 0).tolist()} of X are missing (NaN) in every row with positive "
            "weight: nothing can be estimated for them. Drop those columns."
        )


def completion_values(means, discrete=False):
    """The features' means as the values that complete missing entries: rounded for a discrete
    family, so that the completed rows stay in its support.

    Parameters
    ----------
    means : ndarray of shape (n_features,)
    discrete : bool, default=False

    Returns
    -------
    values : ndarray of shape (n_features,)
    """
    return np.floor(means + 0.5) if discrete else means


def partial_labels(y, n_samples, n_labels, unlabeled=-1, name="y"):
    """Known labels of some rows as label indices, -1 where unknown (semi-supervised fits).

    Parameters
    ----------
    y : array-like of shape (n_samples,) or None
        Whole numbers in ``[0, n_labels)`` for labelled rows; ``unlabeled`` or NaN for
        unlabelled ones.
    n_samples : int
    n_labels : int
    unlabeled : int, default=-1
    name : str, default="y"

    Returns
    -------
    labels : ndarray of shape (n_samples,) of int64 or None
        None when y is None or labels no row.
    """
    if y is None:
        return None
    y = np.asarray(host_input(y))
    if y.shape != (n_samples,):
        raise ValueError(f"{name} has shape {y.shape} but X has {n_samples} rows: give one label (or -1) per row.")
    codes = label_codes(y, n_labels, unlabeled, name)
    return None if np.all(codes < 0) else codes


def label_codes(y, n_labels, unlabeled=-1, name="y"):
    """:func:`partial_labels` of a block of rows: label indices, -1 where unknown.

    Parameters
    ----------
    y : ndarray of shape (n,)
    n_labels : int
    unlabeled : int, default=-1
    name : str, default="y"

    Returns
    -------
    codes : ndarray of shape (n,) of int64
    """
    try:
        values = np.asarray(y).astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold component indices (whole numbers) or {unlabeled} / NaN for unlabelled "
                         f"rows; got dtype {np.asarray(y).dtype}.") from None
    unknown = np.isnan(values) | (values == unlabeled)
    known = values[~unknown]
    if np.any(known != np.round(known)) or np.any((known < 0) | (known >= n_labels)):
        bad = known[(known != np.round(known)) | (known < 0) | (known >= n_labels)][0]
        raise ValueError(f"{name} holds {bad:g}: a labelled row takes an index in [0, {n_labels}) and an "
                         f"unlabelled row {unlabeled} (unlabeled) or NaN.")
    return np.where(unknown, -1, np.nan_to_num(values)).astype(np.int64)


def missing_labels(y):
    """Where labels are missing: NaN, and None or pandas' NA in an object array.

    Parameters
    ----------
    y : array-like

    Returns
    -------
    missing : ndarray of bool, of y's shape
    """
    y = np.asarray(host_input(y))
    if y.dtype == object:
        import pandas as pd

        return np.asarray(pd.isna(y), dtype=bool)
    if y.dtype.kind == "f":
        return np.isnan(y)
    return np.zeros(y.shape, dtype=bool)


def check_no_missing_labels(y, estimator):
    """Refuse missing labels (NaN, and None or pandas' NA in an object array) unless ``estimator`` takes
    them for unlabelled rows (its ``unlabeled`` parameter is set).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The labels, or the distinct labels a pass over a dask y found.
    estimator : BaseEstimator
        Named in the message, which offers ``unlabeled=-1`` where the estimator has that parameter.
    """
    if getattr(estimator, "unlabeled", None) is not None or not missing_labels(y).any():
        return
    name = type(estimator).__name__
    raise ValueError(
        f"y has missing labels (NaN or None): pass unlabeled=-1 (they then mark unlabelled rows too) to "
        f"fit {name} by EM over those rows, or drop them." if hasattr(estimator, "unlabeled") else
        f"y has missing labels (NaN or None): {name} learns from labelled rows only; drop those rows."
    )


def check_true_labels(y, unlabeled=None, why="accuracy would count each as a wrong prediction"):
    """Refuse true labels (of ``score``, or a summary's) among which some rows are unlabelled.

    Accuracy against a missing label or against the mark of an unlabelled row counts every such
    row as an error: LDA fitted with ``unlabeled=-1`` scored 0.387 on its own partly labelled y,
    0.953 on the true classes; a NaN label failed inside scikit-learn ("Input y_true contains NaN.").

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        In memory (a dask y is not read here).
    unlabeled : scalar or None, default=None
        The classifier's mark of an unlabelled row; NaN, and None or pandas' NA in an object
        array, mark one always.
    why : str, default="accuracy would count each as a wrong prediction"
        What such a row would do, for the message.
    """
    known = unlabelled_rows(y, unlabeled) if unlabeled is not None else ~missing_labels(y)
    if known is None or known.all():
        return
    marks = "NaN or None" + ("" if unlabeled is None else f", or unlabeled={unlabeled!r}")
    first = int(np.flatnonzero(~known)[0])
    raise ValueError(
        f"y has {int((~known).sum())} unlabelled row(s) ({marks}; first index {first}): {why}. Give the labelled "
        "rows only: X[labelled], y[labelled]."
    )


def unlabelled_rows(y, unlabeled):
    """Which rows of y carry a label, for a classifier's ``unlabeled`` parameter.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    unlabeled : scalar or None
        The value that marks an unlabelled row (NaN, and None or pandas' NA in an object array,
        mark one too); None: every row is labelled (see :func:`check_no_unlabelled_marker` for -1 beside 0).

    Returns
    -------
    known : ndarray of shape (n_samples,) of bool or None
        None when every row is labelled.
    """
    if unlabeled is None:
        return None
    y = np.asarray(host_input(y))
    # the present labels alone are compared with the marker (pandas' NA compared with anything is
    # NA, which has no truth value)
    known = ~missing_labels(y)
    _refuse_marker_as_text(y[known], unlabeled)
    known[known] = np.asarray(y[known] != unlabeled, dtype=bool)
    return None if known.all() else known


def _refuse_marker_as_text(labels, unlabeled):
    """Refuse text labels that hold a numeric ``unlabeled`` as text.

    ``y[rows] = -1`` on an array of text labels stores the text '-1', which never equals the
    number -1: those rows would silently become a class of their own.
    """
    numeric_marker = isinstance(unlabeled, (int, float, np.number)) and not isinstance(unlabeled, bool)
    if not numeric_marker or labels.dtype.kind not in "USO":
        return
    text = str(unlabeled)
    # compared row by row: np.unique cannot sort labels of mixed types (check_labels names those)
    if np.any(labels.astype(object) == text):
        raise ValueError(
            f"y holds the text {text!r}, while unlabeled={unlabeled!r} is a number: a number written into an array "
            f"of text labels is stored as text. Set unlabeled={text!r}, or mark the unlabelled rows with None in an "
            "object array (None and NaN always mark an unlabelled row)."
        )


def check_no_unlabelled_marker(y, fix=None):
    """Refuse y that marks unlabelled rows as scikit-learn does (-1 beside the classes 0, 1, ...).

    With ``unlabeled=None`` a classifier takes every value of y for a class; -1 among labels
    that count from 0 is scikit-learn's mark of an unlabelled row (``LabelSpreading``), which
    must not become a class silently. -1 and 1 alone (the +-1 encoding of two classes) pass.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    fix : str or None, default=None
        The first remedy the message offers; None: ``unlabeled=-1`` (the classifiers that fit by
        EM over unlabelled rows).
    """
    values = np.asarray(host_input(y))
    if values.dtype.kind not in "iuf" or values.ndim != 1:
        return
    present = np.unique(values[np.isin(values, (-1, 0))])
    if present.shape[0] == 2:
        raise ValueError(
            "y holds -1 beside the class 0, the usual mark of an unlabelled row: "
            f"{fix or 'pass unlabeled=-1 to fit by EM over those rows'}, or encode the classes without -1 (e.g. "
            "as strings) if -1 is a class."
        )


def class_index(y, classes, unlabeled):
    """Index of each label of a block of y in the sorted ``classes``; -1 for an unlabelled row.

    Parameters
    ----------
    y : ndarray of shape (n,)
    classes : ndarray of shape (n_classes,)
        Sorted; every labelled value of y is among them.
    unlabeled : scalar or None
        See :func:`unlabelled_rows`.

    Returns
    -------
    index : ndarray of shape (n,) of int64
    """
    y = np.asarray(y)
    known = unlabelled_rows(y, unlabeled)
    index = np.full(y.shape[0], -1, dtype=np.int64)
    labelled = slice(None) if known is None else known
    index[labelled] = np.searchsorted(classes, y[labelled])
    return index


def weighted_feature_variance(X, w, return_mean=False):
    """Weighted variance of every feature, in float64 where X lives: (n_features,) on the host.

    Over the observed entries of each feature when X has missing values (NaN).

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        numpy or torch.
    w : ndarray of shape (n_samples,)
        Non-negative, with a positive sum.
    return_mean : bool, default=False
        Return the weighted means too.

    Returns
    -------
    variance : ndarray of shape (n_features,) of float64
    mean : ndarray of shape (n_features,) of float64
        Only with ``return_mean``.
    """
    Xf = ops.as_float64(X)
    weights = ops.like(w, Xf)[:, None]  # (n, 1), or (n, d) with the weights of the observed entries
    if isinstance(Xf, np.ndarray) and np.isnan(Xf).any():
        observed = ~np.isnan(Xf)
        Xf, weights = np.where(observed, Xf, 0.0), weights * observed
    total = weights.sum(0)
    mean = (weights * Xf).sum(0) / total
    variance = to_numpy((weights * ops.square_inplace(Xf - mean)).sum(0) / total)
    return (variance, to_numpy(mean)) if return_mean else variance
