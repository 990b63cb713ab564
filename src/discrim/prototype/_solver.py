"""The solver strategy of one prototype batch: start values, variable scaling, the two stages.

The seed's objective of one batch (value and gradient in :mod:`discrim.prototype._likelihood`)
is minimised by L-BFGS-B (:func:`discrim.optim.minimize_lbfgsb`) in two stages; this module holds
that strategy and every constant it was tuned with, each with the reason for its value, so the
classifier and the cross-validated search share one documented solver.
"""

import logging
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from discrim.optim import Restricted, SolverResult, minimize_lbfgsb, minimize_projected
from discrim.optim._lbfgsb import scaled_box
from discrim.optim._projected import projected_gradient

__all__ = ["SCREEN_DTYPE", "START_FEATURE_WEIGHT", "START_PROTOTYPE_WEIGHT", "screen_rows", "solve_batch"]

logger = logging.getLogger(__name__)


# Start values of the seed: v_d = 10 / D, w_j = 1.
START_FEATURE_WEIGHT = 10.0
START_PROTOTYPE_WEIGHT = 1.0


def _solver_scale(n_features, n_candidates):
    """Variable scales for L-BFGS-B: the solver iterates on ``(v sqrt(J), w)``.

    Every feature weight is shared by all J candidates, so the objective's curvature along
    ``v_d`` grows with J while that along one ``w_j`` does not; scaling ``v`` by ``1 / sqrt(J)``
    puts both on a similar footing. Measured on the benchmark cases (float64, default penalties,
    with the feature stage of :func:`_solve`): checker about 600 -> 120 iterations, xor-6f about
    1,800 -> 60, digits about 330 -> 55, with test log-loss within about 0.01.
    """
    return np.concatenate([np.full(n_features, 1.0 / np.sqrt(max(n_candidates, 1))), np.ones(n_candidates)])


# Iterations of the first stage of the solver (feature weights only), and the share of their
# start values below which it may not move the feature weights.
FEATURE_STAGE_MAX_ITER = 20
STAGE1_MIN_SHARE = 0.5
# After this many iterations of stage 2, a batch whose objective is not below the empty batch's
# is left empty. Most useful batches on the benchmark cases get below it within 1-55 iterations,
# a few on cancer after 116-190, but at small penalties on xor-4f to xor-6f some only after
# 250-560 (benchmarks/results/prototype_empty_check.md): 200, the earlier default, emptied those
# and the fit returned fewer prototype batches than the solve finds (xor-6f at alpha_feature
# 3.16e-4, the report's split: test log-loss 0.522 against 0.503). Batches that end empty are
# mostly decided by the emptiness test within about 30 iterations, so the bound rarely binds on
# them. The default of PrototypeClassifier's (and PrototypeClassifierCV's) empty_check_iter.
TRIVIAL_CHECK_ITER = 1000
# The relative-decrease test (``ftol``) applies from this iteration of each stage on: the first
# L-BFGS-B steps on a new batch can lower the objective by less than a loose ``ftol`` (measured on
# digits' second batch: 4e-7 in the first iteration, then 0.1 within 30).
FTOL_AFTER = 4
# A batch that starts empty (it was empty at the previous alpha of a warm-started path) is left
# empty if its objective is not below the empty batch's after this many stage-2 iterations.
# Too short a probe keeps batches empty that the lower penalty should fill (on digits' search,
# with 4 the batches stayed empty for the rest of the path: lowest mean CV log-loss 0.150 against
# 0.145 with 6 to 15); a longer one costs iterations on every empty batch of every path, so the
# shortest probe that lets them come back is used. iris-2f, wine, cancer, xor-3f and xor-6f
# select the same model with 4 and 6.
EMPTY_PROBE_ITER = 6


# A batch whose stage-2 objective is not below the empty batch's at this L-BFGS-B iteration is
# tested once by the projected method (see _converges_empty and solve_batch). Most batches that
# fill are below it by then (benchmark cases: at iteration 1-3, digits' third at 7) and skip the
# test; on those that are not (xor-6f's second and third, below at 22 and 55, cancer's fifth at
# 116) the projected method got below the empty batch too, so they kept L-BFGS-B's path. Later
# costs more: L-BFGS-B's iterations on an empty-ending batch take 3-4 evaluations each.
EMPTY_TEST_ITER = 5


