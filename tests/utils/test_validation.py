import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from discrim._posterior import check_some_density, log_posterior
from discrim.utils._random import as_seed_sequence, spawn_generators
from discrim.utils.validation import (
    check_class_totals,
    check_feature_magnitude,
    check_labels,
    check_priors,
    check_sample_weight,
    max_feature_magnitude,
)


def test_sample_weight_defaults_to_ones_and_accepts_scalars():
    np.testing.assert_array_equal(check_sample_weight(None, 3), np.ones(3))
    np.testing.assert_array_equal(check_sample_weight(2.0, 3), np.full(3, 2.0))


@pytest.mark.parametrize(
    "weights, message",
    [
        ([1.0, 2.0], "shape"),
        ([1.0, np.nan, 1.0], "NaN"),
        ([1.0, -1.0, 1.0], "negative"),
        ([0.0, 0.0, 0.0], "sums to zero"),
        ([1e308, 1e308, 1e308], "sums to infinity"),
        (["a", "b", "c"], "numeric"),
    ],
)
def test_sample_weight_errors_name_the_problem(weights, message):
    with pytest.raises(ValueError, match=message):
        check_sample_weight(weights, 3)


@pytest.mark.parametrize(
    "value, dtype", [(1e103, np.float64), (-1e300, np.float64), (1e13, np.float32), (-3e38, np.float32)]
)
def test_feature_magnitude_beyond_the_limit_is_refused_by_name(value, dtype):
    X = np.array([[0.0, 1.0], [value, np.nan]], dtype=dtype)
    with pytest.raises(ValueError, match="X_test has values of magnitude.*rescale"):
        check_feature_magnitude(X, name="X_test")


def test_feature_magnitude_limit_keeps_sums_of_squares_finite():
    for dtype in (np.float32, np.float64):
        limit = np.asarray(max_feature_magnitude(dtype), dtype=dtype)
        # (2 * limit)^2 summed over a million rows and a thousand features stays finite.
        assert np.isfinite(np.square(2 * limit) * np.asarray(1e9, dtype=dtype))


@given(st.floats(-1e102, 1e102))
def test_feature_magnitude_within_the_limit_passes_unchanged(value):
    X = np.array([[value, 0.0]])
    assert check_feature_magnitude(X) is X


def test_check_labels_encodes_and_rejects_single_class():
    classes, y_idx = check_labels(["b", "a", "b"])
    np.testing.assert_array_equal(classes, ["a", "b"])
    np.testing.assert_array_equal(y_idx, [1, 0, 1])
    with pytest.raises(ValueError, match=r"only one class \(1\)"):  # the label as written, not np.int64(1)
        check_labels([1, 1, 1])
    with pytest.raises(ValueError, match="continuous|Unknown label"):
        check_labels([0.5, 1.5, 2.25])


def test_check_priors():
    totals = np.array([1.0, 3.0])
    np.testing.assert_allclose(check_priors("equal", totals), [0.5, 0.5])
    np.testing.assert_allclose(check_priors("empirical", totals), [0.25, 0.75])
    np.testing.assert_allclose(check_priors([0.1, 0.9], totals), [0.1, 0.9])
    with pytest.raises(ValueError, match="one prior per class"):
        check_priors([1.0], totals)
    with pytest.raises(ValueError, match="sum to one"):
        check_priors([0.5, 0.6], totals)
    with pytest.raises(ValueError, match="non-negative"):
        check_priors([-0.5, 1.5], totals)


