"""The batch objective: the fused path against the reference, gradients against finite differences."""

import _oracles
import array_api_compat.numpy as xp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discrim.optim import NonNegElasticNet, PenalizedObjective
from discrim.prototype._likelihood import PrototypeLikelihood, kernel_matrix, reference_value_and_grad


def _problem(rng, n_classes, earlier_batches, weighted, R=40, J=15, D=3, **options):
    X = rng.normal(size=(R, D))
    y = rng.integers(0, n_classes, R)
    S = rng.normal(size=(J, D))
    target = np.sort(rng.integers(0, n_classes, J))
    marginals = rng.dirichlet(np.ones(n_classes))
    q0 = np.tile(marginals, (R, 1))
    if earlier_batches:  # frozen batches make q0 vary by row
        q0 = q0 + rng.uniform(0.0, 2.0, (R, n_classes))
    weight = rng.uniform(0.2, 3.0, R) if weighted else np.ones(R)
    coef = weight / weight.sum() * rng.uniform(1.0, 2.0, n_classes)[y]
    return PrototypeLikelihood(X, y, coef, q0, S, target, n_classes, xp, **options), (X, y, coef, q0, S, target)


def _reference_value(theta, X, y, coef, q0, S, target):
    return float(_oracles.batch_objective(theta, X, y, coef, q0, S, target))


def _central_differences(f, theta, eps=1e-6):
    out = np.empty_like(theta)
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = eps
        if theta[i] < eps:  # on (or next to) the bound: one-sided, theta is clipped at 0
            out[i] = (f(theta + e) - f(theta)) / eps
        else:
            out[i] = (f(theta + e) - f(theta - e)) / (2 * eps)
    return out


CASES = [(k, earlier, weighted) for k in (2, 4) for earlier in (False, True) for weighted in (False, True)]


class _Reference:
    """The reference path (numpy namespace) behind the objective's interface."""

    def __init__(self, lik):
        self.lik = lik

    def value_and_grad(self, theta):
        lik = self.lik
        return reference_value_and_grad(theta, lik.X, lik.onehot, lik.coef, lik.q0, lik.S, lik.member,
                                        lik._target, xp, rows_per_chunk=7)


