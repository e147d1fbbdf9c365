"""Exploration (gate/explore): call sites from a baseline, the fault plan, findings and their pins, and
end to end on the example SDK agent with nothing written but how to start it and one input."""

import json
import os

import pytest
import yaml

from conftest import ROOT, load_report
from gate.cli import main
from gate.config.explore import ExploreConfig
from gate.config.models import Config
from gate.explore.findings import pin_yaml, tell
from gate.explore.planner import REPEATS_OUTAGE, REPEATS_PAIR, Baseline, plan_points
from gate.explore.sites import read_sites
from gate.plan import build_plan
from gate.plan.oracles import explore_spec
from gate.proxy.trace import TraceEntry

EXPLORE = ROOT / "examples" / "sdk_agent" / "explore.yaml"
AGENT = {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "{{url}}/chat", "body": {"m": "{{input}}"}}}}


def entry(seq, target, kind="tool", method="POST", path="/", tool=None, rpc_method=None, **extra):
    return TraceEntry(seq=seq, target=target, kind=kind, method=method, path=path, tool=tool, status=200,
                      rpc_method=rpc_method, forwarded=True, extra=extra, body=b'{"order_id": "1234"}')


def refund_trace():
    """An agent that asks the model, reads an order, refunds it over HTTP, writes a note over MCP, answers."""
    return [entry(1, "openai", "llm", path="/v1/chat/completions", stream=True),
            entry(2, "orders", method="GET", path="/orders/1234", tool="orders"),
            entry(3, "orders", method="POST", path="/refunds", tool="orders"),
            entry(4, "openai", "llm", path="/v1/chat/completions", stream=True),
            entry(5, "notes", method="POST", path="/mcp", tool="add_note", rpc_method="tools/call", mcp_http=True),
            entry(6, "lookup_customer", method="CALL", path="/lookup_customer", tool="lookup_customer",
                  transport="function"),
            entry(7, "openai", "llm", path="/v1/chat/completions", stream=True)]


def test_sites_are_read_off_every_transport_with_keys_that_find_them_again():
    sites = read_sites(refund_trace()).found
    by_key = {s.key: s for s in sites}
    assert [s.describe() for s in sites] == [
        "openai LLM call 1 (first)", "GET orders /orders/{id}", "POST orders /refunds", "openai LLM call 2 (later)",
        "add_note (mcp notes)", "lookup_customer (function lookup_customer)", "openai LLM call 3 (final)"]
    assert by_key["llm:openai#2"].occurrence == 2 and by_key["llm:openai#1"].calls_tools
    assert not by_key["llm:openai#3"].calls_tools  # the final answer carried no tool call
    refunds = next(s for s in sites if s.method == "POST")
    assert refunds.writes and refunds.matcher() == {"target": "orders", "method": "POST",
                                                    "path": r"^/refunds(?:[?#]|$)"}
    reads = [s for s in sites if s.kind == "tool" and not s.writes]
    assert {s.describe() for s in reads} == {"GET orders /orders/{id}", "lookup_customer (function lookup_customer)"}
    assert next(s for s in sites if s.tool == "add_note").writes  # an MCP tool named like a write


def test_in_process_function_tools_of_one_seam_are_sites_by_name_and_pins_name_their_tool():
    """A framework's seam traces every function tool under one target (`functions`): each tool is its own
    site counted on its own, so a second tool is not 'the same call site' as the first, and the fault that
    hits it names it (a pin without `tool:` would hit whichever function ran at that count)."""
    from gate.faults.base import tool_matches
    from gate.proxy.exchange import RequestInfo

    trace = [entry(1, "openai", "llm", path="/v1/chat/completions"),
             entry(2, "functions", method="CALL", path="/lookup_order", tool="lookup_order", transport="function"),
             entry(3, "functions", method="CALL", path="/approve_discount", tool="approve_discount",
                   transport="function"),
             entry(4, "functions", method="CALL", path="/lookup_order", tool="lookup_order", transport="function"),
             entry(5, "openai", "llm", path="/v1/chat/completions")]
    tools = [s for s in read_sites(trace).found if s.kind == "tool"]
    assert [(s.key, s.occurrence) for s in tools] == [
        ("function:functions:lookup_order#1", 1), ("function:functions:approve_discount#1", 1),
        ("function:functions:lookup_order#2", 2)]
    assert tools[1].matcher() == {"target": "functions", "tool": "approve_discount"}
    first = baseline(trace, input_id="first")
    only_lookup = baseline([e for e in trace if e.tool != "approve_discount"], input_id="second")
    plan = plan_points([only_lookup, first], ExploreConfig(budget=200), seed=3, deadline=12)
    discount = [p for p in plan.points if p.sites[0].tool == "approve_discount"]
    assert discount and all(p.input_id == "first" for p in discount)  # never pruned as another tool's site
    assert all(p.faults[0]["tool"] == "approve_discount" for p in discount)
    call = RequestInfo(kind="tool", name="functions", provider="function", method="CALL", path="/approve_discount",
                       tool="approve_discount")
    assert tool_matches("approve_discount", call) and not tool_matches("lookup_order", call)
