"""Fake tool worlds: served over MCP (real `mcp` SDK client) and HTTP, faults applied,
state invariants, isolation per cell, seeded data, the fake clock, bad world files."""

import pytest
import yaml
from pydantic import TypeAdapter

from conftest import ROOT, load_report, write_config
from gate.cli import main
from gate.plan import load_config
from gate.errors import ConfigError
from gate.worlds.model import World
from gate.proxy.world_upstream import WorldUpstream
from gate.worlds.state import WorldState

EXAMPLE = ROOT / "examples" / "worlds_agent"
CONFIG = str(EXAMPLE / "chaos-gate.yaml")


def shop() -> World:
    return load_config(CONFIG).config.worlds[0]


@pytest.mark.parametrize("tools", ["mcp", "http"])
@pytest.mark.parametrize("retry, expected", [("naive", 1), ("careful", 0)])
def test_timeout_after_write_on_refund(tmp_path, monkeypatch, tools, retry, expected):
    monkeypatch.setenv("TOOLS", tools)
    monkeypatch.setenv("RETRY", retry)
    assert main(["run", "-c", CONFIG, "-o", str(tmp_path), "--quiet", "--full-report"]) == expected
    cells = {c["scenario"]: c for c in load_report(tmp_path)["verdict"]["cells"]}
    assert cells["baseline"]["status"] == "pass"
    faulted = cells["refund_times_out"]
    steps = [s for s in faulted["runs"][0]["trace"] if s["fault"]]
    assert [s["fault"] for s in steps] == ["timeout_after_write"] and steps[0]["forwarded"]
    if tools == "mcp":
        assert steps[0]["tool"] == "refund_order" and steps[0]["rpc_method"] == "tools/call"
    one = next(i for i in faulted["invariants"] if i["id"] == "one-refund")
    if retry == "naive":
        assert one["breached"] and "2 refund where {'order': '1234'} record(s) (expected 1)" in one["message"]
        refunds = faulted["runs"][0]["state"]["shop"]["refund"]
        assert len(refunds) == 2  # the final state of the failing cell is kept
        assert "Final world state:" in (tmp_path / "summary.md").read_text()
    else:
        assert not one["breached"] and faulted["runs"][0]["state"] is None


