"""The `chaos-gate` command line: run, validate, schema, plan.

Exit codes: 0 pass, 1 the agent failed the gate, 2 the config is wrong or the gate
could not judge (agent would not start, SIGINT/SIGTERM, ...). Expected errors print one clear
message, never a traceback. What a command prints that may hold an agent's text goes through
gate/report/inert.py, so that a GitHub runner reading the step's log runs none of it.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gate.errors import EXIT_ERROR, GateError
from gate.flags import (JUNIT_FAMILIES, JUNIT_HELP, FlagParser, run_flags, runs_flag, seed_flag,
                        seeds_flag)

if TYPE_CHECKING:
    from rich.console import Console

EXIT_CODES = """exit codes:
  0  pass
  1  the agent failed the gate
  2  the gate could not judge: bad config, the agent did not start or never became
     ready, a harness error, or SIGINT/SIGTERM (then report.json is partial: the
     finished cells, verdict error, error_reason interrupted; every agent is stopped)
A run always writes report.json, JUnit and summary.md unless the config is invalid."""
# output.junit_family's values, here rather than imported: the report package is not loaded to parse flags

def _parser() -> argparse.ArgumentParser:
    p = FlagParser(prog="chaos-gate", description="Attack an AI agent and gate on its resilience.",
                   epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the gate and write the reports", epilog=EXIT_CODES,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    run_flags(run)
    explore = sub.add_parser("explore", help="run with exploration on (docs/explore.md); --write pins the findings",
                             epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    run_flags(explore)
    explore.add_argument("--write", action="store_true",
                         help="append each finding to the config as a pinned scenario and its oracle")
    explore.add_argument("--discover", type=Path, metavar="FILE",
                         help="run the baselines only and write the plan they make to FILE, for every shard of a "
                              "matrix to run with `run --explore-plan FILE --shard I/N`")
    merge = sub.add_parser("merge", help="merge shard reports into one report and one verdict")
    merge.add_argument("reports", nargs="+", type=Path)
    merge.add_argument("-c", "--config", default="chaos-gate.yaml")
    merge.add_argument("-o", "--output-dir", type=Path)
    merge.add_argument("--seed", type=seed_flag)
    merge.add_argument("--runs", type=runs_flag, help="as given to every shard")
    merge.add_argument("--quiet", action="store_true")
    merge.add_argument("--baseline", type=Path, metavar="REPORT", help="compare the merged report with a base report")
    merge.add_argument("--junit-family", choices=JUNIT_FAMILIES, help=JUNIT_HELP)
    rep = sub.add_parser("replay", help="turn failures and traces into replayable sessions")
    rsub = rep.add_subparsers(dest="replay_command", required=True)
    exp = rsub.add_parser("export", help="failing cells of a report -> session files")
    exp.add_argument("--from", dest="source", type=Path, required=True)
    exp.add_argument("--cell")
    exp.add_argument("-c", "--config")
    exp.add_argument("-o", "--output-dir", type=Path, default=Path("sessions"))
    imp = rsub.add_parser("import", help="LangSmith runs or OpenTelemetry GenAI traces -> session files")
    source = imp.add_mutually_exclusive_group(required=True)
    source.add_argument("--langsmith", type=Path, metavar="FILE", help="runs exported from LangSmith (JSON or JSONL)")
    source.add_argument("--otel", type=Path, metavar="FILE", help="OTLP JSON spans (OpenTelemetry GenAI conventions)")
    imp.add_argument("--llm-target", default="llm", help="target name recorded for LLM calls (any LLM upstream answers)")
    imp.add_argument("--tool-map", action="append", default=[], metavar="TRACED=UPSTREAM",
                     help="a tool named differently in the trace and in the config (repeatable)")
    imp.add_argument("-o", "--output-dir", type=Path, default=Path("sessions"))
    pin = sub.add_parser("pin", help="add failing cells to the seed corpus")
    pin.add_argument("cells", nargs="*", metavar="CELL_ID")
    pin.add_argument("-c", "--config", default="chaos-gate.yaml")
    pin.add_argument("--from", dest="source", type=Path, help="a report: pin its failing cells (or the ones named)")
    pin.add_argument("--seed", type=seed_flag)
    repro = sub.add_parser("reproduce", help="rerun exactly one cell and print its trace as a timeline")
    repro.add_argument("cell")
    repro.add_argument("-c", "--config", default="chaos-gate.yaml")
    repro.add_argument("--seed", type=seed_flag)
    repro.add_argument("--expect-digest", metavar="DIGEST", help="warn when the config differs from the report's")
    sw = sub.add_parser("sweep", help="run chaos and contract stages under N derived seeds")
    sw.add_argument("-c", "--config", default="chaos-gate.yaml")
    sw.add_argument("--seeds", type=seeds_flag, default=10)
    sw.add_argument("--pin", action="store_true")
    val = sub.add_parser("validate", help="check a config file")
    val.add_argument("-c", "--config", default="chaos-gate.yaml")
    sub.add_parser("schema", help="print the config's JSON Schema")
    _init_parser(sub)
    _serve_parsers(sub)
    plan = sub.add_parser("plan", help="list the cells a config expands to")
    plan.add_argument("-c", "--config", default="chaos-gate.yaml")
    plan.add_argument("--seed", type=seed_flag)
    return p


def _serve_parsers(sub) -> None:
    """`sim serve` and `world serve`: the keyless model and the fake worlds on their own (gate/testing/standalone.py)."""
    sim = sub.add_parser("sim", help="the scripted model on its own").add_subparsers(dest="sim_command", required=True)
    serve = sim.add_parser("serve", help="serve the sim on one port, every dialect, rules from a config")
    serve.add_argument("-c", "--config", default="chaos-gate.yaml", help="a chaos-gate.yaml, or a file with sim: only")
    serve.add_argument("--port", type=int, default=8000, help="0 picks a free port (it is printed)")
    serve.add_argument("--host", default="127.0.0.1")
    world = sub.add_parser("world", help="a fake world on its own").add_subparsers(dest="world_command", required=True)
    wserve = world.add_parser("serve", help="serve a world file (gate or faultbench format) over HTTP or stdio")
    wserve.add_argument("file", type=Path, help="a world file, or a chaos-gate.yaml with worlds:")
    how = wserve.add_mutually_exclusive_group()
    how.add_argument("--http", action="store_true", help="MCP at /mcp and REST at / (the default)")
    how.add_argument("--stdio", action="store_true", help="MCP over stdin/stdout, one JSON-RPC message per line")
    wserve.add_argument("--faults", action="store_true", help="apply the world's faults: block")
    wserve.add_argument("--port", type=int, default=8000, help="0 picks a free port (it is printed)")
    wserve.add_argument("--host", default="127.0.0.1")
    wserve.add_argument("--seed", type=seed_flag, default=0, help="seeds the generated records and the faults")
    wserve.add_argument("--world", help="which world of a config with several")
    wserve.add_argument("--state-file", type=Path, help="mirror the world's records to this JSON file after each call")


def cmd_sim(args, console) -> int:
    from gate.testing.standalone import sim_serve

    return sim_serve(Path(args.config), args.host, args.port)


def cmd_world(args, console) -> int:
    from gate.testing.standalone import world_serve

    return world_serve(args.file, http=not args.stdio, host=args.host, port=args.port, faults=args.faults,
                       seed=args.seed, name=args.world, state_file=args.state_file)


def _init_parser(sub) -> None:
    from gate.scaffold import FRAMEWORKS, PROVIDERS

    init = sub.add_parser("init", help="write a starter chaos-gate.yaml and a GitHub workflow")
    init.add_argument("--agent-url", help="your agent already runs at this base URL")
    init.add_argument("--command", dest="agent_command",  # `command` is the subcommand's own dest
                      help="your agent is a server: the command that starts it (it gets its port in $PORT)")
    init.add_argument("--script", help="your agent is a script run once per input (invoke: command): its command")
    init.add_argument("--input", choices=["stdin", "arg"], help="with --script: the input on stdin (default) or as "
                                                                "its last argument")
    init.add_argument("--provider", choices=sorted(PROVIDERS))
    init.add_argument("--framework", choices=sorted(FRAMEWORKS))
    init.add_argument("--service", action="append", metavar="NAME=COMMAND", help="a service it needs (repeatable)")
    init.add_argument("--session", action="store_true", help="your agent keeps a conversation across messages (a "
                                                             "session or thread id): write a two-turn conversation input")
    init.add_argument("--dir", default=".", help="where to write (default: here)")
    init.add_argument("--force", action="store_true", help="overwrite existing files")


def cmd_init(args, console: Console) -> int:
    from gate.scaffold import run_init

    return run_init(args)


def cmd_explore(args, console: Console) -> int:
    """`run` with exploration on whatever the config says, then (`--write`) the findings pinned in it."""
    if args.discover is not None and (args.only or args.shard or args.explore_plan):
        raise GateError("explore --discover runs every input's baseline and plans the whole exploration: "
                        "leave out --only, --shard and --explore-plan")
    code, report, loaded = _run(args, console, explore=True)
    if args.discover is not None:
        return _discovered(args.discover, report, code)
    findings = report.verdict.explore.findings if report.verdict.explore is not None else []
    if args.write and findings:
        from gate.pinning import write_findings

        added = write_findings(loaded.path, findings)
        print(f"chaos-gate: pinned {added} finding(s) in {args.config} (chaos.scenarios, contract.invariants)")
    return code


def _discovered(path: Path, report, code: int) -> int:
    explored = report.verdict.explore
    if explored is None or not path.is_file():
        sys.stderr.write(f"chaos-gate: no plan written to {path}: the baselines did not finish "
                         f"({report.verdict.verdict}; see the reports)\n")
        return code or EXIT_ERROR
    print(f"chaos-gate: discovered {explored.sites} call site(s), {explored.run} fault point(s) → {path}; "
          f"run each shard with `chaos-gate run --explore-plan {path} --shard I/N`")
    return code


def cmd_run(args, console: Console) -> int:
    return _run(args, console)[0]


def _run(args, console: Console, explore: bool = False):
    from gate.agent.reaper import install_signal_handlers
    from gate.plan import load_config
    from gate.report.terminal import progress_bar
    from gate.runner import run_gate
    from gate.runner.guard import run_guarded

    loaded = load_config(args.config, {"seed": args.seed, "concurrency": args.concurrency, "runs": args.runs,
                                       "agent.time_scale": args.time_scale})
    if explore or args.explore_plan is not None:
        from gate.config.explore import ExploreConfig

        chaos = loaded.config.chaos
        if not isinstance(chaos.explore, ExploreConfig):
            chaos.explore = ExploreConfig()
        chaos.enabled, loaded.plan = True, None  # planned again: the baselines run first
    warn_if_changed(loaded, args.expect_digest)
    if args.full_report:
        loaded.config.output.full = True
    out_dir = args.output_dir or loaded.base_dir / loaded.config.output.dir
    check_output_dir(out_dir, "-o" if args.output_dir else "output.dir")  # before any agent starts
    _placeholder(loaded, out_dir, args.config)
    install_signal_handlers()
    shard = args.shard  # (I, N), parsed and checked with the other flags
    from gate.runner.insights import parse_firings, read_baseline

    baseline = read_baseline(args.baseline)
    firings = parse_firings(args.faults) if args.faults else None

    only = ["contract/*/baseline"] if getattr(args, "discover", None) else args.only  # discovery: the baselines

    def run():
        with progress_bar(console, quiet=args.quiet) as (on_plan, on_progress):
            return run_gate(loaded, only=only, output_dir=out_dir, config_label=args.config,
                            on_plan=on_plan, on_progress=on_progress, shard=shard, record_dir=args.record,
                            baseline=baseline, firings=firings, explore_plan=args.explore_plan,
                            discover=getattr(args, "discover", None))

    try:
        report = run_guarded(loaded, out_dir, args.config, run)  # a report on every exit path
    except GateError as exc:  # said on stderr by the caller; the placeholder must not stand for it
        _placeholder(loaded, out_dir, args.config, "config", str(exc))
        raise
    return _publish(report, loaded, out_dir, args.quiet, console, "reports", args.junit_family), report, loaded


def _publish(report, loaded, out_dir, quiet: bool, console: Console, what: str, junit_family: str | None = None) -> int:
    """Write the report files, show the table, and return the verdict's exit code."""
    from gate.report import write_all
    from gate.report.terminal import print_summary

    from gate.agent.reaper import deferred_signals
    from gate.report.failure import failure_report, redacted

    report = redacted(report, loaded.redactor)  # the terminal prints from it too
    if junit_family:
        loaded.config.output.junit_family = junit_family
    from gate.agent.accounting import final_check

    final_check(report)  # nothing the agent started is alive while the reports are written
    with deferred_signals() as signals:  # a signal now must not leave half-written files
        try:
            paths = write_all(report, Path(out_dir), loaded.config.output, loaded.redactor.redact)
        except Exception as exc:  # a renderer bug: still leave a report behind
            report = failure_report(loaded, "harness", f"the gate failed writing the reports: {exc!r}")
            paths = write_all(report, Path(out_dir), loaded.config.output, loaded.redactor.redact)
        if not quiet:
            print_summary(report, console)
            names = "  ".join(str(paths[k]) for k in ("json", "junit", "markdown", "html"))
            console.print(f"{what}: {names}", highlight=False, markup=False, soft_wrap=True)
            console.file.flush()
    for cell in report.verdict.cells:  # why the gate could not judge (start-up, harness, signal), log tail included
        if cell.stage == "gate" and cell.error:
            sys.stderr.write(f"chaos-gate: {cell.error}\n")
    if signals:
        sys.stderr.write("chaos-gate: interrupted while writing the reports; they are complete\n")
        return EXIT_ERROR
    return report.verdict.exit_code


