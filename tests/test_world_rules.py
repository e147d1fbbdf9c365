"""Worlds at faultbench's level and past it: faultbench's shop world and rules module loaded as they are,
writes checked against field types, enums and refs (a clear tool error, nothing stored), custom
operations resolved at load (an import error on its line), typed parameters as the tool's schema,
their errors as tool errors carrying the message, the clock from the config, record ages on
seeded records."""

from __future__ import annotations

import asyncio
import sys
import json
import logging
import re
import shutil
from pathlib import Path

import pytest

from conftest import write_config
from gate.cli import main
from gate.plan import load_config
from gate.errors import ConfigError
from gate.proxy.exchange import RequestInfo
from gate.proxy.world_upstream import WorldUpstream, input_schema
from gate.worlds.state import OperationError, WorldState
from gate.worlds.table import WorldView

SHOP = Path(__file__).parent / "fixtures" / "faultbench_shop"
HEAD = """
agent: {url: "http://127.0.0.1:9", invoke: {http: {url: "{{url}}"}}}
inputs: [{id: a, text: x}]
"""


@pytest.fixture
def shop_dir(tmp_path):
    shutil.copytree(SHOP, tmp_path, dirs_exist_ok=True)
    return tmp_path


def test_faultbench_shop_world_loads_as_it_is_with_its_rules_module(shop_dir):
    path = write_config(shop_dir, HEAD + "worlds:\n  - {faultbench: worlds/shop.yaml}\n")
    assert main(["validate", "-c", str(path)]) == 0
    [world] = load_config(path).config.worlds
    assert (world.name, world.env, world.mcp_env, world.data_seed) == ("shop", "SHOP_URL", "SHOP_MCP_URL", 42)
    assert list(world.operations) == ["get_order", "list_orders", "create_return", "issue_refund"]
    assert world.operations["create_return"].function == "shop_rules.create_return"
    assert set(world.faults) == {"default", "payments.issue_refund", "orders.get_order"}
    state = WorldState(world, seed=0)
    view = WorldView(state)
    assert [o.id for o in view.orders.all()[:3]] == ["1", "2", "3"] and len(view.orders) == 50  # faultbench's ids
    assert WorldState(world, seed=9).snapshot() == state.snapshot()  # the file's seed: 42, whatever the config's
    order = view.orders.pick(status="delivered")
    assert state.run("create_return", {"order_id": order.id}) == {"order_id": order.id, "status": "returned"}
    with pytest.raises(OperationError, match=f"order {order.id} is returned, not delivered") as refused:
        state.run("create_return", {"order_id": order.id})
    assert refused.value.status == 422
    with pytest.raises(OperationError, match="order 999 not found") as missing:
        state.run("create_return", {"order_id": "999"})
    assert missing.value.status == 404
    assert input_schema(world, world.operations["create_return"]) == {
        "type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"],
        "additionalProperties": False}
    assert view.refunds.insert(order_id=order.id, amount=5.0)["id"] == "1"


