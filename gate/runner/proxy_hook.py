"""The proxy as a worker attachment: env vars for the agent, a RunState per cell run.

The runner calls begin/end around every run; `end` releases held connections and
hands the run's trace, and the faults' honest counters (`obs.state["faults"]`), to the
observation. Calls seen between runs are handed out by `take_stray` as StrayCalls.
"""

from __future__ import annotations

import secrets

import json
import os

from gate.config.chaos import IN_PROCESS_KINDS
from gate.config.models import Config
from gate.faults import Schedule
from gate.instrument.calls import FunctionEndpoints
from gate.proxy.app import ProxyApp, RunState
from gate.proxy.mcp_sessions import SessionKeeper
from gate.proxy.probe_calls import ProbeCalls
from gate.proxy.routes import Route
from gate.proxy.server import ProxyServer
from gate.sim.server import SimUpstream
from gate.proxy.upstream import HttpUpstream, upstream_client
from gate.report.model import StrayCall
from gate.proxy.usage import run_usage


# Keyless means offline: what the LLM libraries and frameworks would fetch or send at start, kept local.
OFFLINE_UNDER_SIM = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # LiteLLM (DSPy, ADK's LiteLlm, smolagents' LiteLLMModel): its cost map
    "CREWAI_DISABLE_TELEMETRY": "true",  # CrewAI: telemetry.crewai.com
    "AGNO_TELEMETRY": "false",  # Agno: os-api.agno.com
}


