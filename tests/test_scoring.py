"""Scoring and verdict, pure: renormalised weights, critical breach, errors, minimums."""

from gate.config.models import Config
from gate.report.model import CellResult, InvariantOutcome
from gate.scoring import cell_credit, decide, overall_score, score_stages

AGENT = {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "{{url}}"}}}


def config(**gate):
    return Config.model_validate({"agent": AGENT, "inputs": [{"id": "a", "text": "x"}], "gate": gate})


def cell(stage, status="pass", breaches=(), rate=None, cid=None):
    invs = [InvariantOutcome(id="completes", severity="high", passed_runs=1, total_runs=1, pass_rate=1.0,
                             breached=False, message="")]
    for sev in breaches:
        r = 0.0 if rate is None else rate
        invs.append(InvariantOutcome(id=f"inv-{sev}", severity=sev, passed_runs=0, total_runs=1, pass_rate=r,
                                     breached=True, message="planted"))
    return CellResult(id=cid or f"{stage}/{len(breaches)}/{status}", stage=stage, input_id="a", scenario="baseline",
                      seed=1, input="x", status=status if not breaches else "fail", reason="ok",
                      pass_rate=1.0, invariants=invs, reproduce="")


def test_cell_credit_by_worst_breach_severity():
    assert cell_credit(cell("mutation")) == 1.0
    assert cell_credit(cell("mutation", breaches=["critical"])) == 0.0
    assert abs(cell_credit(cell("mutation", breaches=["high"])) - 1 / 3) < 1e-9
    assert abs(cell_credit(cell("mutation", breaches=["low", "medium"])) - 2 / 3) < 1e-9
    assert abs(cell_credit(cell("mutation", breaches=["critical"], rate=0.5)) - 0.5) < 1e-9


def test_weights_renormalise_over_stages_that_ran():
    cfg = config()
    cells = [cell("mutation"), cell("mutation", breaches=["high"]), cell("contract")]
    stages = score_stages(cfg, cells)
    assert [s.stage for s in stages] == ["mutation", "contract"]
    mutation = (1 + 1 / 3) / 2 * 100
    # weights 0.20 and 0.35 renormalised over 0.55 (chaos and replay did not run)
    expected = (mutation * 0.20 + 100 * 0.35) / 0.55
    assert abs(overall_score(stages) - expected) < 0.02


def test_critical_breach_fails_even_with_high_score():
    cfg = config(min_score=10)
    cells = [cell("contract")] * 50 + [cell("contract", breaches=["critical"], cid="bad")]
    stages = score_stages(cfg, cells)
    verdict, code, reasons = decide(cfg, cells, stages, overall_score(stages))
    assert (verdict, code) == ("fail", 1)
    assert "critical invariant breached: inv-critical" in reasons[0]


def test_score_under_minimum_and_stage_minimum():
    cfg = config(min_score=90, stage_min={"mutation": 99})
    cells = [cell("mutation"), cell("mutation", breaches=["low"]), cell("contract")]
    stages = score_stages(cfg, cells)
    verdict, code, reasons = decide(cfg, cells, stages, overall_score(stages))
    assert verdict == "fail" and code == 1
    assert any("mutation score 83.3 is under its minimum 99" in r for r in reasons)


def test_errors_are_not_failures_and_make_the_verdict_error():
    cfg = config()
    err = cell("contract", status="error", cid="err")
    cells = [cell("contract"), err]
    stages = score_stages(cfg, cells)
    assert stages[0].score == 100.0  # the error cell is not scored as an agent failure
    verdict, code, reasons = decide(cfg, cells, stages, overall_score(stages))
    assert (verdict, code) == ("error", 2) and "could not be judged" in reasons[0]


def test_fail_on_never_reports_only():
    cfg = config(fail_on="never")
    cells = [cell("contract", breaches=["critical"])]
    stages = score_stages(cfg, cells)
    assert decide(cfg, cells, stages, overall_score(stages))[0] == "pass"


def test_custom_weight_zero_drops_a_stage():
    cfg = Config.model_validate({"agent": AGENT, "inputs": [{"id": "a", "text": "x"}],
                                 "scoring": {"weights": {"mutation": 0}}})
    stages = score_stages(cfg, [cell("mutation", breaches=["critical"]), cell("contract")])
    assert overall_score(stages) == 100.0