def _placeholder(loaded, out_dir, label: str, reason: str = "interrupted", message: str = "") -> None:
    """An error report in place of whatever the directory held, until the run's own replaces it: a gate
    killed outright (SIGKILL, a cancelled job) leaves a report saying so, never an earlier run's PASS."""
    from gate.report import write_all
    from gate.report.failure import failure_report

    message = message or ("the gate did not finish this run (it was killed, or is still running): this report "
                          "was written when the run began")
    report = failure_report(loaded, reason, message, label=label)
    write_all(report, Path(out_dir), loaded.config.output, loaded.redactor.redact)


def check_output_dir(path: Path, flag: str) -> None:
    """The reports go into a directory: a regular file there (or on its way) is the user's error,
    said in one line with exit 2, before anything runs, never a NotADirectoryError traceback."""
    path = Path(path)
    for part in [path, *path.parents]:
        if part.exists():
            if not part.is_dir():
                what = "is" if part == path else f"is inside {part}, which is"
                raise GateError(f"{flag} {path}: the reports go into a directory, but {path} {what} a regular file "
                                "(give a directory, or remove the file)")
            return


def cmd_replay(args, console: Console) -> int:
    from gate import reproduce

    if args.replay_command == "export":
        paths = reproduce.export(args.source, args.output_dir, args.cell, args.config)
        for path in paths:
            console.print(f"wrote {path}", highlight=False)
        console.print(f"{len(paths)} session(s) exported", highlight=False)
        return 0
    from gate.replay.importers.command import run_import

    return run_import(args, console)


