"""The proxy as an ASGI app: route, consult the schedule, apply a fault or pass through, trace.

One instance per worker. `current` is the (cell, run) in progress; requests that
arrive outside any run (the agent warming up) pass through untraced and unfaulted.
"""

from __future__ import annotations

import asyncio
import json
import time

from gate.faults import Schedule
from gate.faults.shapes import error_body
from gate.proxy.exchange import Aborted, Exchange
from gate.proxy.routes import Route, split_path
from gate.proxy.trace import TraceEntry
from gate.proxy.upstream import UpstreamUnavailable


class RunState:
    """Everything the proxy keeps for one run of one cell."""

    def __init__(self, schedule: Schedule | None, replay=None, record: bool = False):
        self.schedule = schedule
        self.replay = replay  # a ReplayBook: answer from the recording, never forward
        self.record = record
        self.trace: list[TraceEntry] = []
        self.t0 = time.monotonic()
        self.over = asyncio.Event()
        self.calls: dict[str, int] = {}
        self.clock_offset = 0.0  # fake-clock seconds added by latency faults

    def now_ms(self) -> float:
        return round((time.monotonic() - self.t0) * 1000, 1)

    async def wait_or_end(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.over.wait(), seconds)
        except TimeoutError:
            pass

    async def advance_clock(self, seconds: float) -> None:
        self.clock_offset += seconds


class ProxyApp:
    def __init__(self, routes: dict[tuple[str, str], Route]):
        self.routes = routes
        self.current: RunState | None = None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        parts = split_path(scope["path"])
        route = self.routes.get(parts[:2]) if parts else None
        if route is None:
            known = ", ".join(f"/{k}/{n}" for k, n in sorted(self.routes))
            return await _plain(send, 404, {"error": f"chaos-gate proxy: no upstream at {scope['path']} (known: {known})"})
        body = await _read_body(receive)
        path = parts[2] + (("?" + scope["query_string"].decode()) if scope.get("query_string") else "")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        info = route.describe(scope["method"], path, body)
        await self._handle(route, info, headers, body, send)

    async def _handle(self, route, info, headers, body, send):
        run = self.current
        entry = TraceEntry(seq=len(run.trace) + 1 if run else 0, target=route.name, kind=route.kind,
                           method=info.method, path=info.path, model=info.model, tool=info.tool,
                           rpc_method=info.rpc_method, body=body,
                           idempotency_key=_header(headers, "idempotency-key", "x-idempotency-key"))
        state = run or RunState(None)
        entry.start_ms = state.now_ms()
        if run is not None:
            run.calls[route.name] = entry.call = run.calls.get(route.name, 0) + 1
            run.trace.append(entry)
        decision = None
        if run is not None and run.schedule is not None and route.faultable(info):
            decision = run.schedule.decide(info)
        ex = Exchange(info, headers, body, send, route.upstream, entry, state)
        try:
            if run is not None and run.replay is not None:
                await _serve_recorded(run.replay, info, body, ex)
            elif decision is not None:
                entry.fault = decision.fault.label()
                await decision.fault.apply(ex)
            else:
                await ex.pipe(await ex.forward())
        except Aborted:
            pass
        except UpstreamUnavailable as exc:
            entry.note = f"upstream unreachable: {exc}"[:200]
            if not ex.started:
                await ex.respond_json(502, error_body(info.provider, 502, "chaos-gate proxy: upstream unreachable"))
        except (OSError, RuntimeError) as exc:  # the agent went away mid-response
            entry.note = (entry.note + f" client gone ({type(exc).__name__})").strip()
        finally:
            entry.end_ms = state.now_ms()


def _header(headers, *names) -> str | None:
    wanted = set(names)
    return next((v for k, v in headers if k.lower() in wanted), None)


async def _read_body(receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _plain(send, status: int, doc: dict) -> None:
    body = json.dumps(doc).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _serve_recorded(book, info, body: bytes, ex: Exchange) -> None:
    from gate.replay.session import request_doc

    recorded = book.take(info, ex.entry.body_digest)
    if recorded is None:
        ex.entry.fault = "replay_miss"
        ex.entry.extra["diff"] = book.explain_miss(info, request_doc(body))
        ex.note("not in the recording")
        await ex.respond_json(502, error_body(info.provider, 502, "chaos-gate replay: request not in the recording"))
        return
    ex.entry.fault = recorded.fault
    if recorded.status is None:
        await ex.abort("dropped, as recorded")
    events = recorded.events
    if events is None and info.stream and recorded.kind == "llm" and recorded.status == 200:
        from gate.proxy.sim import completion_as_stream

        events = completion_as_stream(recorded.body, info.provider)  # imported JSON, streaming agent
    if events is not None:
        await ex.start(recorded.status, content_type="text/event-stream")
        for event in events:
            await ex.write(event.encode())
        await ex.finish()
        return
    await ex.respond(recorded.status, recorded.body.encode(), content_type=recorded.content_type)
