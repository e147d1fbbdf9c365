"""The proxy's own HTTP/1.1 server (gate/proxy/server.py), driven over real loopback sockets.

What it must do for the agent: an answer that is all there leaves in one write with its length
(one wake-up of the agent, not two or three); a head followed by silence still reaches the agent
(a stall after the status is a fault's whole point); pipelined requests are answered in order; a
flood of headers, garbage, or an app that fails never takes the server down; and `receive` tells
a holding fault when the agent hangs up.
"""

from __future__ import annotations

import asyncio
import socket
import time

import httpx
import pytest

from gate.proxy import server as proxy_server
from gate.proxy.server import ProxyServer


class Writes:
    """Counts the writes each connection makes (the transport wrapped as the connection is made)."""

    def __init__(self, monkeypatch):
        self.counts: list[int] = []
        made = proxy_server._Connection.connection_made
        outer = self

        class Counting:
            def __init__(self, transport):
                self._t, self.index = transport, len(outer.counts)
                outer.counts.append(0)

            def write(self, data):
                outer.counts[self.index] += 1
                self._t.write(data)

            def __getattr__(self, name):
                return getattr(self._t, name)

        def connection_made(conn, transport):
            made(conn, Counting(transport))

        monkeypatch.setattr(proxy_server._Connection, "connection_made", connection_made)


def read(sock: socket.socket, until: bytes = b"", timeout: float = 5.0) -> tuple[bytes, bool]:
    """What arrives until `until` is seen, the peer closes (or resets), or `timeout`; and whether it closed."""
    sock.settimeout(timeout)
    got = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not (until and until in got):
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            return got, True
        if not chunk:
            return got, True
        got += chunk
    return got, False


