"""The proxy as an ASGI app: route, consult the schedule, apply a fault or pass through, trace.

One instance per worker. `current` is the (cell, run) in progress; requests that
arrive outside any run pass through unfaulted and are kept as `stray` (with the last
cell that ran): warm-up calls are legitimate, but an agent that outlived its cell must
never have its calls charged to the next one.

A call that arrives during one cell but belongs to an earlier one (a background write after the
answer, a conversation that ran on past it) is kept as that cell's stray, `late`, unfaulted and out of
the running cell's trace: gate/proxy/late_calls.py tells them apart by cause.
"""

from __future__ import annotations

import asyncio
import time

from gate.transport.clock import AgentClock
from gate.contracts.writes import call_writes, described_read, http_writes
from gate.faults import Schedule
from gate.faults.shapes import error_for
from gate.dialects import handoffs, offered
from gate.proxy.exchange import Aborted, Exchange, plain_json
from gate.proxy.late_calls import LateCalls
from gate.proxy.mcp_tools import McpTools
from gate.proxy.routes import Route, split_path
from gate.proxy.trace import TraceEntry
from gate.proxy.upstream import UpstreamUnavailable


MAX_OFFERED = 1000  # tool names kept for coverage's "the agent offered" (gate/verdict/reach.py)


class RunState:
    """Everything the proxy keeps for one run of one cell."""

    def __init__(self, schedule: Schedule | None, replay=None, record: bool = False, scale: float = 1.0,
                 agent_pid=None):
        self.schedule = schedule
        # The agent's clock runs `scale` times fast (gate/agent/dilation.py): durations are agent time,
        # waited at 1/scale real time, and timings are reported in agent time (the 1x-equivalent
        # time base of AgentClock: waits N-fold, the agent's CPU at face value).
        self.scale = scale
        self.clock = AgentClock(scale, agent_pid) if scale > 1 else None
        self.replay = replay  # a ReplayBook: answer from the recording, never forward
        self.record = record
        self.trace: list[TraceEntry] = []
        self.t0 = time.monotonic()
        self.over = asyncio.Event()
        self.calls: dict[str, int] = {}
        self.clock_offset = 0.0  # fake-clock seconds added by latency faults
        self.active: set[asyncio.Task] = set()  # exchanges still answering (judged when they end)
        self.open_functions: list[TraceEntry] = []  # in-process tool calls now running in the agent
        self.model_answered = False  # an LLM answer reached the agent in this run (late writes: see above)
        self.seam_failures: list[str] = []  # in-process seams that broke during this run (a harness error)
        self.start_failures: list[dict] = []  # tool servers the agent started that died before answering
        self.forged: list[str] = []  # /fn/ calls refused: no token, or a wire tool's name (the agent's doing)
        self.handoff: str | None = None  # a handoff the agent's seam reported, for the next LLM call's trace step
        self.input_text = ""  # what the cell asked the agent (a late model call names its own cell's)
        self.turn: int | None = None  # a conversation's turn now sent (set by the runner's hook, turn by turn)
        self.fired = asyncio.Event()  # a fault fired in this run (a probe session starts then)
        self.probe = None  # a probe session's calls beside this run (gate/proxy/probe_calls.py)

    async def settle(self, seconds: float = 1.0) -> None:
        """Let exchanges released by the end of the run finish, so their judgement counts."""
        if self.active:
            await asyncio.wait(set(self.active), timeout=seconds)

    def now_ms(self) -> float:
        """Agent-time milliseconds since the run began."""
        if self.clock is not None:
            return round(self.clock.elapsed() * 1000, 1)
        return round((time.monotonic() - self.t0) * 1000, 1)

    def real(self, seconds: float) -> float:
        """Real seconds to wait for `seconds` of agent time."""
        return seconds / self.scale

    async def wait_or_end(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.over.wait(), self.real(seconds))
        except TimeoutError:
            pass

    async def advance_clock(self, seconds: float) -> None:
        self.clock_offset += seconds


