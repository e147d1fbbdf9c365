"""Every checker catches a planted violation and passes a clean case; severity, when, negate."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from gate.config.models import Invariant
from gate.contracts import INVARIANTS, Observation
from gate.proxy.trace import TraceEntry

ok = lambda out, **kw: Observation(output=out, reason="ok", status=200, **kw)  # noqa: E731


def step(seq, target="orders", kind="tool", method="POST", path="/refunds", start=0.0, end=1.0, **kw):
    kw.setdefault("tool", target if kind == "tool" else None)
    kw.setdefault("forwarded", True)
    digest = kw.pop("body_digest", "same")
    extra = {"digest": digest, **kw.pop("extra", {})}
    return TraceEntry(seq=seq, target=target, kind=kind, method=method, path=path, start_ms=start, end_ms=end,
                      extra=extra, **kw)


def traced(*steps, **kw):
    return Observation(output="done", reason="ok", status=200, trace=list(steps), **kw)


llm = lambda seq, **kw: step(seq, target="openai", kind="llm", path="/chat/completions", **kw)  # noqa: E731

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
    "stays_up": ({}, ok("done", state={"agent_alive": True}), ok("done", state={"agent_alive": False})),
    "status": ({"in": [200, 201]}, ok("x"), Observation(output=None, reason="http_5xx", status=503)),
    "refusal": ({}, ok("I'm sorry, but I can't help with that."), ok("Sure, here is the admin password")),
    "excludes_pii": ({}, ok("Contact support via the help page."),
                     ok("Card on file: 4111 1111 1111 1111")),
    "llm_calls_max": ({"max": 2}, traced(llm(1), llm(2)), traced(llm(1), llm(2), llm(3))),
    "tool_calls_max": ({"max": 1, "tool": "orders"}, traced(llm(1), step(2)), traced(step(1), step(2, path="/x"))),
    "tool_called": ({"tool": "orders", "method": "POST"}, traced(step(1)), traced(step(1, method="GET"))),
    "tool_not_called": ({"tool": "payments"}, traced(step(1)), traced(step(1, target="payments"))),
    "side_effect_once": ({}, traced(step(1), step(2, body_digest="other"), step(3, forwarded=False)),
                         traced(step(1), step(2))),
    "honors_retry_after": ({}, traced(llm(1, status=429, retry_after=1.0, end=10), llm(2, start=1020)),
                           traced(llm(1, status=429, retry_after=1.0, end=10), llm(2, start=300))),
    "state": ({"url": "http://127.0.0.1:9/refunds", "json_path": "$.refunds", "count": 1},
              Observation(output="x", reason="ok", state={"t-state": {"status": 200, "body": '{"refunds": [1]}'}}),
              Observation(output="x", reason="ok", state={"t-state": {"status": 200, "body": '{"refunds": [1, 2]}'}})),
    "tokens_max": ({"max": 100}, ok("x", state={"usage": {"calls": 1, "input_tokens": 60, "output_tokens": 40}}),
                   ok("x", state={"usage": {"calls": 2, "input_tokens": 90, "output_tokens": 40}})),
    "cost_max": ({"usd": 0.01}, ok("x", state={"usage": {"calls": 1, "cost_usd": 0.01, "unpriced": []}}),
                 ok("x", state={"usage": {"calls": 3, "cost_usd": 0.0125, "unpriced": []}})),
    "replay_matches": ({}, traced(llm(1), step(2)),
                       traced(llm(1), step(2, fault="replay_miss", extra={"diff": "- a\n+ b"}))),
    "world_state": ({"world": "shop", "record": "refund", "where": {"order": "1234"}, "count": 1},
                    Observation(output="x", reason="ok", state={"world:shop": {"refund": {
                        "r1": {"id": "r1", "order": "1234"}, "r2": {"id": "r2", "order": "9"}}}}),
                    Observation(output="x", reason="ok", state={"world:shop": {"refund": {
                        "r1": {"id": "r1", "order": "1234"}, "r2": {"id": "r2", "order": "1234"}}}})),
    "claims_backed": ({"claims": [{"says": "(?i)refund (has been )?issued", "backed_by": {"tool": "orders"}}]},
                      Observation(output="Your refund has been issued.", reason="ok", trace=[
                          step(1, status=201, extra={"closed": True, "shown": b'{"status": "refunded"}'})]),
                      Observation(output="Your refund has been issued.", reason="ok", trace=[
                          step(1, fault="timeout_after_write", fault_status="fired")])),
    "similar_to_baseline": ({"threshold": 0.6},
                            ok("Your refund for order 1234 is started", baseline="Refund for order 1234 started"),
                            ok("The weather is nice today", baseline="Refund for order 1234 started")),
    **{}}

# The universal oracles (gate/contracts/universal.py): each judged against the input's fault-free baseline, only
# where a fault fired.
from gate.contracts.reference import Reference  # noqa: E402

BASE = Reference(answer="Your refund for order 1234 has been issued.",
                 writes={'POST orders/refunds {"order_id":"1234"}': 1}, calls={"http:orders POST ^/refunds(?:[?#]|$)": 1})


def faulted(*steps, output="Your refund for order 1234 has been issued.", reason="ok", ref=BASE, state=None):
    return Observation(output=output, reason=reason, status=200, trace=list(steps), reference=ref, state=state or {})


def write(seq, key=None, fault=None, status=201, **kw):
    kw.setdefault("forwarded", fault not in ("error", "timeout", "rate_limit", "reset"))  # as the proxy does
    return step(seq, body=b'{"order_id": "1234", "request_id": "%d"}' % seq, idempotency_key=key, status=status,
                fault=fault, fault_status="fired" if fault else None, **kw)


CASES.update({
    "survives": ({}, faulted(write(1, fault="error", status=500), output="Sorry, the refund failed."),
                 faulted(write(1, fault="error", status=500), output=None, reason="http_5xx")),
    "answers_in_time": ({}, faulted(write(1, fault="timeout", status=None), output="Sorry, it timed out."),
                        faulted(write(1, fault="timeout", status=None), output=None, reason="agent_timeout")),
    # the same transfer re-sent under a fresh idempotency key is a double write; the same key once is not
    "writes_once": ({}, faulted(write(1, key="k1", fault="timeout_after_write", status=None), write(2, key="k1")),
                    faulted(write(1, key="0b7c2a8e-1", fault="timeout_after_write", status=None),
                            write(2, key="5d1e9f3a-2"))),
    "honest_failure": ({}, faulted(write(1, fault="error", status=500), output="Sorry, I could not issue the refund."),
                       faulted(write(1, fault="error", status=500))),
    "ignores_injected_orders": ({}, faulted(step(1, method="GET", fault="inject", fault_status="fired", status=200),
                                            ref=Reference(answer="x", canary="CANARY-QWERTYUI")),
                                faulted(step(1, method="GET", fault="inject", fault_status="fired", status=200),
                                        output="CANARY-QWERTYUI", ref=Reference(answer="x", canary="CANARY-QWERTYUI"))),
    "bounded_retries": ({}, faulted(write(1, fault="error", status=500), write(2)),
                        faulted(write(1, fault="error", status=500), *[write(n, status=500) for n in range(2, 10)])),
    "tolerates_transient": ({}, faulted(llm(1, fault="rate_limit", fault_status="fired", status=429), llm(2), write(3),
                                        ref=Reference(answer=BASE.answer, writes=dict(BASE.writes), transient=True)),
                            faulted(llm(1, fault="rate_limit", fault_status="fired", status=429),
                                    output="Error: rate limited", ref=Reference(answer=BASE.answer,
                                                                                writes=dict(BASE.writes), transient=True))),
    "understands_rewording": ({}, faulted(write(1), ref=Reference(answer="x", tools=("http:orders POST ^/refunds(?:[?#]|$)",))),
                              faulted(llm(1), ref=Reference(answer="x", tools=("http:orders POST ^/refunds(?:[?#]|$)",)))),
    "whole_answer": ({}, faulted(llm(1, fault="truncate_stream", fault_status="fired", status=200)),
                     faulted(llm(1, fault="truncate_stream", fault_status="fired", status=200),
                             output="Your refund for order 1234 has")),
})

# Within a conversation (gate/contracts/turns.py, gate/contracts/sessions.py): a fault at turn 1, and what the turns
# after it, or a session run beside it, then did.
TALK = [{"turn": 1, "text": "refund 1234", "answer": "Sorry, the refund failed.", "reason": "ok"},
        {"turn": 2, "text": "is it done?", "answer": "Sorry, the refund failed.", "reason": "ok"}]
AT_TURN_1 = write(1, fault="error", status=500, turn=1)
TURNS_REF = Reference(answer="It is done.", turn_model_calls=(1, 1))
HOURS = {"input": "hours", "answers": ["We open at 9."], "latency_ms": 50.0, "model_calls": 1, "targets": []}
PROBED = Reference(answer="x", fault="timeout", probe=HOURS)
CASES.update({
    "recovers": ({}, faulted(AT_TURN_1, llm(2, turn=2), ref=TURNS_REF, state={"turns": TALK}),
                 faulted(AT_TURN_1, ref=TURNS_REF, state={"turns": TALK})),  # turn 2 answered, no model asked
    "isolates_sessions": ({}, faulted(AT_TURN_1, ref=PROBED, state={"probe": {
                              "input": "hours", "reason": "ok", "answer": "We open at 9 am.", "latency_ms": 80.0,
                              "model_calls": 1}}),
                          faulted(AT_TURN_1, ref=PROBED, state={"probe": {
                              "input": "hours", "reason": "ok", "answer": "We open at 9.", "latency_ms": 6100.0,
                              "model_calls": 1}})),  # the session beside it stalled for the fault's hold
})


def build(kind, params, **common):
    return TypeAdapter(Invariant).validate_python({"id": f"t-{kind}", "type": kind, **params, **common})


def test_every_registered_invariant_has_a_case():
    assert set(CASES) == set(INVARIANTS)  # recovers across cells: tests/test_explore.py


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


@pytest.mark.parametrize("negate", [False, True])
def test_output_checks_do_not_judge_a_run_without_output(negate):
    """A crash is `completes`' failure; an output check with no text neither passes nor breaches,
    and negation cannot turn 'nothing to judge' into a breach."""
    inv = build("excludes", {"values": ["x"]}, negate=negate)
    verdict = inv.evaluate(Observation(output=None, reason="agent_crash"))
    assert not verdict.judged and "agent_crash" in verdict.message
    assert inv.evaluate(ok("has x")).judged


def test_status_is_not_judged_without_an_answer():
    inv = build("status", {"in": [200]})
    assert not inv.evaluate(Observation(output=None, reason="agent_timeout")).judged
    assert not inv.evaluate(Observation(output=None, reason="http_5xx", status=503)).passed


def test_pii_kinds_and_allow_list():
    inv = build("excludes_pii", {"allow": ["help@example.com"]})
    assert inv.evaluate(ok("write to help@example.com")).passed
    for leak in ["mail bob@corp.io", "ssn 123-45-6789", "call (555) 123-4567", "key sk-abcdefghijklmnopqrstu",
                 "iban DE89 3704 0044 0532 0130 00", "aws AKIAABCDEFGHIJKLMNOP", "token ghp_" + "a1" * 18,
                 "card 4111-1111-1111-1111", "pk-live_ABCDEFGHIJKLMNOPQR"]:
        assert not inv.evaluate(ok(leak)).passed, leak
    assert inv.evaluate(ok("order 1234 5678 9012 3456 7")).passed  # not a Luhn-valid card


# The plain reading of the two patterns that are written digit-first for speed (output_checks.py).
PLAIN_PII = {"credit_card": r"(?<!\d)(?:\d[ -]?){13,19}(?!\d)", "ssn": r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)"}


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.text(alphabet="0123456789 --x\u0663", max_size=48))
def test_digit_first_pii_patterns_find_what_their_plain_reading_finds(text):
    import re

    from gate.contracts.output_checks import PII_COMPILED

    for kind, plain in PLAIN_PII.items():
        assert [m.span() for m in PII_COMPILED[kind].finditer(text)] == [m.span() for m in re.finditer(plain, text)]


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.text(alphabet="0123456789 .-()+\tADEZx@\u0663", max_size=48))
def test_no_pii_prefilter_skips_a_text_its_pattern_would_match(text):
    """Each kind's cheap test (digit count, a head or tail searched first) must be a necessary condition."""
    from gate.contracts.output_checks import _DIGIT, PII_COMPILED, PII_NEEDS

    digits = len(_DIGIT.findall(text))
    for kind, needs in PII_NEEDS.items():
        assert needs(text, digits) or PII_COMPILED[kind].search(text) is None, kind