def test_priors_sum_to_one_to_the_precision_they_come_in():
    """Float32 priors correct to float32 precision are accepted (ten float32 tenths sum to 1 + 1.5e-8:
    refused as "they sum to 1."); a sum off by more is refused with enough digits to show it."""
    from discrim.discriminant import LinearDiscriminant

    tenths = np.full(10, 0.1, dtype=np.float32)
    assert abs(tenths.astype(np.float64).sum() - 1.0) > 1e-8
    np.testing.assert_allclose(check_priors(tenths, np.ones(10)), np.full(10, 0.1), rtol=1e-15)
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(200, 2)), np.arange(200) % 10
    model = LinearDiscriminant().fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X[:5], priors=tenths), model.predict_proba(X[:5]), rtol=1e-12)
    LinearDiscriminant(priors=tenths).fit(X, y)
    with pytest.raises(ValueError, match=r"they sum to 1\.0000000999"):
        check_priors([0.5, 0.5000001], np.ones(2))
    with pytest.raises(ValueError, match="priors must sum to one"):  # float32's tolerance is 10 n eps, not any
        check_priors(np.array([0.5, 0.5005], dtype=np.float32), np.ones(2))


@pytest.mark.parametrize("priors", [{0: 0.2, 1: 0.8}, ["a", "b"]], ids=["dict", "text"])
def test_priors_that_are_not_numbers_are_refused_by_name(priors):
    """priors numpy cannot read as numbers must raise a ValueError naming ``priors``, at fit and at predict.

    They failed inside numpy (``TypeError: float() argument ... not 'dict'``), naming no
    parameter; a mapping also needs the way to turn it into the array in the order of classes_.
    """
    from discrim.discriminant import LinearDiscriminant

    X = np.random.default_rng(0).normal(size=(20, 2))
    y = np.arange(20) % 2
    expected = r"priors must be an array of 2 probabilities, one per class in the order of classes_"
    with pytest.raises(ValueError, match=expected) as err:
        check_priors(priors, np.ones(2))
    assert ("priors[label] for label in classes_" in str(err.value)) == isinstance(priors, dict)
    with pytest.raises(ValueError, match=expected):
        LinearDiscriminant(priors=priors).fit(X, y)
    with pytest.raises(ValueError, match=expected):
        LinearDiscriminant().fit(X, y).predict(X, priors=priors)


@pytest.mark.parametrize("classes, shown", [(np.array([0, 1]), "class 0 "), (np.array(["a", "b"]), "class 'a' ")])
def test_class_of_zero_weight_is_named_as_written(classes, shown):
    """The class is printed as the user wrote its label (0, 'a'), not numpy's repr (np.int64(0))."""
    with pytest.raises(ValueError, match=f"^{shown}has zero total sample_weight"):
        check_class_totals(classes, np.array([0.0, 2.0]))


@given(st.lists(st.floats(-800, 800), min_size=2, max_size=6), st.floats(-2000, 0))
def test_log_posterior_sums_to_one_without_underflow(log_dens, shift):
    log_dens = np.asarray(log_dens)[None, :] + shift  # far from every population: tiny densities
    log_post, log_norm = log_posterior(log_dens, np.log(np.full(log_dens.shape[1], 1 / log_dens.shape[1])))
    assert np.all(np.isfinite(log_post)) and np.isfinite(log_norm[0])
    np.testing.assert_allclose(np.exp(log_post).sum(axis=1), 1.0, rtol=1e-12)
    assert np.isclose(log_dens[0, np.argmax(log_post)], log_dens.max(), rtol=0, atol=1e-9)


def test_zero_density_everywhere_is_rejected():
    _, log_norm = log_posterior(np.array([[-np.inf, -np.inf], [0.0, -1.0]]), np.zeros(2))
    with pytest.raises(ValueError, match="zero density"):
        check_some_density(log_norm)


def test_random_streams_are_reproducible_and_independent():
    a = [g.random() for g in spawn_generators(7, 3)]
    b = [g.random() for g in spawn_generators(7, 3)]
    assert a == b and len(set(a)) == 3
    assert as_seed_sequence(np.random.RandomState(0)).entropy == as_seed_sequence(np.random.RandomState(0)).entropy
    with pytest.raises(TypeError, match="random_state"):
        as_seed_sequence("seed")


def _object_frame(marker):
    import pandas as pd

    return pd.DataFrame({"a": [0.1, marker, 2.0, 3.1, 0.5, 1.2], "b": [1.0, 2.0, marker, 0.3, 0.8, 2.2]}, dtype=object)


