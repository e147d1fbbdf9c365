"""Short fixture names — `world`, `clock`, `trace`, `sim`, `chaos` — opt-in, and never over a team's own.

These names are common (faultbench and many team fixture plugins define them), and a
plugin's fixture competes with other plugins' by registration order, so the plugin does not
define them unless the ini option `chaos_aliases` names them. Even then an alias must never
be the fixture a test gets where the project has one of that name.

Why the check is made where it is. A test's fixture closure (and with it the plugin's view
of whether it is a chaos test, and the `chaos_runs` parametrization in
`pytest_generate_tests`) is computed when pytest creates the item, from the definitions
visible to it; the last in pytest's override order wins. A hook that runs after that
(`pytest_collection_modifyitems`) is too late for an alias to step aside, so the only lever
is which aliases are registered, and when: at session start (trylast), once pytest's
FixtureManager has parsed every `-p`, `pytest_plugins` and installed plugin and the
initial conftests. Against whatever is defined later pytest's own order protects the
project's fixtures, on 9.0 as on 9.1 and 9.2:

- a plugin registered later wins over an earlier one at the same (session) level;
- a conftest below the rootdir is more specific than a plugin: 9.0 gives every conftest
  fixture a location (sorted after every plugin's); 9.1 parses a conftest only when its
  directory is collected and attaches it to that Directory node. That is why no
  session-start check can see those, and why none needs to.

Whatever is defined earlier must be looked up, and an alias registered only for a name with
no definition visible at session level: the plugins, conftests above the rootdir, and on
9.2 the rootdir's own conftest, which it attaches to the session, where an alias registered
after it would win. pytest has no public query for "is a fixture of this name visible here"
(one is asked for upstream); the one its own resolution uses is
`session._fixturemanager.getfixturedefs(name, node)`, whose answer kept its meaning (None:
no such name; empty: defined, not visible to `node`) across 9.2's rewrite — the rewrite
that removed the `_arg2fixturedefs` dict this module used to read, so that every name looked
free and the aliases replaced the team's fixtures. So the query is feature-tested before it
is trusted: it must exist, and it must find the plugin's own `chaos_run`. If it does not, or
one lookup raises, those names count as taken — no alias, and a warning that says why —
never as free: a missing short name fails its test with pytest's "fixture not found", while
a wrong one would silently hand the team's test the gate's run.
"""

from __future__ import annotations

import inspect
import types

import pytest

TARGETS = {"world": "chaos_world", "clock": "chaos_clock", "trace": "chaos_trace", "sim": "chaos_sim",
           "chaos": "chaos_run"}
INI = "chaos_aliases"
OWN = "chaos_run"  # the plugin's own fixture: the lookup must find it, or it cannot be trusted


def requested(config) -> list[str]:
    """The names the ini option asks for; a name with no target is a usage error (one line)."""
    names = [n for n in (config.getini(INI) or []) if n]
    wrong = [n for n in names if n not in TARGETS]
    if wrong:
        raise pytest.UsageError(f"{INI}: {', '.join(wrong)} is not one of {', '.join(TARGETS)}")
    return names


def _alias(short: str, target: str):
    def fixture(**named):
        return named[target]

    # the target as a declared argument, so the test's fixture closure (and the plugin's check of
    # whether a test is a chaos test) sees it before setup
    fixture.__signature__ = inspect.Signature([inspect.Parameter(target, inspect.Parameter.KEYWORD_ONLY)])
    fixture.__name__ = short
    fixture.__doc__ = f"The gate's {target} (an alias from the ini option {INI})."
    return pytest.fixture(name=short)(fixture)


def taken(session, names: list[str]) -> tuple[list[str], list[str], str | None]:
    """(the names a fixture visible at session level has, the names whose answer cannot be trusted, and
    why not). A name is free only on a trusted lookup's clear "no one has it"."""
    lookup = getattr(getattr(session, "_fixturemanager", None), "getfixturedefs", None)
    if not callable(lookup):
        return [], list(names), "this pytest has no session._fixturemanager.getfixturedefs"

    def defined(name: str) -> bool | None:
        try:
            return bool(lookup(name, session))
        except Exception:  # a changed signature or meaning: unknown, so not free
            return None

    if not defined(OWN):
        return [], list(names), f"session._fixturemanager.getfixturedefs does not find the plugin's own {OWN}"
    answers = {name: defined(name) for name in names}
    unknown = [name for name, answer in answers.items() if answer is None]
    return ([name for name, answer in answers.items() if answer], unknown,
            "session._fixturemanager.getfixturedefs raised" if unknown else None)


def register(session) -> list[str]:
    """Register the requested aliases no one else defines; returns the names left to their owners (or unknown)."""
    names = requested(session.config)
    if not names:
        return []
    owned, unknown, why = taken(session, names)
    if unknown:
        session.config.issue_config_time_warning(pytest.PytestConfigWarning(
            f"chaos-gate: no alias for {', '.join(unknown)} ({INI}): {why}, so whether a fixture of yours has "
            f"the name cannot be told; the chaos_* names work as always"), stacklevel=2)
    holder = types.ModuleType("gate.pytest_plugin.aliases.active")
    for name in names:
        if name not in owned and name not in unknown:
            setattr(holder, f"alias_{name}", _alias(name, TARGETS[name]))
    session.config.pluginmanager.register(holder, "chaos-gate-aliases")
    return [name for name in names if name in owned or name in unknown]
