"""Measure every framework example under every contract scenario; print a Markdown table.

    python examples/frameworks/measure.py [--out DIR]

Runs each example's full contract stage with the real CLI (each config starts its own
orders service) and reads each report: a cell is
✅ when every invariant held, ❌ with the breached invariants' ids, ➖ when the
scenario's faults could not apply to that framework's traffic (e.g. `truncate_stream`
on a framework that does not stream). The table is the gate's measurement, nothing
else: paste it as it is.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCENARIOS = ["baseline", "rate_limited", "double_write", "bad_args", "truncated", "truncated_tool_call",
             "injection"]
# row label: the framework and the wire dialect it spoke with its defaults
LABELS = {
    "openai_agents": "OpenAI Agents SDK (Responses)",
    "openai_agents_chat": "OpenAI Agents SDK, `OpenAIChatCompletionsModel`",
    "pydantic_ai": "pydantic-ai `openai:` (Responses)",
    "pydantic_ai_chat": "pydantic-ai `OpenAIChatModel`",
    "langgraph": "LangGraph + `ChatOpenAI`",
    "anthropic_tool_runner": "Anthropic `tool_runner` (thread)",
    "google_genai": "google-genai (automatic function calling)",
    "node_openai": "Node `openai` `runTools` (stream)",
}


def run_example(name: str, out: Path) -> dict:
    if name == "node_openai" and not (HERE / name / "node_modules").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE / name, check=True)
    subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(HERE / name / "chaos-gate.yaml"),
                    "-o", str(out / name), "--quiet", "--only", "contract/*"],
                   check=False)
    return json.loads((out / name / "report.json").read_text())


def not_applicable(report: dict) -> set[str]:
    """Scenarios none of whose faults could apply to this framework's traffic."""
    return {s["scenario"] for s in report["verdict"]["coverage"]
            if s["faults"] and all(f["status"] == "not_applicable" for f in s["faults"])}


def cell_mark(cell: dict, inapplicable: set[str]) -> str:
    if cell["scenario"] in inapplicable:
        return "➖"
    if cell["status"] == "pass":
        return "✅"
    if cell["status"] == "error":
        return "⚠️ error"
    breached = [i["id"] for i in cell["invariants"] if i["breached"]]
    return "❌ " + ", ".join(f"`{b}`" for b in breached) + raised(cell)


def raised(cell: dict) -> str:
    """What the framework raised, when the agent answered 500 {"error": <exception class>}."""
    run = cell["runs"][0] if cell["runs"] else {}
    try:
        error = json.loads(run.get("detail") or "")["error"]
    except (ValueError, TypeError, KeyError):
        return ""
    return f" (raised `{error}`)"


def table(reports: dict[str, dict]) -> str:
    lines = ["| framework | " + " | ".join(f"`{s}`" for s in SCENARIOS) + " |",
             "|---|" + "---|" * len(SCENARIOS)]
    for name, report in reports.items():
        cells = {c["scenario"]: c for c in report["verdict"]["cells"]}
        inapplicable = not_applicable(report)
        marks = [cell_mark(cells[s], inapplicable) if s in cells else "?" for s in SCENARIOS]
        lines.append(f"| {LABELS.get(name, name)} | " + " | ".join(marks) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="keep the reports here")
    parser.add_argument("--only", action="append", default=[], help="example name(s)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="frameworks-"))
    names = args.only or [n for n in LABELS if (HERE / n / "chaos-gate.yaml").exists()]
    reports = {name: run_example(name, out) for name in names}
    print(f"Measured {time.strftime('%Y-%m-%d')} by `python examples/frameworks/measure.py` (reports in {out}).\n")
    print(table(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
