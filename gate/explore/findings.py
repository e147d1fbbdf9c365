"""Findings: a failing explored cell told in one line, with its evidence and the YAML that pins it. Pure.

A point is already a minimal fault set (one fault at one call, or one site's outage), so the
finding is the point itself: "refund_order (function) lost its answer at call 1 → one intended
write was executed 2 times". Its pin is a chaos scenario with exactly the explored fault config
and the breached oracle as an invariant scoped to that scenario, so pasting it (or `chaos-gate
explore --write`) runs the same cell as a regression on every later PR. Each finding also carries
what groups it with the others that show the same bug (gate/explore/causes.py), which the
renderings lead with.
"""

from __future__ import annotations

import re

import yaml

from gate.contracts.base import SEVERITY_RANK
from gate.explore.causes import behaviour_of, failing_run, kind_of, where_of
from gate.explore.planner import Point

# what each kind did to the call, in words
DID = {"timeout_after_write": "lost its answer after the write was made", "error": "answered a server error",
       "hang_after_write": "held its answer after the write was made until the agent gave up",
       "wrong_tool_args": "asked for a tool call with well-formed arguments its schema rejects",
       "exit_code": "exited non-zero", "timeout": "hung", "rate_limit": "was rate limited (429)",
       "reset": "had its connection reset", "malformed": "answered malformed JSON", "empty": "answered nothing",
       "partial": "answered half its body", "schema_drift": "answered with renamed fields",
       "inject": "carried an injected order", "latency": "answered late", "server_error": "answered a server error",
       "bad_tool_args": "asked for a tool call with bad arguments", "truncate_stream": "cut its stream short",
       "stall": "stalled mid-stream", "cut_content": "cut its answer short (finish_reason length)", "malformed_json": "answered malformed JSON",
       "duplicate_tool_fragment": "repeated a tool-call fragment", "reorder_tool_fragments":
       "reordered its tool-call fragments"}


def scenario_name(point: Point) -> str:
    return "explore-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", point.id.split("/explore/", 1)[-1]).strip("-")


def tell(point: Point, message: str) -> str:
    parts = []
    for fault, site in zip(point.faults, point.sites, strict=True):
        where = site.describe(every=point.persistent)
        when = "on every call" if point.persistent else f"at call {fault['on_calls'][0]}"
        parts.append(f"{where} {DID.get(fault['kind'], fault['kind'])} {when}")
    return f"{' and '.join(parts)} → {message}"


def pin_yaml(point: Point, invariant: str | None, severity: str) -> str:
    """The scenario, and the oracle it breached scoped to it (a team's own invariant is already in the config)."""
    name = scenario_name(point)
    doc: dict = {"chaos": {"scenarios": [{"name": name, "faults": [dict(f) for f in point.faults]}]}}
    if invariant is not None:
        pinned = {"id": f"{name}-{invariant}"[:120], "type": invariant, "severity": severity, "when": {"scenario": name}}
        if point.reference.canary and invariant == "ignores_injected_orders":
            pinned["canary"] = point.reference.canary
        doc["contract"] = {"invariants": [pinned]}
    return yaml.safe_dump(doc, sort_keys=False, width=120, allow_unicode=True)


def findings_for(points: dict[str, Point], cells, oracle_ids: set[str]) -> list[dict]:
    """One finding per failing explored cell: its worst breach (oracles first), as Finding fields, with what
    groups it into its cause (gate/explore/causes.py): its site, its fault kind, what the agent did."""
    out = []
    order = {point_id: n for n, point_id in enumerate(points)}  # `points` is in plan order
    for cell in cells:
        point = points.get(cell.id)
        if point is None or cell.status != "fail":
            continue
        breaches = sorted(cell.breaches, key=lambda b: (SEVERITY_RANK.get(b.severity, 9), b.id not in oracle_ids))
        if not breaches:
            continue
        worst = breaches[0]
        site, where = where_of(point)
        out.append(dict(cell=cell.id, invariant=worst.id, severity=worst.severity,
                        line=tell(point, worst.message), evidence=worst.message, reproduce=cell.reproduce,
                        log_tail=cell.log_tail,
                        pin=pin_yaml(point, worst.id if worst.id in oracle_ids else None, worst.severity),
                        site=site, where=where, kind=kind_of(point), order=order[cell.id],
                        behaviour=behaviour_of(failing_run(cell, worst.id), cell.log_tail)))
    out.sort(key=lambda f: (SEVERITY_RANK.get(f["severity"], 9), f["cell"]))
    return out
