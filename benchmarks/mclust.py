"""discrim's Gaussian mixtures against R's mclust 6 (and pomegranate), in one run.

Six cases: iris, wine (scikit-learn's copy, 13 features), R's faithful and three simulations
(``simulations()``). mclust runs through ``Rscript`` inside this script, on the same CSV files.

1. **BIC table.** For every case, mclust's 14 covariance models x G = 1..9 fitted by mclust's
   ``mclustBIC`` (its hierarchical start, EM tolerance tightened to 1e-13 so that both sides
   reach the maximum: at 1e-10, mclust stopped faithful's slowly converging VVE,7 1.4e-3 below
   it) and by discrim from the same start (mclust's hierarchical partitions, given as
   ``init_params``, ``reg_covar=0``, ``tol=1e-13``). Reported: the largest relative BIC
   difference over the cells both fitted, and the cells where they differ by more than 1e-6.
2. **Selected model.** mclust's ``Mclust(X, G = 1:9)`` with its defaults against discrim's
   ``select_mixture`` over the same grid with its own hierarchical start
   (``init_params="hierarchical"``, alone and with two k-means++ restarts) and defaults otherwise.
3. **Fit time.** The whole grid (``Mclust`` against ``select_mixture``, single-threaded, at their
   default tolerances) on every case and on 10,000 simulated rows, and single fits of VVV and
   VVI with G = 3 on 200,000 simulated rows against mclust's ``em`` and pomegranate 1.x's
   ``GeneralMixtureModel`` (the models both have) from the same start, 50 iterations each.

mclust's BIC is ``2 l - p log n`` (larger is better); discrim's is ``-2 l + p log n``: the tables
here show mclust's sign. Usage::

    python benchmarks/mclust.py [--out benchmarks/results/mclust.md] [--quick]
"""

import argparse
import datetime
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_iris, load_wine

sys.path.insert(0, str(Path(__file__).parent))
from _machine import ProgressLog, cpu_model, markdown_table, write_results  # noqa: E402

import discrim  # noqa: E402
from discrim.distributions import Gaussian  # noqa: E402
from discrim.distributions._covariance_models import COVARIANCE_MODELS  # noqa: E402
from discrim.mixture import FiniteMixture, gaussian_models, select_mixture  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MODELS = list(COVARIANCE_MODELS)
G_RANGE = range(1, 10)
# EM iterations of the single-fit timings (run to the end: no tolerance stops them)
SINGLE_ITERS = 50

R_SCRIPT = r"""
suppressMessages(library(mclust))
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]; cases <- strsplit(args[2], ",")[[1]]; reps <- as.integer(args[3])
models <- c("EII","VII","EEI","VEI","EVI","VVI","EEE","VEE","EVE","VVE","EEV","VEV","EVV","VVV")
timing <- list()
for (case in cases) {
  X <- as.matrix(read.csv(file.path(dir, paste0(case, ".csv"))))
  tight <- mclustBIC(X, G = 1:9, modelNames = models, control = emControl(tol = c(1e-13, 1e-12)))
  write.csv(as.data.frame(unclass(tight)[, models]), file.path(dir, paste0(case, "_bic.csv")))
  cl <- hclass(hc(X, modelName = "VVV", use = "SVD"), 1:9)
  write.csv(cl, file.path(dir, paste0(case, "_hc.csv")), row.names = FALSE)
  times <- numeric(reps)
  for (r in 1:reps) times[r] <- system.time(fit <- Mclust(X, G = 1:9, verbose = FALSE))[["elapsed"]]
  timing[[case]] <- data.frame(case = case, model = fit$modelName, G = fit$G, bic = fit$bic,
                               grid_s = median(times))
}
write.csv(do.call(rbind, timing), file.path(dir, "mclust_selected.csv"), row.names = FALSE)
big <- as.matrix(read.csv(file.path(dir, "grid.csv")))
times <- numeric(reps)
for (r in 1:reps) times[r] <- system.time(fit <- Mclust(big, G = 1:9, verbose = FALSE))[["elapsed"]]
write.csv(data.frame(model = fit$modelName, G = fit$G, bic = fit$bic, grid_s = median(times)),
          file.path(dir, "mclust_grid.csv"), row.names = FALSE)
big <- as.matrix(read.csv(file.path(dir, "large.csv")))
start_cl <- hclass(hc(big[1:2000, ], modelName = "VVV", use = "SVD"), 3)[, 1]
single <- list()
for (m in c("VVV", "VVI")) {
  start <- mstep(modelName = m, data = big[1:2000, ], z = unmap(start_cl))
  sigma <- start$parameters$variance$sigma
  write.csv(cbind(pro = start$parameters$pro, t(start$parameters$mean), matrix(sigma, nrow = 3, byrow = TRUE)),
            file.path(dir, paste0("start_", m, ".csv")), row.names = FALSE)
  times <- numeric(reps)
  for (r in 1:reps) times[r] <- system.time(
    fit <- em(modelName = m, data = big, parameters = start$parameters,
              control = emControl(itmax = ITERS, tol = c(0, sqrt(.Machine$double.eps)))))[["elapsed"]]
  single[[m]] <- data.frame(model = m, fit_s = median(times), n_iter = attr(fit, "info")[["iterations"]],
                            loglik = fit$loglik)
}
write.csv(do.call(rbind, single), file.path(dir, "mclust_single.csv"), row.names = FALSE)
"""


