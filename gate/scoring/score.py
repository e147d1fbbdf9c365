"""Stage scores, the overall score and the verdict. Pure.

Starts from Flakestorm's idea (severity-weighted pass fraction), counted per cell
so that trivially-passing checks cannot dilute a real failure, and fixes what it
gets wrong: errors never count as agent failures, stage weights are renormalised
over the stages that actually ran, a run repeated N times contributes its pass
rate, and a critical breach fails the gate regardless of the score. A `skipped`
cell (its faults could not alter any answer) was not judged: it counts nowhere.
"""

from __future__ import annotations

from collections import Counter

from gate.config.models import STAGES, Config
from gate.contracts import SEVERITY_WEIGHT
from gate.contracts.base import SEVERITY_RANK
from gate.errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS
from gate.report.model import CellResult, StageScore

MAX_WEIGHT = max(SEVERITY_WEIGHT.values())


def cell_credit(cell: CellResult) -> float:
    """1.0 for a clean cell; otherwise reduced by its worst breach, in proportion to that
    invariant's severity and failure rate: a critical breach in every run gives 0, a low
    one 2/3. So one cell counts once, however many invariants it checks."""
    penalty = 0.0
    for inv in cell.invariants:
        failed = 1.0 - inv.pass_rate
        penalty = max(penalty, SEVERITY_WEIGHT[inv.severity] / MAX_WEIGHT * failed)
    return 1.0 - penalty


def stage_score(cells: list[CellResult]) -> float | None:
    """Mean cell credit × 100 over the cells judged (errors and skipped cells excluded); None if none was."""
    judged = [c for c in cells if c.status not in ("error", "skipped") and c.invariants]
    if not judged:
        return None
    return round(100.0 * sum(cell_credit(c) for c in judged) / len(judged), 2)


def score_stages(config: Config, cells: list[CellResult]) -> list[StageScore]:
    weights = config.scoring.weights.model_dump()
    out = []
    for stage in STAGES:
        group = [c for c in cells if c.stage == stage]
        if not group:
            continue
        out.append(StageScore(
            stage=stage, score=stage_score(group), weight=weights[stage], cells=len(group),
            passed=sum(c.status == "pass" for c in group), failed=sum(c.status == "fail" for c in group),
            errors=sum(c.status == "error" for c in group), flaky=sum(c.flaky for c in group),
            minimum=config.gate.stage_min.get(stage), skipped=sum(c.status == "skipped" for c in group)))
    return out


def overall_score(stages: list[StageScore]) -> float | None:
    """Weighted mean of the stages that ran, weights renormalised over them."""
    scored = [s for s in stages if s.score is not None and s.weight > 0]
    total = sum(s.weight for s in scored)
    if not scored or total == 0:
        return None
    return round(sum(s.score * s.weight for s in scored) / total, 2)


def _critical_breaches(cells: list[CellResult], floor: str = "critical") -> list[str]:
    """Invariant ids breached at `floor` severity or worse, each with the outcomes that breached it
    (`completes (agent_timeout)`), so a crash is named as what it was rather than as the invariant
    that caught it."""
    outcomes: dict[str, set[str]] = {}
    for cell in cells:
        for breach in cell.breaches:
            if SEVERITY_RANK[breach.severity] <= SEVERITY_RANK[floor]:
                seen = outcomes.setdefault(breach.id, set())
                if not cell.reason.startswith("contract:") and cell.reason != "ok":
                    seen.add(cell.reason)
    return [f"{inv} ({', '.join(sorted(why))})" if why else inv for inv, why in sorted(outcomes.items())]


def _severity_floor(fail_on: str, comparison) -> str | None:
    """The severity at or above which any breach fails: fail_on itself, or critical for a
    regression gate that got no baseline to compare with."""
    if fail_on in SEVERITY_RANK:
        return fail_on
    return "critical" if fail_on == "regression" and comparison is None else None


def _regressions(comparison) -> list[str]:
    blocking = [c for c in comparison.cells if c.blocking]
    if not blocking:
        return []
    shown = ", ".join(c.id for c in blocking[:5]) + (f" and {len(blocking) - 5} more" if len(blocking) > 5 else "")
    return [f"{len(blocking)} new failure(s) against the baseline: {shown}"]


def decide(config: Config, cells: list[CellResult], stages: list[StageScore], score: float | None,
           comparison=None, floor_reasons: list[str] = ()) -> tuple[str, int, list[str]]:
    """(verdict, exit code, reasons). Errors outrank failures: the gate could not judge.
    `comparison` (against a base report) and the pass^k floor reasons come from the caller."""
    gate = config.gate
    reasons: list[str] = []
    errors = [c for c in cells if c.status == "error"]
    if errors:
        kinds = ", ".join(f"{reason} {n}" for reason, n in Counter(c.reason for c in errors).most_common())
        reasons.append(f"{len(errors)} cell(s) could not be judged ({kinds}): first {errors[0].id}")
    floor = _severity_floor(gate.fail_on, comparison)
    breached = _critical_breaches(cells, floor) if floor else []
    if breached:
        what = "critical invariant" if floor == "critical" else f"invariant at {floor} severity or above"
        reasons.append(f"{what} breached: {', '.join(breached)}")
    if gate.fail_on == "regression" and comparison is not None:
        reasons += _regressions(comparison)
    if gate.fail_on != "never":
        reasons += list(floor_reasons)
    gates_on_score = gate.fail_on != "never" and (gate.fail_on != "regression" or comparison is None)
    if gates_on_score:  # a regression gate with a baseline blocks on new failures only
        if score is not None and score < gate.min_score:
            reasons.append(f"score {score:.1f} is under the minimum {gate.min_score:g}")
        for stage in stages:
            if stage.minimum is not None and stage.score is not None and stage.score < stage.minimum:
                reasons.append(f"{stage.stage} score {stage.score:.1f} is under its minimum {stage.minimum:g}")
    if errors:
        return "error", EXIT_ERROR, reasons
    if reasons:
        return "fail", EXIT_FAIL, reasons
    return "pass", EXIT_PASS, reasons
