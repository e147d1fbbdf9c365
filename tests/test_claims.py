"""`claims_backed` end to end on the real `openai` SDK agent (tests/agents/claims_agent.py).

Five planted bugs, each a way an agent tells the user it did what failed, each exposed by
one fault (a declined refund: `error` with `status: 200`, an error object in a 200; the
service's own declined answer is one more input) and
caught by `claims_backed` in exactly that cell, while the same bug agent passes the
fault-free cell; the sound twin, which hands every failure to the model as an error,
passes every fault: the sim, as the model, then apologises and claims nothing.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import AGENTS, load_report, write_config
from gate.cli import main

CLAIMS = """
    - id: honest-claims
      type: claims_backed
      severity: critical
      claims:
        - says: '(?i)refund for order (\\d+) has been (issued|processed)|your refund has been processed'
          backed_by: {tool: orders, method: POST, ok: true}
        - says: '(?i)order (\\d+) has (shipped|been delivered)'
          backed_by: {tool: orders, method: GET, ok: true, result_matches: '"order_id": ?"{{1}}", "status": ?"shipped"'}
"""

SCENARIOS = """
    - {name: tool_error, faults: [{kind: error, target: orders, method: POST}]}
    - {name: llm_down, faults: [{kind: server_error, target: llm, status: 503}]}
    - {name: lookup_timeout, faults: [{kind: timeout, target: orders, method: GET, seconds: 0.2}]}
    - {name: empty_answer, faults: [{kind: empty, target: orders, method: POST}]}
    - {name: cut_answer, faults: [{kind: malformed, target: orders, method: POST}]}
    - {name: declined_write, faults: [{kind: error, target: orders, method: POST, status: 200, message: refund declined}]}
"""

# bug -> (the cell that exposes it, the fault-free cell it passes, words of the breach message)
EXPOSED = {
    "swallow_errors": ("contract/refund/tool_error", "contract/refund/baseline", "answered error (500)"),
    "canned_success": ("contract/refund/llm_down", "contract/refund/baseline", "orders POST was never called"),
    "stale_cache": ("contract/status/lookup_timeout", "contract/status/baseline", "answered timeout (no answer)"),
    "accept_empty": ("contract/refund/empty_answer", "contract/refund/baseline", "answered empty (200)"),
    "trust_status": ("contract/refund/declined_write", "contract/refund/baseline", "answered error (200)"),
}


def config(tmp, bugs: str):
    agent = json.dumps(str(AGENTS / "claims_agent.py"))
    service = json.dumps(str(AGENTS / "claims_service.py"))
    return write_config(tmp, f"""
version: 1
seed: 3
services:
  - {{name: orders, command: [{json.dumps(sys.executable)}, {service}], port_env: CLAIMS_PORT,
     ready: {{url: "{{{{url}}}}/orders/1", timeout: 20}}}}
agent:
  start:
    command: [{json.dumps(sys.executable)}, {agent}]
    env: {{AGENT_BUGS: "{bugs}", OPENAI_API_KEY: sk-sim}}
    ready: {{url: "{{{{url}}}}/health", timeout: 20}}
  invoke:
    http: {{url: "{{{{url}}}}/chat", body: {{message: "{{{{input}}}}"}}, output: $.reply}}
  timeout: 15
llm:
  - {{name: openai, provider: openai, upstream: sim}}
tools:
  - {{name: orders, env: ORDERS_URL, upstream: "{{{{services.orders.url}}}}"}}
sim:
  rules:
    - when: 'status of order (\\d+)'
      tool: get_order
      arguments: {{order_id: "{{{{1}}}}"}}
      answer: "Order {{{{1}}}} has shipped."
    - when: 'refund.*?(\\d{{3,}})'
      tool: refund_order
      arguments: {{order_id: "{{{{1}}}}"}}
      answer: "Your refund for order {{{{1}}}} has been processed."
inputs:
  - {{id: refund, text: "Please refund order 1234, it arrived damaged."}}
  - {{id: status, text: "What is the status of order 1234?"}}
  - {{id: declined, text: "Please refund order 4040."}}
mutation: {{enabled: false}}
shrink: {{enabled: false}}
contract:
  invariants:
    - {{id: completes, type: completes, severity: critical}}{CLAIMS}
  scenarios:{SCENARIOS}
gate: {{min_score: 80}}
concurrency: 1
""")


def cells(out) -> dict[str, dict]:
    return {c["id"]: c for c in load_report(out)["verdict"]["cells"]}


def claim_outcome(cell: dict) -> dict:
    return next(o for o in cell["invariants"] if o["id"] == "honest-claims")


def test_the_sound_twin_passes_every_fault_and_claims_only_what_happened(tmp_path):
    code = main(["run", "-c", str(config(tmp_path, "")), "-o", str(tmp_path / "out"), "--quiet"])
    report = load_report(tmp_path / "out")
    assert code == 0, report["verdict"]["reasons"]
    got = cells(tmp_path / "out")
    assert all(c["status"] == "pass" for c in got.values()), {k: c["reason"] for k, c in got.items()}
    # the fault-free cells made their claims, backed: the check judged something
    assert claim_outcome(got["contract/refund/baseline"])["total_runs"] == 1
    assert claim_outcome(got["contract/status/baseline"])["total_runs"] == 1
    # under each fault the honest agent apologised: no claim, nothing to judge, no breach
    for cell_id in ("contract/refund/tool_error", "contract/refund/empty_answer", "contract/refund/cut_answer",
                    "contract/refund/llm_down", "contract/status/lookup_timeout", "contract/declined/baseline",
                    "contract/refund/declined_write"):
        outcome = claim_outcome(got[cell_id])
        assert (outcome["total_runs"], outcome["not_judged_runs"]) == (0, 1), (cell_id, outcome)
        assert "none of its claims" in outcome["message"]


@pytest.mark.parametrize("bug", sorted(EXPOSED))
def test_each_planted_liar_is_caught_under_the_fault_that_exposes_it(bug, tmp_path):
    exposing, clean, words = EXPOSED[bug]
    argv = ["run", "-c", str(config(tmp_path, bug)), "-o", str(tmp_path / "out"), "--quiet"]
    code = main(argv + ["--only", clean, "--only", exposing])
    got = cells(tmp_path / "out")
    assert code == 1
    assert got[clean]["status"] == "pass"
    caught = got[exposing]
    assert (caught["status"], caught["reason"]) == ("fail", "contract:honest-claims"), caught["reason"]
    message = claim_outcome(caught)["message"]
    assert words in message and ' says "' in message, message
    if bug != "canned_success":  # the trace row that contradicts the claim is named
        assert "[trace #" in message


def test_the_pr_comment_shows_the_sentence_and_the_trace_row(tmp_path):
    main(["run", "-c", str(config(tmp_path, "swallow_errors")), "-o", str(tmp_path / "out"), "--quiet",
          "--only", "contract/refund/tool_error"])
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "> Your refund for order 1234 has been processed\\." in md  # escaped as the comment escapes prose
    row = next(line for line in md.splitlines() if line.startswith("| ") and "**error**" in line)
    assert "POST" in row and "/refunds" in row and "500" in row
