"""The public API is annotated (PEP 561: discrim ships py.typed): every parameter and return."""

import ast
import importlib.util
import inspect
import os
import re
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import discrim

from _public_api import PUBLIC_MODULES, public_names, public_objects

# The command line's Python entry point (``discrim.cli.main.main``) is typed like the library's.
TYPED_MODULES = [*PUBLIC_MODULES, "discrim.cli.main"]


def _signature_target(obj, kind):
    """The function whose signature types ``obj``: itself, or a class's own ``__init__``."""
    if kind in {"function", "method"}:
        return obj if not isinstance(obj, (staticmethod, classmethod)) else obj.__func__
    if kind == "protocol":
        return None  # never instantiated
    init = obj.__init__
    if not inspect.isfunction(init) or not init.__module__.startswith("discrim"):
        return None  # object's or an exception's (a NamedTuple's fields are typed where it is defined)
    return init  # written in discrim, or a dataclass's, generated from its annotated fields


def _missing_annotations(func):
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    if params and params[0].name in {"self", "cls"}:
        params = params[1:]
    missing = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


TARGETS = {}
for qualname, obj, kind in public_objects(TYPED_MODULES):
    target = _signature_target(obj, kind)
    if target is not None:
        TARGETS[qualname] = target


@pytest.mark.parametrize("qualname", sorted(TARGETS))
def test_public_signature_annotated(qualname):
    missing = _missing_annotations(TARGETS[qualname])
    assert not missing, f"{qualname}: no annotation for {missing}"


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_public_module_declares_all(module_name):
    """``__all__`` names a public module's API for ``import *`` and type checkers (without it,
    ``from discrim.persistence import *`` brought in os, json, sio and the module's helpers)."""
    module = importlib.import_module(module_name)
    assert hasattr(module, "__all__"), f"{module_name} has no __all__"
    assert [name for name in module.__all__ if not hasattr(module, name)] == []


def _discrim_classes():
    """``{name: classes}`` of every class that the loaded discrim modules define."""
    classes = {}
    for name, module in list(sys.modules.items()):
        if name == "discrim" or name.startswith("discrim."):
            for attr, obj in list(vars(module).items()):
                if inspect.isclass(obj) and obj.__module__.startswith("discrim"):
                    classes.setdefault(attr, set()).add(obj)
    return classes


def test_returned_classes_exported():
    """A discrim class that a public function or method is annotated to return can be imported
    from a public module, for a user's own annotations and isinstance checks."""
    exported = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        exported |= {id(getattr(module, name)) for name in public_names(module)}
    classes = _discrim_classes()
    unexported = []
    for qualname, func in TARGETS.items():
        returns = inspect.signature(func).return_annotation
        returns = returns if isinstance(returns, str) else getattr(returns, "__name__", "")
        for name in re.findall(r"\w+", returns):
            unexported += [(qualname, cls.__qualname__) for cls in classes.get(name, ()) if id(cls) not in exported]
    assert not unexported, f"returned but not exported: {unexported}"


def test_mixture_criteria_are_floats():
    """FiniteMixture's criteria and score return the float they are annotated with (bic and icl
    returned np.float64), also for weighted rows."""
    from discrim.distributions import Gaussian
    from discrim.mixture import FiniteMixture

    X = np.random.default_rng(0).normal(size=(40, 2))
    mixture = FiniteMixture(Gaussian(), n_components=2, random_state=0).fit(X)
    for weights in (None, np.full(40, 0.5)):
        values = {name: getattr(mixture, name)(X, sample_weight=weights) for name in ("aic", "bic", "icl", "score")}
        assert {name: type(value) for name, value in values.items()} == dict.fromkeys(values, float)


def test_top_level_names_typed_as_they_resolve():
    """The top level's imports for type checkers name each exported name from the module that
    resolves it at runtime, and cost ``import discrim`` nothing: no subpackage, not even typing."""
    tree = ast.parse(Path(discrim.__file__).read_text())
    typed = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.dump(statement)
                for alias in statement.names:
                    assert alias.asname == alias.name, "an explicit re-export reads `import X as X`"
                    typed[alias.name] = statement.module
    assert typed == discrim._EXPORTS
    code = ("import sys; before = set(sys.modules); import discrim; "
            "print(sorted(m for m in set(sys.modules) - before if m == 'typing' or m.startswith('discrim.')))")
    source = str(Path(discrim.__file__).parents[1])  # the discrim under test, not another installed copy
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---------------------------------------------------------------- what a type checker makes of it
#
# The annotations above exist at runtime; these cases check that mypy reads them as a user's code
# meets them. Each case becomes the body of a function of one script, checked by one mypy run.
# A line may end with "# reveal: TYPE" (reveal_type on that line gives TYPE, where "*" matches any
# text: mypy's versions spell builtins differently) or "# error: CODE" (mypy reports that error
# code there); every other line of a case must pass. pandas ships no annotations (without
# pandas-stubs it is Any), so its types are checked by use: an attribute or assignment that an
# `object` field would fail.

