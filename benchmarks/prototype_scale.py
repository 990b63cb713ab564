"""PrototypeClassifier's fit cost at scale: fit time, peak memory and test log-loss of one fit with defaults.

Usage::

    python benchmarks/prototype_scale.py [--configs checker:4480:float64:1,...] [--output PATH] [--note TEXT]
        [--per-eval checker:4480,...] [--baseline OLD_LIKELIHOOD_PY] [--repeat N]

A configuration is ``case:train_rows:dtype:n_batches[:empty_check_iter]`` (the last defaults to
the classifier's default, 1000). ``checker`` is the 8x8 checkerboard of the
proset report with as many points per square as the training rows ask for (70/30 split, scaled on
the training part); ``mnist-shaped`` is a synthetic 10-class problem of 331 features (the report's
MNIST after PCA has that shape; scikit-learn's ``make_classification`` with 60 informative
features, not MNIST itself). Every configuration runs in a fresh subprocess (its peak resident
memory is that process's ``ru_maxrss``), with one thread (OPENBLAS/OMP/MKL_NUM_THREADS=1, which
PrototypeClassifier's fit also reads as its budget of row threads), or with ``--default-threads``
as the fit runs by default (row threads on every core, the BLAS held at one thread). The
table goes to stdout and to ``benchmarks/results/prototype_scale.md`` with the machine's load before
and after: the machine is shared, so compare rows of one run only. ``--baseline`` times another
version's batch objective beside the current one (before and after a change, in one process).
"""

import argparse
import contextlib
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "prototype_scale.md"
DEFAULT = ("checker:4480:float64:1,checker:4480:float64:3,checker:4480:float64:3:20,checker:4480:float32:1,"
           "checker:4480:float32:3:20,checker:17920:float64:1,checker:17920:float64:3:20,checker:17920:float32:1,"
           "mnist-shaped:5000:float64:1,mnist-shaped:5000:float32:1")


def _data(case, n_train, seed=0):
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from discrim.datasets import make_checkerboard

    n_total = int(round(n_train / 0.7))
    if case == "checker":
        X, y = make_checkerboard(n_per_square=max(1, int(round(n_total / 64))), random_state=seed)
    elif case == "mnist-shaped":
        X, y = make_classification(n_samples=n_total, n_features=331, n_informative=60, n_redundant=0,
                                   n_classes=10, n_clusters_per_class=2, random_state=seed)
    else:
        raise ValueError(case)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test, np


def run_one(config):
    """Fit one configuration in this process; returns its figures (a dict)."""
    from sklearn.metrics import log_loss

    from discrim.prototype import PrototypeClassifier

    case, rows, dtype, n_batches, *check = config.split(":")
    X_train, X_test, y_train, y_test, np = _data(case, int(rows))
    check = int(check[0]) if check else PrototypeClassifier().empty_check_iter
    model = PrototypeClassifier(n_batches=int(n_batches), dtype=dtype, random_state=0, empty_check_iter=check)
    per_batch = []
    start = time.perf_counter()
    with _timed_batches(per_batch):
        model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    proba = model.predict_proba(X_test)
    return {
        "config": config, "case": case, "train_rows": X_train.shape[0], "features": X_train.shape[1],
        "dtype": dtype, "n_batches": int(n_batches), "empty_check_iter": check, "fit_s": seconds,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "log_loss": float(log_loss(y_test, proba, labels=model.classes_)),
        "n_iter": [int(n) for n in model.n_iter_], "prototypes": [b.n_prototypes for b in model.batches_],
        "n_eval": [n for n, _ in per_batch], "batch_s": [t for _, t in per_batch],
    }


@contextlib.contextmanager
def _timed_batches(out):
    """Record ``(objective evaluations, seconds)`` of every batch's solve into ``out`` while active."""
    import discrim.prototype.classifier as classifier

    original = classifier.solve_batch

    def timed(*args, **kwargs):
        start = time.perf_counter()
        result = original(*args, **kwargs)
        out.append((result.n_eval, time.perf_counter() - start))
        return result

    classifier.solve_batch = timed
    try:
        yield
    finally:
        classifier.solve_batch = original


