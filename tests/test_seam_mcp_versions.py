"""The `mcp` client seam on both majors in use: the test env's 2.x and the 1.x line apps still pin.

The MCP docs' client (tests/agents/inprocess_a/mcp_client_refund.py: `stdio_client` +
`ClientSession`, the openai SDK as the model loop) runs once on this env's mcp 2.3.0 and once
on mcp 1.12.4 in a cached virtualenv of its own (tests/framework_envs.py). On each, the planted
bug (a lost refund answer retried) is caught by the in-process fault and its sound twin passes:
the seam speaks each major's own types and errors (`MCPError` in 2.x, `McpError` around an
`ErrorData` in 1.x), so it never breaks the agent's calls, and the reach line names it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import AGENTS, ledger_lines, one_run, refund_config
from framework_envs import python_for
from test_instrument_python_a import TIMEOUT_AFTER_WRITE, agent_env, sim

AGENT = AGENTS / "inprocess_a" / "mcp_client_refund.py"
MAJORS = {"2.x": lambda: sys.executable, "1.x": lambda: python_for("mcp1")}


@pytest.mark.parametrize("variant", ["bug", "sound"])
@pytest.mark.parametrize("major", list(MAJORS))
def test_the_stdio_seam_catches_the_bug_and_passes_the_twin_on_each_major(major, variant, tmp_path):
    python = MAJORS[major]()
    version = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert version.startswith(major[0] + "."), version
    ledger = tmp_path / "ledger.txt"
    invoke = {"command": [python, str(AGENT)], "env": agent_env(ledger, variant)}
    config = refund_config(tmp_path, invoke, TIMEOUT_AFTER_WRITE, sim("apologize"))
    code, report, run, failed, logs = one_run(config, tmp_path / "out")
    expected = (1, {"refund-once"}) if variant == "bug" else (0, set())
    assert (code, failed) == expected, (run["reason"], run["checks"], run.get("output"), logs)
    assert ledger_lines(ledger) == (2 if variant == "bug" else 1)
    [first, *_] = [e for e in run["trace"] if e["kind"] == "tool"]
    assert (first["target"], first["tool"], first["fault"], first["fault_status"]) == \
           ("mcp-stdio", "issue_refund", "timeout_after_write", "fired")
    reach = report["verdict"]["reach"]
    assert "mcp.ClientSession.call_tool" in reach["in_process"] and not reach["failed"]


def test_a_seam_that_breaks_at_call_time_falls_back_and_is_a_harness_error(tmp_path):
    """`timeout_after_write` lets the refund run and then has the seam raise the client's own error, built
    with a name this `mcp` lacks: the agent gets the server's own result, the reach line names the seam
    failed, and the cell is an error (harness_error), not a pass or a failure charged to the agent."""
    ledger = tmp_path / "ledger.txt"
    invoke = {"command": [sys.executable, str(AGENTS / "inprocess_a" / "mcp_client_types_moved.py")],
              "env": agent_env(ledger, "sound")}
    config = refund_config(tmp_path, invoke, TIMEOUT_AFTER_WRITE, sim("apologize"))
    code, report, run, failed, logs = one_run(config, tmp_path / "out")
    cell = report["verdict"]["cells"][0]
    assert (code, cell["status"], cell["reason"]) == (2, "error", "harness_error"), (cell, logs)
    assert "seam failed in the agent's process" in cell["error"] and "McpError" in cell["error"]
    assert ledger_lines(ledger) == 1  # the tool ran once, untouched
    failed_seams = report["verdict"]["reach"]["failed"]
    assert any(f.startswith("mcp.ClientSession.call_tool: AttributeError") for f in failed_seams), failed_seams
