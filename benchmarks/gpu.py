"""discrim on a device (issue 20): EM, LDA/QDA and the prototype search, beside the GPU peers.

Three parts, each timed on one device (``--device cuda`` on a GPU machine; ``cpu`` otherwise):

1. **EM for Gaussian mixtures** ("full" and "diag", K = 16, D = 50, float32): seconds per EM
   iteration of ``FiniteMixture(device=...)`` beside scikit-learn's ``GaussianMixture`` with
   ``array_api_dispatch`` on the same torch tensors and pomegranate 1.x's ``GeneralMixtureModel``
   on the same device, all from the same weights, means and covariances. Time per iteration is
   ``(t(a + b) - t(a)) / b`` of fits with ``a`` and ``a + b`` iterations (tol disabled), so that
   set-up and initialisation cancel on every side. Each peer's final parameters are scored on
   the data, and must agree with discrim's log-likelihood after the same number of iterations.
   The matrix-multiply floor is the time the device's own float32 GEMM needs for the E-step's
   flops (``4 N K D^2`` for "full": the log-densities' and the scatter's products).
2. **LDA and QDA**: fit and ``predict_proba`` on the device beside numpy on the host.
3. **PrototypeClassifier** fit and the full ``PrototypeClassifierCV`` search on an MNIST-shaped
   problem (60,000 x 331, 10 classes; the original proset needed 9 hours on a P100 for MNIST).

With numpy on the host beside each device figure. Without CUDA the script runs the same code on
the torch CPU device at sizes a CPU finishes (``--quick`` smaller still), and the results say that
the GPU figures are missing.

Peers (not project dependencies): ``pip install torch==2.13.0 pomegranate==1.1.2`` (pomegranate
after torch, so that it keeps that torch). scikit-learn's array API needs ``SCIPY_ARRAY_API=1``
before scipy is imported: this script sets it.

Run ``python benchmarks/gpu.py`` (writes ``benchmarks/results/gpu.md``).
"""

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # scikit-learn's array API dispatch needs it first

import argparse  # noqa: E402
import datetime  # noqa: E402
import logging  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
import torch  # noqa: E402

sys.path.append(str(Path(__file__).parent))  # appended: a benchmark module must never shadow a package

from _machine import ProgressLog, cpu_model, write_results  # noqa: E402

import discrim  # noqa: E402
from discrim.discriminant import LinearDiscriminant, QuadraticDiscriminant  # noqa: E402
from discrim.distributions import Gaussian  # noqa: E402
from discrim.mixture import FiniteMixture  # noqa: E402
from discrim.model_selection import PrototypeClassifierCV  # noqa: E402
from discrim.prototype import PrototypeClassifier  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "gpu.md"
K, D = 16, 50


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, device):
    """(result, seconds) of ``fn()``, with the device's queue drained before and after."""
    sync(device)
    start = time.perf_counter()
    out = fn()
    sync(device)
    return out, time.perf_counter() - start


# --- 1. EM ------------------------------------------------------------------------------------


def mixture_data(n, device, seed=0):
    """K clusters in D dimensions, float32, generated on ``device`` (no host copy at 1e7 rows)."""
    g = torch.Generator(device=device).manual_seed(seed)
    centers = 3.0 * torch.randn(K, D, generator=g, device=device)
    scales = 0.5 + torch.rand(K, D, generator=g, device=device)
    labels = torch.randint(0, K, (n,), generator=g, device=device)
    X = torch.randn(n, D, generator=g, device=device)
    X *= scales[labels]
    X += centers[labels]
    return X


def start_for(ctype, X):
    """Common start: the parameters after k-means++ seeding on the first 100,000 rows (float64)."""
    sample = X[:100_000].double().cpu().numpy()
    start = FiniteMixture(Gaussian(ctype), K, max_iter=0, random_state=0).fit(sample)
    return start.weights_, start.params_["mean"], start.params_["covariance"]


def per_iteration(fit, a, b, device):
    """Seconds per iteration from fits of ``a`` and ``a + b`` iterations, and the longer fit's model."""
    _, t_a = timed(lambda: fit(a), device)
    model, t_ab = timed(lambda: fit(a + b), device)
    return (t_ab - t_a) / b, model


