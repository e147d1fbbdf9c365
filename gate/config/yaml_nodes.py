"""YAML text -> plain data with the line of every key path, refusing hostile or mistaken YAML.

Composing (not loading) keeps every node's line. The composer is guarded while it
runs, before any value is built: explicit tags (`!custom`, `!!python/object`) would
build objects nobody asked for; nesting and alias expansion are measured per node
(an alias counts as the whole subtree it names), so a "billion laughs" file is refused
after a few thousand nodes, in milliseconds and in bounded memory, and a recursive
alias never loops. The walk that follows then only meets bounded trees; it collects
duplicate keys, oversized integers and `${...}` problems instead of stopping at the first.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent

from gate.config.problems import Loc, Problem
from gate.config.secrets import Redactor, looks_secret
from gate.errors import ConfigError

MAX_DEPTH = 64  # a real config nests about 8 deep; JSON Schemas in invariants a few more
MAX_NODES = 200_000  # values after alias expansion; a large real config has a few thousand
MAX_INT = 2 ** 63 - 1
ALLOWED_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map")} | {"!"}
MERGE_TAG = "tag:yaml.org,2002:merge"
ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class RefusedYaml(yaml.YAMLError):
    """YAML that parses but that the gate will not compose; carries its line."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line, self.message = line, message


