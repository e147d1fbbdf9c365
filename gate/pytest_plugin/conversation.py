"""`chaos_run.conversation(turns, history=...)`: a conversation input run inside a chaos test.

The turns are an input's `turns:` (texts, or `{"text": ..., "expect": [...]}`), validated as the config
validates them. Who answers them: `agent=`, a callable of the test's own in-process agent (called once per
turn, `agent(text)`, or `agent(text, history)` with `history="messages"`: the previous turns as OpenAI-style
messages); else the `agent:` of the test's `chaos_config`, started as `chaos-gate run` starts it (a server,
or a command: per turn, or `conversation: lines`) with the run's env, so its calls reach the proxy, and
sent the turns exactly as a conversation cell sends them (gate/agent/instance.py `converse`). Either way the
proxy learns each turn before it is sent (the trace and the faults keyed by turn), a failed turn ends the
conversation, and the result holds every turn's answer, the outcome, and the per-turn checks' verdicts. An
exception the callable raises is the test's, as if it had raised it itself, with a note naming the turn.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ConversationResult:
    """What a conversation run gave: `turns` (dicts: turn, text, answer, reason, latency_ms), `answers`
    (0-based), `answer` (the last turn's), `reason`/`detail` (as a cell's run), `checks` (per-turn checks)."""

    turns: list[dict]
    reason: str = "ok"
    detail: str = ""
    checks: dict[str, object] = field(default_factory=dict)  # check id -> Verdict (passed, message, judged)

    @property
    def answers(self) -> list[str | None]:
        return [t["answer"] for t in self.turns]

    @property
    def answer(self) -> str | None:
        return self.turns[-1]["answer"] if self.turns else None

    @property
    def ok(self) -> bool:
        return self.reason == "ok"

    def turn(self, n: int) -> dict:
        """Turn `n` (from 1) as sent: its text, answer, reason and latency."""
        if not 1 <= n <= len(self.turns):
            raise IndexError(f"turn {n} was not sent: the conversation has {len(self.turns)} turn(s) "
                             f"({self.reason}{': ' + self.detail if self.detail else ''})")
        return self.turns[n - 1]

    @property
    def failures(self) -> list[str]:
        """The failed per-turn checks' messages ("turn 2: output does not contain 'Ada'")."""
        return [f"{cid}: {v.message}" for cid, v in self.checks.items() if v.judged and not v.passed]


class Conversations:
    """`chaos_run.conversation`, bound to a run and the spec it plays."""

    def __init__(self, run, spec):
        self.run, self.spec = run, spec

    def __call__(self, turns: list, history: str = "none", agent=None) -> ConversationResult:
        from gate.config.models import InputSpec

        if history not in ("none", "messages"):
            raise ValueError(f"chaos_run.conversation: history is 'none' or 'messages', not {history!r}")
        inp = InputSpec(id=self.spec.input_id, turns=list(turns), history=history)
        texts = inp.turn_texts()
        try:
            result = self._called(agent, texts, history) if agent is not None else self._configured(texts, history)
        finally:
            self._turn(None)  # the test's calls after the conversation belong to no turn
        self.run.answer = result.answer  # exploration judges the answer handed over (docs/pytest.md)
        result.checks = _judged(inp, result)
        return result

    def _turn(self, n: int | None) -> None:
        hook = self.run.proxy.hook
        if hasattr(hook, "turn"):
            hook.turn(n)

    def _called(self, agent, texts: tuple[str, ...], history: str) -> ConversationResult:
        from gate.agent.conversation import history_of

        transcript: list[dict] = []
        for n, text in enumerate(texts, 1):
            self._turn(n)
            began = time.monotonic()
            try:
                said = agent(text, history_of(transcript)) if history == "messages" else agent(text)
            except Exception as exc:
                exc.add_note(f"chaos_run.conversation: raised at turn {n} of {len(texts)} ({text!r})")
                raise
            transcript.append({"turn": n, "text": text, "answer": said, "reason": "ok",
                               "latency_ms": round((time.monotonic() - began) * 1000, 1)})
        return ConversationResult(transcript)

    def _configured(self, texts: tuple[str, ...], history: str) -> ConversationResult:
        """The config's agent, started for this conversation and stopped after it, on the proxy's loop."""
        from gate.agent.instance import AgentInstance

        spec, run = self.spec, self.run
        if spec.config_path is None:
            raise ValueError("chaos_run.conversation: pass agent=<your agent's function>, or give the test a "
                             "chaos_config whose `agent:` the gate can start")
        agent = spec.config.agent
        ctx = {"cell_id": run.cell_id, "input_id": spec.input_id, "run": str(run.run)}

        async def converse():
            with tempfile.TemporaryDirectory(prefix="chaos-gate-conversation-") as logs:
                instance = AgentInstance(agent, Path(spec.config_path).parent, 0, Path(logs), extra_env=run.env)
                try:
                    await instance.start()
                    await instance.reset(ctx)
                    return await instance.converse(texts, history, ctx, self._turn)
                finally:
                    await instance.stop()

        start = agent.start.ready.timeout if agent.start is not None else 0
        raw = run.proxy.call(converse(), timeout=start + agent.timeout * len(texts) + 30)
        return ConversationResult(list(raw.turns or []), raw.reason, raw.detail)


def _judged(inp, result: ConversationResult) -> dict:
    from gate.contracts.base import Observation
    from gate.plan.turn_checks import checks_of

    obs = Observation(output=result.answer, reason=result.reason, state={"turns": result.turns})
    return {check.id: check.evaluate(obs) for check in checks_of(inp)}
