"""Every estimator on a device (issue 20): torch equals numpy, outputs follow the input's namespace.

The torch CPU path runs everywhere torch is installed (CI installs the CPU build); the same
comparisons on CUDA are marked ``gpu`` and skip cleanly without one. float64 fits must equal numpy
to 1e-10 (relative) on log-likelihoods, probabilities and parameters; float32 to 1e-5.
"""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.preprocessing import StandardScaler  # noqa: E402

from discrim.datasets import load_benchmark  # noqa: E402
from discrim.discriminant import LinearDiscriminant, MixtureDiscriminant, QuadraticDiscriminant  # noqa: E402
from discrim.distributions import Bernoulli, Binomial, Categorical, Gaussian, Poisson  # noqa: E402
from discrim.mixture import FiniteMixture, select_mixture  # noqa: E402
from discrim.model_selection import PrototypeClassifierCV  # noqa: E402
from discrim.prototype import PrototypeClassifier  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
DEVICES = ["cpu", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="no CUDA device")])]
TOLERANCE = {"float64": 1e-10, "float32": 1e-5}


def _close(actual, expected, rtol, what):
    """Equal to ``rtol`` relative to the largest entry (float32 rounds off-diagonal entries alike)."""
    actual = actual.detach().cpu().numpy() if isinstance(actual, torch.Tensor) else np.asarray(actual)
    expected = np.asarray(expected)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * np.max(np.abs(expected), initial=1e-2),
                               err_msg=what)


def _mixture_data(name, rng):
    """(X, family) of one family, 600 rows in two clusters."""
    n = 600
    half = rng.random(n) < 0.5
    if name.startswith("gaussian"):
        X = rng.normal(size=(n, 3)) + 3.0 * half[:, None] + 50.0
        return X, Gaussian(name.split("-")[1])
    if name == "poisson":
        return rng.poisson(np.where(half[:, None], [1.0, 6.0], [5.0, 2.0])).astype(float), Poisson()
    if name == "binomial":
        return rng.binomial(10, np.where(half[:, None], [0.2, 0.7], [0.6, 0.3])).astype(float), Binomial(n_trials=10)
    if name == "bernoulli":
        return (rng.random((n, 4)) < np.where(half[:, None], 0.2, 0.7)).astype(float), Bernoulli()
    return rng.integers(0, 3, (n, 2)).astype(float) * half[:, None], Categorical(n_categories=3)


