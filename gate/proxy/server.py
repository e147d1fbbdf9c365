"""Serve a ProxyApp on a loopback socket bound up front: HTTP/1.1 from asyncio protocols whose
bytes go straight into llhttp (httptools), and the part of ASGI the proxy speaks.

Binding first means the port is known before the agent starts (its env vars point here). The
server is the gate's own, not uvicorn, because it sits on the path of every call the agent
makes, and a general server spent its time where the proxy needs none: a Python call per
request header, a regex per response header, default headers, and an answer's head and body
written as two sends (two segments, and often two wake-ups of the agent). Here a response's
head waits for the first body message of the same turn of the loop and goes out with it in one
write; only a head followed by silence (a fault that stalls after the status) goes out alone.
The client side is gate/transport/wire.py, built the same way.

What the app sees is ASGI's `http` scope, `receive` (the request body, then `http.disconnect`
once the agent hangs up or the response is over) and `send`. `send.__self__.transport` is the
connection's transport, so a fault can drop it (Exchange.abort). No websockets, no lifespan;
pipelined requests are answered one after another.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections import deque
from email.utils import formatdate
from http import HTTPStatus
from urllib.parse import unquote

import httptools

MAX_HEAD_BYTES = 1 << 20  # a request's URL and headers together: an agent's flood is refused with 431
_STATUS_LINES = {s.value: f"HTTP/1.1 {s.value} {s.phrase}\r\n".encode() for s in HTTPStatus}
_DISCONNECT = {"type": "http.disconnect"}


def _status_line(status: int) -> bytes:
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


class _Cycle:
    """One request and its response: the `receive` and `send` the app is called with."""

    def __init__(self, conn: "_Connection", scope: dict, keep_alive: bool, expect_continue: bool):
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

    def wake(self) -> None:
        if self.waiters:
            waiters, self.waiters = self.waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def receive(self) -> dict:
        while True:
            if self.body:
                data = self.body[0] if len(self.body) == 1 else b"".join(self.body)
                self.body.clear()
                self.body_given = self.body_done
                return {"type": "http.request", "body": data, "more_body": not self.body_done}
            if self.body_done and not self.body_given:
                self.body_given = True
                return {"type": "http.request", "body": b"", "more_body": False}
            if self.conn.gone or (self.body_given and self.complete):
                return _DISCONNECT
            if self.expect_continue and not self.started:
                self.expect_continue = False
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            await waiter

    async def send(self, message: dict) -> None:
        if self.conn.gone:
            return  # the agent hung up: what is left of the answer goes nowhere
        if self.conn.write_paused:
            await self.conn.drained()
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
        lines = [_status_line(status)]
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
            if more:
                self.chunked, extra = True, b"transfer-encoding: chunked\r\n"
            else:
                self.remaining, extra = len(first), b"content-length: %d\r\n" % len(first)
        if not self.keep_alive:
            extra += b"connection: close\r\n"
        return extra + b"\r\n"

    def _flush_head(self) -> None:
        """A head whose body did not follow in the same turn goes out alone (a stall after it)."""
        if self.head is not None and not self.conn.gone:
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


class _Connection(asyncio.Protocol):
    """One agent connection: llhttp parses what arrives; one cycle is served at a time."""

    def __init__(self, server: "ProxyServer"):
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.parsing: _Cycle | None = None  # the request whose bytes are arriving
        self.queue: deque[_Cycle] = deque()  # requests waiting for the one being answered
        self.serving: _Cycle | None = None
        self.gone = False
        self.peer = None
        self.write_paused = False
        self.read_paused = False
        self._drain: asyncio.Future | None = None
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._head_bytes = 0
        self._expect = False  # the request asked for `100 Continue` before it sends its body

    # -- asyncio ---------------------------------------------------------------------
    def connection_made(self, transport) -> None:
        self.transport = transport
        self.peer = transport.get_extra_info("peername")
        sock = transport.get_extra_info("socket")
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, AttributeError):
            pass
        self.server.connections.add(self)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._refuse(400, b"upgrades are not supported")
        except httptools.HttpParserError as exc:  # a callback's own error arrives as its context
            if isinstance(exc.__context__, _HeadTooLarge):
                self._refuse(431, b"request head too large")
            else:
                self._refuse(400, b"malformed HTTP request")

    def connection_lost(self, exc) -> None:
        self.gone = True
        self.server.connections.discard(self)
        for cycle in (self.serving, self.parsing, *self.queue):
            if cycle is not None:
                cycle.wake()
        self._wake_drain()

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        self._wake_drain()

    def _wake_drain(self) -> None:
        drain, self._drain = self._drain, None
        if drain is not None and not drain.done():
            drain.set_result(None)

    async def drained(self) -> None:
        if self._drain is None:
            self._drain = asyncio.get_running_loop().create_future()
        await self._drain

    def resume_reading(self) -> None:
        if self.read_paused and not self.gone:
            self.read_paused = False
            self.transport.resume_reading()

    # -- llhttp ----------------------------------------------------------------------
    def on_message_begin(self) -> None:
        self._url, self._headers, self._head_bytes, self._expect = b"", [], 0, False

    def on_url(self, url: bytes) -> None:
        self._url += url
        if len(self._url) > MAX_HEAD_BYTES:
            raise _HeadTooLarge()

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"expect":
            self._expect = value.lower() == b"100-continue"
        self._headers.append((name, value))
        self._head_bytes += len(name) + len(value)
        if self._head_bytes > MAX_HEAD_BYTES:
            raise _HeadTooLarge()

    def on_headers_complete(self) -> None:
        url = httptools.parse_url(self._url)
        raw_path = url.path or b"/"
        path = raw_path.decode("ascii", "replace")
        method = self.parser.get_method().decode("ascii", "replace")
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
                 "http_version": self.parser.get_http_version(), "scheme": "http", "method": method,
                 "path": unquote(path) if "%" in path else path, "raw_path": raw_path, "root_path": "",
                 "query_string": url.query or b"", "headers": self._headers,
                 "server": (self.server.advertise, self.server.port), "client": self.peer}
        cycle = self.parsing = _Cycle(self, scope, self.parser.should_keep_alive(), self._expect)
        if self.serving is None:
            self._serve(cycle)
        else:  # pipelined: answered after the one in progress; read no further meanwhile
            self.queue.append(cycle)
            self.read_paused = True
            self.transport.pause_reading()

    def on_body(self, body: bytes) -> None:
        cycle = self.parsing
        cycle.body.append(bytes(body))
        cycle.wake()

    def on_message_complete(self) -> None:
        cycle, self.parsing = self.parsing, None
        cycle.body_done = True
        cycle.wake()

    # -- serving ---------------------------------------------------------------------
    def _serve(self, cycle: _Cycle) -> None:
        self.serving = cycle
        task = asyncio.get_running_loop().create_task(self._run(cycle))
        self.server.tasks.add(task)
        task.add_done_callback(self.server.tasks.discard)

    async def _run(self, cycle: _Cycle) -> None:
        try:
            await self.server.app(cycle.scope, cycle.receive, cycle.send)
        except asyncio.CancelledError:
            self._close()
            raise
        except Exception:  # an app error: never a traceback on the agent's connection
            cycle.head = None  # a head it started is not sent on
        if not cycle.complete:  # failed, or returned without finishing its answer
            if cycle.head is not None:
                cycle._flush_head()
            self._refuse(500, b"Internal Server Error")  # the status only if no head went out

    def finished(self, cycle: _Cycle) -> None:
        """The response is complete: the next request, or the end of the connection."""
        if not cycle.keep_alive or self.server.closing:
            self._close()
            return
        self.serving = None
        if self.queue:
            self._serve(self.queue.popleft())
        if not self.queue and self.read_paused:  # the next request's body may still be arriving
            self.resume_reading()

    def _refuse(self, status: int, why: bytes) -> None:
        if not self.gone and (self.serving is None or not self.serving.started):
            self.transport.write(_status_line(status) + b"content-type: text/plain\r\ncontent-length: %d\r\n"
                                 b"connection: close\r\n\r\n%b" % (len(why), why))
        self._close()

    def _close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def shutdown(self) -> None:
        """The gate is stopping: close now if idle, else after the answer in progress."""
        if self.serving is None:
            self._close()
        else:
            self.serving.keep_alive = False


class _HeadTooLarge(Exception):
    pass


class ProxyServer:
    def __init__(self, app, bind: str = "127.0.0.1", advertise: str | None = None):
        self.app = app
        self.advertise = advertise or bind
        # proto IPPROTO_TCP: the accepted sockets get TCP_NODELAY (without it every response can pay a
        # 40 ms Nagle + delayed-ACK stall); connections set it again themselves
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((bind, 0))
        self.port = self.sock.getsockname()[1]
        self.connections: set[_Connection] = set()
        self.tasks: set[asyncio.Task] = set()
        self.closing = False
        self._server: asyncio.AbstractServer | None = None

    @property
    def url(self) -> str:
        return f"http://{self.advertise}:{self.port}"

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Connection(self), sock=self.sock, backlog=2048)

    async def stop(self) -> None:
        """Stop accepting; close idle connections, and the others once their answer is out."""
        self.closing = True
        if self._server is not None:
            self._server.close()
            for conn in list(self.connections):
                conn.shutdown()
            self._server = None
        self.sock.close()
