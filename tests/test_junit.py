"""JUnit that every reader counts right, whatever bytes the agent sends.

The file must validate against Jenkins xunit's junit-10.xsd (shipped beside this
test; every testcase's `file` and `line` aside), carry one <failure> per failing testcase and counts equal to report.json's;
characters XML cannot carry are spelled out, never crash the writer. The end-to-end
tests run a real agent process that answers with ANSI codes, NUL and invalid UTF-8.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from junitparser import Error, Failure, JUnitXml, Skipped

from conftest import AGENTS, load_report, write_config
from gate.report import junit, write_all
from gate.report.model import (CellResult, CellTiming, Counts, InvariantOutcome, InvariantSummary, Report, RunInfo,
                               RunResult, StageScore, Timings, VerdictPart)

XSD = Path(__file__).parent / "junit-10.xsd"
HOSTILE = "\x1b[31mred\x1b[0m nul\x00 vt\x0b \ud83d ]]> <b>&amp; \ufffe end"


def _inv(id_, severity="critical", breached=True, judged=True, hostile=HOSTILE):
    return InvariantOutcome(id=id_, severity=severity, passed_runs=0 if breached else 1, total_runs=1 if judged else 0,
                            pass_rate=0.0 if breached else 1.0, breached=breached,
                            message=f"{id_} broke on {hostile}" if breached else "ok",
                            not_judged_runs=0 if judged else 1)


def _cell(id_, stage, status, invariants=(), error=None, output="fine", hostile=HOSTILE):
    return CellResult(id=id_, stage=stage, input_id="in", scenario="baseline", seed=1, input=f"input {hostile}",
                      status=status, reason="ok" if status == "pass" else "contract:x", pass_rate=1.0,
                      invariants=list(invariants), error=error, reproduce=f"chaos-gate run --only {id_}",
                      runs=[RunResult(run=0, reason="ok", output=output)])


def rich_report(hostile: str = HOSTILE) -> Report:
    """Two stages; pass, fail (several breaches), not-judged and error cells; hostile text everywhere."""
    h = {"hostile": hostile}
    cells = [
        _cell("contract/in/baseline", "contract", "pass",
              [_inv("a", breached=False), _inv("b", judged=False, breached=False)], **h),
        _cell("contract/in/rate_limited", "contract", "fail",
              [_inv("low-one", "low", **h), _inv("crit", **h), _inv("ok", breached=False)], output=hostile, **h),
        _cell(f"contract/{hostile}/x", "contract", "fail", [_inv("crit", **h)], **h),
        _cell("chaos/in/outage", "chaos", "error", error=f"agent would not start\nlog: {hostile}", output=None, **h),
        _cell("chaos/in/slow", "chaos", "pass", [_inv("a", breached=False)], **h),
    ]
    stages = [StageScore(stage=s, score=50.0, weight=0.35, cells=sum(c.stage == s for c in cells),
                         passed=sum(c.stage == s and c.status == "pass" for c in cells),
                         failed=sum(c.stage == s and c.status == "fail" for c in cells),
                         errors=sum(c.stage == s and c.status == "error" for c in cells), flaky=0)
              for s in ("contract", "chaos")]
    part = VerdictPart(verdict="fail", exit_code=1, score=50.0, min_score=80, reasons=["x"], seed=7, config="c.yaml",
                       config_digest="d", runs_per_cell=1,
                       counts=Counts(cells=5, passed=2, failed=2, errors=1, flaky=0), stages=stages,
                       invariants=[InvariantSummary(id="crit", severity="critical", checked=2, breached=2)],
                       outcome_tally={}, cells=cells)
    timings = Timings(started_at="", finished_at="", wall_seconds=1.0, agent_startup_seconds=[],
                      cells=[CellTiming(id=c.id, latency_ms=[1.0], wall_ms=1234.56789 + n * 0.1)
                             for n, c in enumerate(cells)])
    return Report(verdict=part, timings=timings, run=RunInfo(tool_version="t", concurrency=1))


def assert_valid_and_counted(path: Path, report: dict) -> ET.Element:
    """Validates against the XSD (the annotated family apart from each testcase's `file` and `line`,
    which pytest's xunit1 writes too and junit-10.xsd lacks; the strict xunit2 family, written outside
    GitHub Actions, as it is); root (annotated), suite and case counts equal report.json's."""
    root = ET.parse(path).getroot()
    counts = report["verdict"]["counts"]
    if not root.attrib:  # xunit2 (tests/test_junit_family.py): no attributes on the root, none to set aside
        xmlschema.XMLSchema(str(XSD)).validate(ET.tostring(root, encoding="unicode"))
        assert not any(case.get("file") for case in root.iter("testcase"))
        assert sum(int(s.get("tests")) for s in root.iter("testsuite")) == counts["cells"]
        return _suites_counted(root, report)
    for case in root.iter("testcase"):
        assert case.get("file") and int(case.get("line")) >= 1, case.attrib
    bare = ET.fromstring(ET.tostring(root))
    for case in bare.iter("testcase"):
        case.attrib.pop("file"), case.attrib.pop("line")
    xmlschema.XMLSchema(str(XSD)).validate(ET.tostring(bare, encoding="unicode"))
    assert "skipped" not in root.attrib
    assert (int(root.get("tests")), int(root.get("failures")), int(root.get("errors"))) == (
        counts["cells"], counts["failed"], counts["errors"])
    return _suites_counted(root, report)


