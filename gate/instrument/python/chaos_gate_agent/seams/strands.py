"""Strands Agents `@tool` functions: the function `DecoratedFunctionTool.stream` calls.

`@tool` (and a plain function in `Agent(tools=[fn])`) makes a DecoratedFunctionTool.
Strands' executor runs the BeforeToolCall hooks, then iterates `tool.stream(tool_use,
invocation_state)`, which validates the model's input against the function's
signature, injects the special parameters (`agent`, `tool_context`), calls
`self._tool_func` (a sync one on a thread, `asyncio.to_thread`) and yields the result
as a ToolResult. The seam is that call: each `stream` runs on a shallow copy of the
tool whose `_tool_func` is instrumented for that call only.

A fault raises where the function would, inside `stream`'s own `try`: the model is sent
Strands' error result (`status: "error"`, "Error: <Type> - <message>"), and the
AfterToolCall hooks see the exception. A value fault acts on what the function
returned, before Strands wraps it into content blocks. An async-generator tool (its
events streamed as it runs) is left alone. The arguments traced are those the
function is called with, less the injected `agent` / `tool_context` (not JSON values).

The tool spec (name, description, JSON schema) comes from the tool's metadata, built
when `@tool` ran, untouched: byte-identical.
"""

from __future__ import annotations

import copy
import functools
import inspect

from chaos_gate_agent.call import Seam, wrap_function


class StrandsSeam(Seam):
    framework = "strands"


SEAM = StrandsSeam()


def patch(module):
    """`module` is strands.tools.decorator."""
    cls = module.DecoratedFunctionTool
    if getattr(cls.stream, "__chaos_gate__", False):
        return None
    stream = cls.stream

    @functools.wraps(stream)
    async def instrumented_stream(self, tool_use, invocation_state, **kwargs):
        fn = getattr(self, "_tool_func", None)
        if fn is None or inspect.isasyncgenfunction(fn):
            async for event in stream(self, tool_use, invocation_state, **kwargs):
                yield event
            return
        name = str(tool_use.get("name") or getattr(self, "tool_name", None) or fn.__name__)
        mine = copy.copy(self)
        mine._tool_func = wrap_function(fn, name, SEAM)
        async for event in stream(mine, tool_use, invocation_state, **kwargs):
            yield event

    instrumented_stream.__chaos_gate__ = True
    cls.stream = instrumented_stream
    return "strands.DecoratedFunctionTool.stream"
