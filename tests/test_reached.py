"""Nothing reached is never a silent pass: a cell whose runs made no call the gate saw is flagged in
the cell and the verdict; a run where no cell reached anything is vacuous unless `agent.offline`
says so; an agent that answers one input differently across cells under sim gets the stateful warning.

The agent (tests/agents/caching_agent.py) is a real `openai` SDK client run as a command: it caches
answers on disk the way DSPy's default cache does, ignores the gate altogether, or keeps a counter.
"""

from __future__ import annotations

import json
import sys

from conftest import AGENTS, load_report, write_config
from gate.cli import main
from gate.verdict.reach import NOTHING_REACHED

TEXT = "Where is my order 1234?"


def config(tmp_path, mode: str, scenarios: bool = True, **agent) -> str:
    doc = {
        "version": 1, "seed": 3,
        "agent": {"invoke": {"command": {"command": [sys.executable, str(AGENTS / "caching_agent.py")],
                                         "env": {"MODE": mode, "STATE": str(tmp_path / "state"),
                                                 "OPENAI_API_KEY": "sk-sim"}}}, "timeout": 30, **agent},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "sim": {"default": "Order 1234 is on its way."},
        # one text under two ids: cells that must answer alike from a stateless agent
        "inputs": [{"id": "where", "text": TEXT}, {"id": "where-again", "text": TEXT}],
        "mutation": {"enabled": False}, "shrink": {"enabled": False},
        "contract": {"invariants": [{"id": "answered", "type": "not_empty", "severity": "high"}],
                     "scenarios": [{"name": "slow", "faults": [{"kind": "latency", "target": "llm", "ms": 10}]},
                                   {"name": "slower", "faults": [{"kind": "latency", "target": "llm", "ms": 20}]}]
                     if scenarios else []},
        "chaos": {} if scenarios else {"explore": False},  # without scenarios: the fault-free cells alone
        "gate": {"min_score": 50, "allow_vacuous": False}, "concurrency": 1,
    }
    return str(write_config(tmp_path, json.dumps(doc, indent=1)))


def run(tmp_path, mode: str, scenarios: bool = True, **agent) -> tuple[int, dict]:
    code = main(["run", "-c", config(tmp_path, mode, scenarios, **agent), "-o", str(tmp_path / "out"), "--quiet"])
    return code, load_report(tmp_path / "out")["verdict"]


def test_a_caching_agent_is_flagged_cell_by_cell(tmp_path):
    code, verdict = run(tmp_path, "cache")
    cells = verdict["cells"]
    assert cells[0]["reached"]["calls"] >= 1 and cells[0]["note"] is None
    quiet = [c for c in cells[1:]]
    assert quiet and all(c["reached"]["calls"] == 0 and c["note"] == NOTHING_REACHED for c in quiet)
    warning = next(w for w in verdict["warnings"] if "reached nothing" in w)
    assert f"{len(quiet)} of {len(cells)} cell(s) reached nothing" in warning and "cache" in warning
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "reached nothing" in summary


def test_an_agent_that_reaches_nothing_at_all_is_vacuous(tmp_path):
    code, verdict = run(tmp_path, "fixed", scenarios=False)  # no fault to miss: only the reach says it
    assert (code, verdict["verdict"], verdict["error_reason"]) == (2, "error", "vacuous")
    assert any("no cell reached anything" in r and "agent.offline" in r for r in verdict["reasons"])


def test_offline_on_purpose_is_not_vacuous(tmp_path):
    code, verdict = run(tmp_path, "fixed", scenarios=False, offline=True)
    assert code == 0 and not any("reached anything" in r for r in verdict["reasons"])
    assert not any("reached nothing" in w for w in verdict["warnings"])


def test_state_kept_between_cells_gets_the_stateful_warning(tmp_path):
    code, verdict = run(tmp_path, "counter", scenarios=False)
    assert all(c["reached"]["calls"] >= 1 for c in verdict["cells"])
    warning = next(w for w in verdict["warnings"] if "keep state between cells" in w)
    assert "agent.reset" in warning and "contract/where/baseline" in warning


def test_a_fresh_agent_gets_neither_warning(tmp_path):
    """The control: the same agent without its cache (a new state file per call is no state at all)."""
    code, verdict = run(tmp_path, "nocache", scenarios=False)
    assert code == 0, verdict["reasons"]
    assert not any("reached nothing" in w or "keep state" in w for w in verdict["warnings"])


def test_a_tool_the_model_called_that_no_transport_saw_is_called_not_reached(tmp_path):
    """The openai SDK's own function-calling loop with a local function: no seam, no wire call. The model's
    call is in the history the agent sends back, so the reach line names the tool (promise 4)."""
    doc = {
        "version": 1, "seed": 3,
        "agent": {"invoke": {"command": {"command": [sys.executable, str(AGENTS / "local_tool_agent.py")],
                                         "env": {"OPENAI_API_KEY": "sk-sim"}}}, "timeout": 30},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "sim": {"rules": [{"when": r"order (\d+)", "steps": [{"call": "get_order", "arguments": {"order_id": "{{1}}"}},
                                                             {"answer": "Order {{1}} has shipped."}]}]},
        "inputs": [{"id": "where", "text": TEXT}], "mutation": {"enabled": False}, "shrink": {"enabled": False},
        "contract": {"invariants": [{"id": "answered", "type": "not_empty", "severity": "high"}]},
        "chaos": {"explore": False},  # one fault-free run's reach line is what is tested
        "concurrency": 1,
    }
    out = tmp_path / "out"
    code = main(["run", "-c", str(write_config(tmp_path, json.dumps(doc))), "-o", str(out), "--quiet"])
    reach = load_report(out)["verdict"]["reach"]
    assert code == 0 and reach["called"] == ["get_order"]
    note = next(n for n in reach["notes"] if n.startswith("called, not reached"))
    assert "get_order" in note and "outside every seam" in note
    assert "Called\\, not reached" in (out / "summary.md").read_text()  # the summary escapes agent-named text
