"""Calls that arrive during one cell but belong to an earlier one: told apart by cause, never by timing alone.

A write the agent sends after it answered (a background task's confirmation, a fire-and-forget audit
call) usually arrives once the next cell has begun. A tool write in a run whose model has not answered
yet cannot have been decided by this run's model, so within LATE_WINDOW of the previous run's end it is
the previous cell's. Reads are left to the run they arrive in (nothing judges a read twice), and so is
everything of an agent whose model the gate does not see, or that has been seen writing before its model
answered where no late write can be (its first run, or long after the previous one): such an agent's
early writes are its own, so the rule is off for its worker from then on.

A model call can be late too: an agent that answered (or gave up waiting) while its conversation ran on
asks its model again once the next cell has begun, then acts on the answer. Such a call is the earlier
cell's when its conversation says so: it names that cell's input and not this run's (for an agent seen
sending its inputs verbatim), or — this run's model having answered nothing yet, and the last run having
ended mid tool loop — it ends with tool results no tool call of this run's model asked for. The writes
its answer leads to are that cell's late writes, and one that executes again an intended write that
cell had executed is its double write (`repeats`, charged by gate/verdict/late.py).
"""

from __future__ import annotations

import time
from collections import Counter, deque

from gate.contracts.meaning import strings_in
from gate.contracts.reference import write_meanings
from gate.faults.shapes import dialect_of

LATE_WINDOW = 1.0  # real seconds after a run's end in which a write decided by no model of the next is its
LATE_CONVERSATION_WINDOW = 120.0  # real seconds in which a model call carrying an ended conversation is its own
MIN_NAMING = 12  # characters of an input that name its conversation (a shorter one is found by chance)
ENDED_KEPT = 8  # ended runs whose conversations a late model call is matched against


class LateCalls:
    """One worker's memory of the runs that ended: whose a call is, and what each ended run wrote."""

    def __init__(self):
        self.previous: tuple[str, float] | None = None  # (cell, monotonic end) of the run before this one
        self.writes_first = False  # seen writing before its model answered where no late write can be: rule off
        self.inputs_verbatim = False  # some model call carried its run's input as given
        # (the ended cell it was late for, when) of the last model answer: a write right after it is that cell's
        self.last_answer: tuple[str | None, float] = (None, 0.0)
        # (cell, end, input, whether its conversation was mid tool loop when it ended) of the last runs
        self.ended: deque[tuple[str, float, str, bool]] = deque(maxlen=ENDED_KEPT)
        self.written: dict[str, Counter] = {}  # what each of those runs wrote, its late writes added as they come

    def owner(self, run, route, info, writes, llm_seen: bool) -> str | None:
        """The ended cell a call arriving in `run` belongs to, or None (it is the run's own). `writes()`: does
        the call write; `llm_seen`: has this worker's proxy seen a model call at all."""
        if route.kind == "tool":
            return self._late_write(run, writes, llm_seen)
        return self._late_conversation(run, info) if route.kind == "llm" else None

    def _late_write(self, run, writes, llm_seen: bool) -> str | None:
        if not writes():
            return None
        cell, answered = self.last_answer
        if cell is not None and time.monotonic() - answered <= LATE_WINDOW:
            return cell  # acting on the answer to an ended cell's conversation
        if run.model_answered or self.writes_first:
            return None
        if self.previous is None or time.monotonic() - self.previous[1] > LATE_WINDOW:
            self.writes_first = True  # it writes before asking its model, so such a write is no evidence
            return None
        return self.previous[0] if llm_seen else None

    def _late_conversation(self, run, info) -> str | None:
        if not self.ended or not run.input_text or not isinstance(info.doc, dict):
            return None
        now = time.monotonic()
        recent = [(cell, said, mid) for cell, end, said, mid in reversed(self.ended)
                  if now - end <= LATE_CONVERSATION_WINDOW]
        if not recent:
            return None
        text = "\n".join(strings_in(info.doc, limit=12))
        if run.input_text in text:
            self.inputs_verbatim = True  # this agent sends its input as given: a call naming another's is that one's
        elif self.inputs_verbatim:
            return next((cell for cell, said, _ in recent if len(said) >= MIN_NAMING and said in text), None)
        else:
            return None
        # a tool result no tool call of this run's model asked for, while the last run ended mid tool loop (an
        # agent that runs a tool before asking its model ends its runs with an answer: never taken for late)
        if not run.model_answered and recent[0][2] and _ends_with_tool_results(info):
            return recent[0][0]
        return None

    def answered(self, late_for: str | None) -> None:
        """A model answer reached the agent: an ended cell's (`late_for`) or the running one's (None)."""
        self.last_answer = (late_for, time.monotonic())

    def end_run(self, cell: str, state) -> None:
        """A run ended: what it asked and wrote, for the late calls of its conversation."""
        self.previous = (cell, time.monotonic())
        calls = [e for e in state.trace if e.kind == "llm"]
        mid_loop = bool(calls) and (calls[-1].status is None or calls[-1].extra.get("answer_tool_calls") is True)
        self.ended.append((cell, time.monotonic(), state.input_text, mid_loop))
        self.written[cell] = write_meanings(state.trace)
        for gone in set(self.written) - {c for c, _, _, _ in self.ended}:
            del self.written[gone]

    def repeats(self, owner: str, entry) -> str | None:
        """The intended write a late write of `owner`'s executes again, if it does."""
        done = self.written.setdefault(owner, Counter())
        repeated = None
        for meaning, n in write_meanings([entry]).items():
            done[meaning] += n
            if done[meaning] > 1 and repeated is None:
                repeated = meaning
        return repeated


def _ends_with_tool_results(info) -> bool:
    """Does the conversation this request sends end with tool results (not with a user's message)?"""
    dialect = dialect_of(info)
    if dialect is None:
        return False
    try:
        messages = dialect.decode(info.path, info.doc).messages
    except Exception:  # a request the dialect cannot read says nothing about whose it is
        return False
    return bool(messages) and bool(messages[-1].tool_results) and not messages[-1].text.strip()
