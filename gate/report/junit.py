"""JUnit XML from the Report, via junitparser: a suite per stage, a case per cell.

A breached invariant is a <failure> (type = invariant id) carrying the input and
an output excerpt; a harness error is an <error>; scores are suite properties.
Shaped for dorny/test-reporter, mikepenz/action-junit-report and
EnricoMi/publish-unit-test-result-action, which all read this subset.
"""

from __future__ import annotations

from pathlib import Path

from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite

from gate.report.model import CellResult, Report

EXCERPT = 1000


def _case(cell: CellResult, seconds: float) -> TestCase:
    case = TestCase(name=cell.id, classname=f"chaos-gate.{cell.stage}.{cell.input_id}", time=round(seconds, 3))
    results = []
    output = next((r.output for r in cell.runs if r.output is not None), None)
    for b in cell.breaches:
        failure = Failure(message=f"[{b.severity}] {b.id}: {b.message}", type_=b.id)
        failure.text = (f"invariant: {b.id} ({b.severity}), {b.passed_runs}/{b.total_runs} runs passed\n"
                        f"input: {cell.input[:EXCERPT]}\n"
                        f"output: {(output or '(none: ' + cell.reason + ')')[:EXCERPT]}\n"
                        f"reproduce: {cell.reproduce}")
        results.append(failure)
    if cell.error:
        error = Error(message=cell.error.splitlines()[0][:300], type_="harness_error")
        error.text = cell.error[:4000]
        results.append(error)
    case.result = results
    if output is not None:
        case.system_out = output[:EXCERPT]
    return case


def build(report: Report) -> JUnitXml:
    wall = {t.id: t.wall_ms / 1000 for t in report.timings.cells}
    scores = {s.stage: s for s in report.verdict.stages}
    xml = JUnitXml(name="chaos-gate")
    for stage, cells in report.cells_by_stage().items():
        suite = TestSuite(f"chaos-gate.{stage}")
        s = scores.get(stage)
        suite.add_property("score", "n/a" if s is None or s.score is None else f"{s.score:.2f}")
        suite.add_property("weight", "" if s is None else f"{s.weight:g}")
        suite.add_property("overall_score", "n/a" if report.verdict.score is None else f"{report.verdict.score:.2f}")
        suite.add_property("verdict", report.verdict.verdict)
        suite.add_property("seed", str(report.verdict.seed))
        for cell in cells:
            suite.add_testcase(_case(cell, wall.get(cell.id, 0.0)))
        suite.update_statistics()
        xml.add_testsuite(suite)
    xml.update_statistics()
    return xml


def write(report: Report, path: Path, redact=lambda s: s) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    build(report).write(str(path), pretty=True)
    path.write_text(redact(path.read_text(encoding="utf-8")), encoding="utf-8")
