"""The chaos and contract stages end to end: the example SDK agent (real openai and
anthropic SDKs) behind the gate's proxy, its planted bugs, determinism, reproduction."""

import json
import os
import shlex
import sys

import pytest

from conftest import ROOT, fast_clock, load_report, same_text
from gate.cli import main

SDK = ROOT / "examples" / "sdk_agent"
CONFIG = SDK / "chaos-gate.yaml"


@pytest.fixture
def gate_env(orders, monkeypatch):
    monkeypatch.setenv("ORDERS_URL", orders)
    monkeypatch.delenv("AGENT_BUGS", raising=False)
    monkeypatch.delenv("PROVIDER", raising=False)
    return monkeypatch


def run(tmp_path, *only, bugs="", provider="openai", extra=()):
    os.environ["AGENT_BUGS"], os.environ["PROVIDER"] = bugs, provider
    args = ["run", "-c", str(CONFIG), "-o", str(tmp_path), "--quiet", "--full-report", *extra]
    for cell in only:
        args += ["--only", cell]
    code = main(args)
    return code, load_report(tmp_path)


def cells(report):
    return {c["id"]: c for c in report["verdict"]["cells"]}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_sound_agent_passes_every_scenario(gate_env, tmp_path, provider):
    code, report = run(tmp_path, provider=provider)
    assert code == 0, [(c["id"], c["reason"]) for c in report["verdict"]["cells"] if c["status"] != "pass"]
    assert report["verdict"]["counts"]["cells"] == 8
    # the faults really fired: the trace shows them
    faults = {s["fault"] for c in report["verdict"]["cells"] for r in c["runs"] for s in r["trace"] if s["fault"]}
    assert faults == {"rate_limit", "server_error", "timeout_after_write", "bad_tool_args", "truncate_stream",
                      "inject", "timeout"}


PLANTED = [
    ("no_retry", "rate_limited", "completes", "http_5xx"),
    ("retry_storm", "outage", "llm-budget", "contract:llm-budget"),
    ("double_write", "double_write", "refund-once", "contract:refund-once"),
    ("crash_on_bad_args", "bad_args", "completes", "http_5xx"),
    ("accept_truncated", "truncated", "finished-sentence", "contract:finished-sentence"),
    ("obey_injection", "injection", "no-injected-reply", "contract:no-injected-reply"),
    ("no_tool_timeout", "hanging_tool", "completes", "agent_timeout"),
]


@pytest.mark.parametrize("bug, scenario, invariant, reason", PLANTED)
def test_planted_bug_is_caught_by_its_scenario(gate_env, tmp_path, bug, scenario, invariant, reason):
    # the 60 s tool hang waits out the agent's 12 s deadline: dilated (tests/test_dilation.py runs it at 1x too)
    extra = fast_clock() if bug == "no_tool_timeout" else []
    code, report = run(tmp_path, f"contract/refund/{scenario}", "contract/refund/baseline", bugs=bug, extra=extra)
    by_id = cells(report)
    assert by_id["contract/refund/baseline"]["status"] == "pass"  # the bug only shows under its fault
    cell = by_id[f"contract/refund/{scenario}"]
    assert cell["status"] == "fail" and cell["reason"] == reason
    assert invariant in [b["id"] for b in cell["invariants"] if b["breached"]]
    assert code == 1


def test_double_write_trace_shows_the_withheld_write(gate_env, tmp_path):
    _, report = run(tmp_path, "contract/refund/double_write", bugs="double_write")
    steps = cells(report)["contract/refund/double_write"]["runs"][0]["trace"]
    posts = [s for s in steps if s["target"] == "orders"]
    assert [(s["fault"], s["forwarded"]) for s in posts] == [("timeout_after_write", True), (None, True)]
    summary = (tmp_path / "summary.md").read_text()
    assert "**timeout\\_after\\_write**" in summary and "answer withheld" in summary  # Markdown-escaped


