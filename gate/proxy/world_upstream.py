"""Serve a world as a tool upstream, in-process behind the proxy: REST + OpenAPI, and MCP.

Because it sits where a real upstream would, every wire fault applies to it unchanged;
`timeout_after_write` forwards here first, so the write is committed before the answer
is withheld. The world's own faults (gate/worlds/faults.py) are decided here, per
operation call, and named in the trace entry's note (`world fault: timeout`). One
WorldUpstream per worker; `reset` gives each cell run fresh state.

Answers: REST gives the status (201 for a create, 404/422/409/429/500/504 for errors,
`{"error": message}`); MCP gives `isError` tool results carrying the same message, a
valid empty result for `empty_result`, and text that is not JSON for `malformed_json`.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from gate.proxy.exchange import UpstreamResponse, WholeBody
from gate.worlds.faults import WorldFaults, applies
from gate.worlds.model import World
from gate.worlds.state import OperationError, WorldState, function_of

JSON_TYPES = {"str": {"type": "string"}, "int": {"type": "integer"}, "float": {"type": "number"},
              "bool": {"type": "boolean"}, "datetime": {"type": "string", "format": "date-time"}}
STATUS = {"http_500": 500, "http_429": 429, "not_found": 404, "timeout": 504}
MALFORMED = b"}{ not valid json"


def json_schema(spec) -> dict:
    if isinstance(spec, str):
        return dict(JSON_TYPES[spec])
    (kind, arg), = spec.items()
    if kind == "enum":
        return {"enum": list(arg)}
    if kind == "ref":
        return {"type": "string", "description": f"id of a {arg}"}
    if kind == "object":
        return {"type": "object", "properties": {k: json_schema(v) for k, v in arg.items()}}
    return {"type": "array", "items": json_schema(arg)}


def input_schema(world: World, op) -> dict:
    if op.op == "custom":
        from gate.worlds.custom import CodeError, args_of

        try:
            return args_of(function_of(world, op.function)).schema()
        except CodeError:
            return {"type": "object"}
    rtype = world.types[op.type]
    if op.op in ("get", "delete"):
        return {"type": "object", "properties": {rtype.key: {"type": "string"}}, "required": [rtype.key]}
    if op.op == "list":
        names = op.filters or list(rtype.fields)
        return {"type": "object", "properties": {f: json_schema(rtype.fields[f]) for f in names if f in rtype.fields}}
    props = {f: json_schema(s) for f, s in rtype.fields.items() if not (op.op == "create" and f == rtype.key)}
    if op.op == "update":
        props[rtype.key] = {"type": "string"}
    return {"type": "object", "properties": props, **({"required": [rtype.key]} if op.op == "update" else {})}


def hints(op) -> dict:
    return {"readOnlyHint": op.op in ("get", "list"), "idempotentHint": op.op in ("get", "list", "update", "delete")}


def jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda o: o.to_dict() if hasattr(o, "to_dict") else str(o)))


def _static(status: int, doc, ctype: str = "application/json", headers=(), note: str = "",
            raw: bytes | None = None) -> UpstreamResponse:
    body = raw if raw is not None else (b"" if doc is None else json.dumps(doc).encode())
    resp = UpstreamResponse(status, [("content-type", ctype), *headers], WholeBody(body))
    resp.note = note
    return resp


@dataclass
class Outcome:
    """One operation call's result, before it is shaped for REST or MCP."""

    status: int
    doc: Any = None
    error: str | None = None
    fault: str | None = None
    raw: bytes | None = None  # malformed_json: bytes that are not JSON
    latency_ms: float = 0.0

    @property
    def note(self) -> str:
        parts = [f"world fault: {self.fault}"] if self.fault else []
        parts += [f"world latency: {self.latency_ms:g} ms"] if self.latency_ms else []
        return "; ".join(parts)