class ProxyHook:
    def __init__(self, config: Config, bind: str = "127.0.0.1", advertise: str | None = None,
                 record_dir=None, redact=lambda s: s, worker: int = 0):
        self.config, self.worker = config, worker
        self.record_dir, self.redact = record_dir, redact
        self.client = None
        self.app = ProxyApp({}, functions=FunctionEndpoints)
        # the /fn/ endpoints answer only the gate's own instrumentation, which finds this in its URL; a
        # secret, so from `secrets`, never from the seed (a seeded token is one anybody can compute)
        self.app.functions.token = secrets.token_urlsafe(18)
        # redact is the Redactor's bound `redact`: let its Redactor learn the auth headers the agent sends
        self.app.on_header = getattr(getattr(redact, "__self__", redact), "note_header", None)
        self.server = ProxyServer(self.app, bind, advertise, idle_timeout=config.agent.idle_timeout)
        self.last_run: RunState | None = None
        self.worlds: dict = {}  # world name -> WorldUpstream, filled at start
        self.sim: SimUpstream | None = None  # the scripted model, once started
        self.agent_pid = lambda: None  # the worker's agent process (set by the pool): its CPU under dilation

    def env(self) -> dict[str, str]:
        env = {"CHAOS_GATE_FN_URL": f"{self.server.url}/fn/{self.app.functions.token}"}  # gate/instrument
        for llm in self.config.llm:
            for name in llm.env_vars:
                env[name] = f"{self.server.url}/llm/{llm.name}"
            env.update(llm.sim_env)  # what its client needs to be built at all (Azure: an api-version)
        if any(llm.upstream == "sim" for llm in self.config.llm):
            env.update(OFFLINE_UNDER_SIM)
        # DSPy answers a request it saw before from its disk cache (~/.dspy_cache, keyed without the base
        # URL), sending nothing: a run would replay another run's (or another config's) answers, and no
        # LLM fault could fire. A cache directory that cannot be made keeps it to its in-memory cache.
        env["DSPY_CACHEDIR"] = f"{os.devnull}/chaos-gate-dspy-disk-cache-off"
        for tool in self.config.tools:
            if tool.kind not in IN_PROCESS_KINDS:  # reached inside the agent: a PATH shim, a wrapped function
                env[tool.env] = f"{self.server.url}/tool/{tool.name}"
        functions = {t.name: t.function for t in self.config.tools if t.kind == "function" and t.function}
        if functions:  # wrapped where the agent's process imports them (gate/instrument/python)
            env["CHAOS_GATE_FUNCTIONS"] = json.dumps(functions, sort_keys=True)
        node = {t.name: {"module": t.module, "export": t.export} for t in self.config.tools
                if t.kind == "function" and t.module}
        if node:  # wrapped where the agent's Node process loads the module (gate/instrument/node/declared.cjs)
            env["CHAOS_GATE_NODE_FUNCTIONS"] = json.dumps(node, sort_keys=True)
        for world in self.config.worlds:
            env[world.env] = f"{self.server.url}/tool/{world.name}"
            if world.mcp_env:
                env[world.mcp_env] = f"{self.server.url}/tool/{world.name}-mcp"
        return env

    async def start(self) -> None:
        self.client = upstream_client()
        sim = self.sim = SimUpstream(self.config.sim)
        routes = {}
        for llm in self.config.llm:
            upstream = sim if llm.upstream == "sim" else HttpUpstream(llm.upstream, self.client)
            routes[("llm", llm.name)] = Route("llm", llm.name, llm.wire, upstream)
        for tool in self.config.tools:
            if tool.kind in IN_PROCESS_KINDS:  # its calls arrive on /fn/ (gate/instrument)
                continue
            provider = "mcp" if tool.kind == "mcp" else "http"
            upstream = HttpUpstream(tool.upstream, self.client)
            if tool.kind == "mcp":  # sessions outlive the gate's restarts of the service behind it
                upstream = SessionKeeper(upstream, _restarts_of(tool.upstream))
            routes[("tool", tool.name)] = Route("tool", tool.name, provider, upstream)
        from gate.proxy.world_upstream import WorldUpstream

        for world in self.config.worlds:
            upstream = self.worlds[world.name] = WorldUpstream(world, self.config.seed)
            routes[("tool", world.name)] = Route("tool", world.name, "http", upstream)
            if world.mcp_env:
                routes[("tool", f"{world.name}-mcp")] = Route("tool", f"{world.name}-mcp", "mcp", upstream)
        self.app.routes = routes
        self.app.declared_writes = {t.name: t.writes for t in self.config.tools if t.writes is not None}
        await self.server.start()

    async def begin(self, cell, run: int) -> None:
        from gate.replay.book import ReplayBook

        schedule = Schedule(tuple(cell.faults), cell.seed, cell.id, run,
                            only=getattr(cell, "firings", None)) if cell.faults else None
        session = getattr(cell, "session", None)
        book = ReplayBook(session, self.config.replay.tool_map) if session is not None else None
        record = self.record_dir is not None and run == 0 and not getattr(cell, "rerun", False)
        state = self.app.current = RunState(schedule, replay=book, record=record, scale=self.config.agent.time_scale,
                                            agent_pid=self.agent_pid)
        self.app.last_cell = cell.id
        state.input_text = _said_first(cell)  # a late model call of an ended cell names that cell's (gate/proxy/late_calls.py)
        if self.sim is not None:  # a mutated input is read as its original would be (gate/sim/script.py)
            mutated = getattr(cell, "mutation", None) is not None and cell.text != cell.original_text
            self.sim.originals = {cell.text: cell.original_text} if mutated else {}
        for upstream in self.worlds.values():
            upstream.reset(lambda: state.clock_offset, cell, run)  # fresh state per run; the clock moves with latency

    def probe_begin(self, first_text: str, targets) -> None:
        """A probe session is about to run beside this run: its calls are claimed apart (gate/proxy/probe_calls.py)."""
        run = self.app.current
        if run is not None:
            run.probe = ProbeCalls(first_text, targets, RunState(None, scale=run.scale))

    async def fault_fired(self) -> None:
        """Returns once a fault fired in the current run."""
        run = self.app.current
        if run is not None:
            await run.fired.wait()

    def probe_calls(self) -> int | None:
        run = self.app.current
        return run.probe.model_calls() if run is not None and run.probe is not None else None

    def turn(self, n: int) -> None:
        """A conversation's turn n is now sent: its calls are keyed by it, and `on_turns` faults match them."""
        if self.app.current is not None:
            self.app.current.turn = n

    async def end(self, cell, run: int, obs) -> None:
        state = self.app.current
        self.app.current = None
        if state is None:
            return
        self.app.late.end_run(self.app.last_cell, state)  # a late call of this cell's is its own (gate/proxy/late_calls.py)
        state.over.set()
        await state.settle()
        self.last_run = state
        obs.trace = list(state.trace)
        if state.scale > 1:
            obs.state["time_scale"] = state.scale  # honors_retry_after's tolerance (gate/contracts/trace_checks.py)
        obs.state["usage"] = run_usage(state.trace, self.config.pricing)  # priced per call, summed
        if state.schedule is not None:
            obs.state["faults"] = state.schedule.stats()
        if state.seam_failures:  # the gate's seam broke inside the agent: the run is not the agent's to judge
            obs.state["seam_failed"] = list(state.seam_failures)
        if state.start_failures:  # a tool server of the agent's died as it started (the report names it)
            obs.state["start_failures"] = list(state.start_failures)
        if state.forged:  # calls that would have forged the trace: refused, and this run is not judged
            obs.state["forged"] = list(state.forged)
        if state.replay is not None:  # how far the agent followed the recording (replay-matches)
            obs.state["replay"] = state.replay.summary()
        for name, upstream in self.worlds.items():
            obs.state[f"world:{name}"] = upstream.state.snapshot()
        if state.record:
            from gate.replay.recorder import record_session

            record_session(cell, obs, state.trace, self.record_dir, self.redact)

    def reached(self) -> dict:
        """What this worker's proxy saw: upstreams with calls, the agent's seams, its tools (gate/verdict/reach.py)."""
        return {"targets": dict(self.app.calls_by_target), "seams": dict(self.app.functions.seams),
                "frameworks": set(self.app.functions.frameworks),
                "offered": set(self.app.offered), "called": set(self.app.model_called),
                "handoffs": dict(self.app.handoffs), "start_failures": dict(self.app.functions.start_failures)}

    def agent_clock(self):
        """The agent processes' own clock rates, read from inside them (gate/instrument/clock.py)."""
        return self.app.functions.clock

    def take_stray(self) -> list[StrayCall]:
        """Calls that arrived while no cell ran on this worker, oldest first; clears the list."""
        taken, self.app.stray = self.app.stray, []
        return [StrayCall(worker=self.worker, after_cell=after, target=target, method=method, path=path,
                          status=status, late_write=late, repeats=repeats)
                for after, target, method, path, status, late, repeats in taken]

    async def stop(self) -> None:
        await self.server.stop()
        if self.client is not None:
            await self.client.aclose()


