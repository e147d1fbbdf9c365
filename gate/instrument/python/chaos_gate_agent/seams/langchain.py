"""LangChain tools (langchain-core `BaseTool`): each tool class's own `_run` / `_arun`.

`BaseTool.run()` / `arun()` parse and validate the model's arguments, call
`self._run(...)` / `await self._arun(...)` inside their own `try`, and only then wrap
the value into a ToolMessage. That inner call is the seam: `@tool`, `StructuredTool`,
`Tool` and custom subclasses all pass through it, and so do LangGraph's `ToolNode` and
`create_react_agent`, which call `tool.invoke`. So:

- a fault raises where the tool body would raise, inside run()'s `try`: the tool's
  `handle_tool_error` and ToolNode's `handle_tool_errors` are what get tested (a plain
  exception, as a failing HTTP call in a tool body gives, never a ToolException);
- a value fault acts on what `_run` returned, before the ToolMessage exists (for
  `response_format="content_and_artifact"`, on the content the model sees; the
  artifact stays the tool's).

The classes are wrapped as they are made (a hook on `BaseTool.__init_subclass__`),
each wrapper made by functools.wraps, so what LangChain reads off `_run` (injected
arguments, `run_manager`, the `RunnableConfig` parameter, the schema of a subclass
without `args_schema`) is read off the original: the JSON schema is byte-identical.
A class that only inherits `_run` keeps its parent's wrapper; a `_run` calling
`super()._run` (or `_arun` falling back to `_run` on a thread) is one call, since an
inner seam passes through.

A langchain-mcp-adapters tool over stdio is the one exception: its body is a single MCP
`tools/call` on a stdio session, which the `mcp` seam traces as what it is (`target:
mcp-stdio`, the server's own `isError` result for `error`, the client's own error for a
timeout, the session's read timeout bounding a hold). Traced here, it would be a
`functions` call whose MCP call passes through (a pin `target: mcp-stdio, tool: X`
would reach nothing, and a fault would bypass the adapter's own error handling), so
this seam passes it through and the call is one site, the MCP one.
"""

from __future__ import annotations

import functools
import inspect

from chaos_gate_agent import client
from chaos_gate_agent.call import Seam, call_async, call_sync
from chaos_gate_agent.seams.subclasses import on_every_subclass, own_methods

METHODS = ("_run", "_arun")


class LangChainSeam(Seam):
    framework = "langchain"


class ContentAndArtifact(LangChainSeam):
    """`(content, artifact)`: faults see the content the model is shown; the artifact is kept."""

    def encode(self, value):
        if isinstance(value, tuple) and len(value) == 2:
            return client.encode(value[0])
        return client.encode(value)

    def decode(self, answer, original):
        if isinstance(original, tuple) and len(original) == 2:
            return client.decode(answer, original[0]), original[1]
        return client.decode(answer, original), None  # answered without running: no artifact to keep


SEAM, PAIR = LangChainSeam(), ContentAndArtifact()


def patch(module):
    """`module` is langchain_core.tools.base, right after it ran (no tool class exists yet)."""
    if not on_every_subclass(module.BaseTool, lambda cls: _instrument_class(cls, module)):
        return None
    return "langchain_core.BaseTool._run"


def _instrument_class(cls, module) -> None:
    for name, fn in own_methods(cls, METHODS):
        setattr(cls, name, _wrap(fn, module))


def _wrap(fn, module):
    config_param = _config_param(fn, module)

    def seam_of(tool):
        return PAIR if getattr(tool, "response_format", None) == "content_and_artifact" else SEAM

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def wrapper(self, *args, **kwargs):
            if over_mcp_stdio(self):  # the mcp seam traces it (see above)
                return await fn(self, *args, **kwargs)
            return await call_async(seam_of(self), _name(self), _arguments(self, args, kwargs, config_param),
                                    lambda: fn(self, *args, **kwargs))
    else:
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            if over_mcp_stdio(self):
                return fn(self, *args, **kwargs)
            return call_sync(seam_of(self), _name(self), _arguments(self, args, kwargs, config_param),
                             lambda: fn(self, *args, **kwargs))
    wrapper.__chaos_gate__ = True
    return wrapper


def over_mcp_stdio(tool) -> bool:
    """A langchain-mcp-adapters tool whose call goes to an MCP server over stdio: its `coroutine` is the
    adapter's, holding either the session it calls (one the `mcp` seam marked stdio) or the connection
    it opens a session from per call (`"transport": "stdio"`). Anything unreadable is traced here."""
    run = getattr(tool, "coroutine", None)
    if not str(getattr(run, "__module__", "")).startswith("langchain_mcp_adapters"):
        return False
    held = _closure(run)
    session, connection = held.get("session"), held.get("connection")
    if session is not None:
        return bool(getattr(session, "_chaos_gate_stdio", False))
    return isinstance(connection, dict) and connection.get("transport") == "stdio"


def _closure(fn) -> dict:
    """The variables a nested function closes over, by name (an empty cell left out)."""
    out = {}
    names = getattr(getattr(fn, "__code__", None), "co_freevars", ())
    for name, cell in zip(names, getattr(fn, "__closure__", None) or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out


def _config_param(fn, module) -> str | None:
    """The parameter LangChain hands the RunnableConfig in (`config` on StructuredTool): not an argument."""
    try:
        return module._get_runnable_config_param(fn)
    except Exception:  # noqa: BLE001 - a langchain-core without it: `config` is its usual name
        return "config" if "config" in inspect.signature(fn).parameters else None


def _name(tool) -> str:
    return str(getattr(tool, "name", None) or type(tool).__name__)


def _arguments(tool, args: tuple, kwargs: dict, config_param: str | None) -> dict:
    """What the model asked for: the framework's own filter drops run_manager, callbacks and the
    injected arguments (InjectedToolArg, InjectedState, ToolRuntime), so they never key a call."""
    try:
        kept = tool._filter_injected_args(dict(kwargs))
    except Exception:  # noqa: BLE001 - an older langchain-core: drop what run() itself adds
        kept = {k: v for k, v in kwargs.items() if k not in ("run_manager", "callbacks")}
    if config_param:
        kept.pop(config_param, None)
    return {"args": list(args), **kept} if args else kept
