"""Serve a world as a tool upstream, in-process behind the proxy: REST + OpenAPI, and MCP.

Because it sits where a real upstream would, every tool fault applies to it unchanged;
`timeout_after_write` forwards here first, so the write is committed before the answer
is withheld. One WorldUpstream per worker; `reset` gives each cell run fresh state.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qsl, urlsplit

from gate.proxy.exchange import UpstreamResponse, WholeBody
from gate.worlds.model import World
from gate.worlds.state import OperationError, WorldState

JSON_TYPES = {"str": {"type": "string"}, "int": {"type": "integer"}, "float": {"type": "number"},
              "bool": {"type": "boolean"}, "datetime": {"type": "string", "format": "date-time"}}


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
        return {"type": "object"}
    rtype = world.types[op.type]
    if op.op in ("get", "delete"):
        return {"type": "object", "properties": {rtype.key: {"type": "string"}}, "required": [rtype.key]}
    if op.op == "list":
        names = op.filters or list(rtype.fields)
        return {"type": "object", "properties": {f: json_schema(rtype.fields[f]) for f in names if f in rtype.fields}}
    props = {f: json_schema(s) for f, s in rtype.fields.items()}
    return {"type": "object", "properties": props, **({"required": [rtype.key]} if op.op == "update" else {})}


def _static(status: int, doc, ctype: str = "application/json", headers=()) -> UpstreamResponse:
    body = b"" if doc is None else json.dumps(doc).encode()
    return UpstreamResponse(status, [("content-type", ctype), *headers], WholeBody(body))


class WorldUpstream:
    def __init__(self, world: World, seed: int):
        self.world, self.seed = world, seed
        self.state = WorldState(world, seed)

    def reset(self, clock) -> None:
        self.state = WorldState(self.world, self.seed, clock)

    async def send(self, info, headers, body: bytes) -> UpstreamResponse:
        try:
            if info.provider == "mcp":
                return self._mcp(info, body)
            return self._rest(info, body)
        except OperationError as exc:
            return _static(exc.status, {"error": str(exc)})

    # -- REST ----------------------------------------------------------------------
    def _rest(self, info, body: bytes) -> UpstreamResponse:
        url = urlsplit(info.path)
        parts = [p for p in url.path.split("/") if p]
        args = dict(parse_qsl(url.query))
        if info.method == "GET" and parts == ["openapi.json"]:
            return _static(200, self.openapi())
        if body:
            try:
                args.update(json.loads(body))
            except ValueError:
                return _static(400, {"error": "body is not JSON"})
        if len(parts) == 2 and parts[0] == "ops" and info.method == "POST":
            return _static(200, self.state.run(parts[1], args))
        name = self._route(info.method, parts, args)
        if name is None:
            return _static(404, {"error": f"no route {info.method} {url.path}"})
        status = 201 if self.world.operations[name].op == "create" else 200
        return _static(status, self.state.run(name, args))

    def _route(self, method: str, parts: list[str], args: dict) -> str | None:
        wanted = {("GET", 1): "list", ("POST", 1): "create", ("GET", 2): "get", ("PATCH", 2): "update",
                  ("PUT", 2): "update", ("DELETE", 2): "delete"}.get((method, len(parts)))
        for name, op in self.world.operations.items():
            if op.op == wanted and op.type and parts and parts[0] in (op.type, op.type + "s"):
                if len(parts) == 2:
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

    # -- MCP (streamable HTTP, JSON responses) -------------------------------------------
    def _mcp(self, info, body: bytes) -> UpstreamResponse:
        if info.method == "GET":
            return _static(405, {"error": "no server-initiated stream"})
        if info.method == "DELETE":
            return _static(200, {})
        try:
            msg = json.loads(body)
        except ValueError:
            return _static(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
        if "id" not in msg:  # a notification
            return _static(202, None)
        rid, method, params = msg["id"], msg.get("method"), msg.get("params") or {}
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                      "capabilities": {"tools": {"listChanged": False}},
                      "serverInfo": {"name": self.world.name, "version": "1"}}
            return _static(200, {"jsonrpc": "2.0", "id": rid, "result": result}, headers=[("mcp-session-id", "world")])
        if method == "ping":
            return _static(200, {"jsonrpc": "2.0", "id": rid, "result": {}})
        if method == "tools/list":
            tools = [{"name": n, "description": op.description or f"{op.op} {op.type or ''}".strip(),
                      "inputSchema": input_schema(self.world, op)} for n, op in self.world.operations.items()]
            return _static(200, {"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
        if method == "tools/call":
            try:
                out = self.state.run(params.get("name"), params.get("arguments") or {})
                result = {"content": [{"type": "text", "text": json.dumps(out)}], "isError": False}
            except OperationError as exc:
                result = {"content": [{"type": "text", "text": str(exc)}], "isError": True}
            return _static(200, {"jsonrpc": "2.0", "id": rid, "result": result})
        return _static(200, {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}})
