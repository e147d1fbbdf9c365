"""The `mcp` SDK client: `ClientSession.call_tool` on sessions over stdio.

An MCP server the agent spawns itself (pydantic-ai's `MCPToolset`, the Agents SDK's
`MCPServerStdio`, `stdio_client`) talks over pipes the proxy never sees, so the seam is
the client session. Sessions over HTTP are left alone: their `tools/call` already
crosses the proxy, and tracing it twice would double every count.

`stdio_client` is wrapped to mark the streams it yields; a session built on a marked
read stream is a stdio session, whether the stream is handed to `ClientSession` itself
(the `mcp` docs' client, fastmcp's transport under pydantic-ai's MCPToolset) or inside
the JSON-RPC dispatcher that mcp 2's `Client` builds (the Agents SDK's MCPServerStdio).
`list_tools` results are remembered for their `readOnlyHint` / `idempotentHint`
annotations, which `side_effect_once` honours. A hold is bounded by the session's read timeout,
which ends it with the client's own timeout error (call.py). Results cross as a JSON-RPC envelope, so
the proxy's MCP-aware faults (an `isError` result for `error`, a text item for `inject`)
work on them unchanged; failures the client itself would report raise its own error (`MCPError`
in mcp 2.x, `McpError` in 1.x: both majors are in use, and a seam that imported a name of one
only would break every MCP call of an agent on the other).

A server that ends before it answered `initialize` (it crashed on import, its interpreter
lacks a package) is reported to the worker with the end of its stderr, which the seam tees
(children.py), so the report names the start failure instead of "offered: none".
"""

from __future__ import annotations

import contextlib
import functools
import sys

from chaos_gate_agent import client
from chaos_gate_agent.call import Seam, call_async
from chaos_gate_agent.children import StderrTee

_STDIO_STREAMS: set[int] = set()  # id() of read streams stdio_client yielded (alive while their session is)
_ANSWERED: set[int] = set()  # those whose server answered `initialize`: it started
HINTS: dict[str, dict] = {}  # tool name -> {"read_only": bool, "idempotent": bool}


class McpSeam(Seam):
    transport = "mcp-stdio"
    framework = "mcp"
    name = "mcp.ClientSession.call_tool"

    def encode(self, value):
        dump = getattr(value, "model_dump", None)
        if dump is None:
            return super().encode(value)
        return "mcp", {"jsonrpc": "2.0", "id": 0, "result": dump(by_alias=True, mode="json", exclude_none=True)}

    def decode(self, answer, original):
        CallToolResult = _types().CallToolResult

        if answer.get("empty"):
            return CallToolResult(content=[])
        if "value" not in answer:
            return original
        envelope = answer["value"]
        error = envelope.get("error") if isinstance(envelope, dict) else None
        if isinstance(error, dict):  # a JSON-RPC error answer (`rpc_error`): what the client raises for one
            raise self.exception({"kind": "rpc", "code": error.get("code"), "message": error.get("message")})
        if isinstance(envelope, dict) and isinstance(envelope.get("result"), dict):
            return CallToolResult.model_validate(envelope["result"])
        raise self.exception({"kind": "protocol", "message": "the server's answer is not a JSON-RPC result"})

    def exception(self, answer):
        types = _types()
        code = {"timeout": getattr(types, "REQUEST_TIMEOUT", 408),  # mcp 1.x times out with HTTP's 408
                "connection": getattr(types, "CONNECTION_CLOSED", -32000),
                "protocol": types.PARSE_ERROR}.get(answer.get("kind"), types.INTERNAL_ERROR)
        return _mcp_error(int(answer.get("code") or code),
                          answer.get("message") or "tool call failed (injected by chaos-gate)")


def _types():
    """The protocol's types: a package of their own in mcp 2.x (`mcp_types`), `mcp.types` in 1.x."""
    try:
        import mcp_types

        return mcp_types
    except ImportError:
        from mcp import types

        return types


def _mcp_error(code: int, message: str) -> BaseException:
    """The error the client raises for a failed call: `MCPError(code=, message=)` in mcp 2.x, `McpError`
    around an `ErrorData` in 1.x."""
    from mcp.shared import exceptions

    if hasattr(exceptions, "MCPError"):
        return exceptions.MCPError(code=code, message=message)
    return exceptions.McpError(_types().ErrorData(code=code, message=message))


SEAM = McpSeam()


