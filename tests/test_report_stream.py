"""report.json: compact rows for passing cells, `output.full`, and the streaming writer.

The streaming writer must produce the very bytes the one-string writer produces for the same
report (compacted or full), and a compact report must still feed `merge`, `compare` and the
renderers (issue 16).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gate.report import markdown, to_json, write_all
from gate.report.json_stream import compact_cell, compacted, dumps_streamed, write_json
from gate.report.model import Report

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sdk_agent" / "chaos-gate.yaml"
SAMPLE: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def sample_run(tmp_path_factory):
    """A real report with passing and failing cells: the SDK example with its double-write bug."""
    from gate.cli import main

    out = tmp_path_factory.mktemp("sample")
    before = os.environ.get("AGENT_BUGS")
    os.environ["AGENT_BUGS"] = "double_write"
    try:
        assert main(["run", "-c", str(EXAMPLE), "-o", str(out), "--quiet", "--full-report"]) == 1
    finally:
        os.environ.pop("AGENT_BUGS") if before is None else os.environ.update(AGENT_BUGS=before)
    SAMPLE[:] = [out / "report.json"]


def _sample() -> Report:
    return Report.model_validate_json(SAMPLE[0].read_text(encoding="utf-8"))


def _with_passing_and_failing() -> Report:
    report = _sample()
    statuses = {c.status for c in report.verdict.cells}
    assert {"pass", "fail"} <= statuses, statuses  # the sample exercises both kinds of row
    return report


def test_streamed_equals_one_string_full_and_compact():
    report = _with_passing_and_failing()
    for full in (True, False):
        assert dumps_streamed(report, full=full) == to_json(compacted(report, full))


def test_streamed_across_chunks_with_a_secret_and_an_emoji_equals_one_string_redacted(tmp_path):
    """Long lists are written a chunk at a time, as bytes, redacted by the Redactor's byte pattern:
    a report of several chunks, whose last cells carry a secret and an emoji, reads exactly as the
    one-string writer's redacted text."""
    from gate.config.secrets import Redactor
    from gate.report.json_stream import CHUNK

    report = _with_passing_and_failing()
    cells, timings = report.verdict.cells, report.timings.cells
    many = [c.model_copy(update={"id": f"{c.id}#{n}"}) for n in range(2 * CHUNK // len(cells) + 2) for c in cells]
    secret = "sk-live-4242424242424242"
    many[-1] = many[-1].model_copy(update={"input": f"refund 🙂 with {secret}", "note": f"key {secret}"})
    big = report.model_copy(update={"verdict": report.verdict.model_copy(update={"cells": many}),
                                     "timings": report.timings.model_copy(update={"cells": timings * (len(many) // len(timings))})})
    assert len(many) > 2 * CHUNK
    redactor = Redactor()
    redactor.add(secret, "SHOP_KEY")
    for full in (True, False):
        write_json(big, tmp_path / "report.json", redactor.redact, full=full)
        written = (tmp_path / "report.json").read_text(encoding="utf-8")
        assert written == redactor.redact(to_json(compacted(big, full)))
        assert secret not in written and "🙂" in written
        write_json(big, tmp_path / "plain.json", lambda text: text.replace(secret, "***"), full=full)  # any callable
        assert (tmp_path / "plain.json").read_text(encoding="utf-8") == to_json(compacted(big, full)).replace(secret, "***")


def test_streamed_equals_one_string_with_empty_lists():
    report = _sample()
    empty = report.model_copy(update={"verdict": report.verdict.model_copy(update={"cells": []}),
                                       "timings": report.timings.model_copy(update={"cells": []})})
    assert dumps_streamed(empty) == to_json(empty)


def test_lone_surrogate_falls_back_to_the_one_string_writer(tmp_path):
    report = _with_passing_and_failing()
    failing = next(c for c in report.verdict.cells if c.status == "fail")
    failing.runs[0].output = "bad \ud800 text"
    write_json(report, tmp_path / "r.json")
    text = (tmp_path / "r.json").read_text(encoding="utf-8")
    assert text == to_json(compacted(report)) and "\\ud800" in text


def test_redaction_applies_to_every_chunk(tmp_path):
    report = _with_passing_and_failing()
    secret = report.verdict.cells[-1].id
    write_json(report, tmp_path / "r.json", redact=lambda s: s.replace(secret, "***"))
    assert secret not in (tmp_path / "r.json").read_text(encoding="utf-8")


def test_passing_rows_are_compact_failing_and_flaky_rows_full():
    report = _with_passing_and_failing()
    doc = json.loads(dumps_streamed(report))
    for cell in doc["verdict"]["cells"]:
        runs = cell["runs"]
        if cell["status"] == "pass" and not cell["flaky"]:
            assert all(r["checks"] == [] and r["trace"] == [] and r["output"] is None for r in runs)
            assert cell["invariants"]  # the matrix and merge still read every invariant outcome
        else:
            original = next(c for c in report.verdict.cells if c.id == cell["id"])
            assert runs == json.loads(original.model_dump_json(by_alias=True))["runs"]
    flaky = report.verdict.cells[0].model_copy(update={"flaky": True})
    assert compact_cell(flaky) is flaky


def test_output_full_keeps_passing_detail(tmp_path):
    report = _with_passing_and_failing()

    class Names:
        json_, junit, markdown, html, full = "report.json", "junit.xml", "summary.md", "report.html", True

    write_all(report, tmp_path, Names)
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == to_json(report)


def test_compact_report_still_renders_and_compares(tmp_path):
    from gate.scoring.compare import compare
    from gate.report.html import render as render_html

    report = _with_passing_and_failing()
    compact = Report.model_validate_json(dumps_streamed(report))
    assert markdown.render(compact) == markdown.render(report)
    assert render_html(compact) == render_html(report)
    v = report.verdict

    def against(base):
        return compare(base.verdict, v.cells, v.stages, v.score, v.config_digest, 0.05).model_dump()

    assert against(compact) == against(report)


def test_compact_rows_are_the_default_and_full_report_opts_out():
    from gate.cli import _parser
    from gate.config.models import OutputConfig

    assert OutputConfig().full is False
    assert _parser().parse_args(["run", "--full-report"]).full_report is True
