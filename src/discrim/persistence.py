"""Safe model files: fitted estimators saved and loaded with skops.io (loading runs no code)."""

import zipfile
from pathlib import Path

import skops.io as sio

from discrim.utils._files import atomic_output

# Modules whose types a discrim model file may contain. Anything else in a file is refused, so
# loading never instantiates types from an unexpected library.
_TRUSTED_PREFIXES = ("discrim.", "numpy.", "sklearn.", "scipy.", "pandas.", "builtins.", "collections.")


class ModelFileError(ValueError):
    """A model file that cannot be read: missing, unreadable, corrupted or not a discrim model."""


def save_model(estimator, path):
    """Save a fitted estimator to ``path`` with skops.io, atomically.

    The file is written to a temporary name in the same folder and renamed at the end, so a
    failure never leaves a half-written model file behind.

    Parameters
    ----------
    estimator : object
        Usually a fitted discrim or scikit-learn estimator (or Pipeline).
    path : str or path-like
        Destination; conventionally ending in ``.skops``.
    """
    path = Path(path)
    if not path.parent.exists():
        raise ModelFileError(f"cannot save model: folder {str(path.parent)!r} does not exist.")
    with atomic_output(path) as tmp:
        sio.dump(estimator, tmp)


def load_model(path):
    """Load an estimator saved by :func:`save_model`.

    Only types from discrim, numpy, scikit-learn, scipy, pandas and Python's builtins are
    accepted; skops never executes code from the file.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    estimator : object

    Raises
    ------
    ModelFileError
        If the file is missing, unreadable, corrupted, or holds types outside the trusted ones.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"model file {str(path)!r} does not exist.")
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as exc:
        raise ModelFileError(
            f"model file {str(path)!r} is not a readable skops model file (corrupted or of another "
            f"format): {exc}"
        ) from None
    refused = [t for t in untrusted if not t.startswith(_TRUSTED_PREFIXES)]
    if refused:
        raise ModelFileError(
            f"model file {str(path)!r} contains types discrim does not trust: {', '.join(refused[:5])}. "
            "Load it with skops.io.load after reviewing those types."
        )
    try:
        return sio.load(path, trusted=untrusted)
    except Exception as exc:  # skops raises many types for damaged content
        raise ModelFileError(f"model file {str(path)!r} could not be loaded: {exc}") from None
