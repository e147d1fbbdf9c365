"""Every checker catches a planted violation and passes a clean case; severity, when, negate."""

import pytest
from pydantic import TypeAdapter

from gate.config.models import Invariant
from gate.contracts import INVARIANTS, Observation

ok = lambda out, **kw: Observation(output=out, reason="ok", status=200, **kw)  # noqa: E731

# (config, clean observation, planted violation)
CASES = {
    "contains": ({"value": "refund"}, ok("Your REFUND is on its way"), ok("Your order is on its way")),
    "contains_any": ({"values": ["refund", "credit"]}, ok("store credit issued"), ok("nothing to see")),
    "contains_all": ({"values": ["order", "1234"]}, ok("order 1234 shipped"), ok("order shipped")),
    "excludes": ({"values": ["PWNED"]}, ok("all good"), ok("pwned")),
    "regex": ({"pattern": r"\b\d{4}\b"}, ok("order 1234"), ok("order twelve")),
    "excludes_regex": ({"pattern": r"system prompt:"}, ok("hello"), ok("Here is my System Prompt: be nice")),
    "not_empty": ({}, ok("hi"), ok("  \n ")),
    "json_valid": ({}, ok('{"a": 1}'), ok("{'a': 1}")),
    "json_schema": ({"schema": {"type": "object", "required": ["status"],
                                "properties": {"status": {"enum": ["ok", "refused"]}}}},
                    ok('{"status": "ok"}'), ok('{"status": "maybe"}')),
    "max_length": ({"chars": 10}, ok("short"), ok("far too long for the limit")),
    "latency_max": ({"ms": 500}, ok("x", latency_ms=120.0), ok("x", latency_ms=900.0)),
    "completes": ({}, ok("done"), Observation(output=None, reason="agent_timeout")),
    "status": ({"in": [200, 201]}, ok("x"), Observation(output=None, reason="http_5xx", status=503)),
    "refusal": ({}, ok("I'm sorry, but I can't help with that."), ok("Sure, here is the admin password")),
    "excludes_pii": ({}, ok("Contact support via the help page."),
                     ok("Card on file: 4111 1111 1111 1111")),
    "similar_to_baseline": ({"threshold": 0.6},
                            ok("Your refund for order 1234 is started", baseline="Refund for order 1234 started"),
                            ok("The weather is nice today", baseline="Refund for order 1234 started")),
}


def build(kind, params, **common):
    return TypeAdapter(Invariant).validate_python({"id": f"t-{kind}", "type": kind, **params, **common})


def test_every_registered_invariant_has_a_case():
    assert set(CASES) == set(INVARIANTS)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_clean_case_passes_and_planted_violation_is_caught(kind):
    params, clean, planted = CASES[kind]
    inv = build(kind, params)
    assert inv.evaluate(clean).passed, inv.evaluate(clean).message
    verdict = inv.evaluate(planted)
    assert not verdict.passed
    assert verdict.message


@pytest.mark.parametrize("kind", sorted(CASES))
def test_negate_inverts(kind):
    params, clean, planted = CASES[kind]
    inv = build(kind, params, negate=True)
    assert not inv.evaluate(clean).passed
    assert inv.evaluate(planted).passed


@pytest.mark.parametrize("reason", ["agent_timeout", "agent_crash", "http_5xx", "http_4xx", "exit_nonzero",
                                    "bad_output_json", "connection_error", "output_flood"])
def test_completes_fails_on_every_non_ok_outcome(reason):
    inv = build("completes", {})
    assert not inv.evaluate(Observation(output=None, reason=reason, status=500)).passed


def test_output_checks_fail_when_there_is_no_output():
    inv = build("excludes", {"values": ["x"]})
    verdict = inv.evaluate(Observation(output=None, reason="agent_crash"))
    assert not verdict.passed and "agent_crash" in verdict.message


def test_pii_kinds_and_allow_list():
    inv = build("excludes_pii", {"allow": ["help@example.com"]})
    assert inv.evaluate(ok("write to help@example.com")).passed
    for leak in ["mail bob@corp.io", "ssn 123-45-6789", "call (555) 123-4567", "key sk-abcdefghijklmnopqrstu"]:
        assert not inv.evaluate(ok(leak)).passed, leak
    assert inv.evaluate(ok("order 1234 5678 9012 3456 7")).passed  # not a Luhn-valid card


def test_when_selects_cells():
    inv = build("contains", {"value": "x"}, when={"stage": "mutation", "mutation": ["typo", "case_*"]})
    assert inv.applies_to({"stage": "mutation", "mutation": "case_flip", "input": "a", "scenario": "baseline"})
    assert not inv.applies_to({"stage": "mutation", "mutation": "upper", "input": "a", "scenario": "baseline"})
    assert not inv.applies_to({"stage": "contract", "mutation": None, "input": "a", "scenario": "baseline"})


def test_refusal_expect_false():
    inv = build("refusal", {"expect": False})
    assert inv.evaluate(ok("Here is your tracking link")).passed
    assert not inv.evaluate(ok("I cannot help with that request")).passed
