"""Workflow commands and files: outputs, step summary, annotations, groups, masks.

Values are escaped as the runner expects (`%`, CR, LF, and `:`/`,` in properties);
multi-line outputs use the heredoc form with a delimiter that cannot occur in the value.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str = "", out=None, **props) -> None:
    out = out or sys.stdout
    args = ",".join(f"{k}={_escape_prop(str(v))}" for k, v in props.items() if v is not None)
    out.write(f"::{name}{' ' + args if args else ''}::{_escape_data(message)}\n")
    out.flush()


def mask(value: str, out=None) -> None:
    if value:
        command("add-mask", value, out)


def error(message: str, file: str | None = None, line: int | None = None, title: str | None = None, out=None):
    command("error", message, out, file=file, line=line, title=title)


def notice(message: str, title: str | None = None, out=None):
    command("notice", message, out, title=title)


def group(title: str, out=None):
    (out or sys.stdout).write(f"::group::{title}\n")


def endgroup(out=None):
    (out or sys.stdout).write("::endgroup::\n")


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
