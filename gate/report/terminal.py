"""Terminal output: a live progress bar while cells run, a rich table at the end.

Ids, reasons and commands go into the table as plain Text (never parsed as rich
markup: `[red]` in a scenario name stays text) with control and bidi characters spelled
out, so nothing in a config or an agent's answer can restyle or scramble the terminal.
A cell id is never folded mid-word: its column is as wide as the longest id, and when
that does not fit the terminal the cells are listed as plain lines instead. Reproduce
commands are printed after the table as plain lines the terminal wraps itself (no
border, no inserted newline), so a copied command is the whole command. The verdict's line
says so when no fault was injected (gate/report/injected.py). The CLI prints all of it
through the one neutraliser (gate/report/inert.py): in a GitHub Actions step no line of
the table, a reason or a log tail is run as a workflow command, however rich wraps it.
"""

from __future__ import annotations

from contextlib import contextmanager

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table
from rich.text import Text

from gate.report.escape import spell_out
from gate.report.progress import PlainProgress, run_failed

from gate.report.injected import no_fault_note
from gate.report import explore_text
from gate.report.model import Report
from gate.report.reach_text import reach_lines

STYLE = {"pass": "green", "fail": "red", "error": "yellow"}


@contextmanager
def progress_bar(console: Console, quiet: bool = False):
    """Yields (on_plan(total, phase=None), on_progress(run)) callbacks for the runner: a live bar on a terminal
    (done / total, failures so far, elapsed, ETA), plain lines every few seconds elsewhere. A `phase` after
    the cells (shrinking) gets a bar of its own."""
    if quiet:
        yield (lambda total, phase=None: None), (lambda run=None: None)
        return
    if not console.is_terminal:
        plain = PlainProgress()
        yield plain.on_plan, plain.on_progress
        return
    progress = Progress(TextColumn("[bold]chaos-gate"), TextColumn("{task.description}"), BarColumn(),
                        MofNCompleteColumn(), TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
                        TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True)
    task = None
    failures = 0
    with progress:
        def on_plan(total: int, phase: str | None = None):
            nonlocal task
            if phase is not None:  # a phase of its own after the cells: a bar of its own
                task = progress.add_task(phase, total=total, status="failing cells")
            elif task is not None:  # called again: exploration planned more cells after the baselines
                progress.update(task, total=total)
            else:
                task = progress.add_task("", total=total, status="[red]0 failing")

        def on_progress(run=None):
            nonlocal failures
            if task is None:
                return
            if run is not None:
                failures += run_failed(run)
                progress.update(task, status=f"[red]{failures} failing")
            progress.update(task, advance=1, refresh=True)

        yield on_plan, on_progress


def print_summary(report: Report, console: Console, max_rows: int = 15) -> None:
    v = report.verdict
    stages = Table(title="chaos-gate", show_lines=False)
    for col in ("stage", "score", "weight", "cells", "pass", "fail", "error", "flaky"):
        stages.add_column(col, justify="right" if col != "stage" else "left")
    for s in v.stages:
        stages.add_row(s.stage, "n/a" if s.score is None else f"{s.score:.1f}", f"{s.weight:g}", str(s.cells),
                       str(s.passed), str(s.failed), str(s.errors), str(s.flaky))
    console.print(stages)
    for line in explore_text.plain_lines(report):  # the findings lead: what a team acts on
        console.print(spell_out(line), highlight=False, markup=False, soft_wrap=True)
    bad = [c for c in v.cells if c.status in ("fail", "error")][:max_rows]
    if bad:
        _failing_cells(bad, console)
    score = "n/a" if v.score is None else f"{v.score:.1f}"
    unattacked = no_fault_note(report)  # in the verdict's line: a pass that injected no fault must not read as survived
    console.print(f"[bold {STYLE[v.verdict]}]{v.verdict.upper()}[/] score {score} (min {v.min_score:g}) · "
                  f"{f'{unattacked} · ' if unattacked else ''}"
                  f"{v.counts.passed}/{v.counts.cells} cells passed · seed {v.seed}", highlight=False, soft_wrap=True)
    for reason in v.reasons:
        console.print(f"  - {spell_out(reason)}", highlight=False, markup=False)
    for line in reach_lines(v.reach):
        console.print(f"  {spell_out(line)}", highlight=False, markup=False, style="dim")


def _failing_cells(bad, console: Console) -> None:
    """The failing cells (cell, reason, breached), then each one's reproduce command on its own line."""
    rows = [[spell_out(s) for s in (c.id, c.reason, ", ".join(b.id for b in c.breaches) or "-")] for c in bad]
    widest = max(len(r[0]) for r in rows)
    if widest + 28 <= console.width:  # id column + borders + room for reason and breaches
        fails = Table(title="failing cells")
        fails.add_column("cell", no_wrap=True, min_width=widest)
        fails.add_column("reason", overflow="fold")
        fails.add_column("breached", overflow="fold")
        for row in rows:
            fails.add_row(*(Text(s) for s in row))
        console.print(fails)
    else:
        console.print("failing cells:", highlight=False, markup=False)
        for cell_id, reason, breached in rows:
            console.print(f"  {cell_id}  {reason}  ({breached})", highlight=False, markup=False, soft_wrap=True)
    console.print("reproduce:", highlight=False, markup=False)
    for c in bad:
        console.print(f"  {spell_out(c.reproduce)}", highlight=False, markup=False, soft_wrap=True)