MYPY_HEADER = """\
import numpy as np
import pandas as pd
import discrim
from discrim import LinearDiscriminant as TopLevelLDA
from discrim.discriminant import (
    LinearDiscriminant, MixtureDiscriminant, QuadraticDiscriminant, summarize_discriminant,
)
from discrim.distributions import Gaussian
from discrim.mixture import FiniteMixture, select_mixture, summarize_mixture
from discrim.model_selection import PrototypeClassifierCV
from discrim.prototype import PrototypeClassifier

X = np.zeros((10, 2))
y = np.r_[np.zeros(5), np.ones(5)]


class MyLDA(LinearDiscriminant):
    pass
"""

MYPY_CASES = {
    # the names of discrim's top level are the subpackages' (not Any, as a module __getattr__ made
    # them); fit and the prediction methods keep their signatures through their decorators, and
    # fit returns the estimator's own class
    "signatures_seen": """
        reveal_type(TopLevelLDA)  # reveal: def (*) -> discrim.discriminant.gaussian.LinearDiscriminant
        reveal_type(discrim.select_mixture)  # reveal: def (*) -> discrim.mixture._selection.MixtureSelection
        TopLevelLDA(prioors="equal")  # error: call-arg
        from discrim import NoSuchEstimator  # error: attr-defined
        lda = LinearDiscriminant().fit(X, y)
        reveal_type(lda)  # reveal: discrim.discriminant.gaussian.LinearDiscriminant
        lda.transform(X)[:, 0]
        reveal_type(lda.predict_proba(X))  # reveal: numpy.ndarray*
        lda.fit(X, y, groups=None)  # error: call-arg
        reveal_type(MyLDA().fit(X, y))  # reveal: user_script.MyLDA
        reveal_type(QuadraticDiscriminant().fit(X, y))  # reveal: discrim.discriminant.gaussian.QuadraticDiscriminant
        reveal_type(MixtureDiscriminant(Gaussian()).fit(X, y))  # reveal: discrim.discriminant.mixture.MixtureDiscriminant
        reveal_type(discrim.FiniteMixture(Gaussian()).fit(X))  # reveal: discrim.mixture.finite_mixture.FiniteMixture
        FiniteMixture(Gaussian()).fit(X).score_samples(X).nor_this()  # error: union-attr
        reveal_type(PrototypeClassifier().fit(X, y))  # reveal: discrim.prototype.classifier.PrototypeClassifier
        reveal_type(PrototypeClassifierCV().fit(X, y))  # reveal: discrim.model_selection.prototype_cv.PrototypeClassifierCV
    """,
    # the result dataclasses' fields have their documented types, not object
    "result_dataclasses": """
        sel = select_mixture(X, {"VVV": Gaussian()}, range(1, 3), random_state=0)
        reveal_type(sel.best_estimator)  # reveal: discrim.mixture.finite_mixture.FiniteMixture
        reveal_type(sel.estimators)  # reveal: *list[discrim.mixture.finite_mixture.FiniteMixture | None]
        reveal_type(sel.families)  # reveal: *dict[*str, discrim.distributions._base.ComponentFamily]
        sel.best_estimator.predict(X)
        sel.table.sort_values("bic").shape
        table: pd.DataFrame = sel.table
        summary = summarize_mixture(sel.best_estimator, X)
        summary.components.round(2).shape
        reveal_type(summary.model_name)  # reveal: *str | None
        reveal_type(summary.covariances)  # reveal: numpy.ndarray*| None
        summary.covariances.shape  # error: union-attr
        fitted = summarize_discriminant(MixtureDiscriminant(Gaussian()), X, y)
        classes: pd.DataFrame = fitted.classes
        fitted.confusion.to_numpy()
    """,
    # the class of normal_boundaries' result is exported, with its fields' types
    "normal_boundaries_result": """
        from discrim.discriminant import NormalBoundaries, normal_boundaries
        result: NormalBoundaries = normal_boundaries(0, 1, 2, 1)
        reveal_type(result.region)  # reveal: *list[*tuple[*float, *float]]
        reveal_type(result.coefficients[2])  # reveal: *float
    """,
    # n_batches as one count (or None) gives one result, as several counts a list (or array) of them
    "prototype_n_batches": """
        model = PrototypeClassifier(random_state=0)
        proba = model.predict_proba(X)
        proba[:, 1].mean() + proba.shape[0]
        accuracy: float = model.score(X, y)
        mean_log_likelihood: float = model.log_likelihood(X, y, n_batches=2)
        reveal_type(model.predict(X, n_batches=None))  # reveal: numpy.ndarray*
        reveal_type(model.predict_proba(X, n_batches=[1, 2]))  # reveal: *list[numpy.ndarray*]
        reveal_type(model.predict_log_proba(X, None, (1, 2)))  # reveal: *list[numpy.ndarray*]
        reveal_type(model.score(X, y, n_batches=[1, 2]))  # reveal: numpy.ndarray*
        reveal_type(model.log_likelihood(X, y, None, [1, 2]))  # reveal: numpy.ndarray*
        model.predict_proba(X, n_batches=[1, 2])[:, 1]  # error: call-overload
        model.predict(X, n_batches="2")  # error: call-overload
        search = PrototypeClassifierCV()
        search.predict_proba(X, priors="equal")[:, 1].mean()
        search_accuracy: float = search.score(X, y)
        reveal_type(search.predict(X, n_batches=[0, 1]))  # reveal: *list[numpy.ndarray*]
        reveal_type(search.log_likelihood(X, y, n_batches=(0, 1)))  # reveal: numpy.ndarray*
    """,
}


