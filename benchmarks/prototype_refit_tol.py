"""How the refit's tolerance moves a tuned prototype set's test log-loss (issue 23, deliverable 5).

``PrototypeClassifierCV`` selects a grid point from loosely solved fits and refits it with
``tol=refit_tol`` (default 1e-5) at the end of the same warm-started alpha_feature path. This
script runs the suite's search on one case and draw (``benchmarks/suite.py``'s grid, folds and
seeds; a bound "name@B" above 10 uses the many-batch options ``n_batches_no_change=5,
search_max_iter=100, selection="best"``) and refits the selected point again with tol 1e-6 and
1e-7 on the same path, so that the three refits are paired: same data, split, selection and path.
It prints one JSON line: the selection, the search's seconds (the two extra refits included), and
per tolerance the test log-loss, the refit's seconds and its L-BFGS-B iterations.

Usage::

    python benchmarks/prototype_refit_tol.py CASE SEED MAX_BATCHES ['{"search_tol": 1e-6}']

The optional JSON holds further ``PrototypeClassifierCV`` options.
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from sklearn.base import clone  # noqa: E402
from sklearn.metrics import log_loss  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import discrim.model_selection.prototype_cv as prototype_cv  # noqa: E402
import suite  # noqa: E402
from discrim.datasets import load_benchmark  # noqa: E402

TIGHTER = (1e-6, 1e-7)


def main(argv):
    case, seed, max_batches = argv[0], int(argv[1]), int(argv[2])
    options = json.loads(argv[3]) if len(argv) > 3 else {}
    if max_batches > suite.MAX_BATCHES:
        options = {"n_batches_no_change": 5, "search_max_iter": 100, "selection": "best", **options}
    X_train, X_test, y_train, y_test = load_benchmark(case, random_state=seed)
    refit_path, tighter = prototype_cv.refit_path, {}

    def paired_refits(search_template, refit_template, *args):
        # the search's own refit last, so that the fitted search is the default's
        for tol in TIGHTER:
            start = time.perf_counter()
            model = refit_path(search_template, clone(refit_template).set_params(tol=tol), *args)
            tighter[str(tol)] = (round(log_loss(y_test, model.predict_proba(X_test)), 4),
                                 round(time.perf_counter() - start, 1), int(sum(model.n_iter_)))
        return refit_path(search_template, refit_template, *args)

    prototype_cv.refit_path = paired_refits
    with threadpool_limits(1):
        start = time.perf_counter()
        search = prototype_cv.PrototypeClassifierCV(
            alpha_feature_grid=suite.GRID, max_batches=max_batches, cv=suite._splitter(seed), n_jobs=1,
            random_state=seed, **options).fit(X_train, y_train)
        seconds = time.perf_counter() - start
    print(json.dumps(dict(
        case=case, max_batches=max_batches, options=options, seed=seed, seconds=round(seconds),
        best=search.best_params_, refit_tol=search.refit_tol,
        test_log_loss=round(log_loss(y_test, search.predict_proba(X_test)), 4),
        n_iter=int(sum(search.n_iter_)), tighter=tighter)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
