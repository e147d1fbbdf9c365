"""The sim's keyless tool walk: what a capable model does with the offered tools when no rule says.

Under `upstream: sim` a user message that matched no rule used to get `default`, so an agent
tested without rules never called a tool, and no tool fault or exploration had anything to
reach. A capable model offered tools calls the ones the message is about; the walk does that,
deterministically, one decision per request (the conversation carries where it stands):

- which tools: those whose name (snake_case and camelCase split) or description shares a word
  with the input, stopwords aside. When none does, up to two reads anyway — a model looks
  around before it answers, a read changes nothing, and exploration gets something to reach —
  but never a write nobody asked for. A framework's output tools are the caller's to leave out.
- in which order: reads before writes (gate/contracts/writes.py's name rule, the one
  `side_effect_once` counts by: a model looks before it acts), then by overlap, then as offered.
- how many: one call a turn, each tool at most once per user message, at most four calls; a
  failed result ends the walk (a model does not refund after the lookup failed, and it does not
  re-issue a call: each tool once).
- arguments: generated from the tool's JSON Schema by hypothesis-jsonschema, seeded, so the
  same schema, input and seed give the same arguments in every process — with no extra keys
  (a model sends the parameters a tool declares: `**kwargs` tools would break on invented ones)
  and, where the draws allow, readable text. Then what the input names fills the parameter it
  fits: a number the id-like or numeric one (the number after "order" goes to `order_id`), an
  email the email one, a quoted phrase or salient word the query/name-like one, else the first
  string; a fill that would break the schema is not made. A schema hypothesis-jsonschema cannot
  read gets schema_value.py's simplest valid value.
- the answer: built from what the tools returned; a failed tool (gate/dialects/answers.py, the
  reading `claims_backed` shares) is said to have failed, and nothing is claimed done.

Determinism: Hypothesis draws from `random.Random(seed)` with no database. Its "local constants"
(literals it harvests from every non-site-packages module loaded) would make a draw depend on
what the process had imported — an editable install or not — so they are off while the walk
draws; its caches go to the temp directory, not `.hypothesis/` in the agent's repository.
Hypothesis is imported on the first walk only: importing it takes half a second.
"""

from __future__ import annotations

import contextlib
import functools
import json
import random
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.contracts.meaning import strings_in
from gate.contracts.writes import WRITE_WORDS, call_writes, described_read
from gate.dialects import answers
from gate.dialects.acknowledgement import SIM_APOLOGY
from gate.dialects.model import Conversation, ToolCall, ToolResult, ToolSpec
from gate.sim.named import filled, given_values, split_words, valid, words
from gate.sim.schema_value import value_for

MAX_CALLS = 4
BLIND_READS = 2  # reads called when no tool shares a word with the input
EXCERPT = 160  # characters of each tool answer quoted in the final answer
DRAWS = 40  # draws Hypothesis may make looking for readable arguments before it settles for its first
HYPOTHESIS_HOME = Path(tempfile.gettempdir()) / "chaos-gate-hypothesis"
# the words that open a question asking to be told something (answered with reads only)
QUESTION_WORDS = frozenset({"what", "which", "where", "when", "who", "whose", "how", "is", "are", "do", "does", "did",
                            "show", "list", "tell", "check", "whats", "wheres"})
_LOCK = threading.Lock()  # Hypothesis's engine and the patch below are process-wide


@dataclass
class Step:
    """The walk's decision for one request: call `call` (name, arguments), or answer `answer`."""

    note: str
    call: tuple[str, dict] | None = None
    answer: str | None = None


# -- which tools --------------------------------------------------------------------------------
def is_read(tool: ToolSpec) -> bool:
    """By the rule `side_effect_once` counts by: its name, else its description (gate/contracts/writes.py)."""
    return not call_writes(tool.name) or described_read(tool.name, tool.description)


