"""Interruptions (issue 17): SIGINT and SIGTERM remove temporary outputs, stop forked workers, and
end the command with exit code 130 or 143."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from discrim.cli import _tune
from discrim.cli._signals import Interrupted, run_command, signals_raise
from discrim.cli.main import cli
from discrim.utils._files import atomic_output

# No timing is asserted: the deadline only keeps a broken run from hanging the suite.
_DEADLINE_S = 120


def _children(pid):
    """Process ids whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the command name (which may hold spaces) in parentheses: state, ppid, ...
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _poll(condition, what):
    deadline = time.monotonic() + _DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_raises_interrupted_and_atomic_output_leaves_nothing(tmp_path, signum):
    target = tmp_path / "out.csv"
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(Interrupted) as info:
        with signals_raise():
            with atomic_output(target) as tmp:
                tmp.write_text("half")
                os.kill(os.getpid(), signum)
                time.sleep(5)  # the handler raises before this ends
    assert info.value.exit_code == 128 + signum
    assert list(tmp_path.iterdir()) == []
    assert {s: signal.getsignal(s) for s in before} == before  # the handlers are restored


def test_tune_interrupted_while_writing_leaves_no_staging_folder(tmp_path, monkeypatch):
    original = _tune._write_outputs

    def write_then_get_terminated(folder, *args, **kwargs):
        (folder / "model.skops").write_text("partial")
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        return original(folder, *args, **kwargs)

    monkeypatch.setattr(_tune, "_write_outputs", write_then_get_terminated)
    out = tmp_path / "run"
    args = ["tune", "--dataset", "iris-2f", "--max-batches", "1", "--cv", "2", "--n-alphas", "1", "--quiet",
            "--output", str(out)]
    with pytest.raises(SystemExit) as info:
        run_command(cli, args)
    assert info.value.code == 143
    assert not out.exists()  # created by this run, removed with the staging folder inside it


def _start_tune(tmp_path, n_jobs):
    out = tmp_path / "run"
    code = "import sys; from discrim.cli import run; run(sys.argv[1:])"  # the console script's entry
    args = ["tune", "--dataset", "xor-4f", "--max-batches", "10", "--n-alphas", "11", "--cv", "5",
            "--n-jobs", str(n_jobs), "--quiet", "--output", str(out)]
    process = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    return process, out


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_while_the_command_imports_its_modules_exits_without_a_traceback(signum):
    # Ctrl-C within the first second (imports of scikit-learn and scipy) printed a traceback of
    # the import, and SIGTERM killed the process silently: the entry point now installs the
    # handlers before importing the command. The signal is sent as the command module's import begins.
    code = (
        "import os, signal, sys\n"
        "class SignalOnImport:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'discrim.cli.main':\n"
        f"            os.kill(os.getpid(), {int(signum)})\n"
        "        return None\n"
        "sys.meta_path.insert(0, SignalOnImport())\n"
        "from discrim.cli import run\n"
        "run(['datasets'])\n"
    )
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=_DEADLINE_S)
    assert process.returncode == 128 + signum, process.stderr
    assert "Traceback" not in process.stderr
    assert f"stopped by {signal.Signals(signum).name}" in process.stderr


def _workers_of(process):
    """Wait until the search has forked its worker; return the workers' process ids."""
    _poll(lambda: _children(process.pid) or process.poll() is not None, "the search's forked worker")
    workers = _children(process.pid)
    assert workers and process.poll() is None, process.communicate()
    return workers


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_during_a_parallel_search_stops_the_workers_and_exits(tmp_path, signum):
    process, out = _start_tune(tmp_path, n_jobs=2)
    try:
        workers = _workers_of(process)
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=_DEADLINE_S)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr and f"stopped by {signal.Signals(signum).name}" in stderr
    _poll(lambda: not any(_alive(pid) for pid in workers), "the workers to end")
    assert not out.exists() or not list(out.iterdir())


def test_workers_end_when_the_parent_is_killed_outright(tmp_path):
    process, _ = _start_tune(tmp_path, n_jobs=2)
    try:
        workers = _workers_of(process)
        process.kill()  # SIGKILL: no clean-up in the parent; the kernel tells the workers
        process.wait(timeout=_DEADLINE_S)
    finally:
        if process.poll() is None:
            process.kill()
    _poll(lambda: not any(_alive(pid) for pid in workers), "the orphaned workers to end")