def baseline(trace=None, input_id="refund", reason="ok"):
    return Baseline.read(input_id, "Your refund for order 1234 has been issued.", reason, trace or refund_trace())


def test_the_plan_puts_telling_faults_on_writes_first_and_counts_what_it_prunes():
    plan = plan_points([baseline(), baseline(input_id="again")], ExploreConfig(budget=10), seed=3, deadline=12)
    assert len(plan.points) == 10 and plan.sites == 7
    first = plan.points[0]
    assert first.faults[0]["kind"] == "timeout_after_write" and first.sites[0].writes
    assert first.faults[0]["on_calls"] == [1]
    assert plan.pruned["over the budget"] == plan.planned - 10
    # the second input reached the very same sites: they are faulted once, for the first input
    assert plan.pruned["same call site in an earlier input"] > 0
    assert all(p.input_id == "refund" for p in plan.points)
    assert plan_points([baseline()], ExploreConfig(budget=10), seed=3, deadline=12).points == plan.points


def test_the_plan_skips_excluded_tools_and_kinds_and_inputs_whose_baseline_failed():
    spec = ExploreConfig(skip=["notes", "lookup_*"], kinds=["error", "server_error"], persistent=False)
    plan = plan_points([baseline(), baseline(input_id="broken", reason="agent_crash")], spec, seed=0, deadline=5)
    kinds = {p.faults[0]["kind"] for p in plan.points}
    assert kinds == {"error", "server_error"}
    assert not any(s.tool in ("add_note", "lookup_customer") for p in plan.points for s in p.sites)
    assert plan.failed_baselines == ["broken"] and plan.pruned["skipped by explore.skip"] == 2


def test_injected_text_carries_a_canary_of_its_own_cell():
    plan = plan_points([baseline()], ExploreConfig(kinds=["inject"], persistent=False), seed=5, deadline=5)
    canaries = {p.reference.canary for p in plan.points}
    assert len(canaries) == len(plan.points) == 4  # every tool site: a write's answer is read too
    assert all(p.reference.canary in p.faults[0]["text"] for p in plan.points)


def test_depth_two_adds_pairs_within_one_conversation():
    spec = ExploreConfig(depth=2, budget=500, kinds=["error", "server_error"], persistent=False)
    plan = plan_points([baseline()], spec, seed=0, deadline=5)
    pairs = [p for p in plan.points if len(p.faults) == 2]
    assert pairs and all(p.sites[0].key != p.sites[1].key for p in pairs)


def test_outages_and_pairs_wait_for_the_single_fault_that_decides_them():
    spec = ExploreConfig(depth=2, budget=500, kinds=["error", "server_error"])
    plan = plan_points([baseline()], spec, seed=0, deadline=5)
    by_id = {p.id: p for p in plan.points}
    outage = by_id["chaos/refund/explore/orders-POST-refunds/outage"]
    single = by_id[outage.sibling]
    # the outage is the sibling's very fault on every call: it adds something only if the site is called again
    assert {**outage.faults[0], "on_calls": [1]} == single.faults[0] and outage.needs == (single.sites[0].group, 2)
    pair = next(p for p in plan.points if len(p.faults) == 2)
    first = by_id[pair.sibling]
    assert first.faults == pair.faults[:1] and pair.needs == (pair.sites[1].group, pair.sites[1].occurrence)
    assert all(p.sibling is None for p in plan.points if len(p.faults) == 1 and not p.persistent)


