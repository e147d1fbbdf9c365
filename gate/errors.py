"""Errors the gate raises on purpose, and the exit codes they map to.

Two kinds only: the user's input is wrong (ConfigError) or the gate could not do
its job (HarnessError: agent would not start, port unavailable, ...). Both exit 2,
so CI can tell "the agent failed the gate" (1) from "the gate could not judge" (2).
"""

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_ERROR = 2


class GateError(Exception):
    """Base for errors that end a run with a clear message and exit code 2."""

    exit_code = EXIT_ERROR


class ConfigError(GateError):
    """The config is invalid; the message names file, line, key path and a fix."""

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(message)
        self.problems = problems or [message]


class HarnessError(GateError):
    """The gate could not run (agent would not start, tool missing, ...)."""
