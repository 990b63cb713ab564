"""Paired fit times of the whole model grid: discrim's ``select_mixture`` against mclust's ``Mclust``.

The six cases of ``benchmarks/mclust.py`` (iris, wine, R's faithful, sim-VII, sim-EEE, sim-VEV),
14 covariance models x G = 1..9, each library from its own hierarchical start at its default
tolerance. Every repetition runs, case by case and back to back, mclust (``Rscript``) and
discrim (this tree's ``src``, or whatever ``import discrim`` finds), and optionally a second
discrim source tree given by ``--baseline`` (e.g. a ``git worktree`` of an older commit), so the
three see the same load. Each side runs in its own process, times the grid after a warm-up grid
of the same size inside that process, and reports wall-clock seconds and CPU seconds (user +
system: what the process itself consumed, less sensitive to other work on a shared machine).
discrim runs with one BLAS thread (threadpoolctl), as R's reference BLAS does. The table gives
medians over the repetitions and the ratios mclust / discrim (above 1: discrim faster).

Usage::

    python benchmarks/mclust_grid_timing.py [--reps 3] [--cases iris,faithful] [--baseline /tmp/base]
        [--options '{"accelerate": true}'] [--append benchmarks/results/mclust.md]

``--options`` (JSON) are passed to this tree's ``select_mixture`` only (not to the baseline's).
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _machine import markdown_table, print_and_append  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CASES = ("iris", "faithful", "wine", "sim-VII", "sim-EEE", "sim-VEV")

R_GRID = r"""
suppressMessages(library(mclust))
X <- as.matrix(read.csv(commandArgs(trailingOnly = TRUE)[1]))
fit <- Mclust(X, G = 1:9, verbose = FALSE)  # warm-up
t <- system.time(fit <- Mclust(X, G = 1:9, verbose = FALSE))
cat(sprintf('{"wall": %.6f, "cpu": %.6f, "model": "%s", "G": %d}\n', t[["elapsed"]],
            t[["user.self"]] + t[["sys.self"]], fit$modelName, fit$G))
"""


def _worker(csv_path, options):
    """discrim's grid on one case: a warm-up grid, then the timed one; prints a JSON line."""
    import time
    import warnings

    from threadpoolctl import threadpool_limits

    import discrim
    from discrim.mixture import gaussian_models, select_mixture

    X = pd.read_csv(csv_path).to_numpy(dtype=float)

    def grid():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return select_mixture(X, gaussian_models(), range(1, 10), init_params="hierarchical", random_state=0,
                                  n_jobs=1, n_threads=1, **options)

    with threadpool_limits(1):
        grid()
        wall, cpu = time.perf_counter(), time.process_time()
        result = grid()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"wall": wall, "cpu": cpu, "model": result.best_params["family"],
                      "G": int(result.best_params["n_components"]), "n_iter": int(result.table["n_iter"].sum()),
                      "source": str(Path(discrim.__file__).parents[1])}))


def _run(command, env=None):
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--baseline", default=None, help="a discrim source tree (its src/ is imported) to time too")
    parser.add_argument("--append", default=None, help="append the Markdown section to this file")
    parser.add_argument("--options", default="{}", help="JSON: select_mixture options for this tree's side")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return _worker(args.worker, json.loads(args.options))

    sys.path.insert(0, str(Path(__file__).parent))
    from mclust import load_cases

    cases = {name: X for name, X in load_cases(quick=False).items() if name in args.cases.split(",")}
    folder = Path(tempfile.mkdtemp(prefix="discrim-grid-timing-"))
    (folder / "grid.R").write_text(R_GRID)
    sides = {"discrim": str(ROOT / "src")}
    if args.baseline:
        sides["baseline"] = str(Path(args.baseline).resolve() / "src")
    load_start = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for rep in range(args.reps):
        for name, X in cases.items():
            csv = folder / f"{name}.csv"
            if rep == 0:
                pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).to_csv(csv, index=False)
            runs = {"mclust": lambda: _run(["Rscript", str(folder / "grid.R"), str(csv)])}
            for side, src in sides.items():
                env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
                options = args.options if side == "discrim" else "{}"
                runs[side] = (lambda env=env, options=options: _run(
                    [sys.executable, __file__, "--worker", str(csv), "--options", options], env))
            # alternate the order between repetitions, so that no side always runs first
            order = list(runs) if rep % 2 == 0 else list(runs)[::-1]
            for side in order:
                out = runs[side]()
                rows.append({"rep": rep, "case": name, "side": side, **out})
                print(f"rep {rep} {name:9s} {side:8s} wall {out['wall']:.3f} s cpu {out['cpu']:.3f} s "
                      f"{out['model']},{out['G']}", flush=True)
    load_end = os.getloadavg()
    frame = pd.DataFrame(rows)
    table = []
    for name in cases:
        part = frame[frame["case"] == name]
        row = {"case": name}
        med = {side: part[part["side"] == side][["wall", "cpu"]].median() for side in part["side"].unique()}
        for side in med:
            row[f"{side} wall (s)"] = med[side]["wall"]
            row[f"{side} cpu (s)"] = med[side]["cpu"]
        for side in sides:
            row[f"mclust / {side} (wall)"] = med["mclust"]["wall"] / med[side]["wall"]
            row[f"mclust / {side} (cpu)"] = med["mclust"]["cpu"] / med[side]["cpu"]
        for side in ["mclust", *sides]:
            last = part[part["side"] == side].iloc[-1]
            row[f"{side} choice"] = f"{last['model']},{last['G']}"
        if "n_iter" in part:
            for side in sides:
                row[f"{side} EM iterations"] = int(part[part["side"] == side]["n_iter"].iloc[-1])
        table.append(row)
    table = pd.DataFrame(table)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [f"## Grid fit time, paired ({started:%Y-%m-%d %H:%M} UTC)", "",
             f"`benchmarks/mclust_grid_timing.py --reps {args.reps}`: discrim at commit {commit}"
             + (f" with `{args.options}`" if json.loads(args.options) else "")
             + (f", baseline tree {args.baseline}" if args.baseline else "")
             + f"; load average (1, 5, 15 min) {', '.join(f'{v:.1f}' for v in load_start)} at the start and "
             f"{', '.join(f'{v:.1f}' for v in load_end)} at the end (2 cores). Medians of {args.reps} "
             "repetitions, each side timed after a warm-up grid in its own process; cpu = user + system seconds "
             "of that process; ratio above 1: discrim faster.", "",
             markdown_table(table.T.reset_index().rename(columns={"index": "case"}).set_axis(
                 ["", *table["case"]], axis=1).iloc[1:], ".3g"), ""]
    print_and_append("\n".join(lines), args.append)


if __name__ == "__main__":
    main()
