"""PrototypeClassifier's empty_check_iter: when a batch that does not beat the empty batch is given up."""

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from discrim.datasets import load_benchmark, make_checkerboard
from discrim.prototype import PrototypeClassifier

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _same_model(a, b):
    assert len(a.batches_) == len(b.batches_)
    for x, y in zip(a.batches_, b.batches_):
        for field in ("prototypes", "target", "feature_index", "feature_weights", "prototype_weights", "sample_index"):
            np.testing.assert_array_equal(getattr(x, field), getattr(y, field), err_msg=field)


def test_early_give_up_equals_the_full_solve_where_the_solver_ends_empty():
    # the checkerboard's second and third batches end empty when solved in full (the default)
    X, y = make_checkerboard(n_per_square=20, random_state=0)
    X = StandardScaler().fit_transform(X)
    full = PrototypeClassifier(n_batches=3, n_candidates=300, random_state=0).fit(X, y)
    assert full.batches_[0].n_prototypes > 0
    assert [b.n_prototypes for b in full.batches_[1:]] == [0, 0]
    early = PrototypeClassifier(n_batches=3, n_candidates=300, random_state=0, empty_check_iter=10).fit(X, y)
    _same_model(full, early)  # the same model, found with fewer iterations
    np.testing.assert_array_equal(full.predict_proba(X), early.predict_proba(X))
    assert early.n_iter_[0] == full.n_iter_[0]
    assert all(e < f for e, f in zip(early.n_iter_[1:], full.n_iter_[1:]))


def test_a_bound_beyond_the_solve_changes_nothing():
    # iris-2f's batches beat the empty batch: the bound is never reached and the fits are identical
    X, _, y, _ = load_benchmark("iris-2f")
    a = PrototypeClassifier(n_batches=3, n_candidates=40, random_state=0).fit(X, y)
    b = PrototypeClassifier(n_batches=3, n_candidates=40, random_state=0, empty_check_iter=10**6).fit(X, y)
    assert all(batch.n_prototypes for batch in a.batches_)
    _same_model(a, b)
    assert a.n_iter_ == b.n_iter_


