#!/usr/bin/env python3
"""The README's and docs/'s reference tables, generated from action.yml and the catalogs.

Each table lives between two marker comments in a Markdown file,

    <!-- generated:fault-kinds -->
    ...
    <!-- /generated:fault-kinds -->

and is rebuilt from its source of truth: action.yml (Action inputs and outputs), the fault
registry (gate/faults: kind, where it applies, parameters, the class docstring), the invariant
registry (gate/contracts), the mutator registry (gate/mutation), the config model
(gate/config: top-level keys and the keys inside each), the in-process seams (gate/report/frameworks.py) and the packages' own opening docstrings
(docs/architecture.md's Layout: a row per gate/ package and module, per script) and the import
contract in pyproject.toml (the layers, in docs/architecture.md and the README). `python3 scripts/doc_tables.py` rewrites
every marked block of README.md and docs/*.md; `--check` rewrites nothing and exits 1 naming the
blocks that drifted (tests/test_docs.py runs it). An unknown block name is an error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BLOCK = re.compile(r"(<!-- generated:(?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- /generated:(?P=name) -->)", re.S)


def _first_sentence(doc: str | None) -> str:
    para = " ".join((doc or "").strip().split("\n\n")[0].split())
    if not para:
        raise ValueError("a catalog entry has no docstring: the docs are generated from it")
    return para


def _cell(value: str) -> str:
    return value.replace("|", "\\|")


def _table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _action() -> dict:
    import yaml

    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def action_inputs() -> str:
    rows = []
    for name, spec in _action()["inputs"].items():
        default = spec.get("default")
        rows.append([f"`{name}`", "—" if default in (None, "") else f"`{default}`", " ".join(spec["description"].split())])
    return _table(["input", "default", "meaning"], rows)


def action_outputs() -> str:
    return _table(["output", "meaning"], [[f"`{n}`", " ".join(s["description"].split())]
                                          for n, s in _action()["outputs"].items()])


def _params(model, base) -> str:
    out = []
    for name, field in model.model_fields.items():
        if name in base.model_fields or name in ("kind", "type"):
            continue
        shown = field.alias or name
        default = field.get_default(call_default_factory=True)
        if default in (None, [], {}) or field.is_required():
            out.append(f"`{shown}`")
            continue
        value = json.dumps(default, ensure_ascii=False) if isinstance(default, (str, bool)) else f"{default:g}" \
            if isinstance(default, float) else str(default)
        out.append(f"`{shown}` ({value if len(value) <= 24 else value[:22] + '…'})")
    return ", ".join(out) or "—"


def _where(cls) -> str:
    from gate.faults import LLM, TOOL

    module = cls.__module__.rsplit(".", 1)[-1]
    if module == "commands":
        return "command tools"
    if module == "rpc":
        return "MCP tools"
    return {frozenset({LLM}): "LLM", frozenset({TOOL}): "tools"}.get(cls.applies_to, "LLM, tools")


def fault_kinds() -> str:
    from gate.faults import FAULTS, FaultBase

    rows = [[f"`{kind}`", _where(cls), _params(cls, FaultBase), _first_sentence(cls.__dict__.get("__doc__"))]
            for kind, cls in FAULTS.items()]
    return _table(["kind", "on", "parameters", "what the agent sees"], rows)


def fault_kinds_list() -> str:
    from gate.faults import FAULTS

    return " · ".join(f"`{k}`" for k in FAULTS) + "\n"


def invariants() -> str:
    from gate.contracts import INVARIANTS, InvariantBase

    rows = [[f"`{name}`", cls.__module__.rsplit(".", 1)[-1].replace("_checks", ""), _params(cls, InvariantBase),
             _first_sentence(cls.__dict__.get("__doc__"))] for name, cls in INVARIANTS.items()]
    return _table(["type", "checks the", "parameters", "passes when"], rows)


def invariants_list() -> str:
    from gate.contracts import INVARIANTS

    return " · ".join(f"`{k}`" for k in INVARIANTS) + "\n"


def mutators() -> str:
    from gate.mutation.mutators import DEFAULT_WEIGHTS, MUTATORS

    return _table(["kind", "default weight", "what it does"],
                  [[f"`{k}`", f"{DEFAULT_WEIGHTS[k]:g}", _first_sentence(f.__doc__)] for k, f in MUTATORS.items()])


def mutators_list() -> str:
    from gate.mutation.mutators import MUTATORS

    return " · ".join(f"`{k}`" for k in MUTATORS) + "\n"


def _model_of(annotation):
    from pydantic import BaseModel

    from gate.config.catalog_union import LazyModel

    for arg in [annotation, *typing.get_args(annotation)]:
        for inner in [arg, *typing.get_args(arg)]:
            if isinstance(inner, LazyModel):  # a section built on first use (worlds)
                return inner.model()
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                return inner
    return None


def config_keys() -> str:
    from gate.config import Config

    rows = []
    for name, field in Config.model_fields.items():
        if not field.description:
            raise ValueError(f"Config.{name} has no description: the docs are generated from it")
        model = _model_of(field.annotation)
        inside = ", ".join(f"`{f.alias or n}`" for n, f in model.model_fields.items()) if model else "—"
        rows.append([f"`{field.alias or name}`", field.description, inside])
    return _table(["key", "what it is", "keys inside"], rows)


SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


def opening_sentence(path: Path) -> str:
    """The first sentence of a module's docstring (its first paragraph's), without the full stop."""
    import ast

    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not doc:
        raise ValueError(f"{path.relative_to(ROOT)} has no docstring: the Layout table is generated from it")
    return SENTENCE_END.split(" ".join(doc.split("\n\n")[0].split()), maxsplit=1)[0].rstrip(".")


def contract_layers() -> list[tuple[str, str, list[list[str]]]]:
    """(group, what it is, layers top to bottom, each a list of module names) of pyproject.toml's
    `pipeline` contract. The groups are the contract's own comments (`# run: processes, sockets, ...`),
    read from the text because TOML keeps no comments."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index('id = "pipeline"')
    block = text[text.index("layers = [", start):]
    block = block[:block.index("\n]")]
    groups: list[tuple[str, str, list[list[str]]]] = []
    for line in block.splitlines()[1:]:
        line = line.strip()
        comment = re.fullmatch(r"# (\w+)(?:: (.*))?", line)
        if comment:
            groups.append((comment.group(1), comment.group(2) or "", []))
        elif line.startswith('"'):
            if not groups:
                raise ValueError("pyproject.toml: the pipeline contract's first layer has no `# group` comment above it")
            groups[-1][2].append([m.strip() for m in re.split(r"[|:]", line.strip('",'))])
    return groups


