"""The proxy's upstream transport: HTTP/1.1 over asyncio streams, parsed by httptools.

The proxy forwards every LLM and tool call, so its client is on the hot path of the
agent under test. httpx's general-purpose stack (anyio, httpcore, h11 in Python)
costs over a millisecond per request here; this transport writes each request in
one send, parses responses with llhttp (C) and yields body bytes as they arrive,
keeping the proxy's added latency well under a millisecond. It does one thing:
one request, one streamed response, keep-alive pooling per origin, TLS when https.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections import defaultdict
from urllib.parse import urlsplit

import httptools

from gate.transport.tls import tls_context

READ_SIZE = 1 << 16


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
        self.complete = False
        self.keep_alive = False
        self.parser: httptools.HttpResponseParser | None = None

    def on_header(self, name: bytes, value: bytes):
        self.headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self):
        self.headers_done = True

    def on_body(self, body: bytes):
        self.pending.append(bytes(body))

    def on_message_complete(self):
        # Asked here: once the message is complete llhttp resets for the next one, and
        # should_keep_alive() then answers False, which once sent every request on a new connection.
        self.keep_alive = self.parser.should_keep_alive()
        self.complete = True

    def take(self) -> bytes:
        """Everything that has arrived, as one chunk (coalescing never waits for more data)."""
        data = self.pending[0] if len(self.pending) == 1 else b"".join(self.pending)
        self.pending.clear()
        return data


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.reused = False  # taken from the keep-alive pool (it may have been closed meanwhile)

    def close(self):
        self.writer.close()


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
                yield response.take()
            if response.complete or self.head_only:
                return
            try:
                data = await conn.reader.read(READ_SIZE)
                if data:
                    response.parser.feed_data(data)
            except (OSError, httptools.HttpParserError):
                data = b""
            if not data:  # closed (or broken) before the message was complete
                self.broken = True
                return


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

    async def _connect(self, scheme: str, host: str, port: int, reuse: bool = True) -> Connection:
        pool = self.idle[(scheme, host, port)]
        while pool and reuse:
            conn = pool.pop()
            if not conn.writer.is_closing() and not conn.reader.at_eof():
                conn.reused = True
                return conn
            conn.close()
        tls: ssl.SSLContext | None = tls_context() if scheme == "https" else None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, ssl=tls, server_hostname=host if tls else None),
                self.connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise WireError(f"cannot connect to {host}:{port}: {exc}") from None
        return Connection(reader, writer)

    async def request(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes):
        """Returns (status, headers, body iterator, close callback)."""
        key, target, netloc = _route(url)
        head = [f"{method} {target} HTTP/1.1", f"host: {netloc}"]
        head += [f"{k}: {v}" for k, v in headers]
        if body or method in ("POST", "PUT", "PATCH"):
            head.append(f"content-length: {len(body)}")
        payload = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        conn = await self._connect(*key)
        try:
            response = await self._send(conn, payload)
        except _Stale:  # the upstream closed the idle connection before reading: it never saw the request
            conn = await self._connect(*key, reuse=False)
            response = await self._send(conn, payload)
        return response.parser.get_status_code(), response.headers, *self._body(conn, key, response, method == "HEAD")

    async def _send(self, conn: Connection, payload: bytes) -> _Response:
        """Write the request in one send and read inline until the headers are in (no helper
        task: this is the per-request hot path); the body iterator reads the rest."""
        response = _Response()
        parser = response.parser = httptools.HttpResponseParser(response)
        received = False
        try:
            conn.writer.write(payload)
            while not response.headers_done:
                data = await conn.reader.read(READ_SIZE)
                if not data:
                    raise WireError("upstream closed the connection before answering")
                received = True
                parser.feed_data(data)
        except httptools.HttpParserError as exc:
            conn.close()
            raise WireError(f"bad HTTP from upstream: {exc}") from None
        except asyncio.CancelledError:  # a deadline mid-request: the connection is in an unknown state
            conn.close()
            raise
        except (OSError, WireError) as exc:
            conn.close()
            if conn.reused and not received:
                raise _Stale() from None
            if isinstance(exc, WireError):
                raise
            raise WireError(f"upstream connection failed: {exc}") from None
        return response

    def _body(self, conn: Connection, key: tuple, response: _Response, head_only: bool):
        """(body, close callback); close pools the connection when the exchange ended cleanly."""
        body = WireBody(conn, response, head_only)

        async def close():
            if response.complete and response.keep_alive and not body.broken and not head_only:
                self.idle[key].append(conn)
            else:
                conn.close()

        return body, close

    async def aclose(self) -> None:
        for pool in self.idle.values():
            for conn in pool:
                conn.close()
        self.idle.clear()
