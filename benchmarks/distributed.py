"""discrim on Dask beside Spark MLlib and discrim in memory: EM, LDA/QDA and prototype prediction on disk data.

For N in --sizes, a Gaussian mixture (K = 8, D = 10, known components) is written to Parquet on
disk, in files of 1e6 rows with a label column. Then, in one run:

- EM per iteration, full and diag covariances, from one fixed start: discrim reading the Parquet
  files through a LocalCluster (2 worker processes of 1 thread: the machine's cores), discrim in
  memory (N <= --max-in-memory), and Spark MLlib's GaussianMixture (full only, its own start,
  pyspark in its own virtualenv: --spark-python) on the same files. discrim's seconds per iteration
  are the median gap between the iterations it logs; Spark's are (fit(1 + n) - fit(1)) / n.
- LDA and QDA fit and predict_proba, and the predict_proba of a PrototypeClassifier fitted on a
  20,000-row sample, through the cluster at the largest N (predictions reduced to their column
  means, so nothing of size N is kept).
- The peak resident memory of all processes (this one, the cluster's workers and nanny, Spark's
  JVM), sampled every 0.1 s during each measurement.

Usage: python benchmarks/distributed.py --sizes 1e6 1e7 1e8 --output benchmarks/results/distributed.md
"""

import argparse
import json
import logging
import os
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np

# This file's folder goes last on the path: its name would otherwise shadow the distributed package.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.append(str(Path(__file__).resolve().parent))
from _machine import IterationClock, cpu_model  # noqa: E402

K, D = 8, 10
ROWS_PER_FILE = 1_000_000
HERE = Path(__file__).resolve().parent


def _truth():
    rng = np.random.default_rng(2026)
    means = rng.normal(0, 4, (K, D))
    factors = rng.normal(0, 0.4, (K, D, D)) + np.eye(D)
    covs = factors @ np.swapaxes(factors, 1, 2)
    weights = rng.dirichlet(np.full(K, 5.0))
    return weights, means, covs


def write_parquet(n, folder):
    """The mixture's rows (x0..x9) and component labels (y), ROWS_PER_FILE per file."""
    import pandas as pd

    folder = Path(folder)
    if (folder / "_done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    weights, means, covs = _truth()
    chol = np.linalg.cholesky(covs)
    for i, start in enumerate(range(0, n, ROWS_PER_FILE)):
        m = min(ROWS_PER_FILE, n - start)
        rng = np.random.default_rng([7, i])
        y = rng.choice(K, size=m, p=weights)
        z = rng.standard_normal((m, D))
        X = means[y] + np.einsum("nij,nj->ni", chol[y], z)
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(D)])
        frame["y"] = y.astype(np.int64)
        frame.to_parquet(folder / f"part-{i:05d}.parquet", index=False)
    (folder / "_done").touch()
    return folder


class PeakMemory:
    """Peak summed RSS of this process and all its descendants, sampled in a thread."""

    def __init__(self, interval=0.1):
        import psutil

        self._root = psutil.Process()
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()

    def _total(self):
        import psutil

        total = 0
        for proc in [self._root, *self._root.children(recursive=True)]:
            try:
                total += proc.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self):
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, self._total())

    def __enter__(self):
        self.peak = self._total()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._total())


def _start():
    from discrim.distributions import Gaussian

    weights, means, covs = _truth()
    rng = np.random.default_rng(1)
    start_means = means + rng.normal(0, 1.0, means.shape)  # a perturbed start, the same for every run
    return np.full(K, 1 / K), start_means, covs, Gaussian


