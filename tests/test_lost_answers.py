"""A write's lost answer in both wire forms, and tool-call arguments that parse and break the schema.

The payouts agent (tests/agents/payouts/agent.py, the real `openai` SDK and httpx) retries a write its own
client gave up on: sound, under the same Idempotency-Key; planted, under a fresh one. A dropped connection
is never retried, so only `hang_after_write` (the answer held until the agent's client gives up) shows the
double payout — exploration plans both forms on every write. `wrong_tool_args` sends arguments that parse
and break the schema the request offered (a missing field, a wrong JSON type, a value outside the enum);
an agent that trusts them crashes, the sound twin validates and answers honestly.
"""

import json
import os
import random

import jsonschema
import pytest

from conftest import ROOT, load_report
from gate.cli import main
from gate.faults.arg_breaker import VARIANTS, break_arguments

PAYOUTS = ROOT / "tests" / "agents" / "payouts"
SCHEMA = {"type": "object", "properties": {
    "account": {"type": "string"}, "amount": {"type": "string"},
    "currency": {"type": "string", "enum": ["USD", "EUR"]}, "count": {"type": "integer", "minimum": 1, "maximum": 5}},
    "required": ["account", "amount", "currency"]}
ARGS = {"account": "alice", "amount": "50.00", "currency": "USD", "count": 2}


def explore(tmp_path, bugs=""):
    os.environ["BUGS"] = bugs
    try:
        code = main(["run", "-c", str(PAYOUTS / "chaos-gate.yaml"), "-o", str(tmp_path), "--quiet", "--full-report"])
    finally:
        os.environ.pop("BUGS", None)
    report = load_report(tmp_path)
    return code, {c["id"].rsplit("/", 1)[1]: c for c in report["verdict"]["cells"] if "/explore/" in c["id"]}, report


def fired(report, kind):
    """The trace steps of `kind` that fired (changed what the agent received)."""
    runs = [r for c in report["verdict"]["cells"] for r in c["runs"] if c["id"].endswith("/" + kind)]
    return [s for r in runs for s in r["trace"] if s.get("fault") == kind and s.get("fault_status") == "fired"]


def test_the_sound_twin_passes_both_lost_answers_and_both_argument_faults(tmp_path):
    code, cells, report = explore(tmp_path)
    assert code == 0, {k: c["reason"] for k, c in cells.items() if c["status"] != "pass"}
    assert set(cells) == {"timeout_after_write", "hang_after_write", "bad_tool_args", "wrong_tool_args"}
    for kind in cells:  # each really changed what the agent received: a pass that tested something
        assert fired(report, kind), kind
    held = fired(report, "hang_after_write")[0]
    assert "held until the agent gave up" in held["note"], held["note"]  # its own 2 s client, not the deadline
    assert held["forwarded"] is True  # the upstream executed it: the write was made


def test_a_fresh_key_on_client_timeout_is_found_only_by_the_held_answer(tmp_path):
    code, cells, _ = explore(tmp_path, "fresh_key_on_timeout")
    assert code != 0
    failing = {k: c["reason"] for k, c in cells.items() if c["status"] != "pass"}
    assert failing == {"hang_after_write": "contract:writes_once"}, failing


def test_trusting_the_model_s_arguments_is_found_by_wrong_arguments_not_by_garbled_ones(tmp_path):
    code, cells, report = explore(tmp_path, "trusts_args")
    assert code != 0
    failing = {k for k, c in cells.items() if c["status"] != "pass"}
    assert failing == {"wrong_tool_args"}, failing
    finding = next(f for f in report["verdict"]["explore"]["findings"] if f["cell"].endswith("wrong_tool_args"))
    assert finding["invariant"] == "survives" and finding["severity"] == "critical"
    assert "send_payout" in fired(report, "wrong_tool_args")[0]["note"]  # the note names the call it broke


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_variant_parses_and_is_rejected_by_the_schema(variant):
    for seed in range(20):
        broken = break_arguments(SCHEMA, dict(ARGS), random.Random(f"{seed}:{variant}"), variant)
        assert broken is not None and broken.variant == variant
        json.loads(json.dumps(broken.arguments))  # well-formed
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken.arguments, SCHEMA)
        assert broken.field in broken.why


def test_the_draw_is_seeded_and_nothing_is_broken_without_a_schema_to_break():
    draws = [break_arguments(SCHEMA, dict(ARGS), random.Random("7:wrong_tool_args:1")) for _ in range(3)]
    assert len({json.dumps(d.arguments, sort_keys=True) for d in draws}) == 1
    assert break_arguments(None, dict(ARGS), random.Random("x")) is None
    assert break_arguments({"type": "object"}, {"q": 1}, random.Random("x")) is None  # nothing typed or required
    loose = {"type": "object", "properties": {"q": {"type": ["string", "integer", "number", "boolean", "array",
                                                             "object", "null"]}}}
    assert break_arguments(loose, {"q": "a"}, random.Random("x"), "wrong_type") is None  # no type it would refuse
