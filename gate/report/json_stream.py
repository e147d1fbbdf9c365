"""report.json written cell by cell, with compact rows for passing cells.

At 10,000 cells the report as one JSON string is hundreds of megabytes on top of the
Report it came from. `write_json` dumps the report without its two long lists (the
verdict's cells and their timings), then writes their items one at a time, indented
exactly as `model_dump_json(indent=2)` indents them nested: the file is byte-identical
to `to_json` of the same (compacted) report, only never held in memory at once.

A passing, non-flaky cell keeps its verdict fields, its invariant outcomes and, per run,
what the verdict's consumers read (reason, status, detail, error, usage: soundness, pass^k
and cost after a `merge`) but not its output, checks or trace: those explain failures, and
a passing cell has none. `output.full` (true until the tests that read passing cells'
traces from report.json opt in) keeps everything. A passing fault-free baseline of a conversation
input keeps its runs' transcripts (`turns`): a failing cell's transcript is compared with it turn by
turn (gate/report/transcript.py), in the report of a `merge` too.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from collections.abc import Callable, Iterable

from pydantic import TypeAdapter

from gate.report.model import CellResult, CellTiming, Report, RunResult

# The long lists, as (top-level key, key inside it); each sits at depth 2 of the document.
STREAMED = (("verdict", "cells"), ("timings", "cells"))
# pydantic puts a list's items two spaces in; ours, in a list at depth 2, sit six in: four more
# after every newline of a serialised chunk
ITEM_SHIFT = b"\n" + b" " * 4


def is_compactable(cell: CellResult) -> bool:
    return cell.status == "pass" and not cell.flaky


def compact_run(run: RunResult, turns: bool = False) -> RunResult:
    """`turns`: keep the run's transcript (a conversation's fault-free baseline)."""
    kept = run.turns if turns else None
    if run.usage is None and run.error is None and not run.detail and kept is None:  # most: one row, shared
        return _bare_run(run.run, run.reason, run.status)
    return RunResult(run=run.run, reason=run.reason, status=run.status, detail=run.detail, error=run.error,
                     usage=run.usage, turns=kept)


@functools.lru_cache(maxsize=256)
def _bare_run(index: int, reason: str, status: int | None) -> RunResult:
    """A compact run with nothing but its outcome (it is only serialised, never changed)."""
    return RunResult(run=index, reason=reason, status=status)


def compact_cell(cell: CellResult) -> CellResult:
    """The row a passing cell keeps in report.json (see the module docstring)."""
    if not is_compactable(cell):
        return cell
    baseline = cell.stage == "contract" and cell.scenario == "baseline"  # the reference a transcript is read against
    return cell.model_copy(update={"runs": [compact_run(r, baseline) for r in cell.runs]})


def compacted(report: Report, full: bool = False) -> Report:
    """The report as report.json holds it: passing cells compact unless `full`."""
    if full:
        return report
    cells = [compact_cell(c) for c in report.verdict.cells]
    return report.model_copy(update={"verdict": report.verdict.model_copy(update={"cells": cells})})


def _skeleton(report: Report) -> Report:
    """The report with the streamed lists emptied (shallow copies: the report itself is untouched)."""
    verdict = report.verdict.model_copy(update={"cells": []})
    timings = report.timings.model_copy(update={"cells": []})
    return report.model_copy(update={"verdict": verdict, "timings": timings})


def _holes(text: str) -> list[int] | None:
    """Offsets of the `[]` of each streamed list in the skeleton's text, or None if not unambiguous."""
    offsets = []
    for section, key in STREAMED:
        start = text.find(f'\n  "{section}": {{')
        end = text.find("\n  }", start)
        needle = f'\n    "{key}": []'
        at = text.find(needle, start, end)
        if start < 0 or at < 0 or text.find(needle, at + 1, end) >= 0:
            return None
        offsets.append(at + len(needle) - 2)
    return offsets if offsets == sorted(offsets) else None


CHUNK = 256  # items serialised per call: the per-call cost spread thin, the text of a few hundred held


def _items_json(items: list, transform: Callable, kind) -> Iterable[bytes]:
    """`[`, each item indented as nested, `]` -- the text pydantic writes for a non-empty list, as UTF-8.

    Items go to pydantic a chunk at a time, as a list, and ITEM_SHIFT places them (strings hold no
    raw newline: JSON escapes it). Chunks join where one's `]` and the next's `[`
    meet. Bytes throughout: decoding a chunk that holds one emoji makes all of it four bytes a
    character, and it is encoded again on the way out."""
    if not items:
        yield b"[]"
        return
    adapter = _adapter(kind)
    for start in range(0, len(items), CHUNK):
        chunk = [transform(item) for item in items[start:start + CHUNK]]
        text = adapter.dump_json(chunk, indent=2, by_alias=True).replace(b"\n", ITEM_SHIFT)
        text = text[:-len(ITEM_SHIFT + b"]")]  # the chunk's closing bracket; the last one is added below
        yield text if start == 0 else b"," + text[1:]
    yield ITEM_SHIFT + b"]"


def _bytes_redactor(redact: Callable[[str], str]) -> Callable[[bytes], bytes]:
    """The byte form of `redact`: a Redactor's own (gate/config/secrets.py), else through text."""
    own = getattr(getattr(redact, "__self__", None), "redact_bytes", None)
    return own if own is not None else (lambda data: redact(data.decode("utf-8")).encode("utf-8"))


@functools.lru_cache(maxsize=4)
def _adapter(kind) -> TypeAdapter:
    return TypeAdapter(list[kind])


def write_json(report: Report, path: Path, redact: Callable[[str], str] = lambda s: s, full: bool = False) -> None:
    """Write report.json streaming; identical bytes to `redact(to_json(compacted(report, full)))`."""
    try:
        skeleton = to_json(_skeleton(report))
        holes = _holes(skeleton)
        if holes is None:  # a layout this writer does not know: the one-string path is always right
            raise ValueError("unrecognised layout")
        redact_bytes = _bytes_redactor(redact)
        with open(path, "wb") as out:
            lists = [(report.verdict.cells, compact_cell if not full else _same, CellResult),
                     (report.timings.cells, _same, CellTiming)]
            cursor = 0
            for at, (items, transform, kind) in zip(holes, lists, strict=True):
                out.write(redact(skeleton[cursor:at]).encode("utf-8"))
                for chunk in _items_json(items, transform, kind):
                    out.write(redact_bytes(chunk))
                cursor = at + 2
            out.write(redact(skeleton[cursor:]).encode("utf-8"))
    except ValueError:  # also a lone surrogate somewhere: to_json knows how to spell it out
        Path(path).write_text(redact(to_json(compacted(report, full))), encoding="utf-8")


def _same(item):
    return item


def dumps_streamed(report: Report, full: bool = False) -> str:
    """The streamed text as one string (tests compare it with `to_json`)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.json"
        write_json(report, path, full=full)
        return path.read_text(encoding="utf-8")


__all__ = ["compact_cell", "compacted", "dumps_streamed", "is_compactable", "write_json"]


def to_json(report: Report) -> str:
    """report.json. A lone surrogate (from an agent's request path, a config value, ...) cannot be
    written as UTF-8: rather than crash after the verdict was decided, spell it out as \\udxxx."""
    try:
        return report.model_dump_json(indent=2, by_alias=True) + "\n"
    except ValueError:  # pydantic's serialisation error subclasses ValueError
        doc = _without_surrogates(report.model_dump(mode="json", by_alias=True))
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(value):
    if isinstance(value, str):
        return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value
