"""Bidirectional controls from the agent are spelled out on every surface, like NUL and ESC.

U+202E (right-to-left override) makes `PWNED` render as `DENWP`; U+2066–U+2069, U+202A–U+202D,
U+200E/F and U+061C reorder text just as invisibly (Trojan Source). An agent answering with them
must not be able to hide or disguise text in report.html (checked in headless Chromium: the text
a reader sees), summary.md and the PR comment (rendered by cmark-gfm and markdown-it), junit.xml
(parsed back) or the terminal table."""

from __future__ import annotations

import asyncio
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import cmarkgfm
import pytest
from markdown_it import MarkdownIt
from rich.console import Console

from gate.report import write_all
from gate.report.escape import BIDI, spell_out
from gate.report.terminal import print_summary
from test_junit import rich_report

CONTROLS = ["\u061c", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
            "\u2066", "\u2067", "\u2068", "\u2069"]
HOSTILE = "refund \u202eDENWP\u202c done " + "".join(CONTROLS)
SPELLED = "\\u202eDENWP\\u202c"


class Names:
    json_, junit, markdown, html, full = "report.json", "junit.xml", "summary.md", "report.html", False


def raw_bidi(text: str) -> list[str]:
    return [c for c in CONTROLS if c in text]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bidi")
    write_all(rich_report(HOSTILE), out, Names)
    return out


def test_every_control_is_in_the_escaper():
    assert all(spell_out(c) == f"\\u{ord(c):04x}" for c in CONTROLS) and len(CONTROLS) == 12
    assert spell_out("\u200d") == "\u200d"  # the zero-width joiner the escaper itself uses stays


def test_summary_and_comment_show_the_controls_spelled_out(written):
    md = (written / "summary.md").read_text(encoding="utf-8")
    assert raw_bidi(md) == []
    for html in (cmarkgfm.github_flavored_markdown_to_html(md), MarkdownIt("commonmark").enable("table").render(md)):
        assert raw_bidi(html) == [] and SPELLED in html


def test_junit_carries_them_as_visible_text(written):
    text = (written / "junit.xml").read_text(encoding="utf-8")
    assert raw_bidi(text) == []
    root = ET.parse(written / "junit.xml").getroot()
    outputs = [e.text for e in root.iter("system-out") if e.text]
    assert any(SPELLED in o for o in outputs)


def test_terminal_table_spells_them_out():
    report = rich_report(HOSTILE)
    buf = io.StringIO()
    print_summary(report, Console(file=buf, width=200, force_terminal=True))
    assert raw_bidi(buf.getvalue()) == [] and "\\u202e" in buf.getvalue()


def test_report_html_source_has_none(written):
    page = (written / "report.html").read_text(encoding="utf-8")
    assert raw_bidi(page) == [] and SPELLED in page
    assert BIDI  # the class the escaper matches


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="Debian chromium not installed (.ci installs it)")
def test_report_html_as_chromium_shows_it(written):
    from cdp import open_page

    async def inspect(page):
        seen = await page.evaluate("document.body.innerText")
        return seen, page.errors

    seen, errors = asyncio.run(open_page((written / "report.html").as_uri(), inspect))
    assert errors == [] and raw_bidi(seen) == []
    assert SPELLED in seen and "\u202eDENWP" not in seen