class GuardedLoader(yaml.SafeLoader):
    """SafeLoader whose composer measures each node: tag, depth, expanded size, height."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._measure: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded nodes, expanded height)

    def compose_node(self, parent, index):
        event = self.peek_event()
        line = event.start_mark.line + 1
        if isinstance(event, AliasEvent):
            self._check_alias(event.anchor, line)
            return super().compose_node(parent, index)
        if event.tag is not None and event.tag not in ALLOWED_TAGS:
            raise RefusedYaml(line, f"YAML tag '{event.tag}' is not allowed: a config holds plain "
                                    f"mappings, lists, strings, numbers and booleans")
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise RefusedYaml(line, f"nested more than {MAX_DEPTH} levels deep")
        node = super().compose_node(parent, index)
        self._depth -= 1
        self._record(node, line)
        return node

    def _check_alias(self, anchor: str, line: int) -> None:
        node = self.anchors.get(anchor)
        if node is not None and id(node) not in self._measure:
            raise RefusedYaml(line, f"alias *{anchor} refers to a value that contains it (a recursive alias)")

    def _record(self, node: yaml.Node, line: int) -> None:
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        measured = [self._measure[id(c)] for c in children]
        size = 1 + sum(s for s, _ in measured)
        height = 1 + max((h for _, h in measured), default=0)
        if size > MAX_NODES:
            raise RefusedYaml(line, f"this value expands to more than {MAX_NODES} values (aliases counted as "
                                    f"copies): refusing an alias bomb or a file no person wrote")
        if height > MAX_DEPTH:
            raise RefusedYaml(line, f"with its aliases expanded, this value nests more than {MAX_DEPTH} levels deep")
        self._measure[id(node)] = (size, height)


def compose(text: str, source: str) -> yaml.Node | None:
    """The node tree, or a ConfigError on the line of the first YAML problem."""
    loader = None
    try:
        loader = GuardedLoader(text)  # its reader already refuses characters YAML forbids
        return loader.get_single_node()
    except RefusedYaml as exc:
        raise ConfigError(f"{source}:{exc.line}: {exc.message}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}:{_yaml_error_line(exc, text)}: not valid YAML: {_yaml_problem(exc)}") from None
    finally:
        if loader is not None:
            loader.dispose()


def _yaml_error_line(exc: yaml.YAMLError, text: str) -> int:
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return mark.line + 1
    position = getattr(exc, "position", None)  # ReaderError: a character YAML does not accept
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else 1


def _yaml_problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    if "single document" in str(getattr(exc, "context", "")):
        return "a second YAML document starts here ('---'); a config is a single document"
    context = getattr(exc, "context_mark", None)
    began = f" (in the value that starts on line {context.line + 1})" if context else ""
    if problem is None:
        return str(exc).splitlines()[0] + began
    return f"{problem}{began}"


@dataclass
class Walk:
    """Node tree -> data: the line of every key path, secrets seen, problems found on the way."""

    secret_names: set[str]
    lines: dict = field(default_factory=dict)
    redactor: Redactor = field(default_factory=Redactor)
    problems: list[Problem] = field(default_factory=list)
    constructor: SafeConstructor = field(default_factory=SafeConstructor)
    # non-secret variables whose value came from the environment: a reproduce command must carry them
    env_used: dict[str, str] = field(default_factory=dict)

    def value(self, node: yaml.Node, path: Loc) -> Any:
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.value(v, path + (i,)) for i, v in enumerate(node.value)]
        return self._scalar(node, path)

    def _mapping(self, node: yaml.MappingNode, path: Loc) -> dict:
        out: dict = {}
        first_line: dict = {}
        merged: list[yaml.Node] = []
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if key_node.tag == MERGE_TAG:
                merged.append(value_node)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.problems.append(Problem(path, "a key must be a plain name, not a list or a mapping", line))
                continue
            key = key_node.value
            if key in first_line:
                self.problems.append(Problem(path + (key,), f"duplicate key '{key}' (first on line "
                                                            f"{first_line[key]}, again on line {line})", line))
                continue
            first_line[key] = line
            self.lines[path + (key,)] = line
            out[key] = self.value(value_node, path + (key,))
        for source in merged:
            self._merge(out, source, path)
        return out

    def _merge(self, out: dict, source: yaml.Node, path: Loc) -> None:
        """`<<: *base` (or a list of them): keys written in the mapping itself win."""
        for item in source.value if isinstance(source, yaml.SequenceNode) else [source]:
            if not isinstance(item, yaml.MappingNode):
                self.problems.append(Problem(path, "'<<' must merge a mapping", item.start_mark.line + 1))
                continue
            for key, value in self._mapping(item, path).items():
                out.setdefault(key, value)

    def _scalar(self, node: yaml.ScalarNode, path: Loc) -> Any:
        line = node.start_mark.line + 1
        if node.tag == "tag:yaml.org,2002:str":
            return self._expand(node.value, path, line) if "${" in node.value else node.value
        if node.tag == "tag:yaml.org,2002:int" and len(node.value.lstrip("+-").replace("_", "")) > 20:
            self.problems.append(Problem(path, f"integer {node.value[:24]}... is too large", line))
            return 0
        value = self.constructor.construct_object(node)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
            self.problems.append(Problem(path, f"integer {value} is too large (at most {MAX_INT})", line))
            return 0
        return value

    def _expand(self, text: str, path: Loc, line: int) -> str:
        for malformed in _malformed_refs(text):
            self.problems.append(Problem(path, f"malformed environment reference '{malformed}': write ${{NAME}} "
                                               f"or ${{NAME:-default}} (NAME: letters, digits, _; not a digit "
                                               f"first)", line))

        def substitute(m: re.Match) -> str:
            name, default = m.group(1), m.group(2)
            value = os.environ.get(name)
            if value is None and default is None:
                self.problems.append(Problem(path, f"environment variable {name} is not set "
                                                   f"(set it, or give a default with ${{{name}:-value}})", line))
                return ""
            if name in self.secret_names or looks_secret(name):
                self.redactor.add(value if value is not None else default, name)
            elif value is not None:
                self.env_used[name] = value
            return default if value is None else value

        return ENV_REF.sub(substitute, text)


def _malformed_refs(text: str) -> list[str]:
    """Every `${` that does not open a well-formed reference, shown up to its end or 20 chars."""
    bad = []
    for start in (m.start() for m in re.finditer(r"\$\{", text)):
        if not ENV_REF.match(text, start):
            end = text.find("}", start)
            bad.append(text[start:end + 1] if 0 <= end < start + 40 else text[start:start + 20])
    return bad


def declared_secrets(root: yaml.MappingNode) -> set[str]:
    for key_node, value_node in root.value:
        if getattr(key_node, "value", None) == "secrets" and isinstance(value_node, yaml.SequenceNode):
            return {v.value for v in value_node.value if isinstance(v, yaml.ScalarNode)}
    return set()