FAMILIES = ["gaussian-full", "gaussian-diag", "gaussian-tied", "gaussian-spherical", "poisson", "binomial",
            "bernoulli", "categorical"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", FAMILIES)
def test_finite_mixture_on_a_device_equals_numpy(name, dtype, device, rng):
    X, family = _mixture_data(name, rng)
    params = dict(n_components=2, random_state=0, tol=0.0, max_iter=8, dtype=dtype)
    on_host = FiniteMixture(family, **params).fit(X)
    on_device = FiniteMixture(family, device=device, **params).fit(X)
    rtol = TOLERANCE[dtype]
    _close(on_device.lower_bounds_, on_host.lower_bounds_, rtol, "lower_bounds_")
    _close(on_device.weights_, on_host.weights_, rtol, "weights_")
    for key, value in on_host.params_.items():
        _close(on_device.params_[key], value, rtol, key)
    _close(on_device.predict_proba(X), on_host.predict_proba(X), rtol, "predict_proba")
    _close(on_device.score_samples(X), on_host.score_samples(X), rtol, "score_samples")
    assert on_device.score(X) == pytest.approx(on_host.score(X), rel=rtol)
    assert isinstance(on_device.predict_proba(X), np.ndarray)  # numpy in, numpy out


@pytest.mark.parametrize("device", DEVICES)
def test_tensor_input_computes_on_its_device_and_returns_tensors(device, rng):
    X, family = _mixture_data("gaussian-full", rng)
    X_t = torch.as_tensor(X, device=device)
    on_host = FiniteMixture(family, 2, random_state=0, tol=0.0, max_iter=5).fit(X)
    on_tensor = FiniteMixture(family, 2, random_state=0, tol=0.0, max_iter=5).fit(X_t)  # device=None
    _close(on_tensor.lower_bounds_, on_host.lower_bounds_, 1e-10, "lower_bounds_")
    assert isinstance(on_tensor.weights_, np.ndarray)  # fitted attributes stay numpy on the host
    for method in ("predict_proba", "predict_log_proba", "predict", "score_samples"):
        out = getattr(on_tensor, method)(X_t)
        assert isinstance(out, torch.Tensor) and out.device == X_t.device, method
        _close(out, getattr(on_host, method)(X), 1e-10, method)


@pytest.mark.parametrize("device", DEVICES)
def test_select_mixture_on_a_device_equals_numpy(device, rng):
    X, _ = _mixture_data("gaussian-full", rng)
    families = {"VVV": Gaussian("full"), "VVI": Gaussian("diag")}
    on_host = select_mixture(X, families, 3, random_state=0)
    on_device = select_mixture(X, families, 3, random_state=0, device=device)
    _close(on_device.table["bic"].to_numpy(), on_host.table["bic"].to_numpy(), 1e-10, "bic")
    assert on_device.best_params == on_host.best_params
    assert on_device.best_estimator.device == device


def _classification(rng, n=400, offset=100.0):
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) + offset
    X[y == 1, 0] += 1.5
    X[y == 2, 1] -= 1.5
    X[y == 2] *= 1.3
    return X, y, rng.uniform(0.5, 2.0, n)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rule", [LinearDiscriminant, QuadraticDiscriminant])
def test_gaussian_rules_on_a_device_equal_numpy(rule, device, rng):
    X, y, w = _classification(rng)
    on_host = rule(priors="empirical").fit(X, y, sample_weight=w)
    on_device = rule(priors="empirical", device=device).fit(X, y, sample_weight=w)
    on_tensor = rule(priors="empirical").fit(torch.as_tensor(X, device=device), torch.as_tensor(y, device=device),
                                             sample_weight=torch.as_tensor(w, device=device))
    for model in (on_device, on_tensor):
        _close(model.means_, on_host.means_, 1e-10, "means_")
        _close(model.covariance_, on_host.covariance_, 1e-10, "covariance_")
        _close(model.priors_, on_host.priors_, 1e-10, "priors_")
    X_t = torch.as_tensor(X, device=device)
    for method in ("predict_proba", "predict_log_proba", "decision_function", "mahalanobis", "log_density"):
        expected = getattr(on_host, method)(X)
        _close(getattr(on_device, method)(X), expected, 1e-10, method)
        out = getattr(on_tensor, method)(X_t)
        assert isinstance(out, torch.Tensor) and out.device == X_t.device, method
        _close(out, expected, 1e-10, method)
    np.testing.assert_array_equal(on_tensor.predict(X_t).cpu().numpy(), on_host.predict(X))
    # float32 rows: the same rule, to float32's precision
    X32 = X.astype(np.float32)
    _close(on_device.predict_proba(torch.as_tensor(X32, device=device)), on_host.predict_proba(X32), 1e-5, "float32")


@pytest.mark.parametrize("device", DEVICES)
def test_read_only_rows_cross_to_a_device_without_torchs_warning(device, rng):
    # torch.as_tensor on a read-only array (a memory map, a broadcast view) shares it and warns
    # that writing is undefined; such rows are copied across instead, and the results are the same
    import warnings

    X, y, _ = _classification(rng)
    frozen = X.copy()
    frozen.flags.writeable = False
    model = LinearDiscriminant(device=device).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        refit = LinearDiscriminant(device=device).fit(frozen, y)
        _close(refit.predict_proba(frozen), model.predict_proba(X), 0.0, "read-only rows")