def cmd_pin(args, console: Console) -> int:
    from gate.plan import load_config
    from gate import reproduce

    loaded = load_config(args.config, {"seed": args.seed})
    seed, ids, reasons = loaded.config.seed, list(args.cells), {}
    if args.source:
        report = reproduce.load_report(args.source)
        seed = report.verdict.seed
        failing = {c.id: c.reason for c in report.verdict.cells if c.status == "fail"}
        ids = ids or list(failing)
        reasons = failing
    if not ids:
        console.print("nothing to pin", highlight=False)
        return 0
    added = reproduce.pin(loaded, ids, seed, reasons)
    console.print(f"pinned {len(added)} cell(s) in {loaded.base_dir / loaded.config.replay.pins}", highlight=False)
    return 0


def warn_if_changed(loaded, expected: str | None) -> None:
    """A reproduce command names the config digest it came from; a different config may not
    reproduce the failure (another env var, an edited file), and must say so before it runs."""
    if expected and expected != loaded.digest:
        sys.stderr.write(f"chaos-gate: warning: {loaded.path.name} is not the config this cell was reported from "
                         f"(digest {expected}, now {loaded.digest}): an edited file or different environment "
                         "variables; the run may not reproduce the reported failure\n")


def cmd_reproduce(args, console: Console) -> int:
    from gate.plan import load_config
    from gate import reproduce

    loaded = load_config(args.config, {"seed": args.seed})
    warn_if_changed(loaded, args.expect_digest)
    return reproduce.reproduce(loaded, args.cell, args.config, console)


