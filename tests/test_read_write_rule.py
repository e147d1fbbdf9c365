"""One read/write rule on every transport (issue 42, item 2): a retried read is never a double write.

An MCP server that gives no `readOnlyHint` leaves the tool's name to say what it is, as for
in-process tools; a server's explicit `readOnlyHint: false` makes a read-named tool a write;
`tools[].writes` overrides both. A naive-retry agent (the SDK's own MCP client, retrying any
failed call once) under `malformed` retries a lookup and a refund: side_effect_once holds for
the lookup and still breaches for the refund the server executed twice.
"""

from __future__ import annotations

import asyncio

import pytest
from mcp import Client, MCPError
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from gate.contracts.writes import call_writes, http_writes
from httpkit import serve_asgi
from proxy_harness import ProxyHarness, ToolServer
from test_mcp_sessions import judge


class HintlessMcp:
    """A real `mcp` server whose tools say nothing of reads, but for one write named like a read."""

    def __init__(self):
        self.refunds: list[str] = []
        self.lookups: list[str] = []
        server = MCPServer("orders", log_level="WARNING")

        @server.tool()
        def lookup_order(order_id: str) -> str:
            self.lookups.append(order_id)
            return f"order {order_id}: delivered"

        @server.tool()
        def refund(order_id: str) -> str:
            self.refunds.append(order_id)
            return f"refunded {order_id}"

        @server.tool(annotations=ToolAnnotations(readOnlyHint=False))
        def get_or_create_ticket(order_id: str) -> str:
            return f"ticket for {order_id}"

        self.uvicorn, base = serve_asgi(server.streamable_http_app())
        self.url = base + "/mcp"


@pytest.fixture(scope="module")
def rig():
    tools, mcp = ToolServer(), HintlessMcp()
    proxy = ProxyHarness(tools.url, mcp_url=mcp.url)
    yield proxy, mcp
    proxy.close()
    mcp.uvicorn.should_exit = True
    tools.close()


def naive_retry_agent(proxy, calls, *faults):
    """Calls each tool; any failure (an MCP error, an answer the client cannot parse) is retried once."""
    async def run():
        async with Client(proxy.env["MCP_URL"], mode="legacy", read_timeout_seconds=5) as client:
            await client.list_tools()
            for name, args in calls:
                for _attempt in range(2):
                    try:
                        result = await client.call_tool(name, args)
                        if not result.is_error:
                            break
                    except MCPError:
                        continue

    proxy.begin(*faults)
    try:
        asyncio.run(run())
    finally:
        trace = proxy.end()
    return trace


@pytest.mark.parametrize("kind", ["malformed", "partial"])
def test_a_retried_lookup_passes_and_a_retried_refund_still_breaches(rig, kind):
    proxy, mcp = rig
    refunds, lookups = len(mcp.refunds), len(mcp.lookups)
    trace = naive_retry_agent(proxy, [("lookup_order", {"order_id": "7"})], {"kind": kind, "tool": "lookup_order"})
    assert len(mcp.lookups) - lookups == 2  # the lookup was retried: the server ran it twice
    for params in ({}, {"tool": "mcp"}):
        verdict = judge("side_effect_once", trace, **params)
        assert verdict.passed, verdict.message
    trace = naive_retry_agent(proxy, [("lookup_order", {"order_id": "7"}), ("refund", {"order_id": "7"})],
                              {"kind": kind, "tool": "refund"})
    assert len(mcp.refunds) - refunds == 2
    verdict = judge("side_effect_once", trace)
    assert not verdict.passed
    assert verdict.message.startswith('side effect repeated: refund({"order_id":"7"}) on mcp reached the upstream 2')


def test_a_server_that_says_a_read_named_tool_writes_is_believed(rig):
    proxy, _ = rig
    trace = naive_retry_agent(proxy, [("get_or_create_ticket", {"order_id": "7"})],
                              {"kind": "malformed", "tool": "get_or_create_ticket"})
    assert [e.extra.get("read_only") for e in trace if e.tool == "get_or_create_ticket"] == [False, False]
    assert not judge("side_effect_once", trace).passed


def test_tools_writes_overrides_the_hint_and_the_name(rig):
    proxy, _ = rig
    proxy.hook.app.declared_writes = {"mcp": False}
    try:
        trace = naive_retry_agent(proxy, [("refund", {"order_id": "7"})], {"kind": "malformed", "tool": "refund"})
    finally:
        proxy.hook.app.declared_writes = {}
    assert all(e.extra.get("writes") is False for e in trace)
    assert judge("side_effect_once", trace).passed


@pytest.mark.parametrize(("tool", "hint", "declared", "writes"), [
    ("lookup_order", None, None, False), ("getOrder", None, None, False), ("list", None, None, False),
    ("refund", None, None, True), ("getaway_booking", None, None, True),  # a word, not a verb prefix
    ("get_or_create", False, None, True), ("refund", True, None, False), ("lookup_order", None, True, True),
    ("refund", None, False, False), (None, None, None, True),
])
def test_the_rule_for_tool_calls(tool, hint, declared, writes):
    assert call_writes(tool, hint, declared) is writes


def test_the_rule_for_http():
    assert not http_writes("GET") and not http_writes("head") and not http_writes("OPTIONS")
    assert http_writes("POST") and http_writes("PROPPATCH") and http_writes(None)
    assert not http_writes("POST", declared=False) and http_writes("GET", declared=True)
