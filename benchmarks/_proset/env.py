"""Create and locate the separate virtual environment that runs the original proset 0.6.1."""

import subprocess
import sys
from pathlib import Path

VENV = Path(__file__).resolve().parents[1] / ".proset-venv"
# proset 0.6.1 needs numpy 1 (its export/explain crash with numpy 2) and scikit-learn < 1.6 (from
# 1.6 on it is no longer recognised as a classifier, so its search silently uses unstratified folds).
REQUIREMENTS = ("proset==0.6.1", "scikit-learn<1.6", "numpy<2")
_CHECK = "import proset, numpy, sklearn; print(proset.__version__, numpy.__version__, sklearn.__version__)"


def venv_python(venv=VENV):
    """Path of the python interpreter of the proset virtual environment.

    Parameters
    ----------
    venv : path-like, default=VENV
        The virtual environment's folder.

    Returns
    -------
    python : Path
    """
    return Path(venv) / "bin" / "python"


def proset_versions(venv=VENV):
    """Versions of proset, numpy and scikit-learn inside the virtual environment, or None if unusable.

    Parameters
    ----------
    venv : path-like, default=VENV

    Returns
    -------
    versions : dict of str to str or None
    """
    python = venv_python(venv)
    if not python.exists():
        return None
    done = subprocess.run([str(python), "-c", _CHECK], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    proset, numpy, sklearn = done.stdout.split()
    return {"proset": proset, "numpy": numpy, "scikit-learn": sklearn}


def ensure_proset_venv(venv=VENV, quiet=True):
    """Create the proset virtual environment and install its pinned requirements if missing.

    Parameters
    ----------
    venv : path-like, default=VENV
        Folder of the virtual environment (``benchmarks/.proset-venv``, git-ignored).
    quiet : bool, default=True
        Pass ``-q`` to pip.

    Returns
    -------
    python : Path
        The environment's interpreter, ready to run ``benchmarks/_proset/runner.py``.
    """
    versions = proset_versions(venv)
    if versions is not None and versions["proset"] == "0.6.1" and versions["numpy"].startswith("1."):
        return venv_python(venv)
    print(f"creating the proset 0.6.1 environment in {venv} (pip install, takes a minute)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv_python(venv)), "-m", "pip", "install", *(["-q"] if quiet else []), *REQUIREMENTS]
    subprocess.run(pip, check=True)
    if proset_versions(venv) is None:
        raise RuntimeError(f"proset could not be imported from {venv} after installing {REQUIREMENTS}.")
    return venv_python(venv)
