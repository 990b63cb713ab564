"""summarize_mixture: the estimator's own numbers, component tables that add up, mclust's layout."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from discrim.distributions import Gaussian, Poisson
from discrim.mixture import FiniteMixture, MixtureSummary, summarize_mixture

COVARIANCE_TYPES = ["full", "tied", "diag", "spherical", "EII", "VEI", "EVE", "VEV", "EEV"]


@pytest.fixture
def blobs(rng):
    centres = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 2.0], [0.0, 5.0, -2.0]])
    scales = np.array([[1.0, 0.5, 0.8], [0.6, 1.2, 0.7], [0.9, 0.9, 1.5]])
    return np.vstack([rng.normal(c, s, (60, 3)) for c, s in zip(centres, scales)])


def _expected_covariances(covariance_type, cov, k, d):
    """Full covariances from each storage layout, written out case by case."""
    if covariance_type in ("full", "EVE", "VEV", "EEV"):
        return cov
    if covariance_type == "tied":
        return np.stack([cov] * k)
    if covariance_type in ("diag", "VEI"):
        return np.stack([np.diag(c) for c in cov])
    return np.stack([c * np.eye(d) for c in cov])  # spherical, EII


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_numbers_are_the_estimators(blobs, covariance_type):
    X = blobs
    family = Gaussian(covariance_type=covariance_type)
    mixture = FiniteMixture(family, 3, random_state=0).fit(X)
    s = summarize_mixture(mixture, X)
    n, d = X.shape
    assert isinstance(s, MixtureSummary)
    assert s.n == n and s.n_samples == n and s.n_components == 3
    assert s.bic == pytest.approx(mixture.bic(X), rel=1e-12)
    assert s.icl == pytest.approx(mixture.icl(X), rel=1e-12)
    assert s.aic == pytest.approx(mixture.aic(X), rel=1e-12)
    assert s.log_likelihood == pytest.approx(mixture.score(X) * n, rel=1e-12)
    assert s.df == family.n_parameters(d, 3) + 3 - 1
    assert s.bic == pytest.approx(-2 * s.log_likelihood + s.df * np.log(n), rel=1e-12)
    assert s.model_name == family.model_name
    assert s.description and s.model_name in str(s)

    table = s.components
    assert table.shape[0] == 3
    assert table["weight"].sum() == pytest.approx(1.0)
    np.testing.assert_allclose(table["weight"], mixture.weights_)
    assert table["size"].sum() == n
    np.testing.assert_array_equal(table["size"], np.bincount(mixture.predict(X), minlength=3))
    for j in range(d):
        np.testing.assert_allclose(table[f"mean[x{j}]"], mixture.params_["mean"][:, j])
    expected = _expected_covariances(covariance_type, np.asarray(mixture.params_["covariance"]), 3, d)
    np.testing.assert_allclose(s.covariances, expected, rtol=1e-12)
    for j in range(d):
        np.testing.assert_allclose(table[f"variance[x{j}]"], expected[:, j, j], rtol=1e-12)
    # mclust's decomposition Sigma_k = lambda_k D_k A_k D_k': |A_k| = 1 and it rebuilds Sigma_k.
    shapes = table[[f"shape[{j + 1}]" for j in range(d)]].to_numpy()
    np.testing.assert_allclose(shapes.prod(axis=1), 1.0, rtol=1e-10)
    assert np.all(np.diff(shapes, axis=1) <= 1e-12)
    volumes = table["volume"].to_numpy()
    np.testing.assert_allclose(volumes ** d, np.linalg.det(expected), rtol=1e-10)
    rebuilt = np.einsum("kij,kj,klj->kil", s.orientations, volumes[:, None] * shapes, s.orientations)
    np.testing.assert_allclose(rebuilt, expected, rtol=1e-9, atol=1e-12)


def test_equal_volume_and_shape_models_show_equal_columns(blobs):
    mixture = FiniteMixture(Gaussian(covariance_type="EEV"), 3, random_state=0).fit(blobs)
    table = summarize_mixture(mixture, blobs).components
    np.testing.assert_allclose(table["volume"], table["volume"].iloc[0], rtol=1e-8)
    for j in (1, 2, 3):
        np.testing.assert_allclose(table[f"shape[{j}]"], table[f"shape[{j}]"].iloc[0], rtol=1e-6)


def test_integer_weights_summarise_like_repeated_rows(blobs, rng):
    X = blobs
    w = rng.integers(1, 4, X.shape[0])
    mixture = FiniteMixture(Gaussian(covariance_type="VVI"), 3, random_state=0).fit(X, sample_weight=w)
    weighted = summarize_mixture(mixture, X, sample_weight=w)
    repeated = summarize_mixture(mixture, np.repeat(X, w, axis=0))
    assert weighted.n == w.sum() and weighted.n_samples == X.shape[0]
    assert weighted.components["size"].sum() == pytest.approx(w.sum())
    for name in ("log_likelihood", "bic", "icl", "aic", "n"):
        assert getattr(weighted, name) == pytest.approx(getattr(repeated, name), rel=1e-10)
    np.testing.assert_allclose(weighted.components["size"], repeated.components["size"])


def test_fixed_weights_are_not_counted(blobs):
    mixture = FiniteMixture(Gaussian(covariance_type="VII"), 3, fix_weights=True, random_state=0).fit(blobs)
    assert summarize_mixture(mixture, blobs).df == Gaussian(covariance_type="VII").n_parameters(3, 3)


def test_other_families_show_their_parameters(rng):
    X = np.vstack([rng.poisson([2.0, 9.0], (80, 2)), rng.poisson([8.0, 1.0], (80, 2))]).astype(float)
    mixture = FiniteMixture(Poisson(), 2, random_state=0).fit(X)
    s = summarize_mixture(mixture, X)
    assert s.model_name is None and s.covariances is None
    assert list(s.components.columns) == ["weight", "size", "rate[x0]", "rate[x1]"]
    np.testing.assert_allclose(s.components[["rate[x0]", "rate[x1]"]], mixture.params_["rate"])
    text = str(s)
    assert " Poisson finite mixture model fitted by EM algorithm" in text  # the class; its options below
    assert "Poisson() model with 2 components:" in text


def test_feature_names_label_the_columns(blobs):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(blobs, columns=["a", "b", "c"])
    mixture = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    s = summarize_mixture(mixture, X)
    assert s.feature_names == ["a", "b", "c"]
    assert {"mean[a]", "variance[c]"} <= set(s.components.columns)


def test_text_markdown_and_frame(blobs):
    mixture = FiniteMixture(Gaussian(covariance_type="VEV"), 3, random_state=0).fit(blobs)
    s = summarize_mixture(mixture, blobs)
    text = s.to_text()
    assert text == str(s)
    lines = text.splitlines()
    assert lines[1] == " Gaussian finite mixture model fitted by EM algorithm"
    assert "VEV (ellipsoidal, equal shape) model with 3 components:" in lines
    header = next(i for i, line in enumerate(lines) if line.split() == ["log-likelihood", "n", "df", "BIC", "ICL"])
    values = lines[header + 1].split()
    assert float(values[0]) == pytest.approx(s.log_likelihood, rel=1e-7)
    assert int(values[1]) == 180 and int(values[2]) == s.df
    assert float(values[3]) == pytest.approx(s.bic, rel=1e-7)
    flipped = s.to_text(mclust_sign=True, parameters=False).splitlines()
    values = flipped[header + 1].split()
    assert float(values[3]) == pytest.approx(-s.bic, rel=1e-7) and float(values[4]) == pytest.approx(-s.icl, rel=1e-7)
    assert "Components:" not in flipped
    sizes = lines[lines.index("Clustering table (rows by most probable component):") + 2].split()
    assert [int(v) for v in sizes] == s.components["size"].astype(int).tolist()

    md = s.to_markdown()
    table_lines = [line for line in md.splitlines() if line.startswith("|")]
    assert len(table_lines) == (2 + 1) + (2 + 3)  # header and rule, then the fit's row; then one row per component
    assert table_lines[0].startswith("| log-likelihood | n | df | BIC | ICL |")
    assert table_lines[3].startswith("| component | weight | size | mean[x0]")
    frame = s.to_frame()
    assert frame.shape == (1, 12)
    assert frame.loc[0, "bic"] == s.bic and frame.loc[0, "df"] == s.df


def test_unfitted_mixture_is_refused(blobs):
    with pytest.raises(NotFittedError):
        summarize_mixture(FiniteMixture(Gaussian()), blobs)


def test_dask_rows_summarise_as_in_memory(blobs):
    da = pytest.importorskip("dask.array")
    mixture = FiniteMixture(Gaussian(covariance_type="EVI"), 3, random_state=0).fit(blobs)
    eager = summarize_mixture(mixture, blobs)
    lazy = summarize_mixture(mixture, da.from_array(blobs, chunks=50))
    for name in ("log_likelihood", "bic", "icl", "aic", "n", "n_samples", "df"):
        assert getattr(lazy, name) == pytest.approx(getattr(eager, name), rel=1e-10)
    np.testing.assert_array_equal(lazy.components["size"], eager.components["size"])
    with pytest.raises(ValueError, match="in memory") as info:
        summarize_mixture(mixture, da.from_array(blobs, chunks=50), sample_weight=np.ones(len(blobs)))
    assert "\n" not in str(info.value)


def test_mclusts_summary_of_iris_vev_2():
    """mclust 6.0.0: summary(Mclust(iris[, 1:4], G=2, modelNames="VEV")): log-likelihood -215.726,
    n 150, df 26, BIC -561.7285 (mclust's sign)."""
    from sklearn.datasets import load_iris

    X = load_iris().data
    mixture = FiniteMixture(Gaussian(covariance_type="VEV"), 2, init_params="hierarchical", tol=1e-8,
                            max_iter=1000).fit(X)
    s = summarize_mixture(mixture, X)
    assert (s.n, s.df) == (150, 26)
    assert s.log_likelihood == pytest.approx(-215.726, abs=1e-3)
    assert -s.bic == pytest.approx(-561.7285, abs=1e-3)
    assert sorted(s.components["size"].astype(int)) == [50, 100]


def test_a_noise_component_gets_the_last_row(rng):
    X = np.vstack([rng.normal(0, 1, (80, 2)), rng.normal(6, 1, (80, 2)), rng.uniform(-6, 12, (20, 2))])
    mixture = FiniteMixture(Gaussian(), 2, noise=True, random_state=0).fit(X)
    s = summarize_mixture(mixture, X)
    table = s.components
    assert list(table.index) == [0, 1, "noise"]
    np.testing.assert_allclose(table["weight"], mixture.weights_)
    assert table["weight"].sum() == pytest.approx(1.0) and table["size"].sum() == X.shape[0]
    assert table.loc["noise", "size"] == np.sum(mixture.predict(X) == -1)
    assert np.isnan(table.loc["noise", "mean[x0]"])
    assert s.bic == pytest.approx(mixture.bic(X), rel=1e-12) and s.icl == pytest.approx(mixture.icl(X), rel=1e-12)
    assert "model with 2 components and a noise term:" in str(s)


def test_category_probabilities_are_listed_by_feature_and_category():
    from discrim.distributions import Categorical, Product

    rng = np.random.default_rng(1)
    codes = np.r_[rng.choice(3, (60, 2), p=[0.8, 0.1, 0.1]), rng.choice(3, (60, 2), p=[0.1, 0.1, 0.8])]
    family = Categorical(categories=[["a", "b", "c"], ["x", "y", "z"]])
    fitted = FiniteMixture(family, 2, random_state=0).fit(codes)
    summary = fitted.summary(codes)
    table = summary.components
    probs = fitted.params_["probs"]
    for j, (feature, categories) in enumerate(zip(["x0", "x1"], family.categories)):
        for c, category in enumerate(categories):
            np.testing.assert_array_equal(table[f"probs[{feature}={category}]"].to_numpy(dtype=float), probs[:, j, c])
    assert "n_categories" not in str(summary)  # the categories give the counts
    mixed = np.c_[rng.normal(size=120), codes[:, 0]]
    product = Product([("g", Gaussian(), [0]), ("c", Categorical(categories=[["a", "b", "c"]]), [1])])
    fitted = FiniteMixture(product, 2, random_state=0).fit(mixed)
    table = fitted.summary(mixed).components
    np.testing.assert_array_equal(table["c__probs[x1=b]"].to_numpy(dtype=float), fitted.params_["c__probs"][:, 0, 1])
    np.testing.assert_array_equal(table["g__covariance[x0]"].to_numpy(dtype=float),
                                  fitted.params_["g__covariance"][:, 0, 0])


@pytest.mark.parametrize("covariance_type, name, description", [
    ("EII", "E", "univariate, equal variance"), ("VVV", "V", "univariate, unequal variance"),
    ("full", "V", "univariate, unequal variance")])
def test_one_feature_models_are_named_as_mclust_names_them(covariance_type, name, description):
    # mclust prints "Mclust E (univariate, equal variance) model with 2 components" on faithful's waiting;
    # the summary said "EII (spherical, equal volume)", against select_mixture's "E", with a volume and a shape of 1
    from pathlib import Path

    import pandas as pd

    X = pd.read_csv(Path(__file__).parent / "data" / "faithful.csv")[["waiting"]]
    summary = FiniteMixture(Gaussian(covariance_type), 2, random_state=0).fit(X).summary(X)
    assert (summary.model_name, summary.description) == (name, description)
    assert f"{name} ({description}) model with 2 components:" in str(summary)
    assert list(summary.components.columns) == ["weight", "size", "mean[waiting]", "variance[waiting]"]


def test_markdown_keeps_a_bar_in_a_feature_name_in_its_cell():
    # a feature 'a|b' gave the component table's header two cells more than its rows ("mean[a", "b]")
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(100, 2)), columns=["a|b", "c"])
    md = summarize_mixture(FiniteMixture(Gaussian(), 2, random_state=0).fit(X), X).to_markdown()
    table = [line for line in md.splitlines() if line.startswith("| component")]
    assert table and "mean[a\\|b]" in table[0]
    rows = [line for line in md.splitlines() if line.startswith("|")]
    component_rows = rows[rows.index(table[0]):]
    assert len({line.replace("\\|", "").count("|") for line in component_rows}) == 1
