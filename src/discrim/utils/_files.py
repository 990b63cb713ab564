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
    A new file gets the usual permissions (0666 less the umask), not mkstemp's 0600; a file that
    is replaced keeps its own. A symbolic link is followed: the file it points to is replaced.

    Parameters
    ----------
    path : str or path-like
        The final destination; its folder must exist.

    Yields
    ------
    tmp : pathlib.Path
        Where to write. It keeps ``path``'s suffix, so format detection by suffix works.
    """
    # a symbolic link is followed: the file it points to is replaced (in its own folder, so that
    # the rename stays on one file system), and the link stays
    path = Path(path).resolve()
    if path.exists() and not path.is_file():  # the rename would put a file in place of /dev/null, a pipe...
        raise ValueError(f"{str(path)!r} is not a regular file (a folder, device, pipe or socket): an output replaces "
                         "files only; give a file name.")
    # an existing file keeps its permissions (a private 0600 model stays private); a new one gets
    # the usual 0666 less the umask, not mkstemp's 0600
    mode = (path.stat().st_mode & 0o777) if path.is_file() else 0o666 & ~current_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def not_a_file(path, what="a file"):
    """Why ``path``, which is not a regular file, cannot be read as one: the end of a one-line message.

    Parameters
    ----------
    path : pathlib.Path
    what : str, default="a file"
        What was expected, e.g. "a model file".

    Returns
    -------
    reason : str
        "does not exist", "is a folder, not ...", or, for a named pipe, a device or a socket
        (which ``is_file`` also calls no file), that it is read more than once and so must be a
        file (a pipe's content would be gone after the first read).
    """
    if not path.exists():
        return "does not exist"
    if path.is_dir():
        return f"is a folder, not {what}"
    return (f"is not a regular file (a named pipe, a device or a socket): it is read more than once, so give {what} "
            "(e.g. save the stream to one first)")
