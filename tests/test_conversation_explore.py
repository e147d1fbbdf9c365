"""Exploration over turns and sessions (issue 51, items 2-4): the support desk (tests/agents/support_desk) keeps
each customer's conversation on its server, and its config names nothing but how to start it and two
conversations. Each planted bug shows only across turns or across sessions, and each is found by the
oracle meant for it, in a cell its sound twin passes; the twin passes the whole exploration, under the sim
and under the tests' own nondeterministic model."""

import os

import pytest

import wobbly_model
from conftest import ROOT, load_report
from gate.cli import main

DESK = ROOT / "tests" / "agents" / "support_desk"
WOBBLE = [
    {"when": r"where is my order (\d+)", "reads": [["lookup_order", {"order_id": "{1}"}]],
     "extra_read": ["lookup_order", {"order_id": "{1}"}],
     "answers": ["Order {1} is on its way.", "Your order {1} has shipped.", "{1} is shipped and on the road."]},
    {"when": r"cancel order (\d+)", "writes": [["cancel_order", {"order_id": "{1}"}]],
     "answers": ["Order {1} is cancelled.", "Done: {1} is cancelled.", "I have cancelled order {1} for you."]},
    {"when": r"opening hours", "answers": ["We are open 9 to 5, Monday to Saturday.", "9 to 5, Mon-Sat."]},
    {"when": r"sunday", "answers": ["On Sundays we are closed.", "Closed on Sundays, sorry!"]},
]


def explore(tmp_path, bugs="", *extra, model=None, shape="chaos-gate.yaml"):
    config = DESK / shape if "/" not in shape else ROOT / "tests" / "agents" / shape
    if model is not None:
        text = config.read_text().replace("  - {name: openai, provider: openai, upstream: sim}",
                                          f"  - {{name: openai, provider: openai, upstream: \"{model}\"}}")
        config = DESK / f".wobbly-{os.getpid()}-{tmp_path.name}.yaml"
        config.write_text(text)
    os.environ["BUGS"] = bugs
    try:
        code = main(["run", "-c", str(config), "-o", str(tmp_path), "--quiet", *extra])
    finally:
        os.environ.pop("BUGS", None)
        if model is not None:
            config.unlink()
    return code, load_report(tmp_path)


def breaches(report) -> set[tuple[str, str]]:
    """(explored cell, critical oracle) of every breach."""
    return {(c["id"].split("/explore/")[-1], i["id"]) for c in report["verdict"]["cells"] if "/explore/" in c["id"]
            for i in c["invariants"] if i.get("breached") and i["severity"] == "critical"}


def judged(report, oracle) -> list[str]:
    return [i["message"] for c in report["verdict"]["cells"] for i in c["invariants"]
            if i["id"] == oracle and i.get("passed_runs")]


@pytest.fixture(scope="module")
def sound(tmp_path_factory):
    return explore(tmp_path_factory.mktemp("sound"))


def test_the_sound_desk_passes_every_turn_explored(sound):
    code, report = sound
    assert code == 0 and not breaches(report), sorted(breaches(report))
    ids = [c["id"] for c in report["verdict"]["cells"]]
    assert {"chaos/cancel/explore/t2-llm-openai-1/context_length", "chaos/cancel/explore/t1-llm-openai-1/rate_limit",
            "chaos/cancel/explore/t2-orders-POST-orders-{id}-cancel-1/timeout_after_write"} <= set(ids)
    assert not any("/t1-llm-openai-1/context_length" in i for i in ids)  # turn 1's prompt is never too long
    # the later turns were judged, and sessions were probed beside the faulted ones
    assert any("the turns after the fault at turn 1 were taken as a session does" in m for m in judged(report, "recovers"))
    assert any("a session beside it (input hours) answered as its baseline did" in m
               for m in judged(report, "isolates_sessions"))
    assert {i.split("/explore/")[1].split("-")[0] for i in ids if "/explore/cancel" not in i and "/explore/" in i} \
        == {"t1", "t2", "t3"}  # every turn's sites, each keyed by its turn


