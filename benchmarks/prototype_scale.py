"""PrototypeClassifier's fit cost at scale: fit time, peak memory and test log-loss of one fit with defaults.

Usage::

    python benchmarks/prototype_scale.py [--configs checker:4480:float64:1,...] [--output PATH] [--note TEXT]

A configuration is ``case:train_rows:dtype:n_batches[:empty_check_iter]`` (the last defaults to
the classifier's 200). ``checker`` is the 8x8 checkerboard of the
proset report with as many points per square as the training rows ask for (70/30 split, scaled on
the training part); ``mnist-shaped`` is a synthetic 10-class problem of 331 features (the report's
MNIST after PCA has that shape; scikit-learn's ``make_classification`` with 60 informative
features, not MNIST itself). Every configuration runs in a fresh subprocess (its peak resident
memory is that process's ``ru_maxrss``), with one BLAS thread as in PrototypeClassifier's fit. The
table goes to stdout and to ``benchmarks/results/prototype_scale.md`` with the machine's load before
and after: the machine is shared, so compare rows of one run only.
"""

import argparse
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
    start = time.perf_counter()
    model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    proba = model.predict_proba(X_test)
    return {
        "config": config, "case": case, "train_rows": X_train.shape[0], "features": X_train.shape[1],
        "dtype": dtype, "n_batches": int(n_batches), "empty_check_iter": check, "fit_s": seconds,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "log_loss": float(log_loss(y_test, proba, labels=model.classes_)),
        "n_iter": [int(n) for n in model.n_iter_], "prototypes": [b.n_prototypes for b in model.batches_],
    }


def per_evaluation(case, n_train, n_repeat=5):
    """Seconds per objective evaluation of batches 1 and 2, float64 against float32, alternated in one process.

    Each dtype's batch objectives are captured from a 2-batch fit (the solver is replaced by a stub
    that returns the start), then evaluated at one point (v = 7.5, w spread over [0, 1]) with one
    BLAS thread, the two dtypes taking turns so that a changing load hits both alike.
    """
    import discrim.prototype._solver as solver
    import discrim.prototype.classifier as classifier
    from discrim.prototype import PrototypeClassifier
    from discrim.utils._threads import single_threaded_blas

    X_train, _, y_train, _, np = _data(case, n_train)
    captured = {}
    original = classifier.solve_batch

    def stub(objective, D, J, *args, **kwargs):
        captured.setdefault(current, []).append(objective)
        theta = np.concatenate([np.full(D, 5.0), np.ones(J)])
        return solver.SolverResult(theta=theta, value=0.0, n_iter=0, n_eval=0, converged=True, message="")

    classifier.solve_batch = stub
    try:
        for current in ("float64", "float32"):
            PrototypeClassifier(n_batches=2, dtype=current, random_state=0).fit(X_train, y_train)
    finally:
        classifier.solve_batch = original
    times = {(dtype, b): [] for dtype in captured for b in range(2)}
    with single_threaded_blas():
        for _ in range(n_repeat):
            for dtype, objectives in captured.items():
                for b, objective in enumerate(objectives):
                    theta = objective.x0()
                    D = X_train.shape[1]
                    theta[:D], theta[D:] = 7.5, np.linspace(0.0, 1.0, theta.shape[0] - D)
                    start = time.perf_counter()
                    objective.value_and_grad(theta)
                    times[dtype, b].append(time.perf_counter() - start)
    return {f"{dtype} batch {b + 1}": float(np.median(t)) for (dtype, b), t in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default=DEFAULT)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument("--note", default="")
    parser.add_argument("--per-eval", default="checker:4480,checker:71680",
                        help="cases (case:train_rows) whose per-evaluation cost is compared by dtype; '' for none")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one)))
        return
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    load_before = os.getloadavg()
    rows = []
    for config in args.configs.split(","):
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
        evals.append((case, int(n_train), load, per_evaluation(case, int(n_train))))
        print(evals[-1], flush=True)
    load_after = os.getloadavg()
    lines = [
        "# PrototypeClassifier fit cost at scale",
        "",
        f"Produced by `python benchmarks/prototype_scale.py --configs {args.configs}`. One fit with the defaults "
        "(1,000 candidates, alpha_feature 1e-3, random_state=0) per row, each in a fresh process with one BLAS "
        "thread; peak memory is the process's maximum resident set (data generation included).",
        "",
        f"- date (UTC): {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}",
        f"- machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()} {platform.release()}",
        f"- load average (1 min) before / after: {load_before[0]:.2f} / {load_after[0]:.2f} (the machine is shared: "
        "absolute times move with the load; compare rows of this run only)",
    ] + ([f"- {args.note}"] if args.note else []) + [
        "",
        "| case | train rows x features | dtype | batches | empty_check_iter | fit time | peak memory | test log-loss | "
        "L-BFGS-B iterations per batch | prototypes per batch | load (1 min) after the row |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(f"| {r['case']} | {r['train_rows']:,} x {r['features']} | {r['dtype']} | {r['n_batches']} | "
                     f"{r['empty_check_iter']} | "
                     f"{r['fit_s']:.2f} s | {r['peak_mib']:.0f} MiB | {r['log_loss']:.4f} | "
                     f"{', '.join(map(str, r['n_iter']))} | {', '.join(map(str, r['prototypes']))} | {r['load']:.2f} |")
    if evals:
        lines += ["", "## One objective evaluation by dtype",
                  "", "Median of 5 evaluations of the batch objective at one point, float64 and float32 taking turns "
                  "in one process (see `per_evaluation`).", "",
                  "| case | train rows | batch 1 float64 | batch 1 float32 | batch 2 float64 | batch 2 float32 | "
                  "float64 / float32 | load (1 min) before |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for case, n_train, load, t in evals:
            ratio = (t["float64 batch 1"] + t["float64 batch 2"]) / (t["float32 batch 1"] + t["float32 batch 2"])
            lines.append(f"| {case} | {n_train:,} | {1e3 * t['float64 batch 1']:.1f} ms | {1e3 * t['float32 batch 1']:.1f} ms"
                         f" | {1e3 * t['float64 batch 2']:.1f} ms | {1e3 * t['float32 batch 2']:.1f} ms | {ratio:.2f} | "
                         f"{load:.2f} |")
    text = "\n".join(lines) + "\n"
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
