"""Sharding the plan across a CI matrix and merging the shards back into one verdict."""


import pytest

from conftest import EXAMPLE, load_report, same_text
from gate.cli import main
from gate.plan import load_config
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
    same_text(verdict_text(merged), verdict_text(unsharded))
    assert (merged / "junit.xml").exists() and (merged / "summary.md").exists()
    separated = load_report(unsharded)["run"]["separation"]  # what the box did is kept, not dropped
    assert separated and load_report(merged)["run"]["separation"] == separated


def test_merged_separation_keeps_every_shards_part_once():
    from gate.verdict.merge import merge_separation

    boxed, fell_back = "agents run as chaos-agent (uid 999)", "not separated: /root is out of reach"
    assert merge_separation([boxed, boxed, None]) == boxed
    assert merge_separation([boxed, f"{boxed}; {fell_back}"]) == f"{boxed}; {fell_back}"
    assert merge_separation([None, None]) is None


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


# -- shards = one run: every bundled example, --runs 3, in-process and MCP tools -------------------
ROOT = EXAMPLE.parent
BUNDLED = {"sdk_agent": ROOT / "sdk_agent" / "chaos-gate.yaml", "worlds_agent": ROOT / "worlds_agent" / "chaos-gate.yaml"}


def run_sharded(config: str, tmp_path, total: int, *extra: str) -> tuple[int, object]:
    """Run `config` as `total` shards and merge them: (merge's exit code, the merged output dir)."""
    reports = []
    for i in range(1, total + 1):
        out = tmp_path / f"s{i}"
        main(["run", "-c", config, "-o", str(out), "--quiet", "--shard", f"{i}/{total}", *extra])
        reports.append(str(out / "report.json"))
    merged = tmp_path / "merged"
    return main(["merge", *reports, "-c", config, "-o", str(merged), "--quiet", *extra]), merged


def run_whole(config: str, out, *extra: str) -> int:
    return main(["run", "-c", config, "-o", str(out), "--quiet", *extra])


@pytest.fixture(scope="module")
def bundled_whole(tmp_path_factory):
    """Each bundled example run once, unsharded: (exit code, output dir)."""
    import contextlib
    import io

    done = {}
    for name, config in BUNDLED.items():
        out, terminal = tmp_path_factory.mktemp(name), io.StringIO()
        with contextlib.redirect_stdout(terminal), contextlib.redirect_stderr(terminal):
            code = main(["run", "-c", str(config), "-o", str(out)])  # not quiet: the terminal is checked too
        (out / "terminal.txt").write_text(terminal.getvalue())
        done[name] = (code, out)
    return done


def test_the_first_run_raises_no_false_not_reached_alarm(bundled_whole):
    """The README's first run: every tool it has is HTTP and reached, so nothing says "not reached"."""
    code, out = bundled_whole["sdk_agent"]
    report = load_report(out)
    assert code == 0 and report["verdict"]["reach"]["notes"] == []
    for name in ("terminal.txt", "summary.md"):
        text = (out / name).read_text()
        assert "PASS" in text and "not reached" not in text.lower(), name


@pytest.mark.parametrize("name, total", [("sdk_agent", 3), ("worlds_agent", 2), ("worlds_agent", 3)])
def test_bundled_examples_sharded_and_merged_equal_the_unsharded_verdict(bundled_whole, name, total, tmp_path):
    """The sdk example's `side_effect_once` names tool 'orders': every shard must carry what its cells
    called, or the merge finds no call to it and calls the run vacuous (it did, before)."""
    code, whole = bundled_whole[name]
    assert code == 0, verdict_text(whole)[:2000]
    merged_code, merged = run_sharded(str(BUNDLED[name]), tmp_path, total)
    same_text(verdict_text(merged), verdict_text(whole))
    assert merged_code == code


def test_runs_3_sharded_equal_unsharded(tmp_path):
    config = CONFIG  # the support example: repeat statistics and pass rates over three runs per cell
    code = run_whole(config, tmp_path / "whole", "--runs", "3")
    merged_code, merged = run_sharded(config, tmp_path, 2, "--runs", "3")
    assert load_report(merged)["verdict"]["runs_per_cell"] == 3
    same_text(verdict_text(merged), verdict_text(tmp_path / "whole"))
    assert merged_code == code


def in_process_config(tmp_path, agent: str) -> str:
    """A baseline and a fault only the in-process seam can reach (a cell each, so each shard holds one),
    invariants naming the tool."""
    import json
    import sys

    from conftest import AGENTS, write_config

    doc = {
        "version": 1, "seed": 5,
        "agent": {"invoke": {"command": {"command": [sys.executable, str(AGENTS / "inprocess_a" / agent)], "env": {
            "LEDGER": str(tmp_path / "ledger.txt"), "VARIANT": "sound", "OPENAI_API_KEY": "sk-sim",
            "OPENAI_AGENTS_DISABLE_TRACING": "1"}}}, "timeout": 60},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "sim": {"rules": [{"when": r"refund.*?(\d{3,})", "on_error": {"action": "apologize"},
                           "steps": [{"call": "issue_refund", "arguments": {"order_id": "{{1}}"}},
                                     {"answer": "Your refund for order {{1}} has been issued."}]}]},
        "inputs": [{"id": "refund", "text": "Please refund order 1234, it arrived damaged."}],
        "mutation": {"enabled": False}, "shrink": {"enabled": False},
        "contract": {"invariants": [
            {"id": "completes", "type": "completes", "severity": "critical"},
            {"id": "refund-once", "type": "side_effect_once", "tool": "issue_refund", "severity": "critical"},
            {"id": "refunded", "type": "tool_called", "tool": "issue_refund", "severity": "high",
             "when": {"scenario": "baseline"}}],
            "scenarios": [{"name": "in_process", "faults": [
                {"kind": "timeout_after_write", "tool": "issue_refund", "on_calls": [1], "seconds": 0.2}]}]},
        "gate": {"min_score": 0}, "concurrency": 1,
    }
    return str(write_config(tmp_path, json.dumps(doc, indent=1)))


@pytest.mark.parametrize("agent, needs", [("openai_agents_refund.py", "agents.mcp"),
                                          ("mcp_client_refund.py", "mcp")])
def test_in_process_and_mcp_tools_sharded_equal_unsharded(agent, needs, tmp_path):
    pytest.importorskip(needs)
    config = in_process_config(tmp_path, agent)
    code = run_whole(config, tmp_path / "whole")
    whole = load_report(tmp_path / "whole")
    assert whole["verdict"]["verdict"] != "error", whole["verdict"]["reasons"]
    assert all(c["reached"]["tools"] for c in whole["verdict"]["cells"])  # every row says what it called
    merged_code, merged = run_sharded(config, tmp_path, 2)
    same_text(verdict_text(merged), verdict_text(tmp_path / "whole"))
    assert merged_code == code


def test_a_report_of_another_gate_version_is_refused_naming_the_shard(tmp_path, capsys):
    import json

    for i in (1, 2):
        main(["run", "-c", CONFIG, "-o", str(tmp_path / f"s{i}"), "--quiet", "--shard", f"{i}/2"])
    path = tmp_path / "s2" / "report.json"
    doc = json.loads(path.read_text())
    doc["run"]["tool_version"] = "0.0.1"
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "s1/report.json"), str(path), "-c", CONFIG]) == 2
    err = capsys.readouterr().err
    assert "s2/report.json" in err and "chaos-gate 0.0.1" in err
