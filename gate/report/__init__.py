"""Report: the canonical model and its renderers (JSON, JUnit, Markdown, terminal)."""

import os
import tempfile
from pathlib import Path

from gate.heap import frozen_heap
from gate.report import html, junit, markdown
from gate.report.json_stream import to_json, write_json
from gate.report.model import Report


def write_all(report: Report, out_dir: Path, names, redact=lambda s: s) -> dict[str, Path]:
    """Write report.json, the JUnit file, the Markdown summary and report.html; return their paths."""
    with frozen_heap():  # the report lives throughout: no collection need walk it (gate/heap.py)
        return _write_all(report, out_dir, names, redact)


def _write_all(report: Report, out_dir: Path, names, redact) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:  # the agent runs as another user: it may read the reports, never write them
        out_dir.chmod(out_dir.stat().st_mode & ~0o022)
    paths = {"json": out_dir / names.json_, "junit": out_dir / names.junit, "markdown": out_dir / names.markdown}
    full, family = getattr(names, "full", False), junit.family_for(getattr(names, "junit_family", "auto"))
    write_atomic(paths["json"], lambda p: write_json(report, p, redact, full=full))  # streaming, compact rows
    write_atomic(paths["junit"], lambda p: junit.write(report, p, redact, family))
    summary = redact(markdown.render(report, limit=markdown.SUMMARY_LIMIT))
    write_atomic(paths["markdown"], lambda p: p.write_text(summary, encoding="utf-8"))
    paths["html"] = out_dir / getattr(names, "html", "report.html")
    write_atomic(paths["html"], lambda p: p.write_text(redact(html.render(report)), encoding="utf-8"))  # beside summary.md
    return paths


def write_atomic(path: Path, write) -> None:
    """`write` a temporary file beside `path`, then rename it into place: a reader (or a crash) never
    sees half a report, and a file (or symlink) put there meanwhile is replaced, never written through.
    The temporary name is mkstemp's: made exclusively, so nothing can be planted under it beforehand."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        tmp.chmod(0o644)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_report(path, flag: str = "") -> Report:
    """A report.json given on the command line; a file that cannot be read or is not a report is
    the user's input error (exit 2), never a silent 'no report'. `flag` names where it came from."""
    from pydantic import ValidationError

    from gate.errors import ConfigError

    where = f"{flag} {path}" if flag else str(path)
    try:
        return Report.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the report: {exc.strerror}") from None
    except ValidationError as exc:
        raise ConfigError(f"{where}: not a chaos-gate report ({exc.errors()[0]['msg']})") from None


def verdict_json(report: Report) -> str:
    """The byte-stable part alone, for comparisons across runs."""
    return report.verdict.model_dump_json(indent=2) + "\n"


__all__ = ["Report", "read_report", "to_json", "verdict_json", "write_all"]
