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
