"""Before and after: discrim at a git revision against the working tree, case by case, in one run.

Every case (a prototype search as benchmarks/suite.py runs it, single prototype fits, EM fits of
each family, mixture selection, LDA/QDA) runs in a fresh subprocess per side, with ``PYTHONPATH``
pointing at the side's ``src``; the sides alternate, so both see the same machine load. A case
is reported by the fastest of its repeats per side, with the ratio after/before (above 1.10:
more than 10 % slower, flagged). Each side also reports a fingerprint of its result (the
search's chosen parameters and test log-loss, the final log-likelihood), to show whether the
models changed.

Usage::

    python benchmarks/regression.py --base 2855c50 --repeat 3 --output benchmarks/results/regression.md
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "benchmarks"))  # last: benchmarks/distributed.py must not shadow the package

SEARCH_CASES = ["iris-2f", "wine", "cancer", "digits", "xor-3f", "xor-4f", "xor-5f", "xor-6f", "xor-6+6f", "checker",
                "checker-rot"]
FIT_CASES = ["cancer", "digits", "xor-6f"]
EM_CASES = ["gaussian-full", "gaussian-diag", "gaussian-full-f32", "poisson", "binomial-rows", "categorical"]
OTHER_CASES = ["select-mixture", "lda", "qda"]
ALL_CASES = ([f"search:{c}" for c in SEARCH_CASES] + [f"fit:{c}" for c in FIT_CASES]
             + [f"em:{c}" for c in EM_CASES] + OTHER_CASES)


# --- the cases, run inside a worker subprocess ---------------------------------------------


def _search(name):
    import numpy as np
    from sklearn.metrics import log_loss
    from sklearn.model_selection import StratifiedKFold

    from discrim.datasets import load_benchmark
    from discrim.model_selection import PrototypeClassifierCV

    X_train, X_test, y_train, y_test = load_benchmark(name, random_state=0)
    search = PrototypeClassifierCV(alpha_feature_grid=np.logspace(-6, -1, 11), max_batches=10,
                                   cv=StratifiedKFold(5, shuffle=True, random_state=0), n_jobs=2, random_state=0)
    start = time.perf_counter()
    search.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    loss = log_loss(y_test, search.predict_proba(X_test), labels=search.classes_)
    return seconds, f"{search.best_params_} test log-loss {loss:.4f}"


def _fit(name):
    from sklearn.metrics import log_loss

    from discrim.datasets import load_benchmark
    from discrim.prototype import PrototypeClassifier

    X_train, X_test, y_train, y_test = load_benchmark(name, random_state=0)
    model = PrototypeClassifier(random_state=0)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    return seconds, f"test log-loss {log_loss(y_test, model.predict_proba(X_test), labels=model.classes_):.4f}"


def _em(name):
    import numpy as np

    from discrim.distributions import Binomial, Categorical, Gaussian, Poisson
    from discrim.mixture import FiniteMixture

    rng = np.random.default_rng(0)
    n = 400_000
    if name.startswith("gaussian"):
        centers = rng.normal(scale=3.0, size=(8, 10))
        X = centers[rng.integers(0, 8, n)] + rng.normal(size=(n, 10))
        family, k = Gaussian("diag" if "diag" in name else "full"), 8
    elif name == "poisson":
        X = rng.poisson(rng.uniform(0.5, 8.0, (5, 10))[rng.integers(0, 5, n)]).astype(float)
        family, k = Poisson(), 5
    elif name == "binomial-rows":
        trials = rng.integers(1, 30, n)
        X = rng.binomial(trials[:, None], rng.uniform(0.1, 0.9, (4, 10))[rng.integers(0, 4, n)]).astype(float)
        family, k = Binomial(n_trials=trials), 4
    else:
        X = rng.integers(0, 6, size=(n, 10)).astype(float)
        family, k = Categorical(6), 5
    model = FiniteMixture(family, k, max_iter=5, tol=0.0, random_state=0,
                          dtype="float32" if name.endswith("f32") else "float64")
    start = time.perf_counter()
    model.fit(X)
    seconds = time.perf_counter() - start
    return seconds, f"mean log-lik {model.lower_bound_:.12g}"


def _other(name):
    import numpy as np

    rng = np.random.default_rng(0)
    if name == "select-mixture":
        from discrim.distributions import Gaussian
        from discrim.mixture import select_mixture

        X = np.concatenate([rng.normal(size=(5000, 4)), rng.normal(size=(5000, 4)) * 2 + 4])
        families = [Gaussian(t) for t in ("full", "diag", "tied", "spherical")]
        start = time.perf_counter()
        result = select_mixture(X, families, range(1, 6), random_state=0, n_jobs=2)
        return time.perf_counter() - start, f"{result.best_params}"
    from discrim.discriminant import LinearDiscriminant, QuadraticDiscriminant

    X = rng.normal(size=(300_000, 20))
    y = rng.integers(0, 5, 300_000)
    X += y[:, None] * 0.3
    model = (LinearDiscriminant if name == "lda" else QuadraticDiscriminant)()
    start = time.perf_counter()
    proba = model.fit(X, y).predict_proba(X)
    return time.perf_counter() - start, f"mean max proba {proba.max(axis=1).mean():.12g}"


def run_case(case):
    """(seconds, fingerprint) of one case, in this process."""
    kind, _, name = case.partition(":")
    if kind == "search":
        return _search(name)
    if kind == "fit":
        return _fit(name)
    if kind == "em":
        return _em(name)
    return _other(case)


# --- the driver -------------------------------------------------------------------------------


def _worker(src, case):
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, __file__, "--worker", case], env=env, capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["seconds"], result["fingerprint"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="git revision of the 'before' side")
    parser.add_argument("--cases", default=",".join(ALL_CASES), help="comma-separated cases")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case and side (the fastest counts)")
    parser.add_argument("--output", default="-", help="markdown file to write; '-' for none")
    parser.add_argument("--note", default="", help="extra line for the results file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        seconds, fingerprint = run_case(args.worker)
        print(json.dumps({"seconds": seconds, "fingerprint": fingerprint}))
        return

    import datetime
    import platform

    import numpy
    import scipy
    from _machine import cpu_model

    base_sha = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    head_sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    load_before = os.getloadavg()
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        base_tree = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base_tree), args.base], cwd=ROOT, check=True)
        try:
            sides = {"before": base_tree / "src", "after": ROOT / "src"}
            rows = []
            for case in args.cases.split(","):
                best = {side: None for side in sides}
                prints = {}
                for _ in range(args.repeat):
                    for side, src in sides.items():
                        seconds, fingerprint = _worker(src, case)
                        prints[side] = fingerprint
                        if seconds is not None and (best[side] is None or seconds < best[side]):
                            best[side] = seconds
                before, after = best["before"], best["after"]
                ratio = after / before if before and after else float("nan")
                flag = "slower" if ratio > 1.10 else ""
                same = "same" if prints["before"] == prints["after"] else f"before: {prints['before']}; after: {prints['after']}"
                row = f"| {case} | {before:.3f} | {after:.3f} | {ratio:.3f} {flag} | {same} |"
                rows.append(row)
                print(row, flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, check=False)
    load_after = os.getloadavg()
    lines += [
        "# Before and after: discrim at a revision against the working tree",
        "",
        f"Produced by `python benchmarks/regression.py {' '.join(sys.argv[1:])}`. {' '.join(__doc__.split(chr(10) * 2)[1].split())} "
        "Each case runs in a fresh subprocess per side and repeat; the sides alternate; a case's time is the "
        "fastest of its repeats (seconds, wall clock, around the fit or search only).",
        "",
        f"- before: {args.base} ({base_sha}); after: the working tree at {head_sha}",
        f"- date (UTC): {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}",
        f"- machine: {os.cpu_count()} cores, {cpu_model()}, {platform.system()} {platform.release()}",
        f"- python {platform.python_version()}, numpy {numpy.__version__}, scipy {scipy.__version__}",
        f"- load average (1 min) before / after: {load_before[0]:.2f} / {load_after[0]:.2f}",
    ]
    if args.note:
        lines.append(f"- {args.note}")
    lines += ["", "| case | before s | after s | after / before | result |", "| --- | --- | --- | --- | --- |", *rows]
    text = "\n".join(lines) + "\n"
    if args.output != "-":
        Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