def simulations(seed=0):
    """Three simulated cases whose true models are VII (G=3), EEE (G=3) and VEV (G=2)."""
    rng = np.random.default_rng(seed)
    spherical = np.concatenate([rng.normal(c, s, (150, 2)) for c, s in (([0, 0], 1.0), ([6, 0], 0.6),
                                                                         ([3, 5], 1.4))])
    L = np.array([[1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.3, -0.2, 0.5]])
    common = np.concatenate([rng.normal(size=(200, 3)) @ L.T + c for c in ([0, 0, 0], [4, 0, 1], [0, 4, -1])])

    def rotated(angle, scale, n, center):
        R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        return rng.normal(size=(n, 2)) * scale @ R.T + center

    orientations = np.concatenate([rotated(0.3, [2.0, 0.5], 250, [0, 0]), rotated(1.9, [3.0, 0.75], 250, [5, 1])])
    return {"sim-VII": spherical, "sim-EEE": common, "sim-VEV": orientations}


def load_cases(quick):
    faithful = pd.read_csv(ROOT / "tests" / "mixture" / "data" / "faithful.csv").to_numpy(dtype=float)
    cases = {"iris": load_iris().data, "faithful": faithful}
    if not quick:
        cases["wine"] = load_wine().data
    cases.update(simulations())
    return cases


def run_r(folder, cases, reps, log):
    script = folder / "bench.R"
    script.write_text(R_SCRIPT.replace("ITERS", str(SINGLE_ITERS)))
    t0 = time.perf_counter()
    subprocess.run(["Rscript", str(script), str(folder), ",".join(cases), str(reps)], check=True)
    log(f"R side done in {time.perf_counter() - t0:.0f} s")


def bic_agreement(name, X, folder):
    """discrim's BIC (mclust's sign) per cell, from mclust's hierarchical partitions."""
    r_bic = pd.read_csv(folder / f"{name}_bic.csv", index_col=0)
    partitions = pd.read_csv(folder / f"{name}_hc.csv").to_numpy()
    rows = []
    for model in MODELS:
        for G in G_RANGE:
            ref = r_bic.loc[G, model]
            labels = partitions[:, G - 1].astype(int) - 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # EVE and VVE also with mclust's own M-step (m_step="mclust"): the same EM path as mclust's
                fits = {}
                for m_step in ("exact", "mclust") if model in ("EVE", "VVE") else ("exact",):
                    try:
                        # mclust's em runs until its tolerance holds, however long: sim-VEV's EEV,5 creeps
                        # along a ridge for 178,644 iterations (stopped at 100,000, its BIC was 2e-4 short)
                        fm = FiniteMixture(Gaussian(model, reg_covar=0.0, m_step=m_step), G, init_params=labels,
                                           tol=1e-13, max_iter=1_000_000).fit(X)
                        fits[m_step] = -fm.bic(X)
                    except ValueError:
                        fits[m_step] = np.nan
            ours, theirs = fits["exact"], fits.get("mclust", fits["exact"])
            rows.append({"case": name, "model": model, "G": G, "mclust": ref, "discrim": ours,
                         "rel": _rel(ours, ref), "discrim m_step=mclust": theirs, "rel m_step=mclust": _rel(theirs, ref)})
    return pd.DataFrame(rows)


