"""Behaviour behind the overhead work of issue 16 (speed itself is measured in bench/).

Each shortcut taken for speed has a way to be wrong: a frozen heap left frozen leaks in a
long-lived process, a readiness probe that reads the body hangs on a streaming endpoint, a
redactor that skips a known value must still redact it, a cell hashed by id must still be
equal only to an equal cell.
"""

from __future__ import annotations

import asyncio
import gc
import io
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import planted_agent_block, write_config
from gate.agent.process import answers
from gate.plan import load_config
from gate.config.secrets import Redactor
from gate.plan.cells import Cell
from gate.runner import run_gate
from gate.heap import YOUNG_THRESHOLD, frozen_heap, settle_heap
from gate.transport import WireClient


def test_the_heap_is_unfrozen_after_a_run_and_after_a_failure(tmp_path):
    config = write_config(tmp_path, planted_agent_block("sound") + """
inputs: [{id: a, text: "hello there"}]
contract:
  invariants: [{id: done, type: completes}]
""")
    assert gc.get_freeze_count() == 0
    report = run_gate(load_config(config), output_dir=tmp_path / "out")
    assert report.verdict.verdict == "pass" and gc.get_freeze_count() == 0

    with pytest.raises(RuntimeError), frozen_heap():
        assert gc.get_freeze_count() > 0
        raise RuntimeError("the run failed")
    assert gc.get_freeze_count() == 0


def test_a_nested_frozen_heap_keeps_the_outer_one_and_everything_is_restored_after():
    """The report writers open their own inside a run: closing theirs must not unfreeze the run's heap
    or restore CPython's thresholds early; closing the outer one restores both."""
    before = gc.get_threshold()
    with frozen_heap():
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
        with frozen_heap():
            pass
        assert gc.get_freeze_count() > 0 and gc.get_threshold()[0] >= YOUNG_THRESHOLD
        frozen = gc.get_freeze_count()
        made_now = [[n] for n in range(3)]  # containers: objects the collector tracks
        settle_heap()
        assert gc.get_freeze_count() >= frozen + len(made_now)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    settle_heap()  # outside a run: nothing is frozen
    assert gc.get_freeze_count() == 0


class _Streaming(BaseHTTPRequestHandler):
    """/stream answers 200 and then never ends its body; /broken answers 503."""

    def do_GET(self):
        if self.path == "/broken":
            self.send_response(503)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b"data: tick\n\n")
        self.wfile.flush()
        self.server.release.wait(10)

    def log_message(self, *args):
        pass


def test_readiness_is_the_status_alone_even_for_a_body_that_never_ends():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Streaming)
    server.release = threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/health"

    async def main():
        client = WireClient(connect_timeout=1.0)
        try:
            loop = asyncio.get_running_loop()
            began = loop.time()
            streaming = await answers(client, base + "/stream")
            took = loop.time() - began
            return streaming, took, await answers(client, base + "/broken"), await answers(client, closed)
        finally:
            await client.aclose()

    try:
        streaming, took, broken, refused = asyncio.run(main())
    finally:
        server.release.set()
        server.shutdown()
    assert streaming is True and took < 0.9  # not the 1 s per-attempt timeout: the body was never awaited
    assert broken is False and refused is False


def test_a_value_added_again_is_still_redacted_in_every_form():
    redactor = Redactor()
    for _ in range(3):  # an agent sends its key on every call
        redactor.note_header("Authorization", 'Bearer sk-live-"quoted"&<key>-0123456789')
    text = 'raw sk-live-"quoted"&<key>-0123456789 json sk-live-\\"quoted\\"&<key>-0123456789 ' \
           'xml sk-live-&quot;quoted&quot;&amp;&lt;key&gt;-0123456789'
    redacted = redactor.redact(text)
    assert "0123456789" not in redacted and redacted.count("AUTHORIZATION") == 3


def test_cells_hash_by_id_and_compare_by_every_field():
    a = Cell("contract/a/baseline", 0, "contract", "a", "hi", "hi", 7)
    same = Cell("contract/a/baseline", 0, "contract", "a", "hi", "hi", 7)
    other_seed = Cell("contract/a/baseline", 0, "contract", "a", "hi", "hi", 8)
    assert hash(a) == hash(same) == hash(other_seed)
    assert a == same and a != other_seed
    assert {a: 1, other_seed: 2} == {same: 1, other_seed: 2}


def test_free_spots_are_found_once_but_handed_out_as_copies():
    from gate.mutation.text import GuardedText, Preserve

    guarded = GuardedText("order 1234 arrived broken", Preserve())
    letters = guarded.free_positions(str.isalpha)
    letters.reverse()  # a mutator shuffling what it got must not change what the next one gets
    assert guarded.free_positions(str.isalpha) == sorted(letters)
    words = guarded.free_words()
    words.clear()
    assert [guarded.text[a:b] for a, b in guarded.free_words()] == ["order", "arrived", "broken"]

    def only(char):  # predicates that capture a variable are never taken from the cache
        return guarded.free_positions(lambda ch: ch == char)
    assert only("r") != only("o") and [guarded.text[i] for i in only("o")] == ["o", "o"]


