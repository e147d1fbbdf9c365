"""Google ADK function tools: `FunctionTool._invoke_callable`, when it calls the tool's own function.

A plain function in `Agent(tools=[fn])` becomes a `FunctionTool` (so do
`LongRunningFunctionTool` and the other subclasses). ADK's flow calls
`tool.run_async(args=..., tool_context=...)`, which validates the model's arguments
(a validation error goes back to the model unrun), checks mandatory ones and any
confirmation, then awaits `self._invoke_callable(self.func, args)`, which runs the
function (a sync one in ADK's own way). That call, with `target is self.func`, is the
seam; `_invoke_callable` of a confirmation predicate is left alone.

A fault raises where the function would, inside ADK's tool caller: its
`on_tool_error_callback`s (a plugin's, then the agent's) may answer with a response
for the model; without one ADK re-raises and the run fails, as it does for a real
failure. A value fault acts on what the function returned, before ADK wraps a
non-dict into `{"result": ...}` and before the after-tool callbacks.

ADK runs on google-genai, whose own seam (automatic function calling) is loaded with
it but never reached here: ADK calls its tools itself, and a tool is traced once, by
this seam (an inner seam, were one reached, passes through). The declaration is built
from `func` and the tool's fields, untouched: byte-identical.
"""

from __future__ import annotations

import functools

from chaos_gate_agent.call import Seam, call_async


class AdkSeam(Seam):
    framework = "google-adk"


SEAM = AdkSeam()


def patch(module):
    """`module` is google.adk.tools.function_tool."""
    cls = module.FunctionTool
    if getattr(cls._invoke_callable, "__chaos_gate__", False):
        return None
    invoke = cls._invoke_callable

    @functools.wraps(invoke)
    async def _invoke_callable(self, target, args_to_call):
        if target is not self.func:
            return await invoke(self, target, args_to_call)
        context = getattr(self, "_context_param_name", None) or "tool_context"
        arguments = {k: v for k, v in args_to_call.items() if k != context}
        return await call_async(SEAM, str(self.name), arguments, lambda: invoke(self, target, args_to_call))

    _invoke_callable.__chaos_gate__ = True
    cls._invoke_callable = _invoke_callable
    return "google-adk.FunctionTool.run_async"
