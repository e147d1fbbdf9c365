"""junit.xml through its readers' own logic, on a real failing run of the bundled example.

junitparser (the library EnricoMi/publish-unit-test-result-action parses with) reads it; then the
action's `process_junit_xml_elems` / `get_case_annotation` logic is re-expressed as assertions:
suite counts summed over <testsuite> elements, per case `file` / `line` / classname / result (the
most severe of error, failure, success, skipped), and the annotation it would post — path =
`file` or else classname, start line = `line` or else 0. Every failing case must annotate the
config file at its worst breached invariant's line, never a path called `refund` or line 0.
mikepenz/action-junit-report reads the same two attributes."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from conftest import EXAMPLE, ROOT, load_report

SEVERITY = ["error", "failure", "success", "skipped", "disabled"]


@pytest.fixture(scope="module")
def fragile_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("junit")
    config = os.path.relpath(EXAMPLE / "chaos-gate.yaml", ROOT)  # as a user types it, from the repository root
    # the annotators' family (the default under GitHub Actions; this process may not be there)
    proc = subprocess.run([sys.executable, "-m", "gate", "run", "-c", config, "-o", str(out), "--quiet",
                           "--junit-family", "annotated"], cwd=ROOT,
                          env={**os.environ, "AGENT_MODE": "fragile"}, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 1, proc.stderr
    return config, out


def _result(case: TestCase) -> str:
    """The most severe result of a case, as EnricoMi's get_results/get_result pick it."""
    tags = {{Error: "error", Failure: "failure", Skipped: "skipped"}[type(r)] for r in case.result
            if type(r) in (Error, Failure, Skipped)}
    return next((s for s in SEVERITY if s in tags), "success")


def parsed(path):
    """EnricoMi's ParsedUnitTestResults, re-expressed: suite totals and one record per case."""
    xml = JUnitXml.fromfile(str(path))
    suites = list(xml) if xml._tag == "testsuites" else [xml]
    totals = {key: sum(getattr(s, key) or 0 for s in suites if not math.isnan(getattr(s, key) or 0))
              for key in ("tests", "skipped", "failures", "errors")}
    cases = []
    for suite in suites:
        assert isinstance(suite, TestSuite) and not list(suite.iterchildren(TestSuite))
        for case in suite:
            line = case._elem.get("line")
            cases.append({"test_file": case._elem.get("file"), "line": int(line) if line else None,
                          "class_name": case.classname, "test_name": case.name, "result": _result(case),
                          "message": next((r.message for r in case.result if r.message), None)})
    return totals, cases


def annotation(case: dict) -> dict:
    """What EnricoMi posts for a failing case (get_case_annotation): path and line."""
    return {"path": case["test_file"] or case["class_name"] or "Unknown test", "start_line": case["line"] or 0,
            "title": f"{case['test_name']} ({case['class_name']}) failed"}


def config_line(config: str, invariant: str) -> int:
    text = (ROOT / config).read_text().splitlines()
    return next(n for n, line in enumerate(text, 1) if f"id: {invariant}," in line)


def test_counts_match_report_json(fragile_run):
    config, out = fragile_run
    totals, cases = parsed(out / "junit.xml")
    counts = load_report(out)["verdict"]["counts"]
    assert totals == {"tests": counts["cells"], "skipped": counts["skipped"], "failures": counts["failed"],
                      "errors": counts["errors"]}
    assert sum(c["result"] == "failure" for c in cases) == counts["failed"] and len(cases) == counts["cells"]


def test_failures_annotate_the_config_at_the_breached_invariant(fragile_run):
    config, out = fragile_run
    _, cases = parsed(out / "junit.xml")
    report = load_report(out)["verdict"]
    severity = {"critical": 0, "high": 1, "medium": 2, "low": 3}
    by_id = {c["id"]: c for c in report["cells"]}
    failing = [c for c in cases if c["result"] == "failure"]
    assert failing
    for case in failing:
        note = annotation(case)
        assert note["path"] == config and (ROOT / note["path"]).is_file()
        worst = min((i for i in by_id[case["test_name"]]["invariants"] if i["breached"]),
                    key=lambda i: severity[i["severity"]])
        assert note["start_line"] == config_line(config, worst["id"]) >= 1, (case["test_name"], worst["id"])
    assert all(c["test_file"] == config and c["line"] >= 1 for c in cases)  # passing cases too (mikepenz lists them)