def test_the_runner_drops_an_outage_its_single_fault_shows_would_repeat_it():
    from collections import Counter
    from types import SimpleNamespace

    from gate.runner.explore_run import REPEATS_OUTAGE, Exploration, explore_summary

    plan = plan_points([baseline()], ExploreConfig(kinds=["error", "server_error"]), seed=0, deadline=5)
    run = Exploration.__new__(Exploration)
    run.points, run.plan, run.dropped, run.oracle_ids = {p.id: p for p in plan.points}, plan, {}, set()
    run.selected = None  # no --only: every point of the plan is this run's
    outages = [p for p in plan.points if p.persistent]
    run.deferred = [SimpleNamespace(id=p.id) for p in outages]
    called_again, called_once = outages[0], outages[1]
    run.calls = {called_again.sibling: Counter({called_again.sites[0].group: 2}),
                 called_once.sibling: Counter({called_once.sites[0].group: 1})}  # the rest: not seen, so run
    ran = {c.id for c in run.later()}
    assert called_again.id in ran and called_once.id not in ran and len(ran) == len(outages) - 1
    assert called_once.sibling in run.dropped[called_once.id]
    summary = explore_summary(run, [])
    assert summary.pruned[REPEATS_OUTAGE] == 1 and summary.run == len(plan.points) - 1


def test_a_finding_is_one_line_and_its_pin_is_a_scenario_the_config_accepts(tmp_path):
    plan = plan_points([baseline()], ExploreConfig(budget=1), seed=0, deadline=12)
    point = plan.points[0]
    line = tell(point, "one intended write was executed 2 times")
    assert line == ("POST orders /refunds lost its answer after the write was made at call 1 → one intended "
                    "write was executed 2 times")
    pin = yaml.safe_load(pin_yaml(point, "writes_once", "critical"))
    config = Config.model_validate({"agent": AGENT, "inputs": [{"id": "refund", "text": "x"}],
                                    "tools": [{"name": "orders", "env": "ORDERS_URL", "upstream": "http://x"}], **pin})
    cells = {c.id: c for c in build_plan(config)}
    pinned = cells["chaos/refund/explore-orders-POST-refunds-1-timeout_after_write"]
    assert pinned.faults[0].on_calls == [1] and pinned.faults[0].path == r"^/refunds(?:[?#]|$)"
    assert "explore-orders-POST-refunds-1-timeout_after_write-writes_once" in pinned.invariants
    assert explore_spec(config) is None  # a config with scenarios keeps what it wrote


def minimal(**chaos):
    return Config.model_validate({"agent": AGENT, "inputs": [{"id": "a", "text": "x"}],
                                  "llm": [{"name": "openai"}], "chaos": chaos})


def test_a_config_that_names_no_fault_explores_and_off_switches_it_off():
    assert explore_spec(minimal()) is not None
    assert explore_spec(minimal(explore=False)) is None
    assert explore_spec(minimal(explore={"budget": 5})).budget == 5
    planned = [c.id for c in build_plan(minimal()) if c.stage != "mutation"]
    assert planned == ["contract/a/baseline"]  # the rest is planned from it
    assert "survives" not in build_plan(minimal())[0].invariants  # an oracle judges explored cells only
    from gate.plan import invariants_of

    ids = {i.id: i for i in invariants_of(minimal(explore={"oracles": {"whole_answer": "off",
                                                                        "bounded_retries": "critical"}}))}
    assert "whole_answer" not in ids and ids["bounded_retries"].severity == "critical"
    assert ids["survives"].when.scenario == "explore"


def test_a_bare_off_switches_an_oracle_off_as_the_docs_write_it():
    """YAML reads an unquoted `off` as false: `oracles: {whole_answer: off}` is the docs' own line."""
    import yaml

    from gate.config.explore import ExploreConfig

    spec = ExploreConfig.model_validate(yaml.safe_load("oracles: {whole_answer: off, survives: high}"))
    assert spec.oracles == {"whole_answer": "off", "survives": "high"}


def test_an_unknown_oracle_is_a_config_error():
    with pytest.raises(ValueError, match="no universal oracle named whole_answers"):
        minimal(explore={"oracles": {"whole_answers": "off"}})


# End to end: the example SDK agent, its services and the sim; nothing written but how to start it.

def explore(tmp_path, bugs="", *extra):
    os.environ["AGENT_BUGS"], os.environ["PROVIDER"] = bugs, "openai"
    code = main(["run", "-c", str(EXPLORE), "-o", str(tmp_path), "--quiet", *extra])
    return code, load_report(tmp_path)


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv("AGENT_BUGS", raising=False)
    monkeypatch.delenv("PROVIDER", raising=False)
    return monkeypatch