def _capture_objectives(case, n_train, dtype, n_batches=2):
    """The arguments of the batch objectives of an ``n_batches`` fit, the solver stubbed to return its start."""
    import discrim.prototype._solver as solver
    import discrim.prototype.classifier as classifier
    from discrim.prototype import PrototypeClassifier

    X_train, _, y_train, _, np = _data(case, n_train)
    captured = []
    original_solve, original_objective = classifier.solve_batch, classifier.PrototypeLikelihood

    def stub(objective, D, J, *args, **kwargs):
        theta = np.concatenate([np.full(D, 5.0), np.ones(J)])
        return solver.SolverResult(theta=theta, value=0.0, n_iter=0, n_eval=0, converged=True, message="")

    def recorded(*args, **kwargs):
        captured.append((args, kwargs))
        return original_objective(*args, **kwargs)

    classifier.solve_batch, classifier.PrototypeLikelihood = stub, recorded
    try:
        PrototypeClassifier(n_batches=n_batches, dtype=dtype, random_state=0).fit(X_train, y_train)
    finally:
        classifier.solve_batch, classifier.PrototypeLikelihood = original_solve, original_objective
    return X_train.shape[1], captured


def _baseline_objective(path):
    """``PrototypeLikelihood`` of another version's ``_likelihood.py`` (e.g. from ``git show REV:...``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("baseline_likelihood", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PrototypeLikelihood


def per_evaluation(case, n_train, n_repeat=5, baseline=None, points=(1.5, 3.0)):
    """Seconds per objective evaluation of batches 1 and 2 by dtype (and against a baseline), alternated in one process.

    The batch objectives' arguments are captured from a 2-batch fit per dtype (the solver is
    replaced by a stub that returns the start); each is evaluated at ``v = point * 10 / D`` (the
    fit's start times ``point``: 7.5 and 15 on the checkerboard) in every feature and ``w`` spread
    over [0, 1] with one BLAS thread, the versions (and dtypes) taking
    turns so that a changing load hits all alike. ``baseline`` is the path of another version's
    ``prototype/_likelihood.py``: its ``PrototypeLikelihood`` is built from the same arguments,
    timed beside the current one, and the largest relative differences of value and gradient
    (gradient: against its largest entry) are reported.
    """
    import discrim.prototype._likelihood as current
    from discrim.utils._threads import single_threaded_blas

    import numpy as np

    versions = {"after": current.PrototypeLikelihood}
    if baseline:
        versions = {"before": _baseline_objective(baseline), **versions}
    rows = []
    for dtype in ("float64", "float32"):
        D, captured = _capture_objectives(case, n_train, dtype)
        for b, (args, kwargs) in enumerate(captured):
            objectives = {name: cls(*args, **dict(kwargs, n_threads=1)) for name, cls in versions.items()}
            J = objectives["after"].n_candidates
            for point in points:
                theta = np.concatenate([np.full(D, point * 10.0 / D), np.linspace(0.0, 1.0, J)])
                times = {name: [] for name in objectives}
                with single_threaded_blas():
                    results = {name: obj.value_and_grad(theta) for name, obj in objectives.items()}
                    for _ in range(n_repeat):
                        for name, obj in objectives.items():
                            start = time.perf_counter()
                            obj.value_and_grad(theta)
                            times[name].append(time.perf_counter() - start)
                row = {"dtype": dtype, "batch": b + 1, "v": point * 10.0 / D}
                row.update({name: float(np.median(t)) for name, t in times.items()})
                if baseline:
                    (v0, g0), (v1, g1) = results["before"], results["after"]
                    row["d_value"] = abs(v1 - v0) / abs(v0)
                    row["d_grad"] = float(np.abs(g1 - g0).max() / max(np.abs(g0).max(), np.finfo(float).tiny))
                rows.append(row)
            for obj in objectives.values():
                obj.close()
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default=DEFAULT)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument("--note", default="")
    parser.add_argument("--per-eval", default="checker:4480,checker:71680",
                        help="cases (case:train_rows) whose per-evaluation cost is compared by dtype; '' for none")
    parser.add_argument("--baseline", default="",
                        help="another version's prototype/_likelihood.py to time beside the current one "
                             "(e.g. the output of `git show REV:src/discrim/prototype/_likelihood.py`)")
    parser.add_argument("--repeat", type=int, default=5, help="evaluations per point and version")
    parser.add_argument("--default-threads", action="store_true",
                        help="run the fits with the classifier's default threads (row threads on every core) "
                             "instead of one thread")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one)))
        return
    env = dict(os.environ) if args.default_threads else dict(
        os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    load_before = os.getloadavg()
    rows = []
    for config in filter(None, args.configs.split(",")):
        out = subprocess.run([sys.executable, __file__, "--one", config], capture_output=True, text=True, env=env)
        if out.returncode:
            print(config, "failed:", out.stderr.strip().splitlines()[-1:], flush=True)
            continue
        row = json.loads(out.stdout.strip().splitlines()[-1])
        row["load"] = os.getloadavg()[0]
        rows.append(row)
        print(row, flush=True)
    evals = []
    for item in filter(None, args.per_eval.split(",")):
        case, n_train = item.split(":")
        load = os.getloadavg()[0]
        evals.append((case, int(n_train), load, per_evaluation(case, int(n_train), args.repeat, args.baseline)))
        print(evals[-1], flush=True)
    load_after = os.getloadavg()
    lines = [
        "# PrototypeClassifier fit cost at scale",
        "",
        f"Produced by `python benchmarks/prototype_scale.py --configs {args.configs}"
        f"{' --default-threads' if args.default_threads else ''}`. One fit with the defaults "
        "(1,000 candidates, alpha_feature 1e-3, random_state=0) per row, each in a fresh process "
        + ("with the fit's default threads (row threads on every core, one BLAS thread)" if args.default_threads
           else "with one thread (BLAS and rows)")
        + "; peak memory is the process's maximum resident set (data generation included).",
        "",
        f"- date (UTC): {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}",
        f"- machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()} {platform.release()}",
        f"- load average (1 min) before / after: {load_before[0]:.2f} / {load_after[0]:.2f} (the machine is shared: "
        "absolute times move with the load; compare rows of this run only)",
    ] + ([f"- {args.note}"] if args.note else []) + [
        "",
        "| case | train rows x features | dtype | batches | empty_check_iter | fit time | peak memory | test log-loss | "
        "L-BFGS-B iterations per batch | evaluations per batch | solve time per batch (ms per iteration) | "
        "prototypes per batch | load (1 min) after the row |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(f"| {r['case']} | {r['train_rows']:,} x {r['features']} | {r['dtype']} | {r['n_batches']} | "
                     f"{r['empty_check_iter']} | "
                     f"{r['fit_s']:.2f} s | {r['peak_mib']:.0f} MiB | {r['log_loss']:.4f} | "
                     f"{', '.join(map(str, r['n_iter']))} | {', '.join(map(str, r['n_eval']))} | "
                     + ", ".join(f"{t:.1f} s ({1e3 * t / max(n, 1):.0f})" for t, n in zip(r['batch_s'], r['n_iter']))
                     + f" | {', '.join(map(str, r['prototypes']))} | {r['load']:.2f} |")
    if evals:
        before = bool(args.baseline)
        lines += ["", "## One objective evaluation" + (" before and after" if before else " by dtype"),
                  "", f"Median of {args.repeat} evaluations of a batch objective at one point (v in every feature, w "
                  "spread over [0, 1]), one BLAS thread, "
                  + (f"the baseline `{args.baseline}` and the current objective built from the same arguments and "
                     "taking turns in one process; differences: value relative, gradient against its largest entry"
                     if before else "float64 and float32 taking turns in one process")
                  + " (see `per_evaluation`).", "",
                  "| case | train rows | dtype | batch | v | " + ("before | after | before / after | value diff | "
                                                                   "gradient diff | " if before else "time | ")
                  + "load (1 min) before |",
                  "| --- | --- | --- | --- | --- | " + ("--- | " * (5 if before else 1)) + "--- |"]
        for case, n_train, load, rows_ in evals:
            for r in rows_:
                cells = (f"{1e3 * r['before']:.1f} ms | {1e3 * r['after']:.1f} ms | {r['before'] / r['after']:.1f} | "
                         f"{r['d_value']:.1e} | {r['d_grad']:.1e} | " if before else f"{1e3 * r['after']:.1f} ms | ")
                lines.append(f"| {case} | {n_train:,} | {r['dtype']} | {r['batch']} | {r['v']:.3g} | {cells}{load:.2f} |")
    text = "\n".join(lines) + "\n"
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
