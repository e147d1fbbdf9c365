"""The README and docs/ as a newcomer meets them: the README stays short and starts with the two
commands it always had; every relative link (and #anchor, by GitHub's heading slugs) resolves; the
generated reference tables equal what scripts/doc_tables.py builds from action.yml, the catalogs
and the packages' docstrings (so they fail here when a fault, an invariant, a mutator, a config key,
an Action input or a package changes without them); every YAML block that is a complete config passes `chaos-gate validate`; every
step that uses the Action passes only inputs action.yml declares."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import doc_tables  # noqa: E402

PAGES = doc_tables.files()
MD = MarkdownIt("commonmark").enable("table")
FIRST_COMMANDS = ["pip install -e '.[examples]' && chaos-gate run -c examples/sdk_agent/chaos-gate.yaml",
                  "pip install -e '.[test,frameworks]' && python -m pytest -n auto"]


def fences(path: Path, lang: str) -> list[str]:
    return [t.content for t in MD.parse(path.read_text(encoding="utf-8")) if t.type == "fence" and t.info == lang]


def yaml_blocks(lang: str = "yaml") -> list[tuple[Path, dict]]:
    out = []
    for page in PAGES:
        for block in fences(page, lang):
            doc = yaml.safe_load(block)
            if isinstance(doc, dict):
                out.append((page, doc))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    tokens = MD.parse(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for n, tok in enumerate(tokens):
        if tok.type == "heading_open":
            base = slug("".join(c.content for c in tokens[n + 1].children if c.type in ("text", "code_inline")))
            count = seen.get(base, 0)
            seen[base] = count + 1
            out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(path: Path) -> list[str]:
    found = []
    for tok in MD.parse(path.read_text(encoding="utf-8")):
        for child in tok.children or []:
            if child.type == "link_open":
                found.append(child.attrs["href"])
    return found


def test_readme_is_short_and_keeps_its_first_two_commands():
    readme = ROOT / "README.md"
    assert len(readme.read_text().splitlines()) <= 350  # the Layout table is docs/architecture.md's
    assert fences(readme, "sh")[:2] == [c + "\n" for c in FIRST_COMMANDS]
    for page in ("reach.md", "time-dilation.md", "configuration.md", "faults.md", "invariants.md",
                 "github-action.md", "scoring.md"):
        assert f"(docs/{page})" in readme.read_text(), page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    for href in links(page):
        if re.match(r"[a-z]+:", href):
            continue  # https:, mailto: — not ours to check offline
        target, _, anchor = href.partition("#")
        file = (page.parent / target).resolve() if target else page
        assert file.exists(), f"{page.name}: {href} -> {file} does not exist"
        if anchor and file.suffix == ".md":
            assert anchor in anchors(file), f"{page.name}: {href}: no heading #{anchor} in {file.name}"


def test_generated_tables_are_current():
    for page in PAGES:
        _, changed = doc_tables.regenerate(page.read_text(encoding="utf-8"))
        assert not changed, f"{page.name}: {changed} drifted; run python3 scripts/doc_tables.py"
    names = {m.group("name") for p in PAGES for m in doc_tables.BLOCK.finditer(p.read_text())}
    assert names == set(doc_tables.TABLES)  # every table is shown somewhere


def test_layout_has_a_row_per_package_and_module_from_its_docstring():
    """docs/architecture.md's Layout table cannot miss a package: a row per gate/ package (a namespace package
    has no docstring to read and is refused), per top-level module and per script."""
    table = doc_tables.layout()
    gate = ROOT / "gate"
    packages = [p.name for p in gate.iterdir() if p.is_dir() and not p.name.startswith("__")]
    modules = [m.name for m in gate.glob("*.py") if m.name != "__init__.py"]
    for name in [*packages, *modules]:
        assert f"| `gate/{name}` | " in table, name
    for name in ("instrument", "testing", "pytest_plugin", "verdict"):
        assert f"| `gate/{name}` | " in table
    assert "| `gate/reproduce.py` | The reproduction commands: " in table
    assert "| `gate/plan` | Plan: the config expanded into ordered cells with stable ids and derived seeds |" in table


def test_drift_is_detected():
    """A catalog entry the docs do not show makes the check fail (the test above is not vacuous)."""
    from gate.faults import FAULTS

    page = (ROOT / "docs/faults.md").read_text()
    cls = FAULTS.pop("schema_drift")
    try:
        assert doc_tables.regenerate(page)[1] == ["fault-kinds"]
    finally:
        FAULTS["schema_drift"] = cls
    page = (ROOT / "docs/architecture.md").read_text()
    layout = page[page.index("<!-- generated:layout -->"):page.index("<!-- /generated:layout -->")]
    stale = page.replace(layout, layout.replace("| `gate/testing` |", "| `gate/testing-old` |"))
    assert doc_tables.regenerate(stale)[1] == ["layout"]  # a renamed or new package shows as drift
    assert subprocess.run([sys.executable, "scripts/doc_tables.py", "--check"], cwd=ROOT).returncode == 0


def test_action_inputs_table_lists_every_input_and_fail_on_value():
    from gate.github.inputs import FAIL_ON

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("<!-- generated:action-inputs -->"):readme.index("<!-- /generated:action-inputs -->")]
    for name in action["inputs"]:
        assert f"| `{name}` |" in table, name
    fail_on = next(line for line in table.splitlines() if line.startswith("| `fail-on` |"))
    for value in FAIL_ON:
        assert re.search(rf"\b{value}\b", fail_on), value


def complete_configs() -> list[tuple[Path, dict]]:
    return [(p, d) for p, d in yaml_blocks() if {"version", "agent", "inputs"} <= set(d)]


def test_complete_config_blocks_validate(tmp_path):
    configs = complete_configs()
    assert len(configs) >= 3  # the README's server and script agents, the full configuration example
    for n, (page, doc) in enumerate(configs):
        path = tmp_path / f"{n}" / "chaos-gate.yaml"
        path.parent.mkdir()
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        proc = subprocess.run([sys.executable, "-m", "gate", "validate", "-c", str(path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
                                   **{name: "a-value-of-the-secret" for name in doc.get("secrets", [])}})
        assert proc.returncode == 0, f"{page.name} block {n}: {proc.stderr}"


def action_steps() -> list[tuple[Path, dict]]:
    """(page, step) for every step of a documented workflow that uses this Action."""
    out = []
    for page, doc in yaml_blocks():
        for job in (doc.get("jobs") or {}).values():
            for step in job.get("steps", []):
                if str(step.get("uses", "")).startswith("agent-chaos-gate/agent-chaos-gate@"):
                    out.append((page, step))
    return out


def test_documented_steps_use_declared_inputs_and_the_v1_tag():
    declared = set(yaml.safe_load((ROOT / "action.yml").read_text())["inputs"])
    steps = action_steps()
    assert len(steps) >= 4  # the README's, the sharded pair, against main
    for page, step in steps:
        assert step["uses"] == "agent-chaos-gate/agent-chaos-gate@v1", (page.name, step["uses"])
        assert set(step.get("with", {})) <= declared, (page.name, set(step["with"]) - declared)


def test_the_readmes_injection_example_can_fire():
    """Its `excludes` names the words the gate's injections ask the agent to say: the mutation stage's
    injected instruction and the `inject` fault's default text."""
    from gate.faults.tools import DEFAULT_INJECTION
    from gate.mutation.phrases import INJECTIONS

    readme = (ROOT / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if "id: no-injection, type: excludes" in ln)
    values = line.split("values: [")[1].split("]")[0].split(", ")
    assert any(v in DEFAULT_INJECTION for v in values)
    assert any(v in phrase for v in values for phrase in INJECTIONS)