def discrim_em(X, ctype, start, device):
    w0, mean0, cov0 = start

    def fit(iters):
        return FiniteMixture(Gaussian(ctype, reg_covar=1e-6), K, weights_init=w0,
                             params_init={"mean": mean0, "covariance": cov0}, tol=0.0, max_iter=iters,
                             dtype="float32", device=device).fit(X)

    return fit


def sklearn_em(X, ctype, start):
    from sklearn.mixture import GaussianMixture

    w0, mean0, cov0 = start
    precisions = np.linalg.inv(cov0) if ctype == "full" else 1.0 / cov0

    def fit(iters):
        with sklearn.config_context(array_api_dispatch=True), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            as_x = lambda a: torch.as_tensor(a, dtype=X.dtype, device=X.device)  # noqa: E731
            # init_params is ignored for the parameters given; random_from_data draws K rows only
            model = GaussianMixture(K, covariance_type=ctype, tol=0.0, max_iter=iters, reg_covar=1e-6,
                                    weights_init=as_x(w0), means_init=as_x(mean0), precisions_init=as_x(precisions),
                                    init_params="random_from_data", random_state=0)
            return model.fit(X)

    return fit


def pomegranate_em(X, ctype, start):
    try:
        from pomegranate.distributions import Normal
        from pomegranate.gmm import GeneralMixtureModel
    except ImportError:
        return None
    w0, mean0, cov0 = start

    def fit(iters):
        parts = [Normal(means=torch.as_tensor(mean0[k], dtype=X.dtype),
                        covs=torch.as_tensor(cov0[k], dtype=X.dtype), covariance_type=ctype) for k in range(K)]
        model = GeneralMixtureModel(parts, priors=torch.as_tensor(w0, dtype=X.dtype), max_iter=iters,
                                    tol=-float("inf")).to(X.device)
        return model.fit(X)

    return fit


def mean_log_likelihood(X, weights, means, covariances, ctype):
    """Mean log-likelihood of X under given parameters, by discrim's scoring in float64 on X's device."""
    if ctype == "full":  # a peer's float32 matrices, symmetric to float32's rounding only
        covariances = 0.5 * (covariances + np.swapaxes(covariances, 1, 2))
    model = FiniteMixture(Gaussian(ctype, reg_covar=0.0), K, weights_init=weights, max_iter=0,
                          params_init={"mean": means, "covariance": covariances}, device=X.device)
    return model.fit(X[:1000].double()).score(X.double())


def matmul_floor(ctype, n, device):
    """Seconds the device's float32 GEMMs of one E-step over n rows need, without anything else.

    The products of discrim's E-step, with preallocated outputs: "full" forms ``(x - mu_k) P_k``
    for all k in one (K D x (D + 1)) @ ((D + 1) x n) product and the scatter ``z_k z_k'`` per
    component ((D x n) @ (n x D)); "diag" forms (K x D) @ (D x n) for the log-densities and for the
    two moments. Timed on a block of rows and scaled to n: 4 N K D^2 flops ("full").

    Returns
    -------
    seconds : float
    rate : float
        The flop rate reached (flop/s).
    """
    rows = min(n, 1 << 17)
    x_t = torch.randn(D + 1, rows, device=device)
    if ctype == "full":
        a = torch.randn(K * D, D + 1, device=device)
        out, gram = torch.empty(K * D, rows, device=device), torch.empty(D, D, device=device)
        z = x_t[:D]

        def products():
            torch.matmul(a, x_t, out=out)
            for _ in range(K):
                torch.matmul(z, z.T, out=gram)

        flops = 2.0 * rows * K * D * (D + 1) + 2.0 * K * rows * D * D
    else:
        a = torch.randn(K, D, device=device)
        out, z = torch.empty(K, rows, device=device), x_t[:D]
        resp = torch.rand(K, rows, device=device)
        moments = torch.empty(K, D, device=device)

        def products():
            torch.matmul(a, z, out=out)
            torch.matmul(resp, z.T, out=moments)
            torch.matmul(resp, z.T, out=moments)

        flops = 3 * 2.0 * rows * K * D
    _, once = timed(products, device)  # warm-up, and the repetitions that take about a second
    reps = int(np.clip(1.0 / max(once, 1e-6), 3, 200))
    _, seconds = timed(lambda: [products() for _ in range(reps)], device)
    per_block = seconds / reps
    return per_block * n / rows, flops / per_block


