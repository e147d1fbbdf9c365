"""A run against main's report: new failures and fixes, fail_on regression and severity floors,
Fisher-tested pass-rate drops, configs that share only some cells, and the comment's lead."""

import pytest

from conftest import load_report
from gate.cli import main
from gate.config.models import Config
from gate.scoring.compare import compare
from gate.report.markdown import render
from gate.report.model import CellResult, CheckResult, InvariantOutcome, Report, RunResult, VerdictPart
from gate.scoring.repeat import floor_reasons, pass_k_floors
from gate.scoring.score import decide
from sdk_config import sdk_config, set_agent

SCENARIOS = """
    - {name: six, profiles: [six_faults]}
    - name: rate_limited
      faults: [{kind: rate_limit, target: llm, on_calls: [1], retry_after: 0.05}]"""


@pytest.fixture
def orders_env(orders, monkeypatch):
    monkeypatch.setenv("ORDERS_URL", orders)
    return monkeypatch


def test_planted_bug_against_its_sound_twin(orders_env, tmp_path):
    config = sdk_config(tmp_path, scenarios=SCENARIOS, gate="{min_score: 80, fail_on: regression}",
                        extra="shrink: {enabled: false}")

    def run(name, bugs, baseline=None):
        set_agent(orders_env, bugs=bugs)
        extra = ["--baseline", str(tmp_path / baseline / "report.json")] if baseline else []
        code = main(["run", "-c", str(config), "-o", str(tmp_path / name), "--quiet", *extra])
        return code, load_report(tmp_path / name)

    code, sound = run("sound", "")
    assert code == 0 and sound["comparison"] is None
    code, buggy = run("buggy", "double_write,no_retry", baseline="sound")
    cmp = buggy["comparison"]
    changes = {c["id"]: c["change"] for c in cmp["cells"]}
    assert {i for i, ch in changes.items() if ch == "new_failure"} == {"contract/refund/six",
                                                                       "contract/refund/rate_limited"}
    assert {i for i, ch in changes.items() if ch == "still_passing"} == {"contract/refund/baseline"}
    assert code == 1 and buggy["verdict"]["reasons"] == [
        "2 new failure(s) against the baseline: contract/refund/six, contract/refund/rate_limited"]
    assert cmp["score_base"] == 100.0 and cmp["counts"]["regressions"] == 2
    assert {d["id"]: (d["base_breached"], d["head_breached"]) for d in cmp["invariants"]}["completes"] == (0, 2)
    comment = render(Report.model_validate(buggy))
    assert comment.splitlines()[2].startswith(
        f"**2 new failures, 0 fixed** vs main (score 100.0 → {buggy['verdict']['score']:.1f})")

    code, again = run("again", "double_write,no_retry", baseline="buggy")  # main already fails the same way
    assert code == 0, again["verdict"]["reasons"]
    assert again["comparison"]["counts"]["still_failing"] == 2 and again["verdict"]["verdict"] == "pass"

    code, fixed = run("fixed", "", baseline="buggy")
    assert code == 0
    assert set(fixed["comparison"]["cells"][i]["id"] for i, c in enumerate(fixed["comparison"]["cells"])
               if c["change"] == "fixed") == {"contract/refund/six", "contract/refund/rate_limited"}


# -- pure comparisons on hand-made cells ------------------------------------------------------

def cell(cid: str, passes: list[bool], severity: str = "high") -> CellResult:
    runs = [RunResult(run=n, reason="ok", checks=[CheckResult(invariant="inv", severity=severity, passed=p,
                                                              message="")]) for n, p in enumerate(passes)]
    ok = sum(passes)
    outcome = InvariantOutcome(id="inv", severity=severity, passed_runs=ok, total_runs=len(passes),
                               pass_rate=ok / len(passes), breached=ok < len(passes), message="")
    return CellResult(id=cid, stage="contract", input_id="a", scenario=cid, seed=1, input="x",
                      status="fail" if ok < len(passes) else "pass", reason="ok", pass_rate=ok / len(passes),
                      invariants=[outcome], runs=runs, reproduce="")


