"""One request from the agent to an upstream, and the primitives faults are written with.

A fault never touches ASGI or sockets directly: it forwards, responds, streams,
holds or aborts through this class, which also keeps the trace entry honest
(status, bytes, whether the request reached the upstream, the note to show).

Honesty lives here too: the upstream's answer is digested as the fault reads it and
what the agent receives is digested as it is written, so after `apply` the proxy can
tell whether the fault changed anything at all (`changed()`), whatever the fault says.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any
from collections.abc import AsyncIterator

from gate.proxy.trace import TraceEntry
from gate.proxy.usage import UsageMeter

SHOWN_BYTES = 4096  # response bytes kept per exchange for the HTML trace viewer
TAIL_BYTES = 256  # the last response bytes kept when there are more than SHOWN_BYTES (tool_answers.py)
WHOLE_BYTES = 1 << 16  # a length-delimited answer up to this size is relayed whole, in one write
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate", "host", "content-encoding"}


@dataclass
class RequestInfo:
    kind: str  # llm | tool
    name: str  # upstream name
    provider: str  # openai | anthropic | generic | http | mcp
    method: str
    path: str
    model: str | None = None
    tool: str | None = None
    stream: bool = False
    rpc_id: Any = None
    rpc_method: str | None = None
    dialect: str | None = None  # the LLM wire dialect of this request (gate/dialects), if any
    operation: str | None = None  # generate | count_tokens | models | embeddings
    batch: tuple = ()  # a JSON-RPC batch: each message's {"method", "tool", "id"} (gate/proxy/routes.py)
    doc: Any = field(default=None, repr=False, compare=False)  # the body as parsed by routes.py (read, never changed)
    turn: int | None = None  # a conversation's turn in flight when the request arrived (None: a single input)


class WholeBody:
    """A body that is all here already (an in-process upstream's JSON answer): iterated like a
    stream, or handed over at once by `arrived_whole`, like a real upstream's small answer."""

    def __init__(self, data: bytes):
        self.data: bytes | None = data

    def arrived_whole(self) -> bytes | None:
        data, self.data = self.data, None
        return data

    async def __aiter__(self):
        if self.data is not None:
            data, self.data = self.data, None
            yield data


class UpstreamResponse:
    """Status, headers and a body iterator, from a real upstream or the sim."""

    def __init__(self, status: int, headers: list[tuple[str, str]], chunks: AsyncIterator[bytes], close=None,
                 length: int | None = None):
        """`length`: the content-length the upstream declared (a hop header, so not in `headers`)."""
        self.status, self.headers, self._chunks, self._close = status, headers, chunks, close
        self.length = length
        self.note = ""
        self.fallback: str | None = None  # the sim: why this answer is not what a rule scripted (sim/script.py)
        self._body: bytes | None = None
        # What was read of the body, digested as it streams by (bounded memory), when an exchange
        # whose fault is judged asks for it (`watch`): the honesty check compares it with what the
        # agent was sent. A call no fault touched is not judged, and not digested.
        self.seen = None
        self.exhausted = False
        self.tap = None  # (chunk, is_sse) -> None: the usage meter reads what the upstream sent
        self._content_type: str | None = None

    def watch(self) -> UpstreamResponse:
        """Digest what is read from here on (before the first byte of the body)."""
        self.seen = hashlib.sha256(f"{self.status}\n".encode())
        return self

    @property
    def content_type(self) -> str:
        if self._content_type is None:  # asked several times per exchange: found once
            self._content_type = next((v for k, v in self.headers if k.lower() == "content-type"), "")
        return self._content_type

    @property
    def is_sse(self) -> bool:
        return "text/event-stream" in self.content_type

    def small(self) -> bool:
        """A length-delimited answer of at most WHOLE_BYTES: the agent can use none of it before
        its last byte, so it is relayed whole, however the upstream split it into writes."""
        return self.length is not None and self.length <= WHOLE_BYTES

    async def _pull(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks:
            if self.seen is not None:
                self.seen.update(chunk)
            if self.tap is not None:
                self.tap(chunk, self.is_sse)
            yield chunk
        self.exhausted = True

    def arrived_whole(self) -> bytes | None:
        """The whole body if the upstream's answer is already here (digested and metered as if
        streamed), else None: only a real upstream's small answers are, never a stream."""
        whole = getattr(self._chunks, "arrived_whole", None)
        body = whole() if whole is not None and self._body is None else None
        if body is not None:
            if self.seen is not None:
                self.seen.update(body)
            if self.tap is not None:
                self.tap(body, self.is_sse)
            self.exhausted = True
            self._body = body
        return body

    async def chunks(self) -> AsyncIterator[bytes]:
        if self._body is not None:
            yield self._body
            return
        async for chunk in self._pull():
            yield chunk

    async def read(self) -> bytes:
        if self._body is None:
            self._body = b"".join([c async for c in self._pull()])
        return self._body

    async def json(self) -> Any:
        return json.loads(await self.read())

    async def aclose(self) -> None:
        if self._close is not None:
            await self._close()


class Aborted(Exception):
    """Raised after the connection to the agent was dropped on purpose."""


class Exchange:
    def __init__(self, info: RequestInfo, headers: list[tuple[str, str]], body: bytes, send, upstream,
                 entry: TraceEntry, run_state, receive=None, honest: bool = True):
        """`honest`: a fault acts on this exchange, so whether it changed what the agent got is
        judged (`changed`); a plain relay skips the digests that takes."""
        self.info, self.headers, self.body, self._send = info, headers, body, send
        self.upstream, self.entry, self.run, self._receive = upstream, entry, run_state, receive
        self.started = False
        self.completed = False  # the response ended cleanly (not dropped)
        self.delayed = 0.0  # seconds of deliberate delay before the answer
        self.response: UpstreamResponse | None = None
        self.sent = hashlib.sha256() if honest else None
        self.inapplicable: str | None = None
        self.meter = None  # a UsageMeter once a generating LLM call is forwarded

    # -- honesty ------------------------------------------------------------------
    def not_applicable(self, reason: str) -> None:
        """The fault met an answer it cannot alter; the caller passes the answer through."""
        self.inapplicable = reason

    def changed(self) -> bool:
        """Did the agent get something other than the upstream's answer, as it was sent?"""
        if self.sent is None:
            raise RuntimeError("changed() asked of an exchange made without honest=True")
        resp = self.response
        if resp is None or self.delayed > 0:
            return True  # withheld from the upstream, or delivered late on purpose
        if not resp.exhausted:
            return True  # the fault never passed on the rest of the answer
        return (resp.seen.digest(), True) != (self.sent.digest(), self.completed)

    # -- request side -------------------------------------------------------------
    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None

    async def forward(self) -> UpstreamResponse:
        """Send the request upstream (the upstream really executes it)."""
        self.entry.forwarded = True
        self.response = await self.upstream.send(self.info, self.headers, self.body)
        if self.sent is not None:
            self.response.watch()
        self.meter = UsageMeter.for_request(self.info, self.body, self.response.status)
        if self.meter is not None:
            self.response.tap = self.meter.feed
        if self.response.note:  # what an in-process upstream (the sim) has to say about this request
            self.note(self.response.note)
        self.entry.sim_fallback = self.response.fallback
        return self.response

    # -- response side ------------------------------------------------------------
    async def start(self, status: int, headers: list[tuple[str, str]] | dict | None = None,
                    content_type: str | None = None, length: int | None = None) -> None:
        pairs, given_type = [], None
        for k, v in (headers.items() if isinstance(headers, dict) else headers or ()):  # one pass: a hot path
            low = k.lower()
            if low in HOP_BY_HOP:
                continue
            if low == "content-type" and given_type is None:
                given_type = v
            pairs.append((k, v))
        if content_type and given_type is None:
            pairs.append(("content-type", content_type))
            given_type = content_type
        if length is not None:
            pairs.append(("content-length", str(length)))
        self.entry.status = status
        self.entry.content_type = given_type or ""
        self.started = True
        if self.run.record:  # the headers a replay must send back (gate.replay.recorder)
            self.entry.extra["headers"] = pairs
        if self.sent is not None:
            self.sent.update(f"{status}\n".encode())
        await self._send({"type": "http.response.start", "status": status,
                          "headers": [(k.encode("latin-1"), str(v).encode("latin-1")) for k, v in pairs]})

    async def write(self, data: bytes, last: bool = False) -> None:
        """Send `data` on; `last`: it ends the response (one message where write + finish take two)."""
        if not data:
            if last:
                await self.finish()
            return
        self.entry.bytes_out += len(data)
        if self.sent is not None:
            self.sent.update(data)
        if self.run.record:
            self.entry.response_chunks.append(data)
        shown = self.entry.extra.get("shown", b"")
        if len(shown) < SHOWN_BYTES:  # a bounded excerpt of what the agent got, for report.html
            self.entry.extra["shown"] = shown + data[:SHOWN_BYTES - len(shown)]
        if self.entry.bytes_out > SHOWN_BYTES:  # and its end, so an answer longer than that is judged whole
            self.entry.extra["tail"] = (self.entry.extra.get("tail", b"") + data[-TAIL_BYTES:])[-TAIL_BYTES:]
        await self._send({"type": "http.response.body", "body": data, "more_body": not last})
        if last:
            self._finished()

    async def finish(self) -> None:
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})
        self._finished()

    def _finished(self) -> None:
        self.completed = True
        self.entry.extra["closed"] = True  # a clean end, not a drop (kept in recorded sessions)

    async def respond(self, status: int, body: bytes, headers: dict | list | None = None,
                      content_type: str | None = "application/json") -> None:
        await self.start(status, headers, content_type, length=len(body))
        await self.write(body, last=True)

    async def respond_json(self, status: int, doc: Any, headers: dict | None = None) -> None:
        await self.respond(status, json.dumps(doc).encode(), headers)

    async def pipe(self, resp: UpstreamResponse) -> None:
        """Relay an upstream response as it arrives, without buffering it whole; an answer that
        is already here whole, or small and length-delimited (not an event stream), goes out with
        its length in one write: no chunked framing, one wake-up of the agent, not three."""
        plain = resp.status not in (204, 304) and self.info.method != "HEAD" and not resp.is_sse
        whole = resp.arrived_whole() if plain else None
        if whole is None and plain and resp.small():
            whole = await resp.read()
        if whole is not None:
            await resp.aclose()
            return await self.respond(resp.status, whole, resp.headers, content_type=None)
        await self.start(resp.status, resp.headers)
        try:
            async for chunk in resp.chunks():
                await self.write(chunk)
        finally:
            await resp.aclose()
        await self.finish()

    async def delay(self, seconds: float) -> None:
        """Wait before answering (the fake clock moves with it)."""
        self.delayed += seconds
        self.entry.extra["delay_ms"] = round(self.delayed * 1000, 1)  # replayed as recorded
        await self.run.advance_clock(seconds)
        await asyncio.sleep(self.run.real(seconds))

    async def hold(self, seconds: float) -> None:
        """Keep the connection open and silent, at most `seconds`, never past the cell.

        The note says how the hold ended (deterministic for a deterministic agent);
        how long it really lasted is measured into `entry.extra["held_ms"]`."""
        began = time.monotonic()
        ended = await self._hold_until(self.run.real(seconds))
        self.entry.extra["held_ms"] = round((time.monotonic() - began) * 1000 * self.run.scale, 1)  # agent time
        self.entry.extra["hold_ended"] = ended  # a replay holds for the time, or until the agent gives up
        self.note({"full": f"held the full {seconds:g}s", "gone": "held until the agent gave up",
                   "over": "held until the cell ended"}[ended])

    async def _hold_until(self, seconds: float) -> str:
        waits = {asyncio.ensure_future(asyncio.sleep(seconds)): "full",
                 asyncio.ensure_future(self.run.over.wait()): "over"}
        if self._receive is not None:
            waits[asyncio.ensure_future(self._client_gone())] = "gone"
        done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        return min((waits[t] for t in done), key=["gone", "over", "full"].index)

    async def _client_gone(self) -> None:
        """Return when the agent closes the connection (its body was already read)."""
        while (await self._receive())["type"] != "http.disconnect":
            pass

    async def abort(self, note: str = "connection dropped") -> None:
        """Drop the connection without (the rest of) a response."""
        self.entry.note = (self.entry.note + " " + note).strip()
        cycle = getattr(self._send, "__self__", None)
        transport = getattr(cycle, "transport", None)
        if transport is not None:
            transport.abort()
            raise Aborted()
        # Fallback for servers that hide the transport: promise more than we send.
        if not self.started:
            await self.start(200, content_type="application/json", length=1 << 20)
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})
        raise Aborted()

    def note(self, text: str) -> None:
        self.entry.note = (self.entry.note + " " + text).strip()


async def plain_json(send, status: int, doc: dict) -> None:
    """A whole JSON answer of the proxy's own (not an upstream's), straight onto ASGI `send`."""
    body = json.dumps(doc).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
