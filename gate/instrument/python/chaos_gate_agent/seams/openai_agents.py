"""The OpenAI Agents SDK (`openai-agents`): function tools, at the place the SDK invokes them.

`@function_tool` builds a FunctionTool whose `on_invoke_tool` is the SDK's
`_FailureHandlingFunctionToolInvoker`: it parses the model's JSON arguments, runs the
body, and turns an exception from the body into a message for the model ("An error
occurred while running the tool...") through the tool's `failure_error_function`. The
seam wraps the invoker's implementation *inside* that handler, so an injected failure
takes the path a real one takes: the model reads the SDK's own error text, a
`failure_error_function=None` tool fails the run, a `timeout=` tool's `asyncio.wait_for`
sees an injected hold.

A FunctionTool built by hand (`FunctionTool(..., on_invoke_tool=fn)`) has no such
handler: its `on_invoke_tool` is the body, and the SDK's documented behaviour for an
exception there is a failed run. The seam instruments it for the duration of one call,
on a shallow copy of the tool, so the agent's own object is never changed. The function
the runner invokes it through is `_invoke_function_tool_with_metadata` since 0.19 and
`invoke_function_tool` from 0.10.4 (where the failure-handling invoker appeared) to 0.18;
the seam wraps whichever the installed SDK has (same keyword-only signature). Before 0.10.4
`@function_tool` closed over its handler, with nothing to patch: the seam reports itself failed.

Left alone: MCP tools (the `mcp` seam, or the proxy on the wire, traces their call),
agent-as-tool and Codex tools (their nested runs' own tool calls are the ones to trace).
Names, descriptions and JSON schemas are not touched: nothing here runs before a call.

Handoffs (`transfer_to_<agent>`) are no tool calls: the runner switches agents in-process, so
they are reported, never faulted. `patch_handoffs` wraps `Handoff.get_transfer_message`, which
the runner calls once per handoff taken, with the agent it now runs: the worker hears the handoff
even when the history the next agent gets no longer shows it (`nest_handoff_history`, an input
filter), which the proxy's reading of the requests (gate/dialects/handoffs.py) could not see.
"""

from __future__ import annotations

import copy
import functools
import json
import sys

from chaos_gate_agent import client
from chaos_gate_agent.call import Seam, call_async


class AgentsSeam(Seam):
    transport = "function"
    framework = "openai-agents"


SEAM = AgentsSeam()


def _own(tool) -> bool:
    """A tool whose body is the agent's own code."""
    if tool is None or getattr(tool, "_mcp_tool_binding", None) is not None:
        return False
    if getattr(tool, "_is_agent_tool", False) or getattr(tool, "_is_codex_tool", False):
        return False
    origin = getattr(getattr(tool, "_tool_origin", None), "type", None)
    return getattr(origin, "value", origin) in (None, "function")


def _arguments(text):
    """The model's JSON arguments as a dict; None when they do not parse (the SDK rejects them
    before the body runs, so that attempt is no tool call)."""
    if not text:
        return {}
    try:
        doc = json.loads(text)
    except (TypeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else {"input": doc}


def _instrumented(run, name: str):
    """`run(ctx, input)` as one instrumented call of tool `name`."""

    async def invoke(ctx, text):
        arguments = _arguments(text)
        if arguments is None:
            return await run(ctx, text)
        return await call_async(SEAM, name, arguments, lambda: run(ctx, text))

    return invoke


def patch(module):
    """`agents.tool`: the failure-handling invoker of `@function_tool` tools, and the function
    through which the runner invokes every FunctionTool (for tools built by hand)."""
    invoker_cls = module._FailureHandlingFunctionToolInvoker
    if getattr(invoker_cls.__call__, "__chaos_gate__", False):
        return None
    handled_call = invoker_cls.__call__
    # the function the runner invokes every FunctionTool through: its name since 0.19, and before
    invoke_name = "_invoke_function_tool_with_metadata"
    if not hasattr(module, invoke_name):
        invoke_name = "invoke_function_tool"
    invoke_with_metadata = getattr(module, invoke_name)

    @functools.wraps(handled_call)  # the SDK reads the invoker's signature to pick the context it passes
    async def __call__(self, ctx, input):
        tool = self._function_tool
        if not _own(tool):
            return await handled_call(self, ctx, input)
        # a copy of the invoker for this call, its implementation instrumented: the exception a
        # fault raises leaves the implementation, inside the SDK's own try, as a body's would
        inner = copy.copy(self)
        inner._invoke_tool_impl = _instrumented(self._invoke_tool_impl, getattr(ctx, "tool_name", None) or tool.name)
        return await handled_call(inner, ctx, input)

    @functools.wraps(invoke_with_metadata)
    async def _invoke_function_tool_with_metadata(*, function_tool, context, arguments):
        raw = function_tool.on_invoke_tool
        if isinstance(raw, invoker_cls) or not _own(function_tool):
            return await invoke_with_metadata(function_tool=function_tool, context=context, arguments=arguments)
        # hand-built: its on_invoke_tool is the body; instrument it on a copy of the tool for this
        # call only (FunctionTool.__copy__ would re-run __post_init__; the runner only reads fields)
        clone = object.__new__(type(function_tool))
        clone.__dict__.update(function_tool.__dict__)
        clone.on_invoke_tool = functools.wraps(raw)(_instrumented(raw, function_tool.name))
        return await invoke_with_metadata(function_tool=clone, context=context, arguments=arguments)

    __call__.__chaos_gate__ = True
    invoker_cls.__call__ = __call__
    setattr(module, invoke_name, _invoke_function_tool_with_metadata)
    # the runner imports the invoke function by name: rebind it if it did so while agents.tool ran
    executing = sys.modules.get("agents.run_internal.tool_execution")
    if getattr(executing, invoke_name, None) is invoke_with_metadata:
        setattr(executing, invoke_name, _invoke_function_tool_with_metadata)
    return "openai-agents.function_tool"


def patch_handoffs(module):
    """`agents.handoffs`: report each handoff taken; the handoff itself runs untouched. No seam name:
    the reach line names the handoffs themselves."""
    cls = getattr(module, "Handoff", None)
    original = getattr(cls, "get_transfer_message", None)
    if original is None or getattr(original, "__chaos_gate__", False):
        return None

    @functools.wraps(original)
    def get_transfer_message(self, agent):
        message = original(self, agent)
        try:
            client.handoff(str(getattr(self, "tool_name", "") or ""), str(getattr(agent, "name", "") or ""))
        except Exception:  # noqa: BLE001 - a report that cannot be made never breaks the agent's handoff
            pass
        return message

    get_transfer_message.__chaos_gate__ = True
    cls.get_transfer_message = get_transfer_message
    return None
