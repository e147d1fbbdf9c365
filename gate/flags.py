"""Command-line flag types and the parser that reports a bad flag as that flag.

A flag out of range (`--concurrency -1`, `--runs 0`, `--shard 3/2`, `--seed abc`)
is the user's command line, not their config: it is refused while parsing, as
`chaos-gate: --concurrency: must be at least 1`, exit 2, before any file is read.
The bounds match the config's own (gate/config/models.py), so a flag can never set
a value the config itself would refuse.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from gate.errors import GateError

MAX_SEED = 2 ** 63 - 1


class UsageError(GateError):
    """A command line that cannot be run; the message starts with the flag."""


class FlagParser(argparse.ArgumentParser):
    """argparse whose errors become a one-line UsageError instead of usage text and SystemExit."""

    def error(self, message: str):
        raise UsageError(message.removeprefix("argument "))


def int_between(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low} (got {value})")
        if value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high} (got {value})")
        return value

    parse.__name__ = "integer"  # argparse names the type in its own messages
    return parse


def shard_flag(text: str) -> tuple[int, int]:
    """'I/N' -> (I, N) with 1 <= I <= N."""
    from gate.errors import ConfigError
    from gate.plan.shard import parse_shard

    try:
        return parse_shard(text)
    except ConfigError:
        raise argparse.ArgumentTypeError(f"'{text}' is not I/N with 1 <= I <= N (e.g. 2/4)") from None


seed_flag = int_between(-MAX_SEED, MAX_SEED)
concurrency_flag = int_between(1, 64)
runs_flag = int_between(1, 100)
seeds_flag = int_between(1, 1000)


def time_scale_flag(text: str) -> float:
    """--time-scale N: a number from 1 to 100."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be between 1 and 100 (got {text})")
    return value


time_scale_flag.__name__ = "number"


JUNIT_FAMILIES = ("auto", "annotated", "xunit2")
JUNIT_HELP = ("annotated (file/line for GitHub's annotators) or xunit2 (strict: Jenkins xUnit, Ant); "
              "overrides output.junit_family (auto: annotated under GitHub Actions, else xunit2)")


def run_flags(p) -> None:
    """The flags `run` and `explore` share."""
    p.add_argument("-c", "--config", default="chaos-gate.yaml")
    p.add_argument("-o", "--output-dir", type=Path)
    p.add_argument("--seed", type=seed_flag)
    p.add_argument("--concurrency", type=concurrency_flag)
    p.add_argument("--runs", type=runs_flag)
    p.add_argument("--time-scale", type=time_scale_flag, metavar="N",
                     help="run the agent's clock N times fast (libfaketime); durations are agent time")
    p.add_argument("--only", action="append", metavar="CELL_ID", help="run only this cell (repeatable, globs ok)")
    p.add_argument("--shard", type=shard_flag, metavar="I/N", help="run the I-th of N balanced slices of the plan")
    p.add_argument("--explore-plan", type=Path, metavar="FILE",
                   help="explore from the plan `chaos-gate explore --discover FILE` wrote (a matrix discovers "
                        "once; each --shard runs its deal of it without re-running the other inputs' baselines)")
    p.add_argument("--record", type=Path, metavar="DIR", help="write a replayable session file per cell")
    p.add_argument("--quiet", action="store_true", help="no progress bar or table")
    p.add_argument("--full-report", action="store_true",
                     help="keep every run's output, checks and trace for passing cells too (output.full: true)")
    p.add_argument("--expect-digest", metavar="DIGEST",
                     help="warn when the config is not the one a report's reproduce command came from")
    p.add_argument("--baseline", type=Path, metavar="REPORT",
                     help="compare with a base report (main's report.json): new failures, fixes, regressions")
    p.add_argument("--faults", metavar="I:UPSTREAM:CALL,...",
                     help="with --only: fire exactly these faults (a shrunk set from report.json), or 'none'")
    p.add_argument("--junit-family", choices=JUNIT_FAMILIES, help=JUNIT_HELP)