def _source_of(module: str) -> tuple[str, Path]:
    gate = ROOT / "gate"
    if (gate / module).is_dir():
        if not (gate / module / "__init__.py").exists():
            raise ValueError(f"gate/{module} has no __init__.py: the Layout table reads its docstring")
        return f"`gate/{module}`", gate / module / "__init__.py"
    return f"`gate/{module}.py`", gate / f"{module}.py"


def layout() -> str:
    """docs/architecture.md's table: a row per gate/ package (its __init__.py; a directory without one is
    an error) and top-level module, in the contract's layers from the top, then a row per script; each
    from its opening docstring. A package the contract does not name is an error (it is `exhaustive`)."""
    rows, named = [], set()
    for group, _, layers in contract_layers():
        for depth, layer in enumerate(layers):
            for module in layer:
                where, source = _source_of(module)
                named.add(module)
                rows.append([group if depth == 0 and module == layer[0] else "", where, opening_sentence(source)])
    gate = ROOT / "gate"
    present = {p.name for p in gate.iterdir() if p.is_dir() and not p.name.startswith("__")}
    present |= {m.stem for m in gate.glob("*.py") if m.name != "__init__.py"}
    if present - named:
        raise ValueError(f"not in pyproject.toml's pipeline contract: {', '.join(sorted(present - named))}")
    rows += [["scripts", f"`scripts/{m.name}`", opening_sentence(m)] if i == 0 else
             ["", f"`scripts/{m.name}`", opening_sentence(m)]
             for i, m in enumerate(sorted((ROOT / "scripts").glob("*.py")))]
    return _table(["layer", "package", "concern"], rows)


def layers() -> str:
    """The README's short version: one line per group of the contract, its layers from the top."""
    groups = contract_layers()
    width = max(len(g) for g, _, _ in groups)
    lines = [f"{group:<{width}}  " + " → ".join(" | ".join(layer) for layer in layers)
             for group, _, layers in groups]
    return "```\n" + "\n".join(lines) + "\n```\n"


def architecture() -> str:
    """docs/architecture.md's groups: what each is and the contracts that hold the layers, from pyproject.toml."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    out = [f"- **{group}** — {what}: " + " → ".join(" | ".join(f"`{m}`" for m in layer) for layer in layers)
           for group, what, layers in contract_layers()]
    out.append("")
    out += [f"- `{c['id']}` ({c['type']}): {c['name']}" +
            (f"; {len(c['ignore_imports'])} import(s) let through, each with its reason in pyproject.toml"
             if c.get("ignore_imports") else "") for c in contracts]
    return "\n".join(out) + "\n"


def frameworks() -> str:
    """docs/reach.md's seam table: a row per framework whose tools are reached in the agent's process."""
    from gate.report.frameworks import FRAMEWORKS

    rows = [[f.name, "Python" if f.language == "python" else "Node",
             f"`{f.package}`" + (f" {f.version}" if f.version else ""), f.seam, f"`{f.reach}`"] for f in FRAMEWORKS]
    return _table(["framework", "language", "tested at", "seam", "reach line"], rows)


TABLES = {"layout": layout, "layers": layers, "architecture": architecture, "frameworks": frameworks, "action-inputs": action_inputs, "action-outputs": action_outputs, "fault-kinds": fault_kinds,
          "fault-kinds-list": fault_kinds_list, "invariants": invariants, "invariants-list": invariants_list,
          "mutators": mutators, "mutators-list": mutators_list, "config-keys": config_keys}


def files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def regenerate(text: str) -> tuple[str, list[str]]:
    """`text` with every marked block rebuilt, and the names of the blocks that changed."""
    changed: list[str] = []

    def fill(m: re.Match) -> str:
        name = m.group("name")
        if name not in TABLES:
            raise ValueError(f"unknown generated block {name!r} (known: {', '.join(TABLES)})")
        body = TABLES[name]()
        if body != m.group("body"):
            changed.append(name)
        return m.group(1) + body + m.group(4)

    return BLOCK.sub(fill, text), changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a block drifted")
    args = parser.parse_args(argv)
    drifted = []
    for path in files():
        text = path.read_text(encoding="utf-8")
        new, changed = regenerate(text)
        drifted += [f"{path.relative_to(ROOT)}: {name}" for name in changed]
        if changed and not args.check:
            path.write_text(new, encoding="utf-8")
    for item in drifted:
        print(("drifted: " if args.check else "rewrote: ") + item)
    return 1 if args.check and drifted else 0


if __name__ == "__main__":
    sys.exit(main())
