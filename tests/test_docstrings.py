"""numpydoc validation of the public API's docstrings, and their Examples run as doctests."""

import dataclasses
import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

PUBLIC_MODULES = [
    "discrim.datasets",
    "discrim.discriminant",
    "discrim.distributions",
    "discrim.mixture",
    "discrim.prototype",
    "discrim.model_selection",
    "discrim.persistence",
    "discrim.evaluation",
    "discrim.plotting",
    "discrim.backend",
    "discrim.optim",
]

# GL08: no docstring; SS01: no summary; PR01: a parameter not documented; PR02: a documented
# parameter that does not exist; SS05/GL02 etc. are matters of taste and not enforced.
ENFORCED = {"GL08", "SS01", "PR01", "PR02"}


DATACLASSES = set()
PROTOCOLS = set()


def _documented_in_base(cls, attr):
    return any(getattr(getattr(base, attr, None), "__doc__", None) for base in cls.__mro__[1:])


def _public_names(module):
    """``__all__``, or else the public functions and classes the module defines itself."""
    if hasattr(module, "__all__"):
        return module.__all__
    return [name for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
            and obj.__module__ == module.__name__]


def _public_objects():
    seen = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in _public_names(module):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
                continue  # constants (FAMILIES, BACKENDS) and submodules (ops, constraints)
            if not obj.__module__.startswith("discrim"):
                continue  # re-exported from another package (array_api_compat's helpers)
            qualname = f"{obj.__module__}.{obj.__qualname__}" if hasattr(obj, "__qualname__") else None
            if qualname is None or qualname in seen:
                continue
            seen.add(qualname)
            if dataclasses.is_dataclass(obj):
                DATACLASSES.add(qualname)
            if getattr(obj, "_is_protocol", False):
                PROTOCOLS.add(qualname)
            yield qualname
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or not callable(member) or inspect.isclass(member):
                        continue
                    if member.__doc__ is None and _documented_in_base(obj, attr):
                        continue  # an override documented by the interface it implements
                    yield f"{qualname}.{attr}"


@pytest.mark.parametrize("qualname", sorted(set(_public_objects())))
def test_public_docstring(qualname):
    result = numpydoc_validate.validate(qualname)
    enforced = ENFORCED
    if qualname in DATACLASSES:
        enforced = ENFORCED - {"PR01"}  # dataclass fields are documented under Attributes
    if qualname in PROTOCOLS:
        enforced = ENFORCED - {"PR01"}  # never instantiated: typing gives it (*args, **kwargs)
    errors = [(code, msg) for code, msg in result["errors"] if code in enforced]
    assert not errors, f"{qualname}: {errors}"


# --- Examples ------------------------------------------------------------------------------

def _is_family_container(qualname):
    return qualname.startswith("discrim.distributions.") and qualname.endswith(("Params", "Stats")) \
        and qualname.rsplit(".", 1)[-1] not in {"Params", "Stats"}


def _top_level_objects():
    for qualname in sorted(set(_public_objects())):
        module_name, _, rest = qualname.rpartition(".")
        try:
            obj = getattr(importlib.import_module(module_name), rest)
        except ImportError:
            continue  # a method: module_name is the class's qualified name
        yield qualname, obj


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