def test_state_is_isolated_between_concurrent_cells(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLS", "http")
    doc = yaml.safe_load((EXAMPLE / "chaos-gate.yaml").read_text())
    doc["agent"]["start"]["command"] = ["python3", str(EXAMPLE / "agent.py")]
    doc["inputs"] = [{"id": f"r{n}", "text": "Please refund order 1234."} for n in range(6)]
    doc["contract"]["scenarios"] = []
    doc["chaos"] = {"explore": False}  # the six baselines alone: each must see exactly its own refund
    path = tmp_path / "iso.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert main(["run", "-c", str(path), "-o", str(tmp_path / "o"), "--quiet", "--full-report", "--concurrency", "3"]) == 0
    assert load_report(tmp_path / "o")["verdict"]["counts"]["passed"] == 6  # each saw exactly its own refund


def test_same_seed_same_data_and_refs_resolve():
    world = shop()
    a, b = WorldState(world, 5).snapshot(), WorldState(world, 5).snapshot()
    assert a == b and a != WorldState(world, 6).snapshot()
    assert a["order"]["1234"]["total"] == 19.99 and len(a["order"]) == 5 and len(a["customer"]) == 3
    for order in a["order"].values():
        if order["id"] != "1234":
            assert order["customer"] in a["customer"] and order["status"] in ("paid", "shipped", "refunded")
            assert all(set(item) == {"sku", "qty"} for item in order["items"])


def test_fake_clock_and_sync_lag():
    world = TypeAdapter(World).validate_python({
        "name": "w", "env": "W", "types": {"event": {"fields": {"id": "str", "at": "datetime"}, "sync_lag": 30}},
        "operations": {"add": {"op": "create", "type": "event"}, "all": {"op": "list", "type": "event"}}})
    now = [0.0]
    state = WorldState(world, 1, clock=lambda: now[0])
    made = state.run("add", {"id": "e1"})
    assert made["at"] == "2026-01-01T00:00:00+00:00"
    assert state.run("all", {}) == []  # not yet synced
    now[0] = 31.0
    assert [r["id"] for r in state.run("all", {})] == ["e1"]


def test_latency_fault_advances_the_run_clock():
    import asyncio

    from gate.faults.shared import Latency
    from gate.proxy.app import RunState

    state = RunState(None)
    asyncio.run(state.advance_clock(Latency(ms=1500).ms / 1000))
    assert state.clock_offset == 1.5


def test_openapi_and_mcp_tool_schemas():
    upstream = WorldUpstream(shop(), 5)
    api = upstream.openapi()
    assert {"/ops/refund_order", "/refunds", "/orders/{id}"} <= set(api["paths"])
    from gate.proxy.world_upstream import input_schema

    schema = input_schema(shop(), shop().operations["refund_order"])
    assert schema["properties"]["amount"] == {"type": "number"}
    assert schema["properties"]["created"]["format"] == "date-time"


BASE = """
agent: {url: "http://127.0.0.1:9", invoke: {http: {url: "{{url}}"}}}
inputs: [{id: a, text: x}]
worlds:
  - name: shop
    env: SHOP_URL
    types:
      order:
        fields:
          id: str
          total: {TOTAL}
          customer: {CUSTOMER}
      customer: {fields: {id: str}}
    seed:
      rows:
        order: [{id: "1"}, {id: "{SECOND}"}]
    operations:
      get_order: {op: get, type: order}
"""


def bad(tmp_path, **subs):
    text = BASE
    for key, value in {"TOTAL": "float", "CUSTOMER": "{ref: customer}", "SECOND": "2", **subs}.items():
        text = text.replace("{" + key + "}", value)
    with pytest.raises(ConfigError) as exc:
        load_config(write_config(tmp_path, text))
    return str(exc.value)


def test_bad_world_files_are_rejected_with_line_and_fix(tmp_path):
    assert ":10: worlds[0].types.order.fields.total: unknown field type 'flaot' (did you mean 'float'?)" \
        in bad(tmp_path, TOTAL="flaot")
    assert ":11: worlds[0].types.order.fields.customer.ref: ref to unknown record type 'custmer' " \
           "(did you mean 'customer'?)" in bad(tmp_path, CUSTOMER="{ref: custmer}")
    assert ":15: worlds[0].seed.rows.order[1]: duplicate order id '1': ids must be unique" in bad(tmp_path, SECOND="1")


def custom_discount(world, clock, id: str) -> dict:
    """A custom world operation (used by the test below, imported by name): the world/table API."""
    order = world.order.get(id)
    return world.order.update(id, total=round(order.total * 0.9, 2)).to_dict()


def test_custom_operation_runs_only_when_allowed(tmp_path):
    body = """
agent: {url: "http://127.0.0.1:9", invoke: {http: {url: "{{url}}"}}}
inputs: [{id: a, text: x}]
worlds:
  - name: shop
    env: SHOP_URL
    ALLOW
    types: {order: {fields: {id: str, total: float}}}
    seed: {rows: {order: [{id: "1", total: 10.0}]}}
    operations:
      discount: {op: custom, function: "test_worlds:custom_discount"}
"""
    with pytest.raises(ConfigError, match=r":10: worlds\[0\].operations.discount: custom operations run Python"):
        load_config(write_config(tmp_path, body.replace("ALLOW", "")))
    world = load_config(write_config(tmp_path, body.replace("ALLOW", "allow_code: true"), "b.yaml")).config.worlds[0]
    state = WorldState(world, 1)
    assert state.run("discount", {"id": "1"})["total"] == 9.0
