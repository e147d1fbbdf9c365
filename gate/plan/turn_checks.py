"""A conversation turn's own checks (`turns: [{text, expect: [...]}]`): output checks judged on that turn's answer.

Each `expect` item is one of the contract's output invariants (gate/contracts/output_checks.py), unchanged;
`TurnCheck` hands it the answer of its turn instead of the run's output (the last turn's), read from the
transcript the run keeps (`state["turns"]`, gate/agent/conversation.py), and prefixes its message with the
turn: `turn 2: output does not contain 'Ada'`. It applies to the cells of its own input only, and to those
its `when` (stage, scenario, mutation) also matches. A turn the conversation never reached, or that gave no
answer, is not judged: the outcome (`completes`) carries that failure once, named by its turn.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from gate.config.models import Config, InputSpec
from gate.contracts.base import InvariantBase, Observation, Verdict


class TurnCheck(InvariantBase):
    """The output check `inner` of turn `turn` of input `input_id` (never in the invariant catalog)."""

    type: Literal["turn_check"] = "turn_check"
    input_id: str
    turn: int
    inner: Any  # an output invariant, validated by the config (gate/config/models.py TurnSpec)

    kind: ClassVar[str] = "outcome"

    def applies_to(self, facts: dict[str, str | None]) -> bool:
        return facts.get("input") == self.input_id and self.inner.applies_to(facts)

    def evaluate(self, obs: Observation) -> Verdict:
        turns = obs.state.get("turns") or []
        n = self.turn
        if len(turns) < n:
            ended = f"the conversation ended at turn {len(turns)}" if turns else "no turn was sent"
            return Verdict.not_judged(f"turn {n}: not judged: never sent ({ended}; outcome: {obs.reason})")
        said = turns[n - 1]
        if said.get("answer") is None:
            return Verdict.not_judged(f"turn {n}: not judged: no answer (outcome: {said.get('reason')})")
        verdict = self.inner.evaluate(Observation(output=said["answer"], reason=said.get("reason", "ok"),
                                                  baseline=None, state={"turns": turns}))
        return Verdict(verdict.passed, f"turn {n}: {verdict.message}", verdict.judged)


def turn_checks(config: Config) -> list[TurnCheck]:
    """Every input's per-turn checks, in the inputs' order, each under its own id (`<input>:turn<N>:<type>`)."""
    return [check for inp in config.inputs for check in checks_of(inp)]


def checks_of(inp: InputSpec) -> list[TurnCheck]:
    """One input's per-turn checks (the pytest plugin's `chaos_run.conversation` judges them too)."""
    return [TurnCheck.model_construct(id=check.id, severity=check.severity, when=None, negate=False,
                                      min_pass_rate=check.min_pass_rate, description=check.description,
                                      type="turn_check", input_id=inp.id, turn=n, inner=check)
            for n, _, check in inp.turn_checks()]
