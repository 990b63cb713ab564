"""Does the fork pool pay, and does the private L-BFGS-B driver? (issue 18, deliverable 5)

Usage::

    python benchmarks/parallel_layer.py [--cases digits,xor-4f] [--n-jobs 2] [--repeat 3] [--output PATH]

``PrototypeClassifierCV`` with its defaults (the benchmark suite's search) on cases of 1,000 training
rows or more, timed around ``fit`` (search and refit), in one process with four set-ups:

- ``fork pool``: discrim's default on Linux, this process and forked workers;
- ``joblib loky``: the same tasks through ``joblib.Parallel`` with loky's reusable workers (the
  fork pool switched off, as on macOS and Windows);
- ``joblib threading``: the same through ``joblib.parallel_config(backend="threading")``;
- ``scipy minimize``: the fork pool, with ``scipy.optimize.minimize(method="L-BFGS-B")`` instead of
  the private driver of scipy's compiled routine (``discrim.optim._setulb``).

The search should select the same model whatever runs its tasks; the table says whether it did
(against the fork pool) beside the median time of ``--repeat`` runs and its ratio to the fork
pool's.
"""

import argparse
import contextlib
import datetime
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.append(str(Path(__file__).resolve().parent))  # last: benchmarks/distributed.py must not shadow the package
from _machine import cpu_model  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "parallel_layer.md"


@contextlib.contextmanager
def _setup(name):
    import joblib

    import discrim.optim._lbfgsb as lbfgsb
    import discrim.utils._parallel as parallel

    saved = (parallel._can_fork, lbfgsb.compiled_setulb)
    try:
        if name == "joblib loky":
            parallel._can_fork = lambda: False
        if name == "scipy minimize":
            lbfgsb.compiled_setulb = lambda: None
        with joblib.parallel_config(backend="threading") if name == "joblib threading" else contextlib.nullcontext():
            yield
    finally:
        parallel._can_fork, lbfgsb.compiled_setulb = saved


def _run(case, setup, n_jobs):
    from discrim.datasets import load_benchmark
    from discrim.model_selection import PrototypeClassifierCV

    X_train, _, y_train, _ = load_benchmark(case, random_state=0)
    with _setup(setup):
        start = time.perf_counter()
        search = PrototypeClassifierCV(n_jobs=n_jobs, random_state=0).fit(X_train, y_train)
        seconds = time.perf_counter() - start
    return seconds, search.best_params_, X_train.shape[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="digits,xor-4f")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args(argv)
    setups = ["fork pool", "joblib loky", "joblib threading", "scipy minimize"]
    lines = [
        "# Parallel layer and L-BFGS-B driver (issue 18, deliverable 5)",
        "",
        f"{datetime.date.today()}, {cpu_model()}, {os.cpu_count()} cores, load average before the run "
        f"{os.getloadavg()[0]:.2f}; Python {platform.python_version()}; n_jobs={args.n_jobs}; median of "
        f"{args.repeat} runs of `PrototypeClassifierCV().fit` (defaults: 11 alpha_feature values, 0..10 "
        "batches, 5 folds, refit).",
        "",
        "| case | training rows | set-up | median time (s) | ratio to the fork pool | selected | same as the fork pool |",
        "|---|---|---|---|---|---|---|",
    ]
    for case in args.cases.split(","):
        base = reference = None
        for setup in setups:
            runs = [_run(case, setup, args.n_jobs) for _ in range(args.repeat)]
            median = float(np.median([r[0] for r in runs]))
            selected = runs[0][1]
            stable = all(r[1] == selected for r in runs)
            base = median if base is None else base
            reference = selected if reference is None else reference
            same = ("yes" if selected == reference else "**no**") + ("" if stable else " (varies between runs)")
            row = (f"| {case} | {runs[0][2]} | {setup} | {median:.2f} | {median / base:.2f} | "
                   f"alpha_feature={selected['alpha_feature']:.3g}, n_batches={selected['n_batches']} | {same} |")
            print(row, flush=True)
            lines.append(row)
    lines.append("")
    Path(args.output).write_text("\n".join(lines))
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
