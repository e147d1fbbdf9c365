"""Every in-process fault means the same on every new framework seam: one gate run per framework.

The seam tests (parts C and D, and the Node frameworks) each plant one bug and catch it with one fault. This one holds
the seams to the whole catalog of tool faults on the same sound agents: per framework one run
of twelve scenarios, each faulting the agent's first `issue_refund` call with one kind, and
each call's trace must say the fault acted as it does on the wire: `error`, `not_found`,
`rate_limit` and `timeout` answer without running the tool (not forwarded); `timeout_after_write`
and `latency` run it; the value rewrites run it and change what the agent got (`fired`), or are
`not_applicable` with the reason (raw bytes into a dict). The verdicts are not asserted: a sound
agent may rightly fail a fault; what must hold is that the fault reached it, and how.
"""

from __future__ import annotations

import json
import pytest

import test_instrument_node_frameworks as part_node
import test_instrument_python_c as part_c
import test_instrument_python_d as part_d
from conftest import load_report, write_config
from gate.cli import main

UNRUN = {"error": {}, "not_found": {}, "rate_limit": {"retry_after": 0.1}, "timeout": {"seconds": 0.2}}
RUN = {"timeout_after_write": {"seconds": 0.2}, "latency": {"ms": 50}}
VALUE = {"empty": {}, "malformed": {}, "huge": {"bytes": 20000}, "binary": {}, "inject": {}, "schema_drift": {}}
KINDS = {**UNRUN, **RUN, **VALUE}


def matrix_config(tmp, name: str):
    ledger = tmp / "ledger.txt"
    if name in part_c.CASES:
        made = part_c.config(tmp, part_c.CASES[name], "sound", ledger)
    elif name in part_d.CASES:
        made = part_d.config(tmp, name, "sound", ledger)
    else:
        case = part_node.CASES[name]
        made = part_node.gate_config(tmp, ["node", case.agent], part_node.agent_env(ledger, "sound"), case.fault)
    doc = json.loads(made.read_text())
    doc["contract"] = {"baseline": False, "invariants": [{"id": "completes", "type": "completes", "severity": "low"}],
                       "scenarios": [{"name": kind, "faults": [{"kind": kind, "tool": "issue_refund", "on_calls": [1],
                                                                **params}]} for kind, params in KINDS.items()]}
    doc["gate"] = {"min_score": 0, "allow_vacuous": True}
    doc["concurrency"] = 2
    return write_config(tmp, json.dumps(doc, indent=1))


@pytest.mark.parametrize("name", [*part_c.CASES, *part_d.CASES, *part_node.CASES])
def test_every_tool_fault_acts_through_the_seam_as_on_the_wire(name, tmp_path):
    out = tmp_path / "out"
    main(["run", "-c", str(matrix_config(tmp_path, name)), "-o", str(out), "--quiet", "--full-report"])
    seen = {}
    for cell in load_report(out)["verdict"]["cells"]:
        (run,) = cell["runs"]
        calls = [e for e in run["trace"] if e["kind"] == "tool" and e["tool"] == "issue_refund"]
        first = calls[0] if calls else {}
        seen[cell["scenario"]] = (first.get("transport"), first.get("fault"), first.get("fault_status"),
                                  first.get("forwarded"))
    expected = {kind: ("function", kind, "fired", kind not in UNRUN) for kind in KINDS}
    if seen.get("binary", (None,) * 4)[2] == "not_applicable":  # raw bytes cannot stand for a dict or a str
        expected["binary"] = ("function", "binary", "not_applicable", True)
    assert seen == expected
