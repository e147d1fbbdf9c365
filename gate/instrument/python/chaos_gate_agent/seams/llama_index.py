"""LlamaIndex function tools: the function `FunctionTool.call` / `acall` runs.

`FunctionTool.from_defaults(fn)` (and a plain function in `FunctionAgent(tools=[fn])`,
`ReActAgent`, `AgentWorkflow`) keeps the body as `_fn` and an async twin `_async_fn`
(a sync body on a thread, or an async one run to completion). `call` / `acall` merge
the defaults and partial params, run that function, parse its return into content
blocks, let the tool's `callback` override it, and hand back a ToolOutput. The seam
is the function call inside them: each `call` / `acall` runs on a shallow copy of the
tool whose `_fn` / `_async_fn` is instrumented for that call only (parallel calls of
one tool never share a swapped attribute; the agent's tool object is never changed).

A fault raises where the body would, out of `acall`: the agent workflow's `_call_tool`
turns it into `ToolOutput(content=str(error), is_error=True)`, which the model reads
as the tool's answer (ReActAgent: as its Observation). A value fault acts on the raw
return, before LlamaIndex parses it and before the callback sees it. The arguments
traced are the caller's keywords without the workflow Context parameter.

The tool's name, description and `fn_schema` live in its metadata, untouched: the
declaration is byte-identical.
"""

from __future__ import annotations

import copy
import functools

from chaos_gate_agent.call import Seam, call_async, call_sync


class LlamaIndexSeam(Seam):
    framework = "llama-index"


SEAM = LlamaIndexSeam()


def _name(tool) -> str:
    try:
        return str(tool.metadata.get_name())
    except Exception:  # noqa: BLE001 - a tool without metadata: its class
        return type(tool).__name__


def _arguments(tool, args: tuple, kwargs: dict) -> dict:
    kept = {k: v for k, v in kwargs.items() if k != getattr(tool, "ctx_param_name", None)}
    return {"args": list(args), **kept} if args else kept


def patch(module):
    """`module` is llama_index.core.tools.function_tool."""
    cls = module.FunctionTool
    if getattr(cls.call, "__chaos_gate__", False):
        return None
    call, acall = cls.call, cls.acall

    @functools.wraps(call)
    def instrumented_call(self, *args, **kwargs):
        body, name, arguments = self._fn, _name(self), _arguments(self, args, kwargs)
        mine = copy.copy(self)
        mine._fn = lambda *a, **k: call_sync(SEAM, name, arguments, lambda: body(*a, **k))
        return call(mine, *args, **kwargs)

    @functools.wraps(acall)
    async def instrumented_acall(self, *args, **kwargs):
        body, name, arguments = self._async_fn, _name(self), _arguments(self, args, kwargs)

        async def run(*a, **k):
            return await call_async(SEAM, name, arguments, lambda: body(*a, **k))

        mine = copy.copy(self)
        mine._async_fn = run
        return await acall(mine, *args, **kwargs)

    instrumented_call.__chaos_gate__ = instrumented_acall.__chaos_gate__ = True
    cls.call, cls.acall = instrumented_call, instrumented_acall
    return "llama-index.FunctionTool.call"
