"""report.html: one self-contained trace viewer, rendered from the canonical Report alone.

It shows the verdict, the scenario × invariant matrix as a heat map, and for every cell
that did not pass a waterfall of its LLM and tool calls (faults highlighted, retries and
Retry-After waits drawn, request and response bodies expandable), filterable by stage,
scenario and invariant. Every string that came from the agent, the config or the wire
passes through gate.report.escape; the page loads nothing (inline CSS and script only,
and a Content-Security-Policy that forbids any request), so it opens offline from a CI
artifact and no agent text can make it fetch anything. A crash or start-up failure shows
the end of the agent's log (stderr); cells not judged and re-run cells are listed with why. A
conversation run shows its transcript: each turn's user text and answer, the faulted turns and
their calls, the first turn that went wrong (gate/report/transcript.py).
"""

from __future__ import annotations

from gate.report.log_tail import LOG_MARK
from gate.report.escape import html_attr as attr
from gate.report.escape import html_block as block
from gate.report.html_assets import CSP, CSS, JS
from gate.report.injected import no_fault_note
from gate.report import transcript
from gate.report.markdown import worst
from gate.report.model import CellResult, Report

MAX_CELLS = 200  # failing cells drawn in full; the rest are listed in report.json
MAX_RUNS = 3


def render(report: Report) -> str:
    v = report.verdict
    body = [_header(report), _filters(report), _matrix(report), _not_judged(report), _failures(report)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>chaos-gate: {attr(v.verdict)} {attr(_score(v.score))}</title><style>{CSS}</style></head>"
            f"<body>{''.join(body)}<script>{JS}</script></body></html>\n")


def _score(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.1f}"


from gate.report.reach_text import reach_lines  # noqa: E402


def _header(report: Report) -> str:
    v, c = report.verdict, report.verdict.counts
    # right after the score, when it is so: a pass that injected no fault must not read as survived
    facts = [f"score {_score(v.score)} (min {v.min_score:g})", no_fault_note(report),
             f"{c.passed}/{c.cells} cells passed", f"{c.failed} failed", f"{c.errors} errors"] + \
            ([f"{c.skipped} not judged"] if c.skipped else []) + \
            [f"{c.flaky} flaky", f"seed {v.seed}",
             f"config {v.config}", f"{report.timings.wall_seconds:g} s"]
    out = [f"<header><h1><span class=\"badge {attr(v.verdict)}\" id=\"verdict\">{attr(v.verdict.upper())}</span> "
           f"chaos-gate</h1><div class=\"facts\">{''.join(f'<span>{attr(f)}</span>' for f in facts if f)}</div>"]
    if v.warnings:
        out.append("<ul class=\"warnings\">" + "".join(f"<li>{attr(w, 400)}</li>" for w in v.warnings) + "</ul>")
    if v.reasons:
        out.append("<ul class=\"reasons\">" + "".join(f"<li>{attr(r, 400)}</li>" for r in v.reasons) + "</ul>")
    reached = reach_lines(v.reach)
    if reached:
        out.append("<ul class=\"reach\">" + "".join(f"<li>{attr(r, 500)}</li>" for r in reached) + "</ul>")
    return "".join(out) + "</header><main>"


def _options(name: str, label: str, values) -> str:
    opts = "".join(f"<option value=\"{attr(x)}\">{attr(x)}</option>" for x in values)
    return f"<label>{label} <select data-filter=\"{name}\"><option value=\"\">all</option>{opts}</select></label>"


def _filters(report: Report) -> str:
    cells = report.verdict.cells
    stages = dict.fromkeys(c.stage for c in cells)
    scenarios = dict.fromkeys(c.scenario for c in cells)
    invariants = [i.id for i in report.verdict.invariants]
    return ("<div class=\"filters\">" + _options("stage", "stage", stages) + _options("scenario", "scenario", scenarios)
            + _options("invariant", "invariant", invariants)
            + "<span class=\"muted\"><span id=\"shown\">0</span> failing cells shown</span></div>")


# --- the matrix ----------------------------------------------------------------------------------

def _heat_cell(outcomes, scenario: str, inv: str) -> str:
    data = f" data-invariant=\"{attr(inv)}\""
    runs = sum(o.total_runs for o in outcomes)
    if not outcomes or not runs:
        return f"<td class=\"none\"{data} title=\"not checked\">·</td>"
    passed = sum(o.passed_runs for o in outcomes)
    rate = passed / runs
    breached = any(o.breached for o in outcomes)
    style = f"background:hsl({int(120 * rate)},62%,{44 if breached else 80}%)"
    title = f"{scenario} × {inv}: {passed}/{runs} runs passed" + (" — breached" if breached else "")
    mark = "✕" if breached else "✓"
    return (f"<td class=\"{'breach' if breached else 'held'}\"{data} style=\"{style}\" title=\"{attr(title)}\">"
            f"{mark} {rate:.0%}</td>")


