"""`claims_backed`: what the agent's answer claims, held against what the trace and the world show.

The failure teams fear most under faults is an agent that says it did what failed:
"your refund has been processed" after the refund call timed out. Output checks are
unconditional (`contains: processed` fails the honest agent that apologises) and
`world_state` fails the honest agent that rightly did not refund; this check is
conditional. Each claim is a regex (`says`) on the output; when it matches, its backing
must hold:

- `tool` (a glob on the trace's tool name, narrowed by `target` / `method` / `path` like a
  trace filter): some call to it answered the agent with a success (tool_answers.py reads
  each answer), optionally one whose text matches `result_matches`; `ok: false` asks only
  that it was called;
- `world_state` / `state`: the existing checks (trace_checks.py), with the claim's groups
  (`{{1}}`) put into their values.

An output that makes no claim gives the check nothing to judge (not judged, so an honest
apology is no breach, and a claim that never applies in any run is reported as vacuous).
A breach names the claim, the sentence that made it and what was found instead, ending
with the trace rows that show it (`[trace #3]`): the PR comment shows those rows
(`evidence`). The models of the backings are built once, at load; checking is pure.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, PrivateAttr, ValidationError, model_validator

from gate.contracts import tool_answers
from gate.contracts.base import InvariantBase, Observation, Regex, StrictModel, Verdict, register
from gate.contracts.trace_checks import State, ToolCalled, WorldState

GROUP = re.compile(r"\{\{\s*(\d+)\s*\}\}")
SENTENCE_END = ".!?\n"
SENTENCE_MAX = 200
EVIDENCE = re.compile(r'^(?P<claim>.+?) says "(?P<sentence>.*)"; (?P<what>.*?)(?: \[trace (?P<rows>#\d+(?:, #\d+)*)\])?$',
                      re.DOTALL)


def render(value: Any, match: re.Match, escape: bool = False) -> Any:
    """`value` with `{{n}}` replaced by the claim's group n (regex-escaped where it goes into a regex)."""
    if isinstance(value, str):
        def group(m: re.Match) -> str:
            n = int(m.group(1))
            got = match.group(n) if n <= (match.re.groups or 0) else None
            return re.escape(got or "") if escape else (got or "")
        return GROUP.sub(group, value)
    if isinstance(value, dict):
        return {k: render(v, match, escape) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, match, escape) for v in value]
    return value


def _model_problem(cls, value: dict, kind: str) -> str | None:
    try:
        cls.model_validate({"id": "claim", "type": kind, **value})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{kind}: {where + ': ' if where else ''}{first['msg']}"
    return None


