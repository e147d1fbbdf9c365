"""Short fixture names — `world`, `clock`, `trace`, `sim`, `chaos` — opt-in, and never over a team's own.

These names are common (faultbench and many team fixture plugins define them), and a
plugin's fixture competes with other plugins' by registration order, so the plugin does not
define them unless the ini option `chaos_aliases` names them. Even then an alias is added
only at session start, once every `-p`, `pytest_plugins` and installed plugin (and the
initial conftests) is registered, and only for a name no one defined: whatever the project
has keeps its name. A conftest or plugin loaded later wins as it always does.
"""

from __future__ import annotations

import inspect
import types

import pytest

TARGETS = {"world": "chaos_world", "clock": "chaos_clock", "trace": "chaos_trace", "sim": "chaos_sim",
           "chaos": "chaos_run"}
INI = "chaos_aliases"


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


def register(session) -> list[str]:
    """Register the requested aliases no one else defines; returns the names left to their owners."""
    names = requested(session.config)
    if not names:
        return []
    defined = getattr(getattr(session, "_fixturemanager", None), "_arg2fixturedefs", {})
    free = [n for n in names if not defined.get(n)]
    holder = types.ModuleType("gate.pytest_plugin.aliases.active")
    for name in free:
        setattr(holder, f"alias_{name}", _alias(name, TARGETS[name]))
    session.config.pluginmanager.register(holder, "chaos-gate-aliases")
    return [n for n in names if n not in free]
