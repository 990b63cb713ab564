"""PrototypeClassifier's fit cost at scale: fit time, peak memory and test log-loss of one fit with defaults.

Usage::

    python benchmarks/prototype_scale.py [--configs checker:4480:float64:1,...] [--output PATH] [--note TEXT]

A configuration is ``case:train_rows:dtype:n_batches``. ``checker`` is the 8x8 checkerboard of the
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
DEFAULT = ("checker:4480:float64:1,checker:4480:float64:3,checker:4480:float32:1,checker:4480:float32:3,"
           "checker:17920:float64:1,checker:17920:float64:3,checker:17920:float32:3,"
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

    case, rows, dtype, n_batches = config.split(":")
    X_train, X_test, y_train, y_test, np = _data(case, int(rows))
    model = PrototypeClassifier(n_batches=int(n_batches), dtype=dtype, random_state=0)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    proba = model.predict_proba(X_test)
    return {
        "config": config, "case": case, "train_rows": X_train.shape[0], "features": X_train.shape[1],
        "dtype": dtype, "n_batches": int(n_batches), "fit_s": seconds,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "log_loss": float(log_loss(y_test, proba, labels=model.classes_)),
        "n_iter": [int(n) for n in model.n_iter_], "prototypes": [b.n_prototypes for b in model.batches_],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default=DEFAULT)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument("--note", default="")
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
        "| case | train rows x features | dtype | batches | fit time | peak memory | test log-loss | "
        "L-BFGS-B iterations per batch | prototypes per batch | load (1 min) after the row |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(f"| {r['case']} | {r['train_rows']:,} x {r['features']} | {r['dtype']} | {r['n_batches']} | "
                     f"{r['fit_s']:.2f} s | {r['peak_mib']:.0f} MiB | {r['log_loss']:.4f} | "
                     f"{', '.join(map(str, r['n_iter']))} | {', '.join(map(str, r['prototypes']))} | {r['load']:.2f} |")
    text = "\n".join(lines) + "\n"
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
