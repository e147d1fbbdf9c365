"""Agno function tools: the entrypoint a `FunctionCall` runs.

An Agno tool (a plain function in `tools=[...]`, `@tool`, a Toolkit method) is a
`Function` whose `entrypoint` is the body behind pydantic's `validate_call`. The model
asks, Agno makes one `FunctionCall` per call, and `FunctionCall.execute()` (or its
async twin `aexecute()`) runs the pre-hook, looks up its cache, runs the `tool_hooks`
chain around the entrypoint, then the post-hook. The seam is that entrypoint, for one
call: `_execute` / `_aexecute` (3.1.4 on; `execute` / `aexecute` themselves before, tested
back to 1.4.2) run on a FunctionCall whose `function` is, for their
duration, a copy with the entrypoint instrumented (the agent's Function, shared by
every call, is never changed). So:

- a fault raises where the body raises: a tool hook sees it as the body's exception;
  Agno's own `except Exception` logs "Could not run function ...", and the model is sent
  `str(error)` as the tool's content (its `tool_call_error` flag stays on Agno's side);
- a value fault acts on what the entrypoint returned, before hooks after it and Agno's
  formatting see it; a cache hit runs no entrypoint, so no call is traced;
- a generator tool (streamed output) is left alone: its body runs as Agno iterates it.

The arguments traced are those the entrypoint is called with, less the objects Agno
injects (agent, run_context: not JSON values, so the trace leaves them out). Names,
descriptions and parameters come from the Function, untouched: the declaration is
byte-identical.
"""

from __future__ import annotations

import contextlib
import functools
import inspect

from chaos_gate_agent.call import Seam, wrap_function


class AgnoSeam(Seam):
    framework = "agno"


SEAM = AgnoSeam()


def _swapped(call):
    """The call's Function, as a copy with its entrypoint instrumented (None: leave this call alone)."""
    function = call.function
    entrypoint = getattr(function, "entrypoint", None)
    if entrypoint is None or getattr(entrypoint, "__chaos_gate__", False) or \
            inspect.isgeneratorfunction(entrypoint) or inspect.isasyncgenfunction(entrypoint):
        return None
    wrapped = wrap_function(entrypoint, str(function.name), SEAM)
    mine = function.model_copy()  # Agno's own shallow copy: callables and run state by reference
    mine.entrypoint = wrapped
    return mine


@contextlib.contextmanager
def _instrumented(call):
    """For the duration: `call.function` is the instrumented copy (if the call is one to instrument)."""
    mine, own = _swapped(call), call.function
    if mine is not None:
        call.function = mine
    try:
        yield
    finally:
        call.function = own


def patch(module):
    """`module` is agno.tools.function."""
    cls = module.FunctionCall
    # 3.1.4 split the work of execute()/aexecute() into _execute/_aexecute; before, they were it
    names = ("_execute", "_aexecute") if hasattr(cls, "_execute") else ("execute", "aexecute")
    if getattr(getattr(cls, names[0]), "__chaos_gate__", False):
        return None
    execute, aexecute = getattr(cls, names[0]), getattr(cls, names[1])

    @functools.wraps(execute)
    def _execute(self):
        with _instrumented(self):
            return execute(self)

    @functools.wraps(aexecute)
    async def _aexecute(self):
        with _instrumented(self):
            return await aexecute(self)

    _execute.__chaos_gate__ = _aexecute.__chaos_gate__ = True
    setattr(cls, names[0], _execute)
    setattr(cls, names[1], _aexecute)
    return "agno.FunctionCall.execute"
