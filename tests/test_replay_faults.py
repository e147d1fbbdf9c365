"""A replayed failure fails the same way, for every fault kind in the registry.

One gate run attacks the SDK example agent (planted bugs on) with one scenario per
(fault kind, side): LLM kinds on the sim LLM, tool kinds on the orders service. The
failing cells are exported with `chaos-gate replay export`, the orders service is
stopped, and the sessions are replayed through the replay stage against the same
agent. Each kind must breach its planted invariant in the original run and again in
the replay, with every critical breach kept and no request missing from the
recording. The kinds are read from `FAULTS`, so a new kind without a scenario here
fails the test that names it. One module-wide run keeps the whole check near a minute.
"""

from __future__ import annotations

import base64
import json
import sys

import pytest
import yaml

from conftest import ROOT, load_report
from httpkit import start_orders
from gate.cli import main
from gate.faults import FAULTS

SDK = ROOT / "examples" / "sdk_agent"
BUGS = "retry_storm,double_write,crash_on_bad_args,accept_truncated,obey_injection,no_tool_timeout,trust_tool_json"
DEADLINE = 4  # the cell deadline (s); holds meant to outlast the agent are longer
HOLD = 8
FIRST, SECOND = {"on_calls": [1]}, {"on_calls": [2]}  # the tool-call turn, the final-answer turn

# (kind, side) -> (fault parameters, the invariant the planted agent breaches)
SPECS: dict[tuple[str, str], tuple[dict, str]] = {
    ("rate_limit", "llm"): ({**FIRST, "retry_after": 1}, "respects-retry-after"),  # retry_storm ignores it
    ("server_error", "llm"): ({}, "llm-budget"),  # retry_storm: 20 attempts
    ("overloaded", "llm"): ({}, "llm-budget"),
    ("auth_error", "llm"): ({}, "llm-budget"),
    ("context_length", "llm"): ({}, "llm-budget"),  # retry_storm retries a prompt no retry can shorten
    ("reset", "llm"): ({}, "llm-budget"),
    ("malformed_sse", "llm"): ({}, "llm-budget"),
    ("malformed_json", "llm"): ({}, "completes"),  # the cut body escapes the SDK as JSONDecodeError
    ("stream_error", "llm"): ({}, "llm-budget"),
    ("garbage", "llm"): ({}, "llm-budget"),
    ("timeout", "llm"): ({**FIRST, "seconds": HOLD}, "completes"),  # the SDK waits 20 s: past the deadline
    ("stall", "llm"): ({**FIRST, "after_events": 2, "seconds": HOLD}, "completes"),
    ("latency", "llm"): ({**FIRST, "ms": 2500}, "fast-enough"),
    ("truncate_stream", "llm"): ({**SECOND, "after_events": 3}, "finished-sentence"),  # accept_truncated
    ("cut_content", "llm"): (SECOND, "finished-sentence"),
    ("wrong_shape", "llm"): (SECOND, "finished-sentence"),
    ("drift", "llm"): (SECOND, "finished-sentence"),
    ("empty", "llm"): (SECOND, "finished-sentence"),
    ("bad_tool_args", "llm"): (FIRST, "completes"),  # crash_on_bad_args
    ("duplicate_tool_fragment", "llm"): (FIRST, "completes"),
    ("reorder_tool_fragments", "llm"): (FIRST, "completes"),
    ("error", "tool"): (FIRST, "completes"),  # trust_tool_json: KeyError on any non-refund answer
    ("not_found", "tool"): (FIRST, "completes"),
    ("rate_limit", "tool"): (FIRST, "completes"),
    ("empty", "tool"): (FIRST, "completes"),
    ("malformed", "tool"): (FIRST, "completes"),
    ("binary", "tool"): (FIRST, "completes"),
    ("garbage", "tool"): (FIRST, "completes"),
    ("schema_drift", "tool"): (FIRST, "completes"),
    ("reset", "tool"): ({}, "completes"),  # both attempts dropped: the error answer is parsed
    ("timeout", "tool"): ({**FIRST, "seconds": HOLD}, "completes"),  # no_tool_timeout waits past the deadline
    ("timeout_after_write", "tool"): ({**FIRST, "seconds": 1}, "refund-once"),  # double_write retries
    ("hang_after_write", "tool"): ({**FIRST, "seconds": HOLD}, "completes"),  # no_tool_timeout waits it out
    ("partial", "tool"): (FIRST, "refund-once"),  # the cut body is retried without a key
    ("latency", "tool"): ({**FIRST, "ms": 2500}, "fast-enough"),
    ("inject", "tool"): ({}, "no-injected-reply"),  # obey_injection
}
# Kinds no planted agent breaches anything with; kept short on purpose.
SKIP = {
    ("huge", "tool"): "the padded answer still carries the refund: no planted bug reacts to size",
    ("wrong_tool_args", "llm"): "no planted bug of the SDK agent trusts its arguments' types and its orders service "
                                "takes any: the payouts agent's trusts_args does (tests/test_lost_answers.py)",
    ("rpc_error", "tool"): "MCP only, and the SDK agent's orders service is plain HTTP (tests/test_mcp_sessions.py)",
    ("exit_code", "tool"): "`kind: command` tools only; the SDK agent runs none (tests/test_instrument_commands.py)",
    ("hang", "tool"): "`kind: command` tools only; the SDK agent runs none (tests/test_instrument_commands.py)",
}
PAIRS = sorted((kind, side) for kind, cls in FAULTS.items() for side in sorted(cls.applies_to))
INVARIANTS = [
    {"id": "completes", "type": "completes", "severity": "critical"},
    {"id": "finished-sentence", "type": "regex", "pattern": "[.!?]$", "severity": "high"},
    {"id": "no-injected-reply", "type": "excludes", "values": ["INJECTION-OBEYED"], "severity": "critical"},
    {"id": "llm-budget", "type": "llm_calls_max", "max": 8, "severity": "high"},
    {"id": "refund-once", "type": "side_effect_once", "tool": "orders", "severity": "critical"},
    {"id": "respects-retry-after", "type": "honors_retry_after", "severity": "medium"},
    {"id": "fast-enough", "type": "latency_max", "ms": 2000, "severity": "medium"},
]


