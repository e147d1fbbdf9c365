"""The proxy at the HTTP edge (gate/proxy/server.py): a request it forwards never loses its answer,
and no client behaviour floods the log.

Raw sockets against the real server, each shape sent in one write, split across writes, and slowly
(a byte at a time); the real clients an agent is written with, through the whole proxy; an agent
that drops mid-stream; and descriptor exhaustion in a child process with a low `ulimit -n`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from gate.proxy.server import IDLE_TIMEOUT, ProxyServer
from httpkit import serve
from proxy_harness import ProxyHarness, ToolServer
from test_proxy_server import read as _read

ROOT = Path(__file__).resolve().parent.parent
MODES = ["one-write", "split", "slow"]


# -- raw sockets -------------------------------------------------------------------------------
def _send(sock: socket.socket, data: bytes, mode: str) -> None:
    """`data` in one write, in three writes a moment apart, or a byte at a time."""
    if mode == "one-write":
        sock.sendall(data)
        return
    pieces = [data[:7], data[7:len(data) // 2], data[len(data) // 2:]] if mode == "split" else \
        [data[i:i + 1] for i in range(len(data))]
    for piece in pieces:
        try:
            sock.sendall(piece)
        except OSError:  # the server answered and closed before the rest (after `Connection: close`)
            return
        time.sleep(0.005 if mode == "split" else 0.0005)


def _talk(port: int, data: bytes, mode: str = "one-write", until: bytes = b"", timeout: float = 3.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        _send(sock, data, mode)
        return _read(sock, until, timeout)


def _post(path: str, body: bytes, *extra: bytes) -> bytes:
    head = b"POST /tool/orders%s HTTP/1.1\r\nhost: a\r\ncontent-type: application/json\r\n" % path.encode()
    return head + b"".join(line + b"\r\n" for line in extra) + b"content-length: %d\r\n\r\n%b" % (len(body), body)


@pytest.fixture(scope="module")
def proxy():
    """The whole proxy (ProxyHook, sim LLMs) in front of a tool upstream that counts what reached it."""
    tool = ToolServer()
    harness = ProxyHarness(tool.url)
    harness.tool = tool
    yield harness
    harness.close()
    tool.close()


@pytest.fixture
def tool(proxy):
    proxy.tool.hits.clear()
    return proxy.tool


def _port(proxy) -> int:
    return proxy.hook.server.port


@pytest.mark.parametrize("mode", MODES)
def test_requests_pipelined_after_connection_close_are_never_dispatched(proxy, tool, mode):
    data = _post("/first", b'{"n": 1}', b"connection: close") + _post("/second", b'{"n": 2}')
    got, closed = _talk(_port(proxy), data, mode)
    assert got.count(b"HTTP/1.1 ") == 1 and got.startswith(b"HTTP/1.1 200 ") and closed
    assert [path for _, path, _ in tool.hits] == ["/first"]


UPGRADES = {
    "h2c-get": b"GET /tool/orders/o/7 HTTP/1.1\r\nhost: a\r\nconnection: Upgrade, HTTP2-Settings\r\n"
               b"upgrade: h2c\r\nhttp2-settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
    # what `curl --http2` sends to an http:// URL: the body must still be read and forwarded
    "h2c-post": _post("/refund", b'{"order_id": "7"}', b"connection: Upgrade, HTTP2-Settings", b"upgrade: h2c",
                      b"http2-settings: AAMAAABkAARAAAAAAAIAAAAA"),
    "websocket": b"GET /tool/orders/o/7 HTTP/1.1\r\nhost: a\r\nconnection: Upgrade\r\nupgrade: websocket\r\n"
                 b"sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", sorted(UPGRADES))
def test_an_upgrade_is_ignored_and_the_request_served_as_http_1_1(proxy, tool, kind, mode):
    """Served normally, its body read, and the connection still carries the request after it."""
    then = b"GET /tool/orders/o/8 HTTP/1.1\r\nhost: a\r\n\r\n"
    got, _ = _talk(_port(proxy), UPGRADES[kind] + then, mode, until=b'"order_id": "8"')
    assert got.count(b"HTTP/1.1 200 OK") == 2 and b"101" not in got.split(b"\r\n", 1)[0]
    first = tool.hits[0]
    assert first[2] == (b'{"order_id": "7"}' if kind == "h2c-post" else b"")
    assert "upgrade" not in {k.lower() for k in tool.headers_seen[0]}  # hop-by-hop, never forwarded
    assert [path for _, path, _ in tool.hits] == [first[1], "/o/8"]


@pytest.mark.parametrize("mode", ["one-write", "split"])
def test_garbage_after_a_request_never_replaces_its_answer(proxy, tool, mode):
    got, closed = _talk(_port(proxy), _post("/refund", b'{"n": 1}') + b"\x00\x01 not http\r\n\r\n", mode)
    assert got.startswith(b"HTTP/1.1 200 OK") and got.count(b"HTTP/1.1 ") == 1 and b"refund_id" in got
    assert closed and len(tool.hits) == 1


@pytest.mark.parametrize("mode", MODES)
def test_a_body_cut_short_is_never_forwarded(proxy, tool, mode):
    body = b'{"order_id": "7", "reason": "broken"}'
    whole = _post("/refund", body)
    cases = [(whole[:-10], None),  # the agent left before the body completed
             (_post("/refund", b'{"n": 1}') + whole[:-5], b"refund_id"),  # pipelined after a complete one
             (b"POST /tool/orders/refund HTTP/1.1\r\nhost: a\r\ntransfer-encoding: chunked\r\n\r\n"
              b"5\r\nhello\r\nZZ\r\n", b"")]  # a bad chunk: read until the server closes
    answers = []
    for data, until in cases:
        with socket.create_connection(("127.0.0.1", _port(proxy)), timeout=3) as sock:
            _send(sock, data, mode)
            answers.append(_read(sock, until=until)[0] if until is not None else b"")
    got, _ = _talk(_port(proxy), whole, until=b"refund_id")  # a whole one after them: served
    assert answers[2].startswith(b"HTTP/1.1 400 ")  # a bad chunk: refused, nothing forwarded
    assert got.startswith(b"HTTP/1.1 200 ")
    assert [b for _, _, b in tool.hits] == [b'{"n": 1}', body]  # never a cut body


def test_a_slow_request_is_dispatched_only_once_complete(proxy, tool):
    data = _post("/refund", b'{"order_id": "7", "reason": "late"}')
    with socket.create_connection(("127.0.0.1", _port(proxy)), timeout=3) as sock:
        _send(sock, data[:-1], "slow")
        time.sleep(0.05)
        assert tool.hits == []  # its head and most of its body arrived: still not forwarded
        sock.sendall(data[-1:])
        got, _ = _read(sock, until=b"refund_id")
    assert got.startswith(b"HTTP/1.1 200 ") and [b for _, _, b in tool.hits] == [data.partition(b"\r\n\r\n")[2]]


@pytest.mark.parametrize("mode", ["one-write", "split"])
def test_a_header_value_that_never_ends_is_refused_431_as_it_passes_the_limit(proxy, mode):
    with socket.create_connection(("127.0.0.1", _port(proxy)), timeout=3) as sock:
        sock.sendall(b"GET /tool/orders/o/1 HTTP/1.1\r\nhost: a\r\nx-flood: ")
        piece = b"a" * (64 << 10) if mode == "split" else b"a" * ((1 << 20) + (64 << 10))
        sent = 0
        sock.settimeout(0.01)
        answer = b""
        while sent < 8 << 20 and not answer:  # far past the limit, the line still open
            try:
                sock.sendall(piece)
                sent += len(piece)
                answer = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:  # the server shut its side after answering
                break
        answer += _read(sock, timeout=1)[0]
    assert answer.startswith(b"HTTP/1.1 431 ") and sent < 3 << 20


# -- framing -----------------------------------------------------------------------------------
class Served:
    """A ProxyServer over a plain ASGI app on its own loop thread (asyncio's or uvloop's)."""

    def __init__(self, app, loop: str = "asyncio", **kw):
        import uvloop

        self.loop = uvloop.new_event_loop() if loop == "uvloop" else asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = ProxyServer(app, **kw)
        self.call(self.server.start())
        self.port = self.server.port

    def call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def close(self):
        self.call(self.server.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


async def _stream(scope, receive, send, parts=(b"one ", b"two ", b"three")):
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    for part in parts:
        await send({"type": "http.response.body", "body": part, "more_body": True})
        await asyncio.sleep(0.01)
    await send({"type": "http.response.body", "body": b"", "more_body": False})


@pytest.mark.parametrize("mode", MODES)
def test_http_1_0_gets_a_close_delimited_stream(mode):
    served = Served(_stream)
    try:
        got, closed = _talk(served.port, b"GET / HTTP/1.0\r\nhost: a\r\n\r\n", mode)
        kept, _ = _talk(served.port, b"GET / HTTP/1.1\r\nhost: a\r\n\r\n", mode, until=b"0\r\n\r\n")
    finally:
        served.close()
    head, _, body = got.partition(b"\r\n\r\n")
    assert closed and body == b"one two three" and b"transfer-encoding" not in head.lower()
    assert b"connection: close" in head and b"content-length" not in head
    assert b"transfer-encoding: chunked" in kept  # HTTP/1.1 keeps its chunked stream


def test_an_idle_keep_alive_connection_closes_after_the_timeout():
    async def ok(scope, receive, send):
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    assert IDLE_TIMEOUT == 5.0 and ProxyServer(ok).idle_timeout == IDLE_TIMEOUT  # uvicorn's default
    served = Served(ok, idle_timeout=0.3)
    get = b"GET / HTTP/1.1\r\nhost: a\r\n\r\n"
    try:
        with socket.create_connection(("127.0.0.1", served.port)) as busy, \
                socket.create_connection(("127.0.0.1", served.port)) as idle:
            began = time.monotonic()
            for _ in range(4):  # a request every 0.15 s: kept open past the timeout
                busy.sendall(get)
                assert _read(busy, until=b"ok")[0].endswith(b"ok")
                time.sleep(0.15)
            assert _read(idle, timeout=2) == (b"", True)  # never used: closed after the timeout
            assert 0.25 < time.monotonic() - began < 1.5
            busy.sendall(get)
            assert _read(busy, until=b"ok")[0].endswith(b"ok")
            assert _read(busy, timeout=2) == (b"", True)  # then idle: closed too
    finally:
        served.close()


# -- real clients, through the whole proxy ------------------------------------------------------
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]}
SAID = "Hello! How can I help you today with your order?"


def _said(body: bytes, stream: bool) -> str:
    if not stream:
        return json.loads(body)["choices"][0]["message"]["content"]
    events = [line[6:] for line in body.decode().splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    return "".join(json.loads(e)["choices"][0]["delta"].get("content") or "" for e in events[:-1])


def _curl(*flags):
    def run(url, doc, stream):
        cmd = ["curl", "-sS", "--noproxy", "*", "--max-time", "10", "-H", "content-type: application/json",
               "--data-binary", "@-", *flags, *(["-N"] if stream else []), url]
        return subprocess.run(cmd, input=json.dumps(doc).encode(), capture_output=True, check=True).stdout
    return run


def _requests(url, doc, stream):
    import requests

    with requests.Session() as session:
        session.trust_env = False
        answer = session.post(url, json=doc, stream=stream, timeout=10)
        return b"".join(answer.iter_content(None)) if stream else answer.content


def _urllib(url, doc, stream):
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(url, json.dumps(doc).encode(), {"content-type": "application/json"})
    with opener.open(request, timeout=10) as answer:
        return b"".join(iter(lambda: answer.read1(65536), b"")) if stream else answer.read()


def _httpx(url, doc, stream):
    import httpx

    with httpx.Client(trust_env=False, timeout=10) as client, client.stream("POST", url, json=doc) as answer:
        return b"".join(answer.iter_bytes())


def _httpx_async(url, doc, stream):
    import httpx

    async def main():
        async with httpx.AsyncClient(trust_env=False, timeout=10) as client, client.stream("POST", url, json=doc) as answer:
            return b"".join([chunk async for chunk in answer.aiter_bytes()])
    return asyncio.run(main())


def _aiohttp(url, doc, stream):
    aiohttp = pytest.importorskip("aiohttp")

    async def main():
        async with aiohttp.ClientSession() as session, session.post(url, json=doc) as answer:
            return b"".join([chunk async for chunk in answer.content.iter_any()])
    return asyncio.run(main())


NODE_FETCH = """
const [url, body] = process.argv.slice(1);
const answer = await fetch(url, {method: "POST", headers: {"content-type": "application/json"}, body});
const chunks = [];
for await (const chunk of answer.body) chunks.push(Buffer.from(chunk));
process.stdout.write(Buffer.concat(chunks));
"""
NODE_HTTP = """
const http = require("http");
const [url, body] = process.argv.slice(1);
const request = http.request(url, {method: "POST", headers: {"content-type": "application/json"}}, (answer) => {
  answer.on("data", (chunk) => process.stdout.write(chunk));
});
request.end(body);
"""


def _node(script, module=False):
    def run(url, doc, stream):
        flags = ["--input-type=module"] if module else []
        return subprocess.run(["node", *flags, "-e", script, url, json.dumps(doc)], capture_output=True,
                              check=True, timeout=20).stdout
    return run


RAW_CLIENTS = {"curl": _curl(), "curl-http2": _curl("--http2"), "curl-http1.0": _curl("--http1.0"),
               "requests": _requests, "urllib": _urllib, "httpx": _httpx, "httpx-async": _httpx_async,
               "aiohttp": _aiohttp, "node-fetch": _node(NODE_FETCH, module=True), "node-http": _node(NODE_HTTP)}


def _openai(proxy, stream):
    client = proxy.openai()
    answer = client.chat.completions.create(**CHAT, stream=stream)
    return "".join(c.choices[0].delta.content or "" for c in answer) if stream else answer.choices[0].message.content


def _openai_async(proxy, stream):
    import openai

    async def main():
        client = openai.AsyncOpenAI(api_key="sk-test-not-real", base_url=proxy.env["OPENAI_BASE_URL"], max_retries=0)
        async with client:
            answer = await client.chat.completions.create(**CHAT, stream=stream)
            if not stream:
                return answer.choices[0].message.content
            return "".join([c.choices[0].delta.content or "" async for c in answer])
    return asyncio.run(main())


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("client", [*RAW_CLIENTS, "openai", "openai-async"])
def test_real_clients_through_the_proxy(proxy, client, stream):
    needs = {"curl": "curl", "node": "node"}.get(client.split("-")[0])
    if needs and shutil.which(needs) is None:
        pytest.skip(f"{needs} is not installed")
    if client == "openai":
        said = _openai(proxy, stream)
    elif client == "openai-async":
        said = _openai_async(proxy, stream)
    else:
        doc = {**CHAT, "stream": True} if stream else CHAT
        said = _said(RAW_CLIENTS[client](proxy.env["OPENAI_BASE_URL"] + "/chat/completions", doc, stream), stream)
    assert said == SAID


# -- an agent that drops mid-stream --------------------------------------------------------------
def _drop(sock: socket.socket) -> None:
    """Hang up with a reset, as a killed agent does: the server's next writes fail."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_drop_mid_stream_logs_one_line_and_no_write_after_it(caplog, loop):
    """An app that streams without yielding (an in-process upstream) to an agent that went away:
    asyncio logged "socket.send() raised exception." for every write after the drop."""
    dropped, over = threading.Event(), threading.Event()

    async def flood(scope, receive, send):
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": b"data: first\n\n", "more_body": True})
        dropped.wait(3)
        for _ in range(5000):  # no turn of the loop in between: the drop is found by a failed write
            await send({"type": "http.response.body", "body": b"data: token\n\n", "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        over.set()

    caplog.set_level(logging.INFO)
    served = Served(flood, loop)
    try:
        with socket.create_connection(("127.0.0.1", served.port)) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n")
            assert b"first" in _read(sock, until=b"first")[0]
            _drop(sock)
        time.sleep(0.05)  # the reset is in
        dropped.set()
        assert over.wait(5)
    finally:
        served.close()  # what was counted is told
    lines = [r.getMessage() for r in caplog.records if r.thread == served.thread.ident]  # this server's loop
    assert not [line for line in lines if "socket.send()" in line]
    assert [line for line in lines if "chaos-gate proxy" in line] == [
        "chaos-gate proxy: agent connections closed before their answer was complete: 1"]
    assert len(lines) == 1


class Streaming(BaseHTTPRequestHandler):
    """A tool upstream that streams 40 events 10 ms apart."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for n in range(40):
                event = b"data: %d\n\n" % n
                self.wfile.write(b"%x\r\n%b\r\n" % (len(event), event))
                self.wfile.flush()
                time.sleep(0.01)
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass


def test_the_trace_records_an_agent_that_hung_up_mid_answer_and_each_incident_is_told_once(caplog):
    caplog.set_level(logging.INFO)
    server, url = serve(Streaming)
    proxy = ProxyHarness(url)
    try:
        proxy.begin(cell_id="chaos/a/drops")
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", proxy.hook.server.port)) as sock:
                sock.sendall(_post("/events", b"{}"))
                assert b"data: 0" in _read(sock, until=b"data: 0")[0]
        for _ in range(20):  # and garbage, twenty times
            _talk(proxy.hook.server.port, b"\x00\x01 not http\r\n\r\n")
        trace = proxy.end()
    finally:
        proxy.close()
        server.shutdown()
    assert len(trace) == 3 and all(entry.forwarded and entry.extra.get("agent_gone") for entry in trace)
    assert all("disconnected before its answer was complete" in entry.note for entry in trace)
    told = sorted(r.getMessage() for r in caplog.records if "chaos/a/drops" in r.getMessage())
    assert told == [
        "chaos-gate proxy: agent connections closed before their answer was complete in cell chaos/a/drops: 3",
        "chaos-gate proxy: malformed requests refused (400/431) in cell chaos/a/drops: 20"]


# -- descriptor exhaustion -------------------------------------------------------------------------
CHILD = textwrap.dedent("""
    import asyncio, logging, os, resource, sys
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    from gate.proxy.server import ProxyServer
    from gate.transport.loop import run_async

    async def ok(scope, receive, send):
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    async def main():
        server = ProxyServer(ok, idle_timeout=60)
        await server.start()
        stop = asyncio.Event()
        asyncio.get_running_loop().add_reader(sys.stdin.fileno(), stop.set)  # the parent closes stdin
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 8, hard))
        print(server.port, flush=True)
        await stop.wait()
        await server.stop()

    run_async(main())  # the gate's own loop (uvloop)