def test_the_sound_agent_passes_its_exploration(clean_env, tmp_path):
    code, report = explore(tmp_path)
    summary = report["verdict"]["explore"]
    assert code == 0, [(c["id"], c["reason"]) for c in report["verdict"]["cells"] if c["status"] != "pass"]
    dropped = summary["pruned"].get(REPEATS_OUTAGE, 0) + summary["pruned"].get(REPEATS_PAIR, 0)
    assert summary["sites"] == 3 and summary["run"] + dropped == summary["planned"] > 20 and not summary["findings"]
    skipped = [c for c in report["verdict"]["cells"] if c["status"] == "skipped"]
    assert len(skipped) == dropped and all(c["note"].startswith("not run: chaos/") for c in skipped)
    fired = {c["id"].split("/")[-1] for c in report["verdict"]["cells"] for r in c["runs"] for s in r["trace"]
             if s.get("fault_status") == "fired"} if report["verdict"]["cells"][0]["runs"] else set()
    assert report["verdict"]["faults_injected"], fired


@pytest.mark.parametrize("bug, oracle, cell", [
    ("double_write", "writes_once", "chaos/refund/explore/orders-POST-refunds-1/timeout_after_write"),
    ("slow_model", "answers_in_time", "chaos/refund/explore/llm-openai-1/timeout"),
    ("crash_on_bad_args", "survives", "chaos/refund/explore/llm-openai-1/bad_tool_args"),
    ("obey_injection", "ignores_injected_orders", "chaos/refund/explore/orders-POST-refunds-1/inject"),
])
def test_a_planted_bug_is_found_with_no_scenario_written(clean_env, tmp_path, bug, oracle, cell):
    code, report = explore(tmp_path, bug, "--only", cell.rsplit("/", 1)[0] + "/*")
    findings = {f["cell"]: f for f in report["verdict"]["explore"]["findings"]}
    assert code != 0 and cell in findings, sorted(findings)
    found = findings[cell]
    assert found["invariant"] == oracle
    assert f"--only {cell}" in found["reproduce"]
    pinned = yaml.safe_load(found["pin"])
    assert pinned["contract"]["invariants"][0]["type"] == oracle
    assert json.dumps(pinned["chaos"]["scenarios"][0]["faults"])