def scenario(kind: str, side: str) -> dict:
    params, _ = SPECS[(kind, side)]
    return {"name": f"{side}_{kind}", "faults": [{"kind": kind, "target": "openai" if side == "llm" else "orders",
                                                  **params}]}


def config(orders_url: str, scenarios: list[dict], sessions: str | None = None) -> dict:
    sim = yaml.safe_load((SDK / "chaos-gate.yaml").read_text())["sim"]
    return {
        "version": 1, "seed": 11, "concurrency": 4, "sim": sim,  # cells mostly wait on holds and deadlines
        "agent": {"start": {"command": [sys.executable, str(SDK / "agent.py")],
                            "env": {"PROVIDER": "openai", "AGENT_BUGS": BUGS, "OPENAI_API_KEY": "sk-sim"},
                            "ready": {"url": "{{url}}/health", "timeout": 20}},
                  "invoke": {"http": {"url": "{{url}}/chat", "body": {"message": "{{input}}"}, "output": "$.reply"}},
                  "timeout": DEADLINE},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "tools": [{"name": "orders", "env": "ORDERS_URL", "upstream": orders_url}],
        "inputs": [{"id": "refund", "text": "Please refund order 1234, it arrived damaged."}],
        "mutation": {"enabled": False},
        "contract": {"baseline": False, "invariants": INVARIANTS, "scenarios": scenarios},
        "gate": {"min_score": 0, "allow_vacuous": True},
        "shrink": {"enabled": False},  # every cell fails on purpose; shrinking them is tests/test_shrink.py's
        **({"replay": {"sessions": [sessions]}} if sessions else {}),
    }


def breached(cell: dict) -> set[str]:
    return {i["id"] for i in cell["invariants"] if i.get("breached")}


