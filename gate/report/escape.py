"""Make untrusted agent text safe to embed in GitHub Markdown.

Agent output can contain anything: HTML, `@org/team` mentions that would ping
people, backtick runs that close our code fences, pipes that break tables.
"""

from __future__ import annotations

import html
import re

MENTION = re.compile(r"@(?=[A-Za-z0-9])")
ZWSP = "\u200b"


def inline(text: str | None, limit: int = 120) -> str:
    """One line for a table cell or a sentence: no HTML, no mentions, no pipes, no newlines."""
    if text is None:
        return "—"
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    flat = html.escape(flat, quote=False)
    flat = MENTION.sub("@" + ZWSP, flat)
    flat = flat.replace("|", "\\|").replace("`", "'")
    for ch in "*_[]~#":
        flat = flat.replace(ch, "\\" + ch)
    return flat


def code_block(text: str, limit: int = 1500, lang: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside it."""
    body = text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"
    body = MENTION.sub("@" + ZWSP, body)
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body}\n{fence}"


def html_text(text: str, limit: int = 120) -> str:
    """Text inside our own HTML tags (<summary>, <code>): escaped, no Markdown escapes."""
    flat = " ".join(text.split())[:limit]
    return MENTION.sub("@" + ZWSP, html.escape(flat, quote=False))
