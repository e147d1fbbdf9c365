"""report.html: written beside summary.md, self-contained, every agent string escaped, and in headless
Chromium it renders the failing cells of the SDK example (whose orders API runs as a service) with
no console error and no network request; a screenshot is kept."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from gate.report import html
from gate.report.model import Report

BUGS = "double_write,no_retry"


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory) -> Path:
    """The SDK example with two planted bugs: double_write and rate_limited cells fail."""
    out = tmp_path_factory.mktemp("html") / "out"
    env = {k: v for k, v in os.environ.items() if k != "ORDERS_URL"} | {"AGENT_BUGS": BUGS}
    proc = subprocess.run([sys.executable, "-m", "gate", "run", "-c", "examples/sdk_agent/chaos-gate.yaml",
                           "-o", str(out), "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 1, proc.stderr
    return out


def failing_ids(out: Path) -> list[str]:
    report = Report.model_validate_json((out / "report.json").read_text())
    return [c.id for c in report.verdict.cells if c.status != "pass"]


def test_html_is_written_beside_the_summary_and_self_contained(failing_run):
    page = (failing_run / "report.html").read_text()
    assert (failing_run / "summary.md").exists()
    assert "contract/refund/double_write" in failing_ids(failing_run)
    for cell in failing_ids(failing_run):
        assert f'data-cell="{cell}"' in page
    assert "timeout_after_write" in page and "Retry-After" in page and "request and response bodies" in page
    assert "default-src 'none'" in page
    assert "http://" not in page.split("<body>")[0]  # nothing to fetch in the head
    assert "src=" not in page and "<link" not in page


def test_agent_text_is_escaped_everywhere(failing_run):
    report = Report.model_validate_json((failing_run / "report.json").read_text())
    evil = '<img src=x onerror="alert(1)"></pre><script>alert(2)</script>\x1b[31m'
    cell = next(c for c in report.verdict.cells if c.status == "fail")
    cell.runs[0].output, cell.input, cell.reason = evil, evil, evil
    cell.runs[0].trace[0].note = evil
    if report.exchanges:
        report.exchanges[0].runs[0][0].request = evil
    page = html.render(report)
    assert "<img" not in page and "<script>alert" not in page and "\x1b" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="Debian chromium not installed (.ci installs it)")
def test_report_opens_in_headless_chromium(failing_run):
    from cdp import open_page

    expected = failing_ids(failing_run)

    async def inspect(page):
        found = await page.evaluate("Array.from(document.querySelectorAll('article.cell')).map(e => e.dataset.cell)")
        verdict = await page.evaluate("document.getElementById('verdict').textContent")
        heat = await page.evaluate("document.querySelectorAll('#matrix td.breach').length")
        bars = await page.evaluate("document.querySelectorAll('.wf-row.fault .bar').length")
        shown = await page.evaluate("document.getElementById('shown').textContent")
        # filter on one scenario: only its cell stays visible
        await page.evaluate("(() => { const s = document.querySelector('select[data-filter=scenario]');"
                            " s.value = 'double_write'; s.dispatchEvent(new Event('change')); })()")
        visible = await page.evaluate("Array.from(document.querySelectorAll('article.cell'))"
                                      ".filter(e => !e.classList.contains('hidden')).map(e => e.dataset.cell)")
        await page.screenshot(failing_run / "report.png")
        return found, verdict, heat, bars, shown, visible, page.errors, page.requests

    found, verdict, heat, bars, shown, visible, errors, requests = asyncio.run(
        open_page((failing_run / "report.html").as_uri(), inspect))
    assert errors == []
    assert [r for r in requests if not r.startswith("file://")] == []
    assert sorted(found) == sorted(expected) and verdict == "FAIL"
    assert heat >= 2 and bars >= 2 and shown == str(len(expected))
    assert visible == ["contract/refund/double_write"]
    png = (failing_run / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
