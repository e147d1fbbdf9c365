"""A recorded exchange comes back on the wire as it went out, over real loopback HTTP.

Each test records one faulted exchange through a running proxy, round-trips the
session through JSON (as a file on disk would), replays it through the same proxy
and compares what a plain HTTP client received both times: bytes, status, headers,
event boundaries, how long the connection stayed silent, and how it ended.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx
import pytest

from gate.replay.recorder import exchange_of
from gate.replay.session import RecordedExchange, Session
from proxy_harness import FakeCell, sim_proxy


@dataclass
class ReplayCell(FakeCell):
    session: Session | None = None


@pytest.fixture(scope="module")
def proxy():
    with sim_proxy() as harness:
        yield harness


def outcome(call) -> dict:
    """What the client saw, and how long it took."""
    began = time.monotonic()
    try:
        resp = call()
        seen = {"status": resp.status_code, "body": resp.content,
                "headers": {k: resp.headers.get(k) for k in ("content-type", "retry-after", "x-should-retry")}}
    except httpx.HTTPError as exc:
        seen = {"error": type(exc).__name__}
    return {**seen, "seconds": time.monotonic() - began}


def record(proxy, fault: dict, call) -> tuple[dict, Session]:
    proxy.begin(fault)
    proxy.hook.app.current.record = True  # what `run --record` turns on for run 0
    seen = outcome(call)
    proxy.hook.app.current.record = False  # the hook would write a file; the test builds the session
    trace = proxy.end()
    session = Session(id="s", input_id="a", input="x", exchanges=[exchange_of(e, lambda s: s) for e in trace])
    return seen, Session.model_validate_json(session.model_dump_json(by_alias=True))


def replay(proxy, session: Session, call) -> tuple[dict, list]:
    proxy._call(proxy.hook.begin(ReplayCell("replay/s", 1, session=session), 0))
    seen = outcome(call)
    return seen, proxy.end()


def tool_post(proxy, timeout: float = 5.0):
    return lambda: httpx.post(f"{proxy.base}/tool/orders/refunds", json={"order_id": "1234"}, timeout=timeout)


def chat(proxy, stream: bool):
    body = {"model": "gpt-4o-mini", "stream": stream, "messages": [{"role": "user", "content": "hello there"}]}
    return lambda: httpx.post(f"{proxy.base}/llm/openai/chat/completions", json=body, timeout=5.0)


def same(a: dict, b: dict) -> bool:
    return {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}


def test_binary_body_is_stored_as_base64_and_replayed_byte_for_byte(proxy):
    live, session = record(proxy, {"kind": "binary", "size": 4096}, tool_post(proxy))
    exchange = session.exchanges[0]
    assert exchange.encoding == "base64" and "\ufffd" not in exchange.body
    again, trace = replay(proxy, session, tool_post(proxy))
    assert same(live, again) and len(again["body"]) == 4096
    assert trace[0].fault == "binary" and not trace[0].forwarded


def test_stream_keeps_its_events_and_a_stall_holds_then_drops(proxy):
    live, session = record(proxy, {"kind": "stall", "after_events": 2, "seconds": 1}, chat(proxy, stream=True))
    exchange = session.exchanges[0]
    assert len(exchange.events) == 2 and exchange.dropped and exchange.hold_until == "time"
    again, _ = replay(proxy, session, chat(proxy, stream=True))
    assert live["error"] == again["error"] == "RemoteProtocolError"  # cut mid-stream, after the silence
    assert again["seconds"] >= 0.9


def test_clean_stream_replays_its_exact_bytes(proxy):
    live, session = record(proxy, {"kind": "truncate_stream", "after_events": 3}, chat(proxy, stream=True))
    assert len(session.exchanges[0].events) == 3 and not session.exchanges[0].dropped
    again, _ = replay(proxy, session, chat(proxy, stream=True))
    assert same(live, again) and live["body"].count(b"\n\n") == 3


def test_rate_limit_keeps_status_headers_and_retry_after(proxy):
    live, session = record(proxy, {"kind": "rate_limit", "retry_after": 2, "should_retry": False},
                           chat(proxy, stream=False))
    again, trace = replay(proxy, session, chat(proxy, stream=False))
    assert same(live, again) and again["status"] == 429
    assert again["headers"]["retry-after"] == "2" and again["headers"]["x-should-retry"] == "false"
    assert trace[0].retry_after == 2 and trace[0].fault == "rate_limit"


@pytest.mark.parametrize("kind", ["timeout", "timeout_after_write"])
def test_a_hold_replays_for_its_duration_then_drops(proxy, kind):
    live, session = record(proxy, {"kind": kind, "seconds": 1}, tool_post(proxy))
    exchange = session.exchanges[0]
    assert exchange.status is None and exchange.dropped and 900 <= exchange.hold_ms <= 3000
    assert exchange.forwarded == (kind == "timeout_after_write")
    again, _ = replay(proxy, session, tool_post(proxy))
    assert live["error"] == again["error"] and again["seconds"] >= 0.9  # not an instant reset


def test_a_hold_the_agent_gave_up_on_holds_until_it_gives_up_again(proxy):
    live, session = record(proxy, {"kind": "timeout", "seconds": 30}, tool_post(proxy, timeout=0.5))
    assert session.exchanges[0].hold_until == "agent" and live["error"] == "ReadTimeout"
    again, trace = replay(proxy, session, tool_post(proxy, timeout=0.5))
    assert again["error"] == "ReadTimeout"  # the agent's own timeout fires again, not a drop first


def test_partial_body_is_cut_with_its_promised_length(proxy):
    live, session = record(proxy, {"kind": "partial"}, tool_post(proxy))
    exchange = session.exchanges[0]
    assert exchange.status == 200 and exchange.dropped and exchange.length > len(exchange.body)
    again, _ = replay(proxy, session, tool_post(proxy))
    assert live["error"] == again["error"] == "RemoteProtocolError"


def test_latency_is_replayed_before_the_answer(proxy):
    live, session = record(proxy, {"kind": "latency", "ms": 600}, tool_post(proxy))
    assert session.exchanges[0].delay_ms == 600
    again, _ = replay(proxy, session, tool_post(proxy))
    assert same(live, again) and again["seconds"] >= 0.55


def test_a_session_written_before_these_fields_still_replays(proxy):
    old = {"target": "orders", "kind": "tool", "method": "POST", "path": "/refunds", "digest": "x",
           "status": None, "content_type": "application/json", "body": "", "events": None, "fault": "reset"}
    session = Session(id="s", input_id="a", input="x", match="sequence",
                      exchanges=[RecordedExchange.model_validate(old),
                                 RecordedExchange(target="orders", kind="tool", method="POST", path="/refunds",
                                                  digest="x", status=201, body='{"ok": true}')])
    first, _ = replay(proxy, Session.model_validate(session.model_dump()), tool_post(proxy))
    assert first["error"] == "RemoteProtocolError" and first["seconds"] < 1