@pytest.mark.parametrize("device", DEVICES)
def test_two_class_log_odds_on_a_device_equal_numpy(device, rng):
    X, y, _ = _classification(rng)
    y = (y > 0).astype(int)
    for rule in (LinearDiscriminant, QuadraticDiscriminant):
        on_host = rule().fit(X, y)
        on_device = rule(device=device).fit(X, y)
        _close(on_device.decision_function(X), on_host.decision_function(X), 1e-10, rule.__name__)
        _close(on_device.predict_proba(X), on_host.predict_proba(X), 1e-10, rule.__name__)


@pytest.mark.parametrize("device", DEVICES)
def test_mixture_discriminant_on_a_device_equals_numpy(device, rng):
    X, y, w = _classification(rng, offset=0.0)
    params = dict(n_components={0: 1, 1: [1, 2], 2: 2}, random_state=0, tol=0.0, max_iter=6)
    on_host = MixtureDiscriminant(Gaussian("full"), **params).fit(X, y, sample_weight=w)
    on_device = MixtureDiscriminant(Gaussian("full"), device=device, **params).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(on_device.n_components_, on_host.n_components_)
    for a, b in zip(on_device.mixtures_, on_host.mixtures_):
        _close(a.lower_bounds_, b.lower_bounds_, 1e-10, "lower_bounds_")
        _close(a.params_["covariance"], b.params_["covariance"], 1e-10, "covariance")
    _close(on_device.predict_proba(X), on_host.predict_proba(X), 1e-10, "predict_proba")
    out = on_device.predict_proba(torch.as_tensor(X, device=device))
    assert isinstance(out, torch.Tensor)


@pytest.mark.parametrize("options", [{}, {"joint": True}], ids=["per-class", "joint"])
def test_mixture_discriminant_moved_to_the_host_computes_there(options, rng, monkeypatch):
    # the class mixtures kept the fit's device: set_params(device=None) (what discrim fit --device
    # does before saving) still sent numpy rows to torch, and a model fitted on "cuda" failed to
    # predict on a machine without one ("device='cuda' but torch sees 0 CUDA device(s)")
    X, y, _ = _classification(rng, offset=0.0)
    model = MixtureDiscriminant(Gaussian("tied"), 2, device="cpu", random_state=0, **options).fit(X, y)
    expected = MixtureDiscriminant(Gaussian("tied"), 2, random_state=0, **options).fit(X, y).predict_proba(X)
    model.set_params(device=None)

    def no_crossing(*args, **kwargs):
        raise AssertionError("rows crossed to torch with device=None")

    monkeypatch.setattr(torch, "as_tensor", no_crossing)
    monkeypatch.setattr(torch, "tensor", no_crossing)
    _close(model.predict_proba(X), expected, 1e-10, "predict_proba")


def _iris():
    X_train, X_test, y_train, _ = load_benchmark("iris")
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train


@pytest.mark.parametrize("device", DEVICES)
def test_prototype_classifier_on_a_device_equals_numpy(device):
    # A well-conditioned problem: from objectives equal to rounding, L-BFGS-B reaches the same
    # optimum (its stopping test may take one more step on either side: n_iter_ is not compared).
    X_train, X_test, y_train = _iris()
    params = dict(n_batches=2, n_candidates=60, random_state=0)
    on_host = PrototypeClassifier(**params).fit(X_train, y_train)
    on_device = PrototypeClassifier(device=device, **params).fit(X_train, y_train)
    _close(on_device.objective_values_, on_host.objective_values_, 1e-10, "objective_values_")
    for a, b in zip(on_device.batches_, on_host.batches_):
        np.testing.assert_array_equal(a.sample_index, b.sample_index)
    _close(on_device.predict_proba(X_test), on_host.predict_proba(X_test), 1e-10, "predict_proba")
    out = on_device.predict_proba(torch.as_tensor(X_test, device=device))
    assert isinstance(out, torch.Tensor) and out.device.type == torch.device(device).type
    _close(out, on_host.predict_proba(X_test), 1e-10, "predict_proba of a tensor")