def test_each_reproduce_command_carries_its_own_config_and_digest():
    from gate.verdict.evaluate import reproduce_command

    cell = Cell("chaos/a/timeout", 3, "chaos", "a", "hi", "hi", 7)
    first = reproduce_command("one.yaml", cell, env={"MODE": "a b"}, digest="d1")
    second = reproduce_command("other dir/two.yaml", cell, seed=9, digest="d2")
    assert first == "MODE='a b' chaos-gate run -c one.yaml --only chaos/a/timeout --expect-digest d1"
    assert second == "chaos-gate run -c 'other dir/two.yaml' --only chaos/a/timeout --seed 9 --expect-digest d2"


def test_by_deadline_times_out_cancels_the_work_and_leaves_outside_cancellations_alone():
    """The per-cell deadline (gate/agent/dilation.py) keeps asyncio.timeout's meaning."""
    import asyncio

    from gate.transport.clock import by_deadline

    async def scenario():
        assert await by_deadline(asyncio.sleep(0.01, result="answer"), 5) == "answer"
        cancelled = []

        async def slow():
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

        with pytest.raises(TimeoutError):
            await by_deadline(slow(), 0.05)
        assert cancelled and asyncio.current_task().cancelling() == 0
        await asyncio.sleep(0.01)  # the task is not left cancelled: it carries on after a timeout

        async def waits_then_cancelled_from_outside():
            await by_deadline(asyncio.sleep(10), 0.05)

        outer = asyncio.ensure_future(waits_then_cancelled_from_outside())
        await asyncio.sleep(0.01)
        outer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await outer
        return True

    assert asyncio.run(scenario())


_TEXT = st.lists(st.sampled_from(['a', 'é', '"', '\n', '{', '}', ' ', '\\', '\u2603', '\U0001f600',
                                  '{{input}}', '{{ input }}', '{{cell_id}}', '{{missing}}', '{{Bad}}', '{{']),
                 max_size=6).map("".join)
_JSONISH = st.recursive(_TEXT | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none(),
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
                        max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(_JSONISH)
def test_a_request_template_made_once_fills_and_encodes_as_render_and_json_would(value):
    """The per-cell request (gate/agent/invoke.py) fills a template compiled once and encodes it with
    the C encoder made once: the same structure as `render`, the same text as the JSONEncoder."""
    from gate.agent.invoke import _BODY_JSON, _encode_json
    from gate.templates import filler, filling, render

    ctx = {"input": 'he said "hi"\n\u2603 \ud83d\ude00 {{input}}', "cell_id": "mutation/a/typo-1", "url": "http://x"}
    made = filler(value)
    filled = value if made is None else made(ctx)
    assert filled == render(value, ctx) == filling(value)(ctx)
    assert _encode_json(filled) == _BODY_JSON.encode(filled)


def test_runs_judged_after_the_pool_are_the_runs_judged_at_once(tmp_path):
    """The pool judges its runs after the last cell (gate/runner/pool.py `Finished`); a progress
    display that asks first judges them then. Either way each run is judged once, the same."""
    from gate.agent.invoke import RawOutcome
    from gate.contracts import Observation
    from gate.contracts.output_checks import Contains
    from gate.report.progress import PlainProgress
    from gate.runner import pool as pool_module
    from gate.runner.pool import Finished

    judged = []
    real = pool_module.check_run

    def counting(invariants, obs):
        judged.append(obs.output)
        return real(invariants, obs)

    invariants = [Contains(id="says", value="refund")]

    def finished(output):
        raw = RawOutcome(output, "ok", 200, 12.5, "")
        return Finished(0, raw, Observation(output=output, reason="ok", status=200, latency_ms=12.5), invariants)

    pool_module.check_run = counting
    try:
        later, asked = finished("no refund today"), finished("nothing")
        out = io.StringIO()
        progress = PlainProgress(out, interval=0)
        progress.on_plan(2)
        progress.on_progress(asked)  # a line is due: asked is judged now
        assert judged == ["nothing"] and progress.failures == 1
        first = later.value()
        assert later.value() is first and judged == ["nothing", "no refund today"]  # once, then remembered
        assert asked.value()[0].checks[0].passed is False and len(judged) == 2
    finally:
        pool_module.check_run = real
    run, latency, times, stats, bodies = first
    assert (run.reason, run.status, run.output, latency, times, stats, bodies) == \
        ("ok", 200, "no refund today", 12.5, [], None, [])
    assert [c.passed for c in run.checks] == [True]
    assert Finished.now(run).value()[0] is run and Finished.now(run).value()[1] == 0.0  # no time measured