def _matrix(report: Report) -> str:
    cells = [c for c in report.verdict.cells if c.stage != "gate"]
    if not cells:
        return ""
    invs = [i.id for i in report.verdict.invariants]
    outcomes: dict[tuple[str, str], dict[str, list]] = {}  # (stage, scenario) -> invariant -> outcomes, one pass
    for c in cells:
        row = outcomes.setdefault((c.stage, c.scenario), {})
        for o in c.invariants:
            row.setdefault(o.id, []).append(o)
    head = "".join(f"<th data-invariant=\"{attr(i)}\"><code>{attr(i, 40)}</code></th>" for i in invs)
    body = []
    for (stage, scenario), row in outcomes.items():
        tds = "".join(_heat_cell(row.get(inv, []), scenario, inv) for inv in invs)
        body.append(f"<tr data-stage=\"{attr(stage)}\" data-scenario=\"{attr(scenario)}\"><th class=\"row\">"
                    f"{attr(stage)} / <code>{attr(scenario, 60)}</code></th>{tds}</tr>")
    return ("<h2>Scenario × invariant</h2><table class=\"heat\" id=\"matrix\"><thead><tr><th>stage / scenario</th>"
            f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table><p class=\"legend\">Each square: the share "
            "of runs that held the invariant (green all, red none); ✕ the invariant is breached, · not checked.</p>")


# --- cells not judged, cells re-run ---------------------------------------------------------------

def _not_judged(report: Report) -> str:
    skipped = [c for c in report.verdict.cells if c.status == "skipped"]
    out = []
    if skipped:
        items = "".join(f"<li><code>{attr(c.id)}</code>: {attr(c.note or c.reason, 400)}</li>"
                        for c in skipped[:MAX_CELLS])
        out.append(f"<h2>Not judged ({len(skipped)})</h2><ul class=\"skipped\">{items}</ul>")
    if report.run.reruns:
        rows = "".join(f"<tr><td><code>{attr(r.cell)}</code></td><td>{attr(r.first_reason)}</td>"
                       f"<td><code>{attr(r.left_broken_by or '—')}</code></td><td>{attr(r.outcome)}</td></tr>"
                       for r in report.run.reruns)
        out.append("<h2>Re-run on a restarted agent</h2><p>These cells failed with none of their own faults firing, "
                   "on an agent instance an earlier cell's faults had fired on; each was re-run on a restarted agent "
                   "and judged on that run alone.</p><table class=\"reruns\"><thead><tr><th>cell</th><th>first failed"
                   "</th><th>agent left broken by</th><th>on a restarted agent</th></tr></thead>"
                   f"<tbody>{rows}</tbody></table>")
    return "".join(out)


# --- failing cells ---------------------------------------------------------------------------------

def _failures(report: Report) -> str:
    bad = worst(report)
    if not bad:
        return "<h2>Failing cells</h2><p id=\"no-failures\">Every cell passed.</p></main>"
    timings = {t.id: t for t in report.timings.cells}
    bodies = {e.id: e.runs for e in report.exchanges}
    refs = transcript.references(report)
    shown = "".join(_cell(c, timings.get(c.id), bodies.get(c.id, []), refs.get(c.input_id)) for c in bad[:MAX_CELLS])
    more = f"<p class=\"muted\">{len(bad) - MAX_CELLS} more in report.json</p>" if len(bad) > MAX_CELLS else ""
    return f"<h2>Failing cells ({len(bad)})</h2>{shown}{more}</main>"


def _cell(cell: CellResult, timing, bodies: list, reference: dict | None = None) -> str:
    invs = " ".join(attr(b.id) for b in cell.breaches) or " ".join(attr(o.id) for o in cell.invariants)
    head = (f"<h3><span class=\"badge {attr(cell.status)}\">{attr(cell.status)}</span> <code>{attr(cell.id)}</code>"
            f" — {attr(cell.reason)}{' (flaky, pass rate ' + format(cell.pass_rate, '.0%') + ')' if cell.flaky else ''}"
            "</h3>")
    parts = [head, "<ul>"]
    parts += [f"<li><b>{attr(b.severity)}</b> <code>{attr(b.id)}</code>: {attr(b.message, 400)} "
              f"({b.passed_runs}/{b.total_runs} runs passed)</li>" for b in cell.breaches]
    parts.append("</ul>")
    if cell.error:
        label = "The agent did not start:" if cell.reason == "agent_start" else "Harness error:"
        parts.append(f"<p>{label}</p><pre>{block(cell.error.split(LOG_MARK, 1)[0], 3000)}</pre>")
    if cell.log_tail:
        parts.append(f"<p>The agent's log (stderr) ends:</p><pre class=\"log-tail\">{block(cell.log_tail, 4000)}</pre>")
    parts.append(f"<details><summary>Input ({attr(cell.mutation or cell.scenario)})</summary>"
                 f"<pre>{block(cell.input, 2000)}</pre></details>")
    for run in cell.runs[:MAX_RUNS]:
        times = timing.trace_ms[run.run] if timing and run.run < len(timing.trace_ms) else []
        pairs = bodies[run.run] if run.run < len(bodies) else []
        parts.append(_run(run, times, pairs, reference))
    parts.append(f"<p>Reproduce:</p><pre class=\"reproduce\">{block(cell.reproduce, 1000)}</pre>")
    return (f"<article class=\"cell status-{attr(cell.status)}\" id=\"cell-{attr(cell.id)}\" "
            f"data-cell=\"{attr(cell.id)}\" data-stage=\"{attr(cell.stage)}\" data-scenario=\"{attr(cell.scenario)}\" "
            f"data-invariant=\"{invs}\">{''.join(parts)}</article>")


