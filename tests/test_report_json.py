"""report.json is written whatever strings the run produced: a lone surrogate (from a config
value or an agent's request) is spelled out instead of crashing after the verdict was decided."""

import json

from gate.report import to_json
from gate.report.model import (CellResult, Counts, Report, RunInfo, RunResult, Timings, TraceStep, VerdictPart)


def _report(cell: CellResult) -> Report:
    verdict = VerdictPart(verdict="pass", exit_code=0, score=100.0, min_score=80, reasons=[], seed=1, config="c.yaml",
                          config_digest="d", runs_per_cell=1, counts=Counts(cells=1, passed=1, failed=0, errors=0,
                                                                            flaky=0),
                          stages=[], invariants=[], outcome_tally={"ok": 1}, cells=[cell])
    return Report(verdict=verdict, timings=Timings(started_at="", finished_at="", wall_seconds=0,
                                                   agent_startup_seconds=[], cells=[]),
                  run=RunInfo(tool_version="t", concurrency=1))


def test_lone_surrogates_are_spelled_out_not_fatal():
    step = TraceStep(seq=1, target="orders", kind="tool", call=1, method="GET", path="/orders/\udc80")
    cell = CellResult(id="contract/a/baseline", stage="contract", input_id="a", scenario="baseline", seed=1,
                      input="caf\ud83d", status="pass", reason="ok", pass_rate=1.0, reproduce="r",
                      runs=[RunResult(run=0, reason="ok", output="ok \x1b[31mred\x1b[0m", trace=[step])])
    doc = json.loads(to_json(_report(cell)))
    [got] = doc["verdict"]["cells"]
    assert got["input"] == "caf\\ud83d"
    assert got["runs"][0]["trace"][0]["path"] == "/orders/\\udc80"
    assert got["runs"][0]["output"] == "ok \x1b[31mred\x1b[0m"  # JSON carries control characters itself


def test_ordinary_reports_are_unchanged_by_the_fallback():
    cell = CellResult(id="c", stage="contract", input_id="a", scenario="baseline", seed=1, input="café ☕",
                      status="pass", reason="ok", pass_rate=1.0, reproduce="r")
    report = _report(cell)
    assert to_json(report) == report.model_dump_json(indent=2, by_alias=True) + "\n"