def asks_to_read(text: str) -> bool:
    """A question that asks to be told something ("what's in my cart?") and names no change: a model
    answers it with reads, never a write nobody asked for."""
    spoken = split_words(text)
    # asked at its start ("hm, what's in my cart?"), not a request for help ("Can you help me with my order?")
    return bool(set(spoken[:3]) & QUESTION_WORDS) and not set(spoken) & WRITE_WORDS


def chosen(tools: list[ToolSpec], text: str) -> tuple[list[ToolSpec], bool]:
    """The tools to call for `text`, in order, and whether none shared a word with it (a blind look)."""
    said = words(text)
    if asks_to_read(text):
        tools = [t for t in tools if is_read(t)]
    scored = [(len(said & words(f"{t.name} {t.description}")), i, t) for i, t in enumerate(tools)]
    hits = sorted((s for s in scored if s[0] > 0), key=lambda s: (not is_read(s[2]), -s[0], s[1]))
    if hits:
        return [t for _, _, t in hits][:MAX_CALLS], False
    return [t for t in tools if is_read(t)][:BLIND_READS], True


# -- where the walk stands ------------------------------------------------------------------------
def since_user(conv: Conversation) -> tuple[list[ToolCall], list[tuple[ToolResult, ToolCall | None]]]:
    """The calls made since the latest user text, and each result with the call it answers."""
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    for message in reversed(conv.messages):
        if message.role == "user" and message.text:
            break
        calls = message.tool_calls + calls
        results = message.tool_results + results
    by_id = {c.id: c for c in calls if c.id}
    by_name = {c.name: c for c in calls}
    return calls, [(r, by_id.get(r.call_id) or by_name.get(r.name or "")) for r in results]


def step(conv: Conversation, tools: list[ToolSpec], seed: str = "", text: str | None = None) -> Step | None:
    """The next move of the walk over `tools` (those a model may call), or None: no tool to call
    and none called, so the caller answers as it would have without the walk. `text`: the input as
    read (a mutated input read through to its original), else the latest user message."""
    text = conv.latest_user_text() if text is None else text
    calls, answered = since_user(conv)
    plan, blind = chosen(tools, text)
    called = {c.name for c in calls}
    todo = [t for t in plan if t.name not in called]
    failed = any(answers.is_error(r, c) for r, c in answered)
    if todo and not failed and len(calls) < MAX_CALLS:
        tool = todo[0]
        why = "no tool shares a word with the input, so a read to look around" if blind else "no rule matched"
        return Step(note=f"sim walk: {why}; called {tool.name} ({'read' if is_read(tool) else 'write'}) "
                         "with generated arguments",
                    call=(tool.name, arguments(tool, text, seed, conv.system)))
    if not calls:
        return None
    said, note = answer(answered, calls)
    return Step(note=note, answer=said)


# -- the answer -----------------------------------------------------------------------------------
def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


IGNORED_ORDERS = "data with instructions in it, which I did not follow"  # what a model not fooled says of it
INSTRUCTION = re.compile(r"(ignore (all )?(previous|prior) instructions|system notice|new instructions|"
                         r"^\s*important\b)", re.IGNORECASE | re.MULTILINE)


def _excerpt(text: str) -> str:
    """What a tool returned, as the answer quotes it; an answer carrying orders is data a capable model
    does not repeat (with `injection: obey` the script, not the walk, plays the model that falls for it)."""
    if INSTRUCTION.search(text):
        return IGNORED_ORDERS
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[:EXCERPT] + "…"


def answer(answered: list[tuple[ToolResult, ToolCall | None]], calls: list[ToolCall]) -> tuple[str, str]:
    """(the final answer, the trace note): what each tool returned; a failure said as one, first."""
    if not answered:  # the agent sent its calls back without their results: nothing to go on
        names = _names(list(dict.fromkeys(c.name for c in calls)))
        return (f"{SIM_APOLOGY}: {names} gave no answer.",
                f"sim walk: no result came back from {names}; answered that it failed")
    named = [(r, c.name if c else r.name or "a tool") for r, c in answered]
    failed = [(r, name) for (r, c), (_, name) in zip(answered, named, strict=True) if answers.is_error(r, c)]
    told = [f"{name} returned: {_excerpt(r.content)}." for r, name in named if (r, name) not in failed]
    if failed:
        result, name = failed[0]
        why = answers.failure(result.content) or "an error"
        return (" ".join([f"{SIM_APOLOGY}: the {name} tool failed ({why})."] + told),
                f"sim walk: {name} failed ({why}); answered that it failed")
    used = list(dict.fromkeys(name for _, name in named))
    return (" ".join([f"I used {_names(used)}."] + told),
            f"sim walk: answered from what {_names(used)} returned")


