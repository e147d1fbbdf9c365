"""The one escaper for untrusted text (agent output, inputs, ids, messages) on every surface.

Each function fits one context, because what is safe differs between them:

- `text`: prose and table cells. Every ASCII punctuation character is
  backslash-escaped (CommonMark shows it literally, GFM tables treat `\\|` as a
  pipe), newlines become spaces, and `@name` / `#123` get a zero-width joiner so
  GitHub neither pings nor links them (it does so on rendered text, escapes or not).
- `code`: a code span. Nothing is backslash-escaped (inside a span a backslash is
  shown); the delimiter is longer than any backtick run inside; only a table needs
  `\\|`. GitHub links no mentions inside code.
- `code_block`: a fence longer than any backtick run inside, so no line can close it.
- `html_text`: inside our own HTML (<summary>), where Markdown is not parsed.
- `plain`: annotations and notices, which GitHub shows as plain text.

All of them spell out control characters as visible `\\u001b`-style text (as the
JUnit writer does) and break the sticky-comment marker, so agent text can never
pose as our comment. The bidirectional controls (U+061C, U+200E/F, U+202A–U+202E,
U+2066–U+2069) are spelled out too: invisible, they reorder what a reader sees
(`PWNED` behind U+202E reads `DENWP`), on every surface that renders text.
"""

from __future__ import annotations

import html
import re

MARKER = "<!-- agent-chaos-gate:sticky-comment -->"
ZWJ = "\u200d"
_MARKER_CORE = "agent-chaos-gate:sticky-comment"
# XML cannot carry these; in Markdown they are invisible or mangled (NUL becomes U+FFFD)
# ...and the bidi controls, which reorder the text around them without being seen (Trojan Source)
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
UNSAFE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff{BIDI}]")
PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
PINGS = re.compile(r"(?<=[@#])(?=[A-Za-z0-9])")  # @user, @org/team, #123


def spell_out(value: str) -> str:
    """Control characters, bidi controls, lone surrogates and non-characters as visible \\uXXXX text."""
    if value.isascii() and value.isprintable():  # ids, counts, plain prose: no control character at all
        return value
    if UNSAFE.search(value) is None:  # the common case otherwise (newlines, non-ASCII text): no copy
        return value
    return UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def _clean(value: str | None, limit: int | None, one_line: bool) -> str:
    value = spell_out((value or "").replace("\r\n", "\n").replace("\r", "\n"))
    if one_line:
        value = value.replace("\n", " ").replace("\t", " ")
    if limit is not None and len(value) > limit:
        value = value[: limit - 1] + "…"
    return value.replace(_MARKER_CORE, "agent-chaos-gate:" + ZWJ + "sticky-comment")


def _no_pings(value: str) -> str:
    return PINGS.sub(ZWJ, value)


def text(value: str | None, limit: int = 120) -> str:
    """Prose or a table cell: shows exactly `value` on one line, with no markup, ping or link."""
    if value is None:
        return "—"
    return _no_pings(PUNCT.sub(r"\\\1", _clean(value, limit, one_line=True)))


def code(value: str | None, limit: int = 120, table: bool = False) -> str:
    """A code span showing exactly `value` (on one line); `table=True` inside a GFM table cell."""
    if value is None:
        return "—"
    body = _clean(value, limit, one_line=True)
    if table:
        body = body.replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    delim = "`" * (longest + 1)
    # CommonMark strips one space from each end when both are there: pad to survive that
    if body[:1] in ("`", " ") or body[-1:] in ("`", " "):
        body = f" {body} "
    return f"{delim}{body or ' '}{delim}"


def code_block(value: str, limit: int = 1500, lang: str = "") -> str:
    """A fenced block showing exactly `value`; its fence is longer than any backtick run inside."""
    body = _clean(value, None, one_line=False)
    if len(body) > limit:
        body = body[:limit] + f"\n… ({len(body) - limit} more characters)"
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body}\n{fence}"


def html_text(value: str | None, limit: int = 120) -> str:
    """Text inside our own HTML tags (<summary>): HTML-escaped on one line, no Markdown escapes."""
    return _no_pings(html.escape(_clean(value, limit, one_line=True), quote=False))


def plain(value: str | None, limit: int = 2000) -> str:
    """Annotations and notices (shown as plain text): visible controls, no marker, bounded."""
    return _clean(value, limit, one_line=False)


def html_attr(value: str | None, limit: int = 200) -> str:
    """An attribute value (or one-line text) in report.html: quotes escaped too, so it cannot end the attribute."""
    return html.escape(_clean(value, limit, one_line=True), quote=True)


def html_block(value: str | None, limit: int = 4000) -> str:
    """Multi-line text inside <pre> in report.html: escaped, controls spelled out, bounded."""
    body = _clean(value, None, one_line=False)
    if len(body) > limit:
        body = body[:limit] + f"\n… ({len(body) - limit} more characters)"
    return html.escape(body, quote=True)
