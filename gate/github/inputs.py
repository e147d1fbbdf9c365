"""The Action's inputs, read the way GitHub passes them to a container action.

`with: {min-score: 80}` arrives as INPUT_MIN-SCORE: upper-cased, spaces to `_`,
hyphens kept. Empty strings mean "not given" (GitHub sets every declared input).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from gate.errors import ConfigError


def env_name(name: str) -> str:
    return "INPUT_" + name.replace(" ", "_").upper()


def raw(name: str, env=os.environ) -> str | None:
    value = env.get(env_name(name), "").strip()
    return value or None


def _bool(name: str, value: str | None, default: bool) -> bool:
    if value is None:
        return default
    if value.lower() in ("true", "yes", "1", "on"):
        return True
    if value.lower() in ("false", "no", "0", "off"):
        return False
    raise ConfigError(f"input {name}: expected true or false, got {value!r}")


def _number(name: str, value: str | None, kind):
    if value is None:
        return None
    try:
        return kind(value)
    except ValueError:
        raise ConfigError(f"input {name}: expected a {kind.__name__}, got {value!r}") from None


def _choice(name: str, value: str | None, choices: tuple[str, ...], default: str) -> str:
    if value is None:
        return default
    if value not in choices:
        raise ConfigError(f"input {name}: expected one of {', '.join(choices)}, got {value!r}")
    return value


FAIL_ON = ("critical", "high", "medium", "low", "score", "regression", "never")


@dataclass
class ActionInputs:
    config: str = "chaos-gate.yaml"
    min_score: float | None = None
    seed: int | None = None
    runs: int | None = None
    time_scale: float | None = None
    github_token: str | None = None
    comment: bool = True
    comment_mode: str = "update"
    comment_author: str | None = None
    junit_path: str | None = None
    junit_family: str | None = None
    report_path: str | None = None
    fail_on: str | None = None
    working_directory: str = "."
    shard: str | None = None
    merge: bool = False
    reports: str = "**/report.json"
    baseline_report: str | None = None
    allow_unboxed: bool = False


def read_inputs(env=os.environ) -> ActionInputs:
    return ActionInputs(
        config=raw("config", env) or "chaos-gate.yaml",
        min_score=_number("min-score", raw("min-score", env), float),
        seed=_number("seed", raw("seed", env), int),
        runs=_number("runs", raw("runs", env), int),
        time_scale=_number("time-scale", raw("time-scale", env), float),
        github_token=raw("github-token", env),
        comment=_bool("comment", raw("comment", env), True),
        comment_mode=_choice("comment-mode", raw("comment-mode", env), ("update", "new"), "update"),
        comment_author=raw("comment-author", env),
        junit_path=raw("junit-path", env),
        junit_family=raw("junit-family", env) and _choice("junit-family", raw("junit-family", env),
                                                          ("annotated", "xunit2"), ""),
        report_path=raw("report-path", env),
        fail_on=raw("fail-on", env) and _choice("fail-on", raw("fail-on", env), FAIL_ON, ""),
        working_directory=raw("working-directory", env) or ".",
        shard=raw("shard", env),
        merge=_bool("merge", raw("merge", env), False),
        reports=raw("reports", env) or "**/report.json",
        baseline_report=raw("baseline-report", env),
        allow_unboxed=_bool("allow-unboxed", raw("allow-unboxed", env), False),
    )
