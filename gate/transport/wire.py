"""The gate's HTTP/1.1 client: asyncio protocols, responses parsed by httptools.

Every agent invocation and every proxied LLM and tool call goes through it, so it is on the
hot path of the agent under test. httpx's general-purpose stack (anyio, httpcore, h11 in
Python) costs over a millisecond per request here; asyncio's streams a tenth of one, in
buffering and waking that a parser fed straight from the socket does not need. So each
connection is a Protocol: the bytes go into llhttp (C) as they arrive, the request waits on
one future, the body is handed out as it arrives. It does one thing: one request, one
streamed response, keep-alive pooling per origin, TLS when https.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections import defaultdict
from urllib.parse import urlsplit

import httptools

from gate.transport.tls import tls_context

HIGH_WATER = 1 << 18  # body bytes held for a reader that is behind: reading pauses above this


class WireError(Exception):
    """The upstream could not be reached or broke the protocol."""


class _Stale(Exception):
    """A pooled keep-alive connection was closed by the upstream before it answered a byte."""


class _Response:
    """Callbacks for httptools: headers, and body bytes not yet handed to the caller."""

    def __init__(self):
        self.headers: list[tuple[str, str]] = []
        self.headers_done = False
        self.pending: list[bytes] = []
        self.held = 0  # bytes in `pending`
        self.complete = False
        self.keep_alive = False
        self.parser: httptools.HttpResponseParser | None = None

    def on_header(self, name: bytes, value: bytes):
        self.headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self):
        self.headers_done = True

    def on_body(self, body: bytes):
        self.pending.append(bytes(body))
        self.held += len(body)

    def on_message_complete(self):
        # Asked here: once the message is complete llhttp resets for the next one, and
        # should_keep_alive() then answers False, which once sent every request on a new connection.
        self.keep_alive = self.parser.should_keep_alive()
        self.complete = True

    def take(self) -> bytes:
        """Everything that has arrived, as one chunk (coalescing never waits for more data)."""
        data = self.pending[0] if len(self.pending) == 1 else b"".join(self.pending)
        self.pending.clear()
        self.held = 0
        return data


class _Answer(_Response):
    """A response whose headers nobody reads (an agent's answer to its invocation): without an
    `on_header`, llhttp makes no call into Python per header."""

    on_header = None  # type: ignore[assignment]


class Connection(asyncio.Protocol):
    """One connection. Bytes that arrive go to the current response's parser; whoever waits for
    them (`arrival`) is woken. Bytes with no response to go to, or after the end of one, make the
    connection unfit to be used again: it is closed, never pooled."""

    def __init__(self):
        self.transport: asyncio.Transport | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.response: _Response | None = None
        self.waiter: asyncio.Future | None = None
        self.closed = False  # the peer closed (or the bytes broke the protocol)
        self.error: Exception | None = None  # what llhttp said about the bytes
        self.received = False  # a byte of the current response arrived
        self.paused = False
        self.reused = False  # taken from the keep-alive pool (it may have been closed meanwhile)

    def connection_made(self, transport) -> None:
        self.transport = transport
        # asked once: on Python 3.11 every get_running_loop() is a getpid() system call
        self.loop = asyncio.get_running_loop()

    def data_received(self, data: bytes) -> None:
        response = self.response
        if response is None or response.complete:
            self.closed = True  # an answer nobody asked for: this connection's framing is lost
            self.transport.close()
        else:
            self.received = True
            try:
                response.parser.feed_data(data)
            except httptools.HttpParserError as exc:
                self.error, self.closed = exc, True
                self.transport.close()
            if response.held > HIGH_WATER and not self.paused:
                self.paused = True
                self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.closed = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def arrival(self) -> asyncio.Future:
        """A future done when something arrives or the connection ends (a future, not a coroutine:
        awaited on every request and every streamed chunk)."""
        self.waiter = self.loop.create_future()
        return self.waiter

    def resume(self) -> None:
        if self.paused and not self.closed:
            self.paused = False
            self.transport.resume_reading()

    def usable(self) -> bool:
        return not self.closed and not self.transport.is_closing()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class WireBody:
    """A response body, iterated as its bytes arrive (each `async for` continues where the last stopped)."""

    def __init__(self, conn: Connection, response: _Response, head_only: bool):
        self.conn, self.response, self.head_only = conn, response, head_only
        self.broken = False

    def arrived_whole(self) -> bytes | None:
        """The whole body if it came in with the headers (the usual small JSON answer), else None.
        A relay can then answer with a length in one write instead of chunk by chunk."""
        if self.head_only or not self.response.complete:
            return None
        return self.response.take()

    def __aiter__(self):
        return self._chunks()

    async def _chunks(self):
        response, conn = self.response, self.conn
        while True:
            if response.pending:
                data = response.take()
                conn.resume()
                yield data
                continue  # more may have come in meanwhile: hand it out before waiting
            if response.complete or self.head_only:
                return
            if conn.closed:  # closed (or broken) before the message was complete
                self.broken = True
                return
            await conn.arrival()


@functools.lru_cache(maxsize=1024)
def _route(url: str) -> tuple[tuple[str, str | None, int], str, str]:
    """((scheme, host, port), request target, Host header) of `url`, parsed once per distinct URL:
    a run sends thousands of requests to a handful of URLs. ValueError for a bad port."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return (parts.scheme, parts.hostname, port), target, parts.netloc


class WireClient:
    """Keep-alive pool of HTTP/1.1 connections, keyed by (scheme, host, port)."""

    def __init__(self, connect_timeout: float = 10.0):
        self.idle: dict[tuple, list[Connection]] = defaultdict(list)
        self.connect_timeout = connect_timeout

    def _pooled(self, key: tuple) -> Connection | None:
        """An idle connection to `key` that is still open (a plain call, no coroutine: the usual case)."""
        pool = self.idle.get(key)
        while pool:
            conn = pool.pop()
            if conn.usable():
                conn.reused = True
                return conn
            conn.close()
        return None

    async def _connect(self, scheme: str, host: str, port: int) -> Connection:
        """A new connection."""
        tls: ssl.SSLContext | None = tls_context() if scheme == "https" else None
        loop = asyncio.get_running_loop()
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(Connection, host, port, ssl=tls, server_hostname=host if tls else None),
                self.connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise WireError(f"cannot connect to {host}:{port}: {exc}") from None
        return conn

    async def request(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes, *,
                      read_headers: bool = True):
        """Returns (status, headers, body iterator, close callback). `read_headers=False`: the
        headers come back empty (a caller that reads only the status and the body)."""
        key, target, netloc = _route(url)
        head = [f"{method} {target} HTTP/1.1", f"host: {netloc}"]
        head += [f"{k}: {v}" for k, v in headers]
        if body or method in ("POST", "PUT", "PATCH"):
            head.append(f"content-length: {len(body)}")
        payload = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        conn = self._pooled(key) or await self._connect(*key)
        kind = _Response if read_headers else _Answer
        try:
            response = await self._send(conn, payload, kind)
        except _Stale:  # the upstream closed the idle connection before reading: it never saw the request
            conn = await self._connect(*key)
            response = await self._send(conn, payload, kind)
        return response.parser.get_status_code(), response.headers, *self._body(conn, key, response, method == "HEAD")

    async def _send(self, conn: Connection, payload: bytes, kind=_Response) -> _Response:
        """Write the request in one send and wait until its headers are in (no helper task: this
        is the per-request hot path); the body iterator hands out the rest."""
        response = kind()
        response.parser = httptools.HttpResponseParser(response)
        conn.response, conn.received = response, False
        try:
            if not conn.closed:
                conn.transport.write(payload)
            while not response.headers_done:
                if conn.error is not None:
                    raise WireError(f"bad HTTP from upstream: {conn.error}")
                if conn.closed:
                    if conn.reused and not conn.received:
                        raise _Stale()
                    raise WireError("upstream closed the connection before answering")
                await conn.arrival()
        except asyncio.CancelledError:  # a deadline mid-request: the connection is in an unknown state
            conn.close()
            raise
        except (WireError, _Stale):
            conn.close()
            raise
        except OSError as exc:
            conn.close()
            raise WireError(f"upstream connection failed: {exc}") from None
        return response

    def _body(self, conn: Connection, key: tuple, response: _Response, head_only: bool):
        """(body, close callback); close pools the connection when the exchange ended cleanly."""
        body = WireBody(conn, response, head_only)

        async def close():
            if response.complete and response.keep_alive and not body.broken and not head_only and conn.usable():
                conn.response = None
                conn.resume()
                self.idle[key].append(conn)
            else:
                conn.close()

        return body, close

    async def aclose(self) -> None:
        for pool in self.idle.values():
            for conn in pool:
                conn.close()
        self.idle.clear()
