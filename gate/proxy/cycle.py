"""One request and its response on the proxy's server (gate/proxy/server.py): the `receive` and
`send` of ASGI's `http` scope, and the framing of the answer.

Kept apart from the connection because this is where the answer's bytes are shaped: the head
waits for the first body message of the same turn of the loop and leaves with it in one write
(a whole answer gets its length; a stream is chunked, or close-delimited for HTTP/1.0); only a
head followed by silence goes out alone. `receive` hands the body on only while the connection
can still carry the answer, and `send` never writes to a closing transport.
"""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate
from http import HTTPStatus

_STATUS_LINES = {s.value: f"HTTP/1.1 {s.value} {s.phrase}\r\n".encode() for s in HTTPStatus}
_DISCONNECT = {"type": "http.disconnect"}


def status_line(status: int) -> bytes:
    return _STATUS_LINES.get(status) or f"HTTP/1.1 {status} \r\n".encode()


class _Date:
    """The `date` header, formatted once a second (a real provider's answers carry one)."""

    second, value = 0, b""

    @classmethod
    def header(cls) -> bytes:
        now = int(time.time())
        if now != cls.second:
            cls.second, cls.value = now, b"date: " + formatdate(now, usegmt=True).encode() + b"\r\n"
        return cls.value


class Cycle:
    """One request and its response: the `receive` and `send` the app is called with."""

    def __init__(self, conn, scope: dict, keep_alive: bool, expect_continue: bool):  # conn: its _Connection
        self.conn, self.transport, self.scope = conn, conn.transport, scope
        self.keep_alive, self.expect_continue = keep_alive, expect_continue
        self.body: list[bytes] = []
        self.body_done = False
        self.body_given = False  # the last body message was handed to the app
        self.waiters: list[asyncio.Future] = []  # receive() calls waiting (a holding fault may add one)
        self.head: bytes | None = None  # written with the first body message, or alone at the next turn
        self.started = self.complete = False
        self.chunked = False
        self.remaining: int | None = None  # content-length still owed
        self.bodiless = scope["method"] == "HEAD"  # and, once the status is known, 1xx, 204 and 304
        self.http10 = scope["http_version"] == "1.0"  # no chunked framing: a stream is close-delimited
        self.cut = False  # the bytes after this request's head were not HTTP: its body never completes
        self.agent_gone = False  # the agent hung up before this answer was complete (the trace says so)

    def wake(self) -> None:
        if self.waiters:
            waiters, self.waiters = self.waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def receive(self) -> dict:
        while True:
            if self.cut or self.transport.is_closing():
                return _DISCONNECT  # the answer has nowhere to go: the body is not handed on whole
            if self.body:
                data = self.body[0] if len(self.body) == 1 else b"".join(self.body)
                self.body.clear()
                self.body_given = self.body_done
                return {"type": "http.request", "body": data, "more_body": not self.body_done}
            if self.body_done and not self.body_given:
                self.body_given = True
                return {"type": "http.request", "body": b"", "more_body": False}
            if self.body_given and self.complete:
                return _DISCONNECT
            if self.expect_continue and not self.started:
                self.expect_continue = False
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            await waiter

    async def send(self, message: dict) -> None:
        if self.conn.write_paused and not self.transport.is_closing():
            await self.conn.drained()  # the agent reads slowly (connection_lost wakes this too)
        if self.cut or self.transport.is_closing():
            return  # the agent hung up (or a fault dropped it): what is left of the answer goes nowhere
        if message["type"] == "http.response.start":
            if self.started:
                raise RuntimeError("the response was already started")
            self._start(message["status"], message.get("headers") or ())
        elif message["type"] == "http.response.body":
            if not self.started or self.complete:
                raise RuntimeError("a response body outside a response")
            self._body(message.get("body", b""), message.get("more_body", False))
        else:
            raise RuntimeError(f"unexpected ASGI message {message['type']!r}")

    def _start(self, status: int, headers) -> None:
        self.started = True
        lines = [status_line(status)]
        dated, count = False, 1  # lines of the head so far
        for name, value in headers:
            count += 1
            low = name.lower()
            if low == b"content-length":
                self.remaining = int(value)
            elif low == b"transfer-encoding":
                self.chunked = value.lower() == b"chunked"
            elif low == b"connection" and b"close" in value.lower():
                self.keep_alive = False
            dated = dated or low == b"date"
            lines += (low, b": ", value, b"\r\n")
        if not dated:
            lines.append(_Date.header())
            count += 1
        head = b"".join(lines)
        if head.count(b"\n") != count or head.count(b"\r") != count:
            # a name or value with a line break of its own (one check of the whole head: `b"\r" in x`
            # costs CPython a formatted TypeError per test before it searches)
            raise RuntimeError("a response header with a line break")
        self.bodiless = self.bodiless or status in (204, 304) or status < 200
        self.head = head  # finished by _framing (length or chunked) when the body comes
        asyncio.get_running_loop().call_soon(self._flush_head)

    def _framing(self, first: bytes, more: bool) -> bytes:
        """The head's last lines: a body that is all in its first message gets its length."""
        extra = b""
        if self.remaining is None and not self.chunked and not self.bodiless:
            if more and self.http10:
                self.keep_alive = False  # HTTP/1.0 has no chunked framing: the body ends with the connection
            elif more:
                self.chunked, extra = True, b"transfer-encoding: chunked\r\n"
            else:
                self.remaining, extra = len(first), b"content-length: %d\r\n" % len(first)
        if not self.keep_alive:
            extra += b"connection: close\r\n"
        return extra + b"\r\n"

    def _flush_head(self) -> None:
        """A head whose body did not follow in the same turn goes out alone (a stall after it)."""
        if self.head is not None and not self.transport.is_closing():
            head, self.head = self.head, None
            self.transport.write(head + self._framing(b"", True))

    def _body(self, data: bytes, more: bool) -> None:
        head = b""
        if self.head is not None:
            head, self.head = self.head + self._framing(data, more), None
        if self.bodiless:
            data = b""
        elif self.chunked:
            data = (b"%x\r\n%b\r\n" % (len(data), data) if data else b"") + (b"" if more else b"0\r\n\r\n")
        elif self.remaining is not None:
            if len(data) > self.remaining:
                raise RuntimeError("response content longer than its content-length")
            self.remaining -= len(data)
        if head or data:
            self.transport.write(head + data if head else data)
        if not more:
            if self.remaining and not self.bodiless:
                raise RuntimeError("response content shorter than its content-length")
            self.complete = True
            self.wake()
            self.conn.finished(self)
