"""The Anthropic SDK's function tools: `BetaFunctionTool.call` / `BetaAsyncFunctionTool.call`.

`@beta_tool` / `@beta_async_tool` make these objects; the tool runner
(`client.beta.messages.tool_runner(...)`, sync and async, streamed or not) and the
session runner run a model's `tool_use` block as `tool.call(tool_use.input)`, which
checks the input, validates it with pydantic and calls the function. `call` is the
seam: the input the model sent is the call's arguments, its return value (a string or
a list of content blocks) is what value faults act on, before the runner wraps it as
a `tool_result` block.

The runner's tool-error path (`_run_tool`) catches every Exception `call` raises:
a `ToolError` gives its own content, anything else `repr(exc)` (cut to the field
limit), both as `{"type": "tool_result", "is_error": true}`, after a
`log.exception("Error occurred while calling tool: ...")`. It never raises to the
caller. An injected failure raises from `call`, so it takes the path a failing tool
body takes (a plain exception, as a failed HTTP call gives, not a ToolError). Invalid
input also fails inside `call` (ValueError "Invalid arguments for function ..."), so
such a call is traced too, as one that failed.

The tool's definition (`to_dict()`: name, description, input_schema) is built from
the function when the decorator runs and is not touched: it is byte-identical.
"""

from __future__ import annotations

import functools

from chaos_gate_agent.call import Seam, call_async, call_sync


class AnthropicToolSeam(Seam):
    framework = "anthropic"


SEAM = AnthropicToolSeam()


def _name(tool) -> str:
    return str(getattr(tool, "name", None) or type(tool).__name__)


def patch(module):
    """`module` is anthropic.lib.tools._beta_functions."""
    sync_cls, async_cls = module.BetaFunctionTool, module.BetaAsyncFunctionTool
    if getattr(sync_cls.call, "__chaos_gate__", False):
        return None
    call, acall = sync_cls.call, async_cls.call

    @functools.wraps(call)
    def instrumented_call(self, input):
        return call_sync(SEAM, _name(self), input if isinstance(input, dict) else {"input": input},
                         lambda: call(self, input))

    @functools.wraps(acall)
    async def instrumented_acall(self, input):
        return await call_async(SEAM, _name(self), input if isinstance(input, dict) else {"input": input},
                                lambda: acall(self, input))

    instrumented_call.__chaos_gate__ = instrumented_acall.__chaos_gate__ = True
    sync_cls.call, async_cls.call = instrumented_call, instrumented_acall
    return "anthropic.BetaFunctionTool.call"
