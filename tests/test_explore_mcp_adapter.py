"""A tool called through an adapter is one call site, whichever layer traced it (issue 50, item 3).

The agent (tests/agents/langgraph_mcp/) is LangGraph's `create_react_agent` on langchain-openai, its tools
an MCP server over stdio reached through langchain-mcp-adapters, as those projects' docs write it. Two seams
see each tool call: LangChain's `BaseTool._arun` (the adapter's StructuredTool) and the `mcp` client's
`ClientSession.call_tool` inside it. Exploration must find each MCP tool once, as the MCP call it is
(`target: mcp-stdio`, keyed by the tool's name), so that the pinned finding's YAML reaches that call.

The adapter needs the `mcp` SDK's 1.x line and the test env has 2.x, so the agent runs on a cached
virtualenv of its own (tests/framework_envs.py), put first on PATH as an activated virtualenv would be:
`python` in the agent's command and in the MCP server it spawns is that interpreter. Exploration is
slow here (each tool call spawns the server: about 1.2 s), so each test runs the cells of the sites it
is about (`--only`); the whole sound exploration (56 cells, exit 0) takes about 3 minutes on 2 cores.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, load_report
from framework_envs import python_for
from gate.cli import main

AGENT = ROOT / "tests" / "agents" / "langgraph_mcp"
CONFIG = AGENT / "chaos-gate.yaml"
MCP_TOOLS = ("lookup_order", "refund_order")


@pytest.fixture(scope="module")
def venv_bin() -> str:
    """The framework's virtualenv's bin; skipped, with the installer's words, where it cannot be built."""
    try:
        return str(Path(python_for("langgraph-mcp")).parent)
    except pytest.fail.Exception as exc:
        pytest.skip(f"langchain-mcp-adapters and its pins cannot be installed here: {exc}")


@pytest.fixture
def gate(venv_bin, monkeypatch):
    """Run the gate on a config with $BUGS planted, the virtualenv first on PATH: (exit code, report)."""
    monkeypatch.setenv("PATH", venv_bin + os.pathsep + os.environ.get("PATH", ""))

    def run(out: Path, bugs: str = "", *only: str, config: Path = CONFIG) -> tuple[int, dict]:
        monkeypatch.setenv("BUGS", bugs)
        args = [a for pattern in only for a in ("--only", pattern)]
        code = main(["run", "-c", str(config), "-o", str(out), "--quiet", "--full-report", *args])
        return code, load_report(out)
    return run


def explored(report) -> set[str]:
    """The explored cells, as `site/kind`."""
    return {c["id"].split("/explore/")[1] for c in report["verdict"]["cells"] if "/explore/" in c["id"]}


def tool_calls(run) -> list[tuple]:
    return [(e["target"], e["tool"]) for e in run["trace"] if e["kind"] == "tool" and e["target"] != "orders"]


def test_the_sound_twin_passes_and_each_mcp_tool_is_one_site(tmp_path, gate):
    code, report = gate(tmp_path, "", *(f"chaos/*/explore/{tool}*" for tool in MCP_TOOLS))
    summary = report["verdict"]["explore"]
    failing = [(c["id"], c["reason"]) for c in report["verdict"]["cells"] if c["status"] not in ("pass", "skipped")]
    assert code == 0 and not failing and not summary["findings"], failing
    # 3 model calls, 2 MCP tools, the 2 HTTP calls the server makes: no second site for an MCP tool
    assert summary["sites"] == 7, summary
    sites = {cell.rsplit("/", 1)[0] for cell in explored(report)}
    assert sites == {"lookup_order-1", "lookup_order", "refund_order-1", "refund_order"}, sites
    assert {"refund_order-1/timeout_after_write", "refund_order-1/hang_after_write", "refund_order-1/error",
            "lookup_order-1/timeout"} <= explored(report)
    baseline = report["verdict"]["cells"][0]["runs"][0]
    assert tool_calls(baseline) == [("mcp-stdio", "lookup_order"), ("mcp-stdio", "refund_order")]
    reach = report["verdict"]["reach"]
    assert "mcp.ClientSession.call_tool" in reach["in_process"] and not reach["failed"]
    assert "langchain_core.BaseTool._run" in reach["idle"]  # patched, and stepped aside for the MCP call


PLANTED = [
    # bug, the oracle meant for it, the cell (after /explore/) where it must be found
    ("crash_on_tool_error", "survives", "refund_order-1/timeout"),  # the MCP client's own timeout error
    ("fresh_key_retry", "writes_once", "orders-POST-refunds-1/timeout_after_write"),  # inside the MCP server
]


