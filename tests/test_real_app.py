"""docs/real-app.md's walkthrough, run: a published-style app (a streaming /chat endpoint, an input
guardrail agent, two function tools on the OpenAI Agents SDK) under its finished config.

The sound app passes the whole run — its baseline through the guardrail, the explored faults on
the model and on both tools — with every cell judged on the assistant's text read out of the SSE
events. With APP_BUG=error_event (every failure becomes an error event inside the 200, as in the
published demo the issue names) the same config fails on `stream_error`.
"""

from __future__ import annotations

import pytest

from conftest import ROOT, load_report

pytest.importorskip("agents")
pytest.importorskip("uvicorn")

CONFIG = ROOT / "examples" / "real_app" / "chaos-gate.yaml"


def run(out, *extra):
    from gate.cli import main

    code = main(["run", "-c", str(CONFIG), "-o", str(out), "--quiet", "--full-report", *extra])
    return code, load_report(out)["verdict"]


def test_the_sound_app_passes_everything_it_was_tested_on(tmp_path, monkeypatch):
    monkeypatch.setenv("APP_BUG", "")
    code, verdict = run(tmp_path / "sound")
    assert code == 0, [c["id"] for c in verdict["cells"] if c["status"] == "fail"]
    assert verdict["explore"]["run"] >= 10  # faults were explored, not just baselines
    baseline = next(c for c in verdict["cells"] if c["scenario"] == "baseline" and c["input_id"] == "status")
    assert baseline["runs"][0]["output"].startswith("Your order 1234:") and "shipped" in baseline["runs"][0]["output"]
    guard = [s for s in baseline["runs"][0]["trace"] if s["kind"] == "llm" and s["sim_fallback"]]
    assert guard == []  # the guardrail's rule answered it: no fallback, no warning
    assert not [w for w in verdict["warnings"] if "sim fell back" in w or "reached nothing" in w]
    assert {"order_status"} <= set(baseline["reached"]["tools"])


def test_an_error_event_inside_the_200_is_caught(tmp_path, monkeypatch):
    monkeypatch.setenv("APP_BUG", "error_event")
    code, verdict = run(tmp_path / "bug", "--only", "chaos/status/explore/llm-openai-1/empty")
    (cell,) = [c for c in verdict["cells"] if c["status"] != "skipped"]
    assert code == 1 and cell["status"] == "fail" and cell["reason"] == "stream_error"
    assert "An error occurred" in cell["runs"][0]["detail"]
    assert "chat failed" in cell["log_tail"]  # the app logged why, and the failing cell shows it
