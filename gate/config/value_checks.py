"""Checks on single values pydantic accepts but the run could not use: templates, JSON
paths, call numbers, weights, mutation kinds, a started agent's invoke URL.

Each check is a pure function of the validated Config returning Problems (key path +
message), so the loader reports them all at once, each on the line of the value at
fault. They need nothing but the config: no files, no plan. Cross-references that
need the plan (which cells exist) live in gate/config/references.py.
"""

from __future__ import annotations

import difflib
import re
from typing import Any
from collections.abc import Iterator

from gate.config.models import Config
from gate.config.problems import Loc, Problem

TEMPLATE = re.compile(r"\{\{(.*?)\}\}")
SIM_TEMPLATE_NAMES = ("tool_result", "results", "default")  # plus regex group numbers
START_NAMES = ("port", "url")
# `session`: an id fresh per run of a cell, the same in its reset and its invoke (gate/agent/instance.py)
RESET_NAMES = START_NAMES + ("cell_id", "input_id", "run", "session")
# `turn` (1-based) and `history` (the previous turns as messages): a conversation input's (docs/conversations.md)
INVOKE_NAMES = RESET_NAMES + ("input", "turn", "history")
# a command's env: the run's names, and a conversation's turn and history (JSON text); its input is stdin or argv
COMMAND_ENV_NAMES = RESET_NAMES + ("turn", "history")


def value_problems(config: Config) -> list[Problem]:
    return [*template_problems(config), *json_path_problems(config), *on_calls_problems(config),
            *weight_problems(config), *mutation_kind_problems(config), *fixed_url_problems(config),
            *conversation_problems(config)]


def hint(word: str, options) -> str:
    """' (did you mean 'x'?)' for the nearest option, or the list when none is close."""
    options = sorted(set(options))
    close = difflib.get_close_matches(str(word), options, n=1, cutoff=0.6)
    if close:
        return f" (did you mean '{close[0]}'?)"
    return f" (known: {', '.join(options)})" if options else ""


# --- templates -------------------------------------------------------------------------

def _strings(value: Any, loc: Loc) -> Iterator[tuple[Loc, str]]:
    """Every string of a JSON-like value with its key path; dict keys are rendered too."""
    if isinstance(value, str):
        yield loc, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield loc + (key,), str(key)
            yield from _strings(item, loc + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, loc + (i,))


def _unknown_templates(value: Any, loc: Loc, names: tuple[str, ...], where: str) -> list[Problem]:
    problems = []
    for at, text in _strings(value, loc):
        for m in TEMPLATE.finditer(text):
            name = m.group(1).strip()
            if name not in names and not name.startswith("services."):  # gate/config/service_refs.py
                problems.append(Problem(at, f"unknown template '{m.group(0)}'{_template_hint(name, names)}; "
                                            f"{where} knows {', '.join('{{' + n + '}}' for n in names)}"))
    return problems


def _template_hint(name: str, names) -> str:
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.6)
    return f" (did you mean '{{{{{close[0]}}}}}'?)" if close else ""


def template_problems(config: Config) -> list[Problem]:
    agent, out = config.agent, []
    if agent.start is not None:
        out += _unknown_templates(agent.start.command, ("agent", "start", "command"), START_NAMES,
                                  "agent.start.command")
        out += _unknown_templates(agent.start.env, ("agent", "start", "env"), START_NAMES, "agent.start.env")
        out += _unknown_templates(agent.start.ready.url, ("agent", "start", "ready", "url"), START_NAMES,
                                  "ready.url")
    if agent.invoke.http is not None:
        http = agent.invoke.http
        for part in ("url", "headers", "body"):
            out += _unknown_templates(getattr(http, part), ("agent", "invoke", "http", part), INVOKE_NAMES,
                                      "agent.invoke.http")
    if agent.invoke.command is not None:
        out += _unknown_templates(agent.invoke.command.env, ("agent", "invoke", "command", "env"), COMMAND_ENV_NAMES,
                                  "agent.invoke.command.env")
    if agent.reset is not None:
        for part in ("url", "headers", "body"):
            out += _unknown_templates(getattr(agent.reset, part), ("agent", "reset", part), RESET_NAMES,
                                      "agent.reset")
    return out + _sim_template_problems(config)


def _sim_template_problems(config: Config) -> list[Problem]:
    """Sim answers know {{tool_result}} and the groups of their rule's regex; arguments only the groups."""
    out = _unknown_templates(config.sim.default, ("sim", "default"), SIM_TEMPLATE_NAMES, "sim.default")
    for i, rule in enumerate(config.sim.rules):
        groups = tuple(str(n) for n in range(re.compile(rule.when).groups + 1))
        loc = ("sim", "rules", i)
        where = f"this rule (its regex has {len(groups) - 1} group(s))"
        out += _unknown_templates(rule.answer, loc + ("answer",), SIM_TEMPLATE_NAMES + groups, where)
        out += _unknown_templates(rule.arguments, loc + ("arguments",), groups + ("tool_result",), where)
        for j, step in enumerate(rule.steps):
            out += _unknown_templates(step.answer, loc + ("steps", j, "answer"), SIM_TEMPLATE_NAMES + groups, where)
            out += _unknown_templates(step.arguments, loc + ("steps", j, "arguments"), groups + ("tool_result",),
                                      where)
        out += _unknown_templates(rule.on_error.answer, loc + ("on_error", "answer"),
                                  SIM_TEMPLATE_NAMES + groups + ("tool", "error"), where)
    return out


# --- conversations ------------------------------------------------------------------------