# Scoring rows of the emptiness screen (see _screened_empty): a SCREEN_SHARE-th of the scoring rows,
# at least SCREEN_FEWEST_ROWS and at most SCREEN_ROWS, built for problems of at least SCREEN_MIN_ROWS
# scoring rows (screen_rows). The screen is worth its evaluations where they cost a fraction of the
# full objective's (a screen that does not decide adds them to the solve), and an empty batch
# should take no more time per iteration than a batch that fills: its screen's evaluations, 2-4 per
# iteration on wide kernels, must cost well under a full one. On checker-71,680's empty batches
# 4,096 rows were about as fast as 8,192 (more iterations) and 16,384 about 1.5x slower; on
# checker-17,920 (13,900 scoring rows, float32) a quarter of the rows left the empty batches slower
# per iteration than the first batch, an eighth faster; on checker-4,480 (3,479) about 500 rows
# decided as a quarter did, in less time (prototype_scale.md). Below SCREEN_MIN_ROWS the test at
# EMPTY_TEST_ITER decides alone: there a whole evaluation costs little.
SCREEN_ROWS = 8192
SCREEN_SHARE = 8
SCREEN_FEWEST_ROWS = 512
SCREEN_MIN_ROWS = 2048
# The screen's dtype: it only proposes a verdict, which the confirmation checks in the fit's dtype
# on all rows, and numpy's float32 ``exp`` is SIMD where float64's is scalar on CPUs without AVX-512.
SCREEN_DTYPE = np.float32


