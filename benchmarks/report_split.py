"""discrim's searches on the proset report's own split of digits and xor-6f (issue 23, deliverable 5).

Usage::

    python benchmarks/report_split.py CASE [--output PATH] [--n-jobs N]

CASE is ``digits`` or ``xor-6f``. The published proset figures (technical report, table E16: digits
0.13, xor-6f 0.50) are the test log-loss of one split each, made by the report's own scripts
(``scripts/<case>/<case>_prepare_data.py`` in the proset repository): a ``numpy.random.RandomState(12345)``
draws xor-6f's data (``create_continuous_xor``: uniform on [-1, 1]^6, label 1 where the product of the
features is >= 0) and then, with the same generator, ``train_test_split(test_size=0.3)`` (stratified for
xor-6f, not for digits); both parts are cast to float32. This script rebuilds that split from the same
calls, so the comparison with the published figure is on the same rows, not on another sample.

On it, in one process and one after the other, as the report's searches did (``transform=StandardScaler()``
fitted inside every fold):

- today's 10-batch search: ``PrototypeClassifierCV`` with its defaults;
- the many-batch search: 0..50 batches with ``n_batches_no_change=5, search_max_iter=100,
  selection="best"`` (the options the user guide recommends for a raised batch bound);
- kNN with k chosen by 5-fold cross-validation, as a check of the split: the report's kNN reached
  0.22 (digits) and 0.54 (xor-6f) on it.

It prints and writes one markdown table with the test log-loss, its standard error, the selection, the
prototypes and the wall time of each search, and the many-batch search's time over the 10-batch one's
(the goal: at most 2x).
"""

import argparse
import datetime
import os
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.append(str(Path(__file__).resolve().parent))
import suite  # noqa: E402
from _machine import cpu_model, print_and_append  # noqa: E402

CASES = ("digits", "xor-6f")
REPORT_SEED = 12345
# the suite's many-batch options (suite.py's name@50 cases with the user guide's settings)
MANY_BATCHES = 50, {"n_batches_no_change": 5, "search_max_iter": 100, "selection": "best"}


def report_split(case):
    """The report's train/test split of ``case``, rebuilt from the calls of its prepare-data script.

    Parameters
    ----------
    case : {"digits", "xor-6f"}

    Returns
    -------
    X_train : ndarray of shape (n_train, n_features), float32
    X_test : ndarray of shape (n_test, n_features), float32
    y_train : ndarray of shape (n_train,)
    y_test : ndarray of shape (n_test,)
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    random_state = np.random.RandomState(REPORT_SEED)
    if case == "xor-6f":
        X = random_state.uniform(low=-1.0, high=1.0, size=(100 * 2**6, 6))
        y = np.int64(np.prod(X, axis=1) >= 0)
        parts = train_test_split(X, y, test_size=0.3, random_state=random_state, stratify=y)
    elif case == "digits":
        X, y = load_digits(return_X_y=True)
        parts = train_test_split(X, y, test_size=0.3, random_state=random_state)
    else:
        raise ValueError(f"case must be 'digits' or 'xor-6f', got {case!r}")
    X_train, X_test, y_train, y_test = parts
    return X_train.astype(np.float32), X_test.astype(np.float32), y_train, y_test


def run_search(data, max_batches, options, n_jobs, seed=0):
    """suite.py's discrim search with a StandardScaler fitted inside every fold, as the report's searches did."""
    from sklearn.preprocessing import StandardScaler

    return suite.run_discrim(data, n_jobs, seed, max_batches, {"transformer": StandardScaler(), **options})


def run_knn(data, seed=0):
    """kNN on scaled features with k by 5-fold CV on the log-loss (the split's sanity check)."""
    from sklearn.model_selection import GridSearchCV
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X_train, X_test, y_train, y_test = data
    pipe = make_pipeline(StandardScaler(), KNeighborsClassifier())
    search = GridSearchCV(pipe, {"kneighborsclassifier__n_neighbors": list(range(1, 101))},
                          scoring="neg_log_loss", cv=suite._splitter(seed))
    search.fit(X_train, y_train)
    # the mean of the per-row losses clipped at 1e-15, those of suite._log_loss_se (kNN gives some rows
    # probability 0, where scikit-learn's log_loss clips at the float's epsilon instead)
    proba = search.predict_proba(X_test)
    col = np.searchsorted(search.classes_, y_test)
    losses = -np.log(np.clip(proba[np.arange(col.size), col], 1e-15, 1.0))
    return {"log_loss": float(losses.mean()), "se": suite._log_loss_se(y_test, proba, search.classes_),
            "k": search.best_params_["kneighborsclassifier__n_neighbors"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=CASES)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="seed of the folds and the models (not of the split)")
    parser.add_argument("--output", default=None, help="markdown file to append the table to (default: print only)")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    data = report_split(args.case)
    load_before = os.getloadavg()[0]
    rows = []
    with threadpool_limits(limits=1):
        for label, (max_batches, options) in (("10-batch search (defaults)", (suite.MAX_BATCHES, {})),
                                              ("50-batch search", MANY_BATCHES)):
            row = run_search(data, max_batches, options, args.n_jobs, args.seed)
            print(f"{args.case} {label}: {row}", flush=True)
            rows.append((label, row))
        knn = run_knn(data, args.seed)
    print(f"{args.case} kNN: {knn}", flush=True)
    load_after = os.getloadavg()[0]
    ratio = rows[1][1]["seconds"] / rows[0][1]["seconds"]
    lines = [
        f"### {args.case}, the report's split ({data[0].shape[0]:,} training x {data[0].shape[1]} features, "
        f"{data[1].shape[0]:,} test rows)",
        "",
        f"`python benchmarks/report_split.py {' '.join(argv if argv is not None else sys.argv[1:])}`; "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
        f"{cpu_model()}, {platform.system()}, load {load_before:.2f} / {load_after:.2f} (before / after), "
        f"{args.n_jobs} job(s), 1 BLAS thread, fold and model seed {args.seed}.",
        "",
        "| search | test log-loss ± SE | published proset | selected | prototypes | active features | wall time |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    published = suite.PUBLISHED[args.case]["log_loss"]
    for label, row in rows:
        lines.append(f"| {label} | {row['log_loss']:.4f} ± {row['test_se']:.4f} | {published:.2f} | "
                     f"{row['selected']} | {row['n_prototypes']:,} | {row['active_features']} | {row['seconds']:.1f} s |")
    lines += ["", f"50-batch over 10-batch time: {ratio:.2f}x. kNN (k = {knn['k']} by CV) on this split: "
              f"{knn['log_loss']:.4f} ± {knn['se']:.4f}; the report's kNN: {suite.PUBLISHED_OTHERS[args.case][1]:.2f}.", ""]
    text = "\n".join(lines)
    print_and_append(text, args.output)


if __name__ == "__main__":
    main()
