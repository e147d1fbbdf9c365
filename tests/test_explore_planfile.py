"""The exploration plan as a file (gate/explore/planfile.py): discovered once, every shard of a matrix
explores its deal of it without re-running the other inputs' baselines, and the merged verdict is the
unsharded run's. Driven on tests/agents/refund_desk, whose exploration takes seconds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import load_report
from gate.cli import main
from gate.errors import ConfigError
from gate.explore.planfile import dump_plan, load_plan
from gate.explore.planner import ExplorePlan

DESK = Path(__file__).parent / "agents" / "refund_desk"


@pytest.fixture
def desk(tmp_path, monkeypatch):
    for name in ("agent.py", "chaos-gate.yaml"):
        shutil.copy(DESK / name, tmp_path / name)
    shutil.copy(DESK.parent.parent / "httpkit.py", tmp_path / "httpkit.py")
    monkeypatch.setenv("BUGS", "double_refund")
    return tmp_path / "chaos-gate.yaml"


def verdict_of(report):
    cells = {c["id"]: (c["status"], sorted(b["id"] for b in c["invariants"] if b["breached"]))
             for c in report["verdict"]["cells"]}
    return report["run"]["plan"], cells, report["verdict"]["verdict"], report["verdict"]["explore"]


def test_a_matrix_discovers_once_and_each_shard_runs_its_deal_of_the_plan(desk, tmp_path, capsys):
    plan = tmp_path / "plan.json"
    assert main(["explore", "--discover", str(plan), "-c", str(desk), "-o", str(tmp_path / "d"), "--quiet"]) == 0
    assert "→" in capsys.readouterr().out
    doc = json.loads(plan.read_text())
    assert doc["sites"] == 2 and len(doc["points"]) == doc["planned"] > 15
    discovery = load_report(tmp_path / "d")
    assert [c["id"] for c in discovery["verdict"]["cells"]] == ["contract/refund/baseline"]  # nothing explored yet
    for n in (1, 2):
        main(["run", "-c", str(desk), "--explore-plan", str(plan), "--shard", f"{n}/2", "-o", str(tmp_path / f"s{n}"),
              "--quiet"])
    assert main(["merge", "-c", str(desk), "-o", str(tmp_path / "m"), "--quiet",
                 *(str(tmp_path / f"s{n}" / "report.json") for n in (1, 2))]) == 1
    main(["run", "-c", str(desk), "-o", str(tmp_path / "whole"), "--quiet"])
    merged, whole = load_report(tmp_path / "m"), load_report(tmp_path / "whole")
    assert verdict_of(merged) == verdict_of(whole)
    assert "chaos/refund/explore/shop-POST-refunds-1/timeout_after_write" in \
        {f["cell"] for f in merged["verdict"]["explore"]["findings"]}
    ran_baseline = ["contract/refund/baseline" in {c["id"] for c in load_report(tmp_path / f"s{n}")["verdict"]["cells"]}
                    for n in (1, 2)]
    assert sorted(ran_baseline) == [False, True]  # only the shard dealt the baseline ran it


def test_a_plan_from_another_seed_or_not_a_plan_is_refused_with_the_fix(desk, tmp_path, capsys):
    plan = tmp_path / "plan.json"
    plan.write_text(dump_plan(ExplorePlan(), "0123456789abcdef", seed=99))
    code = main(["run", "-c", str(desk), "--explore-plan", str(plan), "-o", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "discovered for another config or seed" in err and "explore --discover" in err
    with pytest.raises(ConfigError, match="not an exploration plan"):
        load_plan('{"format": 1, "points": [{}]}', "x.json", "d", 0)
    code = main(["run", "-c", str(desk), "--explore-plan", str(tmp_path / "missing.json"), "-o", str(tmp_path / "o2"),
                 "--quiet"])
    assert code == 2 and "cannot read it" in capsys.readouterr().err
