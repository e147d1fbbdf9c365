"""The reproduction commands: export failing cells as sessions, pin them, reproduce one
cell with its timeline, and sweep seeds to find schedules that fail.

What they print carries the agent's text (its answer, a breach message quoting it, the paths and
tool names of its calls, a reason): every piece of it goes to rich as Text with its control and bidi
characters spelled out (gate/report/escape.py), as the CLI's table does, so no markup in it is read
(`[critical]` stays, `[link=...]` links nothing) and no escape sequence reaches the terminal. The CLI
writes it through gate/report/inert.py, so no line of it runs as a GitHub workflow command.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gate.config import LoadedConfig
from gate.plan import load_config
from gate.errors import ConfigError
from gate.plan import derive_seed
from gate.runner.proxy_hook import needs_proxy
from gate.replay.pins import Pin, add_pins, corpus_path
from gate.replay.session import Session, write_session
from gate.report.escape import spell_out
from gate.report.model import Report
from gate.runner import run_gate


def load_report(path: Path) -> Report:
    from gate.report import read_report

    return read_report(path)


def failing_ids(report: Report, cell: str | None) -> list[str]:
    if cell:
        if cell not in {c.id for c in report.verdict.cells}:
            raise ConfigError(f"no cell {cell!r} in the report")
        return [cell]
    return [c.id for c in report.verdict.cells if c.status == "fail"]


def export(report_path: Path, out_dir: Path, cell: str | None = None, config: str | None = None) -> list[Path]:
    """Failing cells -> session files, by re-running them exactly (same seed) while recording."""
    report = load_report(report_path)
    loaded = load_config(config or report.verdict.config, {"seed": report.verdict.seed})
    ids = failing_ids(report, cell)
    if not ids:
        return []
    if not needs_proxy(loaded.config):  # nothing on the wire to record: input and output suffice
        cells = {c.id: c for c in report.verdict.cells}
        return [write_session(Session(id=i, input_id=cells[i].input_id, input=cells[i].input,
                                      output=next((r.output for r in cells[i].runs), None)), out_dir) for i in ids]
    run_gate(loaded, only=ids, record_dir=out_dir, output_dir=out_dir / ".run")
    from gate.replay.session import safe_name

    return [out_dir / f"{safe_name(i)}.json" for i in ids if (out_dir / f"{safe_name(i)}.json").exists()]


def pin(loaded: LoadedConfig, ids: list[str], seed: int, reasons: dict[str, str] | None = None) -> list[Pin]:
    pins = [Pin(id=i, seed=seed, config_digest=loaded.digest, reason=(reasons or {}).get(i, "")) for i in ids]
    return add_pins(corpus_path(loaded), pins)


def inert_text(value: str) -> Text:
    """Text that may be the agent's, as rich shows it: never parsed as markup, controls spelled out."""
    return Text(spell_out(value))


def timeline_table(cell, timing) -> Table:
    table = Table(title=inert_text(f"{cell.id} — {cell.status.upper()} ({cell.reason})"))
    for col in ("run", "#", "call", "model/tool", "status", "fault", "note", "ms"):
        table.add_column(col, overflow="fold")
    for run in cell.runs:
        times = timing.trace_ms[run.run] if timing and run.run < len(timing.trace_ms) else []
        for n, step in enumerate(run.trace):
            start, end = (times[n][0], times[n][1]) if n < len(times) else (None, None)
            when = "" if start is None else f"{start:.0f}–{'…' if end is None else f'{end:.0f}'}"
            table.add_row(*_step_row(run, step, when))
    return table


def _step_row(run, step, when: str) -> list[Text]:
    cells = (str(run.run), str(step.seq), f"{step.target} {step.method} {step.path}", step.tool or step.model or "",
             str(step.status or "—"), step.fault or "", step.note or "", when)
    return [inert_text(c) for c in cells]


def reproduce(loaded: LoadedConfig, cell_id: str, label: str, console: Console) -> int:
    report = run_gate(loaded, only=[cell_id], config_label=label,
                      output_dir=loaded.base_dir / loaded.config.output.dir / "reproduce")
    timing = {t.id: t for t in report.timings.cells}
    for cell in report.verdict.cells:
        console.print(timeline_table(cell, timing.get(cell.id)))
        for b in cell.breaches:
            console.print(Text.assemble(("  ✗ ", "red"), inert_text(f"[{b.severity}] {b.id}: {b.message}")))
        out = next((r.output for r in cell.runs), None)
        console.print(inert_text(f"  output: {out!r}"[:400]))
    return report.verdict.exit_code


def sweep(loaded: LoadedConfig, seeds: int, label: str, console: Console, do_pin: bool = False) -> dict[int, list[str]]:
    """Run the chaos and contract stages under N derived seeds; return failing cells per seed."""
    config = loaded.config
    failing: dict[int, list[str]] = {}
    for k in range(seeds):
        seed = derive_seed(config.seed, "sweep", k) % (2 ** 31)
        variant = config.model_copy(update={"seed": seed, "mutation": config.mutation.model_copy(update={"enabled": False}),
                                            "replay": config.replay.model_copy(update={"sessions": []})})
        swept = LoadedConfig(config=variant, path=loaded.path, lines=loaded.lines, redactor=loaded.redactor,
                             digest=loaded.digest)
        report = run_gate(swept, config_label=label, output_dir=loaded.base_dir / config.output.dir / "sweep")
        bad = [c.id for c in report.verdict.cells if c.status == "fail"]
        if bad:
            failing[seed] = bad
            console.print(inert_text(f"seed {seed}: {len(bad)} failing cell(s): {', '.join(bad)}"))
            if do_pin:
                pin(loaded, bad, seed)
    console.print(f"{len(failing)} of {seeds} seeds found failures", highlight=False, markup=False)
    return failing
