"""The command-line page (docs/cli.rst) as a user runs it: its commands in order in an empty folder.

Each ``$ discrim ...`` line of the page's console blocks runs through click's runner, one after
another as the page says; a command the page shows succeeding must succeed, and the lines it
prints that do not depend on the machine (every line but times, a search's figures and the
lines the page cuts with "...") must be the command's own. The Dask section (which needs its
Python script first) and the page's examples of refused model files are left out.
"""

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from discrim.cli.main import cli

_PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.rst"


def _console_steps(text):
    """(command, expected output lines) of the page's console blocks, in order, up to the Dask section."""
    text = text.split("\nData larger than memory\n")[0]
    steps = []
    for block in re.findall(r"\.\. code-block:: console\n\n((?:   .*\n|\n)+)", text):
        for line in block.splitlines():
            if line.startswith("   $ "):
                steps.append((line[5:], []))
            elif steps and line.strip():
                steps[-1][1].append(line[3:].rstrip())
    return steps


def _assert_same_cells(line, shown, command):
    """A CSV line equals the page's, its numbers to 1e-6 (the last digits depend on the machine)."""
    cells, shown_cells = line.split(","), shown.split(",")
    assert len(cells) == len(shown_cells), (command, line, shown)
    for cell, shown_cell in zip(cells, shown_cells):
        try:
            assert float(cell) == pytest.approx(float(shown_cell), rel=1e-6, abs=1e-12), (command, line, shown)
        except ValueError:
            assert cell == shown_cell, (command, line, shown)


def _comparable(line):
    # a time, a cut ("..."), a wrapped line of the first sentence (its wrap depends on the path)
    return not re.search(r"\d s\b|\d\.\d+ s │|\.\.\.", line)


def test_the_command_line_page_runs_as_written(tmp_path, monkeypatch):
    # the page's second `predict` wrote onto the first's predictions.csv, which the command
    # refuses without --overwrite: a reader following the page stopped there with an error
    monkeypatch.chdir(tmp_path)
    steps = _console_steps(_PAGE.read_text(encoding="utf-8"))
    assert [cmd.split()[:2] for cmd, _ in steps][:3] == [["discrim", "datasets"]] * 3
    ran = 0
    for command, expected in steps:
        args = shlex.split(command)
        if args[0] == "head":  # head -N FILE
            lines = Path(args[2]).read_text().splitlines()[: int(args[1].lstrip("-"))]
            assert len(lines) == len(expected), command
            for line, shown in zip(lines, expected):
                _assert_same_cells(line, shown, command)
            continue
        if args[0] != "discrim" or "bad.skops" in args or "from-0.2.skops" in args:
            continue  # the refused model files are examples of errors, tested in test_persistence
        result = CliRunner().invoke(cli, args[1:], catch_exceptions=False, terminal_width=80)
        assert result.exit_code == 0, f"{command}\n{result.output}"
        ran += 1
        if args[1] == "tune":
            continue  # the search's figures depend on the machine's BLAS; its run is what is checked
        output = {line.rstrip() for line in result.output.splitlines()}
        missing = [line for line in expected if _comparable(line) and line.strip() and line not in output
                   and line.strip() not in {o.strip() for o in output}]
        assert not missing, f"{command}: lines of the page the command did not print:\n" + "\n".join(missing)
    assert ran >= 9