def patch_stdio(module):
    original = module.stdio_client

    @functools.wraps(original)
    @contextlib.asynccontextmanager
    async def stdio_client(server, errlog=None, *args, **kwargs):
        # the server's stderr through a tee (children.py), unless the agent sends it somewhere of its own
        tee = StderrTee() if errlog is None or errlog is sys.stderr else None
        read = None
        try:
            async with original(server, tee.file if tee else errlog, *args, **kwargs) as streams:
                read = id(streams[0])
                _STDIO_STREAMS.add(read)
                yield streams
        except BaseException as exc:
            if read not in _ANSWERED and not isinstance(exc, (GeneratorExit, KeyboardInterrupt)):
                _report_death(server, exc, tee)
            raise
        finally:
            _STDIO_STREAMS.discard(read)
            _ANSWERED.discard(read)
            if tee is not None:
                tee.close()

    module.stdio_client = stdio_client
    return "mcp.stdio_client"


def _report_death(server, exc: BaseException, tee) -> None:
    """A server that ended before it ever answered: a start failure of its tools, with its stderr's end."""
    command = " ".join(str(part) for part in [getattr(server, "command", "?"), *(getattr(server, "args", None) or [])])
    while getattr(exc, "exceptions", None):  # anyio's TaskGroup wraps the client's error (an exception group)
        exc = exc.exceptions[0]
    client.died(command, f"{type(exc).__name__}: {exc}", tee.tail() if tee is not None else "")


def _read_timeout(session, args: tuple, kwargs: dict) -> float | None:
    """The seconds this call's client waits for an answer before it raises its own timeout: the call's
    `read_timeout_seconds` (call_tool's third parameter), else the session's; a timedelta in mcp 1.x, a
    float in 2.x; None when it waits for ever. A hold the gate asks for ends there, as the real one would."""
    given = args[0] if args else kwargs.get("read_timeout_seconds")
    if given is None:
        given = getattr(session, "_session_read_timeout_seconds", None)
    seconds = given.total_seconds() if hasattr(given, "total_seconds") else given
    return float(seconds) if isinstance(seconds, (int, float)) and seconds > 0 else None


def patch_session(module):
    cls = module.ClientSession
    if getattr(cls.call_tool, "__chaos_gate__", False):
        return None
    init, call_tool, list_tools, initialize = cls.__init__, cls.call_tool, cls.list_tools, cls.initialize

    @functools.wraps(init)
    def __init__(self, read_stream=None, *args, **kwargs):
        init(self, read_stream, *args, **kwargs)
        if read_stream is None:  # mcp 2's `Client` (the Agents SDK's path) hands over a dispatcher instead
            read_stream = getattr(kwargs.get("dispatcher"), "_read_stream", None)
        self._chaos_gate_stdio = read_stream is not None and id(read_stream) in _STDIO_STREAMS
        self._chaos_gate_read = id(read_stream) if self._chaos_gate_stdio else None

    @functools.wraps(initialize)
    async def instrumented_initialize(self, *args, **kwargs):
        result = await initialize(self, *args, **kwargs)
        if getattr(self, "_chaos_gate_read", None) is not None:
            _ANSWERED.add(self._chaos_gate_read)  # the server started: a later failure is not a start failure
        return result

    @functools.wraps(call_tool)
    async def instrumented_call_tool(self, name, arguments=None, *args, **kwargs):
        if not getattr(self, "_chaos_gate_stdio", False):
            return await call_tool(self, name, arguments, *args, **kwargs)
        return await call_async(SEAM, name, arguments or {}, lambda: call_tool(self, name, arguments, *args, **kwargs),
                                returns="mcp", hints=HINTS.get(name), give_up=_read_timeout(self, args, kwargs))

    @functools.wraps(list_tools)
    async def instrumented_list_tools(self, *args, **kwargs):
        result = await list_tools(self, *args, **kwargs)
        if getattr(self, "_chaos_gate_read", None) is not None:
            _ANSWERED.add(self._chaos_gate_read)
        for tool in getattr(result, "tools", None) or []:
            notes = getattr(tool, "annotations", None)
            # None: the server did not say (snake_case attributes in mcp 2.x, camelCase in 1.x)
            read_only = getattr(notes, "read_only_hint", getattr(notes, "readOnlyHint", None))
            idempotent = getattr(notes, "idempotent_hint", getattr(notes, "idempotentHint", None))
            HINTS[tool.name] = {"read_only": read_only if isinstance(read_only, bool) else None,
                                "idempotent": bool(idempotent)}
        return result

    instrumented_call_tool.__chaos_gate__ = True
    cls.__init__, cls.call_tool, cls.list_tools = __init__, instrumented_call_tool, instrumented_list_tools
    cls.initialize = instrumented_initialize
    return "mcp.ClientSession.call_tool"
