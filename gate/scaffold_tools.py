"""The tools `chaos-gate init` finds in a project's own Python, with whether each reads or writes. Pure.

Whether a call writes decides what a repeat of it is (a double write, or a harmless re-read) and what
exploration faults first, and the gate guesses it from the tool's name and description
(gate/contracts/writes.py) when nothing else says. A guess is worth showing before the first run: init
lists each tool it finds — a function under a framework's tool decorator (`@function_tool`, `@tool`,
`@mcp.tool()`, `@agent.tool`), or one named in a `tools=[...]` list (Google ADK's `Agent(tools=[...])`)
— with the guess beside it and the one line that corrects it, so the user fixes it in one place.
Read with `ast`, never imported: the project's code does not run at init.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from gate.contracts.writes import call_writes, described_read

DECORATORS = frozenset({"function_tool", "tool", "tool_plain"})  # the last name of a decorator that makes a tool
MAX_LISTED = 30


@dataclass(frozen=True)
class FoundTool:
    name: str
    module: str  # dotted, from the project's root: what `kind: function` names it by
    line: int
    path: str
    reads: bool


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""


def _listed_in_tools(tree: ast.AST) -> set[str]:
    """Names passed in a `tools=[...]` keyword anywhere in the module."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "tools" and isinstance(node.value, (ast.List, ast.Tuple)):
            names.update(e.id for e in node.value.elts if isinstance(e, ast.Name))
    return names


def tools_in(source: str, path: str, module: str) -> list[FoundTool]:
    """The tools one module defines."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    listed = _listed_in_tools(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if node.name in listed or any(_decorator_name(d) in DECORATORS for d in node.decorator_list):
            about = ast.get_docstring(node) or ""
            reads = not call_writes(node.name) or described_read(node.name, about)
            out.append(FoundTool(node.name, module, node.lineno, path, reads))
    return out


def found_tools(directory: Path, sources) -> list[FoundTool]:
    """Every tool of the project's sources ((path, text) pairs), in file and line order, each name once."""
    seen: dict[str, FoundTool] = {}
    for path, text in sources:
        relative = Path(path).relative_to(directory)
        module = ".".join(relative.with_suffix("").parts)
        for tool in tools_in(text, str(relative), module):
            seen.setdefault(tool.name, tool)
    return list(seen.values())[:MAX_LISTED]


def tools_note(tools: list[FoundTool]) -> str:
    """The config's comment block: each tool, its guess, and how to correct one."""
    if not tools:
        return ""
    lines = ["# Tools found in your code, each read or write as the gate guesses from its name and description",
             "# (a write's repeat is a double write; exploration faults writes first). Correct a guess by",
             "# declaring the tool under `tools:` with `writes:`, e.g.",
             f"#   - {{name: {tools[0].name}, kind: function, function: \"{tools[0].module}:{tools[0].name}\", "
             f"writes: {'true' if tools[0].reads else 'false'}}}"]
    lines += [f"#   {t.name:<32} {'read ' if t.reads else 'write'}  ({t.path}:{t.line})" for t in tools]
    return "\n".join(lines) + "\n"
