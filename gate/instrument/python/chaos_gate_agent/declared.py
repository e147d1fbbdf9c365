"""Functions the config names (`tools: [{kind: function, function: MODULE:ATTR}]`): the seam for
the long tail — an in-house framework, a framework the gate has no seam for, or none at all.

The gate hands the declared functions over in CHAOS_GATE_FUNCTIONS ({tool name: "MODULE:ATTR"}).
Each becomes a patch of MODULE, run right after the module's own code (the import hook in
__init__), so every way the agent looks the function up sees the wrapped one: `from MODULE import
ATTR` (bound after the patch), `MODULE.ATTR`, and calls from inside MODULE itself (they read its
globals). A module already imported when the bootstrap installs is patched at once. ATTR may be
dotted (`Class.method`). The wrapper keeps the signature, so a framework that builds the tool's
JSON Schema from it (following `__wrapped__`) sends the model the same schema.

A declared function the agent never imports is never patched; its seam never says hello, and the
gate reports it as not reached.
"""

from __future__ import annotations

import json
import os

from chaos_gate_agent.call import Seam, wrap_function

ENV = "CHAOS_GATE_FUNCTIONS"


class DeclaredSeam(Seam):
    transport = "function"
    framework = "declared"  # the proxy traces it under the tool's own name (gate/instrument/calls.py)


SEAM = DeclaredSeam()


def declared() -> dict[str, list[tuple[str, str]]]:
    """MODULE -> [(tool name, ATTR)] from the environment; nothing when it is unset or unreadable."""
    try:
        table = json.loads(os.environ.get(ENV) or "{}")
    except ValueError:
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    for tool, spec in table.items() if isinstance(table, dict) else ():
        module, _, attr = str(spec).partition(":")
        if module and attr:
            out.setdefault(module, []).append((str(tool), attr))
    return out


def patcher(functions: list[tuple[str, str]]):
    """The patch of one module: wrap each declared ATTR, tell the gate which were reached."""
    def patch(module):
        from chaos_gate_agent import client

        for tool, attr in functions:
            try:
                _wrap(module, tool, attr)
            except Exception as exc:  # noqa: BLE001 - a name that is not there: report, never break the agent
                client.hello(f"function:{module.__name__}:{attr}:failed", {"error": f"{type(exc).__name__}: {exc}"[:300]})
                continue
            client.hello(f"function:{module.__name__}:{attr}", {"tool": tool})
        return None
    return patch


def _wrap(module, tool: str, attr: str) -> None:
    *path, name = attr.split(".")
    owner = module
    for part in path:
        owner = getattr(owner, part)
    fn = getattr(owner, name)
    if getattr(fn, "__chaos_gate__", False):
        return
    if not callable(fn):
        raise TypeError(f"{attr} is a {type(fn).__name__}, not a function")
    raw = owner.__dict__.get(name) if isinstance(owner, type) else fn
    if isinstance(raw, (staticmethod, classmethod)):  # keep the descriptor the class had
        setattr(owner, name, type(raw)(wrap_function(raw.__func__, tool, SEAM)))
        return
    setattr(owner, name, wrap_function(fn, tool, SEAM))
