"""What a fault leaves behind in a conversation's later turns: the session it broke. Pure.

A fault fires in one turn; a sound agent answers that turn as it can and takes the next turn as a
fresh session would. Three signs that it did not, each of which a sound agent never shows, so none
is judged against wording (a later turn may rightly answer otherwise: "did my transfer go through?"):

- a later turn that did not answer at all (a crash, an error status, no answer in time) while the
  faulted turn itself was answered: the session, not the turn, was broken;
- a model call of a later turn refused by the provider with a 4xx the gate did not inject — the
  history the agent kept is one the provider will not take (a tool call left without its result:
  gate/dialects/refusals.py);
- a later turn answered without asking the model at all where every fault-free sample asked it:
  the agent kept a failure state (a flag, a cached error) and replays it.

Read from the run's own observation: the transcript (`obs.state["turns"]`), the trace's turn keys
(gate/proxy/trace.py) and the baseline's model calls per turn (`Reference.turn_model_calls`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BrokenSession:
    turn: int  # the first later turn that went wrong
    why: str


def fault_turn(fired) -> int | None:
    """The turn the first fired fault fell in (None: not a conversation's call)."""
    turns = [e.turn for e in fired if getattr(e, "turn", None)]
    return min(turns) if turns else None


def broken_after(obs, fired, turn_model_calls: tuple[int, ...]) -> BrokenSession | None:
    """The first later turn that shows the session broken by the fault of turn `fault_turn(fired)`."""
    transcript = obs.state.get("turns") or []
    at = fault_turn(fired)
    if at is None or len(transcript) <= at:
        return None
    answered_then = transcript[at - 1].get("reason") == "ok"
    for record in transcript[at:]:
        n = record.get("turn") or 0
        if record.get("reason") != "ok" and answered_then:
            return BrokenSession(n, f"turn {n} failed ({record.get('reason')}) though turn {at}, where the fault "
                                    f"fired, was answered")
        refused = next((e for e in obs.trace if getattr(e, "turn", None) == n and e.kind == "llm"
                        and e.fault_status != "fired" and e.status is not None and 400 <= e.status < 500
                        and e.status != 429), None)
        if refused is not None:
            said = f": {refused.note}" if refused.note else ""
            return BrokenSession(n, f"the provider refused turn {n}'s model call with {refused.status}{said} — the "
                                    f"history kept after the fault at turn {at} is one it will not take")
        asked = sum(1 for e in obs.trace if getattr(e, "turn", None) == n and e.kind == "llm")
        expected = turn_model_calls[n - 1] if n - 1 < len(turn_model_calls) else 0
        if record.get("reason") == "ok" and asked == 0 and expected > 0:
            return BrokenSession(n, f"turn {n} was answered without asking the model (every fault-free sample "
                                    f"asked it {expected} time(s) there): the agent kept the failure of turn {at}")
    return None


def turn_of_detail(detail: str | None) -> str:
    """' at turn N of M' from a conversation run's failure detail ('turn N of M: …'), else ''."""
    if detail and detail.startswith("turn ") and ":" in detail:
        return " at " + detail.split(":", 1)[0].split(" failed")[0]
    return ""
