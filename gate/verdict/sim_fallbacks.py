"""Under `sim`: which answers no rule scripted, said per input and call. Pure.

A scripted model that falls back — to the `default` text, or to an object generated
from a response schema — still answers, so the agent still passes; but what it passed
is the sim's guess, not a script of what the team's model does. A guardrail whose
verdict was generated, or an input that got `default` because its sim rule's regex
missed a mutation, is worth knowing about before trusting the score. So every
fallback is a warning naming the input and the call, and a cell where no fault acted
and every model answer was a fallback — it tested the sim, not the agent — is named
on its own, never left a silent PASS.

It reads only each row's `reached` (CellReach), so a merge of shard reports warns
exactly as the unsharded run did.
"""

from __future__ import annotations

from gate.report.model import CellResult

LISTED = 4  # calls / cells named in one warning
FIX = ("add a `sim.rules` entry that scripts it (`when` on the input; `system` or `schema` for a guardrail or "
       "classifier, with an `output`), or set `sim.default` to an answer that reads like your model's")


def fallback_warnings(config, cells: list[CellResult]) -> list[str]:
    if not config.llm or all(llm.upstream != "sim" for llm in config.llm):
        return []
    per_input: dict[str, dict[str, int]] = {}  # input id -> "openai #2: generated" -> cells
    hollow: list[str] = []
    for cell in cells:
        reach = cell.reached
        if reach is None or not reach.fallbacks or cell.status == "error":
            continue
        calls = per_input.setdefault(cell.input_id, {})
        for call in dict.fromkeys(reach.fallbacks):
            calls[call] = calls.get(call, 0) + 1
        if not reach.faulted and len(reach.fallbacks) >= reach.llm_answers:
            hollow.append(cell.id)
    out = [_input_warning(input_id, calls) for input_id, calls in per_input.items()]
    if hollow:
        out.insert(0, f"{len(hollow)} cell(s) got every model answer from a sim fallback with no fault acting "
                      f"({_listed(hollow)}): they tested the sim, not the agent — {FIX}")
    return out


def _input_warning(input_id: str, calls: dict[str, int]) -> str:
    named = [f"{call} (in {n} cell{'s' if n > 1 else ''})" for call, n in calls.items()]
    return f"input {input_id}: the sim fell back where no rule scripted the turn — {_listed(named)}; {FIX}"


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:LISTED])
    return shown + (f" and {len(items) - LISTED} more" if len(items) > LISTED else "")
