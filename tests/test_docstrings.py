"""numpydoc validation of the public API's docstrings, and their Examples run as doctests."""

import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

from _public_api import public_objects

numpydoc_validate = pytest.importorskip("numpydoc.validate")

# GL08: no docstring; SS01: no summary; PR01: a parameter not documented; PR02: a documented
# parameter that does not exist; SS05/GL02 etc. are matters of taste and not enforced.
ENFORCED = {"GL08", "SS01", "PR01", "PR02"}

# dataclass fields are documented under Attributes; a Protocol is never instantiated (typing
# gives it the signature (*args, **kwargs)): neither has parameters to document
NO_PARAMETERS = {qualname for qualname, _, kind in public_objects() if kind in {"dataclass", "protocol"}}


def _public_objects():
    for qualname, _, _ in public_objects():
        yield qualname


@pytest.mark.parametrize("qualname", sorted(set(_public_objects())))
def test_public_docstring(qualname):
    result = numpydoc_validate.validate(qualname)
    enforced = ENFORCED - {"PR01"} if qualname in NO_PARAMETERS else ENFORCED
    errors = [(code, msg) for code, msg in result["errors"] if code in enforced]
    assert not errors, f"{qualname}: {errors}"


# --- Examples ------------------------------------------------------------------------------

def _is_family_container(qualname):
    return qualname.startswith("discrim.distributions.") and qualname.endswith(("Params", "Stats")) \
        and qualname.rsplit(".", 1)[-1] not in {"Params", "Stats"}


def _top_level_objects():
    """The public classes and functions (not the methods), sorted by qualified name."""
    objects = {qualname: obj for qualname, obj, kind in public_objects() if kind != "method"}
    for qualname in sorted(objects):
        yield qualname, objects[qualname]


@pytest.mark.parametrize("qualname", [q for q, _ in _top_level_objects()])
def test_public_object_has_examples(qualname):
    if _is_family_container(qualname):
        pytest.skip("the family parameter and statistics dataclasses are shown in use by their family's Examples")
    module_name, _, name = qualname.rpartition(".")
    obj = getattr(importlib.import_module(module_name), name)
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        pytest.skip("warnings and errors are documented by the functions that raise them")
    doc = inspect.getdoc(obj) or ""
    assert "\nExamples\n--------\n" in f"\n{doc}\n", f"{qualname} has no Examples section"


def _doctests():
    finder = doctest.DocTestFinder(recurse=True, exclude_empty=True)
    seen = set()
    for qualname, obj in _top_level_objects():
        for test in finder.find(obj, name=qualname, globs={}):
            if test.examples and test.name not in seen:
                seen.add(test.name)
                yield test


DOCTESTS = {test.name: test for test in _doctests()}


@pytest.mark.parametrize("name", sorted(DOCTESTS))
def test_docstring_examples_run(name, monkeypatch, tmp_path):
    """Every Examples section of the public API runs as a doctest and prints what it shows."""
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    test = DOCTESTS[name]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    output = []
    result = runner.run(test, out=output.append, clear_globs=True)
    assert result.failed == 0, "".join(output)


def test_public_objects_in_api_reference():
    """Every public class and function has a page in docs/api/index.rst's autosummary tables."""
    index = Path(__file__).resolve().parents[1] / "docs" / "api" / "index.rst"
    if not index.is_file():
        pytest.skip("no docs/ next to the tests (an installed test suite)")
    listed = set(re.findall(r"^ {3}~?([\w.]+)$", index.read_text(encoding="utf-8"), flags=re.MULTILINE))
    # methods are documented on their class's page
    missing = [q for q, _ in _top_level_objects() if q.rsplit(".", 1)[-1] not in listed]
    assert not missing, f"not in docs/api/index.rst: {missing}"
