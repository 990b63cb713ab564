"""Fit and predict_proba time of discrim's LDA/QDA against scikit-learn's, side by side in one run.

Usage::

    python benchmarks/discriminant.py            # N in {1e5, 1e6} x D in {10, 100} x K in {2, 10}
    python benchmarks/discriminant.py --small    # N in {1e4}: a quick smoke run

Writes the table to benchmarks/results/discriminant.md (``--out`` to change).
"""

import argparse
import datetime
import gc
import os
import platform
import time
from pathlib import Path

import numpy as np
import scipy
import sklearn
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

import discrim
from discrim.discriminant import LinearDiscriminant, QuadraticDiscriminant


def make_data(n, d, k, seed):
    """Gaussian classes with distinct means and scales; one float64 array of n x d."""
    rng = np.random.default_rng(seed)
    y = rng.integers(k, size=n)
    means = rng.normal(scale=1.5 / np.sqrt(d), size=(k, d)) * 3
    scales = rng.uniform(0.7, 1.4, size=(k, d))
    X = rng.standard_normal((n, d))
    X *= scales[y]
    X += means[y]
    return X, y


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def best_of(repeats, fn, budget=15.0):
    """Best wall time of up to ``repeats`` runs, stopping early once ``budget`` seconds are spent."""
    best, out, spent = np.inf, None, 0.0
    for _ in range(repeats):
        gc.collect()
        t, out = timed(fn)
        best, spent = min(best, t), spent + t
        if spent > budget:
            break
    return best, out


MODELS = {
    # discrim's "empirical" priors are scikit-learn's default, so both decide by the same rule.
    "LDA": (
        lambda: LinearDiscriminant(priors="empirical"),
        lambda: LinearDiscriminantAnalysis(solver="lsqr"),
    ),
    "QDA": (
        lambda: QuadraticDiscriminant(priors="empirical"),
        lambda: QuadraticDiscriminantAnalysis(),
    ),
}


def run_case(n, d, k, repeats, seed=0):
    X, y = make_data(n, d, k, seed)
    rows = []
    for name, (ours, theirs) in MODELS.items():
        fit_a, est_a = best_of(repeats, lambda: ours().fit(X, y))
        fit_b, est_b = best_of(repeats, lambda: theirs().fit(X, y))
        prob_a_t, prob_a = best_of(repeats, lambda: est_a.predict_proba(X))
        prob_b_t, prob_b = best_of(repeats, lambda: est_b.predict_proba(X))
        agree = float(np.mean(prob_a.argmax(axis=1) == prob_b.argmax(axis=1)))
        max_dp = float(np.abs(prob_a - prob_b).max())
        del prob_a, prob_b, est_a, est_b
        rows.append((n, d, k, name, fit_a, fit_b, prob_a_t, prob_b_t, agree, max_dp))
        print(format_row(rows[-1]), flush=True)
    del X, y
    gc.collect()
    return rows


HEADER = (
    "| N | D | K | model | fit discrim (s) | fit sklearn (s) | fit ratio | predict_proba discrim (s) "
    "| predict_proba sklearn (s) | predict_proba ratio | prediction agreement | max abs prob diff |\n"
    "| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
)


def format_row(r):
    n, d, k, name, fa, fb, pa, pb, agree, dp = r
    return (
        f"| {n:.0e} | {d} | {k} | {name} | {fa:.3f} | {fb:.3f} | {fa / fb:.2f} | {pa:.3f} | "
        f"{pb:.3f} | {pa / pb:.2f} | {agree:.6f} | {dp:.1e} |"
    )


def machine_info():
    try:
        from threadpoolctl import threadpool_info

        blas = ", ".join(
            f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads)"
            for i in threadpool_info()
            if i.get("user_api") == "blas"
        )
    except ImportError:  # pragma: no cover
        blas = "unknown"
    return (
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n"
        f"- machine: {platform.machine()}, {os.cpu_count()} CPU cores, {platform.platform()}\n"
        f"- python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"scikit-learn {sklearn.__version__}, discrim {discrim.__version__}\n"
        f"- BLAS: {blas}\n"
        f"- load average at start: {' / '.join(f'{v:.1f}' for v in os.getloadavg())} (1 / 5 / 15 min)\n"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="N = 1e4 only (smoke run)")
    parser.add_argument("--sizes", type=float, nargs="+", help="values of N (default 1e5 1e6)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "discriminant.md"))
    parser.add_argument("--note", default="", help="free text added to the results file")
    parser.add_argument(
        "--blas-threads", type=int, default=1,
        help="BLAS threads for both libraries (0: library default). Default 1: on an "
        "oversubscribed machine multithreaded OpenBLAS spends up to 0.2 s handing small "
        "products between threads, which swamps and randomises the comparison.",
    )
    args = parser.parse_args(argv)
    if args.blas_threads > 0:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.blas_threads)

    sizes = [10_000] if args.small else [100_000, 1_000_000]
    if args.sizes:
        sizes = [int(n) for n in args.sizes]
    print(machine_info())
    print(HEADER)
    rows = []
    for n in sizes:
        repeats = 3
        for d in (10, 100):
            for k in (2, 10):
                rows.extend(run_case(n, d, k, repeats))
    worst_fit = max(r[4] / r[5] for r in rows)
    worst_prob = max(r[6] / r[7] for r in rows)
    summary = (
        f"Worst ratio (discrim / scikit-learn, below 1 means discrim is faster): fit {worst_fit:.2f}, "
        f"predict_proba {worst_prob:.2f}."
    )
    print(summary)
    text = (
        "# discrim LinearDiscriminant / QuadraticDiscriminant vs scikit-learn\n\n"
        "Produced by `python benchmarks/discriminant.py`. Same data (Gaussian classes, float64) for "
        "both libraries in one process; times are the best of 3 runs (fewer when the runs of one "
        "measurement exceed 15 s in total). scikit-learn: `LinearDiscriminantAnalysis(solver=\"lsqr\")` and "
        "`QuadraticDiscriminantAnalysis()`; discrim with `priors=\"empirical\"` (scikit-learn's "
        "default priors). Agreement is the share of rows where the two predicted classes agree; the "
        "probabilities differ slightly by design: discrim uses the unbiased covariance estimates "
        "(divisor n - g for LDA, n_k - 1 for QDA), scikit-learn 1.9 divides by n and n_k.\n\n"
        f"{machine_info()}"
        + (f"- note: {args.note}\n" if args.note else "")
        + f"\n{HEADER}\n"
        + "\n".join(format_row(r) for r in rows)
        + f"\n\n{summary}\n"
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
