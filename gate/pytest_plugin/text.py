"""What the plugin prints: verdict lines, failing runs and replay commands, fitted to the terminal.

Prose wraps at word boundaries within the width (80 columns at COLUMNS=80); a command is
never wrapped or prefixed, so it is always whole on its own line and copies as it is —
indented when it fits, at the margin when it does not. The verdict's first line is its
reason (`75% < 95%: 5 runs failed`), because pytest's short summary keeps only the first
line of a failure and cuts it at the width.
"""

from __future__ import annotations

import textwrap

WIDTH = 80


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def reason(group) -> str:
    """The verdict in a few words: `75% < 95%: 5 runs failed`, `100% >= 95%`, `2 runs failed`, `no run failed`."""
    failed = plural(group.failed, "run") + " failed"
    if group.min_rate is None:
        return failed if group.failed else "no run failed"
    sign = ">=" if group.ok else "<"
    head = f"{group.rate:.0%} {sign} {group.min_rate:.0%}"
    return f"{head}: {failed}" if group.failed else head


def verdict(group) -> str:
    passed = f"{group.passed} of {group.done} passed"
    return f"{'PASS' if group.ok else 'FAIL'} {reason(group)} ({passed})"


def scope(group) -> str | None:
    """Says so when the rate is over fewer runs than the test asks for."""
    if group.complete():
        return None
    why = "-k, --lf, a node id" if not group.whole else "-x or an interrupted session"
    return f"over {group.done} of the {group.n} runs chaos_runs asks for ({why}): not the test's verdict"


def wrap(text: str, indent: str, width: int = WIDTH) -> list[str]:
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + "    ",
                         break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]


def command(line: str, indent: str, width: int = WIDTH) -> str:
    return indent + line if len(indent) + len(line) <= width else line


def failure_lines(failure, indent: str = "  ", width: int = WIDTH, attempts: int = 1) -> list[str]:
    times = f" {attempts} times" if attempts > 1 else ""  # a forced rerun: every attempt counted
    out = wrap(f"run{failure.run} failed{times}: {failure.line}", indent, width)
    return out + [command(c, indent + "  ", width) for c in failure.commands]


def note(text: str, width: int = WIDTH) -> list[str]:
    return textwrap.wrap(text, width=width, initial_indent="chaos-gate: ", subsequent_indent="    ",
                         break_long_words=False, break_on_hyphens=False)


def group_lines(key: str, group, width: int = WIDTH, most: int = 10) -> list[str]:
    """The summary of one test: its id, the verdict, what the rate is over, each failing run."""
    out = [key, *wrap(verdict(group), "  ", width)]
    note = scope(group)
    if note:
        out += wrap(note, "  ", width)
    attempts: dict[int, list] = {}
    for failure in group.failures:
        attempts.setdefault(failure.run, []).append(failure)
    runs = sorted(attempts)
    for run in runs[:most]:
        out += failure_lines(attempts[run][-1], "  ", width, len(attempts[run]))
    if len(runs) > most:
        out.append(f"  ... and {len(runs) - most} more failing runs")
    return out


def verdict_repr(key: str, group) -> str:
    """The failure text of the report that completes a failing set: the reason first."""
    return "\n".join([reason(group), *group_lines(key, group)])
