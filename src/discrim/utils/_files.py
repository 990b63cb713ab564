"""Atomic output files: written under a temporary name, renamed into place when complete."""

import contextlib
import os
import tempfile
from pathlib import Path


def current_umask():
    """The process's file-creation mask (read without changing it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_output(path):
    """Yield a temporary path beside ``path``; move it onto ``path`` only if the block succeeds.

    A failure (or interruption) removes the temporary file, so no half-written output remains.
    The finished file gets the usual permissions (0666 less the umask), not mkstemp's 0600.

    Parameters
    ----------
    path : str or path-like
        The final destination; its folder must exist.

    Yields
    ------
    tmp : pathlib.Path
        Where to write. It keeps ``path``'s suffix, so format detection by suffix works.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.resolve().parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