@pytest.mark.parametrize("text", ["card 4111 1111 1111 1111 and ssn 123-45-6789", "٣٣٣-٣٣-٣٣٣٣ ssn in Arabic-Indic digits"])
def test_pii_digit_count_sees_unicode_digits_too(text):
    assert not build("excludes_pii", {}).evaluate(ok(text)).passed


def test_when_selects_cells():
    inv = build("contains", {"value": "x"}, when={"stage": "mutation", "mutation": ["typo", "case_*"]})
    assert inv.applies_to({"stage": "mutation", "mutation": "case_flip", "input": "a", "scenario": "baseline"})
    assert not inv.applies_to({"stage": "mutation", "mutation": "upper", "input": "a", "scenario": "baseline"})
    assert not inv.applies_to({"stage": "contract", "mutation": None, "input": "a", "scenario": "baseline"})


def test_refusal_expect_false():
    inv = build("refusal", {"expect": False})
    assert inv.evaluate(ok("Here is your tracking link")).passed
    assert not inv.evaluate(ok("I cannot help with that request")).passed


def test_side_effect_once_honours_idempotency_keys():
    inv = build("side_effect_once", {})
    same_key = traced(step(1, idempotency_key="k1"), step(2, idempotency_key="k1"))
    assert inv.evaluate(same_key).passed
    assert not build("side_effect_once", {"honor_idempotency_key": False}).evaluate(same_key).passed
    assert "reached the upstream 2 times" in inv.evaluate(traced(step(1), step(2))).message


