"""Exploration trusts a sound agent under a model that never answers twice alike (issue 50, items 1-2).

tests/wobbly_model.py varies what a real model varies — the answer's words, one more read, reads
reordered or batched, latency — seeded per conversation. The bank agent's sound twin, explored with
nothing written but how to start it and two inputs, passes under it for every seed; its planted bugs
are still found by the oracle meant for each.
"""

import json
import os

import pytest

import wobbly_model
from conftest import ROOT, load_report
from gate.cli import main

BANK = ROOT / "tests" / "agents" / "bank"
RULES = [
    {"when": r"move (\d+) from (\w+) to (\w+) and (\d+) to (\w+)",
     "writes": [["transfer", {"from_account": "{2}", "to_account": "{3}", "amount": "{1}"}],
                ["transfer", {"from_account": "{2}", "to_account": "{5}", "amount": "{4}"}]],
     "extra_read": ["get_balance", {"account": "{2}"}],
     "answers": ["Moved {1} to {3} and {4} to {5}.", "Done: {1} went to {3}, {4} to {5}, both from {2}.",
                 "I've transferred {1} to {3} and {4} to {5} from {2}'s account."]},
    {"when": r"transfer (\d+) from (\w+) to (\w+)",
     "reads": [["get_balance", {"account": "{2}"}]],
     "extra_read": ["get_balance", {"account": "{3}"}],
     "writes": [["transfer", {"from_account": "{2}", "to_account": "{3}", "amount": "{1}"}],
                ["send_receipt", {"account": "{2}", "text": "Sent {1} to {3}"}]],
     "answers": ["Transferred {1} from {2} to {3}. Your receipt is on its way.",
                 "Done! {1} moved from {2} to {3}, and a receipt has been sent.",
                 "{2} sent {1} to {3}; the receipt is in the outbox."]},
]


@pytest.fixture(scope="module")
def model():
    with wobbly_model.serving(RULES) as url:
        yield url


def explore(tmp_path, model_url, seed, bugs="", *extra, samples=2, budget=12):
    """`budget`: the most telling points under this seed's baselines (a planted bug's cells are among the 30)."""
    text = (BANK / "chaos-gate.yaml").read_text().replace(
        "concurrency: 2\n", f"concurrency: 2\nchaos: {{explore: {{baseline_runs: {samples}, budget: {budget}}}}}\n")
    text = text.replace("  - {name: openai, provider: openai, upstream: sim}",
                        f"  - {{name: openai, provider: openai, upstream: \"{model_url}\"}}")
    config = BANK / f".wobbly-{os.getpid()}-{seed}.yaml"
    config.write_text(text)
    # at 1x: under libfaketime a timed Condition wait (the bank's receipt `result(timeout=3)`) hangs, which
    # would blame the agent for the dilation's own fault
    os.environ["BUGS"], os.environ["WOBBLE_SEED"] = bugs, str(seed)
    try:
        code = main(["run", "-c", str(config), "-o", str(tmp_path), "--quiet", *extra])
    finally:
        os.environ.pop("BUGS", None)
        config.unlink()
    return code, load_report(tmp_path)


@pytest.mark.parametrize("seed", range(5))
def test_the_sound_bank_passes_under_a_model_that_never_answers_twice_alike(tmp_path, model, seed):
    code, report = explore(tmp_path, model, seed)
    failing = [(c["id"], c["reason"], [i["message"] for i in c["invariants"] if i.get("breached")])
               for c in report["verdict"]["cells"] if c["status"] not in ("pass", "skipped")]
    assert code == 0 and not failing, failing
    assert report["verdict"]["explore"]["run"] >= 10  # the 12 most telling points (one may drop as a repeat)
    baselines = [c for c in report["verdict"]["cells"] if c["id"].endswith("/baseline")]
    assert all(len(c["runs"]) == 2 for c in baselines)  # each sampled twice: its variance learned


@pytest.mark.parametrize("bug, oracle, site", [
    ("fresh_key_retry", "writes_once", "bank-POST-transfers-1"),
    ("crash_on_tool_error", "survives", "bank-GET-accounts-alice-1"),
])
def test_planted_bugs_are_still_found_under_it(tmp_path, model, bug, oracle, site):
    code, report = explore(tmp_path, model, 1, bug, "--only", f"chaos/*/explore/{site}/*", budget=30)
    assert code != 0
    assert oracle in {f["invariant"] for f in report["verdict"]["explore"]["findings"]}
    ran = [c for c in report["verdict"]["cells"] if "/explore/" in c["id"] and c["status"] != "skipped"]
    assert report["verdict"]["explore"]["run"] == len(ran) < report["verdict"]["explore"]["planned"]  # --only's own


def test_the_model_varies_what_a_real_model_varies(monkeypatch):
    """Without this the tests above would prove nothing about variance: over a few conversations of one
    input, its answers are worded differently and its reads differ in number and in grouping."""
    monkeypatch.setenv("WOBBLE_RULES", json.dumps(RULES))
    monkeypatch.setattr(wobbly_model.time, "sleep", lambda s: None)
    user = {"role": "user", "content": "Please transfer 50 from alice to bob."}
    answers, first_turns = set(), set()
    for _ in range(12):
        message, finish = wobbly_model.answer({"messages": [user]})
        assert finish == "tool_calls"
        first_turns.add(tuple(json.loads(c["function"]["arguments"])["account"] for c in message["tool_calls"]))
        history = [user]
        while finish == "tool_calls":
            history.append(message)
            history += [{"role": "tool", "tool_call_id": c["id"], "content": "{\"ok\": true}"}
                        for c in message["tool_calls"]]
            message, finish = wobbly_model.answer({"messages": history})
        answers.add(message["content"])
    assert len(answers) >= 2 and len(first_turns) >= 2, (answers, first_turns)