@pytest.mark.parametrize("device", DEVICES)
def test_prototype_search_on_a_device_equals_numpy(device):
    X_train, _, y_train = _iris()
    params = dict(alpha_feature_grid=[1e-4, 1e-2], max_batches=2, cv=2, n_candidates=40, random_state=0)
    on_host = PrototypeClassifierCV(**params).fit(X_train, y_train)
    on_device = PrototypeClassifierCV(device=device, **params).fit(X_train, y_train)
    assert on_device.best_params_ == on_host.best_params_
    # up to the first batch the same draws and the same solves; a second batch draws from bins of
    # the first one's scores, where rounding (which differs between BLAS kernels) can move a
    # boundary row, and its non-convex solve may then end at another optimum: only its gain is compared
    batches = np.array([p["n_batches"] for p in on_host.cv_results_["params"]])
    host_loss, device_loss = (np.asarray(m.cv_results_["mean_test_log_loss"]) for m in (on_host, on_device))
    _close(device_loss[batches <= 1], host_loss[batches <= 1], 1e-8, "log-loss")
    assert np.all(device_loss[batches == 2] < device_loss[batches == 0])
    _close(on_device.predict_proba(X_train), on_host.predict_proba(X_train), 1e-8, "predict_proba")


def test_prototype_search_moved_to_the_host_computes_there(monkeypatch):
    # best_estimator_ kept the fit's device: set_params(device=None), which the docs give for a model
    # loaded on a machine without its device, still sent the rows to torch (and failed there for "cuda")
    X_train, _, y_train = _iris()
    params = dict(alpha_feature_grid=[1e-3], max_batches=1, cv=2, n_candidates=40, random_state=0)
    search = PrototypeClassifierCV(device="cpu", **params).fit(X_train, y_train)
    expected = PrototypeClassifierCV(**params).fit(X_train, y_train).predict_proba(X_train)
    search.set_params(device=None)
    assert search.best_estimator_.device is None

    def no_crossing(*args, **kwargs):
        raise AssertionError("rows crossed to torch with device=None")

    monkeypatch.setattr(torch, "as_tensor", no_crossing)
    monkeypatch.setattr(torch, "tensor", no_crossing)
    _close(search.predict_proba(X_train), expected, 1e-8, "predict_proba")


# --- errors name the parameter and the fix ----------------------------------------------------


def test_a_device_torch_does_not_know_is_named():
    with pytest.raises(ValueError, match=r"device='gpu' is not a device: use device=None"):
        LinearDiscriminant(device="gpu").fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cls, options", [(LinearDiscriminant, {}), (QuadraticDiscriminant, {"reg_param": 0.1})])
def test_gaussian_rules_on_a_device_fit_missing_values_and_unlabelled_rows_as_numpy(cls, options, device, rng):
    # their EM runs on the host: before, NaN on a device read as a singular covariance, and a -1
    # class index failed in numpy's bincount
    X, _, labels, _ = load_benchmark("wine")
    y = np.unique(labels, return_inverse=True)[1]
    gaps = np.where(rng.random(X.shape) < 0.05, np.nan, X)
    unlabelled = np.where(rng.random(y.shape[0]) < 0.5, -1, y)
    for rows, labels, marker in ((gaps, y, None), (X, unlabelled, -1), (gaps, unlabelled, -1)):
        on_host = cls(unlabeled=marker, **options).fit(rows, labels)
        on_device = cls(unlabeled=marker, device=device, **options).fit(rows, labels)
        _close(on_device.predict_proba(X), on_host.predict_proba(X), 1e-10, "predict_proba")
    # rows with missing values are scored on the host, as numpy, from the same host attributes (a
    # device model refused them, though it had fitted such rows)
    scored = on_device.predict_proba(gaps)
    assert isinstance(scored, np.ndarray)
    np.testing.assert_allclose(scored, on_host.predict_proba(gaps), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match=r"handled on the host \(numpy\) path only: fit with device=None"):
        FiniteMixture(Gaussian(), 2, device=device).fit(gaps)


