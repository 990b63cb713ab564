"""The public API that the docstring and typing tests walk: its modules, names and methods."""

import dataclasses
import importlib
import inspect

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
    "discrim.exceptions",
]


def _documented_in_base(cls, attr):
    return any(getattr(getattr(base, attr, None), "__doc__", None) for base in cls.__mro__[1:])


def public_names(module):
    """``__all__``, or else the public functions and classes the module defines itself."""
    if hasattr(module, "__all__"):
        return module.__all__
    return [name for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
            and obj.__module__ == module.__name__]


def public_objects(modules=PUBLIC_MODULES):
    """Yield ``(qualname, obj, kind)`` for every public class and function of ``modules`` and
    the public methods the classes define, once each.

    ``kind`` is "dataclass", "protocol", "class", "function" or "method". A method without a
    docstring of its own that overrides a documented one (an interface's) is left out: it is
    documented, and typed, by the interface.
    """
    seen = set()
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in public_names(module):
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
                kind = "dataclass"
            elif getattr(obj, "_is_protocol", False):
                kind = "protocol"
            else:
                kind = "class" if inspect.isclass(obj) else "function"
            yield qualname, obj, kind
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") or not callable(member) or inspect.isclass(member):
                        continue
                    if member.__doc__ is None and _documented_in_base(obj, attr):
                        continue  # an override documented by the interface it implements
                    yield f"{qualname}.{attr}", member, "method"
