"""The fault schedule is pure: triggers fire on the calls they name, probabilities are
seeded per call, and config errors in faults and profiles are located."""

import pytest
from pydantic import TypeAdapter

from conftest import write_config
from gate.plan import load_config
from gate.config.chaos import Fault
from gate.errors import ConfigError
from gate.faults import Schedule
from gate.proxy.exchange import RequestInfo

LLM = RequestInfo(kind="llm", name="openai", provider="openai", method="POST", path="/chat/completions", model="gpt-4o")
TOOL = RequestInfo(kind="tool", name="orders", provider="http", method="POST", path="/refunds", tool="orders")


def fired(fault: dict, calls: int = 10, info=LLM, seed=1, cell="chaos/a/x", run=0) -> list[int]:
    f = TypeAdapter(Fault).validate_python(fault)
    schedule = Schedule((f,), seed, cell, run)
    return [n for n in range(1, calls + 1) if schedule.decide(info) is not None]


def test_triggers():
    assert fired({"kind": "reset"}) == list(range(1, 11))
    assert fired({"kind": "reset", "on_calls": [1, 3]}) == [1, 3]
    assert fired({"kind": "reset", "after_calls": 7}) == [8, 9, 10]
    assert fired({"kind": "reset", "every": 4}) == [4, 8]
    assert fired({"kind": "reset", "every": 2, "max_fires": 2}) == [2, 4]


def test_probability_is_seeded_per_call():
    a = fired({"kind": "reset", "probability": 0.3}, calls=200)
    assert a == fired({"kind": "reset", "probability": 0.3}, calls=200)
    assert 30 <= len(a) <= 90
    assert a != fired({"kind": "reset", "probability": 0.3}, calls=200, seed=2)
    assert a != fired({"kind": "reset", "probability": 0.3}, calls=200, cell="chaos/b/x")


def test_targets_and_matches():
    assert fired({"kind": "reset"}, info=TOOL) == list(range(1, 11))  # shared kinds fit both
    assert fired({"kind": "stall"}, info=TOOL) == []  # stream faults are LLM-only
    assert fired({"kind": "timeout_after_write"}, info=LLM) == []
    assert fired({"kind": "reset", "target": "tools"}) == []
    assert fired({"kind": "reset", "target": "orders"}, info=TOOL) != []
    assert fired({"kind": "reset", "model": "gpt-4*"}) != [] and fired({"kind": "reset", "model": "claude*"}) == []
    assert fired({"kind": "error", "path": "^/refunds$", "method": "POST"}, info=TOOL) != []
    assert fired({"kind": "error", "method": "GET"}, info=TOOL) == []


def test_first_matching_fault_wins_and_counters_are_per_fault():
    faults = tuple(TypeAdapter(Fault).validate_python(f) for f in (
        {"kind": "rate_limit", "on_calls": [1]}, {"kind": "server_error", "on_calls": [1, 2]}))
    schedule = Schedule(faults, 1, "c", 0)
    kinds = [getattr(schedule.decide(LLM), "fault", None) for _ in range(3)]
    assert [k.kind if k else None for k in kinds] == ["rate_limit", "server_error", None]


BASE = """
agent: {url: "http://127.0.0.1:9", invoke: {http: {url: "{{url}}"}}}
inputs: [{id: a, text: x}]
llm: [{name: openai}]
"""


def test_unknown_fault_kind_and_profile_are_located(tmp_path):
    with pytest.raises(ConfigError, match=r":6: chaos.faults\[0\]\.kind: unknown fault kind 'rate_limt' \(did you mean 'rate_limit'\?\)"):
        load_config(write_config(tmp_path, BASE + "chaos:\n  faults:\n    - {kind: rate_limt}\n"))
    with pytest.raises(ConfigError, match=r":6: chaos.profiles\[0\]: unknown profile 'flaky_lm' \(did you mean 'flaky_llm'\?\)"):
        load_config(write_config(tmp_path, BASE + "chaos:\n  profiles:\n    - flaky_lm\n", "b.yaml"))


def test_builtin_profiles_all_load():
    from gate.config.profiles import BUILTIN, available, load_profile

    names = set(available([BUILTIN]))
    assert {"api_outage", "degraded_llm", "flaky_llm", "rate_limited", "hostile_tools", "high_latency",
            "cascading_failure", "indirect_injection", "stream_chaos", "double_write"} <= names
    for path in available([BUILTIN]).values():
        assert load_profile(path).description
