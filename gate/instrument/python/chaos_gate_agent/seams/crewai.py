"""CrewAI tools (`crewai.tools.BaseTool`): each tool class's own `_run` / `_arun`.

`@tool` makes a `Tool` (its `func` is the body); a tool written as a class is a
`BaseTool` subclass with its own `_run`. CrewAI calls a tool in one of two ways:
native function calling hands the model's arguments to `tool.run(**args)` (the
executor's `available_functions`), the text (ReAct) path to the tool's
CrewStructuredTool, whose `func` is `tool._run`. `BaseTool.run` validates the
arguments, claims a use (`max_usage_count`) and calls `self._run`; `Tool.run` is the
same code calling `self.func` instead. So the seam is `_run`, wrapped on each class as
it is made (a hook on `BaseTool.__init_subclass__`), and `Tool.run` is pointed at
`BaseTool.run`, which then reaches `func` through the wrapped `Tool._run`: one call
on either path, after CrewAI's own validation and usage claim.

A fault raises where the body would, inside the executor's `try`: the model reads
CrewAI's own "Error executing tool: <error>" and the task counts a tool error (the
ReAct path's ToolUsage error handling, likewise). A value fault acts on what the body
returned, before CrewAI formats it for the model. Left alone: CrewAI's own tool
classes (delegation to a coworker, memory, MCP wrappers: the calls they make inside
are the ones to trace). Names, descriptions and the args schema are read off the
class and `func`, neither of which changes: the declaration is byte-identical.
"""

from __future__ import annotations

import asyncio
import functools
import inspect

from chaos_gate_agent.call import Seam, call_async, call_sync
from chaos_gate_agent.seams.subclasses import on_every_subclass, own_methods

METHODS = ("_run", "_arun")


class CrewAiSeam(Seam):
    framework = "crewai"


SEAM = CrewAiSeam()


def patch(module):
    """`module` is crewai.tools.base_tool, right after it ran (`Tool` exists, no user tool yet)."""
    base, made = module.BaseTool, module.Tool
    if not on_every_subclass(base, _instrument_class):
        return None

    @functools.wraps(made.run)
    def run(self, *args, **kwargs):  # Tool.run is BaseTool.run calling func, not _run: now through _run
        return base.run(self, *args, **kwargs)

    run.__chaos_gate__ = True
    made.run = run
    return "crewai.Tool.run"


def _own(cls) -> bool:
    """The agent's tool, not one of CrewAI's own (a `@tool` Tool is the agent's)."""
    module = getattr(cls, "__module__", "") or ""
    return cls.__name__ == "Tool" and module == "crewai.tools.base_tool" or not module.startswith("crewai.")


def _instrument_class(cls) -> None:
    if not _own(cls):
        return
    for name, fn in own_methods(cls, METHODS):
        setattr(cls, name, _wrap(fn))


def _settled(value):
    """A sync `_run` that handed back a coroutine (an async `func`): run, as BaseTool.run would."""
    return asyncio.run(value) if asyncio.iscoroutine(value) else value


def _wrap(fn):
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def wrapper(self, *args, **kwargs):
            return await call_async(SEAM, _name(self), _arguments(args, kwargs), lambda: fn(self, *args, **kwargs))
    else:
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            return call_sync(SEAM, _name(self), _arguments(args, kwargs), lambda: _settled(fn(self, *args, **kwargs)))
    wrapper.__chaos_gate__ = True
    return wrapper


def _name(tool) -> str:
    return str(getattr(tool, "name", None) or type(tool).__name__)


def _arguments(args: tuple, kwargs: dict) -> dict:
    return {"args": list(args), **kwargs} if args else dict(kwargs)