@pytest.mark.parametrize("n_classes, earlier_batches, weighted", CASES)
@pytest.mark.parametrize("where", ["interior", "bounds"])
@pytest.mark.parametrize("path", ["fused", "reference"])
def test_gradient_equals_finite_differences(n_classes, earlier_batches, weighted, where, path, rng):
    lik, data = _problem(rng, n_classes, earlier_batches, weighted)
    lik = lik if path == "fused" else _Reference(lik)
    D, J = data[0].shape[1], data[4].shape[0]
    for _ in range(3):
        theta = rng.uniform(0.05, 2.0, D + J)
        if where == "bounds":
            theta[rng.choice(D, 1)] = 0.0
            theta[D + rng.choice(J, J // 3, replace=False)] = 0.0
        value, grad = lik.value_and_grad(theta)
        assert value == pytest.approx(_reference_value(theta, *data), rel=1e-12)
        fd = _central_differences(lambda t: lik.value_and_grad(t)[0], theta)
        tol = 1e-6 if where == "interior" else 1e-5  # one-sided differences are O(eps)
        np.testing.assert_allclose(grad, fd, atol=tol * max(1.0, np.abs(grad).max()))


def test_penalised_gradient_equals_finite_differences(rng):
    lik, data = _problem(rng, 3, True, True)
    D, J = data[0].shape[1], data[4].shape[0]
    obj = PenalizedObjective(lik, [(slice(0, D), NonNegElasticNet(1e-2, 0.3)),
                                   (slice(D, D + J), NonNegElasticNet(1e-3, 0.7))], np.ones(D + J))
    theta = rng.uniform(0.05, 2.0, D + J)
    _, grad = obj.value_and_grad(theta)
    fd = _central_differences(lambda t: obj.value_and_grad(t)[0], theta)
    np.testing.assert_allclose(grad, fd, atol=1e-6)


def test_chunked_evaluation_equals_one_chunk(rng):
    lik, data = _problem(rng, 3, True, True, R=57)
    theta = rng.uniform(0.05, 2.0, data[0].shape[1] + data[4].shape[0])
    value, grad = lik.value_and_grad(theta)
    assert value == pytest.approx(_reference_value(theta, *data), rel=1e-12)
    small = PrototypeLikelihood(*data[:6], 3, xp, rows_per_chunk=7)
    value2, grad2 = small.value_and_grad(theta)
    assert value2 == pytest.approx(value, rel=1e-13)
    np.testing.assert_allclose(grad2, grad, rtol=1e-12, atol=1e-15)


# Sizes that lead the fused path through each of its reductions: small chunks (class-free), large
# chunks with few classes (per class block), large chunks with many classes (class-free).
SIZES = {"small": dict(n_classes=3, R=40, J=15), "large-2-classes": dict(n_classes=2, R=300, J=150),
         "large-5-classes": dict(n_classes=5, R=300, J=150)}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("rows_per_chunk", [None, 7])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_fused_path_equals_the_reference(size, rows_per_chunk, n_threads, rng):
    """The fused numpy path gives the reference's value and gradient to 1e-12, with inactive
    features, zero weights, no active feature at all, one chunk or many, one thread or two."""
    n_classes, R, J = SIZES[size]["n_classes"], SIZES[size]["R"], SIZES[size]["J"]
    data = _problem(rng, n_classes, True, True, R=R, J=J, D=4)[1]
    lik = PrototypeLikelihood(*data[:6], n_classes, xp, n_threads=n_threads, rows_per_chunk=rows_per_chunk)
    theta = rng.uniform(0.05, 2.0, 4 + J)
    theta[[1, 3]] = 0.0
    theta[4 + rng.choice(J, J // 4, replace=False)] = 0.0
    theta_none = theta.copy()
    theta_none[:4] = 0.0
    try:
        for t in (theta, theta_none):
            value, grad = lik.value_and_grad(t)
            ref_value, ref_grad = _Reference(lik).value_and_grad(t)
            assert value == pytest.approx(ref_value, rel=1e-12)
            assert value == pytest.approx(_reference_value(t, *data), rel=1e-12)
            np.testing.assert_allclose(grad, ref_grad, rtol=1e-12, atol=1e-12 * np.abs(ref_grad).max())
    finally:
        lik.close()


def test_kernel_matrix_matches_definition(rng):
    X, S, v = rng.normal(size=(9, 4)), rng.normal(size=(6, 4)), rng.uniform(0, 2, 4)
    np.testing.assert_allclose(kernel_matrix(X, S, v, xp), _oracles.kernel(X, S, v), rtol=1e-12)
    out = np.empty((9, 6))
    assert kernel_matrix(X, S, v, xp, out=out) is out
    # no features: the kernel is one everywhere
    np.testing.assert_allclose(kernel_matrix(X[:, :0], S[:, :0], v[:0], xp), 1.0)


def test_unsorted_candidates_are_rejected(rng):
    X = rng.normal(size=(5, 2))
    with pytest.raises(ValueError, match="sorted"):
        PrototypeLikelihood(X, np.zeros(5, int), np.ones(5), np.ones((5, 2)), X[:3], np.array([1, 0, 1]), 2, xp)


@pytest.mark.parametrize("size", list(SIZES))
def test_threads_give_bit_identical_results(rng, size):
    """Chunks are summed in chunk order whatever the thread count: a parallel search whose
    threads see different BLAS limits (joblib's threading backend, Dask threads) fits the same
    models as a serial one. Summing per thread first made them differ in the last bits, which the
    loose solves of the search turned into another selected model on xor-4f."""
    k = SIZES[size]["n_classes"]
    R = SIZES[size]["R"]
    lik, data = _problem(rng, k, True, True, R=R, J=SIZES[size]["J"], rows_per_chunk=R // 6)
    theta = rng.uniform(0.05, 2.0, data[0].shape[1] + data[4].shape[0])
    value, grad = lik.value_and_grad(theta)
    for n_threads in (2, 3, 4):
        threaded = PrototypeLikelihood(*data[:6], k, xp, n_threads=n_threads, rows_per_chunk=R // 6)
        try:
            value_t, grad_t = threaded.value_and_grad(theta)
        finally:
            threaded.close()
        assert threaded.n_threads == n_threads
        assert value_t == value
        np.testing.assert_array_equal(grad_t, grad)


def test_torch_backend_matches_numpy(rng):
    torch = pytest.importorskip("torch")
    from discrim.backend import namespace

    lik, data = _problem(rng, 3, True, True)
    txp = namespace("torch")
    tdata = [torch.asarray(a) if a.dtype.kind == "f" else a for a in data]
    tlik = PrototypeLikelihood(*tdata, 3, txp)
    theta = rng.uniform(0.05, 2.0, data[0].shape[1] + data[4].shape[0])
    value, grad = lik.value_and_grad(theta)
    tvalue, tgrad = tlik.value_and_grad(torch.asarray(theta))
    assert tvalue == pytest.approx(value, rel=1e-10)
    np.testing.assert_allclose(tgrad.numpy(), grad, rtol=1e-10, atol=1e-14)


def test_value_at_zero_is_the_value_of_the_empty_batch(rng):
    # The empty batch's loss comes from the frozen model alone; it equals the full evaluation
    # at theta = 0, chunked or not, and PenalizedObjective adds the penalties at zero.
    from discrim.optim import NonNegElasticNet, PenalizedObjective

    data = _problem(rng, 3, True, True, R=40, J=15, D=4)[1]
    lik = PrototypeLikelihood(*data[:6], 3, xp, rows_per_chunk=6)
    zero = np.zeros(4 + 15)
    assert lik.value_at_zero() == pytest.approx(lik.value_and_grad(zero)[0], rel=1e-13)
    objective = PenalizedObjective(lik, [(slice(0, 4), NonNegElasticNet(0.3, 0.5)),
                                         (slice(4, 19), NonNegElasticNet(0.1, 1.0))], np.ones(19))
    assert objective.value_at_zero() == pytest.approx(objective.value_and_grad(zero)[0], rel=1e-13)


@given(masks=st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=2, max_size=6))
@settings(max_examples=30, deadline=None)
def test_reused_objective_follows_changing_active_features(masks):
    # One objective evaluated while features drop out and come back (its per-active-set arrays
    # and buffers are cached) gives exactly what a fresh objective gives at every point.
    rng = np.random.default_rng(len(masks))
    data = _problem(rng, 3, True, True, R=30, J=12, D=4)[1]
    reused = PrototypeLikelihood(*data[:6], 3, xp)
    for mask in masks:
        theta = rng.uniform(0.05, 2.0, 4 + 12)
        theta[:4][~np.array(mask)] = 0.0
        value, grad = reused.value_and_grad(theta)
        fresh_value, fresh_grad = PrototypeLikelihood(*data[:6], 3, xp).value_and_grad(theta)
        assert value == fresh_value
        np.testing.assert_array_equal(grad, fresh_grad)
        assert value == pytest.approx(_reference_value(theta, *data), rel=1e-10)


@settings(max_examples=25, deadline=None)
@given(log2_scale=st.lists(st.integers(-30, 30), min_size=3, max_size=3), seed=st.integers(0, 2**16))
def test_unpenalised_objective_is_invariant_under_feature_scaling(log2_scale, seed):
    # x_d -> a_d x_d with v_d -> v_d / a_d leaves every kernel value, so l(v, w) is invariant and
    # dl/dv scales by a (chain rule); powers of two keep the products exact. (The fitted model is
    # not scale-invariant: the penalty on v, its start and the merge tolerance are not.)
    rng = np.random.default_rng(seed)
    lik, (X, y, coef, q0, S, target) = _problem(rng, 3, True, True)
    a = 2.0 ** np.asarray(log2_scale, dtype=np.float64)
    scaled = PrototypeLikelihood(X * a, y, coef, q0, S * a, target, 3, xp)
    theta = rng.uniform(0.1, 1.5, X.shape[1] + S.shape[0])
    theta_scaled = np.concatenate([theta[:3] / a, theta[3:]])
    value, grad = lik.value_and_grad(theta)
    value_s, grad_s = scaled.value_and_grad(theta_scaled)
    assert value_s == pytest.approx(value, rel=1e-12)
    np.testing.assert_allclose(grad_s[3:], grad[3:], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grad_s[:3], grad[:3] * a, rtol=1e-9, atol=1e-12 * np.abs(grad[:3] * a).max())


@pytest.mark.parametrize("offset", [1e8, 1e9])
def test_objective_on_centred_rows_matches_the_direct_differences_at_large_offsets(offset, rng):
    # the classifier hands the objective centred rows (centre_of); the GEMM's expanded square is
    # then exact to about eps, where on the raw shifted rows it keeps no digit of the spread
    lik, (X, y, coef, q0, S, target) = _problem(rng, 3, True, False)
    theta = rng.uniform(0.2, 1.5, X.shape[1] + S.shape[0])
    reference = _reference_value(theta, X, y, coef, q0, S, target)
    raw = PrototypeLikelihood(X + offset, y, coef, q0, S + offset, target, 3, xp)
    c = np.round(offset)  # what centre_of gives for a median near offset on unit-scale data
    centred = PrototypeLikelihood((X + offset) - c, y, coef, q0, (S + offset) - c, target, 3, xp)
    # the rows themselves are rounded by about eps * offset when shifted
    tol = 50 * np.finfo(float).eps * offset * theta[:3].max() ** 2 * np.ptp(X)
    assert abs(centred.value_and_grad(theta)[0] - reference) <= tol * abs(reference)
    assert not abs(raw.value_and_grad(theta)[0] - reference) <= tol * abs(reference)


def _clustered_problem(rng, n_classes=2, R=400, J=60, D=2, centres=4, spread=0.05):
    """Rows and candidates around a few centres far apart: most pairs' kernels vanish at large v."""
    middles = rng.uniform(-1.0, 1.0, (centres, D))
    X = middles[rng.integers(0, centres, R)] + spread * rng.normal(size=(R, D))
    S = middles[rng.integers(0, centres, J)] + spread * rng.normal(size=(J, D))
    y = rng.integers(0, n_classes, R)
    target = np.sort(rng.integers(0, n_classes, J))
    q0 = np.tile(rng.dirichlet(np.ones(n_classes)), (R, 1)) + rng.uniform(0.0, 1.0, (R, n_classes))
    coef = rng.uniform(0.2, 3.0, R)
    return X, y, coef / coef.sum(), q0, S, target


@pytest.mark.parametrize("n_classes", [2, 5])
@pytest.mark.parametrize("v", [3.0, 30.0, 300.0])
def test_far_candidates_left_out_of_chunks_change_nothing(n_classes, v, rng):
    """Candidates whose kernel entries in a row chunk are all below exp(-T) are left out of its
    GEMMs (and kernel exponents below the floor are raised to it): value and gradient still equal
    the reference's, from kernels of nearby pairs to kernels that underflow for all but a few.
    (At v = 300 the expanded square of the exponent, |v x|^2 up to 2e5, is exact to about 2e-11
    in both paths, which bounds the agreement of small entries.)"""
    data = _clustered_problem(rng, n_classes)
    D, J = data[0].shape[1], data[4].shape[0]
    lik = PrototypeLikelihood(*data, n_classes, xp, rows_per_chunk=25)
    theta = np.concatenate([np.full(D, v), rng.uniform(0.0, 2.0, J)])
    theta[D + rng.choice(J, J // 4, replace=False)] = 0.0
    near = lik._near(lik._subset_for(theta[:D] > 0), theta[:D], lik._far_limit(theta[D:]))
    if v > 3.0:  # compact chunks, far clusters: most candidates are left out of most chunks
        assert sum(J if n is None else n.size for n in near) < 0.6 * J * len(near)
    value, grad = lik.value_and_grad(theta)
    ref_value, ref_grad = _Reference(lik).value_and_grad(theta)
    assert value == pytest.approx(ref_value, rel=1e-12)
    assert value == pytest.approx(_reference_value(theta, *data), rel=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-12 * np.abs(ref_grad).max())


def test_gradient_with_far_candidates_left_out_equals_finite_differences(rng):
    data = _clustered_problem(rng, 3, R=200, J=30)
    lik = PrototypeLikelihood(*data, 3, xp, rows_per_chunk=20)
    theta = np.concatenate([np.full(2, 12.0), rng.uniform(0.1, 2.0, 30)])
    assert any(n is not None for n in lik._near(lik._subset_for(theta[:2] > 0), theta[:2], lik._far_limit(theta[2:])))
    grad = lik.value_and_grad(theta)[1]
    fd = _central_differences(lambda t: lik.value_and_grad(t)[0], theta)
    np.testing.assert_allclose(grad, fd, atol=1e-6 * max(1.0, np.abs(grad).max()))


def test_kernel_exponents_far_below_the_floor_leave_the_frozen_models_loss(rng):
    # v so large that every kernel entry underflows: raised to exp(floor) they add nothing visible
    data = _problem(rng, 3, True, True)[1]
    for dtype in (np.float64, np.float32):
        cast = [a.astype(dtype) if a.dtype.kind == "f" else a for a in data]
        lik = PrototypeLikelihood(*cast, 3, xp)
        theta = np.concatenate([np.full(3, 1e4), np.ones(15)])
        value, grad = lik.value_and_grad(theta)
        assert value == pytest.approx(lik.value_at_zero(), rel=10 * float(np.finfo(dtype).eps))
        assert np.all(np.isfinite(grad))


@pytest.mark.parametrize("R, n_parts", [(1, 1), (10, 3), (101, 7), (1000, 64)])
def test_compact_order_is_a_permutation_into_nearly_equal_parts(R, n_parts, rng):
    from discrim.prototype._likelihood import _compact_order

    X = rng.normal(size=(R, 3))
    order, parts = _compact_order(X, n_parts)
    np.testing.assert_array_equal(np.sort(order), np.arange(R))
    assert parts[0][0] == 0 and parts[-1][1] == R and all(a[1] == b[0] for a, b in zip(parts, parts[1:]))
    sizes = [b - a for a, b in parts]
    assert len(parts) == min(n_parts, R) and max(sizes) - min(sizes) <= 2


def test_far_candidates_with_more_features_than_the_bound_uses(rng):
    """Wide data: the distance bound runs over the PRUNE_FEATURES features of largest v (a lower
    bound still); value and gradient equal the reference's, some features inactive."""
    from discrim.prototype._likelihood import PRUNE_FEATURES

    D = PRUNE_FEATURES + 8
    data = _clustered_problem(rng, 3, R=300, J=40, D=D, spread=0.02)
    lik = PrototypeLikelihood(*data, 3, xp, rows_per_chunk=20)
    theta = np.concatenate([rng.uniform(2.0, 20.0, D), rng.uniform(0.0, 2.0, 40)])
    theta[rng.choice(D, 3, replace=False)] = 0.0
    near = lik._near(lik._subset_for(theta[:D] > 0), theta[:D][theta[:D] > 0], lik._far_limit(theta[D:]))
    assert any(n is not None for n in near)
    value, grad = lik.value_and_grad(theta)
    ref_value, ref_grad = _Reference(lik).value_and_grad(theta)
    assert value == pytest.approx(ref_value, rel=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-12 * np.abs(ref_grad).max())


def test_a_non_finite_weight_is_not_hidden_by_leaving_candidates_out(rng):
    # the objective's caller refuses non-finite evaluations; a NaN weight must not be skipped away
    data = _clustered_problem(rng, 2)
    lik = PrototypeLikelihood(*data, 2, xp, rows_per_chunk=25)
    theta = np.concatenate([np.full(2, 30.0), np.ones(60)])
    theta[5] = np.nan
    assert np.isnan(lik.value_and_grad(theta)[0])


def test_threads_give_bit_identical_results_with_far_candidates_left_out(rng):
    data = _clustered_problem(rng, 2, R=400, J=60)
    theta = np.concatenate([np.full(2, 30.0), rng.uniform(0.0, 2.0, 60)])
    serial = PrototypeLikelihood(*data, 2, xp, rows_per_chunk=25)
    assert any(n is not None for n in serial._near(serial._subset_for(theta[:2] > 0), theta[:2],
                                                   serial._far_limit(theta[2:])))
    value, grad = serial.value_and_grad(theta)
    threaded = PrototypeLikelihood(*data, 2, xp, rows_per_chunk=25, n_threads=3)
    try:
        value_t, grad_t = threaded.value_and_grad(theta)
    finally:
        threaded.close()
    assert value_t == value
    np.testing.assert_array_equal(grad_t, grad)


@pytest.mark.parametrize("rows_per_chunk", [None, 25])
def test_subsample_is_the_objective_of_evenly_spread_rows_with_the_same_total_weight(rows_per_chunk, rng):
    # the emptiness screen's objective: rows of the original (with their class, q0 and c_n up to
    # one common factor), spread over the rows' order, the total of c_n kept
    data = _clustered_problem(rng, n_classes=3, R=400, J=60, D=2)
    X, y, coef, q0, S, target = data
    lik = PrototypeLikelihood(*data, 3, xp, rows_per_chunk=rows_per_chunk)
    sub = lik.subsample(90)
    assert sub.X.shape[0] == 90 and sub.n_candidates == lik.n_candidates
    assert float(np.sum(sub.coef)) == pytest.approx(float(np.sum(coef)), rel=1e-13)
    # each row taken is one of X's, with its class and q0, and c_n times one common factor
    rows = [np.flatnonzero((X == x).all(axis=1))[0] for x in sub.X]
    assert len(set(rows)) == 90
    np.testing.assert_array_equal(sub._y, y[rows])
    np.testing.assert_array_equal(sub.q0, q0[rows])
    np.testing.assert_allclose(sub.coef / coef[rows], np.sum(coef) / np.sum(coef[rows]), rtol=1e-13)
    # its value is the seed's formula on those rows
    theta = np.concatenate([[3.0, 5.0], rng.uniform(0.0, 1.0, 60)])
    value, _ = sub.value_and_grad(theta)
    assert value == pytest.approx(_reference_value(theta, X[rows], y[rows], sub.coef, q0[rows], S, target), rel=1e-12)
    # spread: with chunks in k-d order the rows taken cover every chunk of the original
    if rows_per_chunk is not None:
        in_chunk = [np.any((lik.X[a:b][:, None, :] == sub.X[None, :, :]).all(axis=2)) for a, b in lik._chunks]
        assert all(in_chunk)


def test_subsample_of_all_rows_in_another_dtype_gives_the_same_objective(rng):
    data = _clustered_problem(rng, n_classes=2, R=300, J=40, D=2)
    X = data[0].copy()
    X[rng.random(X.shape) < 0.2] = np.nan  # missing entries come back as NaN in the copy
    lik = PrototypeLikelihood(X, *data[1:], 2, xp, rows_per_chunk=50)
    assert lik.subsample(300) is lik and lik.subsample(10**6) is lik
    single = lik.subsample(300, np.float32)
    assert single.dtype == np.float32 and single.X.shape == lik.X.shape
    theta = np.concatenate([[2.0, 4.0], rng.uniform(0.0, 1.0, 40)])
    (v64, g64), (v32, g32) = lik.value_and_grad(theta), single.value_and_grad(theta)
    assert v32 == pytest.approx(v64, rel=1e-5)
    np.testing.assert_allclose(g32, g64, rtol=0, atol=1e-4 * np.abs(g64).max())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("v", [0.5, 3.0, 30.0, 300.0])
def test_leaving_out_the_floor_pass_changes_no_bit(dtype, v, rng, monkeypatch):
    # chunks whose kept candidates cannot have an exponent below EXP_FLOOR skip raising to it:
    # value and gradient are bit-identical to raising every chunk, and a chunk that can have
    # one (an exponent actually below the floor) is raised
    from discrim.prototype._likelihood import EXP_FLOOR

    data = [a.astype(dtype) if a.dtype.kind == "f" else a for a in _clustered_problem(rng, 3, R=400, J=60)]
    D, J = data[0].shape[1], data[4].shape[0]
    lik = PrototypeLikelihood(*data, 3, xp, rows_per_chunk=25)
    theta = np.concatenate([np.full(D, v), rng.uniform(0.0, 2.0, J)])
    sub = lik._subset_for(theta[:D] > 0)
    value, grad = lik.value_and_grad(theta)
    floored = lik._floored(sub, theta[:D].astype(dtype), lik._far_limit(theta[D:].astype(dtype)))
    near = lik._near(sub, theta[:D].astype(dtype), lik._far_limit(theta[D:].astype(dtype)))
    for i, (a, b) in enumerate(lik._chunks):  # where it is skipped, no exponent of a kept pair is below the floor
        if floored is not None and not floored[i]:
            S = lik.S if near[i] is None else lik.S[near[i]]
            exponent = -0.5 * np.square((lik.X[a:b, None, :] - S[None]) * theta[:D]).sum(axis=2)
            assert exponent.min() > EXP_FLOOR[np.dtype(dtype)]
    if v <= 3.0:
        assert floored is not None and not floored.any()  # wide kernels: no chunk needs the pass
    monkeypatch.setattr(PrototypeLikelihood, "_floored", lambda self, *args: None)
    always = PrototypeLikelihood(*data, 3, xp, rows_per_chunk=25)
    value_floored, grad_floored = always.value_and_grad(theta)
    assert value == value_floored
    np.testing.assert_array_equal(grad, grad_floored)