@pytest.mark.parametrize("device", DEVICES)
def test_mixture_models_on_a_device_score_rows_with_missing_values_on_the_host(device, rng):
    X, _, labels, _ = load_benchmark("wine")
    gaps = np.where(rng.random(X.shape) < 0.05, np.nan, X)
    on_host = FiniteMixture(Gaussian("full"), 2, random_state=0).fit(X)
    on_device = FiniteMixture(Gaussian("full"), 2, random_state=0, device=device).fit(X)
    scored = on_device.score_samples(gaps)
    assert isinstance(scored, np.ndarray)
    np.testing.assert_allclose(scored, on_host.score_samples(gaps), rtol=1e-8)
    mda = MixtureDiscriminant(Gaussian("full"), 1, random_state=0, device=device).fit(X, labels)
    proba = mda.predict_proba(gaps)
    assert isinstance(proba, np.ndarray)
    np.testing.assert_allclose(proba, MixtureDiscriminant(Gaussian("full"), 1, random_state=0).fit(X, labels)
                               .predict_proba(gaps), rtol=1e-6, atol=1e-9)
    # fitting such rows is host code: the message names the estimator (it spoke of numpy rows, which it had)
    with pytest.raises(ValueError, match=r"which MixtureDiscriminant fits on the host \(numpy\) path only: fit with "
                                         r"device=None"):
        MixtureDiscriminant(Gaussian("full"), 1, device=device).fit(gaps, labels)


@pytest.mark.skipif(HAS_CUDA, reason="a CUDA device is present")
def test_cuda_without_a_gpu_is_named():
    with pytest.raises(ValueError, match=r"torch sees 0 CUDA device\(s\).*set_params\(device=...\)"):
        FiniteMixture(Gaussian(), device="cuda").fit(np.arange(20.0).reshape(10, 2))


