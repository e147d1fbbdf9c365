"""Scrub secrets from agent logs and cap their size, streaming, in bounded memory.

Why cap at scrub time rather than while writing: agents write straight to their
log file (see process.py) so the gate is never on the path of an agent's output
and a flood can never block the agent or grow the gate's memory. The gate rewrites
each log once, after its agents stopped, on every exit path: it reads fixed-size
chunks, redacts, and keeps the first and last halves of `log_max_bytes` with a
note marking the cut. Memory is O(chunk + longest secret) whatever the log size;
what stays on disk after the run is bounded by the cap. While the run lasts, the
log grows as the agent writes it, as any program's output would in CI: capping it
live would need a pipe through the gate (the cost above) or truncating a file the
agent still appends to (which could cut a secret in half before it is scrubbed).

A secret may span two chunks, so each round keeps the last (longest secret − 1)
bytes back: any match that starts before that overlap is complete in the buffer,
exactly as a scan of the whole file would find it. A redaction is never split by
the cut (it is kept or dropped whole), so a cut cannot leave half a secret behind.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO
from collections.abc import Iterator

CHUNK = 1 << 20
Segment = tuple[int, int, bytes, bool]  # raw start, raw end, bytes to write, is a redaction


def _segments(src: BinaryIO, redactor, chunk: int = CHUNK) -> Iterator[Segment]:
    """The scrubbed stream as segments tied to offsets in the raw file."""
    pattern = redactor.bytes_pattern() if redactor is not None else None
    keep = max((redactor.max_bytes if pattern else 1) - 1, 0)
    carry, base = b"", 0
    while True:
        data = src.read(chunk)
        buf = carry + data
        cut = len(buf) if not data else max(len(buf) - keep, 0)
        pos = 0
        for m in (pattern.finditer(buf) if pattern else ()):
            if m.start() >= cut:
                break  # it may be the start of a longer value: decide next round
            if m.start() > pos:
                yield base + pos, base + m.start(), buf[pos:m.start()], False
            yield base + m.start(), base + m.end(), redactor.placeholder(m.group(0)).encode(), True
            pos = m.end()
        end = max(cut, pos)
        if end > pos:
            yield base + pos, base + end, buf[pos:end], False
        carry, base = buf[end:], base + end
        if not data:
            return


def _capped(segments: Iterator[Segment], size: int, cap: int | None) -> Iterator[bytes]:
    """Keep raw [0, cap/2) and [size - cap/2, size); one note where the middle was cut."""
    if cap is None or size <= cap:
        yield from (seg[2] for seg in segments)
        return
    head_end, tail_start = cap // 2, size - (cap - cap // 2)
    note = f"\n[chaos-gate: {tail_start - head_end} bytes of this log cut here (agent.log_max_bytes = {cap})]\n"
    noted = False
    for start, end, out, whole in segments:
        if end <= head_end:
            yield out
            continue
        if whole:  # a redaction is kept or dropped whole, never split by the cut
            before, after = (out, b"") if start < head_end else (b"", out if end > tail_start else b"")
        else:
            before, after = out[:max(0, head_end - start)], out[max(0, tail_start - start):]
        yield before
        if not noted:
            noted = True
            yield note.encode()
        yield after


def scrub_file(path: Path, redactor, cap: int | None = None, chunk: int = CHUNK) -> None:
    """Rewrite one log redacted (and capped), through a temporary file beside it."""
    size = path.stat().st_size
    if (redactor is None or not redactor.values) and (cap is None or size <= cap):
        return
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
            for piece in _capped(_segments(src, redactor, chunk), size, cap):
                dst.write(piece)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def scrub_dir(log_dir: Path, redactor, cap: int | None = None) -> None:
    """Every *.log under log_dir; an unreadable one is skipped, never a reason to lose the report."""
    if not log_dir.is_dir():
        return
    for log in sorted(log_dir.glob("*.log")):
        try:
            scrub_file(log, redactor, cap)
        except OSError:
            continue
