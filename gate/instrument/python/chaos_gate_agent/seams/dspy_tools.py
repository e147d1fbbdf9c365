"""DSPy (`dspy` 3.x): tools, at `dspy.Tool.__call__` / `acall`, where every module calls them.

`dspy.ReAct` wraps each function in a `dspy.Tool` and calls `tool(**args)` (`acall` on the
async path) inside its own `try`: an exception becomes the observation "Execution error in
<tool>: ..." in the trajectory the model reads next, and the loop goes on. A program
calling tools itself (`dspy.ToolCalls` from native function calling, `tool.acall(...)`)
goes through the same two methods. Both are `@with_callbacks` methods: the seam rebuilds
each one around an instrumented body with DSPy's own decorator, so a fault is raised
inside the callbacks' span (an `on_tool_end` sees the exception a failing body gives) and
inside ReAct's `try` (the model reads DSPy's own error text).

The body instrumented is the original method's: DSPy's argument validation runs first, so a
call the model got wrong is rejected as DSPy rejects it, not traced as a tool call. Left
alone: ReAct's built-in `finish` (a lambda of dspy.predict.react, not the agent's tool).
Names, descriptions and argument schemas (`tool.args`, the prompt text) are not touched.
"""

from __future__ import annotations

import functools

from chaos_gate_agent.call import Seam, call_async, call_sync


class DspySeam(Seam):
    transport = "function"
    framework = "dspy"


SEAM = DspySeam()


def _own(tool) -> bool:
    func = getattr(tool, "func", None)
    return not (getattr(tool, "name", None) == "finish" and getattr(func, "__module__", "") == "dspy.predict.react")


def _raw(method):
    """The undecorated method under `@with_callbacks` (functools.wraps keeps it as __wrapped__)."""
    return getattr(method, "__wrapped__", method)


def patch(module):
    """`dspy.adapters.types.tool`, right after it ran."""
    cls = module.Tool
    if getattr(cls.__call__, "__chaos_gate__", False):
        return None
    decorate = getattr(module, "with_callbacks", lambda fn: fn)
    call, acall = _raw(cls.__call__), _raw(cls.acall)

    @functools.wraps(call)
    def __call__(self, **kwargs):
        if not _own(self):
            return call(self, **kwargs)
        return call_sync(SEAM, str(self.name), dict(kwargs), lambda: call(self, **kwargs))

    @functools.wraps(acall)
    async def instrumented_acall(self, **kwargs):
        if not _own(self):
            return await acall(self, **kwargs)
        return await call_async(SEAM, str(self.name), dict(kwargs), lambda: acall(self, **kwargs))

    cls.__call__, cls.acall = decorate(__call__), decorate(instrumented_acall)
    cls.__call__.__chaos_gate__ = cls.acall.__chaos_gate__ = True
    return "dspy.Tool.__call__"