def _exchange(port: int, data: bytes, *, until: bytes = b"", timeout: float = 5.0) -> bytes:
    """Send `data` on a fresh connection; read until `until` is seen, the peer closes, or `timeout`."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        return read(sock, until, timeout)[0]


def _talk(app, *requests: tuple[bytes, bytes, float]) -> list[tuple[bytes, float]]:
    """Serve `app`; send each (request, read until, timeout) on a fresh connection from a thread, in
    turn; stop. Each answer with the seconds it took."""
    async def main():
        server = ProxyServer(app)
        await server.start()
        answers = []
        try:
            for data, until, timeout in requests:
                began = time.monotonic()
                got = await asyncio.to_thread(_exchange, server.port, data, until=until, timeout=timeout)
                answers.append((got, time.monotonic() - began))
        finally:
            await server.stop()
        return answers
    return asyncio.run(main())


async def _answer(scope, receive, send):
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": b'{"ok": true}'})


OK = b'{"ok": true}'
GET = b"GET / HTTP/1.1\r\nhost: a\r\n\r\n"


def test_a_whole_answer_leaves_in_one_write_with_its_length(monkeypatch):
    writes = Writes(monkeypatch)
    [(got, _)] = _talk(_answer, (b"POST /x HTTP/1.1\r\nhost: a\r\ncontent-length: 2\r\n\r\n{}", OK, 5))
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and body == OK
    assert b"content-length: 12" in head and b"transfer-encoding" not in head and b"\r\ndate: " in head
    assert writes.counts == [1]  # head and body together: the agent wakes once


def test_a_head_followed_by_silence_still_reaches_the_agent():
    """A fault that answers the status and then stalls: the agent must see the head while it waits."""
    async def stall(scope, receive, send):
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        await asyncio.sleep(1.0)
        await send({"type": "http.response.body", "body": b"data: late\n\n", "more_body": False})

    [(got, took)] = _talk(stall, (GET, b"\r\n\r\n", 0.8))
    assert got.startswith(b"HTTP/1.1 200 OK\r\n") and b"transfer-encoding: chunked" in got and b"late" not in got
    assert took < 0.8  # the head came before the body was ready


def test_pipelined_requests_are_answered_in_order():
    async def echo(scope, receive, send):
        await receive()
        body = scope["path"].encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})

    [(got, _)] = _talk(echo, (b"GET /one HTTP/1.1\r\nhost: a\r\n\r\nGET /two HTTP/1.1\r\nhost: a\r\n\r\n", b"/two", 5))
    assert got.index(b"/one") < got.index(b"/two") and got.count(b"HTTP/1.1 200 OK") == 2


def test_a_pipelined_request_whose_body_is_still_arriving_is_read_once_its_turn_comes():
    """Reading pauses while a pipelined request waits; when its turn comes it must resume, or the
    rest of that request's body is never read and the agent waits forever."""
    from gate.proxy.app import _read_body

    async def echo_body(scope, receive, send):
        body = await _read_body(receive)  # the proxy's own reader
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})

    def client(port: int) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as sock:
            sock.sendall(b"POST /1 HTTP/1.1\r\nhost: a\r\ncontent-length: 3\r\n\r\none"
                         b"POST /2 HTTP/1.1\r\nhost: a\r\ncontent-length: 5\r\n\r\ntw")
            got = b""
            while b"one" not in got:
                got += sock.recv(65536)
            sock.sendall(b"o-2")  # the rest of the second body, after the first answer
            while not got.endswith(b"two-2"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                got += chunk
            return got

    async def main():
        server = ProxyServer(echo_body)
        await server.start()
        try:
            return await asyncio.to_thread(client, server.port)
        finally:
            await server.stop()

    got = asyncio.run(main())
    assert got.count(b"HTTP/1.1 200 OK") == 2 and got.endswith(b"two-2")


@pytest.mark.parametrize("request_bytes, status", [
    (b"GET / HTTP/1.1\r\nhost: a\r\nx-flood: " + b"a" * (2 << 20) + b"\r\n\r\n", b"431"),
    (b"\x00\x01 not http at all\r\n\r\n", b"400"),
], ids=["header-flood", "garbage"])
def test_a_flood_or_garbage_is_refused_and_the_server_serves_on(request_bytes, status):
    (refused, _), (after, _) = _talk(_answer, (request_bytes, b"", 5), (GET, OK, 5))
    assert refused.startswith(b"HTTP/1.1 " + status) and b"connection: close" in refused
    assert after.endswith(OK)


def test_an_app_that_fails_answers_500_and_never_a_traceback():
    async def broken(scope, receive, send):
        raise ValueError("secret-looking internals sk-live-123")

    [(got, _)] = _talk(broken, (GET, b"", 5))
    assert got.startswith(b"HTTP/1.1 500 ") and b"sk-live" not in got and b"Traceback" not in got


def test_receive_says_disconnect_when_the_agent_hangs_up_mid_hold():
    seen: list[str] = []

    async def hold(scope, receive, send):
        await receive()  # the request body
        # what a holding fault waits on; two waiting at once (a hold that begins as another ends) both hear
        both = await asyncio.wait_for(asyncio.gather(receive(), receive()), 5)
        seen.extend(message["type"] for message in both)

    async def main():
        server = ProxyServer(hold)
        await server.start()
        try:
            with socket.create_connection(("127.0.0.1", server.port)) as sock:
                sock.sendall(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n")
                await asyncio.sleep(0.2)
            for _ in range(50):
                if seen:
                    break
                await asyncio.sleep(0.05)
        finally:
            await server.stop()

    asyncio.run(main())
    assert seen == ["http.disconnect", "http.disconnect"]


class PausingUpstream:
    """A tool upstream that writes its head, waits, then writes its body (as a slow server or a TLS
    record boundary would split them): the agent must still get one answer with its length."""

    BODY = b'{"refund_id": "rf_1", "status": "refunded"}'

    def __init__(self):
        import threading

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length:")))
                while len(body) < length:
                    body += conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: %d\r\nconnection: close\r\n\r\n" % len(self.BODY))
                time.sleep(0.1)
                conn.sendall(self.BODY)

    def close(self):
        self.sock.close()


def test_an_upstream_answer_split_across_writes_reaches_the_agent_whole(monkeypatch):
    """The proxy waits for a small, length-delimited body that arrives after its head and hands the
    agent one answer with its length (one write), not a head, a chunk and a terminator."""
    from proxy_harness import ProxyHarness

    writes = Writes(monkeypatch)
    upstream = PausingUpstream()
    proxy = ProxyHarness(upstream.url)
    try:
        proxy.begin()
        with httpx.Client(trust_env=False) as client:
            answer = client.post(proxy.env["ORDERS_URL"] + "/refund", json={"order_id": "1"})
        trace = proxy.end()
    finally:
        proxy.close()
        upstream.close()
    assert answer.status_code == 200 and answer.content == PausingUpstream.BODY
    assert answer.headers["content-length"] == str(len(answer.content)) and "transfer-encoding" not in answer.headers
    assert trace[0].forwarded and trace[0].bytes_out == len(answer.content)
    assert writes.counts == [1]


def test_the_proxys_body_parse_reads_what_json_loads_reads():
    """routes.py scans a UTF-8 body directly instead of json.loads(bytes): the same document, or
    None exactly where json.loads refuses, for any bytes an agent sends."""
    import json

    from hypothesis import given, settings, strategies as st

    from gate.proxy.bodies import json_of as _json

    def reference(body: bytes):
        try:
            return json.loads(body) if body else None
        except ValueError:
            return None

    documents = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                             lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                             max_leaves=8)
    spaced = st.builds(lambda doc, a, b: (a + json.dumps(doc, ensure_ascii=False) + b).encode(),
                       documents, st.sampled_from(["", " ", "\n\t", "\r\n "]), st.sampled_from(["", " ", "\n", "x", "}"]))

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(spaced, st.binary(max_size=40)))
    def same(body):
        assert repr(_json(body)) == repr(reference(body))

    same()