def _suites_counted(root: ET.Element, report: dict) -> ET.Element:
    for suite in root.iter("testsuite"):
        stage = next(s for s in report["verdict"]["stages"] if f"chaos-gate.{s['stage']}" == suite.get("name"))
        assert (int(suite.get("tests")), int(suite.get("failures")), int(suite.get("errors"))) == (
            stage["cells"], stage["failed"], stage["errors"])
        assert int(suite.get("tests")) == len(suite.findall("testcase"))
    status = {c["id"]: c["status"] for c in report["verdict"]["cells"]}
    for case in root.iter("testcase"):
        kinds = [e.tag for e in case if e.tag in ("failure", "error", "skipped")]
        assert len(kinds) <= 1, f"{case.get('name')} is {kinds}"
        expected = {"pass": [], "fail": ["failure"], "error": ["error"]}[status[_unescape(case.get("name"))]]
        assert kinds == expected
    return root


def _unescape(text: str) -> str:
    return text.encode("ascii", "backslashreplace").decode("unicode_escape") if "\\u" in text else text


def test_rich_report_validates_and_counts(tmp_path):
    report = rich_report()
    path = tmp_path / "junit.xml"
    junit.write(report, path)
    root = assert_valid_and_counted(path, report.model_dump(by_alias=True))
    for suite in root.iter("testsuite"):
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props["score"] == "50.00" and props["overall_score"] == "50.00" and props["seed"] == "7"
        assert len(suite.get("time").split(".")[1]) == 3  # SUREFIRE_TIME allows three decimals at most


def test_one_failure_folds_every_breach_worst_first(tmp_path):
    path = tmp_path / "junit.xml"
    junit.write(rich_report(), path)
    xml = JUnitXml.fromfile(str(path))
    case = next(c for s in xml for c in s if c.name == "contract/in/rate_limited")
    (failure,) = case.result
    assert isinstance(failure, Failure) and failure.type == "crit"
    assert failure.message.startswith("[critical] crit: ") and "[low] low-one: " in failure.message
    assert "ok:" not in failure.message  # a held invariant is not a breach
    assert "invariant: crit (critical)" in failure.text and "invariant: low-one (low)" in failure.text
    assert "reproduce: chaos-gate run --only contract/in/rate_limited" in failure.text
    errors = [r for s in xml for c in s for r in c.result if isinstance(r, Error)]
    assert len(errors) == 1 and errors[0].message == "agent would not start"
    assert not [r for s in xml for c in s for r in c.result if isinstance(r, Skipped)]


def test_xml_illegal_characters_are_spelled_out(tmp_path):
    path = tmp_path / "junit.xml"
    junit.write(rich_report(), path)
    text = path.read_text(encoding="utf-8")
    assert "\x1b" not in text and "\x00" not in text and "\x0b" not in text
    for shown in ("\\u001b[31mred\\u001b[0m", "nul\\u0000", "vt\\u000b", "\\ud83d", "\\ufffe"):
        assert shown in text
    root = ET.parse(path).getroot()  # well-formed: ]]>, <b> and &amp; survive as text
    out = next(c for c in root.iter("testcase") if c.get("name") == "contract/in/rate_limited").find("system-out")
    assert "]]> <b>&amp; " in out.text
    assert any("\\u001b" in c.get("name") for c in root.iter("testcase"))


