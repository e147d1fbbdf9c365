"""A world's own faults, faultbench's vocabulary: what each does on REST and on MCP, whether the
operation ran, latency drawn from [lo, hi] (the clock moves too), rate limits on the world clock,
record-age not-found, seeded decisions per (seed, cell, run), and when `chaos-gate run` applies them."""

from __future__ import annotations

import asyncio
import json
import time
from types import SimpleNamespace

import pytest
from pydantic import TypeAdapter

from gate.proxy.exchange import RequestInfo
from gate.worlds.faults import applies
from gate.worlds.model import World
from gate.proxy.world_upstream import WorldUpstream


def shop(faults: dict, **extra) -> World:
    return TypeAdapter(World).validate_python({
        "name": "shop", "types": {"order": {"fields": {"id": "str", "placed": "datetime"}},
                                  "refund": {"fields": {"id": "str", "order": {"ref": "order"}, "amount": "float"}}},
        "seed": {"rows": {"order": [{"id": "1", "placed": "-30m"}, {"id": "2", "placed": "-5h"}]}},
        "operations": {"get_order": {"op": "get", "type": "order"}, "list_orders": {"op": "list", "type": "order"},
                       "refund": {"op": "create", "type": "refund", "service": "payments"}},
        "faults": faults, **extra})


def upstream(faults: dict, cell=None, run: int = 0, **extra) -> WorldUpstream:
    up = WorldUpstream(shop(faults, **extra), 1, faults=None if cell else True)
    up.reset(cell=cell, run=run)
    return up


def rest(up, op: str, args: dict):
    resp = asyncio.run(up.send(RequestInfo("tool", "shop", "http", "POST", f"/ops/{op}"), [], json.dumps(args).encode()))
    return resp.status, asyncio.run(resp.read()), resp.note


def mcp(up, op: str, args: dict) -> dict:
    answer, _ = asyncio.run(up.rpc({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                    "params": {"name": op, "arguments": args}}))
    return answer["result"]


REFUND = {"order": "1", "amount": 5.0}


@pytest.mark.parametrize("kind, status, runs", [("timeout", 504, True), ("http_500", 500, False),
                                                 ("http_429", 429, False), ("not_found", 404, False),
                                                 ("empty_result", 200, False), ("malformed_json", 200, False)])
def test_each_error_kind_on_rest_and_mcp(kind, status, runs):
    up = upstream({"payments.refund": {"errors": {kind: 1.0}}})
    code, body, note = rest(up, "refund", REFUND)
    assert code == status and note == f"world fault: {kind}"
    assert len(up.state.tables["refund"]) == (1 if runs else 0)  # timeout runs the write; the rest never do
    result = mcp(up, "refund", REFUND)
    if kind == "empty_result":
        assert body == b"{}" and result == {"content": [], "isError": False}  # valid and empty, on both
    elif kind == "malformed_json":
        assert body == b"}{ not valid json" and result["content"][0]["text"] == "}{ not valid json"
        with pytest.raises(ValueError):
            json.loads(body)
        assert not result["isError"]  # a valid MCP answer whose text is not JSON
    else:
        assert result["isError"] and result["content"][0]["text"].startswith(f"{kind}: refund")
    assert mcp(up, "get_order", {"id": "2"})["isError"] is False  # only the faulted operation
    if kind == "http_429":
        resp = asyncio.run(up.send(RequestInfo("tool", "shop", "http", "POST", "/ops/refund"), [],
                                   json.dumps(REFUND).encode()))
        assert ("retry-after", "1") in resp.headers


def test_empty_result_of_a_list_is_an_empty_list():
    up = upstream({"list_orders": {"errors": {"empty_result": 1.0}}})
    assert rest(up, "list_orders", {})[:2] == (200, b"[]")


def test_latency_is_drawn_from_its_range_and_moves_the_clock():
    up = upstream({"default": {"latency_ms": [20, 60]}})
    t0 = time.monotonic()
    for _ in range(3):
        assert rest(up, "get_order", {"id": "2"})[0] == 200
    took = time.monotonic() - t0
    assert 0.06 <= took < 1.5 and 0.06 <= up.state.clock.seconds() <= 0.18


def test_rate_limit_counts_calls_per_window_on_the_clock():
    up = upstream({"get_order": {"rate_limit": {"calls": 2, "per_seconds": 60}}})
    assert [rest(up, "get_order", {"id": "2"})[0] for _ in range(3)] == [200, 200, 429]
    up.state.clock.advance(59)
    assert rest(up, "get_order", {"id": "2"})[0] == 429  # still inside the window
    up.state.clock.advance(2)
    assert rest(up, "get_order", {"id": "2"})[0] == 200  # the window rolled forward


def test_not_found_if_newer_than_reads_the_records_age():
    up = upstream({"get_order": {"errors": {"not_found_if_newer_than": "1h"}}})
    assert rest(up, "get_order", {"id": "1"})[0] == 404  # placed 30 minutes before the clock's start
    assert rest(up, "get_order", {"id": "2"})[0] == 200
    up.state.clock.advance(hours=1)
    assert rest(up, "get_order", {"id": "1"})[0] == 200


def test_decisions_are_seeded_per_cell_and_run():
    def fired(cell_id: str, run: int, seed: int = 3) -> list[int]:
        cell = SimpleNamespace(id=cell_id, seed=seed, scenario="flaky")
        up = upstream({"get_order": {"errors": {"http_500": 0.5}}}, cell=cell, run=run)
        return [rest(up, "get_order", {"id": "2"})[0] for _ in range(16)]

    assert fired("contract/a/flaky", 0) == fired("contract/a/flaky", 0)
    assert len({tuple(fired("contract/a/flaky", r)) for r in range(4)}) > 1
    assert fired("contract/a/flaky", 0) != fired("contract/a/flaky", 0, seed=4)
    assert 3 <= fired("contract/a/flaky", 0).count(500) <= 13


def test_when_chaos_gate_run_applies_a_worlds_faults():
    world = shop({"get_order": {"errors": {"timeout": 1.0}}})
    cell = lambda scenario: SimpleNamespace(scenario=scenario)  # noqa: E731
    assert not applies(world, cell("baseline")) and not applies(world, cell("mutation"))
    assert applies(world, cell("refund_times_out"))
    assert applies(shop(world.model_dump()["faults"], faults_apply="always"), cell("baseline"))
    assert not applies(shop(world.model_dump()["faults"], faults_apply="never"), cell("x"))
    assert applies(world, None, forced=True) and not applies(world, cell("x"), forced=False)
    assert not applies(shop({}), None, forced=True)  # nothing to apply
