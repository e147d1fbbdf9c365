"""An in-process tool call as an Exchange: the same fault code acts on it as on the wire.

A fault is written against the proxy's Exchange (forward, respond, hold, abort; see
gate/proxy/exchange.py). FunctionExchange gives those primitives their in-process
meaning, so `timeout_after_write`, `inject` or `schema_drift` need no second version:

- `forward()` tells the agent to run the function (the begin call's answer), then waits
  for its result (the end call) and hands it to the fault as the upstream's answer: a
  JSON, text or bytes body, or an MCP result inside a JSON-RPC envelope.
- `respond()` / `write()` collect what the fault answers; when the answer is complete it
  becomes an instruction: keep the function's own value (the answer is unchanged),
  return a new one (decoded back to the value's type), or raise.
- `hold()` / `delay()` become a wait the agent takes on its own clock, `abort()` a raised
  timeout (after a hold) or connection error.

A rewrite the value cannot take (bytes into a dict, anything into an object that does
not serialize) is `not_applicable` with its reason, and the agent keeps its value.
"""

from __future__ import annotations

import asyncio
import base64
import json

from gate.proxy.exchange import Aborted, Exchange, UpstreamResponse, WholeBody

END_WAIT_CAP = 3600.0  # a function that never reports back is given up with the run, at the latest

MEDIA = {"str": "text/plain; charset=utf-8", "json": "application/json", "model": "application/json",
         "mcp": "application/json", "bytes": "application/octet-stream", "error": "text/plain; charset=utf-8",
         "opaque": "application/x-chaos-gate-opaque"}


class FunctionCall:
    """The two halves of one call, met by id: the begin answer and the end exchange."""

    def __init__(self, doc: dict):
        self.doc = doc
        self.first: asyncio.Future = asyncio.get_running_loop().create_future()  # begin's answer
        self.result: asyncio.Future = asyncio.get_running_loop().create_future()  # the end call's body
        self.final: asyncio.Future = asyncio.get_running_loop().create_future()  # end's answer
        self.task: asyncio.Task | None = None  # the exchange, running in the proxy


def annotate(entry, doc: dict, provider: str) -> None:
    """What the trace keeps of an in-process call beyond an HTTP exchange's fields."""
    entry.extra["transport"] = str(doc.get("transport") or "function")
    if doc.get("framework"):
        entry.extra["framework"] = str(doc["framework"])
    hints = doc.get("hints") if isinstance(doc.get("hints"), dict) else {}
    if isinstance(hints.get("read_only"), bool):  # what the server said; else the name decides (contracts/writes.py)
        entry.extra["read_only"] = hints["read_only"]
    if hints.get("idempotent"):
        entry.extra["idempotent"] = True


def body_of(vtype: str, value) -> bytes:
    """The bytes a fault reads for a returned value of this type (the agent's report is untrusted:
    what does not decode is an opaque value, never an error in the proxy)."""
    try:
        if vtype in ("str", "error"):
            return str(value).encode("utf-8", "replace")
        if vtype == "bytes":
            return base64.b64decode(value if isinstance(value, (str, bytes)) else b"", validate=True)
        if vtype == "opaque":
            return b""
        return json.dumps(value).encode()
    except (ValueError, TypeError):
        return b""


