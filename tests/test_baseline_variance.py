"""A baseline's natural variance is learned, not mistaken for a bug (issue 50, item 2).

A real model does not answer one conversation the same way twice: other wording, one more read, reads
in another order. Exploration runs each baseline `baseline_runs` times (2 by default) and the oracles
that compare judge against the envelope of what those sound samples did — while a faulted run that
leaves the envelope is still caught. Pure: samples are built from trace entries as the runner reads them.
"""

import pytest

from gate.config.explore import ExploreConfig
from gate.contracts.base import Observation
from gate.contracts.universal import (BoundedRetries, ToleratesTransient, UnderstandsRewording, WholeAnswer,
                                      WritesOnce)
from gate.explore.planfile import _point, _point_doc
from gate.explore.planner import Baseline, plan_points
from gate.proxy.trace import TraceEntry

SHORT, LONG = "Refund issued for order 1234.", "Your refund for order 1234 has been issued; expect it in 3 days."


def call(seq, path, method="GET", fault=None, status=200):
    return TraceEntry(seq=seq, target="orders", kind="tool", method=method, path=path, tool="orders", status=status,
                      forwarded=fault is None, fault=fault, fault_status="fired" if fault else None,
                      body=b'{"order_id": "1234"}', extra={})


def llm(seq, fault=None):
    return TraceEntry(seq=seq, target="openai", kind="llm", method="POST", path="/v1/chat/completions", status=200,
                      forwarded=True, fault=fault, fault_status="fired" if fault else None, body=b"{}", extra={})


# two sound samples of one input: the second reads the customer too, and reads before the order
FIRST = [llm(1), call(2, "/orders/1234"), call(3, "/refunds", "POST"), llm(4)]
SECOND = [llm(1), call(2, "/customers/7"), call(3, "/orders/1234"), call(4, "/customers/7"),
          call(5, "/refunds", "POST"), llm(6)]


def reference(*samples, fault="error", transient=True):
    first, *others = [Baseline.read("refund", answer, "ok", trace) for answer, trace in samples]
    return first.with_samples(others).reference(fault, transient)


ONE = reference((LONG, FIRST))
TWO = reference((LONG, FIRST), (SHORT, SECOND))


def judged(oracle, output, trace, ref):
    return oracle.check(Observation(output=output, reason="ok", status=200, trace=trace, reference=ref))


def test_the_envelope_holds_the_most_any_sample_did_and_what_every_sample_did():
    assert TWO.samples == 2 and TWO.every_answer() == [LONG, SHORT]
    customers = next(group for group in TWO.calls if "/customers/" in group)
    assert TWO.calls[customers] == 2 and customers not in ONE.calls
    assert TWO.writes_needed() == set(ONE.writes)  # both samples refunded
    plan = plan_points([Baseline.read("refund", LONG, "ok", FIRST).with_samples(
        [Baseline.read("refund", SHORT, "ok", SECOND)])], ExploreConfig(budget=50), seed=1, deadline=5)
    point = plan.points[0]
    assert _point(_point_doc(point)).reference == point.reference  # a shared plan file carries the envelope
    assert ExploreConfig().baseline_runs == 2


def test_an_extra_read_the_baselines_vary_in_is_no_retry_storm_but_a_storm_still_is():
    extra = [llm(1)] + [call(n, "/customers/7") for n in range(2, 5)] + [call(5, "/orders/1234", fault="error"),
                                                                         call(6, "/orders/1234"), llm(7)]
    assert judged(BoundedRetries(id="b"), SHORT, extra, TWO).passed
    storm = [llm(1)] + [call(n, "/orders/1234", fault="error" if n == 2 else None) for n in range(2, 12)]
    verdict = judged(BoundedRetries(id="b"), SHORT, storm, TWO)
    assert not verdict.passed and "2 samples" in verdict.message


def test_reads_in_another_order_are_understood_when_the_samples_reorder_them():
    reordered = [llm(1), call(2, "/customers/7"), call(3, "/orders/1234"), call(4, "/refunds", "POST"), llm(5)]
    assert judged(UnderstandsRewording(id="u"), SHORT, reordered, TWO).passed
    assert not judged(UnderstandsRewording(id="u"), SHORT, reordered, ONE).passed  # one sample: no variance known
    never = [llm(1), call(2, "/refunds", "POST"), llm(3)]
    verdict = judged(UnderstandsRewording(id="u"), SHORT, never, TWO)
    assert not verdict.passed and "never called" in verdict.message


@pytest.mark.parametrize("answer, whole", [(SHORT, True), (LONG, True), (LONG[:20], False), ("", False)])
def test_an_answer_a_sample_gave_is_whole_a_cut_copy_is_not(answer, whole):
    verdict = judged(WholeAnswer(id="w"), answer, [llm(1, fault="cut_content")], TWO)
    assert verdict.passed is whole, verdict.message


def test_a_transient_fault_must_leave_the_writes_every_sample_made():
    faulted = [llm(1), call(2, "/orders/1234", fault="error", status=500), call(3, "/orders/1234"),
               call(4, "/refunds", "POST"), llm(5)]
    assert judged(ToleratesTransient(id="t"), SHORT, faulted, TWO).passed
    dropped = [llm(1), call(2, "/orders/1234", fault="error", status=500), call(3, "/orders/1234"), llm(4)]
    verdict = judged(ToleratesTransient(id="t"), SHORT, dropped, TWO)
    assert not verdict.passed and "was not made" in verdict.message and "2 samples" in verdict.message


def test_a_double_write_is_beyond_every_sample():
    twice = [llm(1), call(2, "/refunds", "POST", fault="timeout_after_write"), call(3, "/refunds", "POST"), llm(4)]
    twice[1].forwarded = True  # the upstream executed the first
    verdict = judged(WritesOnce(id="o"), SHORT, twice, TWO)
    assert not verdict.passed and "executed 2 times" in verdict.message
