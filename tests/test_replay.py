"""Replay and reproduction: record, replay hermetically, export, LangSmith import, pins."""

import json
import os
import shutil
import sys

import pytest
import yaml

from conftest import EXAMPLE, ROOT, load_report
from httpkit import start_orders
from gate.cli import main

SDK = ROOT / "examples" / "sdk_agent"


def replay_config(tmp_path, sessions_glob: str, contract: str | None = None) -> str:
    doc = yaml.safe_load((SDK / "chaos-gate.yaml").read_text())
    doc["agent"].pop("reset")
    doc.pop("services", None)  # a replay needs no orders service: the recording answers
    doc["tools"][0]["upstream"] = "${ORDERS_URL:-http://127.0.0.1:9}"
    doc["agent"]["start"]["command"] = [sys.executable, str(SDK / "agent.py")]
    doc["contract"] = {"baseline": False, "invariants": [
        {"id": "completes", "type": "completes", "severity": "critical"}]}
    doc["replay"] = {"sessions": [sessions_glob]}
    if contract:
        doc["replay"]["contracts"] = {contract: [{"id": "mentions-refund", "type": "contains", "value": "refund"}]}
    path = tmp_path / "replay.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Sessions recorded against the live example (sim LLM + real orders service)."""
    out = tmp_path_factory.mktemp("rec")
    proc, url = start_orders(ROOT)
    env = {"ORDERS_URL": url, "AGENT_BUGS": "", "PROVIDER": "openai"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        code = main(["run", "-c", str(SDK / "chaos-gate.yaml"), "-o", str(out / "report"), "--quiet", "--full-report",
                     "--only", "contract/refund/baseline", "--only", "contract/refund/rate_limited",
                     "--record", str(out / "sessions")])
        assert code == 0
    finally:
        proc.terminate()
        proc.wait()  # the upstream is gone from here on
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return out


def test_recording_has_exchanges_and_no_secrets(recorded):
    session = json.loads((recorded / "sessions" / "contract__refund__baseline.json").read_text())
    assert session["input"].startswith("Please refund order 1234")
    assert [(e["target"], e["method"], e["path"]) for e in session["exchanges"]] == [
        ("openai", "POST", "/chat/completions"), ("orders", "POST", "/refunds"), ("openai", "POST", "/chat/completions")]
    assert session["exchanges"][0]["events"][-1] == "data: [DONE]\n\n"
    assert "sk-sim" not in json.dumps(session) and "authorization" not in json.dumps(session).lower()
    limited = json.loads((recorded / "sessions" / "contract__refund__rate_limited.json").read_text())
    assert limited["faults"] == ["rate_limit"] and limited["exchanges"][0]["status"] == 429


def test_replay_with_upstream_down_gives_same_output_and_never_forwards(recorded, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_BUGS", "")
    monkeypatch.setenv("ORDERS_URL", "http://127.0.0.1:9")  # nothing listens there
    config = replay_config(tmp_path, str(recorded / "sessions" / "*.json"))
    assert main(["run", "-c", config, "-o", str(tmp_path / "out"), "--quiet", "--full-report"]) == 0
    report = load_report(tmp_path / "out")
    originals = {c["id"]: c for c in load_report(recorded / "report")["verdict"]["cells"]}
    for cell in report["verdict"]["cells"]:
        assert cell["stage"] == "replay" and cell["status"] == "pass"
        original = originals[cell["id"].removeprefix("replay/")]
        assert cell["runs"][0]["output"] == original["runs"][0]["output"]
        assert all(not step["forwarded"] for step in cell["runs"][0]["trace"])
    limited = next(c for c in report["verdict"]["cells"] if c["id"].endswith("rate_limited"))
    assert [s["status"] for s in limited["runs"][0]["trace"]][:2] == [429, 200]  # the fault replays too


def test_agent_with_an_extra_tool_call_is_reported_with_a_diff(recorded, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_BUGS", "extra_lookup")
    monkeypatch.setenv("ORDERS_URL", "http://127.0.0.1:9")
    config = replay_config(tmp_path, str(recorded / "sessions" / "contract__refund__baseline.json"))
    assert main(["run", "-c", config, "-o", str(tmp_path / "out"), "--quiet", "--full-report"]) == 1
    cell = load_report(tmp_path / "out")["verdict"]["cells"][0]
    breach = next(b for b in cell["invariants"] if b["id"] == "replay-matches")
    assert breach["breached"] and breach["severity"] == "critical"
    assert "unexpected request orders GET /orders/1234" in breach["message"]
    assert "closest recorded request: POST /refunds" in breach["message"]


def test_session_contract_by_name(recorded, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_BUGS", "")
    session_dir = tmp_path / "s"
    session_dir.mkdir()
    doc = json.loads((recorded / "sessions" / "contract__refund__baseline.json").read_text())
    doc["contract"] = "refund-contract"
    (session_dir / "one.json").write_text(json.dumps(doc))
    config = replay_config(tmp_path, str(session_dir / "one.json"), contract="refund-contract")
    assert main(["run", "-c", config, "-o", str(tmp_path / "out"), "--quiet", "--full-report"]) == 0
    cell = load_report(tmp_path / "out")["verdict"]["cells"][0]
    assert "mentions-refund" in [i["id"] for i in cell["invariants"]]


@pytest.fixture
def support(tmp_path):
    work = tmp_path / "support"
    shutil.copytree(EXAMPLE, work)
    return work


def test_export_and_replay_score_weight(support, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_MODE", "fragile")
    config = str(support / "chaos-gate.yaml")
    assert main(["run", "-c", config, "-o", str(tmp_path / "r1"), "--quiet", "--full-report"]) == 1
    assert main(["replay", "export", "--from", str(tmp_path / "r1" / "report.json"), "-o", str(support / "sessions")]) == 0
    exported = sorted((support / "sessions").glob("*.json"))
    failing = [c for c in load_report(tmp_path / "r1")["verdict"]["cells"] if c["status"] == "fail"]
    assert len(exported) == len(failing)
    text = (support / "chaos-gate.yaml").read_text() + "replay: {sessions: ['sessions/*.json']}\n"
    (support / "chaos-gate.yaml").write_text(text)
    main(["run", "-c", config, "-o", str(tmp_path / "r2"), "--quiet", "--full-report"])
    v = load_report(tmp_path / "r2")["verdict"]
    stages = {s["stage"]: s for s in v["stages"]}
    assert stages["replay"]["weight"] == 0.1 and stages["replay"]["cells"] == len(exported)
    expected = sum(s["score"] * s["weight"] for s in stages.values()) / sum(s["weight"] for s in stages.values())
    assert abs(v["score"] - round(expected, 2)) < 0.011


def test_pinned_failing_cell_replays_to_the_same_verdict(support, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AGENT_MODE", "fragile")
    config = str(support / "chaos-gate.yaml")
    main(["run", "-c", config, "-o", str(tmp_path / "first"), "--quiet", "--full-report", "--seed", "21"])
    first = load_report(tmp_path / "first")
    target = next(c["id"] for c in first["verdict"]["cells"] if c["status"] == "fail")
    assert main(["pin", target, "-c", config, "--seed", "21"]) == 0
    runs = []
    for n in range(2):  # the config's own seed (7) differs: the pin brings its seed along
        main(["run", "-c", config, "-o", str(tmp_path / f"p{n}"), "--quiet", "--full-report"])
        runs.append(load_report(tmp_path / f"p{n}")["verdict"])
    assert json.dumps(runs[0]) == json.dumps(runs[1])
    pinned = runs[0]["cells"][0]
    assert pinned["id"] == f"{target}@seed21" and runs[0]["pins"][0]["status"] == "fail"
    original = next(c for c in first["verdict"]["cells"] if c["id"] == target)
    assert pinned["invariants"] == original["invariants"] and pinned["input"] == original["input"]
    md = (tmp_path / "p0" / "summary.md").read_text()
    assert "### Pinned regressions" in md and "still failing" in md


def test_pin_whose_config_changed_shape_is_reported(support, tmp_path, monkeypatch):
    config = str(support / "chaos-gate.yaml")
    main(["pin", "contract/refund/baseline", "-c", config])
    text = (support / "chaos-gate.yaml").read_text().replace("count: 12", "count: 5")
    (support / "chaos-gate.yaml").write_text(text)
    main(["run", "-c", config, "-o", str(tmp_path / "o"), "--quiet", "--full-report"])
    assert load_report(tmp_path / "o")["verdict"]["pins"][0]["status"] == "config_changed"


LANGSMITH = [
    {"id": "root1", "run_type": "chain", "name": "support", "inputs": {"input": "Please refund order 1234, it arrived damaged."},
     "outputs": {"output": "Your refund for order 1234 has been issued."}, "dotted_order": "1"},
    {"id": "llm1", "parent_run_id": "root1", "run_type": "llm", "dotted_order": "1.1",
     "outputs": {"generations": [[{"message": {"kwargs": {"content": "", "tool_calls": [
         {"id": "call_1", "name": "refund_order", "args": {"order_id": "1234", "reason": "damaged"}}]}}}]]}},
    {"id": "tool1", "parent_run_id": "root1", "run_type": "tool", "name": "orders", "dotted_order": "1.2",
     "outputs": {"output": {"refund_id": "rf_1", "status": "refunded"}}},
    {"id": "llm2", "parent_run_id": "root1", "run_type": "llm", "dotted_order": "1.3",
     "outputs": {"generations": [[{"text": "Your refund for order 1234 has been issued."}]]}},
]


def test_langsmith_import_replays_against_the_agent(tmp_path, monkeypatch, capsys):
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps(LANGSMITH))
    assert main(["replay", "import", "--langsmith", str(runs), "-o", str(tmp_path / "sessions")]) == 0
    session = json.loads((tmp_path / "sessions" / "langsmith-root1.json").read_text())
    assert session["match"] == "sequence" and len(session["exchanges"]) == 3
    monkeypatch.setenv("AGENT_BUGS", "")
    monkeypatch.setenv("ORDERS_URL", "http://127.0.0.1:9")
    # the imported LLM answers are JSON; this agent streams, so the replay re-serves them as streams
    config = replay_config(tmp_path, str(tmp_path / "sessions" / "*.json"))
    assert main(["run", "-c", config, "-o", str(tmp_path / "out"), "--quiet", "--full-report"]) == 0
    cell = load_report(tmp_path / "out")["verdict"]["cells"][0]
    assert cell["status"] == "pass" and cell["runs"][0]["output"] == "Your refund for order 1234 has been issued."
    steps = cell["runs"][0]["trace"]
    assert [s["target"] for s in steps] == ["openai", "orders", "openai"] and not any(s["forwarded"] for s in steps)


def test_langsmith_bad_traces_are_skipped_with_their_reason(tmp_path, capsys):
    broken = [dict(LANGSMITH[0]), {**LANGSMITH[1], "outputs": {}}]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(broken))
    assert main(["replay", "import", "--langsmith", str(path), "-o", str(tmp_path)]) == 2  # none imported
    err = capsys.readouterr().err
    assert "skipped trace root1: LLM run llm1" in err and "outputs in no known format" in err
    good = [{**r, "id": "g" + r["id"], **({"parent_run_id": "groot1"} if r.get("parent_run_id") else {})}
            for r in LANGSMITH]
    path.write_text(json.dumps(broken + good))
    assert main(["replay", "import", "--langsmith", str(path), "-o", str(tmp_path / "s")]) == 1  # partial
    assert [p.name for p in (tmp_path / "s").glob("*.json")] == ["langsmith-groot1.json"]
    path.write_text(json.dumps({"runs": [{"id": "x"}]}))
    assert main(["replay", "import", "--langsmith", str(path)]) == 2
    assert "found an object with keys id" in capsys.readouterr().err