def em_part(n, device, a, b, log, host=True):
    rows = []
    X = mixture_data(n, device)
    # numpy beside it where the host holds it (and unless --skip-host)
    X_host = X.cpu().numpy() if host and n * D * 4 <= 2**31 else None
    for ctype in ("full", "diag"):
        start = start_for(ctype, X)
        log(f"EM {ctype}: discrim on {device}")
        t_discrim, model = per_iteration(discrim_em(X, ctype, start, device), a, b, device)
        ll_discrim = float(model.lower_bounds_[-1])
        floor, rate = matmul_floor(ctype, n, device)
        row = dict(ctype=ctype, n=n, discrim=t_discrim, ll=ll_discrim, floor=floor, rate=rate)
        if X_host is not None:
            log(f"EM {ctype}: discrim with numpy")
            row["numpy"], _ = per_iteration(discrim_em(X_host, ctype, start, None), a, b, torch.device("cpu"))
        log(f"EM {ctype}: scikit-learn array API")
        row["sklearn"], sk = per_iteration(sklearn_em(X, ctype, start), a, b, device)
        sk_cov = sk.covariances_ if ctype == "full" else sk.covariances_
        row["ll_sklearn"] = mean_log_likelihood(X, *(torch.as_tensor(v).double().cpu().numpy() for v in (
            sk.weights_, sk.means_, sk_cov)), ctype)
        pom = pomegranate_em(X, ctype, start)
        if pom is not None:
            log(f"EM {ctype}: pomegranate")
            row["pomegranate"], pm = per_iteration(pom, a, b, device)
            covs = torch.stack([d.covs for d in pm.distributions]).double().cpu().numpy()
            means = torch.stack([d.means for d in pm.distributions]).double().cpu().numpy()
            priors = pm.priors.double().cpu().numpy()
            row["ll_pomegranate"] = mean_log_likelihood(X, priors / priors.sum(), means, covs, ctype)
        rows.append(row)
    return rows


# --- 2. LDA and QDA ---------------------------------------------------------------------------


def rule_part(n, d, device, log, host=True):
    g = torch.Generator(device=device).manual_seed(1)
    y = torch.randint(0, 10, (n,), generator=g, device=device)
    X = torch.randn(n, d, generator=g, device=device, dtype=torch.float64)
    X[:, :10] += torch.nn.functional.one_hot(y, 10).double()
    rows = []
    X_host, y_host = (X.cpu().numpy(), y.cpu().numpy()) if host and n * d * 8 <= 2**33 else (None, None)
    for rule in (LinearDiscriminant, QuadraticDiscriminant):
        log(f"{rule.__name__} on {device}")
        model, fit_s = timed(lambda: rule().fit(X, y), device)
        proba, proba_s = timed(lambda: model.predict_proba(X), device)
        row = dict(rule=rule.__name__, n=n, d=d, fit=fit_s, proba=proba_s)
        if X_host is not None:
            log(f"{rule.__name__} with numpy")
            host_model, row["fit_numpy"] = timed(lambda: rule().fit(X_host, y_host), torch.device("cpu"))
            host_proba, row["proba_numpy"] = timed(lambda: host_model.predict_proba(X_host), torch.device("cpu"))
            row["max_diff"] = float(np.max(np.abs(proba.cpu().numpy() - host_proba)))
        rows.append(row)
    return rows


# --- 3. the prototype set classifier --------------------------------------------------------


