"""A service restarted per cell keeps its MCP clients' sessions (issue 42, item 6).

faultbench's own `faultbench serve --http` as a gate service with `restart: per_cell` (a fresh
world every cell, as docs/pytest.md advises for stateful services) behind the proxy, and an
agent service that opens its MCP session once at start-up (the `mcp` SDK's session-holding
client) and keeps it (tests/agents/mcp_session_agent.py). Each restart forgets every session; the proxy opens a new
one with the agent's own `initialize` and maps the agent's id onto it
(gate/proxy/mcp_sessions.py), so the sound agent passes every cell, as under faultbench's
harness. The same server restarted by someone else than the gate is the agent's to handle:
the proxy leaves that 404 alone.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys

from conftest import AGENTS, ROOT, load_report, write_config
from gate.cli import main
from gate.proxy.exchange import RequestInfo, UpstreamResponse
from gate.proxy.mcp_sessions import SessionKeeper

SHOP = ROOT / "tests" / "fixtures" / "faultbench_shop"


def config(tmp_path, restart: str = "per_cell") -> str:
    shutil.copytree(SHOP, tmp_path / "shop", ignore=shutil.ignore_patterns("__pycache__"))
    doc = {
        "version": 1, "seed": 5,
        "services": [{"name": "shop", "restart": restart, "port_env": None,
                      "command": [shutil.which("faultbench") or "faultbench", "serve", "--http", "--port", "{{port}}",
                                  "worlds/shop.yaml"],
                      "cwd": "shop", "ready": {"url": "{{url}}/mcp", "timeout": 30}}],
        "agent": {"start": {"command": [sys.executable, str(AGENTS / "mcp_session_agent.py")],
                            "env": {"OPENAI_API_KEY": "sk-sim"}, "ready": {"url": "{{url}}/health", "timeout": 60}},
                  "invoke": {"http": {"url": "{{url}}/chat", "body": {"message": "{{input}}"}, "output": "$.reply"}},
                  "timeout": 60},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "tools": [{"name": "shop", "kind": "mcp", "env": "SHOP_MCP_URL", "upstream": "{{services.shop.url}}/mcp"}],
        "sim": {"rules": [{"when": "orders of (\\S+)", "tool": "list_orders", "arguments": {"customer_id": "{{1}}"},
                           "answer": "Here are the orders of {{1}}."}]},
        "inputs": [{"id": f"c{i}", "text": f"Show me the orders of cust-{i}"} for i in range(3)],
        "mutation": {"enabled": False}, "shrink": {"enabled": False},
        "contract": {"invariants": [{"id": "done", "type": "completes", "severity": "critical"},
                                    {"id": "listed", "type": "tool_called", "tool": "list_orders",
                                     "severity": "critical"}]},
        "gate": {"min_score": 100}, "concurrency": 1, "chaos": {"explore": False},
    }
    return str(write_config(tmp_path, json.dumps(doc, indent=1)))


def test_a_session_holding_agent_passes_every_cell_of_a_service_restarted_per_cell(tmp_path):
    code = main(["run", "-c", config(tmp_path), "-o", str(tmp_path / "out"), "--quiet", "--full-report"])
    verdict = load_report(tmp_path / "out")["verdict"]
    assert [c["status"] for c in verdict["cells"]] == ["pass"] * 3, [c.get("checks") for c in verdict["cells"]]
    assert code == 0
    notes = [e.get("note", "") for c in verdict["cells"] for r in c["runs"] for e in r["trace"]]
    assert sum("the gate opened a new one" in n for n in notes) == 2  # one per restart after the first cell


class FakeMcp:
    """An MCP upstream that knows only the sessions it opened since its last restart."""

    def __init__(self):
        self.live: set[str] = set()
        self.opened = 0
        self.seen: list[tuple[str | None, str | None]] = []  # (rpc method, session id) of every request

    def restart(self):
        self.live.clear()

    async def send(self, info, headers, body):
        session = next((v for k, v in headers if k.lower() == "mcp-session-id"), None)
        self.seen.append((info.rpc_method, session))
        if info.rpc_method == "initialize":
            self.opened += 1
            self.live.add(f"s{self.opened}")
            return _answer(200, [("mcp-session-id", f"s{self.opened}")])
        return _answer(200 if session in self.live else 404, [("mcp-session-id", session)] if session else [])


def _answer(status, headers):
    async def chunks():
        yield b"{}"
    return UpstreamResponse(status, headers, chunks())


def _info(rpc):
    return RequestInfo(kind="tool", name="shop", provider="mcp", method="POST", path="/mcp", rpc_method=rpc)


def test_the_keeper_reopens_only_a_session_the_gate_s_own_restart_lost():
    async def scenario():
        upstream, restarts = FakeMcp(), [0]
        keeper = SessionKeeper(upstream, lambda: restarts[0])
        hello = await keeper.send(_info("initialize"), [("content-type", "application/json")], b'{"init": 1}')
        agent_id = dict(hello.headers)["mcp-session-id"]
        call = [("mcp-session-id", agent_id)]
        assert (await keeper.send(_info("tools/call"), call, b"{}")).status == 200
        upstream.restart()  # by someone else: the agent's to handle, the 404 passes through
        assert (await keeper.send(_info("tools/call"), call, b"{}")).status == 404
        restarts[0] += 1  # the gate's own restart
        resp = await keeper.send(_info("tools/call"), call, b"{}")
        assert resp.status == 200 and dict(resp.headers)["mcp-session-id"] == agent_id  # its own id, back
        assert upstream.seen[-3:] == [("initialize", None), ("notifications/initialized", "s2"), ("tools/call", "s2")]
        assert "opened a new one" in resp.note
        assert (await keeper.send(_info("tools/call"), call, b"{}")).status == 200  # mapped from now on
        assert upstream.seen[-1] == ("tools/call", "s2") and upstream.opened == 2
    asyncio.run(scenario())
