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

That is the `annotated` family (pytest's `junit_family` names the same choice). `xunit2` is
the strict one, valid against both junit-10.xsd and Apache Ant's JUnit schema, for readers
that validate (the Jenkins xUnit plugin): no `file`/`line`, no attributes on <testsuites>, each
suite with the `package`, `id`, `timestamp`, `hostname` and trailing <system-out>/<system-err>
Ant requires, and no <system-out> inside a testcase: the suite's carries each cell's output excerpt.
`auto` is annotated under GitHub Actions, whose annotators read `file`/`line`, else xunit2.

Everything from the agent or the config is untrusted text: characters XML 1.0
cannot carry (NUL, ANSI escapes and other C0 controls, lone surrogates, U+FFFE/F)
and the invisible C1 controls are written as visible `\\u001b`-style text, so the
file is always well-formed. The gate sets every attribute and count itself, so the text
is written directly (`_Writer` says why), byte for byte what ElementTree writes with `indent`.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, UTC
from pathlib import Path

from gate.contracts.base import SEVERITY_RANK
from gate.report.escape import spell_out
from gate.report.model import CellResult, Report, StageScore

FAMILIES = ("annotated", "xunit2")
EXCERPT = 1000
MESSAGE = 1000
# XML 1.0 cannot carry what escape.spell_out spells out (C0 controls, lone surrogates,
# non-characters; DEL and C1 are legal but invisible): one rule for every report surface.
xml_safe = spell_out


def _seconds(value: float) -> str:
    return f"{max(value, 0.0):.3f}"


def _cdata(value: str) -> str:
    """Element text as XML writes it."""
    if "&" in value:
        value = value.replace("&", "&amp;")
    if "<" in value:
        value = value.replace("<", "&lt;")
    if ">" in value:
        value = value.replace(">", "&gt;")
    return value


def _attr(value: str) -> str:
    """An attribute value as XML writes it: also its quotes, and the whitespace a parser would fold."""
    value = _cdata(value)
    if '"' in value:
        value = value.replace('"', "&quot;")
    if "\r" in value or "\n" in value or "\t" in value:
        value = value.replace("\r", "&#13;").replace("\n", "&#10;").replace("\t", "&#09;")
    return value


class _Writer:
    """Writes the document as text, two spaces per level, one element per line. A direct writer,
    not ElementTree: building and serialising a tree cost three times as much at 1,000 cells,
    and the layout is fixed. Every string passes through redact, then xml_safe, then escaping."""

    def __init__(self, report: Report, redact, family: str = "annotated"):
        self.report = report
        self.redact = redact
        self.strict = family == "xunit2"
        self.suite_id = -1  # Ant numbers the suites of <testsuites> from 0
        self.wall = {t.id: t.wall_ms / 1000 for t in report.timings.cells}
        self.lines = {i.id: i.line for i in report.verdict.invariants if i.line}
        self.file = _attr(self.text(report.verdict.config))

    def text(self, value: str | None, limit: int | None = None) -> str:
        value = self.redact(value or "")
        return xml_safe(value if limit is None or len(value) <= limit else value[:limit] + "…")

    def attrs(self, **attrs: str) -> str:
        """` name="value"` for each attribute, cleaned (cleaning twice changes nothing) and escaped."""
        return "".join(f' {k.rstrip("_")}="{_attr(self.text(v))}"' for k, v in attrs.items())

    def leaf(self, indent: str, tag: str, body: str | None = None, **attrs: str) -> str:
        """One element without children; `body` arrives cleaned."""
        head = f"{indent}<{tag}{self.attrs(**attrs)}"
        return f"{head} />" if not body else f"{head}>{_cdata(body)}</{tag}>"

    def document(self) -> str:
        v = self.report.verdict
        suites, totals = [], [0, 0, 0, 0.0]
        stages = {s.stage: s for s in v.stages}
        for stage, cells in self.report.cells_by_stage().items():
            counts = (len(cells), sum(c.status == "fail" for c in cells), sum(c.status == "error" for c in cells))
            for n, count in enumerate(counts):
                totals[n] += count
            totals[3] += sum(self.wall.get(c.id, 0.0) for c in cells)
            suites.append(self.suite(stage, cells, counts, stages.get(stage)))
        root = "<testsuites" if self.strict else (  # Ant allows <testsuites> no attributes
            f'<testsuites name="chaos-gate" tests="{totals[0]}" failures="{totals[1]}" '
            f'errors="{totals[2]}" time="{_seconds(totals[3])}"')
        body = "\n".join(suites)
        return f"<?xml version='1.0' encoding='utf-8'?>\n{root}" + (f">\n{body}\n</testsuites>" if suites else " />")

    def suite(self, stage: str, cells: list[CellResult], counts: tuple[int, int, int], score: StageScore | None) -> str:
        skipped = sum(c.status == "skipped" for c in cells)
        head = (f"  <testsuite{self.attrs(name=f'chaos-gate.{stage}')} tests=\"{counts[0]}\" failures=\"{counts[1]}\" "
                f"errors=\"{counts[2]}\" skipped=\"{skipped}\" "
                f"time=\"{_seconds(sum(self.wall.get(c.id, 0.0) for c in cells))}\"{self.ant_suite_attrs()}>")
        tail = [self.suite_output(cells), "    <system-err />"] if self.strict else []  # Ant requires both, last
        return "\n".join([head, self.properties(score), *(self.case(c) for c in cells), *tail, "  </testsuite>"])

    def ant_suite_attrs(self) -> str:
        """What Ant's schema requires of each suite in <testsuites>: package, id (0, 1, ...), a
        timestamp without a zone, a hostname."""
        if not self.strict:
            return ""
        self.suite_id += 1
        return self.attrs(timestamp=_timestamp(self.report.timings.started_at), hostname=_hostname(),
                          package="chaos-gate", id=str(self.suite_id))

    def suite_output(self, cells: list[CellResult]) -> str:
        """xunit2's <system-out>: each cell's output excerpt, one `cell id: output` a line (Ant allows a
        testcase none, so what the annotated family writes per case is kept here)."""
        outputs = [(c.id, _first_output(c)) for c in cells]
        body = "\n".join(f"{self.text(i)}: {self.text(o, EXCERPT)}" for i, o in outputs if o is not None)
        return self.leaf("    ", "system-out", body)

    def properties(self, s: StageScore | None) -> str:
        v = self.report.verdict
        props = [self.leaf("      ", "property", name=name, value=value)
                 for name, value in (("score", "n/a" if s is None or s.score is None else f"{s.score:.2f}"),
                                     ("weight", "" if s is None else f"{s.weight:g}"),
                                     ("overall_score", "n/a" if v.score is None else f"{v.score:.2f}"),
                                     ("verdict", v.verdict), ("seed", str(v.seed)))]
        return "\n".join(["    <properties>", *props, "    </properties>"])

    def case(self, cell: CellResult) -> str:
        where = "" if self.strict else f'file="{self.file}" line="{self.line_of(cell)}" '
        head = (f'    <testcase name="{_attr(self.text(cell.id))}" '
                f'classname="{_attr(self.text(f"chaos-gate.{cell.stage}.{cell.input_id}"))}" '
                f'{where}time="{_seconds(self.wall.get(cell.id, 0.0))}"')
        inner = "      "
        children = []
        if cell.status == "fail":
            message, type_, body = failure_of(cell)
            children.append(self.leaf(inner, "failure", self.text(body), message=self.text(message, MESSAGE),
                                      type_=type_))
        elif cell.status == "error":
            error = cell.error or f"{cell.reason}: the gate could not judge this cell"
            children.append(self.leaf(inner, "error", self.text(error, 4000),
                                      message=self.text(error.splitlines()[0], 300), type_="harness_error"))
        elif cell.status == "skipped":  # not judged: its faults could not alter any answer
            children.append(self.leaf(inner, "skipped", message=self.text(cell.note or cell.reason, 300)))
        output = _first_output(cell)
        if output is not None and not self.strict:  # Ant allows a testcase no <system-out>
            children.append(self.leaf(inner, "system-out", self.text(output, EXCERPT)))
        if not children:
            return head + " />"
        return "\n".join([head + ">", *children, "    </testcase>"])

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


def _timestamp(started_at: str) -> str:
    """The run's start as Ant writes it: UTC, to the second, no zone."""
    try:
        when = datetime.fromisoformat(started_at.replace("Z", "+00:00"))
    except ValueError:
        when = datetime.fromtimestamp(0, UTC)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S")


def _hostname() -> str:
    return socket.gethostname() or "localhost"


def family_for(wanted: str = "auto", env=os.environ) -> str:
    """`auto` is annotated under GitHub Actions (its annotators read `file`/`line`), else strict xunit2."""
    if wanted in FAMILIES:
        return wanted
    return "annotated" if env.get("GITHUB_ACTIONS") == "true" else "xunit2"


def render(report: Report, redact=lambda s: s, family: str = "annotated") -> str:
    """The JUnit document as text, in `family` (FAMILIES)."""
    return _Writer(report, redact, family).document()


def write(report: Report, path: Path, redact=lambda s: s, family: str = "annotated") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(report, redact, family), encoding="utf-8")
