"""Exploration finds the bank agent's planted bugs (tests/agents/bank/agent.py) from a config with no
scenario and no invariant, each by the oracle meant for it, while its sound twin passes the same
exploration: HTTP reads and writes, an in-process function tool, bugs that show only at a later
model call, only on the second write, only in a later request to the same process."""

import json
import os

import pytest

from conftest import ROOT, load_report
from gate.cli import main
from gate.explore.planner import REPEATS_OUTAGE

BANK = ROOT / "tests" / "agents" / "bank"


def explore(tmp_path, bugs="", *extra):
    os.environ["BUGS"] = bugs
    try:
        code = main(["run", "-c", str(BANK / "chaos-gate.yaml"), "-o", str(tmp_path), "--quiet", *extra])
    finally:
        os.environ.pop("BUGS", None)
    return code, load_report(tmp_path)


def findings(report):
    return {f["cell"].split("/explore/")[-1]: f for f in report["verdict"]["explore"]["findings"]}


def test_the_sound_bank_agent_passes_every_explored_fault(tmp_path):
    code, report = explore(tmp_path)
    summary = report["verdict"]["explore"]
    assert code == 0, [(c["id"], c["reason"]) for c in report["verdict"]["cells"] if c["status"] != "pass"]
    dropped = summary["pruned"].get(REPEATS_OUTAGE, 0)
    assert summary["sites"] == 8 and summary["run"] + dropped == 60 and not summary["findings"]
    assert dropped >= 1  # an outage whose single error drew no second call: the same run, not repeated
    assert summary["pruned"]["same call site in an earlier input"] > 0
    reached = report["verdict"]["reach"]
    assert "bank_tools:send_receipt" in json.dumps(reached)  # the in-process tool was explored too
    kinds = {c["id"].rsplit("/", 1)[1] for c in report["verdict"]["cells"] if "/explore/" in c["id"]}
    assert {"timeout_after_write", "error", "timeout", "inject", "rate_limit", "empty"} <= kinds


PLANTED = [
    # bug, the oracle meant for it, a cell (after /explore/) where it must be found
    ("fresh_key_retry", "writes_once", "bank-POST-transfers-1/timeout_after_write"),
    ("fresh_key_second", "writes_once", "bank-POST-transfers-2/timeout_after_write"),  # the second write only
    ("crash_on_tool_error", "survives", "bank-GET-accounts-alice-1/error"),
    ("claims_success", "honest_failure", "bank-POST-transfers/outage"),  # only when the retry fails too
    ("no_timeout", "answers_in_time", "bank-POST-transfers-1/timeout"),
    ("retry_storm", "bounded_retries", "bank-POST-transfers/outage"),
    ("accept_cut", "whole_answer", "llm-openai-4/cut_content"),  # the final model call only
    # seen by a later request to the same process; its client first timed out under the held write's answer
    ("poisoned", "recovers", "bank-POST-transfers-1/hang_after_write"),
]


@pytest.mark.parametrize("bug, oracle, where", PLANTED, ids=[p[0] for p in PLANTED])
def test_each_planted_bug_is_found_by_its_oracle(tmp_path, bug, oracle, where):
    """The explored cells of the site where it shows (the whole exploration is the sound twin's test,
    and bench/bench_explore.py's): planned from the baselines like every explored cell."""
    site = where.rsplit("/", 1)[0]
    code, report = explore(tmp_path, bug, "--only", f"chaos/*/explore/{site}/*")
    found = findings(report)
    assert code != 0 or oracle in ("bounded_retries", "whole_answer", "recovers"), code  # high: the score drops
    assert where in found, sorted(found)
    hits = [f for f in report["verdict"]["explore"]["findings"] if f["invariant"] == oracle]
    assert hits, [(f["cell"], f["invariant"]) for f in report["verdict"]["explore"]["findings"]]
    assert found[where]["invariant"] == oracle or any(f["cell"].endswith(where) for f in hits)


@pytest.fixture
def small_bank():
    """The bank config with a budget of 12 explored cells, beside the original (its paths are relative)."""
    text = (BANK / "chaos-gate.yaml").read_text().replace("concurrency: 2\n", "concurrency: 2\nchaos: {explore: {budget: 12}}\n")
    path = BANK / f".small-{os.getpid()}-{id(text)}.yaml"
    path.write_text(text)
    yield path
    path.unlink()


def verdict_of(report):
    cells = {c["id"]: (c["status"], c["reason"], sorted(b["id"] for b in c["invariants"] if b["breached"]))
             for c in report["verdict"]["cells"]}
    return report["run"]["plan"], cells, report["verdict"]["verdict"], report["verdict"]["explore"]


def test_the_plan_and_the_verdict_are_the_same_at_any_concurrency_and_over_merged_shards(tmp_path, small_bank):
    os.environ["BUGS"] = "fresh_key_retry"
    try:
        def run(out, *extra):
            main(["run", "-c", str(small_bank), "-o", str(tmp_path / out), "--quiet", *extra])
            return load_report(tmp_path / out)

        one, four = run("k1", "--concurrency", "1"), run("k4", "--concurrency", "4")
        for n in (1, 2, 3):
            run(f"s{n}", "--shard", f"{n}/3")
        assert main(["merge", "-c", str(small_bank), "-o", str(tmp_path / "merged"), "--quiet",
                     *(str(tmp_path / f"s{n}" / "report.json") for n in (1, 2, 3))]) == 1
    finally:
        os.environ.pop("BUGS", None)
    merged = load_report(tmp_path / "merged")
    assert verdict_of(one) == verdict_of(four) == verdict_of(merged)
    assert len(one["run"]["plan"]) == 2 + 12 and one["verdict"]["explore"]["findings"]
    shard_cells = [len(load_report(tmp_path / f"s{n}")["verdict"]["cells"]) for n in (1, 2, 3)]
    assert sum(shard_cells) == 14 and max(shard_cells) < 14  # each shard ran its deal, not the whole


KEYLESS = [("", None), ("fresh_key_retry", "writes_once"), ("crash_on_tool_error", "survives")]


@pytest.mark.parametrize("bug, oracle", KEYLESS, ids=["sound", "fresh_key_retry", "crash_on_tool_error"])
def test_keyless_exploration_walks_every_tool_and_finds_the_tool_bugs(tmp_path, bug, oracle):
    """No sim rule: the sim walks the offered tools, so exploration reaches them with no key."""
    os.environ["BUGS"] = bug
    try:
        only = [] if oracle is None else ["--only", "contract/*", "--only", "chaos/*/explore/bank-*"]
        code = main(["run", "-c", str(BANK / "keyless.yaml"), "-o", str(tmp_path), "--quiet", "--full-report",
                     *only])
    finally:
        os.environ.pop("BUGS", None)
    report = load_report(tmp_path)
    baseline = report["verdict"]["cells"][0]
    called = {s["tool"] or s["target"] for s in baseline["runs"][0]["trace"] if s["kind"] == "tool"}
    assert {"bank", "send_receipt"} <= called, called
    assert {s["method"] for s in baseline["runs"][0]["trace"] if s["target"] == "bank"} == {"GET", "POST"}
    assert any("sim walk" in s["note"] for s in baseline["runs"][0]["trace"])
    found = {f["invariant"] for f in report["verdict"]["explore"]["findings"]}
    if oracle is None:
        assert code == 0 and not found, found
    else:
        assert code == 1 and oracle in found, found
