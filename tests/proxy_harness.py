"""A running per-worker proxy for tests: its own event loop thread, faults set per 'cell'.

Tests then talk to it with the real openai / anthropic SDKs and plain HTTP, exactly as
an agent would; only the runner around it is left out.
"""

from __future__ import annotations

import asyncio
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

from pydantic import TypeAdapter

from gate.config.chaos import Fault
from gate.config.models import Config
from gate.runner.proxy_hook import ProxyHook
from httpkit import JsonHandler, serve

SIM = {
    "rules": [
        {"when": r"refund.*?(\d{3,})", "tool": "refund_order", "arguments": {"order_id": "{{1}}", "reason": "broken"},
         "answer": "Refund for order {{1}} is done: {{tool_result}}"},
        {"when": "hello", "answer": "Hello! How can I help you today with your order?"},
    ],
    "default": "I can help with refunds.",
    "chunk_chars": 6,
}


# The refund tool as each SDK offers it: the sim, like a real model, only calls offered tools.
REFUND_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}, "reason": {"type": "string"}},
                 "required": ["order_id"]}
OA_TOOLS = [{"type": "function", "function": {"name": "refund_order", "description": "Refund an order.",
                                              "parameters": REFUND_SCHEMA}}]
AN_TOOLS = [{"name": "refund_order", "description": "Refund an order.", "input_schema": REFUND_SCHEMA}]
GEMINI_TOOLS = [{"function_declarations": [{"name": "refund_order", "description": "Refund an order.",
                                            "parameters_json_schema": REFUND_SCHEMA}]}]


@dataclass
class FakeCell:
    id: str
    seed: int
    faults: tuple = ()
    extra: dict = field(default_factory=dict)


class ToolServer:
    """A tiny real HTTP tool upstream on loopback that counts what reached it."""

    def __init__(self):
        self.hits: list[tuple[str, str, bytes]] = []
        self.headers_seen: list[dict] = []
        outer = self

        class Handler(JsonHandler):
            def do_GET(self):
                outer.hits.append(("GET", self.path, b""))
                outer.headers_seen.append(dict(self.headers))
                self.reply(200, {"order_id": self.path.rsplit("/", 1)[-1], "status": "delivered",
                                 "items": [{"sku": "blue-widget", "price": 19.99}]})

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                outer.hits.append(("POST", self.path, body))
                self.reply(200, {"refund_id": f"rf_{len(outer.hits)}", "status": "refunded"})

        self.server, self.url = serve(Handler)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class ProxyHarness:
    def __init__(self, tool_url: str, mcp_url: str | None = None, llm_upstream: str = "sim", sim: dict | None = None):
        tools = [{"name": "orders", "env": "ORDERS_URL", "upstream": tool_url}]
        if mcp_url:
            tools.append({"name": "mcp", "env": "MCP_URL", "upstream": mcp_url, "kind": "mcp"})
        self.config = Config.model_validate({
            "agent": {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "{{url}}"}}},
            "inputs": [{"id": "a", "text": "x"}],
            "llm": [{"name": "openai", "provider": "openai", "upstream": llm_upstream},
                    {"name": "anthropic", "provider": "anthropic", "upstream": llm_upstream},
                    {"name": "gemini", "provider": "gemini", "upstream": llm_upstream}],
            "tools": tools, "sim": sim or SIM})
        self.hook = ProxyHook(self.config)
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self._call(self.hook.start())
        # a test drives the proxy itself, writing before any model answer: its writes are its own runs'
        # (the late-write rule of gate/proxy/late_calls.py is for agents, learned from their first run)
        self.hook.app.late.writes_first = True
        self.env = self.hook.env()
        self.base = self.hook.server.url

    def _call(self, coro, timeout=30):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def begin(self, *faults: dict, seed: int = 1, cell_id: str = "chaos/a/test", run: int = 0):
        parsed = tuple(TypeAdapter(Fault).validate_python(f) for f in faults)
        self._call(self.hook.begin(FakeCell(cell_id, seed, parsed), run))

    def end(self):
        class Obs:
            trace = []
            state: dict = {}
        obs = Obs()
        obs.state = {}
        self._call(self.hook.end(None, 0, obs))
        self.state = obs.state  # the run's fault counters, under "faults"
        return obs.trace

    def openai(self, **kw):
        import openai
        kw.setdefault("max_retries", 0)
        kw.setdefault("timeout", 5.0)
        return openai.OpenAI(api_key="sk-test-not-real", base_url=self.env["OPENAI_BASE_URL"], **kw)

    def anthropic(self, **kw):
        import anthropic
        kw.setdefault("max_retries", 0)
        kw.setdefault("timeout", 5.0)
        return anthropic.Anthropic(api_key="sk-ant-test", base_url=self.env["ANTHROPIC_BASE_URL"], **kw)

    def gemini(self, timeout_ms: int = 5000):
        from google import genai
        from google.genai import types
        options = types.HttpOptions(base_url=self.env["GOOGLE_GEMINI_BASE_URL"], timeout=timeout_ms)
        return genai.Client(api_key="test-gemini-key", http_options=options)  # google-genai never retries by default

    def close(self):
        self._call(self.hook.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)


@contextmanager
def sim_proxy(**kw):
    """A proxy with sim LLMs in front of its own loopback tool server; both closed after."""
    tool = ToolServer()
    harness = ProxyHarness(tool.url, **kw)
    try:
        yield harness
    finally:
        harness.close()
        tool.close()