def screen_rows(n_scoring):
    """Rows of the emptiness screen for a batch of ``n_scoring`` scoring rows; 0 means no screen.

    A SCREEN_SHARE-th of the scoring rows, at least SCREEN_FEWEST_ROWS and at most SCREEN_ROWS,
    where there are at least SCREEN_MIN_ROWS of them.

    Parameters
    ----------
    n_scoring : int

    Returns
    -------
    n_rows : int
    """
    n_scoring = int(n_scoring)
    if n_scoring < SCREEN_MIN_ROWS:
        return 0
    return min(SCREEN_ROWS, max(SCREEN_FEWEST_ROWS, n_scoring // SCREEN_SHARE))


def _feature_stage(objective, x0, n_features, max_iter, tol, ftol):
    """Stage 1 of :func:`solve_batch`: L-BFGS-B on ``v`` alone from ``x0``, ``w`` held at its start.

    Returns
    -------
    theta : ndarray of shape (n_params,)
        ``x0`` with the fitted ``v``.
    result : SolverResult
        The stage's result (over ``v`` alone).
    """
    # v_d = 0 is a stationary point for feature d (K depends on v_d^2), so stage 1, with w not
    # yet fitted, must not remove features: it keeps v_d >= STAGE1_MIN_SHARE * v0_d.
    stage1 = Restricted(objective, np.arange(n_features), x0, lower=STAGE1_MIN_SHARE * x0[:n_features])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # stage 1 is capped on purpose
        first = minimize_lbfgsb(stage1, max_iter=min(FEATURE_STAGE_MAX_ITER, max_iter), tol=tol, ftol=ftol,
                                ftol_after=FTOL_AFTER)
    return stage1.embed(first.theta), first


def _screened_empty(objective, trivial_full, screen, x0, n_features, max_iter, check_iter, tol, ftol, scale):
    """Whether the batch is empty by the emptiness test on ``screen`` (fewer rows), confirmed on ``objective``.

    On ``screen`` (the data term over a subset of the scoring rows, in SCREEN_DTYPE), from
    ``x0``, against the screen's own empty batch: stage 1 (:func:`_feature_stage`), then, if
    that is not below the empty batch, stage-2 L-BFGS-B for EMPTY_TEST_ITER iterations, then, if
    still not below it, the projected method (:func:`_converges_empty`): the steps of
    :func:`solve_batch` on all rows, at a fraction of their cost. The screen's empty verdict
    stands only if, at the point where the projected method converged, the full ``objective`` is
    not below its empty batch and its projected gradient (in the scaled variables) is within
    ``tol``: a stationary point of the full problem at which the batch is no better than empty,
    what the test on all rows has to reach to leave a batch empty. ``trivial_full`` is the full
    objective's value at the empty batch.

    Returns
    -------
    empty : bool
    result : SolverResult
        Over the screen's steps (its evaluations are the screen's).
    n_eval : int
        Evaluations of the full objective (the confirmation: 0 or 1).
    """
    trivial = screen.value_at_zero()
    theta, first = _feature_stage(screen, x0, n_features, max_iter, tol, ftol)
    steps, empty = [first], False
    if first.value >= trivial:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # the probe is capped on purpose
            probe = minimize_lbfgsb(screen.with_x0(theta), max_iter=min(EMPTY_TEST_ITER, max_iter), tol=tol,
                                    ftol=ftol, ftol_after=FTOL_AFTER, scale=scale,
                                    stop=lambda n_iter, point, value: value < trivial)
        steps.append(probe)
        if probe.value >= trivial:
            empty, test = _converges_empty(screen, probe.theta, trivial, max(check_iter - probe.n_iter, 1), tol,
                                           ftol, scale)
            steps.append(test)
    last = steps[-1]
    result = SolverResult(theta=last.theta, value=last.value, n_iter=sum(r.n_iter for r in steps),
                          n_eval=sum(r.n_eval for r in steps), converged=last.converged, message=last.message)
    if not empty:
        return False, result, 0
    scale, lower, upper = scaled_box(objective, scale)
    value, grad = objective.value_and_grad(last.theta)
    pg = projected_gradient(last.theta / scale, grad * scale, lower, upper)
    return bool(value >= trivial_full and np.max(np.abs(pg), initial=0.0) <= tol), result, 1


def _converges_empty(objective, theta, trivial, max_iter, tol, ftol, scale):
    """Whether the projected method, started at ``theta``, converges without getting below ``trivial``.

    Runs :func:`discrim.optim.minimize_projected` from ``theta`` (the same stopping tests as the
    solve, at most ``max_iter`` iterations), stopped as soon as an iterate's value is below
    ``trivial`` (the empty batch's).

    Returns
    -------
    empty : bool
        True when the method converged (a stationary point within ``tol``, or the
        relative-decrease test) at a value not below ``trivial``; False when an iterate got below
        the empty batch or the method did not converge within ``max_iter``.
    result : SolverResult
        The projected method's result (its evaluations count towards the batch's).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # an unconverged test is no verdict
        result = minimize_projected(objective.with_x0(theta), max_iter=max(int(max_iter), 1), tol=tol, ftol=ftol,
                                    ftol_after=FTOL_AFTER, scale=scale,
                                    stop=lambda n_iter, point, value: value < trivial)
    return result.converged and result.value >= trivial, result


def solve_batch(objective, n_features, n_candidates, max_iter, tol, ftol=None, fit_features_first=True,
                empty_check_iter=TRIVIAL_CHECK_ITER, screen=None):
    """Minimise one batch's objective in two stages; returns a SolverResult.

    ``tol`` and ``ftol`` are the stopping tests of :func:`discrim.optim.minimize_lbfgsb`. With
    ``fit_features_first=False`` stage 1 is skipped: a warm start already brings feature weights
    fitted together with its prototype weights. ``empty_check_iter`` is the stage-2 iteration
    from which a batch whose objective is not below the empty batch's is returned empty.
    ``screen``, an objective with the same parameters over a subset of the scoring rows (the
    classifier passes one for problems of at least SCREEN_MIN_ROWS scoring rows), is where the
    emptiness test runs first (see below).

    1. L-BFGS-B on ``v`` alone, ``w`` held at its start, for at most FEATURE_STAGE_MAX_ITER
       iterations and with ``v >= STAGE1_MIN_SHARE * v0`` (a feature at ``v_d = 0`` could never
       come back): moves the kernels to a useful bandwidth first. Without it, the scaled joint
       solve can shrink every ``w`` to the trivial stationary point ``w = 0`` before ``v`` has
       moved (seen on checker's second and later batches, where ``v`` goes from 5 to about 20).
    2. L-BFGS-B on all parameters, scaled by :func:`_solver_scale`.

    ``n_iter`` and ``n_eval`` of the result count both stages; ``n_eval`` also the emptiness
    test's evaluations, and ``n_iter`` its iterations where it ended the batch. The screen's
    iterations and evaluations (on its rows) count alike.

    When the penalty leaves a batch empty (``w = 0`` is the optimum), stage 2 tends to remove
    one ``w`` per iteration (L-BFGS-B's line search stops at the first bound it meets), about J
    iterations at several evaluations each. Three rules end such a batch early (``v = 0``,
    ``w = 0``):

    - The emptiness test. If the objective is not below the empty batch's at stage-2 iteration
      EMPTY_TEST_ITER, the projected method (:func:`discrim.optim.minimize_projected`, which
      can move any number of weights onto their bounds per step) is run once from that iterate,
      with the solve's stopping tests and at most the iterations left before
      ``empty_check_iter`` (:func:`_converges_empty`). If it converges (projected gradient
      within ``tol``, or the ``ftol`` test) without any iterate getting below the empty batch,
      the batch is empty. Otherwise the test is dropped and L-BFGS-B goes on from its own state,
      so a batch that fills takes L-BFGS-B's path bit for bit, and so does every batch that is
      below the empty batch by iteration EMPTY_TEST_ITER (the first batch of a fit, as a rule).
      The criterion is not a proof that no point beats the empty batch (the problem is not
      convex, so none is cheap): it is the verdict of a full solve, that of a local method
      started at an iterate of this one. Where L-BFGS-B, given more iterations, would have got
      below the empty batch after the projected method converged above it, the test empties a
      batch that the solve without it fills; on the benchmark cases it changes no batch (digits,
      cancer and xor-6f default fits keep their models; benchmarks/results/prototype_empty_batches.md).
    - ``empty_check_iter``: a batch whose objective is not below the empty batch's after that
      many iterations is returned empty.
    - The screen (with ``screen``, before everything else): stage 1, the first EMPTY_TEST_ITER
      stage-2 iterations and the emptiness test run on the screen's rows
      (:func:`_screened_empty`), at a fraction of the cost (SCREEN_ROWS rows in SCREEN_DTYPE: the
      projected method's path to the empty batch passes through wide kernels, where few pairs
      can be left out). Its empty verdict ends the batch only where one evaluation on all rows
      confirms it: the point where it converged is stationary for the full objective (projected
      gradient within ``tol``) and not below the empty batch. Otherwise the batch is solved on
      all rows as without a screen, so its result is the same (tested on checker and digits
      batches, and on checker-71,680 fits whose second batch fills;
      benchmarks/results/prototype_scale.md). A subset of the rows fits more easily than all
      of them (fewer rows, the same number of candidates), so the screen's test gets below its
      empty batch at least as readily as the full one: it errs towards "not empty", which costs
      only its evaluations.

    Fitting ``v`` and a common factor of ``w`` in stage 1 instead also emptied batches that are
    not empty at the optimum (xor-6f), so it is not used. Nor is a test of the optimality
    conditions at the empty batch before solving: they hold at the seed's start bandwidth on
    batches that the solver fills (digits' second batch: no prototype weight has a negative
    gradient at ``w = 0``, yet the solved batch beats the empty one), while on the checkerboard's
    later batches, which end empty, some always has one.
    """
    D, J = n_features, n_candidates
    x0 = objective.x0()
    # The trivial point v = 0, w = 0 (an empty batch) has the frozen model's loss.
    trivial = objective.value_at_zero()
    if not np.isfinite(trivial):
        raise FloatingPointError(f"the frozen model's loss is {trivial}, not finite")
    started_empty = not np.any(x0[D:] > 0)
    if started_empty:
        # Started empty (a warm start from an empty batch): if no prototype weight wants to grow
        # (w-gradient >= 0 at w = 0; the v-gradient is then the penalty's alone, so v goes to 0),
        # the empty batch satisfies the optimality conditions and is the answer.
        _, grad = objective.value_and_grad(x0)
        if np.all(grad[D:] >= 0):
            return SolverResult(theta=np.zeros(objective.n_params), value=trivial, n_iter=0, n_eval=1,
                                converged=True, message="empty batch")
    # Useful batches beat the empty batch within a few dozen iterations; one that has not after
    # empty_check_iter is declared empty instead of letting L-BFGS-B remove its weights one per
    # iteration.
    # A batch started empty was empty before (a warm start): a short probe decides whether it
    # should now hold prototypes.
    check_iter = EMPTY_PROBE_ITER if started_empty else empty_check_iter
    scale = _solver_scale(D, J)
    # A batch still not below the empty batch at stage-2 iteration test_iter is tested once by
    # the projected method (_converges_empty); where it certifies emptiness the solve ends there.
    test_iter = EMPTY_TEST_ITER if not started_empty and EMPTY_TEST_ITER < min(check_iter, max_iter) else None
    # The screen: stage 1 and the emptiness test on fewer rows first, an empty verdict confirmed on all rows.
    screen_evals = 0
    if screen is not None and test_iter is not None and fit_features_first:
        empty, test, n_full = _screened_empty(objective, trivial, screen, x0, D, max_iter, check_iter, tol, ftol,
                                              scale)
        if empty:
            logger.debug("on the screen's rows the projected method converged at %.6g after %d iterations, a "
                         "stationary point not below the empty batch on all rows: the batch is left empty",
                         test.value, test.n_iter)
            return SolverResult(theta=np.zeros(objective.n_params), value=trivial, n_iter=test.n_iter,
                                n_eval=test.n_eval + n_full, converged=True,
                                message=f"empty batch: the projected method on the screen's rows converged "
                                        f"({test.message})")
        screen_evals = test.n_eval + n_full
    if fit_features_first:
        start, first = _feature_stage(objective, x0, D, max_iter, tol, ftol)
    else:
        start = x0
        first = SolverResult(theta=x0[:D], value=float("nan"), n_iter=0, n_eval=0, converged=True, message="")
    tests = []  # (empty, result) of the emptiness test, if it ran

    def stop(n_iter, theta, value):
        if n_iter == test_iter and value >= trivial:
            tests.append(_converges_empty(objective, theta, trivial, check_iter - n_iter, tol, ftol, scale))
            if tests[0][0]:
                return True
        return max_iter > check_iter and n_iter >= check_iter and value >= trivial

    # (The callback is only passed when it can fire: it costs a call per iteration.)
    second = minimize_lbfgsb(
        objective.with_x0(start), max_iter=max_iter, tol=tol, ftol=ftol, ftol_after=FTOL_AFTER,
        scale=scale, stop=stop if max_iter > check_iter or test_iter is not None else None,
    )
    # the test's evaluations count (its iterations only where its verdict ends the batch)
    test_evals = tests[0][1].n_eval if tests else 0
    if tests and tests[0][0]:
        test = tests[0][1]
        logger.debug("batch objective not below the empty batch's at iteration %d; the projected method converged "
                     "at %.6g (empty batch %.6g) in %d iterations: the batch is left empty", test_iter, test.value,
                     trivial, test.n_iter)
        return SolverResult(theta=np.zeros(objective.n_params), value=trivial,
                            n_iter=first.n_iter + second.n_iter + test.n_iter,
                            n_eval=first.n_eval + second.n_eval + test_evals + screen_evals, converged=True,
                            message=f"empty batch: the projected method from iteration {test_iter} converged "
                                    f"({test.message})")
    if second.value >= trivial:
        # Also after a loose solve (small max_iter or large ftol) that stopped before the batch got
        # below the empty batch: the empty batch is then the better known point.
        logger.debug("batch objective %.6g not below the empty batch's (%.6g) after %d iterations: "
                     "the batch is left empty", second.value, trivial, second.n_iter)
        second = SolverResult(theta=np.zeros(objective.n_params), value=trivial, n_iter=second.n_iter,
                              n_eval=second.n_eval, converged=True, message="empty batch")
    return SolverResult(theta=second.theta, value=second.value, n_iter=first.n_iter + second.n_iter,
                        n_eval=first.n_eval + second.n_eval + test_evals + screen_evals, converged=second.converged,
                        message=second.message)
