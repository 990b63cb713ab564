"""Atomic outputs replace regular files only.

With ``--overwrite`` (or ``save_model`` in Python) an output onto ``/dev/null``, a named pipe or
another non-regular file was written under a temporary name and renamed over it: run as root,
``discrim datasets --export iris --output /dev/null --overwrite`` put a regular file in place of
the system's ``/dev/null``. Here a FIFO (and, as root, a copy of /dev/null's device node) stands in.
"""

import os

import pytest
from click.testing import CliRunner

from discrim.cli.main import cli
from discrim.discriminant import LinearDiscriminant
from discrim.persistence import save_model
from discrim.utils._files import atomic_output


def _special_files(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    files = [fifo]
    if os.geteuid() == 0:  # only root may create a device node
        device = tmp_path / "null"
        os.mknod(device, 0o666 | 0o020000, os.makedev(1, 3))  # S_IFCHR, /dev/null's numbers
        files.append(device)
    return files


def test_atomic_output_refuses_a_file_that_is_not_regular(tmp_path, rng):
    model = LinearDiscriminant().fit(rng.normal(size=(20, 2)), [0, 1] * 10)
    for path in _special_files(tmp_path):
        with pytest.raises(ValueError, match="is not a regular file"):
            with atomic_output(path) as tmp:
                tmp.write_text("x")
        assert not path.is_file()  # still the pipe or device
        link = tmp_path / f"link-to-{path.name}"
        link.symlink_to(path)
        with pytest.raises(ValueError, match="is not a regular file"):
            save_model(model, link)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left


def test_the_command_line_refuses_to_overwrite_a_device_or_pipe(tmp_path):
    for path in _special_files(tmp_path):
        result = CliRunner().invoke(cli, ["datasets", "--export", "iris", "--output", str(path), "--overwrite"])
        assert result.exit_code == 1
        assert result.output.strip().splitlines() == [
            f"Error: --output: {str(path)!r} is not a regular file (a device, pipe or socket), which the output would "
            "replace; give a file name."]
        assert not path.is_file()
