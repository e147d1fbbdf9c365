"""Tokens and cost gathered up: per cell (its runs), per scenario, the run's total, and the
amplification of each fault scenario over the fault-free baseline of the same inputs. Pure.

Amplification answers "what does chaos cost": an agent that retries blindly or loops
on a broken tool spends several times the tokens of a clean run, and that multiplier
is what a budget has to absorb when the provider has a bad day.
"""

from __future__ import annotations

from gate.plan.cells import BASELINE
from gate.report.insight_model import Amplification, ScenarioUsage, TokenUsage, UsageSummary
from gate.report.model import CellResult


def add_usage(items) -> TokenUsage | None:
    """The sum of several usages (None when none was measured)."""
    items = [TokenUsage.model_validate(i) if isinstance(i, dict) else i for i in items if i is not None]
    if not items:
        return None
    unpriced = sorted({m for i in items for m in i.unpriced})
    priced = all(i.cost_usd is not None for i in items)
    return TokenUsage(calls=sum(i.calls for i in items), input_tokens=sum(i.input_tokens for i in items),
                      output_tokens=sum(i.output_tokens for i in items), estimated=any(i.estimated for i in items),
                      cost_usd=round(sum(i.cost_usd for i in items), 8) if priced else None, unpriced=unpriced)


def cell_usage(cell: CellResult) -> TokenUsage | None:
    return add_usage([r.usage for r in cell.runs])


def _measured_runs(cells: list[CellResult]) -> int:
    return sum(1 for c in cells for r in c.runs if r.usage is not None)


def _scenarios(cells: list[CellResult]) -> dict[tuple[str, str], list[CellResult]]:
    groups: dict[tuple[str, str], list[CellResult]] = {}
    for cell in cells:
        if cell.usage is not None:
            groups.setdefault((cell.stage, cell.scenario), []).append(cell)
    return groups


def amplification(cells: list[CellResult]) -> list[Amplification]:
    """Per fault scenario: tokens per run ÷ baseline tokens per run, over the inputs both ran."""
    judged = [c for c in cells if c.status != "error"]
    baseline = {c.input_id: c for c in judged if c.stage == "contract" and c.scenario == BASELINE and c.usage}
    out = []
    for (stage, scenario), group in _scenarios(judged).items():
        if stage not in ("chaos", "contract") or scenario == BASELINE:
            continue
        group = [c for c in group if c.input_id in baseline]
        if not group:
            continue
        base = [baseline[c.input_id] for c in group]
        per_run = sum(c.usage.total for c in group) / max(1, _measured_runs(group))
        base_per_run = sum(c.usage.total for c in base) / max(1, _measured_runs(base))
        out.append(Amplification(stage=stage, scenario=scenario, inputs=sorted({c.input_id for c in group}),
                                 tokens_per_run=round(per_run, 1), baseline_tokens_per_run=round(base_per_run, 1),
                                 factor=round(per_run / base_per_run, 2) if base_per_run else None))
    return out


def usage_summary(cells: list[CellResult]) -> UsageSummary | None:
    total = add_usage([c.usage for c in cells])
    if total is None:
        return None
    scenarios = [ScenarioUsage(stage=stage, scenario=scenario, cells=len(group), runs=_measured_runs(group),
                               usage=add_usage([c.usage for c in group]))
                 for (stage, scenario), group in _scenarios(cells).items()]
    return UsageSummary(total=total, scenarios=scenarios, amplification=amplification(cells))