def test_object_columns_of_numbers_and_missing_markers_are_read_as_numbers_by_every_estimator():
    """pandas makes numbers with None or pandas.NA an object column: every estimator reads NaN there."""
    import pandas as pd

    from discrim.discriminant import LinearDiscriminant
    from discrim.distributions import Gaussian
    from discrim.mixture import FiniteMixture
    from discrim.prototype import PrototypeClassifier
    from discrim.utils.validation import numeric_object_columns

    y = [0, 0, 0, 1, 1, 1]
    floats = _object_frame(np.nan).astype(float)
    for marker, as_array in ((None, False), (pd.NA, False), (pd.NA, True)):
        # as_array: DataFrame.to_numpy() of nullable columns, an object array holding pandas.NA
        # (it crashed inside scikit-learn's conversion)
        X = _object_frame(marker).to_numpy() if as_array else _object_frame(marker)
        converted = numeric_object_columns(X)
        if as_array:
            converted = pd.DataFrame(converted.astype(np.float64))
        assert (converted.dtypes == np.float64).all()
        np.testing.assert_array_equal(converted.to_numpy(), floats.to_numpy())
        np.testing.assert_allclose(LinearDiscriminant().fit(X, y).means_, LinearDiscriminant().fit(floats, y).means_)
        mixture = FiniteMixture(Gaussian(), 1, random_state=0)
        np.testing.assert_allclose(mixture.fit(X).score_samples(X), mixture.fit(floats).score_samples(floats))
        prototypes = PrototypeClassifier(n_candidates=4, random_state=0)
        np.testing.assert_allclose(prototypes.fit(X, y).predict_proba(X), prototypes.fit(floats, y).predict_proba(floats))
    text = _object_frame(None).assign(c=list("uvuvuv"))
    assert numeric_object_columns(text)["c"].tolist() == list("uvuvuv")  # text stays, for the estimators' checks
    with pytest.raises(ValueError, match=r"non-numeric column\(s\) \['c'\]"):
        LinearDiscriminant().fit(text, y)


def test_categorical_encode_reads_every_missing_marker():
    import pandas as pd

    from discrim.distributions import Categorical

    column = pd.DataFrame({"a": ["x", None, "y", "x", np.nan]}).astype("string")  # pandas.NA
    codes = Categorical(categories=[["x", "y"]]).encode(column)
    np.testing.assert_array_equal(codes.ravel(), [0.0, np.nan, 1.0, 0.0, np.nan])
    codes = Categorical(categories=[[1, 2]]).encode(np.array([[1], [np.float32("nan")], [pd.NaT], [2]], dtype=object))
    np.testing.assert_array_equal(codes.ravel(), [0.0, np.nan, np.nan, 1.0])


_CLASSIFIERS = ["LinearDiscriminant", "QuadraticDiscriminant", "MixtureDiscriminant", "PrototypeClassifier"]


def _classifier(name):
    from discrim import discriminant, prototype
    from discrim.distributions import Gaussian

    if name == "MixtureDiscriminant":
        return discriminant.MixtureDiscriminant(Gaussian(), 1)
    if name == "PrototypeClassifier":
        return prototype.PrototypeClassifier(n_batches=1)
    return getattr(discriminant, name)()


@pytest.mark.parametrize("name", _CLASSIFIERS)
def test_nan_labels_give_the_numpy_message_with_tensors(name, recwarn):
    # a tensor X (or y) skipped the check of missing labels: scikit-learn's bare "Input y contains
    # NaN." and its RuntimeWarning about the cast came instead of the fix
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.r_[np.zeros(20), np.ones(20)]
    y[::5] = np.nan
    with pytest.raises(ValueError) as numpy_error:
        _classifier(name).fit(X, y)
    assert "missing labels (NaN or None)" in str(numpy_error.value)
    for X_in, y_in in ((torch.tensor(X), y), (X, torch.tensor(y)), (torch.tensor(X), torch.tensor(y))):
        with pytest.raises(ValueError) as error:
            _classifier(name).fit(X_in, y_in)
        assert str(error.value) == str(numpy_error.value)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