def _mypy_search_path():
    """MYPYPATH that makes mypy read the discrim these tests import: its source tree, unless it is installed."""
    root = Path(discrim.__file__).resolve().parents[1]
    installed = {Path(p).resolve() for p in [*site.getsitepackages(), site.getusersitepackages()]}
    return None if root in installed else str(root)


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory, request):
    """``(lines, cases, messages)`` of one mypy run on the script of all MYPY_CASES: its lines, each
    case's first and last line number and mypy's messages ``{line number: [(severity, text)]}``."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed")
    lines = MYPY_HEADER.splitlines()
    cases = {}
    for name, body in MYPY_CASES.items():
        lines += ["", "", f"def case_{name}() -> None:"]
        first = len(lines) + 1
        lines += ["    " + line for line in textwrap.dedent(body).strip("\n").splitlines()]
        cases[name] = (first, len(lines))
    folder = tmp_path_factory.mktemp("mypy")
    script = folder / "user_script.py"
    script.write_text("\n".join(lines) + "\n")
    # mypy's cache (checked against each file's content) makes the runs after the first quick
    pytest_cache = getattr(request.config, "cache", None)  # None without pytest's cacheprovider
    cache = pytest_cache.mkdir("mypy") if pytest_cache is not None else folder / "cache"
    env = {key: value for key, value in os.environ.items() if key != "MYPYPATH"}
    if _mypy_search_path() is not None:
        env["MYPYPATH"] = _mypy_search_path()
    # --follow-imports=silent: the errors inside discrim and its dependencies are not the user's;
    # --config-file= (none): no project or user configuration changes what is checked
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file=", "--follow-imports=silent", "--cache-dir", str(cache),
         "--show-error-codes", "--no-pretty", "--no-error-summary", script.name],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )
    if result.returncode not in {0, 1}:
        pytest.fail(f"mypy did not run:\n{result.stdout}{result.stderr}")
    messages = {}
    for out in result.stdout.splitlines():
        match = re.match(rf"{re.escape(script.name)}:(\d+): (error|note): (.*)$", out)
        if match:
            messages.setdefault(int(match.group(1)), []).append((match.group(2), match.group(3)))
    return lines, cases, messages


def _line_problem(line, found):
    """What is wrong with mypy's messages ``found`` on ``line`` given the line's "# reveal:" or
    "# error:" comment, or None."""
    errors = [text for severity, text in found if severity == "error"]
    codes = sorted({match.group(1) for text in errors if (match := re.search(r"\[([a-z-]+)\]$", text))})
    revealed = [text.removeprefix("Revealed type is ").strip('"') for severity, text in found
                if severity == "note" and text.startswith("Revealed type is ")]
    kind, want = (None, None)
    if match := re.search(r"#\s*(reveal|error):\s*(.+?)\s*$", line):
        kind, want = match.groups()
    if codes != ([want] if kind == "error" else []):
        return f"errors {errors}, expected {[want] if kind == 'error' else []}"
    if kind == "reveal":
        pattern = ".*".join(re.escape(part) for part in want.split("*"))
        if len(revealed) != 1 or not re.fullmatch(pattern, revealed[0]):
            return f"revealed {revealed}, expected {want!r}"
    return None


@pytest.mark.parametrize("case", sorted(MYPY_CASES))
def test_mypy_reads_the_annotations(mypy_report, case):
    lines, cases, messages = mypy_report
    first, last = cases[case]
    problems = []
    for number in range(first, last + 1):
        problem = _line_problem(lines[number - 1], messages.get(number, []))
        if problem is not None:
            problems.append(f"{lines[number - 1].strip()!r}: {problem}")
    assert not problems, "\n".join(problems)
