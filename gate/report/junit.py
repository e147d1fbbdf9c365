"""JUnit XML from the Report: a suite per stage, a testcase per cell.

Each testcase is exactly one of pass, failure or error, taken from the cell's
status, so every reader's counts (dorny/test-reporter, mikepenz/action-junit-report,
EnricoMi/publish-unit-test-result-action, Jenkins xunit) equal report.json's: a
failing cell has one <failure> whose message and text fold all its breaches, a
harness error one <error>. Scores are suite properties. Every testcase carries `file`
(the config, as the run named it: relative to the repository root in the Action) and
`line` (the config line of its worst breached invariant, else of its first invariant
declared there), the attributes pytest writes and mikepenz/action-junit-report and
EnricoMi/publish-unit-test-result-action annotate with. Apart from those two attributes
the file validates against Jenkins xunit's junit-10.xsd, which allows no `skipped` on
<testsuites> and at most three decimals in `time`.

Everything from the agent or the config is untrusted text: characters XML 1.0
cannot carry (NUL, ANSI escapes and other C0 controls, lone surrogates, U+FFFE/F)
and the invisible C1 controls are written as visible `\\u001b`-style text, so the
file is always well-formed. The XML is built with the standard library because
the gate sets every attribute and count itself.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from gate.contracts.base import SEVERITY_RANK
from gate.report.escape import spell_out
from gate.report.model import CellResult, Report, StageScore

EXCERPT = 1000
MESSAGE = 1000
# XML 1.0 cannot carry what escape.spell_out spells out (C0 controls, lone surrogates,
# non-characters; DEL and C1 are legal but invisible): one rule for every report surface.
xml_safe = spell_out


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


class _Writer:
    """Builds the tree; every string passes through redact, then xml_safe."""

    def __init__(self, report: Report, redact):
        self.report = report
        self.redact = redact
        self.wall = {t.id: t.wall_ms / 1000 for t in report.timings.cells}
        self.lines = {i.id: i.line for i in report.verdict.invariants if i.line}

    def text(self, value: str | None, limit: int | None = None) -> str:
        value = self.redact(value or "")
        return xml_safe(value if limit is None or len(value) <= limit else value[:limit] + "…")

    def element(self, parent, tag: str, body: str | None = None, **attrs) -> ET.Element:
        """`body` arrives cleaned; attributes are cleaned here (cleaning twice changes nothing)."""
        node = ET.SubElement(parent, tag, {k.rstrip("_"): self.text(v) for k, v in attrs.items()})
        if body is not None:
            node.text = body
        return node

    def build(self) -> ET.Element:
        v = self.report.verdict
        root = ET.Element("testsuites", {"name": "chaos-gate"})
        totals = [0, 0, 0, 0.0]
        stages = {s.stage: s for s in v.stages}
        for stage, cells in self.report.cells_by_stage().items():
            suite = self.suite(root, stage, cells, stages.get(stage))
            for n, key in enumerate(("tests", "failures", "errors")):
                totals[n] += int(suite.get(key))
            totals[3] += sum(self.wall.get(c.id, 0.0) for c in cells)
        root.set("tests", str(totals[0]))
        root.set("failures", str(totals[1]))
        root.set("errors", str(totals[2]))
        root.set("time", _seconds(totals[3]))
        return root

    def suite(self, root, stage: str, cells: list[CellResult], score: StageScore | None) -> ET.Element:
        failed = sum(c.status == "fail" for c in cells)
        errors = sum(c.status == "error" for c in cells)
        skipped = sum(c.status == "skipped" for c in cells)
        suite = self.element(root, "testsuite", name=f"chaos-gate.{stage}", tests=str(len(cells)),
                             failures=str(failed), errors=str(errors), skipped=str(skipped),
                             time=_seconds(sum(self.wall.get(c.id, 0.0) for c in cells)))
        self.properties(suite, score)
        for cell in cells:
            self.case(suite, cell)
        return suite

    def properties(self, suite, s: StageScore | None) -> None:
        v = self.report.verdict
        props = ET.SubElement(suite, "properties")
        for name, value in (("score", "n/a" if s is None or s.score is None else f"{s.score:.2f}"),
                            ("weight", "" if s is None else f"{s.weight:g}"),
                            ("overall_score", "n/a" if v.score is None else f"{v.score:.2f}"),
                            ("verdict", v.verdict), ("seed", str(v.seed))):
            self.element(props, "property", name=name, value=value)

    def case(self, suite, cell: CellResult) -> None:
        case = self.element(suite, "testcase", name=cell.id, classname=f"chaos-gate.{cell.stage}.{cell.input_id}",
                            file=self.report.verdict.config, line=str(self.line_of(cell)),
                            time=_seconds(self.wall.get(cell.id, 0.0)))
        if cell.status == "fail":
            message, type_, body = failure_of(cell)
            self.element(case, "failure", self.text(body), message=self.text(message, MESSAGE), type_=type_)
        elif cell.status == "error":
            error = cell.error or f"{cell.reason}: the gate could not judge this cell"
            self.element(case, "error", self.text(error, 4000), message=self.text(error.splitlines()[0], 300),
                         type_="harness_error")
        elif cell.status == "skipped":  # not judged: its faults could not alter any answer
            self.element(case, "skipped", message=self.text(cell.note or cell.reason, 300))
        output = _first_output(cell)
        if output is not None:
            self.element(case, "system-out", self.text(output, EXCERPT))


    def line_of(self, cell: CellResult) -> int:
        """The config line a reader should open: the worst breach's invariant, else the cell's first
        invariant with a line (implicit ones have none), else line 1 (annotations need a line)."""
        ranked = sorted(cell.breaches, key=lambda b: SEVERITY_RANK.get(b.severity, 9)) + cell.invariants
        return next((self.lines[o.id] for o in ranked if o.id in self.lines), 1)


def _first_output(cell: CellResult) -> str | None:
    return next((r.output for r in cell.runs if r.output is not None), None)


def failure_of(cell: CellResult) -> tuple[str, str, str]:
    """(message, type, text) for a failing cell: all its breaches in one, worst first."""
    breaches = sorted(cell.breaches, key=lambda b: SEVERITY_RANK.get(b.severity, 9))
    message = "; ".join(f"[{b.severity}] {b.id}: {b.message}" for b in breaches) or cell.reason
    type_ = breaches[0].id if breaches else cell.reason
    lines = [f"invariant: {b.id} ({b.severity}), {b.passed_runs}/{b.total_runs} runs passed: {b.message}"
             for b in breaches] or [f"reason: {cell.reason}"]
    output = _first_output(cell)
    lines += [f"input: {cell.input[:EXCERPT]}",
              f"output: {(output or '(none: ' + cell.reason + ')')[:EXCERPT]}",
              f"reproduce: {cell.reproduce}"]
    return message, type_, "\n".join(lines)


def build(report: Report, redact=lambda s: s) -> ET.ElementTree:
    root = _Writer(report, redact).build()
    ET.indent(root)
    return ET.ElementTree(root)


def write(report: Report, path: Path, redact=lambda s: s) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    build(report, redact).write(path, encoding="utf-8", xml_declaration=True)
