"""`chaos-gate sim serve` and `chaos-gate world serve`: the keyless model and the fake worlds for any
language's tests, outside `chaos-gate run`.

sim serve — one port, every dialect: OpenAI Chat Completions and Responses, Anthropic
Messages, Gemini; the path picks the dialect, so `OPENAI_BASE_URL=http://HOST:PORT/v1`,
`ANTHROPIC_BASE_URL=http://HOST:PORT` and `GOOGLE_GEMINI_BASE_URL=http://HOST:PORT` all
work (the `/llm/<provider>` prefixes of the proxy work too). Rules come from a
chaos-gate.yaml's `sim:`, or a file holding only `sim:` (or only its keys).

world serve — a world file (gate or faultbench format) over HTTP (MCP at `/mcp`, REST at
`/`, OpenAPI at `/openapi.json`) or MCP over stdio (one JSON-RPC message per line). With
`--faults` its `faults:` block applies. Over HTTP a test in any language can also read
the state (`GET /_world/state`), reset it (`POST /_world/reset`) and move the clock
(`POST /_world/clock {"advance": seconds}` or `{"set": "2026-02-01T00:00:00Z"}`).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path

from gate.errors import ConfigError

SHUTDOWN_GRACE = 1


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # connections queue from the moment the address is printed
    return sock


def _serve(app, sock: socket.socket) -> None:
    import uvicorn

    config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False, ws="none",
                            timeout_graceful_shutdown=SHUTDOWN_GRACE)
    uvicorn.Server(config).run(sockets=[sock])


async def _body(receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _answer(send, status: int, headers, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(k.encode("latin-1"), str(v).encode("latin-1")) for k, v in headers]
                + [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


# --- sim ------------------------------------------------------------------------------------

def sim_config(path: Path):
    """The sim's config from a chaos-gate.yaml, a file holding `sim:`, or one holding only its keys."""
    from pydantic import ValidationError

    from gate.config.sim import SimConfig
    from gate.config.world_files import read_world_data

    data, _ = read_world_data(path)
    if isinstance(data, dict) and "agent" in data:
        from gate.plan import load_config

        return load_config(path).config.sim
    doc = data.get("sim", data) if isinstance(data, dict) else data
    try:
        return SimConfig.model_validate(doc or {})
    except ValidationError as exc:
        raise ConfigError(f"{path}: not a sim config: {exc}") from None


def provider_of(path: str) -> str:
    if path.startswith("/v1/messages") or path.startswith("/messages"):
        return "anthropic"
    if "/models/" in path and ":" in path.rsplit("/", 1)[-1]:
        return "gemini"
    return "openai"


class SimApp:
    """Every dialect on one port: the path is routed to the provider that serves it."""

    def __init__(self, spec):
        from gate.proxy.app import ProxyApp
        from gate.proxy.routes import Route
        from gate.sim.server import SimUpstream

        upstream = SimUpstream(spec)
        self.app = ProxyApp({("llm", p): Route("llm", p, p, upstream) for p in ("openai", "anthropic", "gemini")})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        path = scope["path"]
        if not path.startswith("/llm/"):
            scope = dict(scope, path=f"/llm/{provider_of(path)}{path}")
        await self.app(scope, receive, send)
        self.app.stray.clear()  # outside any run every call is "stray": keep none


def sim_serve(path: Path, host: str, port: int, out=sys.stdout) -> int:
    app = SimApp(sim_config(path))
    sock = _bind(host, port)
    base = f"http://{host}:{sock.getsockname()[1]}"
    out.write(f"chaos-gate sim serve: {base} (every dialect)\n"
              f"OPENAI_BASE_URL={base}/v1\nANTHROPIC_BASE_URL={base}\nGOOGLE_GEMINI_BASE_URL={base}\n")
    out.flush()
    _serve(app, sock)
    return 0


# --- worlds ---------------------------------------------------------------------------------

