"""MCP on the raw wire through the proxy: what real clients send that the SDK's own client does not.

The fastmcp client's fresh `params._meta.progressToken` on every call, a session's
closing DELETE and its GET stream, `tools/call` with `params` that is no object, JSON-RPC
batches (one trace entry listing each call), `tool:` naming the MCP upstream, tools/list
hints read from a batch, and `malformed` keeping SSE framing. The SDK-driven sessions
are in tests/test_mcp_sessions.py.
"""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from gate.dialects import sse
from gate.proxy.mcp_tools import McpTools
from httpkit import JsonHandler, serve
from proxy_harness import ProxyHarness, ToolServer
from test_mcp_sessions import judge

TOOLS = [{"name": "lookup", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
         {"name": "refund", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": True}}]


class RawMcp:
    """Answers every JSON-RPC request (batches too), as JSON or, when accepted, SSE with `\\n` lines."""

    def __init__(self):
        self.calls: list = []
        outer = self

        class Handler(JsonHandler):
            def do_POST(self):
                msg = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                answers = [a for a in map(outer.answer, msg if isinstance(msg, list) else [msg]) if a]
                if not answers:
                    return self.reply(202, b"")
                if "text/event-stream" in self.headers.get("accept", ""):
                    body = "".join(f"event: message\ndata: {json.dumps(a)}\n\n" for a in answers).encode()
                    return self.reply(200, body, "text/event-stream", {"mcp-session-id": "s-1"})
                self.reply(200, answers if isinstance(msg, list) else answers[0], headers={"mcp-session-id": "s-1"})

            def do_DELETE(self):
                self.reply(200, b"")

            def do_GET(self):
                self.reply(405, b"")

        self.server, base = serve(Handler)
        self.url = base + "/mcp"

    def answer(self, msg):
        if not isinstance(msg, dict) or "id" not in msg:
            return None
        rid, params = msg["id"], msg.get("params")
        if msg.get("method") == "tools/list":
            return {"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}}
        if msg.get("method") != "tools/call":
            return {"jsonrpc": "2.0", "id": rid, "result": {}}
        self.calls.append(params)
        if not isinstance(params, dict):
            return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "params must be an object"}}
        text = f"{params.get('name')} {json.dumps(params.get('arguments'))} done"
        return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}], "isError": False}}


@pytest.fixture(scope="module")
def rig():
    tools, mcp = ToolServer(), RawMcp()
    proxy = ProxyHarness(tools.url, mcp_url=mcp.url)
    yield proxy, mcp
    proxy.close()
    mcp.server.shutdown()
    tools.close()


@pytest.fixture
def proxy(rig):
    rig[0].hook.app.mcp = McpTools()  # each test learns the tools afresh
    return rig[0]


def post(proxy, doc, sse_ok=False, raw: bytes | None = None):
    headers = {"content-type": "application/json", "mcp-session-id": "s-1",
               "accept": "application/json" + (", text/event-stream" if sse_ok else "")}
    return httpx.post(proxy.env["MCP_URL"], content=raw if raw is not None else json.dumps(doc), headers=headers)


def call(rid, name, args, meta=None):
    params = {"name": name, "arguments": args, **({"_meta": meta} if meta else {})}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def test_fastmcp_double_refund_is_breached_and_a_clean_session_with_deletes_holds(proxy):
    """pydantic-ai's client: a uuid id and a fresh progress token per call, a DELETE per session."""
    proxy.begin()
    for _ in range(2):  # two sessions, each listing tools, retrying a lookup and closing
        post(proxy, LIST)
        for _ in range(2):
            post(proxy, call(str(uuid.uuid4()), "lookup", {"order_id": "7"}, {"progressToken": str(uuid.uuid4())}))
        assert httpx.get(proxy.env["MCP_URL"]).status_code == 405
        assert httpx.delete(proxy.env["MCP_URL"], headers={"mcp-session-id": "s-1"}).status_code == 200
    post(proxy, call(str(uuid.uuid4()), "refund", {"order_id": "7", "reason": "broken"}, {"progressToken": "a"}))
    clean = proxy.end()
    assert sorted({e.method for e in clean}) == ["DELETE", "GET", "POST"]
    assert judge("side_effect_once", clean).passed, judge("side_effect_once", clean).message
    assert judge("tool_calls_max", clean, max=5).passed and not judge("tool_calls_max", clean, max=4).passed
    proxy.begin()
    post(proxy, call("b1", "refund", {"reason": "broken", "order_id": "7"}, {"progressToken": "t-1"}))
    post(proxy, call("b2", "refund", {"order_id": "7", "reason": "broken"}, {"progressToken": "t-2"}))
    double = proxy.end()
    verdict = judge("side_effect_once", double)
    assert not verdict.passed and "refund(" in verdict.message and "2 times" in verdict.message