def test_redaction_applies_before_escaping(tmp_path):
    report = rich_report()
    report.verdict.cells[1].runs[0].output = "token=s3cr3t&value<>"
    path = tmp_path / "junit.xml"
    junit.write(report, path, redact=lambda s: s.replace("s3cr3t&value<>", "***"))
    assert "s3cr3t" not in path.read_text() and "token=***" in path.read_text()


# --- with a real agent process ------------------------------------------------------------------


def _config(tmp_path: Path, mode: str, *texts: str, min_score: int = 0) -> Path:
    agent = AGENTS / "bytes_agent.py"
    if mode == "http":
        agent_block = (f"  start:\n    command: [{json.dumps(sys.executable)}, {json.dumps(str(agent))}, --http]\n"
                       f"    ready: {{url: \"{{{{url}}}}/health\", timeout: 10}}\n"
                       f"  invoke:\n    http: {{url: \"{{{{url}}}}/chat\", body: {{input: \"{{{{input}}}}\"}}, "
                       f"output: $.reply}}\n")
    else:
        agent_block = f"  invoke:\n    command: {{command: [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]}}\n"
    inputs = "\n".join(f"  - {{id: i{n}, text: {json.dumps(t)}}}" for n, t in enumerate(texts))
    body = (f"agent:\n{agent_block}  timeout: 5\ninputs:\n{inputs}\nmutation: {{enabled: false}}\n"
            f"gate: {{min_score: {min_score}}}\n"
            "contract:\n  invariants:\n    - {id: no-pwned, type: excludes, values: [PWNED], severity: critical}\n")
    return write_config(tmp_path, body, f"{mode}.yaml")


def _run_cli(tmp_path: Path, config: Path) -> tuple[int, dict, Path]:
    from gate.cli import main

    out = tmp_path / f"out-{config.stem}"
    code = main(["run", "-c", str(config), "-o", str(out), "--quiet", "--full-report"])
    return code, load_report(out), out


@pytest.mark.parametrize("mode", ["http", "command"])
def test_ansi_and_nul_answers_pass_and_publish(tmp_path, mode):
    code, report, out = _run_cli(tmp_path, _config(tmp_path, mode, "say ANSI", "say NUL", "plain"))
    assert report["verdict"]["verdict"] == "pass" and code == report["verdict"]["exit_code"] == 0
    outputs = {c["input"]: c["runs"][0]["output"] for c in report["verdict"]["cells"]}
    assert outputs["say ANSI"] == "\x1b[31mred alert\x1b[0m done"  # kept exactly in report.json
    assert outputs["say NUL"].startswith("nul\x00 bell\x07")
    assert_valid_and_counted(out / "junit.xml", report)
    assert "\\u001b[31mred alert" in (out / "junit.xml").read_text()
    assert (out / "summary.md").exists()


@pytest.mark.parametrize("mode", ["http", "command"])
def test_invalid_utf8_is_an_explicit_outcome(tmp_path, mode):
    code, report, out = _run_cli(tmp_path, _config(tmp_path, mode, "BADUTF8", "SURROGATE", "ok", min_score=90))
    cells = {c["input"]: c for c in report["verdict"]["cells"]}
    for text in ("BADUTF8", "SURROGATE"):
        run = cells[text]["runs"][0]
        assert run["reason"] == "bad_output_encoding" and run["output"] is None, run
        assert cells[text]["status"] == "fail"
    assert "invalid UTF-8 at byte" in cells["BADUTF8"]["runs"][0]["detail"]
    assert report["verdict"]["outcome_tally"].get("bad_output_encoding") == 2
    assert cells["ok"]["status"] == "pass"
    assert report["verdict"]["verdict"] == "fail" and code == report["verdict"]["exit_code"] == 1
    assert_valid_and_counted(out / "junit.xml", report)


def test_write_all_survives_hostile_characters(tmp_path):
    # a lone surrogate never reaches a Report from an agent (bad_output_encoding), and JSON cannot carry one
    report = rich_report(HOSTILE.replace("\ud83d", ""))
    paths = write_all(report, tmp_path, type("Names", (), {"json_": "r.json", "junit": "j.xml", "markdown": "s.md"}))
    assert_valid_and_counted(paths["junit"], report.model_dump(by_alias=True))
