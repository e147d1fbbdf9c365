"""This run against a base report (main's): which cells newly fail, which were fixed, and
whether a fallen pass rate is a real regression or could be chance. Pure.

Reports of different configs are compared on the cells they share; the others are
listed as new or removed, never refused. With one run per cell on both sides there is
nothing to test, so a new failure is a regression by its status (the gate assumes the
seed makes the agent's faults deterministic); with repeated runs, a drop counts only
when Fisher's exact test rejects "same pass rate" at `gate.alpha`.
"""

from __future__ import annotations

from gate.contracts.base import SEVERITY_RANK
from gate.report.insight_model import CellComparison, Comparison, InvariantDelta, StageDelta
from gate.report.model import CellResult, StageScore, VerdictPart
from gate.scoring.repeat import clean_runs
from gate.scoring.stats import pass_rate_drop, wilson_interval

CHANGES = ("new_failure", "fixed", "still_failing", "still_passing", "new_cell", "removed_cell", "error",
           "not_judged")


def _change(base: CellResult | None, head: CellResult | None) -> str:
    if base is None:
        return "new_cell"
    if head is None:
        return "removed_cell"
    if "error" in (base.status, head.status):
        return "error"  # one side could not judge the cell: neither a regression nor a fix
    if "skipped" in (base.status, head.status):
        return "not_judged"  # one side's faults could not alter any answer: nothing to compare
    return {("pass", "fail"): "new_failure", ("fail", "pass"): "fixed", ("fail", "fail"): "still_failing",
            ("pass", "pass"): "still_passing"}[(base.status, head.status)]


def _interval(passes: int, runs: int) -> tuple[float, float]:
    low, high = wilson_interval(passes, runs)
    return round(low, 4), round(high, 4)


def _compare_cell(cid: str, base: CellResult | None, head: CellResult | None, alpha: float) -> CellComparison:
    change = _change(base, head)
    out = CellComparison(id=cid, change=change, base_status=base and base.status, head_status=head and head.status)
    if head is not None:
        out.severity = min((b.severity for b in head.breaches), key=SEVERITY_RANK.get, default=None)
    if change in ("new_cell", "removed_cell", "error", "not_judged"):
        return out
    (bp, bn), (hp, hn) = clean_runs(base), clean_runs(head)
    out.base_passes, out.head_passes = f"{bp}/{bn}", f"{hp}/{hn}"
    out.base_interval, out.head_interval = _interval(bp, bn), _interval(hp, hn)
    fell = bn and hn and hp / hn < bp / bn
    if not fell and change != "new_failure":
        return out
    if bn == 1 and hn == 1:
        out.trend = "regression"  # single runs: nothing to test, the status decides
    else:
        out.p_value = round(pass_rate_drop(bp, bn, hp, hn), 6)
        out.trend = "regression" if out.p_value < alpha else "inconclusive"
    out.blocking = change == "new_failure" and out.trend == "regression"
    return out


def _invariant_deltas(base: dict, head: dict, shared: list[str]) -> list[InvariantDelta]:
    def breached(cells: dict) -> dict[str, int]:
        counts: dict[str, int] = {}
        for cid in shared:
            for o in cells[cid].invariants:
                counts[o.id] = counts.get(o.id, 0) + (1 if o.breached else 0)
        return counts

    b, h = breached(base), breached(head)
    return [InvariantDelta(id=i, base_breached=b.get(i, 0), head_breached=h.get(i, 0))
            for i in sorted(set(b) | set(h))]


def _stage_deltas(base: list[StageScore], head: list[StageScore]) -> list[StageDelta]:
    b, h = {s.stage: s.score for s in base}, {s.stage: s.score for s in head}
    order = [s.stage for s in head] + [s.stage for s in base if s.stage not in h]
    return [StageDelta(stage=s, base_score=b.get(s), head_score=h.get(s)) for s in order]


def compare(base: VerdictPart, head_cells: list[CellResult], head_stages: list[StageScore], head_score: float | None,
            head_digest: str, alpha: float) -> Comparison:
    base_cells = {c.id: c for c in base.cells}
    head = {c.id: c for c in head_cells}
    ids = list(head) + [cid for cid in base_cells if cid not in head]
    cells = [_compare_cell(cid, base_cells.get(cid), head.get(cid), alpha) for cid in ids]
    shared = [cid for cid in head if cid in base_cells]
    counts = {change: sum(c.change == change for c in cells) for change in CHANGES}
    counts["regressions"] = sum(c.blocking for c in cells)
    counts["inconclusive"] = sum(c.trend == "inconclusive" for c in cells)
    notes = []
    if base.config_digest != head_digest:
        notes.append(f"the base report comes from another config (digest {base.config_digest}): "
                     f"compared on the {len(shared)} cells both have")
    if base.runs_per_cell == 1 and max((c.runs for c in (x.stats for x in head_cells) if c), default=1) == 1:
        notes.append("one run per cell: a new failure is a regression by its status (runs: 4 or more lets "
                     "Fisher's test tell a real drop from chance)")
    return Comparison(base_config=base.config, base_digest=base.config_digest, base_seed=base.seed,
                      same_config=base.config_digest == head_digest, shared_cells=len(shared), alpha=alpha,
                      score_base=base.score, score_head=head_score, counts=counts, cells=cells,
                      invariants=_invariant_deltas(base_cells, head, shared),
                      stages=_stage_deltas(base.stages, head_stages), notes=notes)
