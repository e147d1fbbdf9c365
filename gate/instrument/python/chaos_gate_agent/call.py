"""One instrumented tool call, sync or async: the only place that carries out the proxy's answer.

A seam (one module per framework) says how its calls look: the transport, the
framework's name, how a value is encoded and decoded, and which exception a failure
raises there. It then calls `call_sync` / `call_async` with the tool's name, its
arguments and a thunk that runs the tool. Everything else is the same for every seam,
so a fault means the same on every framework, as it does on every wire.

A tool that calls another instrumented tool (a LangChain tool wrapping a function) is one
call: the outermost seam traces it, inner seams pass through (an adapter that is nothing but
the inner call steps aside itself: seams/langchain.py). A seam that knows its caller's read
timeout (an MCP session's) passes it as `give_up`: a wait the answer asks for past it ends
there with the client's own timeout error, as a server that said nothing would.

A seam never breaks the agent. If carrying out an answer fails in the seam's own code (a
name the installed library version does not have: ImportError, AttributeError, NameError,
TypeError), the call falls back to the untouched tool (run now if the answer had it not run,
its own value or exception kept otherwise) and the seam says so to the worker (`<seam>:failed`
with the error), which makes the run a harness error, never the agent's failure.
"""

from __future__ import annotations

import asyncio
import contextvars
import time

from chaos_gate_agent import client
from chaos_gate_agent.errors import exception_for

_inside: contextvars.ContextVar[bool] = contextvars.ContextVar("chaos_gate_inside_tool", default=False)


BROKEN = (ImportError, AttributeError, NameError, TypeError)  # the seam's code does not fit the library


class SeamBroken(Exception):
    """The seam, not the tool or the fault, failed while carrying out the worker's answer."""


class Seam:
    transport = "function"  # function | mcp-stdio | command
    framework = "python"
    name = ""  # the seam's name in the reach line (what its patch returned); the framework's when unset

    def encode(self, value):
        return client.encode(value)

    def decode(self, answer: dict, original):
        return client.decode(answer, original)

    def exception(self, answer: dict) -> BaseException:
        return exception_for(answer)


PLAIN = Seam()


def _active() -> bool:
    return client.enabled() and not _inside.get()


def _outcome(seam: Seam, answer: dict, original, cause: BaseException | None = None):
    """Raise or return what the answer says (after its sleep has been taken); SeamBroken when the seam's
    own code cannot (the caller falls back to the untouched tool)."""
    if answer.get("action") == "raise":
        raise _made(seam.exception, answer) from cause
    if cause is not None and "value" not in answer and not answer.get("empty"):
        raise cause
    return _made(lambda a: seam.decode(a, original), answer)


def _made(make, answer: dict):
    try:
        return make(answer)
    except BROKEN as exc:
        raise SeamBroken(f"{type(exc).__name__}: {exc}") from exc


FALLBACK = object()  # what _settled gives when the seam broke: the caller keeps the untouched call


def _settled(seam: Seam, tool: str, answer: dict, original, cause: BaseException | None = None):
    """`_outcome`, or FALLBACK once the worker has been told the seam broke (the run's result is then
    not the agent's to answer for: gate/instrument/calls.py)."""
    try:
        return _outcome(seam, answer, original, cause)
    except SeamBroken as broken:
        client.hello(f"{seam.name or seam.framework}:failed", {"error": str(broken)[:300], "tool": tool})
        return FALLBACK


def call_sync(seam: Seam, tool: str, arguments, run, returns: str | None = None, hints: dict | None = None):
    if not _active():
        return run()
    token = _inside.set(True)
    try:
        call_id, first = client.begin(tool, arguments, seam.transport, seam.framework, returns, hints)
        time.sleep(float(first.get("sleep") or 0))
        if first.get("action") != "run":
            got = _settled(seam, tool, first, None)
            return run() if got is FALLBACK else got
        try:
            value = run()
        except Exception as exc:  # noqa: BLE001 - reported, then re-raised unless a fault says otherwise
            answer = client.end(call_id, error=exc)
            time.sleep(float(answer.get("sleep") or 0))
            got = _settled(seam, tool, answer, None, exc)
            if got is FALLBACK:
                raise exc
            return got
        answer = client.end(call_id, encoded=seam.encode(value))
        time.sleep(float(answer.get("sleep") or 0))
        got = _settled(seam, tool, answer, value)
        return value if got is FALLBACK else got
    finally:
        _inside.reset(token)


async def _waited(seam: Seam, answer: dict, give_up: float | None) -> BaseException | None:
    """Take the answer's wait on the agent's clock. A wait past `give_up` (the agent's own client's read
    timeout, where the seam knows it) ends there with that client's timeout error, returned: what the
    client raises when the other side says nothing for that long (None: the whole wait was taken)."""
    sleep = float(answer.get("sleep") or 0)
    if give_up is None or sleep <= give_up:
        await asyncio.sleep(sleep)
        return None
    try:
        gave_up = seam.exception({"kind": "timeout", "message": f"Timed out while waiting for the response. "
                                                                f"Waited {give_up:g} seconds."})
    except BROKEN:  # the seam's error does not fit this library: the whole wait, as before
        gave_up = None
    await asyncio.sleep(give_up if gave_up is not None else sleep)
    return gave_up


async def call_async(seam: Seam, tool: str, arguments, run, returns: str | None = None,
                     hints: dict | None = None, give_up: float | None = None):
    """`run` is a zero-argument callable returning an awaitable; `give_up`: the caller's read timeout."""
    if not _active():
        return await run()
    token = _inside.set(True)
    try:
        call_id, first = client.begin(tool, arguments, seam.transport, seam.framework, returns, hints)
        gave_up = await _waited(seam, first, give_up)
        if gave_up is not None:
            if first.get("action") == "run":  # the worker waits for the call's end: it ended here
                client.end(call_id, error=gave_up)
            raise gave_up
        if first.get("action") != "run":
            got = _settled(seam, tool, first, None)
            return await run() if got is FALLBACK else got
        try:
            value = await run()
        except Exception as exc:  # noqa: BLE001 - reported, then re-raised unless a fault says otherwise
            answer = client.end(call_id, error=exc)
            gave_up = await _waited(seam, answer, give_up)
            if gave_up is not None:
                raise gave_up from exc
            got = _settled(seam, tool, answer, None, exc)
            if got is FALLBACK:
                raise exc
            return got
        answer = client.end(call_id, encoded=seam.encode(value))
        gave_up = await _waited(seam, answer, give_up)
        if gave_up is not None:
            raise gave_up
        got = _settled(seam, tool, answer, value)
        return value if got is FALLBACK else got
    finally:
        _inside.reset(token)


def wrap_function(fn, tool: str, seam: Seam = PLAIN):
    """`fn` wrapped so each call is instrumented; signature, annotations and sync-ness kept
    (frameworks build the tool's JSON Schema from them, following __wrapped__)."""
    import functools
    import inspect

    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None

    def arguments(args, kwargs):
        if signature is None:
            return {"args": list(args), **kwargs}
        try:
            bound = signature.bind_partial(*args, **kwargs)
        except TypeError:
            return {"args": list(args), **kwargs}
        return dict(bound.arguments)

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def async_wrapper(*args, **kwargs):
            return await call_async(seam, tool, arguments(args, kwargs), lambda: fn(*args, **kwargs))
        wrapper = async_wrapper
    else:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return call_sync(seam, tool, arguments(args, kwargs), lambda: fn(*args, **kwargs))
    wrapper.__chaos_gate__ = True
    return wrapper
