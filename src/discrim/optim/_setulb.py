"""scipy's L-BFGS-B routine driven directly through its reverse-communication interface.

``scipy.optimize.minimize(method="L-BFGS-B")`` wraps the compiled routine ``setulb`` in a loop
that also validates the inputs, builds the bounds codes one parameter at a time, caches the
function through ``ScalarFunction`` and creates an ``OptimizeResult`` per iteration: about 30 us
per evaluation and 0.1 ms per call for 45 parameters, more than the objective of a small
prototype batch costs (the search over a prototype set's penalties makes tens of thousands of
such evaluations). :func:`run_setulb` runs the same loop without those layers, calling the same
compiled routine with the same arguments in the same order, so its iterates are identical (the
test suite checks this against ``scipy.optimize.minimize``).

The compiled interface is private to scipy. :func:`compiled_setulb` returns it only for the scipy
versions this driver was tested with (TESTED_SCIPY: the C translation of L-BFGS-B, from 1.15)
and only when its signature is the one this module was written for; otherwise None, and
:func:`discrim.optim.minimize_lbfgsb` uses ``scipy.optimize.minimize``. The test suite runs both
and checks that they take the same iterates. benchmarks/results/parallel_layer.md measures what
the driver saves on the default search (1.02-1.18x on cases of 1,600 and 1,797 rows).
"""

import functools

import numpy as np

# The scipy releases (major, minor) whose compiled setulb this driver was tested with: a new release
# is added once the test suite (tests/optim/test_setulb.py) passes with it.
TESTED_SCIPY = ((1, 15), (1, 16), (1, 17))
# The docstring signature of scipy's compiled setulb that this driver knows.
_KNOWN_SIGNATURE = "setulb(m,x,l,u,nbd,f,g,factr,pgtol,wa,iwa,task,lsave,isave,dsave,maxls,ln_task)"
# setulb's task codes (scipy.optimize._lbfgsb_py): evaluate f and g, new iterate, converged, stop.
_FG, _NEW_X, _CONVERGENCE, _STOP = 3, 1, 4, 5
_CALLBACK_HALT, _ITERATION_LIMIT, _EVALUATION_LIMIT = 505, 504, 502


@functools.cache
def compiled_setulb():
    """scipy's compiled ``setulb`` and its message tables, or None if its interface is unknown.

    Returns
    -------
    found : tuple of (callable, dict, dict) or None
        ``(setulb, status_messages, task_messages)``.
    """
    import scipy

    if tuple(int(part) for part in scipy.__version__.split(".")[:2]) not in TESTED_SCIPY:
        return None
    try:
        from scipy.optimize import _lbfgsb
        from scipy.optimize._lbfgsb_py import status_messages, task_messages
    except ImportError:
        return None
    doc = getattr(getattr(_lbfgsb, "setulb", None), "__doc__", None) or ""
    if not doc.strip().startswith(_KNOWN_SIGNATURE):
        return None
    return _lbfgsb.setulb, status_messages, task_messages


def run_setulb(fun_and_grad, x0, lower, upper, *, m, factr, pgtol, max_iter, max_fun, maxls, callback=None):
    """Minimise with scipy's compiled L-BFGS-B, as ``scipy.optimize.minimize`` would.

    Parameters
    ----------
    fun_and_grad : callable
        ``fun_and_grad(x) -> (float, ndarray of shape (n,))``; receives a copy of the iterate,
        which it must not modify.
    x0 : ndarray of shape (n,)
        Start; clipped into the bounds.
    lower, upper : ndarray of shape (n,)
        Bounds, ``-inf`` / ``inf`` where there is none.
    m : int
        Correction pairs kept.
    factr : float
        Relative-reduction test, in units of machine epsilon.
    pgtol : float
        Projected-gradient test.
    max_iter, max_fun : int
        Iteration and evaluation limits.
    maxls : int
        Line-search steps per iteration.
    callback : callable or None
        ``callback(n_iter, x, f) -> bool`` after every iteration; True halts the solve.

    Returns
    -------
    x : ndarray of shape (n,)
    f : float
        Value at the last evaluation.
    n_iter, n_eval : int
    success : bool
        True when L-BFGS-B's own convergence test stopped it.
    message : str
        scipy's message, e.g. ``"CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL"``.
    """
    setulb, status_messages, task_messages = compiled_setulb()
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    n = lower.shape[0]
    has_lower, has_upper = np.isfinite(lower), np.isfinite(upper)
    # bounds codes: 0 none, 1 lower only, 2 both, 3 upper only
    nbd = np.where(has_lower, np.where(has_upper, 2, 1), np.where(has_upper, 3, 0)).astype(np.int32)
    low_bnd = np.where(has_lower, lower, 0.0)
    upper_bnd = np.where(has_upper, upper, 0.0)
    x = np.clip(np.array(x0, dtype=np.float64), lower, upper)
    f = np.array(0.0, dtype=np.float64)
    g = np.zeros(n, dtype=np.float64)
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m, dtype=np.float64)
    iwa = np.zeros(3 * n, dtype=np.int32)
    task = np.zeros(2, dtype=np.int32)
    ln_task = np.zeros(2, dtype=np.int32)
    lsave = np.zeros(4, dtype=np.int32)
    isave = np.zeros(44, dtype=np.int32)
    dsave = np.zeros(29, dtype=np.float64)
    n_iter = n_eval = 0
    # like scipy's ScalarFunction: the last point and its gradient are kept, no second evaluation
    # at the same point, and setulb gets a copy of the gradient
    last_x = last_g = None
    while True:
        setulb(m, x, low_bnd, upper_bnd, nbd, f, g, factr, pgtol, wa, iwa, task, lsave, isave, dsave, maxls,
               ln_task)
        if task[0] == _FG:
            if last_x is None or not _same_point(x, last_x):
                last_x = x.copy()
                value, grad = fun_and_grad(last_x)
                n_eval += 1
                f = float(value)
                last_g = np.array(grad, dtype=np.float64)
            g = last_g.copy()
        elif task[0] == _NEW_X:
            n_iter += 1
            if callback is not None and callback(n_iter, x, f):
                task[0], task[1] = _STOP, _CALLBACK_HALT
            if n_iter >= max_iter:
                task[0], task[1] = _STOP, _ITERATION_LIMIT
            elif n_eval > max_fun:
                task[0], task[1] = _STOP, _EVALUATION_LIMIT
        else:
            break
    message = f"{status_messages[int(task[0])]}: {task_messages[int(task[1])]}"
    return x, float(f), n_iter, n_eval, bool(task[0] == _CONVERGENCE), message


def _same_point(x, last_x):
    """Whether ``x`` equals ``last_x`` (``np.array_equal``, as scipy's cache tests it), cheaply.

    Equal bytes are equal values unless a NaN is among them; a point equal in value but not in
    bytes (``-0.0`` for ``0.0``, which L-BFGS-B's projections onto the bound 0 do not produce) is
    evaluated again, which gives the same value and gradient. The byte comparison costs a
    twentieth of ``np.array_equal`` on the search's small problems, where it runs once per
    evaluation.
    """
    return x.tobytes() == last_x.tobytes() and not np.isnan(x).any()
