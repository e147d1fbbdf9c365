"""The architecture as a contract: the layers hold, no import circles, and both checks can fail.

`lint-imports` runs pyproject.toml's import-linter contracts (`.ci/run` runs it before the tests
too); the cycle check computes the strongly connected components of gate/'s module import graph
with grimp (which import-linter uses), counting imports made inside functions as well: a lazy
import is still a dependency. Each check is also run on a copy of the package with a planted
violation, so a check that silently passes everything would fail here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(root: Path) -> subprocess.CompletedProcess:
    lint = shutil.which("lint-imports") or pytest.skip("import-linter is not installed")
    return subprocess.run([lint, "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "HOME": str(root)})


def _cycles(root: Path) -> list[list[str]]:
    """Every import circle between modules of the `gate` package under `root`, found in a process of its
    own: grimp finds a package by importing its spec, and this process has imported the real one."""
    code = ("import importlib.util, json, sys; spec = importlib.util.spec_from_file_location('arch', sys.argv[1]); "
            "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); "
            "print(json.dumps(mod.cycles_of_importable_gate()))")
    done = subprocess.run([sys.executable, "-c", code, __file__], cwd=root, capture_output=True, text=True,
                          timeout=300, check=True)
    return json.loads(done.stdout)


def cycles_of_importable_gate() -> list[list[str]]:
    """The import circles of whichever `gate` this process imports (Tarjan's algorithm, iteratively)."""
    graph = grimp.build_graph("gate", cache_dir=None)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.fixture(scope="module")
def copy_of_gate(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("arch")
    shutil.copytree(ROOT / "gate", root / "gate", ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def _plant(root: Path, module: str, line: str) -> None:
    path = root / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text() + f"\n\ndef _planted():\n    {line}\n")


def test_the_contracts_hold():
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Contracts: 3 kept, 0 broken." in done.stdout


def test_the_module_graph_has_no_cycles():
    assert _cycles(ROOT) == []


def test_an_import_that_climbs_a_layer_and_a_circle_are_caught(copy_of_gate):
    assert _cycles(copy_of_gate) == []  # the copy is the real tree until something is planted
    _plant(copy_of_gate, "gate.plan.cells", "from gate.runner import pool  # the core reaching up into the run")
    _plant(copy_of_gate, "gate.proxy.bodies", "from gate.proxy import routes  # routes imports bodies")
    done = _lint_imports(copy_of_gate)
    assert done.returncode != 0
    assert "gate.plan is not allowed to import gate.runner" in done.stdout
    assert "No cycles are allowed in gate.proxy" in done.stdout
    circles = _cycles(copy_of_gate)
    assert any({"gate.proxy.bodies", "gate.proxy.routes"} <= set(c) for c in circles), circles
    assert any({"gate.plan.cells", "gate.runner.pool"} <= set(c) for c in circles), circles
