"""discrim's PrototypeClassifier against the original proset 0.6.1: fit time, test scores, model size.

Usage::

    python benchmarks/prototype.py [--cases iris-2f,wine,...] [--repeat N] [--repeat-small M]
                                   [--threads T] [--output PATH]

Both models are fitted on the same split (``discrim.datasets.load_benchmark(name, random_state=0)``)
with the same hyperparameters, in the same run, once per model seed ``random_state = 0, 1, ...``
(``--repeat`` seeds, ``--repeat-small`` on cases under 1,000 training rows, where one seed's test
log-loss is too noisy to compare). proset runs in its own virtual environment
(``benchmarks/.proset-venv``, created on first use) through a subprocess, timed inside that
subprocess around ``fit`` only. Both sides get the same number of BLAS threads (``--threads``).
The table goes to stdout and to ``benchmarks/results/prototype.md``.
"""

import argparse
import datetime
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import balanced_accuracy_score, log_loss, roc_auc_score

sys.path.append(str(Path(__file__).resolve().parent))  # last: benchmarks/distributed.py must not shadow the package
from _machine import cpu_model  # noqa: E402
from _proset import proset_versions, run_proset  # noqa: E402

CASES = ("iris-2f", "wine", "cancer", "digits", "checker", "xor-6f")
RESULTS = Path(__file__).resolve().parent / "results" / "prototype.md"

# discrim parameter -> (proset 0.6.1 parameter, value): one table, so both sides get the same values.
# proset's alpha_v / alpha_w are the L1 share of the penalty (proset/objectives/np_objective.py:
# lambda_v * sum(alpha_v * v + (1 - alpha_v) / 2 * v**2)), i.e. exactly discrim's l1_ratio_*; the
# seed's alpha is the L2 share, 1 - l1_ratio.
HYPERPARAMETERS = {
    "n_batches": ("n_iter", 1),
    "n_candidates": ("num_candidates", 1000),
    "max_fraction": ("max_fraction", 0.5),
    "alpha_feature": ("lambda_v", 1e-3),
    "l1_ratio_feature": ("alpha_v", 0.05),  # proset's alpha_v: the L1 share
    "alpha_prototype": ("lambda_w", 1e-8),
    "l1_ratio_prototype": ("alpha_w", 0.05),
}
GOAL_SPEEDUP = 5.0  # on cases with at least GOAL_ROWS training rows; no slower (ratio >= 1) below
GOAL_ROWS = 1000
GOAL_LOGLOSS_SLACK = 0.02


def _scores(y_test, proba, classes):
    """Test log-loss, ROC-AUC (one-vs-rest macro for K > 2) and balanced accuracy."""
    proba = np.asarray(proba, dtype=np.float64)
    proba = proba / proba.sum(axis=1, keepdims=True)  # proset computes in float32
    classes = np.asarray(classes)
    if classes.shape[0] == 2:
        auc = roc_auc_score(y_test == classes[1], proba[:, 1])
    else:
        auc = roc_auc_score(y_test, proba, multi_class="ovr", average="macro", labels=classes)
    return {
        "log_loss": log_loss(y_test, proba, labels=classes),
        "roc_auc": auc,
        "balanced_accuracy": balanced_accuracy_score(y_test, classes[np.argmax(proba, axis=1)]),
    }


def _fit_discrim(X_train, y_train, X_test, seed, threads, dtype):
    from threadpoolctl import threadpool_limits

    from discrim.prototype import PrototypeClassifier

    params = {name: value for name, (_, value) in HYPERPARAMETERS.items()}
    model = PrototypeClassifier(**params, random_state=seed, dtype=dtype)
    with threadpool_limits(limits=threads):
        start = time.perf_counter()
        model.fit(X_train, y_train)
        fit_time = time.perf_counter() - start
    proba = model.predict_proba(X_test)
    active = set()
    for batch in model.batches_:
        active.update(np.asarray(batch.feature_index)[np.asarray(batch.feature_weights) > 0].tolist())
    return {
        "fit_time": fit_time,
        "proba": proba,
        "classes": model.classes_,
        "active_features": sorted(active),
        "n_prototypes": int(sum(len(batch.target) for batch in model.batches_)),
        "n_iter": int(sum(model.n_iter_)),
    }


def _fit_proset(X_train, y_train, X_test, seed, threads):
    options = {"model": {**{proset_name: value for proset_name, value in HYPERPARAMETERS.values()}, "random_state": seed}}
    result = run_proset("fit", X_train, y_train, X_test, options, threads=threads)
    result["n_iter"] = int(sum(call["nit"] for call in result["solver"]))
    return result


