"""Run the original proset 0.6.1 in its own virtual environment, through a subprocess."""

import json
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .env import VENV, ensure_proset_venv, proset_versions, venv_python

__all__ = ["VENV", "ensure_proset_venv", "proset_versions", "run_proset", "venv_python"]

_RUNNER = Path(__file__).resolve().with_name("runner.py")


_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def run_proset(mode, X_train, y_train, X_test, options=None, *, threads=None, timeout=None):
    """Fit (``mode="fit"``) or tune (``mode="search"``) proset 0.6.1 and score ``X_test``.

    Parameters
    ----------
    mode : {"fit", "search"}
        One ``ClassifierModel.fit`` or one ``proset.utility.select_hyperparameters``.
    X_train : array-like of shape (n_train, n_features)
    y_train : array-like of shape (n_train,)
        Class labels (numbers or strings).
    X_test : array-like of shape (n_test, n_features)
    options : dict, default=None
        ``{"model": ClassifierModel kwargs, "search": select_hyperparameters kwargs}``; values must
        be JSON-serialisable (lists for arrays). See ``runner.py``.
    threads : int, default=None
        BLAS/OpenMP threads of the subprocess (sets OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and
        MKL_NUM_THREADS); None leaves the environment as it is.
    timeout : float, default=None
        Seconds before the subprocess is killed.

    Returns
    -------
    result : dict
        ``fit_time`` (s, fit or search only), ``predict_time``, ``proba`` ndarray (n_test, n_classes)
        in the order of ``classes``, ``active_features`` (list of column indices, union over
        batches), ``n_prototypes``, ``n_batches``, ``batches`` (per-batch summary), ``solver``
        (per L-BFGS-B call: nit, funcalls, warnflag, seconds), ``versions``, and for a search
        ``selected``, ``best``, ``threshold``, ``cv_results``.
    """
    python = ensure_proset_venv()
    options = {"mode": mode, **(options or {})}
    y_train = np.asarray(y_train)
    if y_train.dtype == object:
        y_train = y_train.astype(str)
    env = dict(os.environ)
    if threads is not None:
        env.update({name: str(int(threads)) for name in _THREAD_VARIABLES})
    with tempfile.TemporaryDirectory(prefix="proset-run-") as tmp:
        tmp = Path(tmp)
        np.savez(tmp / "data.npz", X_train=np.asarray(X_train, dtype=np.float64), y_train=y_train,
                 X_test=np.asarray(X_test, dtype=np.float64))
        (tmp / "options.json").write_text(json.dumps(options))
        done = subprocess.run(
            [str(python), str(_RUNNER), str(tmp / "data.npz"), str(tmp / "options.json"), str(tmp / "result.json")],
            capture_output=True, text=True, timeout=timeout, env=env,
        )
        if done.returncode != 0:
            raise RuntimeError(f"proset runner failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
        result = json.loads((tmp / "result.json").read_text())
    result["proba"] = np.asarray(result["proba"], dtype=np.float64)
    return result