def test_tensor_input_is_validated_where_it_lives(rng):
    X = torch.as_tensor(rng.normal(size=(30, 2)))
    model = FiniteMixture(Gaussian(), 2, random_state=0).fit(X)
    bad = X.clone()
    bad[3, 1] = float("nan")
    with pytest.raises(ValueError, match="Input X contains NaN"):
        FiniteMixture(Gaussian(), 2).fit(bad)
    with pytest.raises(ValueError, match="X has 3 features, but FiniteMixture is expecting 2"):
        model.predict(torch.ones((4, 3), dtype=torch.float64))
    with pytest.raises(ValueError, match="Expected a 2-dimensional X"):
        model.predict(torch.ones(4, dtype=torch.float64))
    with pytest.raises(ValueError, match="magnitude up to"):
        LinearDiscriminant().fit(torch.full((4, 1), 1e200, dtype=torch.float64), [0, 0, 1, 1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        LinearDiscriminant().fit(torch.ones((4, 1), dtype=torch.float64), [0, 1, 1])


def test_tensors_that_require_grad_or_hold_bfloat16_are_taken_as_values(rng):
    # LDA/QDA fits and familiarity failed ("Can't call numpy() on Tensor that requires grad"), and
    # transform returned a tensor still in the autograd graph; bfloat16 y or sample_weight failed in
    # numpy ("Got unsupported ScalarType BFloat16")
    values = rng.normal(size=(40, 2))
    X, y = torch.tensor(values, requires_grad=True), np.r_[np.zeros(20, int), np.ones(20, int)]
    for cls in (LinearDiscriminant, QuadraticDiscriminant):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nor torch's warning on converting such a tensor to a number
            fitted = cls().fit(X, y)
        np.testing.assert_allclose(fitted.predict_proba(X).detach().numpy(),
                                   cls().fit(values, y).predict_proba(values), rtol=1e-12)
    assert not LinearDiscriminant().fit(X, y).transform(X).requires_grad
    proto = PrototypeClassifier(n_batches=1, random_state=0).fit(values, y)
    np.testing.assert_allclose(np.asarray(proto.familiarity(X)), proto.familiarity(values), rtol=1e-12)
    half = torch.tensor(values).bfloat16()
    weights = torch.ones(40, dtype=torch.bfloat16)
    np.testing.assert_allclose(LinearDiscriminant().fit(values, torch.tensor(y).bfloat16()).predict_proba(values),
                               LinearDiscriminant().fit(values, y).predict_proba(values), rtol=1e-12)
    mixture = FiniteMixture(Gaussian(), 2, random_state=0)
    assert mixture.fit(half.double(), sample_weight=weights).converged_


def test_poisson_support_is_checked_on_a_tensor():
    with pytest.raises(ValueError, match="outside the support"):
        FiniteMixture(Poisson(), 2).fit(torch.tensor([[1.0], [2.5], [3.0], [0.0]]))


def test_a_device_with_dask_input_is_refused():
    da = pytest.importorskip("dask.array")
    X = da.from_array(np.arange(40.0).reshape(20, 2), chunks=(10, 2))
    with pytest.raises(ValueError, match="device='cpu' computes in-memory data"):
        FiniteMixture(Gaussian(), 2, device="cpu").fit(X)
    with pytest.raises(ValueError, match="device='cpu' computes in-memory data"):
        LinearDiscriminant(device="cpu").fit(X, np.arange(20) % 2)


def test_a_model_fitted_on_a_device_saves_and_loads(tmp_path, rng):
    from discrim.persistence import load_model, save_model

    X, y, _ = _classification(rng)
    model = QuadraticDiscriminant(device="cpu").fit(X, y)
    save_model(model, tmp_path / "qda.skops")
    loaded = load_model(tmp_path / "qda.skops")
    assert loaded.device == "cpu"
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize("device", DEVICES)
def test_a_tensor_with_missing_values_is_scored_on_the_host_and_returned_as_a_tensor(device, rng):
    # predictions refused a tensor holding NaN ("give numpy rows with device=None"), even from a
    # model fitted on the host, or KnownDensityClassifier, which has no device and scores on the host
    from scipy.stats import multivariate_normal

    from discrim.discriminant import KnownDensityClassifier

    X = rng.normal(size=(120, 3))
    y = rng.integers(0, 3, 120)
    X[rng.random(X.shape) < 0.3] = np.nan
    tensor = torch.tensor(X, device=device)
    models = [LinearDiscriminant(), QuadraticDiscriminant(), MixtureDiscriminant(Gaussian("full"), 1, random_state=0),
              KnownDensityClassifier([multivariate_normal(np.full(3, c), np.eye(3)) for c in (-1.0, 0.0, 1.0)]),
              FiniteMixture(Gaussian("full"), 3, random_state=0), PrototypeClassifier(n_batches=1, random_state=0)]
    for model in models:
        model.fit(X, y)
        for method in ("predict_proba", "predict_log_proba", "predict"):
            out = getattr(model, method)(tensor)
            assert isinstance(out, torch.Tensor) and out.device.type == device, (model, method)
            _close(out, getattr(model, method)(X), 1e-12, f"{type(model).__name__}.{method}")


def test_a_bfloat16_tensor_with_missing_values_is_scored_as_its_values(rng):
    # the host path of rows with missing values converted the tensor with .numpy(), which has no
    # bfloat16: "Got unsupported ScalarType BFloat16" from deep inside torch
    X = rng.normal(size=(60, 2))
    model = LinearDiscriminant().fit(X, (X[:, 0] > 0).astype(int))
    rows = torch.tensor([[0.5, np.nan], [-1.0, 2.0]], dtype=torch.bfloat16)
    expected = model.predict_proba(rows.float().numpy())  # bfloat16 values are exact in float32
    _close(model.predict_proba(rows), expected, 1e-12, "predict_proba")