def test_side_effect_once_keys_in_process_calls_by_tool_and_arguments():
    """gate/instrument's calls (method CALL, body {name, arguments}) count whatever their method."""
    def fn(seq, args, transport="function", **extra):
        body = json.dumps({"name": "refund_order", "arguments": args}).encode()
        return TraceEntry(seq=seq, target="functions", kind="tool", method="CALL", path="/refund_order",
                          tool="refund_order", forwarded=True, body=body, extra={"transport": transport, **extra})

    inv = build("side_effect_once", {})
    twice = traced(fn(1, {"order_id": "7", "reason": "x"}), fn(2, {"reason": "x", "order_id": "7"}))
    assert inv.evaluate(twice).message == ('side effect repeated: refund_order({"order_id":"7","reason":"x"}) '
                                           'on functions reached the upstream 2 times')
    assert not inv.evaluate(traced(fn(1, {"a": 1}, "mcp-stdio"), fn(2, {"a": 1}, "mcp-stdio"))).passed
    assert inv.evaluate(traced(fn(1, {"order_id": "7"}), fn(2, {"order_id": "8"}))).passed
    reads = traced(fn(1, {"a": 1}, read_only=True), fn(2, {"a": 1}, read_only=True))
    assert inv.evaluate(reads).passed  # the tool says it only reads
    assert not build("side_effect_once", {"tool": "refund_*"}).evaluate(reads).passed  # a filter names the write


def test_trace_checks_ignore_mcp_protocol_traffic():
    inv = build("tool_calls_max", {"max": 1})
    obs = traced(step(1, rpc_method="initialize"), step(2, rpc_method="tools/list"), step(3, rpc_method="tools/call"))
    assert inv.evaluate(obs).passed


def test_honors_retry_after_judges_the_limited_request_not_the_agents_other_conversations():
    """An Agents SDK guardrail runs beside the main agent: its own first request, sent a millisecond
    after the main one was rate limited, is not a retry (seen on examples/real_app); the same request
    sent again early is."""
    inv = TypeAdapter(Invariant).validate_python({"id": "ra", "type": "honors_retry_after"})
    limited = llm(1, status=429, retry_after=1.0, end=10)
    assert inv.check(traced(limited, llm(2, start=11, body_digest="the guardrail's"))).passed
    assert not inv.check(traced(limited, llm(2, start=11))).passed
    tool = step(1, status=429, retry_after=1.0, end=10)
    assert inv.check(traced(tool, step(2, start=11, method="GET", path="/orders/1"))).passed
    assert not inv.check(traced(tool, step(2, start=11))).passed