class WorldUpstream:
    def __init__(self, world: World, seed: int, faults: bool | None = None, on_call=None):
        self.world, self.seed, self.forced = world, seed, faults
        self.on_call = on_call  # (operation, arguments, Outcome) -> None: `world serve` logs each call
        self.state = WorldState(world, seed)
        self.faults = WorldFaults(world, seed, "serve", 0, applies(world, None, faults))

    def reset(self, clock=None, cell=None, run: int = 0) -> None:
        """Fresh state for a (cell, run): data from the config's seed, faults from the cell's."""
        self.state = WorldState(self.world, self.seed, clock)
        seed, cell_id = (getattr(cell, "seed", self.seed), getattr(cell, "id", "")) if cell else (self.seed, "serve")
        self.faults = WorldFaults(self.world, seed, cell_id, run, applies(self.world, cell, self.forced))

    async def call(self, name: str, args) -> Outcome:
        op = self.world.operations.get(name)
        decision = self.faults.decide(name, self.state, args) if op is not None else None
        kind = decision.kind if decision else None
        if decision and decision.latency_ms:
            await asyncio.sleep(decision.latency_ms / 1000)
            self.state.clock.advance(decision.latency_ms / 1000)
        if kind in ("http_500", "http_429", "not_found"):
            out = Outcome(STATUS[kind], error=f"{kind}: {name} refused (injected by the world's faults)", fault=kind)
        elif kind == "empty_result":
            out = Outcome(200, [] if op.op == "list" else {}, fault=kind)
        elif kind == "malformed_json":
            out = Outcome(200, raw=MALFORMED, fault=kind)
        else:
            try:
                result = jsonable(self.state.run(name, args))
                out = Outcome(201 if op is not None and op.op == "create" else 200, result)
            except OperationError as exc:
                out = Outcome(exc.status, error=str(exc))
            if kind == "timeout":  # it ran (and wrote); the answer is lost
                out = Outcome(504, error=f"timeout: {name} timed out after executing", fault=kind)
        out.latency_ms = decision.latency_ms if decision else 0.0
        if self.on_call is not None:
            self.on_call(name, args, out)
        return out

    async def send(self, info, headers, body: bytes) -> UpstreamResponse:
        if info.provider == "mcp":
            return await self._mcp(info, body)
        return await self._rest(info, body)

    # -- REST ----------------------------------------------------------------------
    async def _rest(self, info, body: bytes) -> UpstreamResponse:
        url = urlsplit(info.path)
        parts = [p for p in url.path.split("/") if p]
        args = dict(parse_qsl(url.query))
        if info.method == "GET" and parts == ["openapi.json"]:
            return _static(200, self.openapi())
        if body:
            try:
                doc = json.loads(body)
            except ValueError:
                return _static(400, {"error": "body is not JSON"})
            if not isinstance(doc, dict):
                return _static(422, {"error": "the body must be a JSON object of arguments"})
            args.update(doc)
        name = self.operation_for(info.method, url.path, args)
        if name is None:
            return _static(404, {"error": f"no route {info.method} {url.path}"})
        out = await self.call(name, args)
        headers = [("retry-after", "1")] if out.status == 429 else []
        if out.error is not None:
            return _static(out.status, {"error": out.error}, headers=headers, note=out.note)
        return _static(out.status, out.doc, note=out.note, raw=out.raw)

    def operation_for(self, method: str, path: str, args: dict | None = None) -> str | None:
        """The operation a REST request names: POST /ops/NAME, or a resource route (GET /orders/7)."""
        parts = [p for p in urlsplit(path).path.split("/") if p]
        if len(parts) == 2 and parts[0] == "ops" and method == "POST":
            return parts[1]
        wanted = {("GET", 1): "list", ("POST", 1): "create", ("GET", 2): "get", ("PATCH", 2): "update",
                  ("PUT", 2): "update", ("DELETE", 2): "delete"}.get((method, len(parts)))
        for name, op in self.world.operations.items():
            if op.op == wanted and op.type and parts and parts[0] in (op.type, op.type + "s"):
                if len(parts) == 2 and args is not None:
                    args[self.world.types[op.type].key] = parts[1]
                return name
        return None

    def openapi(self) -> dict:
        paths: dict = {}
        verbs = {"list": ("get", "/{t}s"), "create": ("post", "/{t}s"), "get": ("get", "/{t}s/{{id}}"),
                 "update": ("patch", "/{t}s/{{id}}"), "delete": ("delete", "/{t}s/{{id}}")}
        for name, op in self.world.operations.items():
            paths.setdefault(f"/ops/{name}", {})["post"] = {
                "operationId": name, "description": op.description or op.op,
                "requestBody": {"content": {"application/json": {"schema": input_schema(self.world, op)}}},
                "responses": {"200": {"description": "result"}}}
            if op.op in verbs:
                verb, template = verbs[op.op]
                paths.setdefault(template.format(t=op.type), {})[verb] = {
                    "operationId": f"{name}_rest", "responses": {"200": {"description": "result"}}}
        return {"openapi": "3.1.0", "info": {"title": f"{self.world.name} (chaos-gate world)", "version": "1"},
                "paths": paths}

    # -- MCP (streamable HTTP, JSON responses; stdio in gate/worlds/standalone.py) --------------
    async def _mcp(self, info, body: bytes) -> UpstreamResponse:
        if info.method == "GET":
            return _static(405, {"error": "no server-initiated stream"})
        if info.method == "DELETE":
            return _static(200, {})
        try:
            msg = json.loads(body)
        except ValueError:
            return _static(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
        if not isinstance(msg, dict):
            return _static(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "not a request"}})
        answer, note = await self.rpc(msg)
        if answer is None:  # a notification
            return _static(202, None)
        headers = [("mcp-session-id", "world")] if msg.get("method") == "initialize" else []
        return _static(200, answer, headers=headers, note=note)

    async def rpc(self, msg: dict) -> tuple[dict | None, str]:
        """One JSON-RPC message -> (its answer, or None for a notification; the trace note)."""
        if "id" not in msg:
            return None, ""
        rid, method, params = msg["id"], msg.get("method"), msg.get("params") or {}

        def ok(result) -> tuple[dict, str]:
            return {"jsonrpc": "2.0", "id": rid, "result": result}, ""
        if method == "initialize":
            return ok({"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                       "capabilities": {"tools": {"listChanged": False}},
                       "serverInfo": {"name": self.world.name, "version": "1"}})
        if method == "ping":
            return ok({})
        if method == "tools/list":
            return ok({"tools": [{"name": n, "description": op.description or f"{op.op} {op.type or ''}".strip(),
                                  "inputSchema": input_schema(self.world, op), "annotations": hints(op)}
                                 for n, op in self.world.operations.items()]})
        if method == "tools/call":
            out = await self.call(params.get("name"), params.get("arguments") or {})
            if out.error is not None:
                result = {"content": [{"type": "text", "text": out.error}], "isError": True}
            elif out.raw is not None:
                result = {"content": [{"type": "text", "text": out.raw.decode()}], "isError": False}
            elif out.fault == "empty_result":
                result = {"content": [], "isError": False}
            else:
                result = {"content": [{"type": "text", "text": json.dumps(out.doc)}], "isError": False}
            answer, _ = ok(result)
            return answer, out.note
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}}, ""