def test_same_seed_same_faults_at_any_concurrency(gate_env, tmp_path):
    extra = ["--seed", "5", *fast_clock()]  # the profiles' holds and latencies, waited at a tenth
    profile_cfg = tmp_path / "flaky.yaml"
    text = CONFIG.read_text().replace("mutation: {enabled: false}",
                                      "mutation: {enabled: false}\nchaos: {profiles: [flaky_llm, degraded_llm, rate_limited]}")
    text = text.replace("command: [python3, agent.py]", f"command: [{sys.executable}, {SDK / 'agent.py'}]")
    text = text.replace("command: [python3, orders_service.py]", f"command: [{sys.executable}, {SDK / 'orders_service.py'}]")
    profile_cfg.write_text(text)
    os.environ["AGENT_BUGS"] = ""
    reports = []
    for k in (1, 3):
        out = tmp_path / f"k{k}"
        main(["run", "-c", str(profile_cfg), "-o", str(out), "--quiet", "--full-report", "--concurrency", str(k), *extra])
        reports.append(json.loads((out / "report.json").read_text()))
    same_text(*(json.dumps(r["verdict"], indent=1) for r in reports))
    fired = [s["fault"] for c in reports[0]["verdict"]["cells"] for r in c["runs"] for s in r["trace"] if s["fault"]]
    assert fired  # probabilistic faults did land somewhere


def test_failing_cell_reproduces_from_its_command(gate_env, tmp_path):
    _, first = run(tmp_path / "a", "contract/refund/outage", bugs="retry_storm")
    cell = cells(first)["contract/refund/outage"]
    assert cell["status"] == "fail"
    words = shlex.split(cell["reproduce"])
    env = dict(w.split("=", 1) for w in words[:words.index("chaos-gate")])
    assert env["AGENT_BUGS"] == "retry_storm"  # the command carries the environment the config expanded
    os.environ.update({"AGENT_BUGS": "", **env})
    argv = words[words.index("chaos-gate") + 1:]
    assert main(argv + ["-o", str(tmp_path / "b"), "--quiet"]) == 1
    again = cells(load_report(tmp_path / "b"))["contract/refund/outage"]
    assert again == cell


def test_reproducing_under_another_environment_warns(gate_env, tmp_path, capsys):
    _, first = run(tmp_path / "a", "contract/refund/outage", bugs="retry_storm")
    words = shlex.split(cells(first)["contract/refund/outage"]["reproduce"])
    os.environ["AGENT_BUGS"] = ""  # the variable that made the cell fail is not set this time
    main(words[words.index("chaos-gate") + 1:] + ["-o", str(tmp_path / "b"), "--quiet"])
    assert "is not the config this cell was reported from" in capsys.readouterr().err


def test_state_probe_after_the_cell(gate_env, tmp_path, orders):
    """An HTTP state probe (GET + JSON path) after the cell sees the double refund."""
    import yaml

    doc = yaml.safe_load(CONFIG.read_text())
    doc["agent"]["start"]["command"] = [sys.executable, str(SDK / "agent.py")]
    doc["services"][0]["cwd"] = str(SDK)  # the orders service the gate starts, asked by the probe
    doc["contract"]["invariants"].append({"id": "refunds-in-ledger", "type": "state", "severity": "critical",
                                          "url": "{{services.orders.url}}/refunds?order_id=1234", "json_path": "$",
                                          "count": 1})
    path = tmp_path / "probe.yaml"
    path.write_text(yaml.safe_dump(doc))
    for bugs, expected in (("", False), ("double_write", True)):
        os.environ["AGENT_BUGS"] = bugs
        main(["run", "-c", str(path), "-o", str(tmp_path / (bugs or "sound")), "--quiet", "--full-report",
              "--only", "contract/refund/double_write"])
        cell = load_report(tmp_path / (bugs or "sound"))["verdict"]["cells"][0]
        probe = next(i for i in cell["invariants"] if i["id"] == "refunds-in-ledger")
        assert probe["breached"] is expected, probe["message"]
    assert "$ has 2 item(s) (expected 1)" in probe["message"]
