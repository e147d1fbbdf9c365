"""Report: the canonical model and its renderers (JSON, JUnit, Markdown, terminal)."""

from pathlib import Path

from gate.report import junit, markdown
from gate.report.model import Report


def write_all(report: Report, out_dir: Path, names, redact=lambda s: s) -> dict[str, Path]:
    """Write report.json, the JUnit file and the Markdown summary; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / names.json_, "junit": out_dir / names.junit, "markdown": out_dir / names.markdown}
    paths["json"].write_text(redact(to_json(report)), encoding="utf-8")
    junit.write(report, paths["junit"], redact)
    paths["markdown"].write_text(redact(markdown.render(report, limit=markdown.SUMMARY_LIMIT)), encoding="utf-8")
    return paths


def to_json(report: Report) -> str:
    return report.model_dump_json(indent=2, by_alias=True) + "\n"


def verdict_json(report: Report) -> str:
    """The byte-stable part alone, for comparisons across runs."""
    return report.verdict.model_dump_json(indent=2) + "\n"


__all__ = ["Report", "to_json", "verdict_json", "write_all"]