@pytest.mark.parametrize("params", [[1, 2], "refund", None], ids=["list", "string", "null"])
def test_tools_call_with_params_that_are_no_object_is_passed_through_and_traced(proxy, rig, params):
    proxy.begin({"kind": "error", "tool": "refund"})
    resp = post(proxy, {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
    [entry] = proxy.end()
    assert resp.status_code == 200 and resp.json()["error"]["code"] == -32602  # the upstream's own answer
    assert rig[1].calls[-1] == params
    assert (entry.rpc_method, entry.tool, entry.fault, entry.forwarded) == ("tools/call", None, None, True)
    assert judge("side_effect_once", [entry]).passed


def test_a_batch_is_traced_per_call_and_counted_per_call(proxy):
    proxy.begin()
    batch = [call(1, "refund", {"order_id": "7"}), call(2, "lookup", {"order_id": "7"}),
             {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}, call(3, "refund", {"order_id": "7"})]
    resp = post(proxy, batch)
    [entry] = proxy.end()
    assert [a["id"] for a in resp.json()] == [1, 2, 3]
    assert (entry.rpc_method, entry.tool) == ("tools/call", "refund")
    assert [(c["method"], c["tool"], c["id"]) for c in entry.extra["batch"]] == [
        ("tools/call", "refund", 1), ("tools/call", "lookup", 2), ("notifications/progress", None, None),
        ("tools/call", "refund", 3)]
    assert judge("tool_calls_max", [entry], max=3).passed and not judge("tool_calls_max", [entry], max=2).passed
    assert judge("tool_called", [entry], tool="lookup").passed
    verdict = judge("side_effect_once", [entry])
    assert not verdict.passed and verdict.message.startswith('side effect repeated: refund({"order_id":"7"})')


def test_tools_list_hints_are_learned_from_a_batch_answer_and_from_sse(proxy):
    post(proxy, [LIST], sse_ok=True)  # before any cell: agents list tools at start-up
    proxy.begin()
    post(proxy, call(2, "lookup", {"order_id": "7"}))
    post(proxy, call(3, "lookup", {"order_id": "7"}))
    post(proxy, [call(4, "lookup", {"order_id": "7"}), call(5, "refund", {"order_id": "7"})])
    trace = proxy.end()
    assert [e.extra.get("read_only") for e in trace[:2]] == [True, True]
    assert [c.get("read_only") for c in trace[2].extra["batch"]] == [True, None]
    assert judge("side_effect_once", trace).passed  # the three lookups are reads; one refund
    assert not judge("side_effect_once", trace, tool="lookup").passed


def test_a_batch_is_faulted_as_one_when_a_fault_names_one_of_its_tools(proxy, rig):
    before = len(rig[1].calls)
    proxy.begin({"kind": "rpc_error", "tool": "lookup", "code": -32001, "message": "busy"})
    resp = post(proxy, [call(1, "refund", {"order_id": "7"}), call(2, "lookup", {"order_id": "7"})])
    [entry] = proxy.end()
    assert resp.json() == [{"jsonrpc": "2.0", "id": i, "error": {"code": -32001, "message": "busy"}} for i in (1, 2)]
    assert len(rig[1].calls) == before and entry.fault_status == "fired"


def test_tool_named_by_the_mcp_upstream_matches_its_calls_in_faults_and_checks(proxy):
    proxy.begin({"kind": "error", "tool": "mcp", "message": "down"})
    listed = post(proxy, LIST)
    called = post(proxy, call(2, "refund", {"order_id": "7"}))
    trace = proxy.end()
    assert listed.json()["result"]["tools"] == TOOLS  # protocol traffic is never faulted
    assert called.json()["result"] == {"content": [{"type": "text", "text": "down"}], "isError": True}
    assert judge("tool_called", trace, tool="mcp").message == "tool called 1 time(s) (min 1)"
    assert not judge("tool_not_called", trace, tool="mcp").passed
    assert judge("tool_not_called", trace, tool="orders").passed


def test_malformed_cuts_the_json_inside_one_sse_event_and_keeps_its_framing(proxy):
    proxy.begin({"kind": "malformed", "tool": "refund"})
    resp = post(proxy, call(2, "refund", {"order_id": "7"}), sse_ok=True)
    [entry] = proxy.end()
    events = sse.split(resp.content)
    assert resp.headers["content-type"].startswith("text/event-stream") and len(events) == 1
    assert events[0].startswith(b"event: message\ndata: {")
    assert events[0].endswith(b"\n\n") and events[0].count(b"\n") == 3  # event, data, blank line
    data = sse.data_of(events[0])
    assert isinstance(data, str) and data.startswith('{"jsonrpc": "2.0", "id": 2')  # cut: it does not parse
    assert entry.fault_status == "fired"


def test_rpc_error_answers_json_when_the_upstream_was_never_seen_answering_sse(proxy):
    proxy.begin({"kind": "rpc_error"})
    resp = post(proxy, call(7, "refund", {"order_id": "7"}), sse_ok=True)
    proxy.end()
    assert resp.headers["content-type"] == "application/json"
    assert resp.json() == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32603,
                                                             "message": "internal error (injected by chaos-gate)"}}


def test_a_tool_filter_naming_a_world_mcp_upstream_is_not_vacuous(tmp_path, capsys):
    from broken_config_cases import WORLD, cfg, invariant, scenario
    from gate.cli import main

    path = tmp_path / "chaos-gate.yaml"
    path.write_text(cfg(WORLD + invariant("{id: x, type: side_effect_once, tool: shop-mcp}")
                        + scenario("{kind: rpc_error, tool: shop-mcp}")))
    assert main(["validate", "-c", str(path)]) == 0, capsys.readouterr().err