""")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_out_of_descriptors_the_server_waits_quietly_and_recovers():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
    try:
        port = int(child.stdout.readline())
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]  # past its 8 spare descriptors
        time.sleep(0.3)
        began = _cpu_seconds(child.pid)
        time.sleep(1.0)
        spent = _cpu_seconds(child.pid) - began  # exhausted all this second
        idle[0].sendall(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n")  # a connection it holds is still served
        served, _ = _read(idle[0], until=b"ok", timeout=3)
        late = socket.create_connection(("127.0.0.1", port))
        late.sendall(b"GET / HTTP/1.1\r\nhost: a\r\n\r\n")
        assert _read(late, until=b"ok", timeout=0.3)[0] == b""  # waits in the backlog meanwhile
        for sock in idle:
            sock.close()
        answer, _ = _read(late, until=b"ok", timeout=5)  # descriptors freed: accepted and served
        late.close()
    finally:
        child.stdin.close()
        child.wait(10)
        err = child.stderr.read().decode()
    assert served.startswith(b"HTTP/1.1 200 ") and served.endswith(b"ok")
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"ok")
    assert spent < 0.15, f"the child spun: {spent:.2f}s of CPU in 1s"
    lines = err.splitlines()
    assert "Traceback" not in err and len(lines) <= 2, err[:2000]
    assert any(line.startswith("gate.proxy: chaos-gate proxy: accepts deferred") for line in lines), err[:2000]


def test_the_idle_timeout_is_the_configs():
    """`agent.idle_timeout` reaches the worker's proxy; the default is uvicorn's 5 s."""
    from gate.config.models import Config
    from gate.runner.proxy_hook import ProxyHook

    def hook(**agent):
        return ProxyHook(Config.model_validate({"agent": {"url": "http://127.0.0.1:9", "invoke": {"http": {
            "url": "{{url}}"}}, **agent}, "inputs": [{"id": "a", "text": "x"}], "llm": [{"name": "openai"}]}))

    assert hook().server.idle_timeout == 5.0 and hook(idle_timeout=0.5).server.idle_timeout == 0.5
