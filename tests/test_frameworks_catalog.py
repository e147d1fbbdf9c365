"""The seam table (gate/report/frameworks.py, rendered into docs/reach.md) says what the code does.

Each row's version is the one the tests install (a pin in pyproject.toml, a group of
tests/framework_envs.py, or a package.json under tests/ or examples/), its reach name is what
a seam of its language returns as its hello, and every registered seam has a row: a seam added
without a row, a row whose seam was renamed, or a pin moved without the table fails here.
"""

from __future__ import annotations

import json
import re

from conftest import ROOT
from framework_envs import GROUPS
from gate.report.frameworks import FRAMEWORKS

SEAMS = ROOT / "gate" / "instrument" / "python" / "chaos_gate_agent" / "seams"
NODE_SEAMS = ROOT / "gate" / "instrument" / "node" / "seams"


def python_pins() -> dict[str, set[str]]:
    text = (ROOT / "pyproject.toml").read_text() + "\n".join(p for pins in GROUPS.values() for p in pins)
    pins: dict[str, set[str]] = {}
    for m in re.finditer(r'"?([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([^"\s]+)', text):
        pins.setdefault(m[1].lower(), set()).add(m[2])
    return pins


def node_pins() -> dict[str, set[str]]:
    pins: dict[str, set[str]] = {}
    for path in [*ROOT.glob("tests/**/package.json"), *ROOT.glob("examples/**/package.json")]:
        if "node_modules" in path.parts:
            continue
        for name, version in json.loads(path.read_text()).get("dependencies", {}).items():
            pins.setdefault(name, set()).add(version)
    return pins


def returned_names(folder, pattern: str) -> set[str]:
    return {m for path in folder.iterdir() if path.is_file() for m in re.findall(pattern, path.read_text())}


def test_each_version_is_the_one_the_tests_install():
    py, node = python_pins(), node_pins()
    for row in FRAMEWORKS:
        if row.language == "python":
            # a row may name several versions ("1.12.4, 2.3.0"): each is one the tests install
            assert set(row.version.split(", ")) <= py.get(row.package, set()), (row.name, py.get(row.package))
        else:
            assert row.version in node.get(row.package, set()), (row.name, node.get(row.package))


def test_each_reach_name_is_a_seams_own_and_every_seam_has_a_row():
    python = returned_names(SEAMS, r'return "([a-z_.-]+\.[A-Za-z_.]+)"')
    node = returned_names(NODE_SEAMS, r"return '(node:[a-z-]+\.[A-Za-z_.]+)'")
    rows = {r.reach for r in FRAMEWORKS}
    assert {r.reach for r in FRAMEWORKS if r.language == "python"} <= python
    assert {r.reach for r in FRAMEWORKS if r.language == "node"} <= node
    # seam names a framework row does not own: the stdio client's launch (its calls are the session's)
    assert python - rows == {"mcp.stdio_client"} and node - rows == set()
