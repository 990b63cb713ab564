"""Messages that tell the user to install something name what pip can install from PyPI.

discrim is installed from a checkout and is not on PyPI: advice such as ``pip install
"discrim[plot]"`` or ``pip install --upgrade discrim`` sent the user to PyPI, where a package of
that name would be someone else's. The extras' own packages (matplotlib, openpyxl, dask, torch)
install from there as they are.
"""

import re
import sys
from pathlib import Path

import pytest

_SRC = Path(__file__).resolve().parents[1] / "src" / "discrim"


def test_no_message_installs_discrim_from_pypi():
    advice = [(path.relative_to(_SRC), match.group(0))
              for path in sorted(_SRC.rglob("*.py"))
              for match in re.finditer(r"pip install[^`\n]*", path.read_text(encoding="utf-8"))]
    assert advice  # the scan reads the messages
    from_pypi = [(str(path), text) for path, text in advice
                 if re.search(r"pip install (--upgrade )?['\"]?discrim\b", text)]
    assert from_pypi == []


def test_plotting_without_matplotlib_names_the_package(monkeypatch):
    from discrim.plotting import _mpl

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"install it with `pip install matplotlib` \(discrim's plot extra\)"):
        _mpl.pyplot()
