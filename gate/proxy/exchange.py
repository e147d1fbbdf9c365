"""One request from the agent to an upstream, and the primitives faults are written with.

A fault never touches ASGI or sockets directly: it forwards, responds, streams,
holds or aborts through this class, which also keeps the trace entry honest
(status, bytes, whether the request reached the upstream, the note to show).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, AsyncIterator

from gate.proxy.trace import TraceEntry

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


class UpstreamResponse:
    """Status, headers and a body iterator, from a real upstream or the sim."""

    def __init__(self, status: int, headers: list[tuple[str, str]], chunks: AsyncIterator[bytes], close=None):
        self.status, self.headers, self._chunks, self._close = status, headers, chunks, close
        self._body: bytes | None = None

    @property
    def content_type(self) -> str:
        return next((v for k, v in self.headers if k.lower() == "content-type"), "")

    @property
    def is_sse(self) -> bool:
        return "text/event-stream" in self.content_type

    async def chunks(self) -> AsyncIterator[bytes]:
        if self._body is not None:
            yield self._body
            return
        async for chunk in self._chunks:
            yield chunk

    async def read(self) -> bytes:
        if self._body is None:
            self._body = b"".join([c async for c in self._chunks])
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
                 entry: TraceEntry, run_state):
        self.info, self.headers, self.body, self._send = info, headers, body, send
        self.upstream, self.entry, self.run = upstream, entry, run_state
        self.started = False

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
        return await self.upstream.send(self.info, self.headers, self.body)

    # -- response side ------------------------------------------------------------
    async def start(self, status: int, headers: list[tuple[str, str]] | dict | None = None,
                    content_type: str | None = None, length: int | None = None) -> None:
        pairs = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        pairs = [(k, v) for k, v in pairs if k.lower() not in HOP_BY_HOP]
        if content_type and not any(k.lower() == "content-type" for k, _ in pairs):
            pairs.append(("content-type", content_type))
        if length is not None:
            pairs.append(("content-length", str(length)))
        self.entry.status = status
        self.entry.content_type = next((v for k, v in pairs if k.lower() == "content-type"), "")
        self.started = True
        await self._send({"type": "http.response.start", "status": status,
                          "headers": [(k.encode("latin-1"), str(v).encode("latin-1")) for k, v in pairs]})

    async def write(self, data: bytes) -> None:
        if data:
            self.entry.bytes_out += len(data)
            if self.run.record:
                self.entry.response_chunks.append(data)
            await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def finish(self) -> None:
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def respond(self, status: int, body: bytes, headers: dict | list | None = None,
                      content_type: str = "application/json") -> None:
        await self.start(status, headers, content_type, length=len(body))
        await self.write(body)
        await self.finish()

    async def respond_json(self, status: int, doc: Any, headers: dict | None = None) -> None:
        await self.respond(status, json.dumps(doc).encode(), headers)

    async def pipe(self, resp: UpstreamResponse) -> None:
        """Relay an upstream response as it arrives, without buffering it whole."""
        await self.start(resp.status, resp.headers)
        try:
            async for chunk in resp.chunks():
                await self.write(chunk)
        finally:
            await resp.aclose()
        await self.finish()

    async def hold(self, seconds: float) -> None:
        """Keep the connection open and silent, at most `seconds`, never past the cell."""
        self.entry.note = (self.entry.note + f" held {seconds:g}s").strip()
        await self.run.wait_or_end(seconds)

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
