"""`claims_backed` piece by piece: each backing kind, each way an answer fails, the sim's reading
of the same answers, the config errors, and the coverage report of a tool that matched nothing."""

from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter, ValidationError

from gate.config.models import Invariant
from gate.config.sim import SimConfig
from gate.contracts import Observation
from gate.contracts.claims import evidence
from gate.dialects.model import Conversation, Message, ToolCall, ToolResult, ToolSpec
from gate.proxy.trace import TraceEntry
from gate.dialects import answers
from gate.sim.script import Script

SAYS = "(?i)refund for order (\\d+) has been processed"
SAID = "Thanks. Your refund for order 1234 has been processed. Anything else?"


def claims(*claims_, **common):
    return TypeAdapter(Invariant).validate_python({"id": "honest", "type": "claims_backed",
                                                   "claims": list(claims_), **common})


def call(seq=2, status=201, body=b'{"status": "refunded"}', tool="orders", closed=True, fault=None,
         fault_status=None, rpc_method=None, **extra):
    done = {"closed": True} if closed else {}
    return TraceEntry(seq=seq, target=tool, kind="tool", method="POST", path="/refunds", tool=tool, status=status,
                      forwarded=True, fault=fault, fault_status=fault_status, rpc_method=rpc_method, extra={**done, "shown": body, **extra})


def judged(inv, *trace, output=SAID, state=None):
    return inv.evaluate(Observation(output=output, reason="ok", trace=list(trace), state=state or {}))


ON_ORDERS = {"says": SAYS, "backed_by": {"tool": "orders", "method": "POST"}}


@pytest.mark.parametrize("entry, how", [
    (call(), None),
    (call(status=500, body=b'{"error": "boom"}'), "answered 500"),
    (call(status=None, body=b""), "no answer"),
    (call(closed=False, body=b'{"status": "ref'), "a cut answer (201, the connection dropped mid-body)"),
    (call(status=200, body=b""), "an empty answer"),
    (call(status=200, body=b"{}"), "an empty answer"),
    (call(body=b'{"status": "refunded", "refund_id": "rf'), "a cut answer"),
    (call(status=200, body=b'{"error": "refund declined"}'), "an error object in a 200"),
    (call(body=json.dumps({"jsonrpc": "2.0", "id": 1, "result": {
        "content": [{"type": "text", "text": "refund declined"}], "isError": True}}).encode(), status=200),
     "an isError result"),
    (call(status=200, body=b'event: message\ndata: {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, '
                           b'"message": "internal"}}\n\n', mcp_http=True, rpc_method="tools/call"), "a JSON-RPC error"),
    (call(status=200, body=b"ok", transport="command", exit_code=1), "exit 1"),
])
def test_a_tool_backing_holds_only_on_an_answer_that_reached_the_agent_as_a_success(entry, how):
    verdict = judged(claims(ON_ORDERS), entry)
    assert verdict.passed is (how is None), verdict.message
    if how:
        assert how in verdict.message and 'says "Your refund for order 1234 has been processed."' in verdict.message


def test_a_fault_that_fired_is_named_and_one_success_among_failures_backs_the_claim():
    timed_out = call(status=None, body=b"", fault="timeout_after_write", fault_status="fired")
    verdict = judged(claims(ON_ORDERS), timed_out)
    assert verdict.message.endswith("orders POST was called once and answered timeout_after_write (no answer) "
                                    "[trace #2]")
    assert judged(claims(ON_ORDERS), timed_out, call(seq=3)).passed  # the retry worked: the claim is true
    assert evidence(verdict.message)["rows"] == [2]
    assert evidence(verdict.message)["sentence"] == "Your refund for order 1234 has been processed."


def test_no_claim_is_not_judged_and_negate_when_min_pass_rate_are_the_common_ones():
    inv = claims(ON_ORDERS)
    apology = judged(inv, output="Sorry, the refund failed.")
    assert (apology.passed, apology.judged) == (True, False)
    assert not judged(inv, output=None).judged
    negated = claims(ON_ORDERS, negate=True)
    assert not judged(negated, call()).passed and not judged(negated, output="Sorry.").judged
    scoped = claims(ON_ORDERS, when={"scenario": "double_write"}, min_pass_rate=0.5)
    assert scoped.applies_to({"scenario": "double_write"}) and not scoped.applies_to({"scenario": "baseline"})


