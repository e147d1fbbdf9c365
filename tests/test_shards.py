"""Sharding the plan across a CI matrix and merging the shards back into one verdict."""


import pytest

from conftest import EXAMPLE, load_report
from gate.cli import main
from gate.config import load_config
from gate.plan import build_plan
from gate.plan.shard import assign, parse_shard, shard_of

CONFIG = str(EXAMPLE / "chaos-gate.yaml")


def verdict_text(path):
    text = (path / "report.json").read_text()
    return text[text.index('"verdict": {'):text.index('"timings"')]


def test_shards_cover_every_cell_once_balanced_and_stable():
    cells = build_plan(load_config(CONFIG).config)
    for total in (1, 2, 3, 4, 7):
        parts = [shard_of(cells, i, total, 1) for i in range(1, total + 1)]
        ids = [c.id for p in parts for c in p]
        assert sorted(ids) == sorted(c.id for c in cells) and len(ids) == len(set(ids))
        sizes = [len(p) for p in parts]
        assert max(sizes) - min(sizes) <= 1
        assert assign(cells, total, 1) == assign(cells, total, 1)


def test_parse_shard():
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "x", "1-2"):
        with pytest.raises(Exception, match="expected I/N"):
            parse_shard(bad)


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    assert main(["run", "-c", CONFIG, "-o", str(out), "--quiet"]) == 0
    return out


@pytest.mark.parametrize("total", [1, 3, 4])
def test_merged_shards_equal_one_unsharded_run(unsharded, tmp_path, total):
    reports = []
    for i in range(1, total + 1):
        out = tmp_path / f"s{i}"
        main(["run", "-c", CONFIG, "-o", str(out), "--quiet", "--shard", f"{i}/{total}"])
        assert load_report(out)["run"]["shard"] == {"index": i, "total": total}
        reports.append(str(out / "report.json"))
    merged = tmp_path / "merged"
    assert main(["merge", *reports, "-c", CONFIG, "-o", str(merged), "--quiet"]) == 0
    assert verdict_text(merged) == verdict_text(unsharded)
    assert (merged / "junit.xml").exists() and (merged / "summary.md").exists()


def test_missing_shard_and_other_seed_are_refused(tmp_path, capsys):
    for i in (1, 2):
        main(["run", "-c", CONFIG, "-o", str(tmp_path / f"s{i}"), "--quiet", "--shard", f"{i}/3"])
    main(["run", "-c", CONFIG, "-o", str(tmp_path / "seed9"), "--quiet", "--shard", "3/3", "--seed", "9"])
    capsys.readouterr()
    code = main(["merge", str(tmp_path / "s1/report.json"), str(tmp_path / "s2/report.json"), "-c", CONFIG,
                 "-o", str(tmp_path / "m")])
    assert code == 2 and "shard(s) 3/3 missing" in capsys.readouterr().err
    code = main(["merge", str(tmp_path / "s1/report.json"), str(tmp_path / "s2/report.json"),
                 str(tmp_path / "seed9/report.json"), "-c", CONFIG, "-o", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert code == 2 and "seed9/report.json" in err and "made with seed 9" in err
    code = main(["merge", str(tmp_path / "s1/report.json"), str(tmp_path / "s1/report.json"),
                 str(tmp_path / "s2/report.json"), "-c", CONFIG])
    assert code == 2 and "1/3 given more than once" in capsys.readouterr().err


def test_report_from_another_config_is_refused(tmp_path, capsys):
    other = tmp_path / "other.yaml"
    other.write_text((EXAMPLE / "chaos-gate.yaml").read_text().replace("min_score: 85", "min_score: 50")
                     .replace("command: [python3, agent.py]", f"command: [python3, {EXAMPLE / 'agent.py'}]"))
    main(["run", "-c", str(other), "-o", str(tmp_path / "o"), "--quiet", "--shard", "1/1"])
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "o/report.json"), "-c", CONFIG]) == 2
    assert "made from another config" in capsys.readouterr().err


def test_merged_coverage_keeps_the_unsharded_order():
    """Shard 1 may hold a later scenario's cells only: the merge still lists scenarios in plan order."""
    from types import SimpleNamespace

    from gate.report.model import FaultCoverage, ScenarioCoverage
    from gate.verdict.coverage import merge_coverage

    def sc(name, fired):
        return ScenarioCoverage(stage="contract", scenario=name, cells=1, faults=[FaultCoverage(
            index=0, fault="rate_limit", target="llm", matched=1, fired=fired, status="fired" if fired else "never_fired")])

    plan = [SimpleNamespace(stage="contract", scenario=s) for s in ("baseline", "alpha", "beta", "gamma")]
    merged = merge_coverage([[sc("gamma", 1), sc("beta", 0)], [sc("alpha", 1), sc("beta", 1)]], plan)
    assert [m.scenario for m in merged] == ["alpha", "beta", "gamma"]
    assert merged[1].faults[0].fired == 1 and merged[1].faults[0].status == "fired" and merged[1].cells == 2