def _rel(ours, ref):
    return abs(ours - ref) / abs(ref) if np.isfinite(ref) and np.isfinite(ours) else np.nan


def selection(X, n_init=1):
    """select_mixture over the 14 models x G = 1..9 from the hierarchical start (and n_init - 1 k-means++)."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = select_mixture(X, gaussian_models(), G_RANGE, init_params="hierarchical", n_init=n_init,
                                random_state=0, n_jobs=1, n_threads=1)
    return time.perf_counter() - t0, result


R_CHECK = r"""
suppressMessages(library(mclust))
args <- commandArgs(trailingOnly = TRUE)
X <- as.matrix(read.csv(args[1])); z <- as.matrix(read.csv(args[2])); model <- args[3]
one <- estep(modelName = model, data = X, parameters = mstep(modelName = model, data = X, z = z)$parameters)
fit <- me(modelName = model, data = X, z = z, control = emControl(tol = c(1e-10, 1e-12)))
cat(format(c(one$loglik, fit$loglik, bic(model, fit$loglik, nrow(X), ncol(X), ncol(z))), digits = 12), "\n")
"""


def selection_check(name, X, result, mclust_choice, folder):
    """Where discrim's selected model is not mclust's: is discrim's fit a genuine higher likelihood?

    At discrim's fitted parameters: its log-likelihood recomputed by scipy, and what mclust does
    from there (from discrim's responsibilities: one mclust M-step then E-step, and mclust's EM
    to convergence at tolerance 1e-10), with mclust's BIC of that fit.
    """
    from scipy.special import logsumexp
    from scipy.stats import multivariate_normal

    best = result.best_estimator
    model, G = result.best_params["family"], result.best_params["n_components"]
    cov = np.asarray(best.params_["covariance"])
    if cov.ndim != 3:  # scipy's check needs full matrices: the "full" storage models only
        return None
    weights, means = np.asarray(best.weights_), np.asarray(best.params_["mean"])
    by_scipy = logsumexp(np.stack([np.log(weights[k]) + multivariate_normal(means[k], cov[k]).logpdf(X)
                                   for k in range(G)], axis=1), axis=1).sum()
    z_file = folder / f"{name}_z.csv"
    pd.DataFrame(best.predict_proba(X)).to_csv(z_file, index=False)
    script = folder / "check.R"
    script.write_text(R_CHECK)
    out = subprocess.run(["Rscript", str(script), str(folder / f"{name}.csv"), str(z_file), model],
                         check=True, capture_output=True, text=True).stdout.split()
    one_step, converged, bic = (float(v) for v in out[:3])
    return {"case": name, "discrim model": f"{model},{G}",
            "discrim log-lik": float(result.table.loc[result.best_index, "log_likelihood"]),
            "scipy log-lik at discrim's parameters": by_scipy,
            "mclust M-step + E-step from discrim's z": one_step,
            "mclust EM from discrim's z (tol 1e-10)": converged, "mclust BIC of that fit": bic,
            "mclust Mclust() choice": mclust_choice}


def pomegranate_fit(X, covariance_type, weights, means, cov, reps):
    """pomegranate 1.x's GeneralMixtureModel from the given start, SINGLE_ITERS iterations; median seconds."""
    import torch
    from pomegranate.distributions import Normal
    from pomegranate.gmm import GeneralMixtureModel

    Xt = torch.tensor(X, dtype=torch.float64)
    times = []
    for _ in range(reps):
        components = [Normal(means=torch.tensor(m), covs=torch.tensor(c), covariance_type=covariance_type)
                      for m, c in zip(means, cov)]
        model = GeneralMixtureModel(components, priors=torch.tensor(weights), max_iter=SINGLE_ITERS,
                                    tol=float("-inf"), verbose=False)
        t0 = time.perf_counter()
        model.fit(Xt)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), model


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "mclust.md"))
    parser.add_argument("--quick", action="store_true", help="no wine, one timing repetition")
    parser.add_argument("--reps", type=int, default=None, help="timing repetitions (default 3, 1 with --quick)")
    parser.add_argument("--n-init", type=int, nargs="+", default=[1, 3],
                        help="select_mixture's n_init values to run (hierarchical start plus k-means++ restarts)")
    args = parser.parse_args()
    if shutil.which("Rscript") is None:
        sys.exit("Rscript is not on PATH: install r-base-core and r-cran-mclust (see BENCHMARKS.md).")
    log = ProgressLog()
    load_start = os.getloadavg()
    reps = args.reps if args.reps is not None else (1 if args.quick else 3)
    cases = load_cases(args.quick)
    rng = np.random.default_rng(1)
    grid_rows = np.concatenate([rng.normal(c, s, (n, 3)) for c, s, n in (([0] * 3, 1.0, 4000), ([4, 0, 2], 0.7, 3500),
                                                                         ([0, 4, 0], 1.3, 2500))])
    large = np.concatenate([rng.normal(c, s, (n, 4)) for c, s, n in (([0] * 4, 1.0, 80000), ([4, 0, 2, 0], 0.7, 70000),
                                                                     ([0, 4, 0, 3], 1.3, 50000))])
    rng.shuffle(large)  # mclust's subset is the first 2,000 rows
    folder = Path(tempfile.mkdtemp(prefix="discrim-mclust-"))
    for name, X in cases.items():
        pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).to_csv(folder / f"{name}.csv", index=False)
    pd.DataFrame(grid_rows, columns=[f"x{j}" for j in range(3)]).to_csv(folder / "grid.csv", index=False)
    pd.DataFrame(large, columns=[f"x{j}" for j in range(4)]).to_csv(folder / "large.csv", index=False)
    run_r(folder, list(cases), reps, log)
    selected = pd.read_csv(folder / "mclust_selected.csv").set_index("case")

    agreement, choice, checks = [], [], []
    for name, X in cases.items():
        t0 = time.perf_counter()
        table = bic_agreement(name, X, folder)
        log(f"{name}: BIC table from mclust's starts in {time.perf_counter() - t0:.0f} s, "
            f"largest relative difference {table['rel'].max():.1e}")
        agreement.append(table)
        ref = selected.loc[name]
        # what mclust's BIC table (from its starts, tight tolerance) chooses, and what discrim's from the same starts
        finite = table.dropna(subset=["mclust"])
        r_best = finite.loc[finite["mclust"].idxmax()]
        d_best = table.dropna(subset=["discrim"]).loc[table["discrim"].idxmax()]
        row = {"case": name, "n": X.shape[0], "d": X.shape[1],
               "mclust Mclust()": f"{ref['model']},{int(ref['G'])}", "mclust BIC": ref["bic"],
               "mclust grid (s)": ref["grid_s"]}
        for n_init in args.n_init:
            grid_times = []
            for _ in range(reps):
                seconds, result = selection(X, n_init)
                grid_times.append(seconds)
            best = result.best_params
            chosen = f"{best['family']},{best['n_components']}"
            row[f"discrim n_init={n_init}"] = chosen + (" (same)" if chosen == row["mclust Mclust()"] else "")
            row[f"BIC n_init={n_init}"] = -float(result.table.loc[result.best_index, "bic"])
            row[f"grid (s) n_init={n_init}"] = float(np.median(grid_times))
            log(f"{name}: mclust {row['mclust Mclust()']} ({ref['grid_s']:.2f} s); discrim n_init={n_init} {chosen} "
                f"({np.median(grid_times):.2f} s)")
            if n_init == args.n_init[0] and chosen != row["mclust Mclust()"]:
                check = selection_check(name, X, result, f"{row['mclust Mclust()']} (BIC {ref['bic']:.2f})", folder)
                if check is not None:
                    checks.append(check)
        first = args.n_init[0]
        row[f"ratio mclust / discrim n_init={first}"] = ref["grid_s"] / row[f"grid (s) n_init={first}"]
        row["from mclust's starts: mclust / discrim"] = (f"{r_best['model']},{int(r_best['G'])} / "
                                                         f"{d_best['model']},{int(d_best['G'])}")
        choice.append(row)
    agreement = pd.concat(agreement, ignore_index=True)

    # the whole grid on 10,000 rows: mclust's Mclust against select_mixture, each from its own start
    mclust_grid = pd.read_csv(folder / "mclust_grid.csv").iloc[0]
    grid_times = []
    for _ in range(reps):
        seconds, result = selection(grid_rows)
        grid_times.append(seconds)
    big_grid = {"rows x features": f"{grid_rows.shape[0]:,} x {grid_rows.shape[1]}",
                "mclust Mclust()": f"{mclust_grid['model']},{int(mclust_grid['G'])}",
                "mclust BIC": mclust_grid["bic"], "mclust grid (s)": mclust_grid["grid_s"],
                "discrim select_mixture": f"{result.best_params['family']},{result.best_params['n_components']}",
                "discrim BIC": -float(result.table.loc[result.best_index, "bic"]),
                "discrim grid (s)": float(np.median(grid_times)),
                "ratio": mclust_grid["grid_s"] / float(np.median(grid_times))}
    log(f"grid on {grid_rows.shape[0]} rows: mclust {mclust_grid['grid_s']:.2f} s, discrim {np.median(grid_times):.2f} s")

    # single fits on 200,000 rows from mclust's start, SINGLE_ITERS EM iterations on every side
    mclust_single = pd.read_csv(folder / "mclust_single.csv").set_index("model")
    singles = []
    for model, pg_type in (("VVV", "full"), ("VVI", "diag")):
        start = pd.read_csv(folder / f"start_{model}.csv").to_numpy()
        d = large.shape[1]
        weights, means, sigma = start[:, 0], start[:, 1 : 1 + d], start[:, 1 + d :].reshape(-1, d, d)
        cov = sigma if model == "VVV" else np.diagonal(sigma, axis1=1, axis2=2).copy()
        mclust_iters = int(mclust_single.loc[model, "n_iter"])
        row = {"model": model, "mclust em (s)": mclust_single.loc[model, "fit_s"], "mclust iterations": mclust_iters,
               "mclust loglik": mclust_single.loc[model, "loglik"]}
        for threads in (1, None):
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                fm = FiniteMixture(Gaussian(model, reg_covar=0.0), 3, params_init={"mean": means, "covariance": cov},
                                   weights_init=weights, tol=0.0, max_iter=SINGLE_ITERS, n_threads=threads).fit(large)
                times.append(time.perf_counter() - t0)
            label = "discrim 1 thread" if threads == 1 else "discrim 2 threads"
            row[f"{label} (s)"] = float(np.median(times))
        row["discrim iterations"] = int(fm.n_iter_)
        row["discrim loglik"] = fm.score(large) * large.shape[0]
        try:
            seconds, pg = pomegranate_fit(large, pg_type, weights, means, cov, reps)
            import torch

            row["pomegranate (s)"] = seconds
            row["pomegranate loglik"] = float(pg.log_probability(torch.tensor(large)).sum())
        except ImportError:
            row["pomegranate (s)"] = row["pomegranate loglik"] = np.nan
        # per iteration: mclust's em stops before SINGLE_ITERS once its log-likelihood no longer rises
        per_iteration = row["discrim 1 thread (s)"] / row["discrim iterations"]
        row["mclust / discrim 1 thread, per iteration"] = row["mclust em (s)"] / mclust_iters / per_iteration
        row["pomegranate / discrim 2 threads"] = row["pomegranate (s)"] / row["discrim 2 threads (s)"]
        singles.append(row)
        log(f"single {model}: mclust {row['mclust em (s)']:.2f} s, discrim {row['discrim 1 thread (s)']:.2f} s "
            f"(1 thread), {row['discrim 2 threads (s)']:.2f} s (2), pomegranate {row['pomegranate (s)']:.2f} s")
    shutil.rmtree(folder, ignore_errors=True)

    r_version = subprocess.run(["Rscript", "-e", "cat(R.version.string, 'mclust', as.character(packageVersion('mclust')))"],
                               capture_output=True, text=True).stdout.strip()
    try:
        import pomegranate

        pg_version = pomegranate.__version__
    except ImportError:
        pg_version = "not installed"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    if subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "src"], cwd=ROOT).returncode:
        commit += " (with uncommitted changes under src/)"
    differ = agreement[agreement["rel"] > 1e-6]
    both = agreement.dropna(subset=["rel"])
    differ_mclust_step = both[both["rel m_step=mclust"] > 1e-6]
    lines = [
        "# Gaussian mixtures against mclust 6",
        "",
        f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. Commit: {commit}. Machine: {cpu_model()}, "
        f"{platform.machine()}, 2 cores, Python {platform.python_version()}; discrim {discrim.__version__}; "
        f"{r_version}; pomegranate {pg_version}. Load average (1, 5, 15 min) at the start "
        f"{', '.join(f'{v:.1f}' for v in load_start)} and at the end {', '.join(f'{v:.1f}' for v in os.getloadavg())}: "
        "above 2 the machine was shared with other work, absolute times drift and the ratios are indicative.",
        "",
        "mclust's BIC sign throughout (2 l - p log n, larger is better).",
        "",
        "## 1. BIC of every model and G from the same start",
        "",
        f"Cells fitted by both: {len(both)} of {len(agreement)} (mclust reports singular fits as NA; "
        "discrim's failures are cells whose covariance is not positive definite without reg_covar). "
        f"Largest relative difference: {both['rel'].max():.1e}; median {both['rel'].median():.1e}; "
        f"cells above 1e-6: {len(differ)}. With mclust's own M-step for EVE and VVE "
        f"(`Gaussian(model, m_step=\"mclust\")`): largest {both['rel m_step=mclust'].max():.1e}, cells above 1e-6: "
        f"{len(differ_mclust_step)}.",
        "",
    ]
    if len(differ):
        lines += ["Cells that differ by more than 1e-6 with discrim's default (exact) M-step (discrim's BIC larger "
                  "means discrim found the higher likelihood from the same start). VVE: mclust's orientation step "
                  "(Browne and McNicholas's majorise-minimise on sum_k tr(D'W_k D A_k^-1)) leaves out the volumes, "
                  "so its M-step does not maximise the likelihood and its EM follows another path, mostly ending "
                  "lower; `m_step=\"mclust\"` runs that step and reproduces mclust (last two columns). Other models: "
                  "cells with more components than a cluster has rows per feature (wine's 13 features, G >= 5), "
                  "whose scatter matrices are singular, so the orientation of their null space is arbitrary in the "
                  "M-step and the two EM paths part.", "",
                  markdown_table(differ, ".6g"), ""]
    per_model = both.groupby("model")[["rel", "rel m_step=mclust"]].max().reindex(MODELS)
    per_model.columns = ["max rel. difference", "with m_step=mclust"]
    lines += ["Largest relative difference per model, over all cases and G (the second row: EVE and VVE with "
              "mclust's M-step, the other models have one M-step):", "",
              markdown_table(per_model.T, ".1e", index=True), ""]
    lines += ["## 2. Selected model (model, G)", "",
              markdown_table(pd.DataFrame(choice), ".2f"), "",
              "Grid: 14 models x G = 1..9, single-threaded on both sides, each library's defaults "
              "(mclust: tol 1e-5 relative; discrim: tol 1e-3 on the mean log-likelihood, reg_covar 1e-6). discrim "
              f"starts from its own hierarchical agglomeration, plus n_init - 1 k-means++ starts (n_init in {args.n_init}), "
              f"keeping the best. Median of {reps} run(s). 'from mclust's starts' is the best cell of part 1's "
              "tables (mclust's hierarchical partitions, tight tolerance, both sides).", ""]
    if checks:
        lines += ["Where discrim's choice differs from mclust's, discrim's fit checked at its parameters: its "
                  "log-likelihood recomputed by scipy, and mclust started from it (from discrim's responsibilities): "
                  "one mclust M-step and E-step, and mclust's EM to tolerance 1e-10, with mclust's BIC of that "
                  "fit. mclust's VVE M-step stops its inner iterations early and lowers the likelihood from "
                  "discrim's point; its own EM from there still ends above the BIC of its own choice.", "",
                  markdown_table(pd.DataFrame(checks), ".2f"), ""]
    lines += ["## 3. Fit time on larger data", "",
              f"Grid of 14 models x G = 1..9 on {big_grid['rows x features']} simulated rows (three clusters), "
              "each library from its own hierarchical start (both agglomerate 2,000 rows), defaults otherwise:", "",
              markdown_table(pd.DataFrame([big_grid]), ".2f"), "",
              f"Single fits, {large.shape[0]:,} rows x {large.shape[1]} features, G = 3, from mclust's start (the "
              f"M-step of its hierarchical partition of the first 2,000 rows), at most {SINGLE_ITERS} EM iterations "
              "(mclust: tol 0, which stops its em once the log-likelihood no longer rises, so its time is compared "
              f"per iteration; discrim: tol=0, and pomegranate: tol=-inf, both run {SINGLE_ITERS}). mclust is "
              "single-threaded (R's reference BLAS); pomegranate uses torch's threads (2).", "",
              markdown_table(pd.DataFrame(singles), ".3f"), ""]
    lines += ["## Log", "", "```", *log.lines, "```", ""]
    write_results("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
