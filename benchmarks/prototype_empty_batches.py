"""Which batches end empty, and whether the optimality conditions at the empty batch could tell beforehand.

Usage::

    python benchmarks/prototype_empty_batches.py [--cases digits:4,cancer:6,xor-6f:6,checker:3]

For every batch of one default fit (``random_state=0``; checker: 4,480 training rows) it prints
the smallest data-term gradient of a prototype weight at ``w = 0`` (plus the L1 penalty: the KKT
test of the non-negative elastic net at the empty batch) at the seed's start bandwidth
``v0 = 10 / D`` and at the bandwidth after the solver's first stage, the number of prototype
weights with a negative gradient there, the first stage-2 iteration whose objective is below the
empty batch's, the iterations and objective evaluations of the solve, and whether the batch
ended empty. If the KKT test at ``w = 0`` decided emptiness, "no negative gradient" would coincide
with "ended empty". Evaluations per iteration show what an iteration costs: about one where the
line search accepts its first step, four or five where it extrapolates towards the next bound.
The last column says what ended the batch: the solver's convergence, the emptiness test of
:func:`discrim.prototype._solver.solve_batch` (the projected method from stage-2 iteration
EMPTY_TEST_ITER converged without getting below the empty batch), or ``empty_check_iter``.
"""

import argparse
import sys
import warnings

import numpy as np


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="digits:4,cancer:6,xor-6f:6,checker:3")
    args = parser.parse_args(argv)
    from sklearn.preprocessing import StandardScaler

    import discrim.prototype._solver as solver
    import discrim.prototype.classifier as classifier
    from discrim.datasets import load_benchmark, make_checkerboard
    from discrim.optim import Restricted, minimize_lbfgsb
    from discrim.prototype import PrototypeClassifier

    warnings.simplefilter("ignore")
    original = solver.solve_batch
    rows = []

    def traced(objective, D, J, *a, **k):
        x0 = objective.x0()
        stage1 = Restricted(objective, np.arange(D), x0, lower=solver.STAGE1_MIN_SHARE * x0[:D])
        v1 = minimize_lbfgsb(stage1, max_iter=solver.FEATURE_STAGE_MAX_ITER, tol=1e-5, ftol_after=solver.FTOL_AFTER).theta
        trivial = objective.value_at_zero()
        kkt = []
        for v in (x0[:D], v1):
            grad = objective.value_and_grad(np.concatenate([v, np.zeros(J)]))[1][D:]
            kkt.append((float(grad.min()), int(np.sum(grad < 0))))
        below = []
        inner = solver.minimize_lbfgsb

        def watch(obj, **kw):
            stop = kw.get("stop")
            if kw.get("scale") is not None:
                def stop_and_watch(n, theta, value):
                    if value < trivial and not below:
                        below.append(n)
                    return stop(n, theta, value) if stop else False
                kw["stop"] = stop_and_watch
            return inner(obj, **kw)

        solver.minimize_lbfgsb = watch
        try:
            result = original(objective, D, J, *a, **k)
        finally:
            solver.minimize_lbfgsb = inner
        rows.append((current[0], len([r for r in rows if r[0] == current[0]]) + 1, kkt, below[0] if below else None,
                     result.n_iter, result.n_eval, not np.any(result.theta[D:] > 0), _ending(result.message)))
        return result

    classifier.solve_batch = traced
    current = [None]
    for item in args.cases.split(","):
        case, n_batches = item.split(":")
        current[0] = case
        if case == "checker":
            X, y = make_checkerboard(n_per_square=70, random_state=0)
            X = StandardScaler().fit_transform(X)
        else:
            X, _, y, _ = load_benchmark(case)
        PrototypeClassifier(n_batches=int(n_batches), random_state=0).fit(X, y)
    print("| case | batch | min w-gradient at (v0, 0), negatives | at (stage-1 v, 0), negatives | "
          "first stage-2 iteration below the empty batch | iterations | evaluations (per iteration) | ended empty | "
          "how |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for case, b, kkt, below, n_iter, n_eval, empty, how in rows:
        print(f"| {case} | {b} | {kkt[0][0]:.3g}, {kkt[0][1]} | {kkt[1][0]:.3g}, {kkt[1][1]} | "
              f"{'-' if below is None else below} | {n_iter} | {n_eval} ({n_eval / max(n_iter, 1):.1f}) | "
              f"{'yes' if empty else 'no'} | {how} |")
    sys.stdout.flush()


def _ending(message):
    """How a batch's solve ended, from its message: the emptiness test, empty_check_iter, or the solver's own tests."""
    if message.startswith("empty batch: the projected method"):
        return "emptiness test"
    if message == "empty batch":
        return "not below the empty batch (empty_check_iter or solver stop)"
    return "converged" if message.startswith("CONVERGENCE") else message


if __name__ == "__main__":
    main()
