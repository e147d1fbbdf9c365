"""A tool server the agent starts, watched for dying as it starts: its stderr teed, its tail kept.

An app that starts its MCP server over stdio and finds it dead usually carries on with no
tools — a green `/health`, "offered: none" — and the reason (an ImportError, a missing
file) is in the server's stderr, which went wherever the client sent it. So the seam hands
the client a pipe instead of the agent's stderr: a thread copies every line on to the
agent's own stderr (nothing is lost from its log) and keeps the last few kilobytes. When the
server ends before it ever answered, `client.died` tells the worker, with that tail.

Standard library only: this runs inside the agent's interpreter.
"""

from __future__ import annotations

import os
import sys
import threading
import time

TAIL_BYTES = 3000


class StderrTee:
    """A file the child writes its stderr to (`.file`); every byte goes on to `target`, the last
    TAIL_BYTES are kept for `tail()`."""

    def __init__(self, target=None):
        self.target = target if target is not None else sys.stderr
        read_fd, write_fd = os.pipe()
        self.file = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace", buffering=1)
        self._read_fd = read_fd
        self._kept = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._copy, name="chaos-gate-stderr-tee", daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        while True:
            try:
                chunk = os.read(self._read_fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            with self._lock:
                self._kept += chunk
                del self._kept[:-TAIL_BYTES]
            try:
                out = getattr(self.target, "buffer", None)
                if out is not None:
                    out.write(chunk)
                else:
                    self.target.write(chunk.decode("utf-8", "replace"))
                self.target.flush()
            except (OSError, ValueError):
                pass
        os.close(self._read_fd)

    def tail(self, settle: float = 0.1) -> str:
        """What the child wrote last; `settle`: a moment for the last bytes of a process that just died."""
        time.sleep(settle)
        with self._lock:
            return bytes(self._kept).decode("utf-8", "replace")

    def close(self) -> None:
        try:
            self.file.close()  # the reader ends once the child's copy of the pipe is closed too
        except OSError:
            pass