def critical(cell: dict) -> set[str]:
    return {i["id"] for i in cell["invariants"] if i.get("breached") and i["severity"] == "critical"}


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """(original cells, replayed cells, recorded dir), keyed by scenario name."""
    out = tmp_path_factory.mktemp("replay_faults")
    proc, url = start_orders(ROOT)
    try:
        live = out / "live.yaml"
        live.write_text(yaml.safe_dump(config(url, [scenario(k, s) for k, s in PAIRS if (k, s) in SPECS])))
        code = main(["run", "-c", str(live), "-o", str(out / "r1"), "--quiet", "--record", str(out / "recorded")])
        assert code in (0, 1), "the recording run ended in a harness error"
        assert main(["replay", "export", "--from", str(out / "r1" / "report.json"), "-o", str(out / "sessions")]) == 0
    finally:
        proc.terminate()
        proc.wait()  # no upstream from here on
    again = out / "replay.yaml"
    again.write_text(yaml.safe_dump(config("http://127.0.0.1:9", [], str(out / "sessions" / "*.json"))))
    assert main(["run", "-c", str(again), "-o", str(out / "r2"), "--quiet"]) in (0, 1)
    name = lambda cell: cell["id"].rsplit("/", 1)[-1]  # noqa: E731
    original = {name(c): c for c in load_report(out / "r1")["verdict"]["cells"]}
    replay = {name(c): c for c in load_report(out / "r2")["verdict"]["cells"]}
    return original, replay, out / "recorded"


def test_every_fault_kind_has_a_replay_scenario_or_a_stated_reason():
    missing = [p for p in PAIRS if p not in SPECS and p not in SKIP]
    assert not missing, f"new fault kind(s) without a replay scenario here: {missing}"
    assert len(SKIP) <= 5 and all(len(reason) > 20 for reason in SKIP.values())
    assert not set(SPECS) - set(PAIRS), "a scenario here names a kind that is no longer registered"


@pytest.mark.parametrize("kind, side", [p for p in PAIRS if p in SPECS], ids=lambda v: str(v))
def test_replayed_failure_breaches_the_same_invariant(replayed, kind, side):
    original, replay, _ = replayed
    name, expected = f"{side}_{kind}", SPECS[(kind, side)][1]
    before = original[name]
    assert expected in breached(before), f"{name}: the live run did not breach {expected}: {breached(before)}"
    assert name in replay, f"{name} failed but was not exported"
    after = replay[name]
    steps = [(s["target"], s["status"], s["fault"], s["note"]) for s in after["runs"][0]["trace"]]
    assert "replay-matches" not in breached(after), f"{name}: the agent left the recording: {steps}"
    assert expected in breached(after), f"{name}: replay breached {breached(after)}, not {expected}: {steps}"
    assert critical(after) - {"replay-matches"} == critical(before)
    assert not any(s["forwarded"] for s in after["runs"][0]["trace"])


def test_recorded_binary_body_is_base64(replayed):
    _, _, recorded = replayed
    session = json.loads((recorded / "contract__refund__tool_binary.json").read_text())
    binary = next(e for e in session["exchanges"] if e["fault"] == "binary")
    assert binary["encoding"] == "base64" and binary["content_type"] == "application/octet-stream"
    assert len(base64.b64decode(binary["body"])) == 2048  # the fault's default size, no replacement characters


def test_holds_are_recorded_with_their_duration_and_end(replayed):
    _, _, recorded = replayed
    timeout = json.loads((recorded / "contract__refund__tool_timeout.json").read_text())
    held = next(e for e in timeout["exchanges"] if e["fault"] == "timeout")
    assert held["status"] is None and held["dropped"] and held["hold_until"] == "agent"
    assert 0.5 * DEADLINE * 1000 <= held["hold_ms"] <= HOLD * 1000
    after_write = json.loads((recorded / "contract__refund__tool_timeout_after_write.json").read_text())
    first = after_write["exchanges"][1]
    assert first["fault"] == "timeout_after_write" and first["forwarded"] and first["hold_until"] == "time"
    assert 900 <= first["hold_ms"] <= 3000
    stall = json.loads((recorded / "contract__refund__llm_stall.json").read_text())
    cut = stall["exchanges"][0]
    assert cut["status"] == 200 and len(cut["events"]) == 2 and cut["dropped"] and cut["hold_ms"]
    limited = json.loads((recorded / "contract__refund__llm_rate_limit.json").read_text())
    first = limited["exchanges"][0]
    assert first["retry_after"] == 1 and first["headers"]["retry-after"] == "1"
