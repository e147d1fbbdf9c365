"""The agent side of an instrumented tool call: ask the worker's proxy, obey, report back.

This runs inside the agent's own interpreter and virtualenv, so it uses the standard
library only. One call is two loopback round trips (DESIGN-reach: the proxy holds the
schedule, the faults and the trace; the agent side only carries out what it is told):

    POST {CHAOS_GATE_FN_URL}/begin {id, tool, transport, framework, arguments}
        -> {"action": "run" | "raise" | "return", "sleep": s, ...}
    (the function runs, unless told not to)
    POST {CHAOS_GATE_FN_URL}/end {id, ok, type, value | error}
        -> {"action": "return" (unchanged) | "return" + value | "raise", "sleep": s}

Waits happen here, on the agent's own clock (asyncio.sleep in a coroutine, time.sleep
in a thread), never in the proxy: a hold there would block the agent's event loop and
hide the very timeouts under test. If the proxy cannot be reached, the call runs
unfaulted: instrumentation must never be what breaks an agent.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import threading
import urllib.parse
import uuid

_local = threading.local()
_URL = urllib.parse.urlsplit(os.environ.get("CHAOS_GATE_FN_URL", ""))
RUN = {"action": "run"}
KEEP = {"action": "return"}


def enabled() -> bool:
    return bool(_URL.netloc)


def _post(path: str, doc: dict, timeout: float = 30.0) -> dict | None:
    """One JSON POST on this thread's kept-alive connection; None when the proxy is away."""
    body = json.dumps(doc, default=repr).encode()
    for attempt in (0, 1):  # a kept-alive connection the proxy closed: once more on a new one
        conn = getattr(_local, "conn", None)
        if conn is None:
            conn = _local.conn = http.client.HTTPConnection(_URL.hostname, _URL.port, timeout=timeout)
        try:
            conn.request("POST", _URL.path.rstrip("/") + path, body, {"content-type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            return json.loads(data) if resp.status == 200 else None
        except (OSError, http.client.HTTPException, ValueError):
            conn.close()
            _local.conn = None
            if attempt:
                return None
    return None


def hello(seam: str, detail: dict | None = None) -> None:
    """Tell the worker which seam this process patched (the report's "what the gate reached")."""
    if enabled():
        _post("/hello", {"seam": seam, "pid": os.getpid(), **(detail or {})}, timeout=5.0)


def died(command: str, error: str, tail: str) -> None:
    """Tell the worker a tool server the agent started ended before it ever answered: its command,
    the error the agent's client saw and the end of the server's stderr (a start failure of its tools)."""
    if enabled():
        _post("/died", {"command": command[:300], "error": error[:500], "tail": tail[-3000:], "pid": os.getpid()},
              timeout=5.0)


def handoff(tool: str, agent: str) -> None:
    """Tell the worker the agent's framework handed the conversation to another of its agents (the
    tool the model called, the agent now answering): a handoff, not a tool call, so nothing to fault."""
    if enabled():
        _post("/handoff", {"tool": tool, "agent": agent, "pid": os.getpid()}, timeout=5.0)


def begin(tool: str, arguments, transport: str, framework: str, returns: str | None = None,
          hints: dict | None = None) -> tuple[str, dict]:
    """`returns`: what the tool gives back when known before it runs (str, json, mcp), for a
    fault that answers without running it; `hints`: {read_only, idempotent} where the tool says."""
    call_id = uuid.uuid4().hex
    doc = {"id": call_id, "tool": tool, "transport": transport, "framework": framework,
           "arguments": jsonable(arguments), "returns": returns, "hints": hints}
    return call_id, (_post("/begin", doc) or RUN)


def end(call_id: str, value=None, error: BaseException | None = None, encoded: tuple | None = None) -> dict:
    if error is not None:
        doc = {"id": call_id, "ok": False, "type": "error", "error": f"{type(error).__name__}: {error}"}
    else:
        vtype, payload = encoded if encoded is not None else encode(value)
        doc = {"id": call_id, "ok": True, "type": vtype, "value": payload}
    return _post("/end", doc) or KEEP


def jsonable(value):
    """Arguments as JSON values; what does not serialize (a run context, a client) is left out."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items() if _keep(v)}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value if _keep(v)]
    dump = getattr(value, "model_dump", None)
    if dump is not None and not isinstance(value, type):
        try:
            return dump(mode="json")
        except Exception:  # noqa: BLE001 - not a pydantic model after all
            return None
    return value if _keep(value) else None


def _keep(value) -> bool:
    if value is None or isinstance(value, (str, int, float, bool, list, tuple, dict)):
        return True
    return getattr(value, "model_dump", None) is not None and not isinstance(value, type) \
        and type(value).__name__ not in ("RunContext", "RunContextWrapper", "ToolContext")


def encode(value) -> tuple[str, object]:
    """(type, JSON payload) of a tool's return value, as the proxy's faults will see it."""
    if isinstance(value, str):
        return "str", value
    if isinstance(value, (bytes, bytearray)):
        return "bytes", base64.b64encode(bytes(value)).decode()
    if value is None or isinstance(value, (int, float, bool, list, dict)):
        try:
            json.dumps(value)
            return "json", value
        except (TypeError, ValueError):
            return "opaque", type(value).__name__
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        try:
            return "model", dump(mode="json")
        except Exception:  # noqa: BLE001 - any failure just means the value is opaque
            pass
    return "opaque", type(value).__name__


def decode(answer: dict, original):
    """The value a 'return' answer asks for: the original object when unchanged."""
    if "value" not in answer and not answer.get("empty"):
        return original
    if answer.get("empty"):
        return empty_like(original)
    value, kind = answer["value"], answer.get("as")
    if kind == "bytes":
        return base64.b64decode(value)
    if kind == "model" and isinstance(value, dict):
        try:
            return type(original).model_validate(value)
        except Exception:  # noqa: BLE001 - the drifted document no longer fits the model: hand over the dict
            return value
    return value


def empty_like(original):
    for kind, empty in ((str, ""), (bytes, b""), (dict, {}), (list, []), (tuple, ())):
        if isinstance(original, kind):
            return empty
    return None