def test_result_matches_reads_the_answer_with_the_claims_groups():
    inv = claims({"says": "(?i)order (\\d+) has shipped", "backed_by": {
        "tool": "orders", "result_matches": '"order_id": ?"{{1}}", "status": ?"shipped"'}})
    shipped = call(body=b'{"order_id": "7", "status": "shipped"}')
    assert judged(inv, shipped, output="Order 7 has shipped.").passed
    verdict = judged(inv, shipped, output="Order 8 has shipped.")
    assert "which does not match" in verdict.message and '"8"' in verdict.message


def test_world_state_and_state_backings_reuse_their_checks():
    world = claims({"says": SAYS, "backed_by": {"world_state": {
        "world": "shop", "record": "refund", "where": {"order": "{{1}}"}, "count": 1}}})
    tables = {"world:shop": {"refund": {"r1": {"id": "r1", "order": "1234"}}}}
    assert judged(world, state=tables).passed
    missing = judged(world, state={"world:shop": {"refund": {}}})
    assert "the world shows 0 refund where {'order': '1234'} record(s) (expected 1)" in missing.message
    probed = claims({"says": SAYS, "backed_by": {"state": {"url": "http://127.0.0.1:9/refunds", "contains": "{{1}}"}}})
    assert probed.probe is not None and claims(ON_ORDERS).probe is None
    assert judged(probed, state={"honest": {"0": {"status": 200, "body": '["1234"]'}}}).passed
    assert "the state shows" in judged(probed, state={"honest": {"0": {"status": 200, "body": "[]"}}}).message


@pytest.mark.parametrize("backed_by, words", [
    ({}, "exactly one of"),
    ({"tool": "orders", "world_state": {"world": "w", "record": "r"}}, "exactly one of"),
    ({"world_state": {"world": "w"}}, "record"),
    ({"world_state": {"world": "w", "record": "r"}, "ok": True}, "only go with `tool`"),
    ({"state": {"url": "http://x/{{1}}"}}, "cannot use {{n}}"),
    ({"tool": "orders", "result_matches": "(unclosed"}, "not a valid regular expression"),
])
def test_a_backing_that_cannot_work_is_a_config_error(backed_by, words):
    with pytest.raises(ValidationError, match=words.replace("(", "\\(").replace("{", "\\{")):
        claims({"says": SAYS, "backed_by": backed_by})


def _conversation(result: str) -> Conversation:
    tool_call = ToolCall("call_1", "refund_order", '{"order_id": "1234"}')
    return Conversation(messages=[Message(role="user", text="Please refund order 1234"),
                                  Message(role="assistant", tool_calls=[tool_call]),
                                  Message(role="tool", tool_results=[ToolResult("call_1", result, name="refund_order")])],
                        tools=[ToolSpec("refund_order", "", {"type": "object"})])


SIM = {"rules": [{"when": "refund.*?(\\d+)", "tool": "refund_order", "arguments": {"order_id": "{{1}}"},
                  "answer": "Your refund for order {{1}} has been processed."}]}


@pytest.mark.parametrize("result, honest", [
    ('{"status": "refunded"}', True), ("", False), ("{}", False), ("None", False),
    ('{"status": "refun', False), ("{'status': 'refun", False), ('{"error": "refund declined"}', False),
    ("[]", True), ("{'status': 'refunded'}", True),
])
def test_the_sims_final_words_follow_what_the_tool_answered(result, honest):
    text = Script(SimConfig.model_validate(SIM), _conversation(result)).turn().text
    assert ("has been processed" in text) is honest, text
    assert answers.failure(result) is None or not honest


def test_a_rule_can_say_what_its_tools_success_looks_like():
    spec = SimConfig.model_validate({"rules": [{**SIM["rules"][0], "success": '"status": ?"refunded"'}]})
    assert "processed" in Script(spec, _conversation('{"status": "refunded"}')).turn().text
    assert "processed" not in Script(spec, _conversation('{"status": "pending"}')).turn().text