SERVER, CLIENT = "chaos-gate.yaml", "client-history.yaml"  # the same desk, the conversation sent by the client each turn
GRAPH = "desk_graph/chaos-gate.yaml"  # the desk on LangGraph, its threads kept by a checkpointer
PLANTED = [
    # bug, the oracle meant for it, the cells (--only) where it shows, what the message must say, the desk's shape
    ("dangling_call", "recovers", "chaos/cancel/explore/t2-orders-POST-*/error",
     "the provider refused turn 3's model call with 400", SERVER),
    ("no_trim", "survives", "chaos/cancel/explore/t2-llm-openai-1/context_length", "http_5xx at turn 2 of 3", SERVER),
    ("blocking_sleep", "isolates_sessions", "chaos/cancel/explore/t1-llm-openai-1/rate_limit",
     "a session beside it (input hours) failed", SERVER),
    ("global_flag", "isolates_sessions", "chaos/cancel/explore/t2-orders-POST-*/error",
     "was answered without asking the model", SERVER),
    ("global_flag", "recovers", "chaos/cancel/explore/t2-orders-POST-*/timeout_after_write",
     "turn 3 was answered without asking the model", SERVER),
    # with client-sent history: no history of the desk's own to leave dangling, the rest as above
    ("no_trim", "survives", "chaos/cancel/explore/t3-llm-openai-1/context_length", "http_5xx at turn 3 of 3", CLIENT),
    ("blocking_sleep", "isolates_sessions", "chaos/cancel/explore/t2-llm-openai-1/rate_limit",
     "a session beside it (input hours) failed", CLIENT),
    ("global_flag", "isolates_sessions", "chaos/cancel/explore/t2-orders-POST-*/error",
     "a session beside it (input hours)", CLIENT),
    # on LangGraph: a tool error the graph does not handle leaves the thread's tool call unanswered
    ("dangling_call", "recovers", "chaos/cancel/explore/t2-cancel_order-1/error",
     "turn 3 was answered without asking the model", GRAPH),  # LangGraph refuses the history before the model
    ("no_trim", "survives", "chaos/cancel/explore/t2-llm-openai-1/context_length", "http_5xx at turn 2 of 3", GRAPH),
]


def _where_bugs_show(tmp_path_factory, shape):
    cells = [a for p in PLANTED if p[4] == shape for a in ("--only", p[2])]
    return explore(tmp_path_factory.mktemp("twin"), "", *cells, shape=shape)


@pytest.fixture(scope="module")
def sound_client(tmp_path_factory):
    """The client-history twin on the cells its bugs show in (the server-side twin explores them all)."""
    return _where_bugs_show(tmp_path_factory, CLIENT)


@pytest.fixture(scope="module")
def sound_graph(tmp_path_factory):
    return _where_bugs_show(tmp_path_factory, GRAPH)


@pytest.mark.parametrize("twin, cells", [("sound_client", 3), ("sound_graph", 2)])
def test_the_sound_twins_pass_where_their_bugs_show(request, twin, cells):
    code, report = request.getfixturevalue(twin)
    assert code == 0 and not breaches(report), sorted(breaches(report))
    assert report["verdict"]["explore"]["run"] == cells


@pytest.mark.parametrize("bug, oracle, only, says, shape", PLANTED,
                         ids=[f"{p[0]}-{p[1]}-{p[4].split('/')[0].split('.')[0]}" for p in PLANTED])
def test_each_planted_bug_is_found_where_its_twin_passes(tmp_path, request, bug, oracle, only, says, shape):
    code, report = explore(tmp_path, bug, "--only", only, shape=shape)
    found = {(cell, o) for cell, o in breaches(report) if o == oracle}
    assert code != 0 and found, sorted(breaches(report))
    twin = request.getfixturevalue({CLIENT: "sound_client", GRAPH: "sound_graph"}.get(shape, "sound"))
    assert not found & breaches(twin[1])  # the sound twin's run of the same cells has none of them
    messages = [i["message"] for c in report["verdict"]["cells"] for i in c["invariants"]
                if i["id"] == oracle and i.get("breached")]
    assert any(says in m for m in messages), messages
    if (bug, shape) == ("dangling_call", SERVER):  # the transcript marks the turn the broken history failed
        summary = (tmp_path / "summary.md").read_text()
        assert "| 2 ⚡ |" in summary and "| 3 ❌ |" in summary and "its model call was refused" in summary