def _run(run, times: list, pairs: list, reference: dict | None = None) -> str:
    failed = [c.invariant for c in run.checks if not c.passed and c.judged]
    output = run.output if run.output is not None else f"(no output: {run.reason}) {run.detail}"
    title = f"Run {run.run}: {run.reason}" + (f", breached {', '.join(failed)}" if failed else "")
    told = transcript.of_run(run, reference)  # a conversation: its turns stand for its output
    out = [f"<p><b>{attr(title, 300)}</b></p>"]
    if told is not None:
        out.append(transcript.html(told))
    if told is None or run.output is None:
        out.append(f"<pre class=\"output\">{block(output, 2000)}</pre>")
    if run.error:
        out.append(f"<pre>{block(run.error, 2000)}</pre>")
    if run.trace:
        out.append(waterfall(run.trace, times, pairs))
    return "".join(out)


def waterfall(steps, times: list, pairs: list) -> str:
    """One row per exchange: a bar from its start to its end on the run's time axis."""
    spans = [tuple(times[n][:2]) if n < len(times) else (None, None) for n in range(len(steps))]
    waits = [(s.retry_after or 0) * 1000 for s in steps]
    horizon = max([e or s or 0 for s, e in spans] + [(e or s or 0) + w for (s, e), w in zip(spans, waits, strict=True)] + [1.0])
    failed: dict = {}  # (target, method, path) -> whether its last call failed
    rows = []
    for n, step in enumerate(steps):
        key = (step.target, step.method, step.path)
        retry = failed.get(key, False)  # the same call again after a failure: a retry
        failed[key] = bool(step.fault) or step.status is None or step.status >= 400
        rows.append(_step_row(step, spans[n], waits[n], horizon, retry, pairs[n] if n < len(pairs) else None))
    return f"<div class=\"wf\">{''.join(rows)}</div>"


def _step_row(step, span, wait_ms: float, horizon: float, retry: bool, pair) -> str:
    start, end = span
    what = step.tool or step.model or step.rpc_method or ""
    label = f"#{step.seq} {step.target} {step.method} {step.path}" + (f" [{what}]" if what else "")
    tags = ""
    if step.fault:
        tags += f"<span class=\"tag f\">{attr(step.fault)}{' (n/a)' if step.fault_status == 'not_applicable' else ''}</span>"
    if retry:
        tags += "<span class=\"tag retry\">retry</span>"
    if getattr(step, "handoff", None):  # an Agents SDK handoff brought this call (gate/dialects/handoffs.py)
        tags += f"<span class=\"tag\">handoff {attr(step.handoff, 120)}</span>"
    if step.retry_after:
        tags += f"<span class=\"tag r\">Retry-After {step.retry_after:g} s</span>"
    track = ""
    if start is not None:
        left, stop = 100 * start / horizon, 100 * (end if end is not None else horizon) / horizon
        track = (f"<span class=\"bar {attr(step.kind)}\" style=\"left:{left:.2f}%;width:{max(stop - left, 0.3):.2f}%\" "
                 f"title=\"{start:.0f}–{'…' if end is None else format(end, '.0f')} ms\"></span>")
        if wait_ms:
            w_left = 100 * (end if end is not None else start) / horizon
            track += (f"<span class=\"wait\" style=\"left:{w_left:.2f}%;width:{100 * wait_ms / horizon:.2f}%\" "
                      f"title=\"Retry-After wait\"></span>")
    took = "" if start is None else ("…" if end is None else f"{end - start:.0f} ms")
    note = f"<div class=\"muted\">{attr(step.note, 300)}</div>" if step.note else ""
    body = _bodies(pair)
    return (f"<div class=\"wf-row{' fault' if step.fault else ''}\"><div><code>{attr(label, 160)}</code>{tags}{note}"
            f"</div><div>{attr(str(step.status) if step.status is not None else '—')}</div><div class=\"track\">{track}"
            f"</div><div class=\"muted\">{attr(took)}</div>{body}</div>")


def _bodies(pair) -> str:
    if pair is None or not (pair.request or pair.response):
        return ""
    return (f"<details class=\"wf-body\"><summary>request and response bodies</summary><p>Request:</p>"
            f"<pre>{block(pair.request or '(empty)')}</pre><p>Response (as the agent got it):</p>"
            f"<pre>{block(pair.response or '(empty)')}</pre></details>")
