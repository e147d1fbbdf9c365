"""Nothing the gate prints is run as a GitHub workflow command but the gate's own commands.

In a `run:` step, and in the Action's container, the runner reads every line the gate writes to
stdout or stderr and executes those that parse as workflow commands. The agent's text reaches those
streams (its log tail after a failed start, its answer in a breach message, a reason in the table):
an agent that prints `::add-mask::FAIL` would hide the verdict in the log, `::stop-commands::x` would
silence the gate's own annotations, `::error::` would forge one. So the CLI and the Action write
through InertStream, which makes every line the runner would run inert; the gate's own commands
(gate/github/workflow.py) go past it with `own`.

What the runner runs (actions/runner: OutputManager.OnDataReceived hands every line, split at CR,
LF or CRLF by StreamReader.ReadLine, of stdout and of stderr alike, to
ActionCommandManager.TryProcessCommand):

- ActionCommand.TryParseV2: the line, after TrimStart (any whitespace), starts with `::`; the name
  runs to the next `::` or space and must be a registered command (error, add-mask,
  stop-commands, ..., any case).
- ActionCommand.TryParse, the old form: `##[` ANYWHERE in the line, the name up to the next `]` —
  so escaping only the lines that begin with `##[` would not do.

Both match with culture-sensitive StartsWith/IndexOf (no StringComparison.Ordinal; .NET 8 with ICU),
which skip ignorable characters: `::error::x` with a zero-width space (U+200B) between its first two
colons still parses, as does `##[error]x` with a soft hyphen (U+00AD) between the hashes; so an
escape made of such a character would not hold either. The rule here: a character *counts* when it is
printable ASCII; every other one might be ignorable and is looked through, never trusted to break a
match (none of them equals `:`, `#` or `[`: the comparison tells width and case apart). A backslash
goes before the first `:` of a line whose first two counting characters (after spaces) are `::`,
and before every `[` whose two counting characters before it are `##`. The backslash counts, so
neither pattern survives; nothing else changes, and removing the backslashes gives back the text.

Why not the runner's own `::stop-commands::<token>` ... `::<token>::` around the agent's text? Its
state is one for both streams, while the runner reads stdout and stderr on two threads and hands
their lines over in batches, stderr's first (ProcessInvoker.ProcessOutput): a bracket on stderr
can swallow an annotation the gate writes to stdout meanwhile, and agent text on the other stream
is not covered at all. Every bracket also echoes two lines into the log, and a gate killed inside
one leaves commands off for the rest of the step. An escape is per line, shares no state between
streams, and reads the same on a laptop as in CI.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager

ESCAPE = "\\"


def _counts(ch: str) -> bool:
    """Printable ASCII: a character the runner's matching cannot skip."""
    return " " <= ch <= "~"


class _Lines:
    """The rule, one character at a time: a line may arrive in any number of writes."""

    def __init__(self):
        self.new_line()

    def new_line(self) -> None:
        self.fresh = True  # nothing written on this line yet
        self.start = True  # no counting character but spaces yet (TrimStart)
        self.held = ""  # a line's first ':' and what follows it, until a counting character decides
        self.last = ""  # the line's last two counting characters, for `##[`

    def feed(self, text: str) -> str:
        return "".join(self._one(ch) for ch in text)

    def finish(self) -> str:
        """What is held back, at the end of the stream (a line that is `:` alone)."""
        held = self.held
        self.new_line()
        return held

    def _one(self, ch: str) -> str:
        self.fresh = False
        if ch in "\r\n":  # the runner's line breaks
            return self.finish() + ch
        if not _counts(ch):  # may be ignorable: looked through
            if self.held:
                self.held += ch
                return ""
            return ch
        if self.held:  # the counting character after a line's first ':'
            out = (ESCAPE if ch == ":" else "") + self.held
            self.held, self.last = "", ":"
            return out + self._counted(ch)
        if self.start and ch == ":":
            self.start, self.held = False, ch
            return ""
        self.start = self.start and ch == " "
        return self._counted(ch)

    def _counted(self, ch: str) -> str:
        if ch == "[" and self.last == "##":
            ch = ESCAPE + ch
        self.last = (self.last + ch)[-2:]
        return ch


def inert(text: str) -> str:
    """`text` with every line the runner would run as a command made inert (InertStream's rule)."""
    lines = _Lines()
    return lines.feed(text) + lines.finish()


class InertStream:
    """A text stream writing to `raw` with every line made inert; `own` writes the gate's own command."""

    def __init__(self, raw):
        self.raw = raw
        self._lines = _Lines()
        self._lock = threading.Lock()  # one line's state: writes from two threads must not interleave in it

    def write(self, text: str) -> int:
        with self._lock:
            self.raw.write(self._lines.feed(text))
        if "\n" in text:  # a line written whole leaves whole: under `2>&1` the other stream cannot land inside it
            self.raw.flush()
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def own(self, line: str) -> None:
        """One of the gate's own workflow commands, as it is, at the start of a line."""
        with self._lock:
            pending = "" if self._lines.fresh else self._lines.finish() + "\n"
            self.raw.write(pending + line)

    def finish(self) -> None:
        """Write what is held back (the stream ends)."""
        with self._lock:
            self.raw.write(self._lines.finish())
        self.raw.flush()

    def flush(self) -> None:
        self.raw.flush()

    def __getattr__(self, name: str):  # isatty, fileno, encoding...: the terminal's, for rich
        return getattr(self.raw, name)


def inert_stream(stream) -> InertStream:
    return stream if isinstance(stream, InertStream) else InertStream(stream)


@contextmanager
def inert_stdio(stdout: bool = True):
    """sys.stderr, and sys.stdout unless it carries a protocol, through InertStream while the block runs."""
    saved = sys.stdout, sys.stderr
    err = inert_stream(sys.stderr)
    out = inert_stream(sys.stdout) if stdout else sys.stdout
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        for stream in (out, err):
            if isinstance(stream, InertStream):
                stream.finish()
        sys.stdout, sys.stderr = saved