@pytest.mark.parametrize("bug, oracle, where", PLANTED, ids=[p[0] for p in PLANTED])
def test_each_planted_bug_is_found_by_its_oracle(tmp_path, gate, bug, oracle, where):
    site = where.rsplit("/", 1)[0]
    code, report = gate(tmp_path, bug, f"chaos/*/explore/{site}/*")
    found = {f["cell"].split("/explore/")[1]: f for f in report["verdict"]["explore"]["findings"]}
    assert code == 1 and where in found, sorted(found)
    assert found[where]["invariant"] == oracle, found[where]


def test_a_pinned_mcp_finding_fires_at_the_same_call(tmp_path, gate):
    """The pin names the MCP call (`target: mcp-stdio`, `tool:`), and pasted into the config as a scenario
    it reaches that call again: the fault fires there and the pinned oracle fails the same way."""
    code, report = gate(tmp_path / "explored", "crash_on_tool_error", "chaos/*/explore/refund_order-1/timeout")
    [finding] = report["verdict"]["explore"]["findings"]
    pin = yaml.safe_load(finding["pin"])
    [fault] = pin["chaos"]["scenarios"][0]["faults"]
    assert (fault["target"], fault["tool"], fault["on_calls"]) == ("mcp-stdio", "refund_order", [1]), fault
    pinned = AGENT / f".pinned-{os.getpid()}.yaml"  # beside the original: its paths are relative
    pinned.write_text(yaml.safe_dump({**yaml.safe_load(CONFIG.read_text()), **pin}))
    try:
        code, report = gate(tmp_path / "pinned", "crash_on_tool_error", config=pinned)
    finally:
        pinned.unlink()
    [cell] = [c for c in report["verdict"]["cells"] if c["scenario"] == pin["chaos"]["scenarios"][0]["name"]]
    faulted = [e for e in cell["runs"][0]["trace"] if e.get("fault")]
    assert [(e["target"], e["tool"], e["fault"], e["fault_status"]) for e in faulted] == \
           [("mcp-stdio", "refund_order", "timeout", "fired")], faulted
    breached = {b["id"] for b in cell["invariants"] if b["breached"]}
    assert code == 1 and pin["contract"]["invariants"][0]["id"] in breached, (cell["reason"], breached)


WOBBLE = [{"when": r"refund order (\d+)", "reads": [["lookup_order", {"order_id": "{1}"}]],
           "extra_read": ["lookup_order", {"order_id": "{1}"}],
           "writes": [["refund_order", {"order_id": "{1}", "reason": "damaged"}]],
           "answers": ["Your refund for order {1} has been issued.", "Done: order {1} is refunded.",
                       "I've refunded order {1} for you."]}]


@pytest.fixture(scope="module")
def wobbly():
    import wobbly_model

    with wobbly_model.serving(WOBBLE) as url:
        yield url


@pytest.mark.parametrize("seed", range(5))
def test_the_sound_twin_passes_under_a_model_that_never_answers_twice_alike(tmp_path, gate, wobbly, monkeypatch,
                                                                           seed):
    """Issue 50's nondeterministic model (tests/wobbly_model.py: paraphrases, an extra read, jitter), on the
    MCP write's faults where the planted bugs show; each baseline sampled twice, its variance learned."""
    monkeypatch.setenv("WOBBLE_RULES", json.dumps(WOBBLE))
    monkeypatch.setenv("WOBBLE_SEED", str(seed))
    config = CONFIG.with_name(f".wobbly-{os.getpid()}-{seed}.yaml")
    config.write_text(CONFIG.read_text().replace("upstream: sim}", f'upstream: "{wobbly}"}}'))
    try:
        code, report = gate(tmp_path, "", "chaos/*/explore/refund_order-1/error",
                            "chaos/*/explore/refund_order-1/timeout_after_write", config=config)
    finally:
        config.unlink()
    failing = [(c["id"], c["reason"], [i["message"] for i in c["invariants"] if i.get("breached")])
               for c in report["verdict"]["cells"] if c["status"] not in ("pass", "skipped")]
    assert code == 0 and not failing, failing
    assert explored(report) >= {"refund_order-1/error", "refund_order-1/timeout_after_write"}
    import wobbly_model

    owned = [w.split("{")[0][:20] for w in wobbly_model.FAILURES]  # its honest wordings, not the sim's
    said = [r["output"] for c in report["verdict"]["cells"] for r in c["runs"]]
    assert said and all(any(o.startswith(w) for w in owned) for o in said), said
