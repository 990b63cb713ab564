"""The torch backend: analytic gradient against torch.autograd, and a full fit against numpy."""

import _oracles
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from discrim.backend import namespace  # noqa: E402
from discrim.datasets import load_benchmark  # noqa: E402
from discrim.prototype import PrototypeClassifier  # noqa: E402
from discrim.prototype._likelihood import PrototypeLikelihood  # noqa: E402


def _torch_problem(rng, n_classes=3, R=30, J=12, D=4):
    X = rng.normal(size=(R, D))
    y = rng.integers(0, n_classes, R)
    S = rng.normal(size=(J, D))
    target = np.sort(rng.integers(0, n_classes, J))
    q0 = rng.dirichlet(np.ones(n_classes)) + rng.uniform(0.0, 1.0, (R, n_classes))
    coef = rng.uniform(0.2, 3.0, R) / R
    as_t = torch.asarray
    lik = PrototypeLikelihood(as_t(X), y, as_t(coef), as_t(q0), as_t(S), target, n_classes, namespace("torch"))
    return lik, (X, y, coef, q0, S, target)


def _value_by_autograd(theta, X, y, coef, q0, S, target):
    """The seed's reweighted negative log-likelihood (the shared oracle) on torch tensors."""
    as_t = torch.asarray
    return _oracles.batch_objective(theta, as_t(X), y, as_t(coef), as_t(q0), as_t(S), target)


def test_analytic_gradient_equals_autograd(rng):
    lik, data = _torch_problem(rng)
    D, J = data[0].shape[1], data[4].shape[0]
    theta = torch.asarray(rng.uniform(0.05, 2.0, D + J), requires_grad=True)
    value, grad = lik.value_and_grad(theta.detach())
    reference = _value_by_autograd(theta, *data)
    (autograd,) = torch.autograd.grad(reference, theta)
    assert float(value) == pytest.approx(float(reference.detach()), rel=1e-12)
    np.testing.assert_allclose(np.asarray(grad), autograd.numpy(), rtol=1e-10, atol=1e-13)


def test_torch_fit_equals_numpy_fit():
    X_train, X_test, y_train, _ = load_benchmark("wine")
    numpy_model = PrototypeClassifier(n_candidates=60, random_state=0).fit(X_train, y_train)
    torch_model = PrototypeClassifier(n_candidates=60, backend="torch", random_state=0).fit(X_train, y_train)
    assert torch_model.n_iter_ == numpy_model.n_iter_
    np.testing.assert_allclose(torch_model.predict_proba(X_test), numpy_model.predict_proba(X_test), atol=1e-7)


def test_torch_fit_is_translation_invariant():
    # the torch objective gets the rows centred like numpy's: grid data shifted by 1e8 (exact)
    # gives the same fit bit for bit, where the uncentred GEMM kept no digit of the spread
    rng = np.random.default_rng(0)
    X = np.clip(np.round(rng.normal(size=(80, 2)) * 64) / 64, -4, 4)
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=80) > 0).astype(int)
    params = dict(n_batches=2, n_candidates=30, backend="torch", random_state=0)
    base = PrototypeClassifier(**params).fit(X, y)
    moved = PrototypeClassifier(**params).fit(X + 1e8, y)
    for a, b in zip(moved.batches_, base.batches_):
        np.testing.assert_array_equal(a.feature_weights, b.feature_weights)
        np.testing.assert_array_equal(a.prototype_weights, b.prototype_weights)
        np.testing.assert_array_equal(a.prototypes - 1e8, b.prototypes)
    np.testing.assert_array_equal(moved.predict_proba(X + 1e8), base.predict_proba(X))


def test_staged_methods_return_like_their_input():
    # as predict_proba and predict: a torch tensor in, torch tensors out (on its device), one per batch count;
    # labels that are not numbers stay numpy, as predict's
    X_train, X_test, y_train, _ = load_benchmark("wine")
    codes = np.unique(y_train, return_inverse=True)[1]
    model = PrototypeClassifier(n_batches=2, n_candidates=60, random_state=0).fit(X_train, codes)
    T = torch.as_tensor(np.asarray(X_test))
    staged = list(model.staged_predict_proba(T))
    labels = list(model.staged_predict(T, n_batches=1))
    assert len(staged) == 3 and len(labels) == 2
    for b, proba in enumerate(staged):
        assert isinstance(proba, torch.Tensor) and proba.device == T.device
        np.testing.assert_allclose(proba.numpy(), model.predict_proba(np.asarray(X_test), n_batches=b), rtol=1e-12)
    for b, pred in enumerate(labels):
        assert isinstance(pred, torch.Tensor) and pred.device == T.device
        np.testing.assert_array_equal(pred.numpy(), model.predict(T, n_batches=b).numpy())
    assert all(isinstance(p, np.ndarray) for p in model.staged_predict_proba(np.asarray(X_test)))
    named = PrototypeClassifier(n_batches=1, n_candidates=60, random_state=0).fit(X_train, y_train)
    assert all(type(p) is type(named.predict(T)) is np.ndarray for p in named.staged_predict(T))


def test_the_emptiness_screen_subsamples_torch_rows_in_float32(rng):
    """The screen asks for numpy's float32 (SCREEN_DTYPE): on torch rows that is torch's (it raised a TypeError
    in array-api-compat's astype on the GPU, where batches of 2,048 scoring rows and more are screened)."""
    from discrim.prototype._solver import SCREEN_DTYPE

    lik, _ = _torch_problem(rng)
    screen = lik.subsample(10, SCREEN_DTYPE)
    assert screen.X.dtype == torch.float32 and isinstance(screen.X, torch.Tensor)
    D, J = screen.X.shape[1], lik.S.shape[0] if lik.S.ndim else 0
    theta = torch.full((D + J,), 0.5, dtype=torch.float32)
    value, _ = screen.value_and_grad(theta)
    assert np.isfinite(float(value))


def test_explain_takes_a_tensor_row_and_a_tensor_true_class():
    # the row's class as a 0-d or one-element tensor (as the model's other methods take tensor labels)
    # failed inside torch: "any() received an invalid combination of arguments"
    from discrim.prototype import explain

    X_train, X_test, y_train, _ = load_benchmark("wine")
    codes = np.unique(y_train, return_inverse=True)[1]
    model = PrototypeClassifier(n_candidates=60, random_state=0).fit(X_train, codes)
    T = torch.as_tensor(np.asarray(X_train))
    want = explain(model, np.asarray(X_train)[0], int(codes[0]), reference=np.asarray(X_train))
    for label in [torch.tensor(codes[0]), torch.tensor([codes[0]])]:
        got = explain(model, T[0], label, reference=T)
        assert got.true_class == want.true_class == codes[0]
        assert got.familiarity_quantile == want.familiarity_quantile
    with pytest.raises(ValueError, match=r"y must be one of the model's classes \[0, 1, 2\]"):
        explain(model, T[0], torch.tensor(7))