def cmd_sweep(args, console: Console) -> int:
    from gate.plan import load_config
    from gate import reproduce

    loaded = load_config(args.config)
    failing = reproduce.sweep(loaded, args.seeds, args.config, console, args.pin)
    return 1 if failing else 0


def cmd_merge(args, console: Console) -> int:
    from gate.plan import load_config
    from gate.verdict.merge import merge_reports

    loaded = load_config(args.config, {"seed": args.seed, "runs": args.runs})
    from gate.runner.insights import read_baseline

    out_dir = args.output_dir or loaded.base_dir / loaded.config.output.dir
    check_output_dir(out_dir, "-o" if args.output_dir else "output.dir")
    report = merge_reports(loaded, args.reports, read_baseline(args.baseline))
    return _publish(report, loaded, out_dir, args.quiet, console, f"merged {len(args.reports)} report(s)",
                    args.junit_family)


def cmd_validate(args, console: Console) -> int:
    from gate.plan import load_config
    from gate.plan import build_plan

    loaded = load_config(args.config)
    for warning in loaded.warnings:  # vacuous references let through by gate.allow_vacuous
        sys.stderr.write(f"warning: {warning}\n")
    cells = build_plan(loaded.config, base_dir=loaded.base_dir)
    sys.stdout.write(f"{args.config}: valid ({len(cells)} cells, {len(loaded.config.contract.invariants)} invariants)\n")
    return 0


