import numpy as np
import pandas as pd
import pytest

from discrim.datasets import (
    coin_tosses,
    list_datasets,
    load_benchmark,
    make_checkerboard,
    make_continuous_xor,
)

EXPECTED = {
    "iris": (3, 4, 150),
    "iris-2f": (3, 2, 150),
    "wine": (3, 13, 178),
    "cancer": (2, 30, 569),
    "digits": (10, 64, 1797),
    "checker": (2, 2, 6400),
    "checker-rot": (2, 2, 6400),
    "xor-3f": (2, 3, 800),
    "xor-4f": (2, 4, 1600),
    "xor-5f": (2, 5, 3200),
    "xor-6f": (2, 6, 6400),
    "xor-6+6f": (2, 12, 6400),
}


def test_list_datasets_names_every_case():
    assert list(list_datasets()) == list(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_load_benchmark_shapes_split_and_scaling(name):
    n_classes, n_features, n_samples = EXPECTED[name]
    X_train, X_test, y_train, y_test = load_benchmark(name)
    assert X_train.shape[1] == X_test.shape[1] == n_features
    assert X_train.shape[0] + X_test.shape[0] == n_samples
    assert abs(X_test.shape[0] - 0.3 * n_samples) <= 1
    assert np.unique(np.concatenate([y_train, y_test])).shape[0] == n_classes
    np.testing.assert_allclose(X_train.mean(axis=0), 0.0, atol=1e-10)
    std = X_train.std(axis=0)
    np.testing.assert_allclose(std[std > 0], 1.0, rtol=1e-10)
    # stratified: class proportions agree between the parts to within one sample per class
    classes, train_counts = np.unique(y_train, return_counts=True)
    test_counts = np.array([(y_test == c).sum() for c in classes])
    total = train_counts + test_counts
    assert np.all(np.abs(test_counts - 0.3 * total) <= 1)


def test_sklearn_cases_keep_string_labels():
    _, _, y_train, _ = load_benchmark("iris-2f")
    assert set(y_train) == {"setosa", "versicolor", "virginica"}


def test_load_benchmark_is_deterministic_and_seed_dependent():
    a = load_benchmark("checker", random_state=3)
    b = load_benchmark("checker", random_state=3)
    c = load_benchmark("checker", random_state=4)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])


def test_as_frame_keeps_feature_names():
    X_train, X_test, _, _ = load_benchmark("iris-2f", as_frame=True)
    assert isinstance(X_train, pd.DataFrame)
    assert list(X_train.columns) == ["sepal length (cm)", "sepal width (cm)"]


def test_unknown_dataset_and_bad_test_size():
    with pytest.raises(ValueError, match="unknown data set 'nope'"):
        load_benchmark("nope")
    with pytest.raises(ValueError, match="test_size"):
        load_benchmark("iris", test_size=1.5)


def test_checkerboard_labels_follow_the_squares():
    X, y = make_checkerboard(n_per_square=50, random_state=0)
    assert X.shape == (3200, 2) and np.all((X >= 0) & (X <= 1))
    np.testing.assert_array_equal(y, (np.floor(8 * X[:, 0]) + np.floor(8 * X[:, 1])) % 2)
    counts = np.histogram2d(X[:, 0], X[:, 1], bins=8, range=[[0, 1], [0, 1]])[0]
    assert np.all(counts == 50)


def test_rotated_checkerboard_is_a_rotation():
    X, y = make_checkerboard(random_state=1)
    Xr, yr = make_checkerboard(rotate=True, random_state=1)
    np.testing.assert_array_equal(y, yr)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), np.linalg.norm(Xr, axis=1))
    np.testing.assert_allclose(Xr[:, 0] + Xr[:, 1], np.sqrt(2) * X[:, 0], atol=1e-12)


@pytest.mark.parametrize("k", [3, 4, 6])
def test_continuous_xor(k):
    X, y = make_continuous_xor(n_features=k, n_per_orthant=10, n_noise=2, random_state=0)
    assert X.shape == (10 * 2**k, k + 2)
    np.testing.assert_array_equal(y, np.prod(X[:, :k], axis=1) >= 0)
    orthants = np.unique(np.sign(X[:, :k]), axis=0)
    assert orthants.shape[0] == 2**k


def test_coin_tosses_are_the_seed_data():
    np.testing.assert_array_equal(coin_tosses().ravel(), [5, 9, 8, 4, 7])


@pytest.mark.parametrize("name", ["cancer", "checker"])
def test_frames_give_estimators_their_feature_names(name):
    from sklearn.linear_model import LogisticRegression

    X_train, _, y_train, _ = load_benchmark(name, as_frame=True)
    model = LogisticRegression().fit(X_train, y_train)
    assert list(model.feature_names_in_) == list(X_train.columns)
    assert all(type(c) is str for c in X_train.columns)


@pytest.mark.parametrize("make, kwargs, message", [
    (make_checkerboard, {"n_per_square": 0}, "n_per_square must be an int >= 1; got 0"),
    (make_checkerboard, {"n_squares": -1}, "n_squares must be an int >= 1"),
    (make_checkerboard, {"n_squares": 2.5}, "n_squares must be an int"),
    (make_continuous_xor, {"n_features": 0}, "n_features must be an int >= 1"),
    (make_continuous_xor, {"n_noise": -1}, "n_noise must be an int >= 0"),
    (make_continuous_xor, {"n_features": 40}, "2\\*\\*n_features orthants\\) give"),
])
def test_generators_check_their_counts_by_name(make, kwargs, message):
    # n_per_square=0 gave an empty data set; the others failed inside numpy (IndexError, reshape, negative dimensions)
    with pytest.raises(ValueError, match=message):
        make(**kwargs)