def conversation_problems(config: Config) -> list[Problem]:
    """A conversation the agent could not be given: client-sent history the invoke request never sends (the
    agent would answer every turn blind, and the run pass on nothing), or to a `conversation: lines` command
    that holds the conversation itself; and a turn's check that could judge no cell of its input."""
    out = []
    http, command = config.agent.invoke.http, config.agent.invoke.command
    for i, inp in enumerate(config.inputs):
        if inp.turns is None:
            continue
        if http is not None and inp.history == "messages" and \
                not _uses_template([http.url, http.headers, http.body], "history"):
            out.append(Problem(("inputs", i, "history"), "history: messages sends the previous turns as "
                                                         "{{history}}, which agent.invoke.http never uses: put it in "
                                                         "the body (e.g. body: {messages: \"{{history}}\"}) or drop "
                                                         "'history'"))
        if command is not None and command.conversation == "lines" and inp.history == "messages":
            out.append(Problem(("inputs", i, "history"), "history: messages hands each turn the previous ones, and a "
                                                         "conversation: lines command holds the whole conversation "
                                                         "in its one process: drop 'history' (or use "
                                                         "conversation: per_turn, which gets $CHAOS_GATE_HISTORY)"))
        for n, k, check in inp.turn_checks():
            if check.when is not None and check.when.input is not None:
                out.append(Problem(("inputs", i, "turns", n - 1, "expect", k, "when", "input"),
                                   f"a turn's check judges its own input ('{inp.id}') only: drop 'input' (a `when` "
                                   "here may name stage, scenario or mutation)"))
    return out


def _uses_template(value: Any, name: str) -> bool:
    return any(m.group(1).strip() == name for _, text in _strings(value, ()) for m in TEMPLATE.finditer(text))


# --- JSON paths, call numbers -----------------------------------------------------------

def all_invariants(config: Config) -> Iterator[tuple[Loc, Any]]:
    for i, inv in enumerate(config.contract.invariants):
        yield ("contract", "invariants", i), inv
    for name, invariants in config.replay.contracts.items():
        for i, inv in enumerate(invariants):
            yield ("replay", "contracts", name, i), inv
    for i, inp in enumerate(config.inputs):  # a conversation's per-turn checks (docs/conversations.md)
        for n, k, check in inp.turn_checks():
            yield ("inputs", i, "turns", n - 1, "expect", k), check


def all_faults(config: Config) -> Iterator[tuple[Loc, Any]]:
    for i, fault in enumerate(config.chaos.faults):
        yield ("chaos", "faults", i), fault
    for section, scenarios in (("chaos", config.chaos.scenarios), ("contract", config.contract.scenarios)):
        for i, scenario in enumerate(scenarios):
            for j, fault in enumerate(scenario.faults):
                yield (section, "scenarios", i, "faults", j), fault


def _path_problem(path: str, loc: Loc) -> list[Problem]:
    from gate.templates import PathError, parse_path

    try:
        parse_path(path)
    except PathError as exc:
        return [Problem(loc, f"{exc} (write e.g. $.reply, $.choices[0].text, $[-1].text or $['a key'])")]
    return []


def json_path_problems(config: Config) -> list[Problem]:
    out = []
    if config.agent.invoke.http is not None:
        out += _path_problem(config.agent.invoke.http.output, ("agent", "invoke", "http", "output"))
    for loc, inv in all_invariants(config):
        if isinstance(getattr(inv, "json_path", None), str):
            out += _path_problem(inv.json_path, loc + ("json_path",))
    return out


def on_calls_problems(config: Config) -> list[Problem]:
    return [Problem(loc + ("on_calls", j), f"call number {n} never happens: calls are numbered from 1")
            for loc, fault in all_faults(config)
            for j, n in enumerate(fault.on_calls or []) if n < 1]


# --- weights and mutation kinds ----------------------------------------------------------

def weight_problems(config: Config) -> list[Problem]:
    weights = config.scoring.weights
    if not any(getattr(weights, stage) > 0 for stage in type(weights).model_fields):
        return [Problem(("scoring", "weights"), "every stage weight is 0: the overall score would be undefined; "
                                                "give at least one stage a weight above 0")]
    return []


def mutation_kind_problems(config: Config) -> list[Problem]:
    from gate.mutation import MUTATORS

    spec, out = config.mutation, []
    for kind, weight in (spec.kinds or {}).items():
        loc = ("mutation", "kinds", kind)
        if kind not in MUTATORS:
            out.append(Problem(loc, f"unknown mutation kind '{kind}'{hint(kind, MUTATORS)}"))
        elif weight < 0:
            out.append(Problem(loc, f"weight {weight:g} is negative: use 0 to disable a kind"))
    enabled = spec.enabled and spec.count > 0 and spec.kinds is not None
    if enabled and not out and not any(w > 0 for w in spec.weights().values()):
        out.append(Problem(("mutation", "kinds"), "every mutation kind has weight 0, so no input would be "
                                                  "mutated: give one kind a weight above 0, or set "
                                                  "mutation.enabled: false"))
    return out


# --- a started agent's invoke URL ----------------------------------------------------------

def fixed_url_problems(config: Config) -> list[Problem]:
    agent = config.agent
    http = agent.invoke.http
    if agent.start is None or http is None or http.fixed_url:
        return []
    names = {m.group(1).strip() for m in TEMPLATE.finditer(http.url)}
    if names & {"url", "port"}:
        return []
    return [Problem(("agent", "invoke", "http", "url"),
                    f"'{http.url}' does not use {{{{url}}}} or {{{{port}}}}, but the gate starts the agent on a "
                    f"free port per instance: write e.g. '{{{{url}}}}/chat', or set "
                    f"agent.invoke.http.fixed_url: true if this address is meant")]