def cmd_schema(args, console: Console) -> int:
    from gate.config import Config

    schema = Config.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "chaos-gate.yaml"
    sys.stdout.write(json.dumps(schema, indent=2) + "\n")
    return 0


def cmd_plan(args, console: Console) -> int:
    from gate.plan import load_config
    from gate.plan import build_plan

    loaded = load_config(args.config, {"seed": args.seed})
    for warning in loaded.warnings:
        sys.stderr.write(f"warning: {warning}\n")
    sys.stdout.write("cell\tscenario\tseed\tinvariants\n")
    for cell in build_plan(loaded.config, base_dir=loaded.base_dir):
        sys.stdout.write(f"{cell.id}\t{cell.scenario}\t{cell.seed}\t{','.join(cell.invariants)}\n")
    return 0


COMMANDS = {"run": cmd_run, "explore": cmd_explore, "merge": cmd_merge, "replay": cmd_replay, "pin": cmd_pin, "reproduce": cmd_reproduce,
            "sweep": cmd_sweep, "validate": cmd_validate, "schema": cmd_schema, "init": cmd_init, "plan": cmd_plan,
            "sim": cmd_sim, "world": cmd_world}


# Commands that print without rich: its ~25 ms import would be a tenth of their start-up.
PLAIN = frozenset({"validate", "schema", "plan", "sim", "world"})
QUICK = frozenset({"validate", "schema", "plan"})  # print and exit: no collection worth its cost (console_entry)


def _console(command: str):
    if command in PLAIN:
        return None
    from rich.console import Console

    return Console(stderr=False)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    with _inert_output(argv[0] if argv else ""):
        return _main(argv)


# What never prints an agent's text (the config, the plan, the schema, the starter files): not filtered,
# and spared the report package's import. `world serve --stdio` speaks JSON-RPC on stdout: its bytes
# are the protocol's, so only its stderr (where the agent's calls are logged) is filtered.
UNFILTERED = QUICK | {"init"}


def _inert_output(command: str):
    """Every other command's stdout and stderr through the one neutraliser (gate/report/inert.py): in a
    GitHub Actions step no line of the agent's that the gate prints is run as a workflow command."""
    if command in UNFILTERED:
        return contextlib.nullcontext()
    from gate.report.inert import inert_stdio

    return inert_stdio(stdout=command != "world")


def _main(argv: list[str]) -> int:
    if argv[:1] and argv[0] not in QUICK:
        from gate.agent.accounting import forget

        forget()  # the processes of this command's run only (gate/agent/accounting.py)
    try:
        args = _parser().parse_args(argv)  # a bad flag is a UsageError: one line, exit 2
        return COMMANDS[args.command](args, _console(args.command))
    except GateError as exc:
        # plain: rich would re-wrap file:line paths; redacted: a message may quote a secret value
        sys.stderr.write(f"chaos-gate: {_environment_redactor().redact(str(exc))}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:  # a signal before a run began or outside `run` (which reports it)
        from gate.agent.reaper import kill_all

        kill_all()
        sys.stderr.write("chaos-gate: interrupted; every agent process was stopped\n")
        return EXIT_ERROR


def _environment_redactor():
    from gate.config.secrets import Redactor

    return Redactor.for_environment(os.environ)


def console_entry() -> None:
    """The process entry point (`chaos-gate`, `python -m gate`); `main` is what tests call in-process."""
    # Installed pydantic plugins are searched for by reading every distribution's entry points
    # (40 ms with 170 packages) and would hook the gate's own config validation: neither is wanted.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if sys.argv[1:2] and sys.argv[1] not in QUICK:  # a command that may start an agent (docs/security.md)
        from gate.agent.accounting import harden

        harden()
    if sys.argv[1:2] and sys.argv[1] in QUICK:
        gc.disable()  # what a quick command allocates (models, the plan) it keeps: a collection frees nothing
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # `chaos-gate plan | head`: the reader has what it wanted; exit quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's own final flush too
        # a listing cut short is still a success; a run whose output was cut never passes for one
        code = 0 if sys.argv[1:2] and sys.argv[1] in QUICK else EXIT_ERROR
    # The process ends here: exempting the live objects from the final collections saves ~30 ms.
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    console_entry()