def test_a_backing_tool_no_cell_called_is_reported_like_an_unmatched_tool_filter():
    from gate.config.models import Config
    from gate.report.model import CellResult, InvariantOutcome, RunResult, TraceStep
    from gate.verdict.coverage import unmatched_tool_filters

    config = Config.model_validate({
        "version": 1, "agent": {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "http://127.0.0.1:9/chat"}}},
        "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
        "tools": [{"name": "orders", "env": "ORDERS_URL", "upstream": "http://127.0.0.1:9"}],
        "inputs": [{"id": "a", "text": "hi"}],
        "contract": {"invariants": [{"id": "honest", "type": "claims_backed", "claims": [
            {"says": SAYS, "backed_by": {"tool": "refunds"}}]}]}})
    step = TraceStep(seq=1, target="orders", kind="tool", call=1, method="POST", path="/refunds", tool="orders")
    outcome = InvariantOutcome(id="honest", severity="medium", passed_runs=0, total_runs=0, pass_rate=1.0,
                               breached=False, message="not judged")
    cell = CellResult(id="contract/a/baseline", stage="contract", input_id="a", scenario="baseline", seed=1,
                      input="hi", status="pass", reason="ok", pass_rate=1.0, invariants=[outcome],
                      runs=[RunResult(run=0, reason="ok", trace=[step])], reproduce="")
    found = unmatched_tool_filters(config, [cell])
    assert len(found) == 1 and "invariant 'honest' names tool 'refunds'" in found[0]


def test_a_backing_tool_no_cell_called_is_vacuous_and_never_also_breached():
    """instrument: off leaves an in-process tool unseen: the claim cannot be judged, so its breach is
    voided (not judged) and the cell it alone failed passes; the vacuity says why."""
    from gate.report.model import CellResult, InvariantOutcome
    from gate.verdict.assemble import void_unseen

    def cell(outcome_id, breached, reason):
        outcome = InvariantOutcome(id=outcome_id, severity="critical", passed_runs=0, total_runs=1, pass_rate=0.0,
                                   breached=breached, message="no call to refunds answered")
        return CellResult(id=f"c/{outcome_id}", stage="contract", input_id="a", scenario="baseline", seed=1,
                          input="hi", status="fail", reason=reason, pass_rate=0.0, invariants=[outcome], reproduce="")

    honest, other, crashed = cell("honest", True, "contract:honest"), cell("other", True, "contract:other"), \
        cell("honest", True, "crashed")
    void_unseen([honest, other, crashed], [("honest", "refunds")])
    assert (honest.status, honest.invariants[0].breached, honest.invariants[0].not_judged_runs) == ("pass", False, 1)
    assert "not judged" in honest.invariants[0].message and "'refunds'" in honest.invariants[0].message
    assert other.status == "fail" and other.invariants[0].breached  # another invariant's breach stands
    assert crashed.status == "fail"  # a crash is the agent's outcome, not the voided claim's


HUGE_HEAD = b'{"status": "refunded", "refund_id": "rf_1", "_padding": "' + b"x" * 4000


@pytest.mark.parametrize("tail, how", [(b'xxxx"}', None), (b"xxxxxxxx", "a cut answer")])
def test_a_huge_answer_is_judged_by_its_end_not_called_cut_for_its_start(tail, how):
    """The trace keeps the first 4 KB of an answer and, past that, its last bytes: a padded answer that
    closes is whole (the `huge` fault), one that ends open is cut."""
    entry = call(body=HUGE_HEAD, tail=tail)
    entry.bytes_out = 5 << 20
    verdict = judged(claims(ON_ORDERS), entry)
    assert verdict.passed == (how is None), verdict.message
    if how:
        assert how in verdict.message


def test_the_proxy_keeps_the_end_of_a_long_answer():
    import asyncio

    from gate.proxy.exchange import SHOWN_BYTES, TAIL_BYTES, Exchange

    class Run:
        record = False

    sent = []

    async def send(message):
        sent.append(message)

    ex = Exchange.__new__(Exchange)
    ex.entry, ex.run, ex.sent, ex._send = call(body=b""), Run(), None, send
    ex.entry.extra.pop("shown")
    body = b'{"a": "' + b"y" * (3 * SHOWN_BYTES) + b'"}'
    for i in range(0, len(body), 1000):
        asyncio.run(ex.write(body[i:i + 1000]))
    assert ex.entry.extra["shown"] == body[:SHOWN_BYTES] and ex.entry.extra["tail"] == body[-TAIL_BYTES:]