def part(cells, digest="d1", runs=4) -> VerdictPart:
    return VerdictPart(verdict="pass", exit_code=0, score=90.0, min_score=80, reasons=[], seed=1, config="c.yaml",
                       config_digest=digest, runs_per_cell=runs,
                       counts={"cells": 0, "passed": 0, "failed": 0, "errors": 0, "flaky": 0}, stages=[],
                       invariants=[], outcome_tally={}, cells=cells)


def test_a_drop_is_a_regression_only_when_fisher_rejects():
    base = part([cell("flip4", [True] * 4), cell("flip3", [True] * 3), cell("wobble", [True, True, True, False])])
    head = [cell("flip4", [False] * 4), cell("flip3", [False] * 3), cell("wobble", [True, False, False, False])]
    cmp = {c.id: c for c in compare(base, head, [], 80.0, "d1", 0.05).cells}
    assert (cmp["flip4"].trend, cmp["flip4"].blocking, cmp["flip4"].p_value) == ("regression", True, 0.028571)
    assert (cmp["flip3"].trend, cmp["flip3"].blocking, cmp["flip3"].p_value) == ("inconclusive", False, 0.1)
    assert cmp["flip3"].base_interval == (0.4385, 1.0) and cmp["flip3"].head_interval == (0.0, 0.5615)
    assert cmp["wobble"].change == "still_failing" and cmp["wobble"].trend == "inconclusive"


def test_configs_that_share_some_cells_are_compared_on_those():
    base = part([cell("kept", [True]), cell("gone", [True])], digest="old", runs=1)
    cmp = compare(base, [cell("kept", [False]), cell("added", [True])], [], 50.0, "new", 0.05)
    assert {c.id: c.change for c in cmp.cells} == {"kept": "new_failure", "added": "new_cell",
                                                   "gone": "removed_cell"}
    assert cmp.shared_cells == 1 and not cmp.same_config and "another config" in cmp.notes[0]
    assert cmp.cells[0].blocking  # one run each: the status decides


def _config(**gate) -> Config:
    return Config.model_validate({"agent": {"url": "http://x", "invoke": {"http": {"url": "{{url}}"}}},
                                  "inputs": [{"id": "a", "text": "x"}], "gate": gate})


def test_fail_on_a_severity_floor_fails_on_any_breach_at_or_above_it():
    cells = [cell("c", [False], severity="high")]
    assert decide(_config(fail_on="critical", min_score=0), cells, [], 95.0)[0] == "pass"
    verdict, code, reasons = decide(_config(fail_on="high", min_score=0), cells, [], 95.0)
    assert (verdict, code, reasons) == ("fail", 1, ["invariant at high severity or above breached: inv"])
    assert decide(_config(fail_on="regression", min_score=0), cells, [], 95.0)[0] == "pass"  # no baseline: critical


def test_min_pass_k_floors_per_severity():
    cells = [cell("a", [True] * 4), cell("b", [True, True, True, False]), cell("c", [True] * 4, severity="low")]
    floors = pass_k_floors({"high": 0.9, "low": 1.0}, cells)
    assert [(f.severity, f.all_passed, f.pairs, f.pass_k) for f in floors] == [("high", 1, 2, 0.5), ("low", 1, 1, 1.0)]
    assert floor_reasons(floors, 4) == ["pass^4 of high invariants is 0.50 (1/2), under its floor 0.9"]


def test_the_action_takes_a_baseline_report_and_the_new_fail_on_values():
    from gate.github.inputs import read_inputs

    inputs = read_inputs({"INPUT_BASELINE-REPORT": "main/report.json", "INPUT_FAIL-ON": "regression"})
    assert (inputs.baseline_report, inputs.fail_on) == ("main/report.json", "regression")
    assert read_inputs({"INPUT_FAIL-ON": "high"}).fail_on == "high"