@pytest.fixture(scope="module")
def model():
    with wobbly_model.serving(WOBBLE) as url:
        yield url


@pytest.mark.parametrize("seed", range(5))
def test_the_sound_desk_passes_under_a_model_that_never_answers_twice_alike(tmp_path, model, seed):
    """The cells where the planted bugs show (the sim's run above explores them all), under paraphrased answers,
    an extra read and latency jitter; each sampled twice, its variance learned."""
    os.environ["WOBBLE_SEED"] = str(seed)
    only = [a for cell in ("t2-orders-POST-*/error", "t2-orders-POST-*/timeout_after_write",
                           "t2-llm-openai-1/context_length", "t1-llm-openai-1/rate_limit")
            for a in ("--only", f"chaos/cancel/explore/{cell}")]
    code, report = explore(tmp_path, "", *only, model=model)
    failing = [(c["id"], c["reason"], [i["message"] for i in c["invariants"] if i.get("breached")])
               for c in report["verdict"]["cells"] if c["status"] not in ("pass", "skipped")]
    assert code == 0 and not failing, failing
    assert report["verdict"]["explore"]["run"] >= 3  # a wobbly baseline may reach a site otherwise
    assert any("a session beside it (input hours) answered as its baseline did" in m
               for m in judged(report, "isolates_sessions"))


@pytest.mark.parametrize("shape", [CLIENT, GRAPH])
def test_the_other_sound_twins_pass_under_the_nondeterministic_model(tmp_path, model, shape):
    """The client-history desk and the LangGraph desk, on the cells their bugs show in."""
    os.environ["WOBBLE_SEED"] = "4"
    cells = [a for p in PLANTED if p[4] == shape for a in ("--only", p[2])]
    code, report = explore(tmp_path, "", *cells, model=model, shape=shape)
    assert code == 0 and not breaches(report), sorted(breaches(report))
    assert report["verdict"]["explore"]["run"] >= 1  # the wobbly baseline may push a cell past the budget


def test_the_dangling_call_is_refused_by_the_nondeterministic_model_too(tmp_path, model):
    os.environ["WOBBLE_SEED"] = "3"
    code, report = explore(tmp_path, "dangling_call", "--only", "chaos/cancel/explore/t2-orders-POST-*/error",
                           model=model)
    assert code != 0 and any(o == "recovers" for _, o in breaches(report)), sorted(breaches(report))


def verdict_text(out) -> str:
    text = (out / "report.json").read_text()
    return text[text.index('"verdict": {'):text.index('"timings"')]


def test_a_conversations_plan_and_verdict_are_the_same_at_any_concurrency_and_over_merged_shards(tmp_path):
    """The probes and the per-turn sites included: K=1, K=4 and three shards merged give one verdict."""
    config = tmp_path / "desk.yaml"
    config.write_text((DESK / "chaos-gate.yaml").read_text().replace(
        "concurrency: 2\n", "concurrency: 2\nchaos: {explore: {budget: 8, kinds: [error, context_length, rate_limit]}}\n")
        .replace("command: [python3, agent.py]", f"command: [python3, {DESK / 'agent.py'}]")
        .replace("command: [python3, orders_service.py]", f"command: [python3, {DESK / 'orders_service.py'}]"))
    texts = []
    for k in (1, 4):
        out = tmp_path / f"k{k}"
        assert main(["run", "-c", str(config), "-o", str(out), "--quiet", "--concurrency", str(k)]) == 0
        texts.append(verdict_text(out))
    reports = []
    for i in (1, 2, 3):
        out = tmp_path / f"s{i}"
        main(["run", "-c", str(config), "-o", str(out), "--quiet", "--shard", f"{i}/3"])
        reports.append(str(out / "report.json"))
    assert main(["merge", *reports, "-c", str(config), "-o", str(tmp_path / "merged"), "--quiet"]) == 0
    texts.append(verdict_text(tmp_path / "merged"))
    assert texts[0] == texts[1] == texts[2]
    assert '"isolates_sessions"' in texts[0] and "/explore/t2-" in texts[0]
