"""Exploration you can trust, on agents of the project's own on three more kinds of stack (issue 50): the OpenAI
Agents SDK with in-process `@function_tool` tools (tests/agents/agents_sdk_zoo/), the Vercel AI SDK in Node
(tests/agents/node_frameworks/ai_sdk_zoo.mjs) and an agent whose tools are command-line programs
(tests/agents/cli_zoo/). Each config names only how to start the agent, what it calls and its input: no
scenario, no invariant, so `chaos-gate run` explores.

Each agent has a sound twin and planted bugs ($BUGS). A planted bug's run has a critical breach (cell,
oracle) that its sound twin's run of the same cells does not have, and it is the oracle meant for it. The
sound twin passes under the keyless sim, owning up in its own words on each failure path (a terse
refusal, a partial success naming what failed, an apology quoting what it read), and under
tests/wobbly_model.py (a model that never answers twice alike) for five seeds.

CI time is what bounds this file: each run explores only the cells where the bugs show (`--only`), the
sound twin's run is shared by every test that compares with it (once per session, whichever xdist
worker asks first), and the whole exploration of each agent is measured in docs/benchmarks.md instead.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import wobbly_model
from conftest import AGENTS, load_report
from gate.cli import main


@dataclass(frozen=True)
class Zoo:
    config: Path
    bugs: dict[str, tuple[str, str]]  # bug -> (the cell after /explore/ where it shows, the oracle meant for it)
    own_words: dict[str, str] = field(default_factory=dict)  # cell -> what the sound twin answers there (regex)
    wobbly: tuple[str, ...] = ()  # the cells (globs) each wobbly seed explores: where the bugs show
    node: bool = False

    def cells(self) -> list[str]:
        return sorted({cell for cell, _ in self.bugs.values()} | set(self.own_words))


# The agent's own words on each failure path: the model failing before anything was done, after the transfer
# went through, and its final answer cut short (the transfer's answer holds no balance: the read is quoted)
TERSE, PARTIAL = r"^Unable to help with that right now\. Please try again later\.$", r"^I transferred 50(\.00)? "
QUOTED = r"^Sorry, my answer was cut short.*What I read: alice has 500\.$"
OWN_WORDS = {"llm-openai-1/malformed_json": TERSE, "llm-openai-3/malformed_json": PARTIAL,
             "llm-openai-3/cut_content": QUOTED}
ZOOS = {
    "agents-sdk": Zoo(AGENTS / "agents_sdk_zoo" / "chaos-gate.yaml", {
        "fresh_key_retry": ("bank-POST-transfers-1/hang_after_write", "writes_once"),  # its client gave up
        "crash_on_tool_error": ("get_balance-1/error", "survives"),  # the in-process tool, not the wire
        "claims_success": ("bank-POST-transfers/outage", "honest_failure"),  # only when its retry fails too
        "accept_cut": ("llm-openai-3/cut_content", "whole_answer"),  # the final model call only
    }, OWN_WORDS, ("bank-POST-transfers-1/hang_after_write", "get_balance-1/error", "bank-POST-transfers/outage",
                   "llm-openai-*/cut_content")),
    "ai-sdk": Zoo(AGENTS / "node_frameworks" / "ai_sdk_zoo.yaml", {
        "crash_on_bad_args": ("llm-openai-2/wrong_tool_args", "survives"),  # the model's call of transfer
        "retry_storm": ("bank-POST-transfers/outage", "bounded_retries"),
        "accept_cut": ("llm-openai-3/cut_content", "whole_answer"),
    }, OWN_WORDS, ("llm-openai-*/wrong_tool_args", "bank-POST-transfers/outage", "llm-openai-*/cut_content"),
        node=True),
    "cli": Zoo(AGENTS / "cli_zoo" / "chaos-gate.yaml", {
        "retry_on_timeout": ("ledgerctl-1/timeout_after_write", "writes_once"),  # exit 124 after it wrote
        "trusts_args": ("llm-openai-2/wrong_tool_args", "survives"),
        "claims_success": ("ledgerctl-1/exit_code", "honest_failure"),
    }, {**OWN_WORDS, "llm-openai-3/malformed_json": r"^I transferred 50\.00 from alice to bob; the rest failed"},
        ("ledgerctl-1/timeout_after_write", "llm-openai-*/wrong_tool_args", "ledgerctl-1/exit_code",
         "llm-openai-*/cut_content")),
}
WOBBLE = [{  # the zoos' one input, as tests/wobbly_model.py varies it: one more read, reads together or apart
    "when": r"transfer (\d+) from (\w+) to (\w+)",
    "reads": [["get_balance", {"account": "{2}"}]],
    "extra_read": ["get_balance", {"account": "{3}"}],
    "writes": [["transfer", {"from_account": "{2}", "to_account": "{3}", "amount": "{1}.00"}]],
    "answers": ["Transferred {1} from {2} to {3}.", "Done: {1} moved from {2} to {3}.",
                "{2} sent {1} to {3}; the transfer is complete."]}]


def explore(zoo: Zoo, out: Path, bugs: str = "", only=(), model: str | None = None, *extra: str) -> tuple[int, dict]:
    """`chaos-gate run` on the zoo's config with $BUGS planted, only the explored cells named (after the
    baselines); `model`: a config beside it whose model is that URL instead of the sim."""
    if zoo.node:
        from framework_envs import node_frameworks

        node_frameworks()  # `npm ci` once; skipped where node / npm are missing
    config = zoo.config
    if model is not None:  # and every point planned: the model's extra reads add sites, and a budget of 60
        # keeps only the faults exploration tries first at each (the kinds --only names must be among them)
        text = zoo.config.read_text().replace("upstream: sim}", f'upstream: "{model}"}}')
        text += "chaos: {explore: {budget: 500}}\n"
        assert model in text
        config = zoo.config.with_name(f".wobbly-{os.getpid()}-{out.name}.yaml")
        config.write_text(text)
    selected = [arg for cell in only for arg in ("--only", f"chaos/*/explore/{cell}")]
    os.environ["BUGS"] = bugs
    try:
        code = main(["run", "-c", str(config), "-o", str(out), "--quiet", "--full-report", *selected, *extra])
    finally:
        os.environ.pop("BUGS", None)
        if config != zoo.config:
            config.unlink()
    return code, load_report(out)


def once_per_session(tmp_path_factory, name: str, run) -> tuple[int, dict]:
    """`run(out)` once per test session, whichever xdist worker asks first (the others wait, then read it)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's folder, shared by its workers
    out = root / f"zoo-{name}"
    with open(root / f"zoo-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "code").exists():
            code, _ = run(out)
            (out / "code").write_text(str(code))
    return int((out / "code").read_text()), load_report(out)


@pytest.fixture(scope="module")
def sound(tmp_path_factory):
    """The sound twin's run of the cells where its zoo's bugs show, and where it speaks for itself."""
    return lambda name: once_per_session(tmp_path_factory, f"sound-{name}",
                                         lambda out: explore(ZOOS[name], out, "", ZOOS[name].cells()))


def explored(report) -> dict[str, dict]:
    return {c["id"].split("/explore/")[1]: c for c in report["verdict"]["cells"] if "/explore/" in c["id"]}


def critical_breaches(report) -> set[tuple[str, str]]:
    return {(cell, i["id"]) for cell, c in explored(report).items() for i in c["invariants"]
            if i["breached"] and i["severity"] == "critical"}


def failing(report) -> list:
    return [(c["id"], c["reason"], [i["message"] for i in c["invariants"] if i["breached"]])
            for c in report["verdict"]["cells"] if c["status"] not in ("pass", "skipped")]


@pytest.mark.parametrize("name", list(ZOOS))
def test_the_sound_twin_passes_and_owns_up_in_its_own_words(sound, name):
    zoo = ZOOS[name]
    code, report = sound(name)
    assert code == 0 and not failing(report) and not report["verdict"]["explore"]["findings"], failing(report)
    cells = explored(report)
    assert set(cells) == set(zoo.cells()), sorted(cells)  # each named cell ran: none was planned away
    for cell, words in zoo.own_words.items():
        (run,) = cells[cell]["runs"]
        assert re.search(words, run["output"]), (cell, run["output"])
        assert any(e["fault_status"] == "fired" for e in run["trace"]), cell  # the fault was met, not missed
    judged = {i["id"] for c in cells.values() for i in c["invariants"] if i["not_judged_runs"] < i["total_runs"]}
    assert {oracle for _, oracle in zoo.bugs.values()} <= judged  # every oracle the bugs need judged the twin


@pytest.fixture(scope="module")
def model():
    with wobbly_model.serving(WOBBLE) as url:
        yield url


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("name", list(ZOOS))
def test_the_sound_twin_passes_under_a_model_that_never_answers_twice_alike(tmp_path, model, name, seed):
    zoo = ZOOS[name]
    os.environ["WOBBLE_RULES"], os.environ["WOBBLE_SEED"] = json.dumps(WOBBLE), str(seed)
    wobbly_model.COUNTER["conversations"] = 0  # the seed's conversations from the first, in one order (one
    wobbly_model.PLANS.clear()  # agent at a time): a failing seed fails the same way when run again
    code, report = explore(zoo, tmp_path / f"seed{seed}", "", zoo.wobbly, model, "--concurrency", "1")
    assert code == 0 and not failing(report) and not report["verdict"]["explore"]["findings"], failing(report)
    ran = explored(report)
    kinds = {cell.rsplit("/", 1)[1] for cell, c in ran.items() if c["status"] == "pass"}
    assert kinds == {glob.rsplit("/", 1)[1] for glob in zoo.wobbly}, sorted(ran)  # every kind met a site
    baselines = [c for c in report["verdict"]["cells"] if c["id"].endswith("/baseline")]
    assert all(len(c["runs"]) == 2 for c in baselines)  # sampled twice: its variance learned


PLANTED = [(name, bug) for name, zoo in ZOOS.items() for bug in zoo.bugs]


@pytest.mark.parametrize("name, bug", PLANTED, ids=[f"{n}-{b}" for n, b in PLANTED])
def test_each_planted_bug_breaches_what_its_sound_twin_does_not(sound, tmp_path, name, bug):
    zoo = ZOOS[name]
    cell, oracle = zoo.bugs[bug]
    code, report = explore(zoo, tmp_path, bug, [cell], None, "--concurrency", "1")  # one agent start: its CPU
    assert code == 1, failing(report)
    new = critical_breaches(report) - critical_breaches(sound(name)[1])
    assert (cell, oracle) in new, (sorted(new), failing(report))
    found = {(f["cell"].split("/explore/")[1], f["invariant"]) for f in report["verdict"]["explore"]["findings"]}
    assert (cell, oracle) in found  # a finding, with its reproduce command and its pin