def mnist_shaped(n, n_test, d=331, n_classes=10, seed=2):
    """Standardised rows in d dimensions, 10 classes that differ in 40 informative features.

    Returns (X, y, X_test, y_test): ``n`` training and ``n_test`` test rows of the same classes.
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n + n_test)
    X = rng.normal(size=(n + n_test, d))
    X[:, :40] += rng.normal(scale=0.8, size=(n_classes, 40))[y]
    X = (X - X[:n].mean(0)) / X[:n].std(0)
    return X[:n], y[:n], X[n:], y[n:]


def prototype_part(n, device, search, log):
    X, y, X_test, y_test = mnist_shaped(n, n // 6)
    rows = []
    for where, kwargs in ((str(device), {"device": device}), ("numpy", {})):
        if where == "numpy" and n > 20_000:
            continue  # the host's numpy figures at the CPU size only
        log(f"PrototypeClassifier on {where}")
        model, fit_s = timed(lambda: PrototypeClassifier(n_batches=1, random_state=0, **kwargs).fit(X, y), device)
        row = dict(what="PrototypeClassifier fit (1 batch, 1000 candidates)", where=where, n=n, seconds=fit_s,
                   accuracy=float(np.mean(model.predict(X_test) == y_test)))
        rows.append(row)
        if search is not None:
            log(f"PrototypeClassifierCV on {where}")
            cv, cv_s = timed(lambda: PrototypeClassifierCV(random_state=0, **search, **kwargs).fit(X, y), device)
            rows.append(dict(what=f"PrototypeClassifierCV search ({_describe(search)})", where=where, n=n,
                             seconds=cv_s, accuracy=float(np.mean(cv.predict(X_test) == y_test))))
    return rows


def _describe(search):
    grid = search.get("alpha_feature_grid")
    alphas = 11 if grid is None else len(grid)
    return f"{alphas} alphas x {search.get('max_batches', 10)} batches x {search.get('cv', 5)} folds + refit"


# --- report ---------------------------------------------------------------------------------


def _ratio(a, b):
    return f"{a / b:.1f}x" if a and b else "-"


def report(args, device, em_rows, rule_rows, proto_rows, started, log_lines):
    gpu = device.type == "cuda"
    name = torch.cuda.get_device_name(device) if gpu else f"torch CPU ({cpu_model()})"
    lines = ["# discrim on a device: EM, LDA/QDA and the prototype search beside the GPU peers", ""]
    command = " ".join(["python benchmarks/gpu.py", *sys.argv[1:]])
    lines += [f"Command: `{command}`", ""]
    lines += [
        f"- Date: {started:%Y-%m-%d %H:%M} UTC",
        f"- Device: {name}",
        f"- Host: {cpu_model()}, {os.cpu_count()} logical cores; load average before "
        f"{args.load_before}, after {'%.1f %.1f %.1f' % os.getloadavg()} (1, 5, 15 min)",
        f"- Software: Python {platform.python_version()}, discrim {discrim.__version__}, torch {torch.__version__}, "
        f"scikit-learn {sklearn.__version__}, pomegranate {_version('pomegranate')}",
        "",
    ]
    if not gpu:
        lines += ["**The GPU figures are missing: this run had no CUDA device** (the task was not lent a GPU "
                  "machine). The script is ready for one (`python benchmarks/gpu.py --device cuda` runs the "
                  "issue's sizes: N = 1e7 for EM, 1e7 x 100 for LDA/QDA, 60,000 x 331 for the search). Below, "
                  "the same code on the torch CPU device at sizes a 2-core CPU finishes, beside numpy on the "
                  "host: these are not GPU results.", ""]
    lines += [f"## 1. EM, K = {K}, D = {D}, float32", "",
              "Seconds per EM iteration (E-step and M-step), from fits of "
              f"{args.warmup_iters} and {args.warmup_iters + args.iters} iterations from the same start. "
              "Log-likelihoods: each peer's final parameters scored by discrim in float64 on the data, beside "
              "discrim's own after the same iterations.", "",
              "| covariance | N | discrim (device) | numpy (host) | scikit-learn array API | pomegranate | "
              "vs scikit-learn | vs pomegranate | GEMM floor | discrim / floor | mean log-lik. (discrim) | "
              "rel. diff scikit-learn | rel. diff pomegranate |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in em_rows:
        rel = {k: (f"{abs(r[k] - r['ll']) / abs(r['ll']):.1e}" if k in r else "-") for k in ("ll_sklearn", "ll_pomegranate")}
        lines.append(
            f"| {r['ctype']} | {r['n']:,} | {r['discrim']:.4f} | {_fmt(r.get('numpy'))} | {_fmt(r.get('sklearn'))} | "
            f"{_fmt(r.get('pomegranate'))} | {_ratio(r.get('sklearn'), r['discrim'])} | "
            f"{_ratio(r.get('pomegranate'), r['discrim'])} | {r['floor']:.4f} | {r['discrim'] / r['floor']:.1f}x | "
            f"{r['ll']:.8f} | {rel['ll_sklearn']} | {rel['ll_pomegranate']} |")
    if em_rows:
        lines += ["", "GEMM floor: the time of the E-step's matrix products alone (float32, preallocated "
                      "outputs, on a block of 131,072 rows scaled to N): for \"full\" 4 N K D^2 flops at "
                      f"{em_rows[0]['rate'] / 1e12:.2f} TFLOP/s reached here."]
    lines += ["", "## 2. LDA and QDA (float64)", "",
              "| rule | N x D | fit (device) | predict_proba (device) | fit (numpy) | predict_proba (numpy) | "
              "max |proba difference| |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rule_rows:
        lines.append(f"| {r['rule']} | {r['n']:,} x {r['d']} | {r['fit']:.2f} s | {r['proba']:.2f} s | "
                     f"{_fmt(r.get('fit_numpy'), ' s', 2)} | {_fmt(r.get('proba_numpy'), ' s', 2)} | "
                     f"{r.get('max_diff', float('nan')):.1e} |")
    lines += ["", "## 3. Prototype set classifier, MNIST-shaped data (331 features, 10 classes)", "",
              "| what | where | N | seconds | test accuracy |", "| --- | --- | --- | --- | --- |"]
    for r in proto_rows:
        lines.append(f"| {r['what']} | {r['where']} | {r['n']:,} | {r['seconds']:.1f} | {r['accuracy']:.4f} |")
    lines += ["", "## Log", "", "```", *log_lines, "```", ""]
    return "\n".join(lines)


def _fmt(value, unit="", digits=4):
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def _version(name):
    try:
        return __import__(name).__version__
    except ImportError:
        return "not installed"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="Small sizes: a smoke test of the script.")
    parser.add_argument("--iters", type=int, default=5, help="Timed EM iterations (beyond the warm-up fit).")
    parser.add_argument("--warmup-iters", type=int, default=1)
    parser.add_argument("--skip-search", action="store_true", help="Leave out the PrototypeClassifierCV search.")
    parser.add_argument("--skip-host", action="store_true",
                        help="Leave out numpy on the host beside the device (minutes at the GPU sizes).")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    args.load_before = "%.1f %.1f %.1f" % os.getloadavg()
    device = torch.device(args.device)
    gpu = device.type == "cuda"
    started = datetime.datetime.now(datetime.timezone.utc)
    if gpu:
        sizes = dict(em=10_000_000, rule=(10_000_000, 100), proto=60_000)
        search = {}  # the default search: 11 alphas, up to 10 batches, 5 folds
    elif args.quick:
        sizes = dict(em=20_000, rule=(20_000, 20), proto=1_000)
        search = dict(alpha_feature_grid=[1e-3, 1e-2], max_batches=1, cv=2, n_candidates=100)
    else:
        sizes = dict(em=200_000, rule=(1_000_000, 100), proto=6_000)
        search = dict(alpha_feature_grid=np.logspace(-5, -1, 5), max_batches=3, cv=3)
    search = None if args.skip_search else search
    log = ProgressLog()

    logging.getLogger("discrim").setLevel(logging.WARNING)
    em_rows = em_part(sizes["em"], device, args.warmup_iters, args.iters, log, host=not args.skip_host)
    rule_rows = rule_part(*sizes["rule"], device, log, host=not args.skip_host)
    proto_rows = prototype_part(sizes["proto"], device, search, log)
    text = report(args, device, em_rows, rule_rows, proto_rows, started, log.lines)
    write_results(text, args.output)


if __name__ == "__main__":
    main()
