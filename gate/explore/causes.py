"""Causes: the failing explored points that show one bug, told once. Pure.

Exploration faults every kind at every site, so one unhandled exception at one call site fails a
cell per kind that reaches it — the ADK sample listed 37 findings of 7 bugs one by one. A cause is
what those cells share: the same oracle, the same site (the Site's group: the matcher without the
occurrence, so call 1 and call 3 of one tool are one site) and the same observed behaviour. The
behaviour is read off the failing run as a few normalised facts — how the run ended (crashed,
answered HTTP 500, did not answer in time), the exception type the agent's log or its error answer
names, and the answer's shape (nothing, an error, a cut document, an answer) — never its free text,
so two points that differ only in a call number, an id or a quoted value are one cause, and a
`KeyError` and a `TypeError` at one site are two.

Two halves: `where_of`, `kind_of` and `behaviour_of` read a point and its failing run when the findings are made
(gate/explore/findings.py), and `group_causes` folds findings (report.json's, duck-typed) into causes,
so a shard merge regroups the merged findings exactly as one process would. Deterministic: causes most
severe first, then in plan order; a cause's cells in plan order, the first its representative.
"""

from __future__ import annotations

import re

from gate.contracts.base import SEVERITY_RANK
from gate.dialects import answers

# The last line of a Python or Node traceback names the exception: `KeyError: 'id'`,
# `requests.exceptions.ReadTimeout: ...`, `Uncaught TypeError: Cannot read ...`; a JSON error body may quote it.
EXCEPTION = re.compile(r"(?:^|[\s\"'(\[{:])(?:Uncaught\s+)?((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*"
                       r"(?:Error|Exception|Exit|Interrupt|Timeout|Refused|Reset|Fault))(?=[:(]|\s*$|[\"',)\]}])",
                       re.MULTILINE)
NUMBERS = re.compile(r"\d+")
# how the run ended, when it ended without an answer; {status} is the HTTP status
ENDED = {"agent_crash": "crashed", "exit_nonzero": "exited non-zero", "agent_timeout": "did not answer in time",
         "http_5xx": "answered HTTP {status}", "http_4xx": "answered HTTP {status}",
         "connection_error": "dropped the connection", "stream_error": "cut its answer stream short",
         "output_flood": "flooded its answer", "bad_output_json": "answered malformed JSON",
         "bad_output_shape": "answered an unexpected shape", "bad_output_encoding": "answered undecodable bytes"}
# where an exception type tells which bug: the run ended on it (a timeout's hang names none)
NAMES_EXCEPTION = frozenset(ENDED) - {"agent_timeout", "output_flood"}
SHAPE = {"empty": "answered nothing", "cut": "answered a cut document", "an error": "answered an error"}


def exception_of(*texts: str | None) -> str | None:
    """The exception the first text that names one ends on (its last: a chained traceback's own), digits dropped."""
    for text in texts:
        found = EXCEPTION.findall(text or "")
        if found:
            return NUMBERS.sub("", found[-1])
    return None


def behaviour_of(run, log_tail: str | None) -> str:
    """What the agent did in its failing run, in words built only from normalised facts."""
    if run is None:
        return "failed"
    if run.reason == "ok":
        shape = answers.failure(run.output or "") if run.output is not None else "empty"
        return SHAPE.get(shape, "answered")
    ended = ENDED.get(run.reason, NUMBERS.sub("", run.reason).replace("_", " "))
    ended = ended.format(status=run.status if run.status is not None else "error")
    exc = exception_of(log_tail, run.detail) if run.reason in NAMES_EXCEPTION else None
    return f"{ended} ({exc})" if exc else ended


def where_of(point) -> tuple[str, str]:
    """(key, words) of the point's site(s): every call of the site, whatever the occurrence faulted."""
    key = " + ".join(site.group for site in point.sites)
    words = " and ".join(f"{site.target} LLM calls" if site.kind == "llm" else site.describe()
                         for site in point.sites)
    return key, words


def kind_of(point) -> str:
    """The fault kind(s) of the point: `error`, `error on every call` (an outage), `error + timeout` (a pair)."""
    kinds = " + ".join(f["kind"] for f in point.faults)
    return f"{kinds} on every call" if point.persistent else kinds


def failing_run(cell, invariant: str):
    """The cell's first run that breached `invariant`, else its first run."""
    runs = list(cell.runs)
    bad = (r for r in runs if any(c.invariant == invariant and c.judged and not c.passed for c in r.checks))
    return next(bad, runs[0] if runs else None)


def _key(finding) -> tuple:
    # a finding from before causes (no site read) is a cause of its own
    return (finding.invariant, finding.site or finding.cell, finding.behaviour)


def group_causes(findings) -> list[dict]:
    """Findings with one oracle, one site and one behaviour as one cause each (Cause fields)."""
    groups: dict[tuple, list] = {}
    for f in sorted(findings, key=lambda f: (f.order, f.cell)):
        groups.setdefault(_key(f), []).append(f)
    out = []
    for members in groups.values():
        first = members[0]
        out.append(dict(invariant=first.invariant, severity=min((m.severity for m in members),
                                                                key=lambda s: SEVERITY_RANK.get(s, 9)),
                        site=first.site, where=first.where, behaviour=first.behaviour,
                        kinds=list(dict.fromkeys(m.kind for m in members if m.kind)),
                        cells=[m.cell for m in members], count=len(members), line=first.line,
                        evidence=first.evidence, reproduce=first.reproduce, pin=first.pin, log_tail=first.log_tail,
                        order=first.order))
    out.sort(key=lambda c: (SEVERITY_RANK.get(c["severity"], 9), c["order"], c["cells"][0]))
    for c in out:
        del c["order"]
    return out