def _summary(results):
    return {
        **{key: statistics.fmean(r[key] for r in results) for key in ("log_loss", "roc_auc", "balanced_accuracy")},
        "log_losses": [r["log_loss"] for r in results],
        "fit_time": statistics.median(r["fit_time"] for r in results),
        "fit_times": [r["fit_time"] for r in results],
        "active_features": statistics.fmean(len(r["active_features"]) for r in results),
        "n_prototypes": statistics.fmean(r["n_prototypes"] for r in results),
        "n_iter": statistics.fmean(r["n_iter"] for r in results),
        "time_per_iter": statistics.median(r["fit_time"] / max(r["n_iter"], 1) for r in results),
    }


def run_case(name, n_seeds, threads, dtypes=("float64",)):
    """Fit both models once per seed on one case: mean scores, median fit times.

    Returns one row per discrim dtype, each compared with the same proset fits.
    """
    from discrim.datasets import load_benchmark

    X_train, X_test, y_train, y_test = load_benchmark(name, random_state=0)
    runs = {("proset", None): [], **{("discrim", dt): [] for dt in dtypes}}
    for seed in range(n_seeds):
        # alternate the order so that drifting load on a shared machine hits both sides alike
        order = list(runs) if seed % 2 == 0 else list(runs)[::-1]
        for side, dtype in order:
            if side == "discrim":
                result = _fit_discrim(X_train, y_train, X_test, seed, threads, dtype)
            else:
                result = _fit_proset(X_train, y_train, X_test, seed, threads)
            result.update(_scores(y_test, result["proba"], result["classes"]))
            runs[side, dtype].append(result)
    proset = _summary(runs["proset", None])
    rows = []
    for dtype in dtypes:
        row = {"case": name, "dtype": dtype, "n_train": X_train.shape[0], "n_features": X_train.shape[1],
               "n_seeds": n_seeds, "discrim": _summary(runs["discrim", dtype]), "proset": proset}
        row["ratio"] = proset["fit_time"] / row["discrim"]["fit_time"]
        row["speed_goal"] = GOAL_SPEEDUP if row["n_train"] >= GOAL_ROWS else 1.0
        row["speed_met"] = row["ratio"] >= row["speed_goal"]
        row["loss_met"] = row["discrim"]["log_loss"] <= proset["log_loss"] + GOAL_LOGLOSS_SLACK
        rows.append(row)
    return rows


def _table(rows):
    header = (
        "| case | discrim dtype | train rows x features | fit time discrim | fit time proset | ratio (proset / discrim) | goal "
        "| log-loss discrim / proset | ROC-AUC discrim / proset | bal. acc. discrim / proset "
        "| active features discrim / proset | prototypes discrim / proset "
        "| L-BFGS-B iterations discrim / proset | ms per iteration discrim / proset | seeds |"
    )
    lines = [header, "|" + " --- |" * (header.count("|") - 1)]
    for row in rows:
        d, p = row["discrim"], row["proset"]
        goal = f">= {row['speed_goal']:g}x: {'met' if row['speed_met'] else 'MISSED'}; " + (
            "log-loss met" if row["loss_met"] else "log-loss MISSED"
        )
        per_iter = [1e3 * s["time_per_iter"] for s in (d, p)]
        lines.append(
            f"| {row['case']} | {row['dtype']} | {row['n_train']:,} x {row['n_features']} | {d['fit_time']:.3g} s "
            f"| {p['fit_time']:.3g} s | {row['ratio']:.1f} | {goal} "
            f"| {d['log_loss']:.3f} / {p['log_loss']:.3f} | {d['roc_auc']:.3f} / {p['roc_auc']:.3f} "
            f"| {d['balanced_accuracy']:.3f} / {p['balanced_accuracy']:.3f} "
            f"| {d['active_features']:.3g} / {p['active_features']:.3g} "
            f"| {d['n_prototypes']:.4g} / {p['n_prototypes']:.4g} "
            f"| {d['n_iter']:.4g} / {p['n_iter']:.4g} | {per_iter[0]:.2f} / {per_iter[1]:.2f} | {row['n_seeds']} |"
        )
    return "\n".join(lines)


def _environment(load_before, load_after, threads):
    import numpy
    import scipy
    import sklearn

    import discrim

    proset = proset_versions() or {}
    return "\n".join([
        f"- date (UTC): {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M}",
        f"- machine: {os.cpu_count()} cores (nproc), {cpu_model()}, {platform.system()} {platform.release()}",
        f"- load average (1 min) before / after: {load_before:.2f} / {load_after:.2f}",
        f"- discrim side: python {platform.python_version()}, discrim {discrim.__version__}, numpy {numpy.__version__}, "
        f"scipy {scipy.__version__}, scikit-learn {sklearn.__version__}",
        f"- proset side (own venv): proset {proset.get('proset', '?')}, numpy {proset.get('numpy', '?')}, "
        f"scikit-learn {proset.get('scikit-learn', '?')}",
        f"- BLAS threads per side: {threads} (threadpoolctl for discrim; OPENBLAS/OMP/MKL_NUM_THREADS for proset)",
        "- per case one fit per side and model seed (random_state = 0, 1, ...; column `seeds`): fit time = "
        "median over seeds, scores, sizes and iterations = mean over seeds; same split for every seed",
    ])


