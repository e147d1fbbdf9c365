"""Seams that wrap each tool class as it is made: LangChain's and CrewAI's `BaseTool` subclasses.

Both frameworks call a tool through a method each tool class defines for itself (`_run` /
`_arun`), so there is no one function to wrap: the seam hooks the base's `__init_subclass__`
(the framework's own hook runs first) and walks the classes made before the patch. Shared
here so both mean the same by "every tool class".
"""

from __future__ import annotations

import functools
import inspect


def on_every_subclass(base, instrument) -> bool:
    """Call `instrument(cls)` on every subclass of `base`, made before or after; False when done already."""
    hook = base.__dict__["__init_subclass__"]
    if getattr(hook, "__chaos_gate__", False):
        return False
    original = hook.__func__

    @functools.wraps(original)
    def __init_subclass__(cls, **kwargs):
        original(cls, **kwargs)  # the framework's own check or registry first (zero-arg super() still works)
        instrument(cls)

    __init_subclass__.__chaos_gate__ = True
    base.__init_subclass__ = classmethod(__init_subclass__)
    stack = list(base.__subclasses__())  # classes made before the patch
    while stack:
        cls = stack.pop()
        instrument(cls)
        stack.extend(cls.__subclasses__())
    return True


def own_methods(cls, names):
    """(name, function) of each of `names` that `cls` defines itself, not yet wrapped, not abstract: a
    class that only inherits one keeps its parent's wrapper."""
    for name in names:
        fn = cls.__dict__.get(name)
        if inspect.isfunction(fn) and not getattr(fn, "__chaos_gate__", False) and \
                not getattr(fn, "__isabstractmethod__", False):
            yield name, fn