class ProxyApp:
    def __init__(self, routes: dict[tuple[str, str], Route], functions=None):
        """`functions(app)` makes the handler of `/fn/` (in-process tool calls: gate/instrument/calls.py),
        handed in by the runner because the instrumentation sits above the proxy; without it `/fn/` is a 404."""
        self.routes = routes
        self.current: RunState | None = None
        self.on_header = None  # (name, value) -> None: lets the Redactor learn the agent's auth headers
        self.last_cell: str | None = None  # set by the hook when a run begins
        # calls seen between runs: (last cell, target, method, path, status); small tuples,
        # not entries, because a runaway agent can make many and their bodies can be large
        self.stray: list[tuple] = []
        self.mcp = McpTools()  # what MCP upstreams said of their tools (gate/proxy/mcp_tools.py)
        self.functions = functions(self) if functions is not None else None  # /fn/: in-process tool calls
        self.offered: set[str] = set()  # tool names the agent offered its model or called (coverage)
        self.described: dict[str, str] = {}  # tool name -> the description the agent offered its model with it
        self.model_called: set[str] = set()  # tool names the model called, read off the history (reach)
        self.handoffs: dict[str, str] = {}  # handoff tool name -> the agent it hands to ("" until taken) (reach)
        self.calls_by_target: dict[str, int] = {}  # what the proxy reached, for the report's reach line
        self.declared_writes: dict[str, bool] = {}  # `tools[].writes` by tool name (set by the runner's hook)
        self.late = LateCalls()  # whose a call is, when it arrives after its cell (gate/proxy/late_calls.py)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        try:
            if scope["path"].startswith("/fn/") and self.functions is not None:
                return await self.functions.handle(scope["path"][4:], await _read_body(receive), send)
            parts = split_path(scope["path"])
            route = self.routes.get(parts[:2]) if parts else None
            if route is None:
                known = ", ".join(f"/{k}/{n}" for k, n in sorted(self.routes))
                why = f"chaos-gate proxy: no upstream at {scope['path']} (known: {known})"
                return await plain_json(send, 404, {"error": why})
            body = await _read_body(receive)
        except AgentGone:  # the request never arrived whole: nothing was forwarded, nothing to answer
            return
        path = parts[2] + (("?" + scope["query_string"].decode()) if scope.get("query_string") else "")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        if self.on_header is not None:
            for name, value in headers:
                self.on_header(name, value)
        info = route.describe(scope["method"], path, body)
        await self._handle(route, info, headers, body, send, receive)

    async def _handle(self, route, info, headers, body, send, receive=None):
        run = self.current
        owner = self.last_cell  # the cell a call outside any run is charged to
        if run is not None and run.probe is not None and run.probe.claims(route, info):
            run = run.probe.state  # the probe session's: never faulted, kept out of the cell's trace
        earlier = self.late.owner(run, route, info, lambda: self._writes(route, info),
                                  any(k.startswith("llm:") for k in self.calls_by_target)) \
            if run is not None and run is self.current else None
        if earlier is not None:
            run, owner = None, earlier
        entry = TraceEntry(seq=len(run.trace) + 1 if run else 0, target=route.name, kind=route.kind,
                           method=info.method, path=info.path, model=info.model, tool=info.tool,
                           rpc_method=info.rpc_method, body=body,
                           idempotency_key=_idempotency_key(headers))
        self.mcp.mark(entry, info)
        if info.stream:  # exploration faults a streamed call's stream (gate/explore/kinds.py)
            entry.extra["stream"] = True
        declared = self._declared(route, info)
        if declared is not None:  # the team's word over the server's hints and the name (gate/contracts/writes.py)
            entry.extra["writes"] = declared
        elif route.kind == "tool" and info.tool and entry.extra.get("read_only") is None \
                and described_read(info.tool, self.described.get(info.tool)):
            entry.extra["read_only"] = True  # its description says it reads (rule 3b); a server's hint still wins
        cycle = getattr(send, "__self__", None)  # the server's own record of this request (gate/proxy/server.py)
        send = self.mcp.watch(info, send)
        state = run or RunState(None)
        entry.start_ms = state.now_ms()
        self._note_reach(route, info, body, entry)
        if run is not None:
            info.turn = entry.turn = run.turn
            if run.open_functions and route.kind == "tool" and not hasattr(route, "exchange"):
                entry.extra["within"] = run.open_functions[-1].seq  # made by the function tool now running
            run.calls[route.name] = entry.call = run.calls.get(route.name, 0) + 1
            run.trace.append(entry)
            task = asyncio.current_task()
            run.active.add(task)
        decision = None
        if run is not None and run.schedule is not None and route.faultable(info):
            decision = run.schedule.decide(info, entry.call)
            if decision is not None:
                run.fired.set()
        # an in-process route brings its own Exchange (gate/instrument/exchange.py); `send` is then its call
        ex = getattr(route, "exchange", Exchange)(info, headers, body, send, route.upstream, entry, state, receive,
                                                  honest=decision is not None)
        try:
            if run is not None and run.replay is not None and decision is None:
                await _serve_recorded(run.replay, info, body, ex)
            elif decision is not None:
                if run.replay is not None:  # chaos on a replay: the recording is the upstream the fault sees
                    from gate.proxy.replayed import ReplayUpstream

                    ex.upstream = ReplayUpstream(run.replay, ex)
                entry.fault, entry.fault_index = decision.fault.label(), decision.index
                await decision.fault.apply(ex)
            else:
                await ex.pipe(await ex.forward())
        except Aborted:
            pass
        except UpstreamUnavailable as exc:
            entry.note = f"upstream unreachable: {exc}"[:200]
            ex.not_applicable(entry.note)
            if not ex.started:
                await ex.respond_json(502, error_for(info, 502, "chaos-gate proxy: upstream unreachable"))
        except (OSError, RuntimeError) as exc:  # the agent went away mid-response
            entry.note = (entry.note + f" client gone ({type(exc).__name__})").strip()
        finally:
            if getattr(cycle, "agent_gone", False):  # it hung up before its whole answer was written
                entry.extra["agent_gone"] = True
                if entry.extra.get("hold_ended") != "gone":  # a hold's note says so already
                    ex.note("the agent disconnected before its answer was complete")
            entry.end_ms = state.now_ms()
            if ex.meter is not None:  # only a forwarded call is billed
                entry.usage = ex.meter.result()
                if not ex.meter.overflow:  # what the model answered, read whole (gate/explore/sites.py)
                    entry.extra["answer_tool_calls"] = ex.meter.tool_calls
            if decision is not None:
                _judge(run.schedule, decision.index, ex)
            if route.kind == "llm" and entry.status is not None:  # whose conversation the last answer was
                self.late.answered(owner if run is None and owner != self.last_cell else None)
            if run is None:
                late = owner != self.last_cell
                repeats = self.late.repeats(owner, entry) if late and route.kind == "tool" else None
                self.stray.append((owner, entry.target, entry.method, entry.path, entry.status, late, repeats))
            else:
                run.active.discard(task)
                if route.kind == "llm" and entry.status is not None:
                    run.model_answered = True

    def _declared(self, route, info) -> bool | None:
        """`tools[].writes` for this call: its upstream's, or (a function tool) its own name's."""
        return self.declared_writes.get(route.name, self.declared_writes.get(info.tool or ""))

    def _writes(self, route, info) -> bool:
        declared = self._declared(route, info)
        if route.provider == "mcp" or info.method == "CALL":
            if info.rpc_method not in (None, "tools/call"):
                return False  # protocol traffic (a session's GET stream, its DELETE) is no write
            hint = self.mcp.flags(info.name, info.tool).get("read_only")
            return call_writes(info.tool, hint, declared)
        return http_writes(info.method, declared)

    def _note_reach(self, route, info, body: bytes, entry=None) -> None:
        key = f"{route.kind}:{route.name}"
        self.calls_by_target[key] = self.calls_by_target.get(key, 0) + 1
        if route.kind == "llm":
            self._note_handoffs(body, info, entry)
        if len(self.offered) >= MAX_OFFERED:  # names come from the agent: bounded, whatever it sends
            return
        if route.kind == "llm":
            specs = offered.tool_specs(body, info.doc)
            self.offered.update(name[:200] for name in specs)
            if len(self.described) < MAX_OFFERED:  # what each tool says it does (reads and writes: rule 3b)
                self.described.update((name[:200], about[:1000]) for name, about in specs.items())
            if len(self.model_called) < MAX_OFFERED:
                self.model_called.update(name[:200] for name in offered.called_names(body, info.doc))
            in_text, called = offered.text_protocol_tools(body, info.doc, info.provider, info.method, info.path)
            self.offered.update(name[:200] for name in in_text)
            self.model_called.update(name[:200] for name in called[:MAX_OFFERED])
        elif info.tool:
            self.offered.add(str(info.tool)[:200])

    def _note_handoffs(self, body: bytes, info, entry) -> None:
        """Agents SDK handoffs offered and taken (gate/dialects/handoffs.py): named as handoffs in the reach
        line, never as tools nothing reached; the request a handoff brought marks it in the trace."""
        found = handoffs.read(body, info.doc)
        if len(self.handoffs) < MAX_OFFERED:  # names come from the agent: bounded, whatever it sends
            for name in found.offered:
                self.handoffs.setdefault(name[:200], "")
            for name, agent in found.taken.items():
                self.handoffs[name[:200]] = agent[:200]
        run = self.current
        if entry is not None:
            entry.handoff = found.describe() or (run.handoff if run is not None else None)
        if run is not None:
            run.handoff = None

    def note_handoff(self, tool: str, agent: str) -> None:
        """A handoff the agent's framework reported from inside its process (gate/instrument/python): taken,
        whatever the history the next agent is given still shows of it."""
        if tool and (tool in self.handoffs or len(self.handoffs) < MAX_OFFERED):
            self.handoffs[tool] = agent
        if tool and self.current is not None:
            self.current.handoff = f"{tool} → {agent}"