def test_a_model_without_prototypes_says_so_and_how_to_fix_it():
    """Unscaled checkerboard features (in [0, 1]) leave every batch empty: fit warns and names the fix."""
    import warnings

    X, y = make_checkerboard(n_per_square=20, random_state=0)
    with pytest.warns(UserWarning, match="StandardScaler"):
        model = PrototypeClassifier(n_batches=1, random_state=0).fit(X, y)
    assert model.batches_[0].n_prototypes == 0
    np.testing.assert_allclose(model.predict_proba(X[:3]), np.full((3, 2), 0.5), atol=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        scaled = PrototypeClassifier(n_batches=1, random_state=0).fit(StandardScaler().fit_transform(X), y)
    assert scaled.batches_[0].n_prototypes > 0


def _disable_emptiness_test(monkeypatch):
    import discrim.prototype._solver as solver

    monkeypatch.setattr(solver, "EMPTY_TEST_ITER", 10**9)


@pytest.mark.parametrize("case", ["checker", "digits"])
def test_the_emptiness_test_leaves_batches_that_fill_bit_identical(case, monkeypatch):
    # a batch below the empty batch by EMPTY_TEST_ITER, or one the projected method gets below
    # it, continues on L-BFGS-B's path: the 1-batch fits are the same with the test and without
    if case == "checker":
        X, y = make_checkerboard(n_per_square=20, random_state=0)
        X, kwargs = StandardScaler().fit_transform(X), {"n_candidates": 300}
    else:
        X, _, y, _ = load_benchmark("digits")
        kwargs = {"n_candidates": 300}
    tested = PrototypeClassifier(n_batches=1, random_state=0, **kwargs).fit(X, y)
    _disable_emptiness_test(monkeypatch)
    plain = PrototypeClassifier(n_batches=1, random_state=0, **kwargs).fit(X, y)
    assert tested.batches_[0].n_prototypes > 0
    _same_model(tested, plain)
    assert tested.n_iter_ == plain.n_iter_


def test_the_emptiness_test_ends_the_checkerboards_later_batches_early(monkeypatch):
    # the projected method converges to the empty batch from stage-2 iteration EMPTY_TEST_ITER:
    # the model of L-BFGS-B alone (which removes one weight per iteration), the first batch bit-identical, in a fraction of them
    from discrim.prototype._solver import EMPTY_TEST_ITER, FEATURE_STAGE_MAX_ITER

    X, y = make_checkerboard(n_per_square=20, random_state=0)
    X = StandardScaler().fit_transform(X)
    tested = PrototypeClassifier(n_batches=3, n_candidates=300, random_state=0).fit(X, y)
    _disable_emptiness_test(monkeypatch)
    plain = PrototypeClassifier(n_batches=3, n_candidates=300, random_state=0).fit(X, y)
    assert [b.n_prototypes for b in plain.batches_[1:]] == [0, 0]
    _same_model(tested, plain)
    np.testing.assert_array_equal(tested.predict_proba(X), plain.predict_proba(X))
    assert tested.n_iter_[0] == plain.n_iter_[0]
    assert all(n < FEATURE_STAGE_MAX_ITER + EMPTY_TEST_ITER + 30 for n in tested.n_iter_[1:])
    assert all(t < p for t, p in zip(tested.n_iter_[1:], plain.n_iter_[1:]))


class _TwoWeights:
    """``l(w) = (w0 - a)^2 + (w1 - a)^2 + c`` with the empty point w = 0 of value ``2 a^2 + c``."""

    n_params = 2

    def __init__(self, a):
        self.a = a

    def x0(self):
        return np.array([2.0, 3.0])

    def with_x0(self, x0):
        return self

    def bounds(self):
        import scipy.optimize

        return scipy.optimize.Bounds(np.zeros(2), np.full(2, np.inf))

    def value_and_grad(self, theta):
        r = theta - self.a
        return float(r @ r), 2.0 * r


@pytest.mark.parametrize("a, empty", [(-1.0, True), (1.0, False)])
def test_converges_empty_certifies_only_a_converged_point_not_below_the_empty_batch(a, empty):
    from discrim.prototype._solver import _converges_empty

    objective = _TwoWeights(a)
    trivial = objective.value_and_grad(np.zeros(2))[0]
    verdict, result = _converges_empty(objective, objective.x0(), trivial, 100, 1e-8, None, np.ones(2))
    assert verdict == empty and result.n_eval >= 1
    if empty:  # the minimum over w >= 0 is the empty point itself
        assert result.converged and result.value >= trivial
        np.testing.assert_array_equal(result.theta, [0.0, 0.0])
    else:  # (1, 1) is below the empty point's value: stopped there, no verdict
        assert result.value < trivial and result.message == "stopped by the stop callback"


class _TwoWeightsWithZero(_TwoWeights):
    """With its start settable and the value at the empty point, as the screen's objectives have."""

    def __init__(self, a, x0=(2.0, 3.0)):
        super().__init__(a)
        self._x0 = np.asarray(x0, dtype=float)

    def x0(self):
        return self._x0.copy()

    def with_x0(self, x0):
        return _TwoWeightsWithZero(self.a, x0)

    def value_at_zero(self):
        return self.value_and_grad(np.zeros(2))[0]


@pytest.mark.parametrize("a_screen, a_full, empty", [(-1.0, -1.0, True), (-1.0, 1.0, False), (1.0, -1.0, False)])
def test_screened_empty_needs_the_screens_verdict_and_a_stationary_point_of_the_full_objective(a_screen, a_full,
                                                                                             empty):
    # a screen that converges to the empty point decides only where the full objective is
    # stationary there (a_full = 1: its gradient at 0 is negative, so the verdict is refused)
    from discrim.prototype._solver import _screened_empty

    screen, full = _TwoWeightsWithZero(a_screen), _TwoWeightsWithZero(a_full)
    verdict, result, n_full = _screened_empty(full, full.value_at_zero(), screen, full.x0(), 1, 100, 100, 1e-8, None,
                                               np.ones(2))
    assert verdict == empty
    assert n_full == (1 if a_screen < 0 else 0)  # the confirmation runs only on the screen's empty verdict
    if a_screen < 0:
        np.testing.assert_array_equal(result.theta, [0.0, 0.0])


@pytest.mark.parametrize("share", [3, 4])
@pytest.mark.parametrize("case", ["checker", "digits"])
def test_the_screen_ends_empty_batches_and_leaves_the_others_bit_identical(case, share, monkeypatch):
    # every batch solved twice, without a screen and with one over a third or a quarter of its
    # scoring rows in float32: the same theta everywhere (digits' batches that fill, and its
    # fourth, which the screen leaves undecided), and the checkerboard's later batches decided by
    # the screen
    import discrim.prototype.classifier as classifier
    from discrim.prototype._solver import solve_batch

    pairs = []

    def both(objective, *args, screen=None, **kwargs):
        plain = solve_batch(objective, *args, **kwargs)
        rows = objective.datafit.subsample(objective.datafit.X.shape[0] // share, np.float32)
        try:
            screened = solve_batch(objective, *args, screen=objective.with_datafit(rows), **kwargs)
        finally:
            rows.close()
        pairs.append((plain, screened))
        return plain

    monkeypatch.setattr(classifier, "solve_batch", both)
    if case == "checker":
        X, y = make_checkerboard(n_per_square=20, random_state=0)
        X, n_batches = StandardScaler().fit_transform(X), 3
    else:
        X, _, y, _ = load_benchmark("digits")
        n_batches = 4
    model = PrototypeClassifier(n_batches=n_batches, n_candidates=300, random_state=0).fit(X, y)
    assert len(pairs) == n_batches and model.batches_[0].n_prototypes > 0
    for plain, screened in pairs:
        np.testing.assert_array_equal(screened.theta, plain.theta)
    by_screen = [s.message.startswith("empty batch: the projected method on the screen") for _, s in pairs]
    assert not by_screen[0]
    if case == "checker":
        assert by_screen[1:] == [True, True]
    assert all(not np.any(s.theta) for (_, s), hit in zip(pairs, by_screen) if hit)


def test_screen_rows():
    # an eighth of the scoring rows, at least 512 and at most 8,192, from 2,048 scoring rows on
    from discrim.prototype._solver import screen_rows

    sizes = (0, 2047, 2048, 3479, 13_900, 65_535, 65_536, 70_680)
    assert [screen_rows(n) for n in sizes] == [0, 0, 512, 512, 1737, 8191, 8192, 8192]


def test_the_classifier_screens_from_2048_scoring_rows_with_the_model_unchanged(monkeypatch):
    # 3,200 rows, 300 candidates: about 2,900 scoring rows, screened on 512 of them; the
    # later batches are left empty by the screen, and the model is the one fitted without a screen
    import discrim.prototype.classifier as classifier
    from discrim.prototype._solver import screen_rows

    X, y = make_checkerboard(n_per_square=50, random_state=0)
    X = StandardScaler().fit_transform(X)
    sizes, messages = [], []
    solve = classifier.solve_batch

    def recorded(objective, *args, screen=None, **kwargs):
        sizes.append((objective.datafit.X.shape[0], None if screen is None else screen.datafit.X.shape[0]))
        result = solve(objective, *args, screen=screen, **kwargs)
        messages.append(result.message)
        return result

    monkeypatch.setattr(classifier, "solve_batch", recorded)
    screened = PrototypeClassifier(n_batches=3, n_candidates=300, random_state=0).fit(X, y)
    assert all(screen == screen_rows(n) > 0 for n, screen in sizes)
    assert [m.startswith("empty batch: the projected method on the screen") for m in messages] == [False, True, True]
    monkeypatch.setattr(classifier, "screen_rows", lambda n: 0)
    plain = PrototypeClassifier(n_batches=3, n_candidates=300, random_state=0).fit(X, y)
    assert screened.batches_[0].n_prototypes > 0
    _same_model(screened, plain)


def test_the_default_bound_keeps_a_batch_that_fills_after_several_hundred_iterations():
    # xor-4f at alpha_feature 1e-3: the seventh batch gets below the empty batch only after about
    # 380 stage-2 iterations. The earlier default bound of 200 left it empty, so the fit returned
    # fewer prototype batches than its solve finds; the default now lets it fill.
    X, _, y, _ = load_benchmark("xor-4f")
    model = PrototypeClassifier(n_batches=7, alpha_feature=1e-3, random_state=0).fit(X, y)
    short = PrototypeClassifier(n_batches=7, alpha_feature=1e-3, random_state=0, empty_check_iter=200).fit(X, y)
    assert model.batches_[6].n_prototypes > 0 and model.n_iter_[6] > 200
    assert short.batches_[6].n_prototypes == 0
    for a, b in zip(model.batches_[:6], short.batches_[:6]):  # the batches before it are the same
        np.testing.assert_array_equal(a.prototype_weights, b.prototype_weights)
    assert model.n_iter_[:6] == short.n_iter_[:6]
