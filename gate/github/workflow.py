"""Workflow commands and files: outputs, step summary, annotations, groups, masks.

Values are escaped as the runner expects (`%`, CR, LF, and `:`/`,` in properties);
multi-line outputs use the heredoc form with a delimiter that cannot occur in the value.
Annotation text goes through the report's escaper (`plain`): control characters
spelled out, the sticky marker broken, length bounded. Masks are never altered.
The Action writes through an inert stream (gate/report/inert.py), which keeps any other
line — the agent's above all — from being run as a command; these, the gate's own, go past it.
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path

from gate.report.escape import plain

# a ConfigError problem: "<file>:<line>: <key path>: <message>"
PROBLEM = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<message>.*)$", re.DOTALL)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _own(line: str, out=None) -> None:
    """A command of the gate's own: past the neutraliser of an inert stream (gate/report/inert.py), which
    makes every other line inert, and flushed, so that it is read in its place among the lines."""
    out = out or sys.stdout
    own = getattr(out, "own", None)
    (own or out.write)(line)
    out.flush()


def command(name: str, message: str = "", out=None, **props) -> None:
    args = ",".join(f"{k}={_escape_prop(str(v))}" for k, v in props.items() if v is not None)
    _own(f"::{name}{' ' + args if args else ''}::{_escape_data(message)}\n", out)


def mask(value: str, out=None) -> None:
    if value:
        command("add-mask", value, out)


def error(message: str, file: str | None = None, line: int | None = None, title: str | None = None, out=None):
    command("error", plain(message), out, file=file, line=line, title=title and plain(title, 200))


def warning(message: str, title: str | None = None, out=None):
    command("warning", plain(message), out, title=title and plain(title, 200))


def notice(message: str, title: str | None = None, out=None):
    command("notice", plain(message), out, title=title and plain(title, 200))


def relative(path, workspace) -> str:
    """`path` relative to the workspace (what a later step or an annotation can use), else absolute."""
    path, workspace = Path(path).resolve(), Path(workspace).resolve()
    return str(path.relative_to(workspace)) if path.is_relative_to(workspace) else str(path)


def config_errors(problems: list[str], workspace, out=None) -> int:
    """One ::error per `file:line: key: message` problem, on that line; returns how many were located."""
    located = [m for m in map(PROBLEM.match, problems) if m]
    for m in located:
        error(m["message"], file=relative(m["file"], workspace), line=int(m["line"]),
              title="invalid chaos-gate config", out=out)
    return len(located)


def group(title: str, out=None):
    command("group", title, out)


def endgroup(out=None):
    command("endgroup", "", out)


def set_outputs(values: dict[str, str], env=os.environ) -> None:
    path = env.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        for key, value in values.items():
            value = str(value)
            if "\n" in value:
                delim = f"ghadelim_{uuid.uuid4().hex}"
                fh.write(f"{key}<<{delim}\n{value}\n{delim}\n")
            else:
                fh.write(f"{key}={value}\n")


def append_summary(markdown: str, env=os.environ) -> bool:
    path = env.get("GITHUB_STEP_SUMMARY")
    if not path:
        return False
    with open(Path(path), "a", encoding="utf-8") as fh:
        fh.write(markdown + "\n")
    return True


# The runner's files a step writes to or reads: the agent, run as another user, must not write any of them.
GITHUB_FILES = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE",
                "GITHUB_EVENT_PATH")


def protect(env=os.environ) -> list[str]:
    """As root, take group and other write permission from GitHub's files and their directories (a
    directory's sticky bit aside); returns the paths changed. The runner's own user keeps its rights."""
    if os.geteuid() != 0:
        return []
    changed = []
    for name in GITHUB_FILES:
        path = env.get(name)
        for target in ((Path(path), Path(path).parent) if path else ()):
            try:
                mode = target.stat().st_mode
                if mode & 0o022 and not (target.is_dir() and mode & 0o1000):
                    target.chmod(mode & ~0o022)
                    changed.append(str(target))
            except OSError:
                continue
    return changed
