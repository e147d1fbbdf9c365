"""`chaos-gate explore --write`: the findings appended to the config as pinned regressions.

Hypothesis keeps every failing example in a database and replays it first next time; the gate
keeps a finding in the config itself, where the team reviews it in the PR like any other line:
its scenario under `chaos.scenarios`, its oracle under `contract.invariants`, and
`chaos.explore: on` so the config keeps exploring beside what it pinned.

The file is edited as text, not re-dumped: the team's comments and layout stay as they were.
Each pinned item is one flow-style line, so it fits any block indentation. A config whose
`chaos` or `contract` (or their lists) is written in flow style is refused with the YAML to
paste instead, and the edited text must load as a valid config before it replaces the file.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from gate.config import read_config
from gate.errors import ConfigError


def _line(item: dict) -> str:
    return yaml.safe_dump([item], default_flow_style=True, width=10_000, sort_keys=False).strip()[1:-1]


def _block(root: yaml.MappingNode, key: str):
    for k, v in root.value:
        if k.value == key:
            return v
    return None


def _indent_of(node) -> int:
    return node.start_mark.column


def _after(node) -> int:
    """The line just after a node's own text (not after the blank lines and comments that follow it)."""
    end = node.end_mark
    return end.line if end.column == 0 else end.line + 1


def _insert_items(lines: list[str], root, top: str, key: str, items: list[str], extra: dict[str, str]) -> None:
    """Append `items` to `top.key` (a block sequence), creating what is missing; `extra`: keys to add
    under `top` when absent (`explore: on`)."""
    parent = _block(root, top)
    if parent is None:
        body = [f"  {k}: {v}" for k, v in extra.items()] + [f"  {key}:"] + [f"    - {i}" for i in items]
        lines.extend([f"{top}:", *body])
        return
    if not isinstance(parent, yaml.MappingNode) or parent.flow_style:
        raise ConfigError(f"`{top}:` is written in flow style; paste the findings' YAML from report.json instead")
    seq = _block(parent, key)
    child = _indent_of(parent.value[0][0]) if parent.value else 2
    missing = [f"{' ' * child}{k}: {v}" for k, v in extra.items() if _block(parent, k) is None]
    if seq is None:
        at = _after(parent.value[-1][1])
        lines[at:at] = missing + [f"{' ' * child}{key}:"] + [f"{' ' * (child + 2)}- {i}" for i in items]
        return
    if not isinstance(seq, yaml.SequenceNode) or seq.flow_style or not seq.value:
        raise ConfigError(f"`{top}.{key}` is not a block list; paste the findings' YAML from report.json instead")
    dash = _indent_of(seq.value[0]) - 2
    at = _after(seq.value[-1])
    lines[at:at] = [f"{' ' * dash}- {i}" for i in items]
    head = _indent_of(parent.value[0][0])
    if missing:  # `explore: on` goes first under the block, where it reads
        first = parent.value[0][0].start_mark.line
        lines[first:first] = [f"{' ' * head}{k}: {v}" for k, v in extra.items() if _block(parent, k) is None]


def pinned_text(text: str, findings) -> tuple[str, int]:
    """The config text with every finding's scenario and oracle appended, and how many were new
    (a finding pinned before is skipped)."""
    doc = yaml.safe_load(text) or {}
    have = {s.get("name") for s in (doc.get("chaos") or {}).get("scenarios") or [] if isinstance(s, dict)}
    scenarios, invariants = [], []
    for finding in findings:
        pin = yaml.safe_load(finding.pin)
        for scenario in pin["chaos"]["scenarios"]:
            if scenario["name"] not in have:
                have.add(scenario["name"])
                scenarios.append(_line(scenario))
                invariants += [_line(i) for i in (pin.get("contract") or {}).get("invariants", [])]
    if not scenarios:
        return text, 0
    lines = text.splitlines()
    for top, key, items, extra in (("chaos", "scenarios", scenarios, {"explore": "on"}),
                                   ("contract", "invariants", invariants, {})):
        if items:  # composed again each time: the first insertion moved the lines below it
            _insert_items(lines, yaml.compose("\n".join(lines)), top, key, items, extra)
    return "\n".join(lines) + "\n", len(scenarios)


def write_findings(path: Path, findings) -> int:
    """Append the findings to the config at `path`, once the edited text loads as a config (read beside
    it, so the paths it names resolve the same). Returns how many scenarios were pinned."""
    text = path.read_text()
    new, added = pinned_text(text, findings)
    if added:
        trial = path.with_name(f".{path.name}.pinning")
        trial.write_text(new)
        try:
            read_config(trial)
        finally:
            trial.unlink()
        path.write_text(new)
    return added
