"""pydantic-ai: function tools, at the toolset that calls them.

Every Python function tool (`@agent.tool`, `@agent.tool_plain`, `Tool(...)`,
`tools=[...]`, a `FunctionToolset` of one's own) is called by
`FunctionToolset.call_tool`, which awaits the tool's `call_func` (its FunctionSchema,
which runs the body, a sync one in a thread). The seam swaps `call_func` for an
instrumented one on a copy of the tool, for that call only, so a fault is raised where a
failing body raises: inside the toolset's own timeout (`timeout=` turns a TimeoutError
into `ModelRetry`), and inside the tool manager's error path (a plain exception fails
the run unless a capability's `on_tool_execute_error` recovers it; `ModelRetry` and
`ToolFailed` are the ones a body raises on purpose, so no fault raises them).

MCP toolsets are other toolsets: their calls are the `mcp` seam's (stdio) or cross the
proxy (HTTP). Tool names, descriptions and schemas come from `get_tools`, untouched.
"""

from __future__ import annotations

import copy
import functools

from chaos_gate_agent.call import Seam, call_async


class PydanticAiSeam(Seam):
    transport = "function"
    framework = "pydantic-ai"


SEAM = PydanticAiSeam()


def patch(module):
    """`pydantic_ai.toolsets.function`."""
    cls = module.FunctionToolset
    if getattr(cls.call_tool, "__chaos_gate__", False):
        return None
    call_tool = cls.call_tool

    @functools.wraps(call_tool)
    async def instrumented_call_tool(self, name, tool_args, ctx, tool, *args, **kwargs):
        body = getattr(tool, "call_func", None)
        if body is None:  # not a FunctionToolsetTool: the toolset's own assertion says so
            return await call_tool(self, name, tool_args, ctx, tool, *args, **kwargs)

        async def call_func(arguments, run_ctx):
            return await call_async(SEAM, name, arguments, lambda: body(arguments, run_ctx))

        mine = copy.copy(tool)  # a dataclass: a shallow copy keeps every field but the one swapped
        mine.call_func = call_func
        return await call_tool(self, name, tool_args, ctx, mine, *args, **kwargs)

    instrumented_call_tool.__chaos_gate__ = True
    cls.call_tool = instrumented_call_tool
    return "pydantic-ai.FunctionToolset.call_tool"
