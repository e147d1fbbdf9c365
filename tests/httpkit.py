"""Small real HTTP servers for tests: a JSON request handler base and a background server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real services do
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def reply(self, status: int, doc, content_type: str = "application/json", headers: dict | None = None):
        body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def json_body(self):
        return json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")


class AgentHandler(JsonHandler):
    """What a test agent answers besides /chat: GET (readiness) is always 200."""

    def do_GET(self):
        self.reply(200, {"ok": True})


def chat_handler(answer, name: str):
    """An agent's handler: POST {"message"} -> {"reply": answer(message)}; an exception escaping `answer` is
    a crash a user would see (a 500, its repr on stderr for the gate's log tail)."""

    class Chat(AgentHandler):
        def do_POST(self):
            try:
                self.reply(200, {"reply": answer(self.json_body().get("message", ""))})
            except Exception as exc:
                print(f"{name}: unhandled {exc!r}", file=sys.stderr, flush=True)
                self.reply(500, {"error": repr(exc)})
    return Chat


def serve_agent(handler, banner: str = "") -> None:
    """Serve a test agent on $PORT, as the gate starts agents, until it is killed."""
    port = int(os.environ["PORT"])
    if banner:
        print(f"{banner} on {port}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), handler).serve_forever()


def serve(handler) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def serve_asgi(app):
    """An ASGI app (a real `mcp` server's) on uvicorn, on a free loopback port, started: (server, base URL).
    Stop it with `server.should_exit = True`."""
    import time

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the server did not start"
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}"


def start_orders(root: Path):
    """The SDK example's orders service on a free port: (process, base URL)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(root / "examples/sdk_agent/orders_service.py")],
                            env={**os.environ, "ORDERS_PORT": str(port)}, stdout=subprocess.PIPE, text=True)
    assert "orders service" in proc.stdout.readline()
    return proc, f"http://127.0.0.1:{port}"


def chat_asgi(answer):
    """An async chat app (the shape FastAPI or ADK's api_server give an agent), without a framework:
    POST any path -> `await answer(path, doc)` as {"reply"}; GET -> {"ok": true}; an exception the answer
    lets through is a 500 with its type and message, as a framework's default handler answers."""
    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        status, doc = 200, {"ok": True}
        if scope["method"] == "POST":
            try:
                doc = {"reply": await answer(scope["path"], json.loads(body or b"{}"))}
            except Exception as exc:  # noqa: BLE001 - unhandled by the agent: its 500
                status, doc = 500, {"error": f"{type(exc).__name__}: {exc}"}
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(doc).encode()})
    return app