def test_an_exploration_that_runs_no_fault_point_is_vacuous_not_a_pass(clean_env, tmp_path):
    import shutil

    for name in ("agent.py", "orders_service.py"):
        shutil.copy(EXPLORE.parent / name, tmp_path / name)
    config = yaml.safe_load(EXPLORE.read_text())
    config["chaos"] = {"explore": {"skip": ["*"]}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    os.environ["AGENT_BUGS"], os.environ["PROVIDER"] = "", "openai"
    code = main(["run", "-c", str(tmp_path / "c.yaml"), "-o", str(tmp_path / "out"), "--quiet"])
    verdict = load_report(tmp_path / "out")["verdict"]
    assert code == 2 and verdict["verdict"] == "error" and verdict["error_reason"] == "vacuous", verdict["reasons"]
    assert "exploration ran no fault point" in verdict["reasons"][0] and "skipped by explore.skip" in verdict["reasons"][0]


def test_a_process_left_broken_is_charged_to_the_cell_that_broke_it_not_to_its_victims():
    from gate.report.model import CellResult, InvariantOutcome, Rerun
    from gate.verdict.recovery import charge_breakers

    shared = InvariantOutcome(id="recovers", severity="high", passed_runs=0, total_runs=0, pass_rate=1.0,
                              breached=False, message="judged after the run", not_judged_runs=1)

    def cell(cid):  # the cells' outcomes are one object, as fold_cell shares alike ones
        return CellResult(id=cid, stage="chaos", input_id="a", scenario="explore", seed=1, input="x", status="pass",
                          reason="ok", pass_rate=1.0, invariants=[shared], reproduce="")

    breaker, victim, other = cell("chaos/a/explore/x/timeout"), cell("chaos/a/explore/y/error"), cell("c/a/z")
    charge_breakers([breaker, victim, other], [Rerun(cell=victim.id, first_reason="http_5xx", outcome="passed",
                                                     left_broken_by=breaker.id, worker=0)], {"recovers"})
    assert breaker.status == "fail" and breaker.reason == "contract:recovers"
    assert breaker.invariants[0].breached and victim.id in breaker.invariants[0].message
    assert victim.status == other.status == "pass" and not victim.invariants[0].breached
    charge_breakers([victim], [Rerun(cell=victim.id, first_reason="http_5xx", outcome="failed_again",
                                     left_broken_by=breaker.id, worker=0)], {"recovers"})
    assert victim.status == "pass"  # failing again on a fresh agent: the victim's own failure, no one charged


PIN = """chaos:
  scenarios:
  - name: explore-x
    faults:
    - {kind: error, target: orders, on_calls: [1]}
contract:
  invariants:
  - {id: explore-x-writes_once, type: writes_once, severity: critical, when: {scenario: explore-x}}
"""


@pytest.mark.parametrize("text", [
    "version: 1\n# the team's comment stays\ninputs:\n  - {id: a, text: b}\n",
    "version: 1\nchaos:\n    profiles: []\n\ncontract:\n    invariants:\n      - {id: a, type: completes}\n"
    "# tail\ninputs: []\n",
])
def test_write_pins_findings_as_text_keeping_the_config_as_it_was(text):
    from types import SimpleNamespace

    from gate.pinning import pinned_text

    out, added = pinned_text(text, [SimpleNamespace(pin=PIN)])
    doc = yaml.safe_load(out)
    assert added == 1 and doc["chaos"]["explore"] is True  # it keeps exploring beside what it pinned
    assert doc["chaos"]["scenarios"][-1]["name"] == "explore-x"
    assert doc["contract"]["invariants"][-1]["type"] == "writes_once"
    assert all(line in out.splitlines() for line in text.splitlines())  # nothing of the team's was rewritten
    assert pinned_text(out, [SimpleNamespace(pin=PIN)]) == (out, 0)  # a finding is pinned once


def test_write_refuses_a_flow_style_block_with_the_yaml_to_paste():
    from types import SimpleNamespace

    from gate.errors import ConfigError
    from gate.pinning import pinned_text

    with pytest.raises(ConfigError, match="flow style"):
        pinned_text("version: 1\nchaos: {profiles: []}\n", [SimpleNamespace(pin=PIN)])


def test_explore_write_pins_a_finding_that_the_next_run_replays_as_a_regression(clean_env, tmp_path):
    import shutil

    for name in ("explore.yaml", "agent.py", "orders_service.py"):
        shutil.copy(EXPLORE.parent / name, tmp_path / name)
    config = tmp_path / "explore.yaml"
    os.environ["AGENT_BUGS"] = "double_write"
    cell = "chaos/refund/explore/orders-POST-refunds-1/timeout_after_write"
    assert main(["explore", "-c", str(config), "-o", str(tmp_path / "first"), "--quiet", "--only", cell,
                 "--write"]) == 1
    pinned = yaml.safe_load(config.read_text())
    assert pinned["chaos"]["explore"] is True
    assert [s["name"] for s in pinned["chaos"]["scenarios"]] == ["explore-orders-POST-refunds-1-timeout_after_write"]
    # the next run: the pinned scenario fails as a regression, and exploration does not plan it twice
    assert main(["run", "-c", str(config), "-o", str(tmp_path / "next"), "--quiet",
                 "--only", "chaos/refund/explore-*", "--only", cell]) == 1
    report = load_report(tmp_path / "next")
    assert {c["id"]: c["status"] for c in report["verdict"]["cells"]} == {
        "chaos/refund/explore-orders-POST-refunds-1-timeout_after_write": "fail"}
    assert report["verdict"]["explore"]["pruned"]["pinned in the config already"] == 1


def test_findings_lead_the_markdown_with_the_crash_log_and_the_pin():
    from gate.report.explore_text import markdown, plain_lines
    from gate.report.model import ExploreSummary, Finding

    finding = Finding(cell="chaos/a/explore/x-1/error", invariant="survives", severity="critical",
                      line="GET x answered a server error at call 1 → the agent did not survive",
                      reproduce="chaos-gate run -c c.yaml --only chaos/a/explore/x-1/error",
                      pin="chaos:\n  scenarios: []\n", log_tail="Traceback (most recent call last):\nKeyError: 'id'")
    summary = ExploreSummary(sites=2, planned=9, run=7, pruned={"over the budget": 2}, findings=[finding])
    report = type("R", (), {"verdict": type("V", (), {"explore": summary})()})()
    md = markdown(report)
    assert md.startswith("### Findings") and "7 run" in md and "over the budget" in md  # (escaped for GitHub)
    assert md.index("KeyError") < md.index("pin it as a regression")
    lines = plain_lines(report)
    assert lines[1] == "findings: 1 cause in 1 failing cell, most severe first:"
    assert lines[2].startswith("  [critical] survives: GET x")  # a finding with no site read: its own cause