def _mapping():
    lines = ["| discrim | proset 0.6.1 | value | seed (chapter 'Prototype set classifier') |", "| --- | --- | --- | --- |"]
    seed = {
        "n_batches": "B", "n_candidates": "M", "max_fraction": "eta", "alpha_feature": "lambda_v",
        "l1_ratio_feature": "1 - alpha_v (the seed's alpha_v is the L2 share)", "alpha_prototype": "lambda_w",
        "l1_ratio_prototype": "1 - alpha_w (L2 share in the seed)",
    }
    for name, (proset_name, value) in HYPERPARAMETERS.items():
        lines.append(f"| {name} | {proset_name} | {value:g} | {seed[name]} |")
    lines.append("| random_state | random_state | seed 0, 1, ... | - |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    parser.add_argument("--repeat", type=int, default=1, help="model seeds per case")
    parser.add_argument("--repeat-small", type=int, default=10,
                        help=f"model seeds on cases with fewer than {GOAL_ROWS:,} training rows")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads for each side")
    parser.add_argument("--dtypes", default="float64",
                        help="comma-separated discrim dtypes, one row each (proset always computes in float32)")
    parser.add_argument("--output", default=str(RESULTS), help="markdown file to write; '-' for none")
    parser.add_argument("--note", default="", help="extra line for the results file (e.g. machine sharing)")
    args = parser.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    load_before = os.getloadavg()[0]
    rows = []
    for name in cases:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        from discrim.datasets import load_benchmark

        n_train = load_benchmark(name, random_state=0)[0].shape[0]
        dtypes = tuple(d.strip() for d in args.dtypes.split(",") if d.strip())
        new = run_case(name, args.repeat if n_train >= GOAL_ROWS else args.repeat_small, args.threads, dtypes)
        rows.extend(new)
        print("\n".join(_table(new).splitlines()[2:]), file=sys.stderr, flush=True)
    load_after = os.getloadavg()[0]
    table = _table(rows)
    print(table)
    missed = [f"{r['case']} ({r['dtype']})" for r in rows if not (r["speed_met"] and r["loss_met"])]
    summary = "All goals met." if not missed else "Goals missed on: " + ", ".join(missed) + "."
    print(summary)
    if args.output != "-":
        text = "\n\n".join([
            "# PrototypeClassifier against the original proset 0.6.1",
            "Produced by `python benchmarks/prototype.py "
            + shlex.join(argv if argv is not None else sys.argv[1:]) + "`. "
            "Fits per side with the hyperparameters below on each case's first split "
            "(`load_benchmark(name, random_state=0)`: 70/30 stratified, scaled on the training part). "
            "Ratio = proset fit time / discrim fit time (above 1: discrim faster). Goal: ratio >= "
            f"{GOAL_SPEEDUP:g} on cases with >= {GOAL_ROWS:,} training rows, >= 1 below; test log-loss "
            f"<= proset's + {GOAL_LOGLOSS_SLACK}.",
            _environment(load_before, load_after, args.threads) + ("\n- " + args.note if args.note else ""),
            "## Hyperparameters\n\n" + _mapping() + "\n\nproset 0.6.1's penalty is `lambda_v * sum(alpha_v * v + "
            "(1 - alpha_v) / 2 * v**2)` (proset/objectives/np_objective.py, `_evaluate_penalty`): its `alpha_v` is the "
            "L1 share, equal to discrim's `l1_ratio_feature`; likewise for the prototype weights.",
            "## Results\n\n" + table + "\n\n" + summary,
            "## Notes\n\n"
            "- proset computes in float32 (its `shared.FLOAT_TYPE`); discrim in the dtype of the row's "
            "`discrim dtype` column (its default is float64). Probabilities are renormalised per row "
            "before scoring.\n"
            "- Candidate sampling: proset 0.6.1 groups each class's samples into its worst-predicted "
            "`beta = 10 %` and the rest; discrim follows the seed's bins (correctly / incorrectly classified per "
            "class). Both then spread the candidates evenly over the groups with the same `max_fraction` rule. "
            "With one batch (the model before it is the marginals) both have one non-empty group per class, "
            "so they draw alike; the draws themselves differ (different random generators).\n"
            "- `ms per iteration` = fit time / L-BFGS-B iterations (all objective evaluations of an iteration "
            "included). The ratio combines the cost per iteration with the iteration count: discrim runs "
            "L-BFGS-B on rescaled variables and needs far fewer iterations (see the iterations column).\n"
            "- proset stops L-BFGS-B on `factr = 1e7` or `pgtol = 1e-5`; discrim on its own `tol` (see "
            "PrototypeClassifier's docstring).",
        ]) + "\n"
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text)
        print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
