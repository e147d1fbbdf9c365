"""`pip install -e '.[examples]'` installs what every example under examples/ imports (issue 52).

examples/real_app once needed openai-agents and starlette, which only the `frameworks` extra brought, so
its documented command ended in `No module named 'agents'`. Here every Python file under examples/ is
parsed (ast: imports inside functions count too), each third-party module it imports is mapped to the
distribution that installs it (importlib.metadata, on this machine where the suite's extras are
installed), and that distribution must be named in pyproject.toml's `examples` extra. The standard
library, the gate itself and the examples' own modules need nothing. Node examples are npm's business.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import ROOT

EXAMPLES = ROOT / "examples"


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def _sources() -> list[Path]:
    return sorted(p for p in EXAMPLES.rglob("*.py") if "node_modules" not in p.parts)


def _local() -> set[str]:
    """The examples' own modules (chat_server, orders_service, ...): imported from beside them."""
    return {p.stem for p in _sources()} | {p.parent.name for p in EXAMPLES.rglob("__init__.py")}


def imported(path: Path) -> set[str]:
    """Absolute imports in one file, as dotted names; `from a import b` gives `a.b` (b may be a module of
    a namespace package: `from google import genai`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


@cache
def _files(distribution: str) -> frozenset[str]:
    return frozenset(str(f) for f in metadata.files(distribution) or ())


@cache
def _top_level() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def distributions(dotted: str) -> set[str]:
    """The distributions that install `dotted`'s top-level package; for a namespace package that several
    install (`google`, `langgraph`), the ones that hold its next part (`google/genai/`, `langgraph/prebuilt/`)."""
    parts = dotted.split(".")
    found = set(_top_level().get(parts[0], ()))
    if len(found) > 1 and len(parts) > 1:
        prefix = "/".join(parts[:2])
        found = {d for d in found if any(f.startswith(prefix + "/") or f == prefix + ".py" for f in _files(d))}
    return {canonicalize_name(d) for d in found}


def missing(extra: set[str]) -> dict[str, str]:
    """{"example file: module": why} for every third-party import the extra does not install."""
    skip = set(sys.stdlib_module_names) | _local() | {"gate", "__future__"}
    out = {}
    for path in _sources():
        for dotted in sorted(imported(path)):
            if dotted.split(".")[0] in skip:
                continue
            where = f"{path.relative_to(ROOT)}: {dotted}"
            dists = distributions(dotted)
            if not dists:
                out[where] = "not installed here, so its distribution is unknown: add it to the extra"
            elif not dists & extra:
                out[where] = f"from {' or '.join(sorted(dists))}, not in the examples extra"
    return out


def test_the_examples_extra_installs_every_import_of_every_example():
    assert missing(_names(_pyproject()["optional-dependencies"]["examples"])) == {}


def test_a_distribution_taken_out_of_the_extra_is_noticed():
    """The plant: without starlette (issue 52's real_app) the check names the file and the import."""
    extra = _names(_pyproject()["optional-dependencies"]["examples"]) - {"starlette"}
    gaps = missing(extra)
    assert "examples/real_app/app.py: starlette.applications.Starlette" in gaps
    assert {where.split(":")[0] for where in gaps} == {"examples/real_app/app.py"}


def _pins(requirements: list[str]) -> dict[str, str]:
    return {canonicalize_name(Requirement(r).name): str(Requirement(r).specifier) for r in requirements}


def test_the_examples_extra_pins_what_the_rest_of_pyproject_pins():
    """A distribution the examples share with the dependencies or another extra has the same pin there."""
    project = _pyproject()
    extras = project["optional-dependencies"]
    examples = _pins(extras["examples"])
    groups = {"dependencies": project["dependencies"], **{k: v for k, v in extras.items() if k != "examples"}}
    differ = [f"{group}: {name}{pin} vs examples: {name}{examples[name]}" for group, reqs in groups.items()
              for name, pin in _pins(reqs).items() if examples.get(name, pin) != pin]
    assert differ == []
