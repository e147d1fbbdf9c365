"""The CLI as a person sees it: in a real pseudo-terminal 80 columns wide (the pty module, the
way tmux or a terminal emulator runs it), the failing-cells table never folds a cell id, every
reproduce command is one unbroken line that can be copied, and the closing `reports:` line
names all four reports and ends with a newline. A regular file given as the output directory
is one clear error, exit 2, no traceback."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios

import pytest

from conftest import EXAMPLE, ROOT

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]")


def run_in_pty(args: list[str], columns: int = 80, env: dict | None = None, timeout: float = 180) -> tuple[int, str]:
    """Run `python -m gate ARGS` on a pty of `columns` × 40; return its exit code and what it wrote."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "CI", "GITHUB_ACTIONS")}
    proc = subprocess.Popen([sys.executable, "-m", "gate", *args], stdin=slave, stdout=slave, stderr=slave,
                            cwd=ROOT, env={**base, "TERM": "xterm-256color", **(env or {})}, start_new_session=True)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            proc.kill()
            raise AssertionError(f"no output for {timeout}s")
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


def screen_lines(raw: str) -> list[str]:
    """What stays on screen: escapes stripped, carriage-return overwrites resolved, CRLF as lines."""
    text = ANSI.sub("", raw).replace("\r\n", "\n")
    return [line.rsplit("\r", 1)[-1] for line in text.split("\n")]


@pytest.fixture(scope="module")
def fragile(tmp_path_factory):
    out = tmp_path_factory.mktemp("pty")
    code, raw = run_in_pty(["run", "-c", str(EXAMPLE / "chaos-gate.yaml"), "-o", str(out)],
                           env={"AGENT_MODE": "fragile"})
    return code, raw, out


def test_failing_cells_and_reproduce_commands_at_80_columns(fragile):
    from gate.report.model import Report

    code, raw, out = fragile
    assert code == 1, raw[-2000:]
    lines = screen_lines(raw)
    assert max(len(line) for line in lines if "│" in line or "┃" in line) <= 80  # the table fits
    report = Report.model_validate_json((out / "report.json").read_text())
    bad = [c for c in report.verdict.cells if c.status in ("fail", "error")][:15]
    assert bad
    table_rows = [line for line in lines if line.startswith("│")]
    for cell in bad:  # the id stands whole in one table row
        assert any(f"│ {cell.id} " in row for row in table_rows), cell.id
    text = ANSI.sub("", raw).replace("\r\n", "\n")
    for cell in bad:  # one unbroken line each, no border: a copy is the whole command
        assert f"\n  {cell.reproduce}\n" in text, cell.reproduce
        assert not any(cell.reproduce[:30] in row for row in table_rows)


def test_reports_line_names_all_four_and_ends_with_a_newline(fragile):
    code, raw, out = fragile
    assert raw.endswith("\n")
    closing = [line for line in ANSI.sub("", raw).replace("\r\n", "\n").split("\n") if line.startswith("reports: ")]
    assert len(closing) == 1
    for name in ("report.json", "junit.xml", "summary.md", "report.html"):
        assert str(out / name) in closing[0]


def test_long_cell_ids_are_listed_whole_not_folded(tmp_path):
    """Ids too wide for an 80-column table are printed as plain lines, never cut inside a word."""
    from io import StringIO

    from rich.console import Console

    from gate.report.terminal import print_summary
    from test_junit import rich_report

    report = rich_report("ok")
    long_id = "contract/" + "a_really_long_input_identifier" * 3 + "/rate_limited"
    report.verdict.cells[1].id = long_id
    buf = StringIO()
    print_summary(report, Console(file=buf, width=80, force_terminal=False))
    lines = buf.getvalue().splitlines()
    assert any(line.startswith(f"  {long_id}  ") for line in lines)
    assert f"  {report.verdict.cells[1].reproduce}" in lines


@pytest.mark.parametrize("where", ["file", "inside-file"])
def test_output_dir_that_is_a_file_is_a_clear_error(tmp_path, where):
    target = tmp_path / "taken"
    target.write_text("not a directory\n")
    out = target if where == "file" else target / "reports"
    proc = subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(EXAMPLE / "chaos-gate.yaml"), "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"chaos-gate: -o {out}: the reports go into a directory")
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "taken.logs").exists()
