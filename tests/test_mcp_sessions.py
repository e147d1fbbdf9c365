"""MCP over streamable HTTP judged right both ways (issue 20, item 5), with the real `mcp` SDK.

A small real `mcp` server (MCPServer, the SDK's FastMCP, on uvicorn) sits behind the
worker proxy and the SDK's own client talks to it, in both of its modes: `legacy`
(initialize, an SSE answer to every request, a GET stream, a closing DELETE) and `auto`
(2026-07-28: server/discover, JSON answers). A correct session (a read-only lookup
retried, one refund) must hold side_effect_once with no filter; the same refund sent
twice, with fresh ids and progress tokens, must breach it. `rpc_error` and `malformed`
are checked by what the SDK raises. Raw-wire cases (batches, odd params, a tool named
by its upstream) are in tests/test_mcp_wire.py.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from mcp import Client, MCPError
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import TypeAdapter

from gate.config.models import Invariant
from gate.contracts import Observation
from httpkit import serve_asgi
from proxy_harness import ProxyHarness, ToolServer

MODES = ["legacy", "auto"]


class RealMcp:
    """The `mcp` SDK's own server on a free loopback port; counts what its tools really did."""

    def __init__(self):
        self.refunds: list[str] = []
        server = MCPServer("orders", log_level="WARNING")

        @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
        def lookup(order_id: str) -> str:
            return f"order {order_id}: delivered"

        @server.tool(annotations=ToolAnnotations(idempotentHint=True))
        def set_address(order_id: str, address: str) -> str:
            return f"order {order_id} ships to {address}"

        @server.tool()
        def refund(order_id: str) -> str:
            self.refunds.append(order_id)
            return f"refunded {order_id}"

        self.uvicorn, base = serve_asgi(server.streamable_http_app())
        self.url = base + "/mcp"

    def close(self):
        self.uvicorn.should_exit = True


@pytest.fixture(scope="module")
def rig():
    tools, mcp = ToolServer(), RealMcp()
    proxy = ProxyHarness(tools.url, mcp_url=mcp.url)
    yield proxy, mcp
    proxy.close()
    mcp.close()
    tools.close()


def judge(kind: str, trace, **params):
    inv = TypeAdapter(Invariant).validate_python({"id": f"t-{kind}", "type": kind, **params})
    return inv.evaluate(Observation(output="done", reason="ok", status=200, trace=list(trace)))


async def _no_progress(*_):
    pass


def session(proxy, mode: str, calls, *faults, progress: bool = False):
    """One client session through the proxy, as one cell run: (trace, what each call gave or raised)."""
    async def run():
        got = []
        async with Client(proxy.env["MCP_URL"], mode=mode, read_timeout_seconds=5) as client:
            await client.list_tools()
            for name, args in calls:
                try:
                    got.append(await client.call_tool(name, args, progress_callback=_no_progress if progress else None))
                except MCPError as exc:
                    got.append(exc)
        return got

    proxy.begin(*faults)
    try:
        got = asyncio.run(run())
    finally:
        trace = proxy.end()
    return trace, got


LOOKUP, REFUND = ("lookup", {"order_id": "7"}), ("refund", {"order_id": "7"})


@pytest.mark.parametrize("mode", MODES)
def test_a_correct_session_holds_side_effect_once(rig, mode):
    """A read-only lookup tried three times, one refund, the session closed: no repeated write."""
    proxy, _ = rig
    trace, got = session(proxy, mode, [LOOKUP, LOOKUP, LOOKUP, REFUND])
    assert all(not isinstance(g, Exception) for g in got)
    methods = [(e.method, e.rpc_method) for e in trace]
    if mode == "legacy":  # the handshake era: the session is opened, streamed and closed on the wire
        assert methods[0] == ("POST", "initialize") and ("GET", None) in methods and methods[-1] == ("DELETE", None)
        assert "text/event-stream" in next(e for e in trace if e.tool == "refund").content_type
    else:
        assert methods[0] == ("POST", "server/discover")
    lookups = [e for e in trace if e.tool == "lookup"]
    assert len(lookups) == 3 and all(e.extra.get("read_only") for e in lookups)
    assert not next(e for e in trace if e.tool == "refund").extra.get("read_only")
    verdict = judge("side_effect_once", trace)
    assert verdict.passed, verdict.message
    assert verdict.message == "1 write(s), none repeated"
    assert judge("tool_calls_max", trace, max=4).passed and not judge("tool_calls_max", trace, max=3).passed
    named = judge("side_effect_once", trace, tool="lookup")  # a filter names the write: every call counts
    assert not named.passed and "reached the upstream 3 times" in named.message


