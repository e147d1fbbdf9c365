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
import ssl
from collections import defaultdict
from urllib.parse import urlsplit

import httptools

from gate.transport.tls import tls_context

READ_SIZE = 1 << 16


class WireError(Exception):
    """The upstream could not be reached or broke the protocol."""


class _Response:
    """Callbacks for httptools; body chunks go to a queue the caller iterates."""

    def __init__(self):
        self.headers: list[tuple[str, str]] = []
        self.headers_done = asyncio.Event()
        self.chunks: asyncio.Queue = asyncio.Queue()
        self.complete = False

    def on_header(self, name: bytes, value: bytes):
        self.headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self):
        self.headers_done.set()

    def on_body(self, body: bytes):
        self.chunks.put_nowait(bytes(body))

    def on_message_complete(self):
        self.complete = True
        self.chunks.put_nowait(None)


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer

    def close(self):
        self.writer.close()


class WireClient:
    """Keep-alive pool of HTTP/1.1 connections, keyed by (scheme, host, port)."""

    def __init__(self, connect_timeout: float = 10.0):
        self.idle: dict[tuple, list[Connection]] = defaultdict(list)
        self.connect_timeout = connect_timeout

    async def _connect(self, scheme: str, host: str, port: int) -> Connection:
        pool = self.idle[(scheme, host, port)]
        while pool:
            conn = pool.pop()
            if not conn.writer.is_closing() and not conn.reader.at_eof():
                return conn
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
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn = await self._connect(parts.scheme, parts.hostname, port)
        head = [f"{method} {target} HTTP/1.1", f"host: {parts.netloc}"]
        head += [f"{k}: {v}" for k, v in headers]
        if body or method in ("POST", "PUT", "PATCH"):
            head.append(f"content-length: {len(body)}")
        conn.writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        response = _Response()
        parser = httptools.HttpResponseParser(response)
        reader_task = asyncio.ensure_future(self._read(conn, parser, response, method == "HEAD"))
        done, _ = await asyncio.wait({reader_task, asyncio.ensure_future(response.headers_done.wait())},
                                     return_when=asyncio.FIRST_COMPLETED)
        if reader_task in done and reader_task.exception() is not None:
            conn.close()
            raise WireError(str(reader_task.exception()))
        key = (parts.scheme, parts.hostname, port)

        async def body_chunks():
            # Relay at once what has arrived, coalescing whatever queued up meanwhile:
            # never waits for more data, so streams are not delayed, only batched.
            queue = response.chunks
            while (chunk := await queue.get()) is not None:
                parts = [chunk]
                ended = False
                while not queue.empty():
                    more = queue.get_nowait()
                    if more is None:
                        ended = True
                        break
                    parts.append(more)
                yield b"".join(parts) if len(parts) > 1 else chunk
                if ended:
                    return

        async def close():
            if not reader_task.done():
                reader_task.cancel()
                conn.close()
            elif response.complete and parser.should_keep_alive() and reader_task.exception() is None:
                self.idle[key].append(conn)
            else:
                conn.close()

        return parser.get_status_code(), response.headers, body_chunks(), close

    async def _read(self, conn: Connection, parser, response: _Response, head_only: bool) -> None:
        try:
            while not response.complete:
                data = await conn.reader.read(READ_SIZE)
                if not data:
                    if not response.headers_done.is_set():
                        raise WireError("upstream closed the connection before answering")
                    break  # body delimited by close
                parser.feed_data(data)
                if head_only and response.headers_done.is_set():
                    break
        except httptools.HttpParserError as exc:
            raise WireError(f"bad HTTP from upstream: {exc}") from None
        except (OSError, asyncio.IncompleteReadError) as exc:
            raise WireError(f"upstream connection failed: {exc}") from None
        finally:
            response.headers_done.set()
            if not response.complete:
                response.chunks.put_nowait(None)

    async def aclose(self) -> None:
        for pool in self.idle.values():
            for conn in pool:
                conn.close()
        self.idle.clear()