def needs_proxy(config: Config) -> bool:
    return bool(config.llm or config.tools or config.worlds)


def proxy_factory(config: Config, record_dir=None, redact=lambda s: s):
    """One ProxyHook per worker, listening where the agent can reach it."""
    bind, advertise = "127.0.0.1", None
    start = config.agent.start
    if start is not None and start.docker is not None:
        from gate.agent.container import docker_client, placement

        where = placement(docker_client())
        if where.mode == "network":  # the agent is a sibling container: listen on our network address
            bind, advertise = "0.0.0.0", where.own_ip
    return lambda index: [ProxyHook(config, bind, advertise, record_dir, redact, worker=index)]


def _restarts_of(url: str):
    """How many times the gate restarted the service serving `url` (0 for an upstream it did not start)."""
    from gate.services.runtime import RUNNING

    for service in RUNNING.get():
        base = service.attrs()["url"] if service.port else ""
        if base and url.startswith(base):
            return lambda: service.restarts
    return lambda: 0


def _said_first(cell) -> str:
    """The text every model call of the run carries: the input, or a conversation's first turn (its later
    calls carry it as history; the turns joined, as `cell.text` shows them, are in none of them)."""
    turns = getattr(cell, "turns", None)
    return turns[0] if turns else (getattr(cell, "text", "") or "")