@pytest.mark.parametrize("mode", MODES)
def test_the_same_refund_twice_is_breached_whatever_its_id_and_progress_token(rig, mode):
    proxy, mcp = rig
    before = len(mcp.refunds)
    trace, _ = session(proxy, mode, [REFUND, REFUND], progress=True)
    refunds = [e for e in trace if e.tool == "refund"]
    assert len(mcp.refunds) - before == 2 and len({e.body for e in refunds}) == 2  # the bodies differ
    if mode == "legacy":
        assert all(b'"progressToken"' in e.body for e in refunds)
    verdict = judge("side_effect_once", trace)
    assert not verdict.passed
    assert verdict.message == 'side effect repeated: refund({"order_id":"7"}) on mcp reached the upstream 2 times'
    assert judge("side_effect_once", trace, tool="mcp").message == verdict.message  # the upstream's name


def test_an_idempotent_tool_repeated_is_no_breach_but_other_arguments_are_other_writes(rig):
    proxy, _ = rig
    move = ("set_address", {"order_id": "7", "address": "1 Main St"})
    trace, _ = session(proxy, "legacy", [move, move, REFUND, ("refund", {"order_id": "8"})])
    assert [e.extra.get("idempotent") for e in trace if e.tool == "set_address"] == [True, True]
    assert judge("side_effect_once", trace).message == "2 write(s), none repeated"


@pytest.mark.parametrize("mode", MODES)
def test_rpc_error_surfaces_as_the_sdks_mcp_error(rig, mode):
    proxy, mcp = rig
    before = len(mcp.refunds)
    fault = {"kind": "rpc_error", "tool": "refund", "code": -32000, "message": "refund service offline"}
    trace, got = session(proxy, mode, [LOOKUP, REFUND], fault)
    assert not isinstance(got[0], Exception)
    assert isinstance(got[1], MCPError) and got[1].error.code == -32000
    assert got[1].error.message == "refund service offline"
    assert len(mcp.refunds) == before  # never forwarded
    [faulted] = [e for e in trace if e.fault]
    assert (faulted.tool, faulted.fault_status, faulted.forwarded) == ("refund", "fired", False)
    want = "text/event-stream" if mode == "legacy" else "application/json"  # the upstream's own shape
    assert faulted.content_type == want


def test_rpc_error_on_an_http_tool_is_not_applicable_and_passes_the_answer_through(rig):
    import httpx

    proxy, _ = rig
    proxy.begin({"kind": "rpc_error", "target": "orders"})
    resp = httpx.post(proxy.env["ORDERS_URL"] + "/refunds", json={"order_id": "7"})
    [entry] = proxy.end()
    assert resp.json()["status"] == "refunded" and entry.forwarded
    assert entry.fault_status == "not_applicable" and "not an MCP tools/call" in entry.note


def test_malformed_on_an_sse_answer_is_a_complete_event_that_does_not_parse(rig):
    """The SDK's SSE parser gets the whole event and fails on its JSON, at once: no hang."""
    proxy, _ = rig
    began = time.monotonic()
    trace, got = session(proxy, "legacy", [REFUND], {"kind": "malformed", "tool": "refund"})
    assert isinstance(got[0], MCPError) and "parse SSE message" in str(got[0])
    assert time.monotonic() - began < 4
    [faulted] = [e for e in trace if e.fault]
    shown = faulted.extra["shown"]
    assert shown.startswith(b"event: message\r\ndata: {") and shown.endswith(b"\r\n\r\n")
    assert faulted.fault_status == "fired"


def test_tool_upstream_name_faults_every_tools_call_of_that_mcp_upstream(rig):
    proxy, _ = rig
    trace, got = session(proxy, "auto", [LOOKUP, REFUND], {"kind": "rpc_error", "tool": "mcp"})
    assert all(isinstance(g, MCPError) for g in got)
    assert [e.tool for e in trace if e.fault] == ["lookup", "refund"]  # tools/list and discovery untouched
