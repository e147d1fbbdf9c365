"""The plugin's markers: what each means, and the check of one test's markers before it runs.

A bad marker is the team's typo on one test, so it is reported on that test alone
(docs/pytest.md "Markers"): `problem(item)` returns one line naming the test, the marker
and the fix, or None; the marker comes first, so pytest's short summary shows it. An unknown `chaos_*` name is an error (the test never starts); a
wrong value fails the test. Nothing here raises, so no marker can interrupt collection
or reach pytest's internals; `runs_of` falls back to one run when the count is bad and
the check reports it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

MARKERS = {
    "chaos_config": "chaos_config(path): a chaos-gate.yaml (relative to the test file) the chaos fixtures use",
    "chaos_world": "chaos_world(path_or_dict, faults=None, name=None): a world served to this test",
    "chaos_sim": "chaos_sim(rules=None, path=None, **sim): the scripted model's rules for this test",
    "chaos_scenario": "chaos_scenario(name): a scenario (or profile) of the config whose faults apply",
    "chaos_faults": "chaos_faults(*faults): gate faults applied to this test's calls (cell chaos/<input>/custom)",
    "chaos_seed": "chaos_seed(n): the root seed (default: the config's, else 0; --chaos-seed overrides)",
    "chaos_input": "chaos_input(id): the input id that names this test's cell (default: the test's name)",
    "chaos_runs": "chaos_runs(n): run this test n times, run k under the schedule of (seed, cell, k)",
    "chaos_min_pass_rate": "chaos_min_pass_rate(r): pass when at least r of the runs pass",
    "chaos_explore": "chaos_explore(budget=60, depth=1, kinds=None, skip=(), persistent=True, oracles={}): after the "
                     "test passes, re-run it once per fault point its calls offer, judged by the universal oracles",
}
WORLD_OPTIONS = {"faults", "name", "env", "mcp_env"}


def chaos_markers(item) -> list:
    """The item's markers in the plugin's namespace (known or not), closest first."""
    return [m for m in item.iter_markers() if m.name.startswith("chaos_")]


def uses_gate(item) -> bool:
    """Whether the plugin acts on this test: one of its markers, or its run fixture in the closure."""
    return bool(chaos_markers(item)) or "chaos_run" in getattr(item, "fixturenames", ())


def unknown(item) -> str | None:
    """An error line for a `chaos_*` marker that does not exist, naming the nearest real one."""
    for marker in chaos_markers(item):
        if marker.name not in MARKERS:
            near = difflib.get_close_matches(marker.name, MARKERS, n=1, cutoff=0.5)
            fix = f"did you mean @pytest.mark.{near[0]}?" if near else f"the markers are {', '.join(MARKERS)}"
            return f"unknown marker @pytest.mark.{marker.name} on {item.nodeid}: {fix}"
    return None


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _pathlike(value) -> bool:
    return isinstance(value, (str, os.PathLike))


def _one(marker, ok, expects: str, example: str) -> str | None:
    """The complaint about a one-argument marker whose argument `ok` refuses, or None."""
    if len(marker.args) == 1 and not marker.kwargs and ok(marker.args[0]):
        return None
    return f"expects {expects}, e.g. @pytest.mark.{marker.name}({example})"


def _world(marker) -> str | None:
    extra = set(marker.kwargs) - WORLD_OPTIONS
    if len(marker.args) != 1 or not (_pathlike(marker.args[0]) or isinstance(marker.args[0], dict)
                                     or hasattr(marker.args[0], "model_copy")):
        return "expects a world file or a dict, e.g. @pytest.mark.chaos_world(\"worlds/shop.yaml\")"
    if extra:
        return f"takes only {', '.join(sorted(WORLD_OPTIONS))} beside the world (not {', '.join(sorted(extra))})"
    faults = marker.kwargs.get("faults")
    if faults is not None and not isinstance(faults, (bool, dict)):
        return "faults= is True (the file's faults:), False or a dict of world faults"
    return None


def _faults(marker) -> str | None:
    faults = marker.args[0] if len(marker.args) == 1 and isinstance(marker.args[0], (list, tuple)) else marker.args
    if faults and not marker.kwargs and all(isinstance(f, dict) or hasattr(f, "apply") for f in faults):
        return None
    return "expects fault dicts, e.g. @pytest.mark.chaos_faults({\"kind\": \"timeout\", \"path\": \"refund\"})"


def _sim(marker) -> str | None:
    first = marker.args[0] if marker.args else None
    if len(marker.args) <= 1 and (first is None or _pathlike(first) or isinstance(first, (list, dict))):
        return None
    return "expects rules (a list), a file, or keywords, e.g. @pytest.mark.chaos_sim([{\"when\": \"hi\", " \
           "\"answer\": \"Hello.\"}])"


def _rate(value) -> bool:
    return _number(value) and 0 < value <= 1


def _explore(marker) -> str | None:
    from pydantic import ValidationError

    from gate.config.explore import ExploreConfig

    if marker.args:
        return "takes keywords only, e.g. @pytest.mark.chaos_explore(budget=20, skip=[\"send_*\"])"
    try:
        ExploreConfig.model_validate(dict(marker.kwargs))
    except ValidationError as exc:
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    return None


VALUES = {
    "chaos_runs": lambda m: _one(m, lambda v: _whole(v) and v >= 1, "a whole number of runs >= 1", "20"),
    "chaos_min_pass_rate": lambda m: _one(m, _rate, "a fraction of runs in (0, 1]", "0.95"),
    "chaos_seed": lambda m: _one(m, lambda v: _whole(v) and v >= 0, "a whole number >= 0", "11"),
    "chaos_input": lambda m: _one(m, lambda v: isinstance(v, str) and v.strip(), "an input id", "\"refund\""),
    "chaos_scenario": lambda m: _one(m, lambda v: isinstance(v, str) and v.strip(), "a scenario name",
                                     "\"flaky\""),
    "chaos_config": lambda m: _one(m, _pathlike, "a config file", "\"chaos-gate.yaml\""),
    "chaos_world": _world,
    "chaos_faults": _faults,
    "chaos_sim": _sim,
    "chaos_explore": _explore,
}


def _shown(marker) -> str:
    args = [repr(a) for a in marker.args] + [f"{k}={v!r}" for k, v in marker.kwargs.items()]
    text = ", ".join(args)
    return f"@pytest.mark.{marker.name}({text if len(text) <= 40 else text[:37] + '...'})"


def bad_value(item) -> str | None:
    """A failure line for the first known marker whose value is wrong, or a config file that is not there."""
    for marker in chaos_markers(item):
        check = VALUES.get(marker.name)
        fix = check(marker) if check else None
        if fix:
            return f"{_shown(marker)} on {item.nodeid} {fix}"
    if item.get_closest_marker("chaos_explore") is not None and "chaos_run" not in getattr(item, "fixturenames", ()):
        return f"@pytest.mark.chaos_explore on {item.nodeid} needs the test to use the chaos_run fixture (or " \
               "chaos_trace, chaos_world, chaos_sim): its calls are what is explored"
    config = item.get_closest_marker("chaos_config")
    if config is not None:
        path = Path(item.path).parent / config.args[0]
        if not path.is_file():
            return f"{_shown(config)} on {item.nodeid}: no such file {path}; give a path relative to the test file"
    return None


def runs_of(config, node) -> int:
    """How many runs a test asks for (`--chaos-runs` first); 1 for a bad count, which the check reports."""
    option = config.getoption("chaos_runs")
    if option:
        return option
    marker = node.get_closest_marker("chaos_runs")
    if marker is None or VALUES["chaos_runs"](marker):
        return 1
    return marker.args[0]


def min_rate_of(node) -> float | None:
    marker = node.get_closest_marker("chaos_min_pass_rate")
    if marker is None or VALUES["chaos_min_pass_rate"](marker):
        return None
    return float(marker.args[0])