def em_discrim(X, covariance_type, n_iter):
    """Fit from the fixed start; returns seconds per iteration, mean log-likelihood, fit seconds."""
    from discrim.mixture import FiniteMixture

    w0, m0, c0, Gaussian = _start()
    cov = {"full": c0, "diag": np.stack([np.diag(c) for c in c0])}[covariance_type]
    clock = IterationClock()
    logger = logging.getLogger("discrim.mixture._em")
    logger.addHandler(clock)
    logger.setLevel(logging.DEBUG)
    try:
        start = time.perf_counter()
        fm = FiniteMixture(Gaussian(covariance_type), K, weights_init=w0, params_init={"mean": m0, "covariance": cov},
                           max_iter=n_iter, tol=0.0).fit(X)
        seconds = time.perf_counter() - start
    finally:
        logger.removeHandler(clock)
    gaps = np.diff(clock.stamps)
    return {"seconds_per_iteration": float(np.median(gaps)), "mean_log_likelihood": fm.lower_bound_,
            "fit_seconds": seconds, "lower_bounds": [float(b) for b in fm.lower_bounds_]}


def em_spark(folder, n_iter, python):
    proc = subprocess.run([python, str(HERE / "_spark_gmm.py"), str(folder), str(D), str(K), str(n_iter)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def read_lazy(folder):
    import dask.dataframe as dd

    frame = dd.read_parquet(str(folder))
    return frame[[f"x{j}" for j in range(D)]], frame["y"]


def measure(fn):
    with PeakMemory() as memory:
        result = fn()
    result["peak_memory_gb"] = memory.peak / 2**30
    return result


def classifiers_at(folder, n):
    """LDA/QDA fit and predict_proba, and a PrototypeClassifier's predict_proba, through the cluster."""
    import pandas as pd

    from discrim.discriminant import LinearDiscriminant, QuadraticDiscriminant
    from discrim.prototype import PrototypeClassifier

    X, y = read_lazy(folder)
    rows = []
    for name, cls in [("LDA", LinearDiscriminant), ("QDA", QuadraticDiscriminant)]:
        def fit():
            start = time.perf_counter()
            model = cls().fit(X, y)
            fitted = time.perf_counter() - start
            start = time.perf_counter()
            means = model.predict_proba(X).mean(axis=0).compute()
            return {"fit_seconds": fitted, "predict_proba_seconds": time.perf_counter() - start,
                    "mean_proba_0": float(means[0])}
        rows.append((name, n, measure(fit)))
    sample = pd.read_parquet(sorted(Path(folder).glob("*.parquet"))[0]).iloc[:20_000]
    proset = PrototypeClassifier(n_batches=1, random_state=0).fit(sample[[f"x{j}" for j in range(D)]], sample["y"])

    def predict():
        start = time.perf_counter()
        proset.predict_proba(X).mean(axis=0).compute()
        return {"predict_proba_seconds": time.perf_counter() - start,
                "n_prototypes": int(sum(b.n_prototypes for b in proset.batches_))}
    rows.append(("PrototypeClassifier (1 batch, fitted on 20,000 rows)", n, measure(predict)))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e6, 1e7])
    parser.add_argument("--data", default="/tmp/discrim-distributed-data")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--max-in-memory", type=float, default=1e7)
    parser.add_argument("--spark-python", default="/tmp/spark-venv/bin/python")
    parser.add_argument("--spark-max", type=float, default=1e7, help="largest N given to Spark")
    parser.add_argument("--output", default=None)
    parser.add_argument("--cache", default="/tmp/discrim-distributed-results.json")
    parser.add_argument("--reuse", action="store_true", help="skip the measurements already in --cache")
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    from dask.distributed import Client, LocalCluster

    sizes = [int(s) for s in args.sizes]
    folders = {n: write_parquet(n, Path(args.data) / f"n{n}") for n in sizes}
    lines = []
    load = os.getloadavg()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="2GiB", processes=True,
                           dashboard_address=None)
    client = Client(cluster)
    # Every measurement is kept in --cache as it is made; --reuse skips those already there
    # (a run of 1e8 rows takes most of an hour, and one failure should not cost all of it).
    cache = Path(args.cache)
    done = json.loads(cache.read_text()) if args.reuse and cache.exists() else {}

    def cached(key, fn):
        if key not in done:
            done[key] = fn()
            cache.write_text(json.dumps(done))
        print(key, {k: v for k, v in done[key].items() if k != "lower_bounds"}, flush=True)
        return done[key]

    em_rows, spark_rows = [], []
    try:
        for n in sizes:
            X, _ = read_lazy(folders[n])
            for ctype in ("full", "diag"):
                result = cached(f"dask {ctype} {n}", lambda: measure(lambda: em_discrim(X, ctype, args.iterations)))
                em_rows.append(("discrim on Dask (Parquet)", ctype, n, result))
                if n <= args.max_in_memory:
                    def in_memory():
                        Xm = X.to_dask_array(lengths=True).compute()
                        return measure(lambda: em_discrim(Xm, ctype, args.iterations))
                    em_rows.append(("discrim in memory", ctype, n, cached(f"memory {ctype} {n}", in_memory)))
            if n <= args.spark_max and Path(args.spark_python).exists():
                result = cached(f"spark {n}", lambda: measure(lambda: em_spark(folders[n], args.iterations,
                                                                             args.spark_python)))
                spark_rows.append((n, result))
        classifier_rows = [(name, max(sizes), r) for name, r in
                           cached(f"classifiers {max(sizes)}", lambda: dict(
                               (name, r) for name, _, r in classifiers_at(folders[max(sizes)], max(sizes)))).items()]
    finally:
        client.close()
        cluster.close()

    lines.append("# discrim on Dask beside Spark MLlib (issue 19)\n")
    lines.append(f"Machine: {cpu_model()}, {os.cpu_count()} cores; load average at start {load[0]:.2f}. "
                 "LocalCluster of 2 worker processes x 1 thread (2 GiB limit each); Spark local[2]. "
                 f"K = {K}, D = {D}, float64, data in Parquet files of 1e6 rows on local disk; "
                 f"{args.iterations} EM iterations from one fixed start (Spark: its own start). One run.\n")
    lines.append("## EM, seconds per iteration\n")
    lines.append("| system | covariance | N | s / iteration | mean log-likelihood | peak memory (GB, all processes) |")
    lines.append("| --- | --- | --- | --- | --- | --- |")
    for system, ctype, n, r in em_rows:
        lines.append(f"| {system} | {ctype} | {n:.0e} | {r['seconds_per_iteration']:.3f} | "
                     f"{r['mean_log_likelihood']:.10f} | {r['peak_memory_gb']:.2f} |")
    for n, r in spark_rows:
        if "error" in r:
            lines.append(f"| Spark MLlib GaussianMixture | full | {n:.0e} | failed: {r['error']} | | |")
        else:
            lines.append(f"| Spark MLlib GaussianMixture | full | {n:.0e} | {r['seconds_per_iteration']:.3f} | "
                         f"{r['mean_log_likelihood']:.10f} (own start) | {r['peak_memory_gb']:.2f} |")
    lines.append("\n## Ratios (Spark s/iteration over discrim on Dask, full covariances)\n")
    for n, r in spark_rows:
        ours = [x for s, c, m, x in em_rows if s.startswith("discrim on Dask") and c == "full" and m == n]
        if ours and "error" not in r:
            lines.append(f"- N = {n:.0e}: {r['seconds_per_iteration'] / ours[0]['seconds_per_iteration']:.1f}x")
    lines.append("\n## Same log-likelihood as in memory (relative difference of every iteration's bound)\n")
    for system, ctype, n, r in em_rows:
        if system == "discrim in memory":
            dask_r = [x for s, c, m, x in em_rows if s.startswith("discrim on Dask") and c == ctype and m == n][0]
            a, b = np.array(r["lower_bounds"]), np.array(dask_r["lower_bounds"])
            lines.append(f"- {ctype}, N = {n:.0e}: max {np.max(np.abs(a - b) / np.abs(a)):.1e}")
    lines.append(f"\n## Classifiers through the cluster at N = {max(sizes):.0e}\n")
    lines.append("| model | fit (s) | predict_proba (s) | peak memory (GB, all processes) |")
    lines.append("| --- | --- | --- | --- |")
    for name, n, r in classifier_rows:
        fit = f"{r['fit_seconds']:.1f}" if "fit_seconds" in r else "-"
        lines.append(f"| {name} | {fit} | {r['predict_proba_seconds']:.1f} | {r['peak_memory_gb']:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        Path(args.output).write_text(text)


if __name__ == "__main__":
    main()
