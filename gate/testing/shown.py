"""Agent text as the pytest plugin prints it: through the same neutraliser as the CLI's output.

What the plugin prints can carry what the agent sent: a failing run's trace line names the tools it
called (an MCP tool's name is whatever the agent put there), an explored finding quotes its answer or
its error, and a trace's repr appears in pytest's traceback. pytest writes all of it as it is, to a
terminal and, in a GitHub Actions step, to a log the runner reads. So it takes the CLI's two steps:
control and bidi characters spelled out, CR made a line break (gate/report/escape.py `plain`: no escape
sequence recolours, links or retitles the terminal, no CR overwrites a verdict), then every line the
runner would run as a workflow command made inert (gate/report/inert.py). Rich markup is no concern:
pytest does not read it.
"""

from __future__ import annotations


def shown(text: str) -> str:
    """`text` as the plugin may print it. The report package is imported here, on the first text
    printed: a session whose chaos tests print nothing never pays its import."""
    from gate.report.escape import plain
    from gate.report.inert import inert

    return inert(plain(text, limit=None))
