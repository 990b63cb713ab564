import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from discrim.persistence import ModelFileError, load_model, save_model


def _fitted(rng):
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    return make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y), X


def test_round_trip_gives_identical_predictions(tmp_path, rng):
    model, X = _fitted(rng)
    path = tmp_path / "model.skops"
    save_model(model, path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert [p.name for p in tmp_path.iterdir()] == ["model.skops"]  # no temporary file left


def test_missing_and_corrupted_files_give_clear_errors(tmp_path, rng):
    with pytest.raises(ModelFileError, match="does not exist"):
        load_model(tmp_path / "absent.skops")
    junk = tmp_path / "junk.skops"
    junk.write_bytes(b"this is not a zip archive")
    with pytest.raises(ModelFileError, match="not a readable skops model file"):
        load_model(junk)
    model, _ = _fitted(rng)
    good = tmp_path / "good.skops"
    save_model(model, good)
    truncated = tmp_path / "truncated.skops"
    truncated.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    with pytest.raises(ModelFileError):
        load_model(truncated)


def test_saving_into_a_missing_folder_fails_before_writing(tmp_path, rng):
    model, _ = _fitted(rng)
    with pytest.raises(ModelFileError, match="does not exist"):
        save_model(model, tmp_path / "no" / "model.skops")
