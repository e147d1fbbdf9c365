"""Exploration on every transport a tool lives on: a command-line tool the agent runs, and an MCP
server the agent's own `mcp` client spawns over stdio. Each config names no scenario and no
invariant; the planted bug is found by its oracle, the sound twin passes the same exploration.
(HTTP tools and an in-process function: tests/test_explore_bank.py.)"""

import json
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REFUND_INPUT, load_report
from gate.cli import main
from test_instrument_commands import AGENT as COMMAND_AGENT
from test_instrument_commands import rig  # noqa: F401  (the fixture: a ledger command on a test PATH)
from test_instrument_python_a import HERE, agent_env, sim


def run(tmp_path, config: dict) -> tuple[int, dict]:
    path = tmp_path / "chaos-gate.yaml"
    path.write_text(yaml.safe_dump(config))
    code = main(["run", "-c", str(path), "-o", str(tmp_path / "out"), "--quiet", "--full-report"])
    return code, load_report(tmp_path / "out")


def findings(report) -> dict:
    return {f["cell"].split("/explore/")[-1]: f["invariant"] for f in report["verdict"]["explore"]["findings"]}


@pytest.mark.parametrize("bugs", ["", "retry_on_timeout", "no_timeout"])
def test_a_command_tool_is_explored(tmp_path, rig, bugs):  # noqa: F811
    import os

    code, report = run(tmp_path, {
        "version": 1, "seed": 3, "concurrency": 2,
        "agent": {"invoke": {"command": {"command": [sys.executable, str(COMMAND_AGENT)], "env": {
            "PATH": f"{rig['bin']}{os.pathsep}{os.environ['PATH']}", "LEDGER_FILE": str(rig["file"]),
            "AGENT_BUGS": bugs}}}, "timeout": 5},
        "tools": [{"name": "ledger", "kind": "command", "writes": True}],
        "inputs": [{"id": "refund", "text": "Please refund order 1234."}],
        "mutation": {"enabled": False}})
    summary = report["verdict"]["explore"]
    assert summary["sites"] == 1 and summary["run"] >= 5
    kinds = {c["id"].rsplit("/", 1)[1] for c in report["verdict"]["cells"] if "/explore/" in c["id"]}
    assert {"timeout_after_write", "exit_code", "timeout", "outage"} <= kinds
    found = findings(report)
    if not bugs:
        assert code == 0 and not found, found
    elif bugs == "retry_on_timeout":  # a write whose outcome it does not know, run again
        assert found.get("ledger-1/timeout_after_write") == "writes_once", found
    else:  # the command is run with no timeout: a hung ledger hangs the agent past its deadline
        assert found.get("ledger-1/timeout") == "answers_in_time", found


@pytest.mark.parametrize("variant", ["bug", "sound"])
def test_an_mcp_tool_over_stdio_is_explored(tmp_path, variant):
    pytest.importorskip("mcp")
    ledger = tmp_path / "ledger.txt"
    code, report = run(tmp_path, {
        "version": 1, "seed": 5, "concurrency": 1,
        "agent": {"invoke": {"command": {"command": [sys.executable, str(HERE / "mcp_client_refund.py")],
                                         "env": agent_env(ledger, variant)}}, "timeout": 20},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "sim": sim("apologize"),
        "inputs": [{"id": "refund", "text": REFUND_INPUT}],
        "mutation": {"enabled": False},
        "chaos": {"explore": {"kinds": ["timeout_after_write", "error", "inject"], "persistent": False}}})
    summary = report["verdict"]["explore"]
    sites = {c["id"].split("/explore/")[-1].rsplit("/", 1)[0] for c in report["verdict"]["cells"] if "/explore/" in c["id"]}
    assert "issue_refund-1" in sites, sites  # the MCP tool, by its name, reached inside the agent's process
    assert summary["run"] >= 3
    found = findings(report)
    if variant == "sound":
        assert code == 0 and not found, (found, json.dumps(summary)[:500])
    else:  # it retries any MCPError: a refund whose answer was lost after it was written is written twice
        assert found.get("issue_refund-1/timeout_after_write") == "writes_once", found


def test_an_mcp_tool_over_http_is_explored_by_its_tool_name(tmp_path):
    """A session-holding agent (one MCP session for the process) on a faultbench MCP server: exploration
    faults `list_orders` on the server by its tool name, through the gate's session keeper."""
    from test_mcp_service_restart import config as mcp_config

    path = mcp_config(tmp_path, restart="never")
    doc = json.loads(Path(path).read_text())
    doc["inputs"], doc["contract"], doc["gate"] = doc["inputs"][:1], {}, {}
    doc["chaos"] = {"explore": {"kinds": ["error", "inject"], "persistent": False}}
    code, report = run(tmp_path, doc)
    cells = {c["id"].split("/explore/")[-1]: c for c in report["verdict"]["cells"] if "/explore/" in c["id"]}
    assert {"list_orders-1/error", "list_orders-1/inject"} <= set(cells), sorted(cells)
    for name in ("list_orders-1/error", "list_orders-1/inject"):
        fired = [s for s in cells[name]["runs"][0]["trace"] if s.get("fault_status") == "fired"]
        assert [(s["target"], s["tool"], s["rpc_method"]) for s in fired] == [("shop", "list_orders", "tools/call")]
    assert code == 0 and not findings(report)  # it apologises for the error and ignores the injected order
