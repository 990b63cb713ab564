"""Fit or tune the original proset 0.6.1 on arrays from an .npz file; run by the proset venv's python.

Usage: ``python runner.py DATA.npz OPTIONS.json RESULT.json``

DATA.npz holds ``X_train`` (n_train, n_features), ``y_train`` (n_train,) and ``X_test``
(n_test, n_features). OPTIONS.json holds

- ``mode``: ``"fit"`` (one ``ClassifierModel.fit``) or ``"search"`` (``select_hyperparameters``);
- ``model``: keyword arguments of ``proset.ClassifierModel`` (defaults as proset's: n_iter=1,
  num_candidates=1000, lambda_v=1e-3, lambda_w=1e-8, alpha_v=alpha_w=0.05, beta=0.1,
  max_fraction=0.5, solver_factr=1e7);
- ``search``: keyword arguments passed through to ``proset.utility.select_hyperparameters``
  (lists become numpy arrays, except ``solver_factr``, which becomes a tuple).

RESULT.json receives the fit time (seconds, ``time.perf_counter`` around fit or search only), the
test probabilities, the classes, the active features (union over batches, indices into the columns
of X), the prototype count, per-batch solver iterations and, for a search, the selected parameters
and the cross-validation table. This file imports only proset's own environment (numpy 1,
scikit-learn < 1.6), never discrim.
"""

import json
import sys
import time

import numpy as np


def _record_solver_calls(log):
    """Wrap proset's L-BFGS-B so that each call's iteration and function-call counts are recorded."""
    import proset.model

    original = proset.model.fmin_l_bfgs_b

    def wrapped(*args, **kwargs):
        start = time.perf_counter()
        solution = original(*args, **kwargs)
        info = solution[2]
        log.append({
            "nit": int(info["nit"]),
            "funcalls": int(info["funcalls"]),
            "warnflag": int(info["warnflag"]),
            "seconds": time.perf_counter() - start,
        })
        return solution

    proset.model.fmin_l_bfgs_b = wrapped


def _describe(model):
    """Active features, prototype count and per-batch summary of a fitted ClassifierModel."""
    manager = model.set_manager_
    batches = []
    for batch in manager.get_batches():
        if batch is None:
            batches.append({"active_features": [], "feature_weights": [], "n_prototypes": 0})
        else:
            batches.append({
                "active_features": batch["active_features"].tolist(),
                "feature_weights": batch["feature_weights"].tolist(),
                "n_prototypes": int(batch["prototype_weights"].shape[0]),
            })
    return {
        "active_features": manager.get_active_features().tolist(),
        "n_prototypes": int(manager.get_num_prototypes()),
        "n_batches": int(manager.num_batches),
        "batches": batches,
    }


def _search_kwargs(options):
    kwargs = dict(options)
    for key, value in kwargs.items():
        if isinstance(value, list):
            kwargs[key] = tuple(value) if key == "solver_factr" else np.asarray(value)
    return kwargs


def main(data_path, options_path, result_path):
    import proset
    import sklearn
    from proset import ClassifierModel

    data = np.load(data_path, allow_pickle=False)
    X_train, y_train, X_test = data["X_train"], data["y_train"], data["X_test"]
    with open(options_path) as handle:
        options = json.load(handle)
    mode = options.get("mode", "fit")
    solver_log = []
    _record_solver_calls(solver_log)
    model = ClassifierModel(**options.get("model", {}))
    result = {"mode": mode}
    if mode == "fit":
        start = time.perf_counter()
        model.fit(X_train, y_train)
        result["fit_time"] = time.perf_counter() - start
    elif mode == "search":
        from proset.utility import select_hyperparameters

        start = time.perf_counter()
        found = select_hyperparameters(model, X_train, y_train, **_search_kwargs(options.get("search", {})))
        result["fit_time"] = time.perf_counter() - start
        search = found["search"]
        cv_results = search["cv_results"]
        selected = cv_results.iloc[search["selected_ix"]]
        result["selected"] = {"lambda_v": float(selected["lambda_v"]), "n_iter": int(selected["num_batches"])}
        result["best"] = {
            "lambda_v": float(cv_results.iloc[search["best_ix"]]["lambda_v"]),
            "n_iter": int(cv_results.iloc[search["best_ix"]]["num_batches"]),
        }
        result["threshold"] = float(search["threshold"])
        result["cv_results"] = {col: cv_results[col].tolist() for col in cv_results.columns}
        model = found["model"]
        if hasattr(model, "steps"):  # a Pipeline when a transform was passed
            model = model.steps[-1][1]
    else:
        raise ValueError(f"mode must be 'fit' or 'search', got {mode!r}.")
    start = time.perf_counter()
    proba = model.predict_proba(X_test)
    result["predict_time"] = time.perf_counter() - start
    result.update(_describe(model))
    result["proba"] = proba.tolist()
    result["classes"] = model.classes_.tolist()
    result["solver"] = solver_log
    result["versions"] = {"proset": proset.__version__, "numpy": np.__version__, "scikit-learn": sklearn.__version__}
    with open(result_path, "w") as handle:
        json.dump(result, handle)


if __name__ == "__main__":  # the guard matters: select_hyperparameters(num_jobs=...) spawns processes
    main(*sys.argv[1:4])