class FunctionExchange(Exchange):
    def __init__(self, info, headers, body, call: FunctionCall, upstream, entry, run_state, receive=None,
                 honest: bool = True):
        # always honest: whether the answer changed decides if the agent keeps its own value (_decode)
        super().__init__(info, headers, body, self._collect, upstream, entry, run_state, receive)
        self.call = call
        self.sleep = 0.0  # seconds the agent waits before acting on the next answer
        self.answer: dict = {"status": None, "headers": [], "body": []}
        self.vtype = call.doc.get("returns") or "str"  # until the function ran: what it says it returns
        annotate(entry, call.doc, info.provider)

    # -- the agent runs the function -------------------------------------------------
    async def forward(self) -> UpstreamResponse:
        self.entry.forwarded = True
        self._instruct({"action": "run"})
        opened = getattr(self.run, "open_functions", None)  # wire calls made meanwhile are within this one
        if opened is not None:
            opened.append(self.entry)
        try:
            got = await self._wait(self.call.result)
        finally:
            if opened is not None and self.entry in opened:
                opened.remove(self.entry)
        if got is None:
            raise Aborted()
        self.vtype = got.get("type") if got.get("type") in MEDIA else "opaque"
        status = 200 if got.get("ok") else 500
        self.response = UpstreamResponse(status, [("content-type", MEDIA.get(self.vtype, MEDIA["opaque"]))],
                                         WholeBody(body_of(self.vtype, got.get("value", got.get("error", ""))))).watch()
        return self.response

    async def _wait(self, future: asyncio.Future):
        over = asyncio.ensure_future(self.run.over.wait())
        try:
            done, _ = await asyncio.wait({future, over}, timeout=END_WAIT_CAP, return_when=asyncio.FIRST_COMPLETED)
        finally:
            over.cancel()
        return future.result() if future in done else None

    def _instruct(self, answer: dict) -> None:
        """Answer the begin call (before the function ran) or the end call (after)."""
        answer = {**answer, "sleep": round(self.sleep, 3)} if self.sleep else answer
        self.sleep = 0.0
        target = self.call.first if not self.call.first.done() else self.call.final
        if not target.done():
            target.set_result(answer)

    async def respond(self, status: int, body: bytes, headers=None, content_type: str | None = "application/json"):
        """A value fault (a 2xx answer) acts on what the function returned, so the function runs
        first; a failure (4xx/5xx, or an MCP error result) is raised without running it, as the
        wire never forwards it."""
        if self.response is None and status < 400 and not _is_failure(body) and not self.call.first.done():
            await self.forward()
            await self.response.read()
        await super().respond(status, body, headers, content_type)

    # -- waits are the agent's ---------------------------------------------------------
    async def hold(self, seconds: float) -> None:
        self.sleep += seconds
        self.entry.extra["held_ms"] = round(seconds * 1000, 1)
        self.entry.extra["hold_ended"] = "full"
        self.note(f"the tool call waited {seconds:g}s")

    async def delay(self, seconds: float) -> None:
        self.delayed += seconds
        self.sleep += seconds
        self.entry.extra["delay_ms"] = round(self.delayed * 1000, 1)
        await self.run.advance_clock(seconds)

    async def abort(self, note: str = "connection dropped") -> None:
        self.entry.note = (self.entry.note + " " + note).strip()
        if self.sleep or self.entry.extra.get("held_ms"):
            kind, message = "timeout", "the tool call timed out (injected by chaos-gate)"
        elif self.started:
            kind, message = "connection", "the tool's answer was cut off (injected by chaos-gate)"
            partial = b"".join(self.answer["body"])  # a command shim writes what did arrive
            self._instruct({"action": "raise", "kind": kind, "message": message,
                            "partial": base64.b64encode(partial).decode()})
            raise Aborted()
        else:
            kind, message = "connection", "the tool's connection was reset (injected by chaos-gate)"
        self.entry.status = None
        self._instruct({"action": "raise", "kind": kind, "message": message})
        raise Aborted()

    # -- what the fault answers ----------------------------------------------------------
    async def _collect(self, message: dict) -> None:
        if message["type"] == "http.response.start":
            self.answer["status"] = message["status"]
            self.answer["headers"] = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message["headers"]]
            return
        self.answer["body"].append(message.get("body", b""))
        if not message.get("more_body"):
            self._instruct(self._decode())

    def _unchanged(self, status: int, body: bytes) -> bool:
        resp = self.response
        if resp is None or self.delayed:
            return False
        return resp.status == status and resp.seen.digest() == self.sent.digest()

    def _decode(self) -> dict:
        status, body = self.answer["status"] or 200, b"".join(self.answer["body"])
        if self._unchanged(status, body):
            return {"action": "return"}  # the agent keeps its own value (or its own exception)
        media = next((v for k, v in self.answer["headers"] if k.lower() == "content-type"), "")
        if status >= 400:
            return _raise_for(status, body, self.entry.retry_after)
        try:
            return decode_value(self.vtype, media, body)
        except NotApplicable as exc:
            self.not_applicable(str(exc))
            return {"action": "return"}


def _is_failure(body: bytes) -> bool:
    """An MCP error answer (an `isError` result or a JSON-RPC error): a failure, not a value."""
    if not body.startswith(b"{") or body.find(b'"jsonrpc"') < 0:
        return False
    try:
        doc = json.loads(body)
    except ValueError:
        return False
    result = doc.get("result") if isinstance(doc, dict) else None
    return isinstance(doc, dict) and ("error" in doc or (isinstance(result, dict) and bool(result.get("isError"))))


class NotApplicable(Exception):
    pass


def _raise_for(status: int, body: bytes, retry_after) -> dict:
    text = body.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
        err = doc.get("error", doc) if isinstance(doc, dict) else doc
        text = (err.get("message") if isinstance(err, dict) else None) or (err if isinstance(err, str) else text)
    except ValueError:
        pass
    kind = {404: "not_found", 429: "rate_limit"}.get(status, "error")
    message = f"{status}: {text}" + (f" (retry after {retry_after:g}s)" if retry_after is not None else "")
    return {"action": "raise", "kind": kind, "message": message[:2000], "status": status}


def decode_value(vtype: str, media: str, body: bytes) -> dict:
    """The instruction that hands the agent what a fault's 2xx answer means for a value of `vtype`."""
    if vtype == "opaque":
        raise NotApplicable("the tool returned an object that does not serialize to JSON, so its value cannot "
                            "be rewritten")
    if not body:
        return {"action": "return", "empty": True}
    binary = media.startswith("application/octet-stream")
    if vtype == "bytes":
        return {"action": "return", "value": base64.b64encode(body).decode(), "as": "bytes"}
    if binary and vtype in ("json", "model", "error"):
        raise NotApplicable(f"a {'structured' if vtype != 'error' else 'raised'} value cannot carry raw bytes")
    if binary and vtype == "mcp":
        return {"action": "raise", "kind": "protocol", "message": "the MCP server sent bytes that are not a "
                                                                  "JSON-RPC message (injected by chaos-gate)"}
    text = body.decode("utf-8", "replace") if not binary else body.decode("latin-1")
    if vtype in ("str", "error"):
        return {"action": "return", "value": text, "as": "str"}
    try:
        doc = json.loads(body)
    except ValueError:
        if vtype == "mcp":  # worded as the server's failure: "... is not valid JSON" reads as the call's bad arguments
            return {"action": "raise", "kind": "protocol",
                    "message": "the MCP server's answer could not be parsed (injected by chaos-gate)"}
        return {"action": "return", "value": text, "as": "str"}  # a cut document reaches the agent as text
    return {"action": "return", "value": doc, "as": vtype}
