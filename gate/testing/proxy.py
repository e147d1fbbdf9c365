"""The gate's proxy for a test's own, in-process agent code: ProxyHook on a background event loop.

One ChaosProxy per distinct config serves every run of it (its port, sim and worlds are
the worker's, as in `chaos-gate run`); `begin(cell, run)` returns a ChaosRun — the env
values that point the agent's clients at the proxy, the live worlds, the run's clock
and trace — and `ChaosRun.end()` closes the run. The agent's calls are served on the
proxy's own thread, so a sync or async test drives its agent however it likes.
"""

from __future__ import annotations

import asyncio
import threading
from contextlib import contextmanager

from gate.testing.trace import Trace

DUMMY_KEYS = {"openai": ("OPENAI_API_KEY", "sk-chaos-gate-sim"), "anthropic": ("ANTHROPIC_API_KEY", "sk-ant-chaos-gate"),
              "gemini": ("GEMINI_API_KEY", "chaos-gate-sim"), "azure": ("AZURE_OPENAI_API_KEY", "chaos-gate-sim")}


class ChaosProxy:
    def __init__(self, config, forced: dict | None = None):
        from gate.runner.proxy_hook import ProxyHook

        self.config = config
        self.hook = ProxyHook(config)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="chaos-gate-proxy", daemon=True)
        self.thread.start()
        self.call(self.hook.start())
        for name, on in (forced or {}).items():
            self.hook.worlds[name].forced = on
        self.url = self.hook.server.url

    def call(self, coro, timeout: float = 60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def env(self) -> dict[str, str]:
        """Base URLs for the agent's clients and tools, and placeholder keys for the sim's providers."""
        env = dict(self.hook.env())
        for llm in self.config.llm:
            if llm.upstream == "sim" and llm.provider in DUMMY_KEYS:
                name, value = DUMMY_KEYS[llm.provider]
                env.setdefault(name, value)
        return env

    def sims(self) -> list:
        from gate.sim.server import SimUpstream

        return list({id(r.upstream): r.upstream for r in self.hook.app.routes.values()
                     if isinstance(r.upstream, SimUpstream)}.values())

    def begin(self, cell, run: int = 0) -> ChaosRun:
        for sim in self.sims():  # a test's sim.rule(...) lasts one run
            sim.spec, sim.threads = self.config.sim.model_copy(deep=True), {}
        self.call(self.hook.begin(cell, run))
        return ChaosRun(self, cell, run, self.hook.app.current)

    def close(self) -> None:
        try:
            self.call(self.hook.stop(), timeout=10)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)


class ChaosRun:
    """One run of one test: what the `chaos_run` fixture gives."""

    def __init__(self, proxy: ChaosProxy, cell, run: int, state):
        from gate.worlds.clock import WorldClock
        from gate.worlds.model import EPOCH

        self.proxy, self.cell, self.run, self.state = proxy, cell, run, state
        worlds = proxy.hook.worlds
        start = next(iter(worlds.values())).world.clock.start if worlds else EPOCH
        self.clock = WorldClock(start, lambda: state.clock_offset)  # one clock for every world of the run
        for upstream in worlds.values():
            upstream.state.clock = self.clock
        named = {**worlds, **{f"{n}-mcp": u for n, u in worlds.items()}}
        self.trace = Trace(state.trace, named)
        self.env = proxy.env()
        self.observed: dict = {}
        self.ended = False
        self.answer: str | None = None  # the agent's answer, when the test hands it over: exploration judges it

    @property
    def seed(self) -> int:
        return self.cell.seed

    @property
    def cell_id(self) -> str:
        return self.cell.id

    def url(self, name: str) -> str:
        """The proxy's base URL for an LLM upstream, a tool or a world (`NAME-mcp`: its MCP endpoint)."""
        kinds = {llm.name: "llm" for llm in self.proxy.config.llm}
        return f"{self.proxy.url}/{kinds.get(name, 'tool')}/{name}"

    def world(self, name: str | None = None):
        from gate.worlds.table import WorldView

        worlds = self.proxy.hook.worlds
        if not worlds:
            raise LookupError("this test has no world: add @pytest.mark.chaos_world(FILE) or a config with worlds:")
        if name is None:
            name = next(iter(worlds))
        if name not in worlds:
            raise LookupError(f"no world {name!r} (worlds: {', '.join(worlds)})")
        return WorldView(worlds[name].state)

    @property
    def sim(self):
        sims = self.proxy.sims()
        return sims[0] if sims else None

    def openai(self, **kw):
        import openai

        return openai.OpenAI(base_url=self.env["OPENAI_BASE_URL"], api_key=kw.pop("api_key", "sk-chaos-gate-sim"), **kw)

    def azure(self, **kw):
        """An Azure OpenAI client on the proxy (AZURE_OPENAI_ENDPOINT and the api-version the gate set)."""
        import openai

        return openai.AzureOpenAI(azure_endpoint=self.env["AZURE_OPENAI_ENDPOINT"],
                                  api_version=kw.pop("api_version", self.env.get("OPENAI_API_VERSION")),
                                  api_key=kw.pop("api_key", "chaos-gate-sim"), **kw)

    def anthropic(self, **kw):
        import anthropic

        return anthropic.Anthropic(base_url=self.env["ANTHROPIC_BASE_URL"],
                                   api_key=kw.pop("api_key", "sk-ant-chaos-gate"), **kw)

    def end(self) -> dict:
        """Close the run (held connections released); returns what the proxy observed (fault counters)."""
        if self.ended:
            return self.observed

        class Obs:
            trace: list = []
            state: dict = {}
        obs = Obs()
        obs.state = {}
        self.proxy.call(self.proxy.hook.end(self.cell, self.run, obs))
        self.observed, self.ended = obs.state, True
        return self.observed

    @contextmanager
    def fresh(self, *faults):
        """A fresh run inside the test (new worlds, trace and clock) with these extra faults: one
        property-based example per block (gate/testing/shapes.py)."""
        import dataclasses

        from pydantic import TypeAdapter

        from gate.config.chaos import Fault

        faults = [f.fault() if hasattr(f, "fault") else f for f in faults]  # a Shape (gate/testing/shapes.py)
        parsed = tuple(f if hasattr(f, "apply") else TypeAdapter(Fault).validate_python(f) for f in faults)
        self.end()
        inner = self.proxy.begin(dataclasses.replace(self.cell, faults=tuple(self.cell.faults) + parsed), self.run)
        try:
            yield inner
        finally:
            inner.end()
            again = self.proxy.begin(self.cell, self.run)
            self.__dict__.update({k: v for k, v in again.__dict__.items()})