def load_world(path: Path, name: str | None = None):
    """A world file, or one world of a chaos-gate.yaml (`--world NAME` when it has several)."""
    from gate.config.world_files import load_world_file, read_world_data

    data, _ = read_world_data(path)
    if isinstance(data, dict) and "worlds" in data and "agent" in data:
        from gate.plan import load_config

        worlds = {w.name: w for w in load_config(path).config.worlds}
        if not worlds:
            raise ConfigError(f"{path}: the config has no worlds")
        if name is None and len(worlds) > 1:
            raise ConfigError(f"{path}: the config has {len(worlds)} worlds ({', '.join(worlds)}): pick one with --world")
        if name is not None and name not in worlds:
            raise ConfigError(f"{path}: no world {name!r} (worlds: {', '.join(worlds)})")
        return worlds[name or next(iter(worlds))]
    return load_world_file(path)


class WorldApp:
    """One world over HTTP: MCP at /mcp, REST everywhere else, and the test-control endpoints."""

    def __init__(self, upstream, state_file: Path | None = None):
        self.upstream, self.state_file = upstream, state_file

    def mirror(self) -> None:
        if self.state_file is not None:
            self.state_file.write_text(json.dumps(self.upstream.state.snapshot(), indent=1))

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        from gate.proxy.exchange import RequestInfo

        body, path, method = await _body(receive), scope["path"], scope["method"]
        if path.startswith("/_world/"):
            return await self._control(path, method, body, send)
        query = scope.get("query_string", b"").decode()
        provider = "mcp" if path.rstrip("/") == "/mcp" else "http"
        info = RequestInfo("tool", self.upstream.world.name, provider, method, path + (f"?{query}" if query else ""))
        resp = await self.upstream.send(info, [], body)
        payload = await resp.read()
        self.mirror()
        await _answer(send, resp.status, resp.headers, payload)

    async def _control(self, path: str, method: str, body: bytes, send) -> None:
        from gate.worlds.values import parse_datetime

        up = self.upstream
        doc = json.loads(body) if body else {}
        if path == "/_world/reset" and method == "POST":
            up.reset()
        elif path == "/_world/clock" and method == "POST":
            if "set" in doc:
                up.state.clock.set(parse_datetime(doc["set"]))
            else:
                up.state.clock.advance(float(doc.get("advance", 0)))
        elif not (path == "/_world/state" and method == "GET"):
            return await _answer(send, 404, [("content-type", "application/json")],
                                 json.dumps({"error": f"no control endpoint {method} {path}"}).encode())
        self.mirror()
        out = {"now": up.state.clock.now().isoformat(), "revision": up.state.revision, "tables": up.state.snapshot()}
        await _answer(send, 200, [("content-type", "application/json")], json.dumps(out).encode())


def _log(name, args, out) -> None:
    what = f"fault {out.fault}" if out.fault else (f"error {out.status}" if out.error else str(out.status))
    sys.stderr.write(f"[chaos-gate world] {name}({json.dumps(args, default=str)}) -> {what}\n")


def world_serve(path: Path, *, http: bool, host: str, port: int, faults: bool, seed: int, name: str | None,
                state_file: Path | None, out=sys.stdout) -> int:
    from gate.proxy.world_upstream import WorldUpstream

    world = load_world(path, name)
    upstream = WorldUpstream(world, seed, faults=faults, on_call=_log)
    upstream.reset()
    if not http:
        return _stdio(upstream, state_file)
    app = WorldApp(upstream, state_file)
    sock = _bind(host, port)
    base = f"http://{host}:{sock.getsockname()[1]}"
    out.write(f"chaos-gate world serve: {world.name} at {base} (MCP: {base}/mcp, REST: {base}/, "
              f"OpenAPI: {base}/openapi.json, faults {'on' if faults and world.faults else 'off'})\n"
              f"{world.env}={base}\n{world.mcp_env or world.env.removesuffix('_URL') + '_MCP_URL'}={base}/mcp\n")
    out.flush()
    _serve(app, sock)
    return 0


def _stdio(upstream, state_file: Path | None) -> int:
    """MCP over stdio: newline-delimited JSON-RPC on stdin/stdout; logs on stderr."""
    async def loop():
        reader = asyncio.StreamReader()
        await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                answer = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
            else:
                answer, _ = await upstream.rpc(msg) if isinstance(msg, dict) else (
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "not a request"}}, "")
            if state_file is not None:
                state_file.write_text(json.dumps(upstream.state.snapshot(), indent=1))
            if answer is not None:
                sys.stdout.write(json.dumps(answer) + "\n")
                sys.stdout.flush()
    asyncio.run(loop())
    return 0
