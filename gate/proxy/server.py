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

A request the app was handed is owed its answer: nothing that arrives later (a pipelined
request after `Connection: close`, bytes that are not HTTP) replaces it; they are ignored or
end the connection once the answer is out. `receive` hands a body on whole only while the
connection can still carry the answer, so a request cut short is never forwarded. An `Upgrade`
request is served as plain HTTP/1.1 (llhttp stops at an upgrade, so its head is parsed again
without the header). Nothing is written to a closing transport (asyncio logs every such write);
incidents are counted and told once a cell (gate/proxy/incidents.py); accepting pauses when
descriptors run out (gate/proxy/listener.py). HTTP/1.0 gets close-delimited streams; an idle
keep-alive connection closes after `idle_timeout`.
"""

from __future__ import annotations

import asyncio
import socket
from collections import deque
from urllib.parse import unquote

import httptools

from gate.proxy.cycle import Cycle, status_line
from gate.proxy.incidents import Incidents
from gate.proxy.listener import Listener

MAX_HEAD_BYTES = 1 << 20  # a request's URL and headers together: an agent's flood is refused with 431
IDLE_TIMEOUT = 5.0  # seconds an idle keep-alive connection is kept (uvicorn's default): leaks stay bounded
LINGER = 2.0  # seconds a refused connection reads on before it closes, so the refusal is not lost to a reset


class _Connection(asyncio.Protocol):
    """One agent connection: llhttp parses what arrives; one cycle is served at a time."""

    def __init__(self, server: ProxyServer):
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.parsing: Cycle | None = None  # the request whose bytes are arriving
        self.queue: deque[Cycle] = deque()  # requests waiting for the one being answered
        self.serving: Cycle | None = None
        self.gone = False
        self.hung_up = False  # the agent closed its side (not a close of ours, nor a fault's drop)
        self.ending = False  # no further request is read: after `Connection: close`, or bytes not HTTP
        self.lingering = False  # refused: our side is shut, what still arrives is read and dropped
        self.peer = None
        self.write_paused = False
        self.read_paused = False
        self._drain: asyncio.Future | None = None
        self._idle: asyncio.TimerHandle | None = None  # armed once, moved on when it fires early
        self._idle_since: float | None = None  # when the connection last fell idle (None: busy)
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._head_bytes = 0
        self._in_head = False  # a head has begun and not ended: what arrives meanwhile counts toward the limit
        self._head_seen = 0  # bytes of the segments that arrived while it had not ended
        self._expect = False  # the request asked for `100 Continue` before it sends its body
        self._upgrade = False  # it named an `Upgrade` (llhttp then stops after its head)
        self._replay: bytes | None = None  # that head again, without the upgrade

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
        self._loop = asyncio.get_running_loop()
        self._rest()

    def data_received(self, data: bytes) -> None:
        self._idle_since = None
        if self.ending:
            return  # nothing after `Connection: close` or refused bytes is read, let alone dispatched
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade as exc:
            self._unupgrade(data[exc.args[0]:])
        except httptools.HttpParserError as exc:  # a callback's own error arrives as its context
            if not self.ending:
                self._malformed(431 if isinstance(exc.__context__, _HeadTooLarge) else 400)
        else:
            if self._in_head:  # llhttp holds a header value until it ends: count what arrived meanwhile
                self._head_seen += len(data)
                if self._head_seen > MAX_HEAD_BYTES:
                    self._malformed(431)

    def eof_received(self) -> None:
        self.hung_up = True  # returning None closes the transport

    def connection_lost(self, exc) -> None:
        self.gone = True
        if self._idle is not None:
            self._idle.cancel()
        self.server.lost(self)
        serving = self.serving
        if serving is not None and not (serving.complete or serving.cut) and (exc is not None or self.hung_up):
            serving.agent_gone = True
            self.server.incidents.note("hung_up")
        for cycle in (serving, self.parsing, *self.queue):
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
        self._in_head, self._head_seen, self._upgrade = True, 0, False

    def on_url(self, url: bytes) -> None:
        self._url += url
        if len(self._url) > MAX_HEAD_BYTES:
            raise _HeadTooLarge()

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"expect":
            self._expect = value.lower() == b"100-continue"
        elif name == b"upgrade":
            self._upgrade = True
        self._headers.append((name, value))
        self._head_bytes += len(name) + len(value)
        if self._head_bytes > MAX_HEAD_BYTES:
            raise _HeadTooLarge()

    def on_headers_complete(self) -> None:
        self._in_head = False
        if self._upgrade and self.parser.should_upgrade():
            self._replay = self._head_without_upgrade()
            return  # no cycle: the request is read again from that head (see _unupgrade)
        url = httptools.parse_url(self._url)
        raw_path = url.path or b"/"
        path = raw_path.decode("ascii", "replace")
        method = self.parser.get_method().decode("ascii", "replace")
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
                 "http_version": self.parser.get_http_version(), "scheme": "http", "method": method,
                 "path": unquote(path) if "%" in path else path, "raw_path": raw_path, "root_path": "",
                 "query_string": url.query or b"", "headers": self._headers,
                 "server": (self.server.advertise, self.server.port), "client": self.peer}
        cycle = self.parsing = Cycle(self, scope, self.parser.should_keep_alive(), self._expect)
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
        if cycle is None:
            return  # an upgrade's head: read again without it
        cycle.body_done = True
        cycle.wake()
        if not cycle.keep_alive:
            self.ending = True  # `Connection: close` (or HTTP/1.0): what follows is never dispatched

    # -- what is not plain HTTP/1.1 ---------------------------------------------------
    def _head_without_upgrade(self) -> bytes:
        """The head as received, less `Upgrade` and what `Connection` names but close/keep-alive
        (HTTP2-Settings, say): we speak HTTP/1.1 only, and llhttp never reads an upgrade's body."""
        keep = (b"close", b"keep-alive")
        named = {t.strip().lower() for k, v in self._headers if k == b"connection" for t in v.split(b",")}
        lines = [b"%s %s HTTP/%s\r\n" % (self.parser.get_method(), self._url, self.parser.get_http_version().encode())]
        for name, value in self._headers:
            if name == b"connection":
                value = b", ".join(t for t in sorted(named) if t in keep)
            elif name == b"upgrade" or name in named:
                continue
            if value:
                lines.append(b"%s: %s\r\n" % (name, value))
        return b"".join(lines) + b"\r\n"

    def _unupgrade(self, rest: bytes) -> None:
        head, self._replay = self._replay, None
        if head is None:  # CONNECT: what follows is not ours to read
            self._malformed(400)
            return
        self.parser = httptools.HttpRequestParser(self)
        self.data_received(head + rest)

    def _malformed(self, status: int) -> None:
        """Bytes that are not (or no longer) a request: refused, but never in place of an answer
        already owed; the request they cut short is never handed on whole."""
        self.server.incidents.note("malformed")
        self.ending = True
        cycle, self.parsing = self.parsing, None
        if cycle is not None:
            cycle.cut = True
            cycle.wake()
            if cycle in self.queue:
                self.queue.remove(cycle)  # not dispatched: forgotten
        serving = self.serving
        if serving is None or (serving is cycle and not serving.started):
            self._refuse(status, b"request head too large" if status == 431 else b"malformed HTTP request", close=False)
            self._linger()
        # else: the answer in progress, and complete requests queued after it, go out; then the close

    # -- serving ---------------------------------------------------------------------
    def _serve(self, cycle: Cycle) -> None:
        self.serving = cycle
        task = asyncio.get_running_loop().create_task(self._run(cycle))
        self.server.tasks.add(task)
        task.add_done_callback(self.server.tasks.discard)

    async def _run(self, cycle: Cycle) -> None:
        try:
            await self.server.app(cycle.scope, cycle.receive, cycle.send)
        except asyncio.CancelledError:
            self._close()
            raise
        except Exception:  # an app error: never a traceback on the agent's connection
            cycle.head = None  # a head it started is not sent on
        if not cycle.complete:  # failed, or returned without finishing its answer (or abandoned it)
            if cycle.head is not None:
                cycle._flush_head()
            self._refuse(500, b"Internal Server Error")  # the status only if no head went out

    def finished(self, cycle: Cycle) -> None:
        """The response is complete: the next request, or the end of the connection."""
        if self.server.closing:
            self._close()
            return
        if not cycle.keep_alive or (self.ending and not self.queue):
            self._linger()  # the agent may still be sending (pipelined after `Connection: close`)
            return
        self.serving = None
        if self.queue:
            self._serve(self.queue.popleft())
        if not self.queue and self.read_paused:  # the next request's body may still be arriving
            self.resume_reading()
        if self.serving is None and self.parsing is None:
            self._rest()

    def _rest(self) -> None:
        """Nothing in flight: the connection closes unless a request begins within the idle timeout.
        One timer per connection, not one per request: when it fires it closes, or waits on for
        the rest of the timeout since the connection last fell idle (a time read costs less)."""
        timeout = self.server.idle_timeout
        if timeout:
            self._idle_since = self._loop.time()
            if self._idle is None:
                self._idle = self._loop.call_later(timeout, self._idle_check)

    def _idle_check(self) -> None:
        timeout, since = self.server.idle_timeout, self._idle_since
        left = timeout if since is None else since + timeout - self._loop.time()
        if left <= 0 and self.serving is None and self.parsing is None and not self.queue:
            self._idle = None
            self._close()
        else:
            self._idle = self._loop.call_later(max(left, 0.01), self._idle_check)

    def _linger(self) -> None:
        """Closing with the agent's bytes unread would reset the connection, and a reset can discard
        the answer or refusal before the agent reads it (a 431 mid-flood): shut our side, drop what
        still arrives, and close when the agent does or after LINGER."""
        transport = self.transport
        if transport.is_closing() or not transport.can_write_eof():
            return self._close()
        transport.write_eof()
        self.lingering = self.ending = True
        asyncio.get_running_loop().call_later(LINGER, self._close)

    def _refuse(self, status: int, why: bytes, close: bool = True) -> None:
        if self.lingering:
            return
        if not self.transport.is_closing() and (self.serving is None or not self.serving.started):
            self.transport.write(status_line(status) + b"content-type: text/plain\r\ncontent-length: %d\r\n"
                                 b"connection: close\r\n\r\n%b" % (len(why), why))
        if close:
            self._close()

    def _close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def shutdown(self) -> None:
        """The gate is stopping: close now if idle, else after the answer in progress."""
        if self.serving is None or self.lingering:
            self._close()
        else:
            self.serving.keep_alive = False