class Backing(StrictModel):
    """What must be true when the claim is made: one of `tool`, `world_state`, `state`."""

    tool: str | None = Field(default=None, description="Tool name as the trace records it (glob): a wire tool's "
                                                         "upstream, an MCP tool, an in-process function, a command.")
    target: str | None = Field(default=None, description="With `tool`: the upstream name (glob).")
    method: str | None = Field(default=None, description="With `tool`: the HTTP method (a wire tool's write).")
    path: Regex | None = Field(default=None, description="With `tool`: regex searched in the path.")
    ok: bool = Field(default=True, description="With `tool`: some call to it answered the agent with a success "
                                               "(false: it was called at all).")
    result_matches: str | None = Field(default=None, description="With `tool`: a successful answer's text matches "
                                                                 "this regex ({{1}}: the claim's group, escaped).")
    world_state: dict[str, Any] | None = Field(default=None, description="A world_state check: world, record, where, "
                                                                         "count | equals | none ({{1}} in values).")
    state: dict[str, Any] | None = Field(default=None, description="A state check: url, json_path, equals | count | "
                                                                   "contains ({{1}} in equals and contains).")

    @model_validator(mode="after")
    def _one_kind(self):
        kinds = [k for k in ("tool", "world_state", "state") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("backed_by needs exactly one of `tool`, `world_state`, `state`"
                             + (f" (got {', '.join(kinds)})" if kinds else ""))
        narrowing = {"target", "method", "path", "ok", "result_matches"} & self.model_fields_set
        if kinds[0] != "tool" and narrowing:
            raise ValueError(f"{', '.join(sorted(narrowing))} only go with `tool`")
        if self.result_matches is not None:
            try:
                re.compile(GROUP.sub("0", self.result_matches))
            except re.error as exc:
                raise ValueError(f"result_matches is not a valid regular expression: {exc}") from None
        problem = (_model_problem(WorldState, self.world_state, "world_state") if self.world_state is not None else
                   _model_problem(State, self.state, "state") if self.state is not None else None)
        if problem:
            raise ValueError(problem)
        if self.state is not None and GROUP.search(str(self.state.get("url", ""))):
            raise ValueError("state: the url is fetched before the output is read, so it cannot use {{n}}; put the "
                             "group in `contains` or `equals`")
        return self


class Claim(StrictModel):
    says: Regex = Field(description="Regex searched in the output: the claim applies when it matches.")
    backed_by: Backing
    name: str | None = Field(default=None, description="Shown in the breach message (default: claim N).")


@register
class ClaimsBacked(InvariantBase):
    """Every claim the output makes (`says` matches) is backed: a tool call that answered a success, or the world."""

    kind = "output"
    type: Literal["claims_backed"] = "claims_backed"
    claims: list[Claim] = Field(min_length=1)

    _filters: list = PrivateAttr(default_factory=list)  # per claim: a ToolCalled selecting its calls, or None
    _states: list = PrivateAttr(default_factory=list)  # (claim index, State) for each `state` backing

    def model_post_init(self, context: Any) -> None:
        self._filters, self._states = [], []
        for n, claim in enumerate(self.claims):
            b = claim.backed_by
            self._filters.append(None if b.tool is None else ToolCalled(
                id=f"{self.id}.{n}", tool=b.tool, target=b.target, method=b.method, path=b.path))
            if b.state is not None:
                self._states.append((n, State.model_validate({"id": f"{self.id}.{n}", "type": "state", **b.state})))

    @property
    def probe(self):
        """A `state` backing is fetched after the cell, like a `state` invariant; else nothing is."""
        return self._probe_states if self._states else None

    async def _probe_states(self, client) -> dict:
        return {str(n): await state.probe(client) for n, state in self._states}

    def tool_globs(self) -> list[str]:
        """The `tool:` globs of the backings: coverage reports one that met no call (gate/verdict/coverage.py)."""
        return [c.backed_by.tool for c in self.claims if c.backed_by.tool]

    def check(self, obs: Observation) -> Verdict:
        if obs.output is None:
            return Verdict.not_judged(f"not judged: no output (outcome: {obs.reason})")
        made = [(n, claim, m) for n, claim in enumerate(self.claims)
                if (m := re.search(claim.says, obs.output)) is not None]
        if not made:
            return Verdict.not_judged("not judged: the output makes none of its claims")
        for n, claim, match in made:
            problem = self._unbacked(n, claim, match, obs)
            if problem is not None:
                return Verdict(False, f'{self._label(n, claim)} says "{sentence(obs.output, match)}"; {problem}')
        names = ", ".join(self._label(n, c) for n, c, _ in made)
        return Verdict(True, f"every claim the output made is backed ({names})")

    @staticmethod
    def _label(n: int, claim: Claim) -> str:
        return claim.name or f"claim {n + 1}"

    def _unbacked(self, n: int, claim: Claim, match: re.Match, obs: Observation) -> str | None:
        """What the trace or the world showed instead of the claim's backing, or None when it holds."""
        b = claim.backed_by
        if b.world_state is not None:
            check = WorldState.model_validate({"id": self.id, "type": "world_state", **render(b.world_state, match)})
            verdict = check.check(obs)
            return None if verdict.passed else f"the world shows {verdict.message}"
        if b.state is not None:
            state = next(s for i, s in self._states if i == n)
            rendered = state.model_copy(update={k: render(getattr(state, k), match) for k in ("equals", "contains")})
            got = (obs.state.get(self.id) or {}).get(str(n))
            verdict = rendered.check(Observation(output=obs.output, reason=obs.reason, state={state.id: got}))
            return None if verdict.passed else f"the state shows {verdict.message}"
        return self._tool_unbacked(self._filters[n], b, match, obs)

    @staticmethod
    def _tool_unbacked(selector: ToolCalled, b: Backing, match: re.Match, obs: Observation) -> str | None:
        calls = selector.selected(obs, "tool")
        name = " ".join(part for part in (b.tool, b.method and b.method.upper(), b.path) if part)
        if not calls:
            return f"{name} was never called"
        if not b.ok:
            return None
        readings = [(e, tool_answers.read(e)) for e in calls]
        good = [(e, r) for e, r in readings if r.ok]
        if good and b.result_matches is None:
            return None
        if good:
            pattern = render(b.result_matches, match, escape=True)
            if any(re.search(pattern, r.text) for _, r in good):
                return None
            e, r = good[-1]
            return f"{name} answered {tool_answers.excerpt(r.text)}, which does not match /{pattern}/ " \
                   f"[trace {_rows([e for e, _ in good])}]"
        times = "once" if len(calls) == 1 else f"{len(calls)} times"
        hows = list(dict.fromkeys(r.how for _, r in readings))
        return f"{name} was called {times} and answered {', then '.join(hows)} [trace {_rows(calls)}]"


def _rows(entries) -> str:
    return ", ".join(f"#{e.seq}" for e in entries[:5])


def sentence(text: str, match: re.Match) -> str:
    """The sentence around a match: from the end of the previous one to the end of its own, bounded."""
    start = max(text.rfind(ch, 0, match.start()) for ch in SENTENCE_END) + 1
    ends = [i for i in (text.find(ch, match.end()) for ch in SENTENCE_END) if i >= 0]
    end = min(ends) + 1 if ends else len(text)
    said = " ".join(text[start:end].split()).replace('"', "'")
    return said if len(said) <= SENTENCE_MAX else said[:SENTENCE_MAX - 1] + "…"


def evidence(message: str) -> dict | None:
    """A breach message of this check, taken apart for the PR comment: {claim, sentence, what, rows
    (trace seq numbers)}; None for any other message (a pass, another invariant's)."""
    found = EVIDENCE.match(message)
    if found is None:
        return None
    rows = [int(r) for r in re.findall(r"#(\d+)", found.group("rows") or "")]
    return {"claim": found.group("claim"), "sentence": found.group("sentence"), "what": found.group("what"),
            "rows": rows}
