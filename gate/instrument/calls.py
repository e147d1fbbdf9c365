"""The proxy's `/fn/` endpoints: in-process tool calls become exchanges of the worker.

    POST /fn/hello  {seam, pid, ...}          a seam the agent's process patched
    POST /fn/clock  {pid, n, at}              the process's own clock, under time_scale (clock.py)
    POST /fn/begin  {id, tool, transport, framework, arguments, returns, hints}
    POST /fn/end    {id, ok, type, value | error}
    POST /fn/handoff {tool, agent, pid}       the agent's framework handed over to another agent
    POST /fn/died   {command, error, tail}    a tool server the agent started died before it answered

Each path carries the worker's token first (`/fn/<token>/begin`): the instrumentation finds it in
CHAOS_GATE_FN_URL, and a call without it — from another process, or a daemon that outlived its
agent — is refused. A call may not take a wire tool's name either (an HTTP or MCP tool, a model):
it would share that tool's trace and call counters, so a fault meant for the wire call would fire
on the forged one. Each refusal is kept on the run (`RunState.forged`): that run is not judged.

A begin starts the call's exchange as a task of its own (the proxy's usual path:
trace entry, schedule decision, fault or pass-through; gate/proxy/app.py) and answers
as soon as that exchange says what the agent must do first. The end call hands the
function's result to the same exchange and answers with what it decided. Whatever
goes wrong here, the agent is told to carry on unfaulted: a broken instrument must
never pass for a broken agent.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from dataclasses import dataclass

from gate.instrument.clock import ClockReadings
from gate.instrument.exchange import FunctionCall, FunctionExchange
from gate.proxy.exchange import RequestInfo, plain_json

# function transport: target names of the trace and of faults (`target: functions`)
TARGETS = {"function": "functions", "mcp-stdio": "mcp-stdio"}


@dataclass
class FunctionRoute:
    """A route for in-process calls of one transport; answers come from the agent itself."""

    kind: str
    name: str
    provider: str
    upstream: object = None
    exchange = FunctionExchange

    def faultable(self, info: RequestInfo) -> bool:
        return True


class FunctionEndpoints:
    def __init__(self, app):
        self.app = app
        self.calls: dict[str, FunctionCall] = {}
        self.seams: dict[str, dict] = {}  # seam name -> what the agent said when it patched it
        self.frameworks: set[str] = set()  # the frameworks whose seams made a call (a seam of another is idle)
        self.start_failures: dict[str, dict] = {}  # command -> {command, error, tail}: tool servers that died
        self.command_targets: set[str] = set()  # `kind: command` tool names (set by the hook)
        self.clock = ClockReadings()  # the agent processes' own clock rates (gate/instrument/clock.py)
        self.token: str | None = None  # set by the runner's hook; None: no token asked (a bare proxy)

    async def handle(self, path: str, body: bytes, send) -> None:
        what = path
        if self.token is not None:
            given, _, what = path.partition("/")
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return await self._refuse(send, "a call to the gate's /fn/ endpoint without its token")
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            return await plain_json(send, 200, {"action": "run"})
        if what == "hello":
            seam = str(doc.get("seam"))
            self.seams.setdefault(seam, {k: v for k, v in doc.items() if k != "seam"})
            run = self.app.current
            if seam.endswith(":failed") and run is not None:  # at call time: this run is the gate's failure
                run.seam_failures.append(f"{seam[:-7]}: {str(doc.get('error') or '')[:300]}")
            return await plain_json(send, 200, {})
        if what == "handoff":  # no call: the reach line and the next LLM call's trace step say it
            self.app.note_handoff(str(doc.get("tool") or "")[:200], str(doc.get("agent") or "")[:200])
            return await plain_json(send, 200, {})
        if what == "died":  # a tool server the agent started ended before it answered (its seam saw it)
            self.note_start_failure(doc)
            return await plain_json(send, 200, {})
        if what == "clock":
            self.clock.note(doc)
            return await plain_json(send, 200, {})
        if what == "begin":
            return await plain_json(send, 200, await self._begin(doc))
        if what == "end":
            return await plain_json(send, 200, await self._end(doc))
        await plain_json(send, 200, {"action": "run"})

    def note_start_failure(self, doc: dict) -> None:
        """Kept once per command (the report's reach says it, with the stderr tail); the run in progress
        gets a note too, so the cell whose agent found no tools says why."""
        command = str(doc.get("command") or "?")[:300]
        failure = {"command": command, "error": str(doc.get("error") or "")[:500],
                   "tail": str(doc.get("tail") or "")[-3000:]}
        self.start_failures.setdefault(command, failure)
        run = self.app.current
        if run is not None:
            run.start_failures.append(failure)

    def route_for(self, doc: dict) -> FunctionRoute:
        transport = str(doc.get("transport") or "function")
        if transport == "command":  # a `kind: command` tool's shim: traced under the tool's own name
            from gate.instrument.commands import CommandRoute

            self.seams.setdefault(f"command:{doc.get('tool')}", {"shim": "PATH"})  # reached, for the report
            return CommandRoute(str(doc.get("tool")))
        if doc.get("framework") == "declared":  # a `kind: function` tool: traced under its own name
            return FunctionRoute("tool", str(doc.get("tool")), "function")
        return FunctionRoute("tool", TARGETS.get(transport, "functions"), "mcp" if transport == "mcp-stdio" else "function")

    def describe(self, route: FunctionRoute, doc: dict) -> tuple[RequestInfo, bytes]:
        tool = str(doc.get("tool") or "?")
        info = RequestInfo(kind="tool", name=route.name, provider=route.provider, method="CALL", path=f"/{tool}",
                           tool=tool)
        if route.provider == "mcp":
            info.rpc_method, info.rpc_id = "tools/call", 0
        body = json.dumps({"name": tool, "arguments": doc.get("arguments")}, sort_keys=True, default=repr)
        return info, body.encode()

    async def _refuse(self, send, why: str) -> None:
        run = self.app.current
        if run is not None:
            run.forged.append(why)
        await plain_json(send, 403, {"error": f"chaos-gate: refused: {why}"})

    def _wire_name(self, route: FunctionRoute) -> bool:
        """Whether an in-process route would take the name of a wire route (its trace and counters)."""
        return any(name == route.name for _, name in self.app.routes)

    async def _begin(self, doc: dict) -> dict:
        route = self.route_for(doc)
        if len(self.frameworks) < 64:  # names come from the agent: bounded
            self.frameworks.add(str(doc.get("framework") or "")[:100])
        if self._wire_name(route):
            run = self.app.current
            if run is not None:
                run.forged.append(f"an in-process call named after the wire tool {route.name!r}")
            return {"action": "run"}  # not traced, not faulted: the run it came in is not judged
        call = FunctionCall(doc)
        self.calls[str(doc.get("id"))] = call
        info, body = self.describe(route, doc)
        task = call.task = asyncio.ensure_future(self.app._handle(route, info, [], body, call))
        task.add_done_callback(lambda _: self.calls.pop(str(doc.get("id")), None))
        return await _first_of(call.first, task, {"action": "run"})

    async def _end(self, doc: dict) -> dict:
        call = self.calls.get(str(doc.get("id")))
        if call is None or call.result.done():
            return {"action": "return"}
        call.result.set_result(doc)
        return await _first_of(call.final, call.task, {"action": "return"})


async def _first_of(future: asyncio.Future, task, default: dict) -> dict:
    """The exchange's answer, or `default` if its task ended without giving one."""
    done, _ = await asyncio.wait({future, task}, return_when=asyncio.FIRST_COMPLETED)
    return future.result() if future.done() and not future.cancelled() else default
