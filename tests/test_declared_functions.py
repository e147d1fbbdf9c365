"""`kind: function`: any Python function by name, for the long tail (no framework, or one the gate
has no seam for). The agent (tests/agents/declared/agent.py) is a real `openai` SDK client whose
tool lives in its own module; the gate wraps `refund_tools:refund` where the agent's process
imports it, whichever way the agent looks it up. A planted bug (retrying a refund whose answer
timed out after it wrote) is caught by `timeout_after_write` on that function; its twin passes.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import AGENTS, load_report, write_config
from gate.cli import main
from gate.plan import load_config
from gate.errors import ConfigError

HERE = AGENTS / "declared"
INPUT = "Please refund order 1234, it arrived damaged."


def config(tmp_path, variant: str, style: str, function: str = "refund_tools:refund") -> str:
    doc = {
        "version": 1, "seed": 5,
        "agent": {"invoke": {"command": {"command": [sys.executable, str(HERE / "agent.py")], "env": {
            "LEDGER": str(tmp_path / "ledger.txt"), "VARIANT": variant, "IMPORT": style,
            "OPENAI_API_KEY": "sk-sim"}}}, "timeout": 30},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "tools": [{"name": "refund", "kind": "function", "function": function}],
        "sim": {"rules": [{"when": r"refund.*?(\d{3,})", "on_error": {"action": "apologize"},
                           "steps": [{"call": "refund", "arguments": {"order_id": "{{1}}"}},
                                     {"answer": "Your refund for order {{1}} has been issued."}]}]},
        "inputs": [{"id": "refund", "text": INPUT}], "mutation": {"enabled": False}, "shrink": {"enabled": False},
        "contract": {"baseline": False, "invariants": [
            {"id": "completes", "type": "completes", "severity": "critical"},
            {"id": "refund-once", "type": "side_effect_once", "tool": "refund", "severity": "critical"}],
            "scenarios": [{"name": "lost_answer", "faults": [
                {"kind": "timeout_after_write", "target": "refund", "on_calls": [1], "seconds": 0.2}]}]},
        "gate": {"min_score": 80}, "concurrency": 1,
    }
    return str(write_config(tmp_path, json.dumps(doc, indent=1)))


def ledger(tmp_path) -> int:
    path = tmp_path / "ledger.txt"
    return len(path.read_text().split()) if path.exists() else 0


@pytest.mark.parametrize("style", ["from", "module"])
@pytest.mark.parametrize("variant", ["bug", "sound"])
def test_a_declared_function_is_faulted_where_the_agent_looks_it_up(variant, style, tmp_path):
    code = main(["run", "-c", config(tmp_path, variant, style), "-o", str(tmp_path / "out"), "--quiet",
                 "--full-report"])
    verdict = load_report(tmp_path / "out")["verdict"]
    (cell,) = verdict["cells"]
    (run,) = cell["runs"]
    failed = {c["invariant"] for c in run["checks"] if not c["passed"]}
    assert (code, failed, ledger(tmp_path)) == ((1, {"refund-once"}, 2) if variant == "bug" else (0, set(), 1)), run
    first = next(s for s in run["trace"] if s["kind"] == "tool")
    assert (first["target"], first["tool"], first["transport"]) == ("refund", "refund", "function")
    assert (first["fault"], first["fault_status"]) == ("timeout_after_write", "fired")
    assert "function:refund_tools:refund" in verdict["reach"]["in_process"]
    assert not any("not reached" in n for n in verdict["reach"]["notes"])


def test_a_declared_function_the_agent_never_imports_is_reported_not_reached(tmp_path):
    code = main(["run", "-c", config(tmp_path, "sound", "from", function="refund_toolz:refund"),
                 "-o", str(tmp_path / "out"), "--quiet"])
    verdict = load_report(tmp_path / "out")["verdict"]
    assert code == 2 and verdict["error_reason"] == "vacuous"  # its fault could not fire: never a pass
    assert verdict["coverage"][0]["faults"][0]["status"] == "never_matched"
    note = next(n for n in verdict["reach"]["notes"] if n.startswith("function tool 'refund' not reached"))
    assert "refund_toolz" in note


@pytest.mark.parametrize("tool, message", [
    ({"name": "refund", "kind": "function"}, "needs `function: MODULE:ATTR`"),
    ({"name": "refund", "kind": "function", "function": "refund_tools:refund", "env": "X"}, "takes no 'env'"),
    ({"name": "refund", "kind": "http", "env": "X", "upstream": "http://x", "function": "a:b"}, "only of one"),
    ({"name": "refund", "kind": "function", "function": "refund_tools"}, "function"),
])
def test_a_function_tool_is_declared_exactly(tmp_path, tool, message):
    doc = {"version": 1, "agent": {"invoke": {"command": {"command": ["true"]}}}, "tools": [tool],
           "llm": [{"name": "openai"}], "inputs": [{"id": "a", "text": "x"}]}
    with pytest.raises(ConfigError, match=message):
        load_config(str(write_config(tmp_path, json.dumps(doc))))


def test_a_function_tool_the_gate_cannot_wrap_is_vacuous_at_load(tmp_path):
    """An agent already running at agent.url is not the gate's process to instrument: its declared
    function can never be wrapped, so the config is refused, never a pass that tested nothing."""
    doc = {"version": 1, "agent": {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "{{url}}/chat"}}},
           "tools": [{"name": "refund", "kind": "function", "function": "refund_tools:refund"}],
           "llm": [{"name": "openai"}], "inputs": [{"id": "a", "text": "x"}]}
    with pytest.raises(ConfigError, match=r"tools\[0\]\.kind: vacuous: 'refund' is a `kind: function` tool, but the "
                                          r"agent is already running at agent.url.*: its function is never wrapped, so nothing reaches it"):
        load_config(str(write_config(tmp_path, json.dumps(doc))))