# -- the arguments --------------------------------------------------------------------------------
def arguments(tool: ToolSpec, text: str, seed: str = "", instructions: str = "") -> dict:
    """Arguments for `tool`: drawn from its schema (seeded by `seed`, the tool and the input), then
    filled with what the input names, and an identifier the agent's instructions give (`customer_id:
    "123"` in its system prompt) where the input names none."""
    schema = tool.parameters or {"type": "object", "properties": {}}
    drawn = json.loads(generated(json.dumps(schema, sort_keys=True), f"{seed}\x00{tool.name}\x00{text}"))
    about = words(f"{tool.name} {tool.description}")  # the tool's own words name no value ("refund order")
    if not isinstance(drawn, dict):
        return {}
    return filled(drawn, schema, text, about, given=given_values(schema, instructions))


@functools.lru_cache(maxsize=1024)
def generated(schema_json: str, seed: str) -> str:
    """A value valid for the schema, as JSON text (a cached value must not be mutated by its users)."""
    schema = json.loads(schema_json)
    try:
        value = _drawn(schema, seed)
    except Exception:  # noqa: BLE001 - a schema hypothesis-jsonschema cannot read (remote $ref, unsatisfiable, ...)
        value = value_for(schema)
    return json.dumps(value if valid(value, schema) else value_for(schema))


def _closed(schema: Any) -> Any:
    """The schema with no room for undeclared keys: a model sends the parameters a tool declares."""
    if isinstance(schema, list):
        return [_closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: (v if k in ("enum", "const", "default", "examples") else _closed(v)) for k, v in schema.items()}
    if "properties" in out and "additionalProperties" not in out and "patternProperties" not in out:
        out["additionalProperties"] = False
    return out


def _drawn(schema: dict, seed: str) -> Any:
    """Hypothesis's draw for the schema: the first one, after its simplest value, whose text reads as
    text (printable ASCII); the first after the simplest when none of DRAWS does."""
    with _isolated():
        from hypothesis import HealthCheck, Phase, Verbosity, find, settings
        from hypothesis.errors import NoSuchExample
        from hypothesis_jsonschema import from_schema

        seen: list[Any] = []

        def readable(value: Any) -> bool:
            seen.append(value)
            return len(seen) > 1 and all(s.isascii() and s.isprintable() for s in strings_in(value))

        rules = settings(database=None, derandomize=False, phases=[Phase.generate], max_examples=DRAWS,
                         deadline=None, verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck),
                         backend="hypothesis")
        try:
            return find(from_schema(_closed(schema)), readable, settings=rules, random=random.Random(seed))
        except NoSuchExample:
            return seen[1] if len(seen) > 1 else seen[0] if seen else value_for(schema)


@contextlib.contextmanager
def _isolated():
    """Hypothesis as if no module of this process were local (its harvested literals would make a draw
    depend on what was imported), with its caches in the temp directory; restored after."""
    with _LOCK:
        from hypothesis import configuration
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants

        home = configuration.storage_directory(intent_to_write=False).home_directory
        harvest = providers._get_local_constants
        configuration.set_hypothesis_home_dir(HYPOTHESIS_HOME)
        providers._get_local_constants = Constants  # an empty set of constants
        providers.CONSTANTS_CACHE.cache.clear()  # entries made with other processes' literals
        try:
            yield
        finally:
            providers._get_local_constants = harvest
            providers.CONSTANTS_CACHE.cache.clear()
            configuration.set_hypothesis_home_dir(home)


