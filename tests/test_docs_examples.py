"""The user guide's Python examples run as written, in order, and warn of nothing.

A warning in an example is a reader's first sight of a fit that means nothing (the families
page's mixed-type example fitted four distinct rows repeated 25 times, and EM warned that a
component collapsed). Pages whose examples need a Dask cluster or take long (model choice over
mclust's 14 models, the bootstrap test) are left to the documentation build and the gallery.
"""

import re
import textwrap
from pathlib import Path

import pytest

_GUIDE = Path(__file__).resolve().parents[1] / "docs" / "user_guide"


def _python_blocks(text):
    """The code of the page's ``.. code-block:: python`` directives, in order, unindented."""
    blocks = []
    for match in re.finditer(r"\.\. code-block:: python\n\n((?: +.*\n|\n)+)", text):
        blocks.append(textwrap.dedent(match.group(1)))
    return blocks


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("page", ["discriminant", "families", "incomplete", "mixture", "prototype"])
def test_the_page_examples_run_without_warnings(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks((_GUIDE / f"{page}.rst").read_text(encoding="utf-8"))
    assert blocks, page
    namespace = {"__name__": f"docs_{page}"}
    for code in blocks:
        exec(compile(code, f"docs/user_guide/{page}.rst", "exec"), namespace)  # noqa: S102 (our own pages)
