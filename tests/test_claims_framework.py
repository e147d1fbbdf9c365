"""`claims_backed` on a framework agent whose tool never crosses the wire (OpenAI Agents SDK).

The agent is a server the gate starts (the SDK is imported once per gate run); its tool is
an in-process function, reached by the gate's seam inside the SDK's own
failure handler (gate/instrument/python/chaos_gate_agent/seams/openai_agents.py), so an
injected failure takes the path a real one takes. The bug that swallows it through the
SDK's `failure_error_function` and the one that answers a hard-coded success when the LLM
call fails are each caught under the fault that exposes them, and pass the fault-free
cell; the sound twin passes every fault, an empty tool answer among them.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import AGENTS, load_report, write_config
from gate.cli import main

SCENARIOS = [
    {"name": "tool_error", "faults": [{"kind": "error", "tool": "issue_refund"}]},
    {"name": "empty_answer", "faults": [{"kind": "empty", "tool": "issue_refund"}]},
    {"name": "llm_down", "faults": [{"kind": "auth_error", "target": "llm"}]},
]
EXPOSED = {"swallow_errors": ("contract/refund/tool_error", "issue_refund was called once and answered error (500)"),
           "canned_success": ("contract/refund/llm_down", "issue_refund was never called")}


def config(tmp, variant: str):
    pytest.importorskip("agents.tool")  # tests/agents is a directory too: make sure it is the SDK
    doc = {
        "version": 1, "seed": 5,
        "agent": {"start": {"command": [sys.executable, str(AGENTS / "claims_framework_agent.py")],
                            "env": {"LEDGER": str(tmp / "ledger"), "VARIANT": variant, "OPENAI_API_KEY": "sk-sim",
                                    "OPENAI_AGENTS_DISABLE_TRACING": "1"},
                            "ready": {"url": "{{url}}/health", "timeout": 60}},
                  "invoke": {"http": {"url": "{{url}}/chat", "body": {"message": "{{input}}"}, "output": "$.reply"}},
                  "timeout": 30},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "sim": {"rules": [{"when": r"refund.*?(\d{3,})", "tool": "issue_refund", "arguments": {"order_id": "{{1}}"},
                           "answer": "Your refund for order {{1}} has been processed."}]},
        "inputs": [{"id": "refund", "text": "Please refund order 1234, it arrived damaged."}],
        "mutation": {"enabled": False},
        "shrink": {"enabled": False},
        "contract": {"invariants": [
            {"id": "completes", "type": "completes", "severity": "critical"},
            {"id": "honest-claims", "type": "claims_backed", "severity": "critical", "claims": [
                {"says": "(?i)refund (for order \\d+ )?has been (issued|processed)",
                 "backed_by": {"tool": "issue_refund", "ok": True}}]},
        ], "scenarios": SCENARIOS},
        "gate": {"min_score": 80},
        "concurrency": 1,
    }
    return write_config(tmp, json.dumps(doc, indent=1))  # JSON is YAML


def run(tmp, variant: str, *only: str) -> tuple[int, dict]:
    argv = ["run", "-c", str(config(tmp, variant)), "-o", str(tmp / "out"), "--quiet"]
    code = main(argv + [arg for cell in only for arg in ("--only", cell)])
    return code, {c["id"]: c for c in load_report(tmp / "out")["verdict"]["cells"]}


def claims(cell: dict) -> dict:
    return next(o for o in cell["invariants"] if o["id"] == "honest-claims")


def test_the_sound_twin_passes_every_fault(tmp_path):
    code, cells = run(tmp_path, "sound")
    assert code == 0 and all(c["status"] == "pass" for c in cells.values()), {k: c["reason"] for k, c in cells.items()}
    assert claims(cells["contract/refund/baseline"])["total_runs"] == 1  # the claim was made, and backed
    for scenario in ("tool_error", "empty_answer", "llm_down"):  # an apology: nothing claimed
        assert claims(cells[f"contract/refund/{scenario}"])["not_judged_runs"] == 1


@pytest.mark.parametrize("variant", sorted(EXPOSED))
def test_the_liar_is_caught_where_its_fault_fires(variant, tmp_path):
    exposing, words = EXPOSED[variant]
    code, cells = run(tmp_path, variant, "contract/refund/baseline", exposing)
    assert code == 1 and cells["contract/refund/baseline"]["status"] == "pass"
    assert cells[exposing]["reason"] == "contract:honest-claims"
    assert words in claims(cells[exposing])["message"], claims(cells[exposing])["message"]
    steps = [s for r in cells[exposing]["runs"] for s in r["trace"] if s["kind"] == "tool"]
    assert all(s["transport"] == "function" for s in steps)  # the call never crossed the wire
