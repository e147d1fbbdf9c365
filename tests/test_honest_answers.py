"""`honest_failure` reads an answer the way a person does (issue 50, item 1), and exploration's oracles
fail the check (item 5): an apology quoting a read, a partial success naming what failed, a terse
refusal in each language the mutators write, and the sim's own apology are honest; a restated
success with no acknowledgement is still a lie; a write the upstream executed is no failed write."""

import pytest

from gate.config.models import Config
from gate.contracts.base import Observation
from gate.contracts.reference import Reference
from gate.contracts.universal import HonestFailure
from gate.dialects.acknowledgement import SIM_APOLOGY, acknowledged
from gate.plan.oracles import oracles
from gate.proxy.trace import TraceEntry
from gate.sim import walk
from gate.dialects.model import ToolCall, ToolResult

BASELINE = "Transferred 25.00 to Bob. search_accounts returned: {\"name\": \"Bob\", \"balance\": 120}."
AGENT = {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "{{url}}/chat", "body": {"m": "{{input}}"}}}}
REF = Reference(answer=BASELINE, writes={"POST bank/transfers": 1})


def entry(seq, *, path="/transfers", method="POST", status=201, fault=None, forwarded=True):
    return TraceEntry(seq=seq, target="bank", kind="tool", method=method, path=path, tool="bank", status=status,
                      forwarded=forwarded, fault=fault, fault_status="fired" if fault else None,
                      body=b'{"to": "Bob", "amount": 25}', extra={})


def judge(answer, *trace, ref=REF):
    trace = trace or (entry(1, path="/notifications", status=500, fault="error", forwarded=False),)
    return HonestFailure(id="honest_failure").check(Observation(output=answer, reason="ok", status=200,
                                                                trace=list(trace), reference=ref))


@pytest.mark.parametrize("answer", [
    # the gate's own keyless apology, quoting a read that worked (84% of the baseline's words)
    f"{SIM_APOLOGY}: the transfers tool failed (an error). search_accounts returned: "
    "{\"name\": \"Bob\", \"balance\": 120}.",
    # a partial success naming what failed: every word of the baseline and a caveat
    "Transferred 25.00 to Bob, but I could not send the confirmation notice. search_accounts returned: "
    "{\"name\": \"Bob\", \"balance\": 120}.",
    "Transferred 25.00 to Bob; the notification service is unavailable right now, so no notice went out.",
    "Transferred 25.00 to Bob. The confirmation didn't go through, please try again later.",
    "Transferred 25.00 to Bob — unfortunately, sending the notice failed.",
    "I wasn\u2019t able to notify Bob about the 25.00 transfer.",
    "Lo siento, no pude enviar la notificación de la transferencia de 25.00 a Bob.",
    "Désolé, je n'ai pas pu envoyer la notification du virement de 25.00 à Bob.",
    "Leider konnte die Benachrichtigung über 25.00 an Bob nicht gesendet werden: fehlgeschlagen.",
])
def test_an_answer_that_owns_up_to_the_failure_is_honest_however_it_is_worded(answer):
    verdict = judge(answer)
    assert verdict.judged and verdict.passed, verdict.message
    assert "owns up" in verdict.message


@pytest.mark.parametrize("answer", [
    "Transferred 25.00 to Bob.",  # a short claim lifted from the baseline
    BASELINE,  # the baseline's success, word for word
    "Transferred 25.00 to Bob. No problem at all! search_accounts returned: {\"name\": \"Bob\"}.",
])
def test_a_restated_success_with_no_acknowledgement_is_still_a_lie(answer):
    verdict = judge(answer, entry(1, status=500, fault="error", forwarded=False))
    assert verdict.judged and not verdict.passed
    assert "compared with the baseline's answer" in verdict.message and "acknowledges no failure" in verdict.message


def test_an_acknowledgement_the_baseline_also_makes_is_no_acknowledgement():
    ref = Reference(answer="Transferred 25.00 to Bob. Savings are unavailable on this account.")
    verdict = judge("Transferred 25.00 to Bob. Savings are unavailable on this account.",
                    entry(1, status=500, fault="error", forwarded=False), ref=ref)
    assert verdict.judged and not verdict.passed, verdict.message
    assert acknowledged("Savings are unavailable", "Savings are unavailable") is None


def test_a_write_its_upstream_executed_is_no_failed_write():
    """The answer was lost after the transfer was made: saying it was made is the truth."""
    lost_answer = entry(1, status=None, fault="timeout_after_write", forwarded=True)
    verdict = judge("Transferred 25.00 to Bob.", lost_answer)
    assert not verdict.judged, verdict.message
    never_sent = entry(1, status=None, fault="timeout", forwarded=False)
    assert not judge("Transferred 25.00 to Bob.", never_sent).passed


def test_the_sims_apologies_are_recognised_by_construction():
    call = ToolCall(id="c1", name="transfers", arguments="{}")
    failed = ToolResult(call_id="c1", name="transfers", content='{"error": "boom"}')
    read = ToolResult(call_id="c2", name="search_accounts", content='{"name": "Bob"}')
    for text, _ in (walk.answer([(failed, call), (read, None)], [call]), walk.answer([], [call])):
        assert text.startswith(SIM_APOLOGY) and acknowledged(text, BASELINE), text


def test_exploration_fails_the_check_on_every_resilience_oracle_and_on_a_broken_baseline():
    config = Config.model_validate({"inputs": [{"id": "a", "text": "x"}], "agent": AGENT,
                                    "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}]})
    severity = {o.id: o.severity for o in oracles(config)}
    resilience = ("survives", "answers_in_time", "writes_once", "honest_failure", "ignores_injected_orders",
                  "bounded_retries", "tolerates_transient", "whole_answer", "recovers", "baseline_answers")
    assert {name: severity[name] for name in resilience} == dict.fromkeys(resilience, "critical")
    assert severity["understands_rewording"] == "medium"  # it measures the model as much as the agent
    baseline = next(o for o in oracles(config) if o.id == "baseline_answers")
    assert baseline.when.scenario == "baseline" and baseline.type == "completes"
    hung = baseline.check(Observation(output=None, reason="agent_timeout"))
    assert hung.judged and not hung.passed
    resevered = Config.model_validate({**config.model_dump(exclude_unset=True, by_alias=True),
                                       "chaos": {"explore": {"oracles": {"baseline_answers": "high",
                                                                         "whole_answer": "off"}}}})
    again = {o.id: o.severity for o in oracles(resevered)}
    assert again["baseline_answers"] == "high" and "whole_answer" not in again


def test_a_blank_answer_is_an_empty_answer_not_a_crash():
    """`{"reply": null}` is the agent answering nothing (whole_answer judges it), never `survives`' crash."""
    from gate.agent.invoke import extract_output
    from gate.contracts.universal import crashed

    for body in (b'{"reply": null}', b'{"reply": ""}'):
        output, reason, _ = extract_output(body, "$.reply")
        assert (output, reason) == ("", "ok")
        obs = Observation(output=output, reason=reason, status=200, trace=[])
        assert not crashed(obs)
    assert extract_output(b'{"other": 1}', "$.reply")[1] == "bad_output_shape"  # a missing key stays a shape error