class _HeadTooLarge(Exception):
    pass


class ProxyServer:
    def __init__(self, app, bind: str = "127.0.0.1", advertise: str | None = None,
                 idle_timeout: float | None = IDLE_TIMEOUT):
        """`idle_timeout`: seconds an idle keep-alive connection stays open (None or 0: for ever)."""
        self.app = app
        self.advertise = advertise or bind
        self.idle_timeout = idle_timeout
        # proto IPPROTO_TCP: the accepted sockets get TCP_NODELAY (without it every response can pay a
        # 40 ms Nagle + delayed-ACK stall); connections set it again themselves
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((bind, 0))
        self.port = self.sock.getsockname()[1]
        self.connections: set[_Connection] = set()
        self.tasks: set[asyncio.Task] = set()
        self.closing = False
        # the cell in progress is the app's current run, when it has one (ProxyApp does)
        self.incidents = Incidents(lambda: getattr(app, "current", None), lambda: getattr(app, "last_cell", None))
        self._listener = Listener(self.sock, lambda: _Connection(self), self.incidents)

    @property
    def url(self) -> str:
        return f"http://{self.advertise}:{self.port}"

    async def start(self) -> None:
        self._listener.start()

    def lost(self, conn: _Connection) -> None:
        """A connection closed: its descriptor is free, so accepting may go on if it had paused."""
        self.connections.discard(conn)
        self._listener.resume()

    async def stop(self) -> None:
        """Stop accepting; close idle connections, and the others once their answer is out."""
        self.closing = True
        self._listener.close()
        for conn in list(self.connections):
            conn.shutdown()
        self.sock.close()
        self.incidents.flush()