def test_a_faultbench_world_with_a_missing_rules_module_is_an_error_on_both_lines(shop_dir):
    (shop_dir / "worlds" / "shop.yaml").write_text((SHOP / "worlds" / "shop.yaml").read_text().replace(
        "shop_rules.create_return", "shop_rulez.create_return"))
    path = write_config(shop_dir, HEAD + "worlds:\n  - {faultbench: worlds/shop.yaml}\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    text = str(exc.value)
    assert ":4: worlds[0].faultbench: " in text
    assert "shop.yaml:23: services.orders.operations.create_return.handler: cannot import module 'shop_rulez'" in text


RULES = '''
from typing import Literal


def discount(world, clock, order_id: str, percent: float, reason: Literal["loyal", "late"] = "loyal") -> dict:
    order = world.order.get(order_id)
    if order is None:
        raise LookupError(f"order {order_id} not found")
    if percent > 50:
        raise ValueError("a discount is at most 50%")
    return world.order.update(order_id, total=round(order.total * (1 - percent / 100), 2)).to_dict()


def broken(world, clock):
    return 1 / 0


def dated(world, clock) -> dict:
    return {"now": clock.now().isoformat()}
'''
WORLD = HEAD + """
worlds:
  - name: shop
    allow_code: true
    clock: {start: "2026-03-01T09:00:00Z", per_call: 1m}
    types:
      customer: {fields: {id: str}}
      order:
        fields: {id: str, total: float, status: {enum: [paid, refunded]}, customer: {ref: customer}, placed: datetime}
        sync_lag: 7200
    seed:
      rows:
        customer: [{id: c1}]
        order: [{id: "1", total: 10.0, status: paid, customer: c1, placed: "-90m"},
                {id: "2", total: 20.0, status: paid, customer: c1, placed: "-3h"}]
    operations:
      get_order: {op: get, type: order}
      new_order: {op: create, type: order}
      set_order: {op: update, type: order}
      discount: {op: custom, function: "FUNCTION"}
      broken: {op: custom, function: "rules_mod:broken"}
      dated: {op: custom, function: "rules_mod:dated"}
"""


@pytest.fixture
def world(tmp_path):
    (tmp_path / "rules_mod.py").write_text(RULES)
    return load_config(write_config(tmp_path, WORLD.replace("FUNCTION", "rules_mod:discount"))).config.worlds[0]


def test_custom_operation_import_error_is_a_config_error_on_its_line(tmp_path):
    (tmp_path / "rules_mod.py").write_text(RULES)
    for function, message in [("nope_mod:discount", "cannot import module 'nope_mod'"),
                              ("rules_mod:discont", "module 'rules_mod' has no function 'discont' "
                                                    "(did you mean 'discount'?)")]:
        with pytest.raises(ConfigError, match=r":22: worlds\[0\].operations.discount.function: " + re.escape(message)):
            load_config(write_config(tmp_path, WORLD.replace("FUNCTION", function)))


def test_typed_parameters_become_the_schema_and_are_checked(world, caplog):
    assert input_schema(world, world.operations["discount"]) == {
        "type": "object", "additionalProperties": False, "required": ["order_id", "percent"],
        "properties": {"order_id": {"type": "string"}, "percent": {"type": "number"},
                       "reason": {"enum": ["loyal", "late"], "type": "string", "default": "loyal"}}}
    state = WorldState(world, 1)
    assert state.run("discount", {"order_id": "2", "percent": 10})["total"] == 18.0
    for args, status, message in [({"order_id": "2", "percent": "lots"}, 422, "percent: Input should be a valid number"),
                                  ({"order_id": "2", "percent": 5, "reason": "whim"}, 422, "reason: Input should be"),
                                  ({"order_id": "2", "percent": 60}, 422, "a discount is at most 50%"),
                                  ({"order_id": "9", "percent": 5}, 404, "order 9 not found")]:
        with pytest.raises(OperationError, match=message) as exc:
            state.run("discount", args)
        assert exc.value.status == status
    assert state.tables["order"]["2"]["total"] == 18.0  # nothing stored by a refused call
    with caplog.at_level(logging.ERROR, logger="gate.worlds"), \
            pytest.raises(OperationError, match="custom operation broken failed: ZeroDivisionError") as exc:
        state.run("broken", {})
    assert exc.value.status == 500 and "ZeroDivisionError" in caplog.text  # logged with its traceback


def test_writes_are_checked_and_a_refused_write_stores_nothing(world):
    up = WorldUpstream(world, 1)
    up.reset()

    def rest(method, path, doc):
        resp = asyncio.run(up.send(RequestInfo("tool", "shop", "http", method, path), [], json.dumps(doc).encode()))
        return resp.status, json.loads(asyncio.run(resp.read()))

    before = up.state.snapshot()
    status, doc = rest("POST", "/ops/set_order", {"id": "2", "status": "bogus", "total": "not-a-number"})
    assert status == 422 and doc["error"] == ("order '2' not updated: status: 'bogus' is not one of paid, refunded; "
                                              "total: expected float, got string 'not-a-number'")
    status, doc = rest("POST", "/orders", {"total": 1.0, "customer": "nobody", "color": "red"})
    assert status == 422 and "unknown field(s) for order: color" in doc["error"] and \
        "customer: no customer with id 'nobody'" in doc["error"]
    assert up.state.snapshot() == before
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "new_order", "arguments": {"total": True}}}
    answer, _ = asyncio.run(up.rpc(rpc))
    assert answer["result"]["isError"] and "total: expected float, got boolean True" in \
        answer["result"]["content"][0]["text"]
    status, doc = rest("POST", "/ops/new_order", {"total": 3, "status": "paid", "placed": "2026-02-01T10:00:00Z"})
    assert status == 201 and doc["placed"] == "2026-02-01T10:00:00+00:00" and doc["id"] == "order_0003"


