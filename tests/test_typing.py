"""The public API is annotated (PEP 561: discrim ships py.typed): every parameter and return."""

import inspect

import pytest

from _public_api import PUBLIC_MODULES, public_objects

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
