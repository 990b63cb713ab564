"""What ``empty_check_iter`` costs and changes: one fit per case, penalty and setting, paired.

Usage::

    python benchmarks/prototype_empty_check.py [--checks 200,1000] [--alphas 1e-4,3.16e-4,1e-3,1e-2]
                                               [--cases iris-2f,wine,...] [--n-batches 8] [--output PATH]

``PrototypeClassifier`` leaves a batch empty when its objective is not below the empty batch's after
``empty_check_iter`` stage-2 iterations (batches that end empty are mostly decided earlier by the
solver's emptiness test). A value that is too small also empties batches that would fill later:
on xor-6f at small penalties some fill only after 300-450 iterations. For every case of the suite
(``load_benchmark(name, random_state=0)``; checker with its 4,480 training rows), every
``alpha_feature`` and every value of ``empty_check_iter``, this script fits one model of
``--n-batches`` batches (``random_state=0``, the other parameters at their defaults, one BLAS
thread) and prints the fit time, the L-BFGS-B iterations per batch, the non-empty batches, the
prototypes and the test log-loss after the last batch. The settings of one case and penalty run
back to back, so their times are paired.
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))
from _machine import cpu_model, print_and_append  # noqa: E402

CASES = ("iris-2f", "wine", "cancer", "digits", "checker", "xor-3f", "xor-4f", "xor-5f", "xor-6f")


def fit_one(data, alpha, check, n_batches):
    """One fit; its time, iterations per batch, non-empty batches, prototypes and test log-loss."""
    from sklearn.metrics import log_loss

    from discrim.prototype import PrototypeClassifier

    X_train, X_test, y_train, y_test = data
    model = PrototypeClassifier(n_batches=n_batches, alpha_feature=alpha, empty_check_iter=check, random_state=0)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    filled = [b + 1 for b, batch in enumerate(model.batches_) if batch.n_prototypes]
    return {"seconds": seconds, "n_iter": [int(i) for i in model.n_iter_], "filled": filled,
            "prototypes": int(sum(batch.n_prototypes for batch in model.batches_)),
            "log_loss": float(log_loss(y_test, model.predict_proba(X_test), labels=model.classes_))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", default="200,1000")
    parser.add_argument("--alphas", default="1e-4,3.16e-4,1e-3,1e-2")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--n-batches", type=int, default=8)
    parser.add_argument("--output", default=None, help="markdown file to append the table to")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    from discrim.datasets import load_benchmark

    checks = [int(c) for c in args.checks.split(",")]
    alphas = [float(a) for a in args.alphas.split(",")]
    load_before = os.getloadavg()[0]
    lines = [f"| case | alpha_feature | empty_check_iter | fit time | iterations per batch | non-empty batches | "
             f"prototypes | test log-loss after {args.n_batches} batches |", "| --- " * 8 + "|"]
    with threadpool_limits(limits=1):
        for case in args.cases.split(","):
            data = load_benchmark(case, random_state=0)
            for alpha in alphas:
                for check in checks:
                    r = fit_one(data, alpha, check, args.n_batches)
                    lines.append(f"| {case} | {alpha:g} | {check} | {r['seconds']:.1f} s | "
                                 f"{', '.join(map(str, r['n_iter']))} | {', '.join(map(str, r['filled'])) or '-'} | "
                                 f"{r['prototypes']:,} | {r['log_loss']:.4f} |")
                    print(lines[-1], flush=True)
    header = (f"`python benchmarks/prototype_empty_check.py {' '.join(argv if argv is not None else sys.argv[1:])}`: "
              f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {os.cpu_count()} cores, {cpu_model()}, "
              f"load {load_before:.2f} / {os.getloadavg()[0]:.2f} (before / after), one BLAS thread.\n")
    print_and_append(header + "\n" + "\n".join(lines) + "\n", args.output)


if __name__ == "__main__":
    main()