def test_clock_from_the_config_and_record_age_on_seeded_records(world):
    state = WorldState(world, 1)
    assert state.clock.now().isoformat() == "2026-03-01T09:00:00+00:00"
    assert state.tables["order"]["1"]["placed"] == "2026-03-01T07:30:00+00:00"  # "-90m" of the clock's start
    with pytest.raises(OperationError, match="order '1' not found"):  # younger than its 2h sync lag
        state.run("get_order", {"id": "1"})
    assert state.run("get_order", {"id": "2"})["total"] == 20.0  # 3h old: visible
    assert state.run("dated", {}) == {"now": "2026-03-01T09:02:00+00:00"}  # per_call: 1m after each operation
    state.clock.advance(minutes=30)
    assert state.run("get_order", {"id": "1"})["id"] == "1"


def test_bad_world_faults_and_clock_are_config_errors(tmp_path):
    (tmp_path / "rules_mod.py").write_text(RULES)
    base = WORLD.replace("FUNCTION", "rules_mod:discount")
    for extra, message in [("    faults: {get_ordr: {errors: {timeout: 0.1}}}\n",
                            r"worlds\[0\].faults.get_ordr: no operation 'get_ordr' to fault \(did you mean 'get_order'\?\)"),
                           ("    faults: {get_order: {errors: {timeuot: 0.1}}}\n",
                            r"unknown error kind 'timeuot' \(did you mean 'timeout'\?\)"),
                           ("    faults: {get_order: {errors: {timeout: 0.7, http_500: 0.6}}}\n",
                            "error probabilities sum to 1.3, more than 1"),
                           ("    faults: {get_order: {latency_ms: [300, 100]}}\n", "latency_ms is"),
                           ]:
        with pytest.raises(ConfigError, match=message):
            load_config(write_config(tmp_path, base.replace("    allow_code: true\n", "    allow_code: true\n" + extra)))
    with pytest.raises(ConfigError, match="not a duration"):
        load_config(write_config(tmp_path, base.replace("per_call: 1m", "per_call: soon")))
    with pytest.raises(ConfigError, match=r"seed.rows.order\[0\].placed: 'yesterday' is not an ISO-8601"):
        load_config(write_config(tmp_path, base.replace('placed: "-90m"', "placed: yesterday")))


def test_a_faultbench_world_in_chaos_gate_run(shop_dir):
    """The shop world behind the proxy in a real run: its rules module answers the agent, its faults apply
    to the scenario's cells (not the baseline), and world_state judges its end state."""
    (shop_dir / "agent.py").write_text(
        "import os, httpx\n"
        "r = httpx.post(os.environ['SHOP_URL'] + '/ops/create_return', json={'order_id': '5'})\n"
        "print(r.status_code, r.text)\n")
    path = write_config(shop_dir, f"""
agent:
  invoke: {{command: {{command: [{json.dumps(sys.executable)}, agent.py]}}}}
inputs: [{{id: ret, text: return order 5}}]
mutation: {{enabled: false}}
worlds:
  - {{faultbench: worlds/shop.yaml}}
contract:
  invariants:
    - {{id: returned, type: world_state, world: shop, record: orders, where: {{id: "5"}}, equals: {{status: returned}},
       severity: critical}}
  scenarios:
    - {{name: with_world_faults, faults: [{{kind: latency, target: shop, ms: 1}}]}}
""")
    assert main(["run", "-c", str(path), "-o", str(shop_dir / "out"), "--quiet", "--full-report"]) == 0
    cells = {c["scenario"]: c for c in json.loads((shop_dir / "out" / "report.json").read_text())["verdict"]["cells"]}
    assert cells["baseline"]["status"] == "pass" and cells["with_world_faults"]["status"] == "pass"
    assert "world fault" not in json.dumps(cells["baseline"]["runs"][0]["trace"])
    faulted = cells["with_world_faults"]["runs"][0]["trace"]
    assert [s["fault"] for s in faulted] == ["latency"] and faulted[0]["status"] == 200
    drawn = float(faulted[0]["note"].split("world latency: ")[1].split(" ms")[0])
    assert 50 <= drawn <= 200  # the file's default latency_ms: [50, 200], drawn from the cell's seed
