"""Which model wins wine's BIC grid depends on the local maxima the EM runs find.

mclust selects VVE,3 on wine; discrim's default grid (one hierarchical start, plain EM) selects
VVE,4, whose fit has a higher likelihood than mclust's own VVE,4. This script fits the 14 models
x G = 1..9 on wine with more starts (the hierarchical one, then k-means++ restarts; the best
likelihood kept per cell) and with accelerated EM, at a tolerance tight enough that every cell
ends at its stationary point, and prints the top of each grid: the winner moves with the search.

Usage::

    python benchmarks/mclust_wine_optima.py [--n-init 1,20] [--append benchmarks/results/mclust.md]
"""

import argparse
import datetime
import os
import sys
import time
import warnings
from pathlib import Path

from sklearn.datasets import load_wine

sys.path.insert(0, str(Path(__file__).parent))
from _machine import cpu_model, markdown_table, print_and_append  # noqa: E402

from discrim.mixture import gaussian_models, select_mixture  # noqa: E402


def grid(X, n_init, accelerate):
    """The BIC table of 14 models x G = 1..9 (mclust's sign: higher is better), and its seconds."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = select_mixture(X, gaussian_models(), range(1, 10), init_params="hierarchical", n_init=n_init,
                                random_state=0, tol=1e-7, max_iter=5000, accelerate=accelerate, n_jobs=1)
    table = result.table.assign(bic_mclust=-result.table["bic"])
    return table, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-init", default="1,20", help="comma-separated numbers of starts per cell")
    parser.add_argument("--top", type=int, default=3, help="rows of each grid shown")
    parser.add_argument("--append", help="append the section to this markdown file")
    args = parser.parse_args(argv)
    X = load_wine().data
    rows, lines = [], []
    for n_init in (int(v) for v in args.n_init.split(",")):
        for accelerate in (False, True):
            table, seconds = grid(X, n_init, accelerate)
            best = table.sort_values("bic").head(args.top)
            for rank, (_, row) in enumerate(best.iterrows(), 1):
                rows.append({"starts per cell": n_init, "EM": "accelerated" if accelerate else "plain",
                             "rank": rank, "model": f"{row['family']},{int(row['n_components'])}",
                             "log-likelihood": round(float(row["log_likelihood"]), 3),
                             "BIC (mclust's sign)": round(float(row["bic_mclust"]), 2),
                             "grid seconds": round(seconds, 1) if rank == 1 else ""})
            top = rows[-args.top]
            print(f"n_init={n_init} accelerate={accelerate}: {seconds:.1f} s, best {top['model']}", flush=True)
    import pandas as pd

    load = os.getloadavg()
    lines += [f"## Wine's winner moves with the search ({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC)",
              "", f"`python benchmarks/mclust_wine_optima.py --n-init {args.n_init}` on {cpu_model()}, load average "
              f"{load[0]:.1f} at the end. 14 models x G = 1..9, tol 1e-7 and max_iter 5,000 (every cell at its "
              "stationary point), the hierarchical start and n_init - 1 k-means++ restarts per cell, the best "
              "likelihood kept. mclust 6 selects VVE,3 (BIC -6849.39).", "",
              markdown_table(pd.DataFrame(rows), floatfmt=".2f"), ""]
    print_and_append("\n".join(lines), args.append)


if __name__ == "__main__":
    main()