def _judge(schedule, index: int, ex: Exchange) -> None:
    """`fired` only if the agent got something the upstream did not send (or the upstream
    saw nothing); otherwise `not_applicable`, with the reason replacing the fault's claims."""
    reason = ex.inapplicable or (None if ex.changed() else "changed nothing")
    if reason is None:
        ex.entry.fault_status = "fired"
        return
    ex.entry.fault_status = "not_applicable"
    ex.entry.note = f"not applicable: {reason}"
    schedule.mark_not_applicable(index)


def _idempotency_key(headers: list[tuple[str, str]]) -> str | None:
    """The request's idempotency key, if it sent one. Names are lowercase, as ASGI hands them over."""
    if not headers:
        return None
    named = dict(headers)  # one pass in C: this runs for every request
    return named.get("idempotency-key") or named.get("x-idempotency-key")


class AgentGone(Exception):
    """The agent hung up before its request body was complete: the request is abandoned."""


async def _read_body(receive) -> bytes:
    """The whole request body; AgentGone if the connection ends first (a cut body is never forwarded)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise AgentGone()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _serve_recorded(book, info, body: bytes, ex: Exchange) -> None:
    from gate.replay.session import request_doc

    recorded = book.retry(info, ex.entry.body_digest) or book.take(info, ex.entry.body_digest)  # a retry: again
    if recorded is None:
        ex.entry.fault = "replay_miss"
        ex.entry.extra["diff"] = book.explain_miss(info, request_doc(body))
        ex.note("not in the recording")
        await ex.respond_json(502, error_for(info, 502, "chaos-gate replay: request not in the recording"))
        return
    from gate.proxy.replayed import serve_exchange

    await serve_exchange(recorded, info, ex, imported=book.session.source != "recorded")  # as it happened
