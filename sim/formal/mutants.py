"""A module of ``hw/`` built with one snippet of its source replaced: a planted bug that a
proof must catch, made without touching the tree."""

import importlib
import inspect
import types


__all__ = ["mutated_module"]


def mutated_module(module_name, snippet, replacement):
    """A fresh copy of module ``module_name`` whose source has ``snippet`` (which must occur
    exactly once) replaced by ``replacement``; the module's own imports resolve as they do
    for the original."""
    original = importlib.import_module(module_name)
    source = inspect.getsource(original)
    if source.count(snippet) != 1:
        raise ValueError(f"the snippet occurs {source.count(snippet)} times in {module_name}, "
                         f"not once: {snippet!r}")
    copy = types.ModuleType(f"{module_name}__mutated", original.__doc__)
    copy.__package__ = original.__package__
    copy.__file__ = original.__file__
    exec(compile(source.replace(snippet, replacement), original.__file__, "exec"), copy.__dict__)
    return copy
