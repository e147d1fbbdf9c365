"""Agent text is inert in what `chaos-gate reproduce` and the pytest plugin print (issue 52).

The agent's text reaches both: its answer and a breach message quoting it, the paths and tool names
of its calls, a cell's reason. Planted in all of them here: rich markup (`[bold red]`, `[critical]`,
`[link=...]`, which rich would read as styles and a hyperlink), ANSI escapes (a colour, an OSC 8
hyperlink), BEL, BS, CR and a GitHub workflow command. What is printed must show the markup as text,
spell the escapes and control characters out (gate/report/escape.py, as the CLI's table does) and
make the workflow command inert (gate/report/inert.py): no escape sequence of the agent's reaches the
terminal and no line of it runs in a GitHub Actions step.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from conftest import AGENTS, write_config
from gate import reproduce
from gate.cli import main
from test_pytest_plugin import run, suite  # noqa: F401  (suite: the faultbench shop, a pytester fixture)

pytest_plugins = ["pytester"]
MARKUP = ("[bold red]x[/]", "[critical]", "[link=http://evil]click[/link]")
HOSTILE = " ".join(MARKUP) + (" \x1b[31mred\x1b[0m \x1b]8;;http://evil\x07link\x1b]8;;\x07"  # a colour, an OSC 8 link
                               " bs\x08 cr\rOVER\n::error::forged")  # BS, CR, a workflow command on a line of its own
SPELLED = ("\\u001b[31mred", "\\u001b]8;;http://evil\\u0007link", "bs\\u0008")
COMMAND_LINE = re.compile(r"^\s*::|##\[", re.M)  # what a GitHub runner would run (inert.py)


def assert_inert(out: str) -> None:
    """No control character but line breaks, no escape sequence, no live workflow command."""
    assert re.findall(r"[\x00-\x08\x0b-\x1f\x7f]", out) == [], out
    assert COMMAND_LINE.search(out) is None, out


# --- chaos-gate reproduce ---------------------------------------------------------------------------------


def echo_config(tmp: Path) -> Path:
    """The planted echo agent on the hostile input: its answer carries it, a breach message quotes markup."""
    doc = {"version": 1, "seed": 3,
           "agent": {"start": {"command": [sys.executable, str(AGENTS / "planted.py")], "env": {"BEHAVIOUR": "echo"},
                               "ready": {"url": "{{url}}/health", "timeout": 10}},
                     "invoke": {"http": {"url": "{{url}}/chat", "body": {"input": "{{input}}"}, "output": "$.reply"}},
                     "timeout": 5},
           "inputs": [{"id": "hostile", "text": HOSTILE}],
           "mutation": {"enabled": False},
           "contract": {"invariants": [{"id": "no-markup", "type": "excludes", "values": [MARKUP[0]],
                                        "severity": "critical"}]}}
    return write_config(tmp, json.dumps(doc))  # JSON is YAML


def test_reproduce_prints_the_agents_answer_and_breach_as_text(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "1000")  # nothing wrapped: each line is asserted whole
    code = main(["reproduce", "contract/hostile/baseline", "-c", str(echo_config(tmp_path))])
    out = capsys.readouterr().out
    assert code == 1
    assert f"✗ [critical] no-markup: output contains forbidden {MARKUP[0]!r}" in out  # the severity not eaten
    assert f"  output: {'echo: ' + HOSTILE!r}" in out
    assert_inert(out)


def hostile_report():
    """What run_gate returns, with the agent's text in every field the timeline prints."""
    step = SimpleNamespace(seq=1, target="orders", method="POST", path="/refunds/" + HOSTILE, tool=HOSTILE, model=None,
                           status=500, fault="", note=HOSTILE)
    cell = SimpleNamespace(id="contract/refund/baseline", status="fail", reason=HOSTILE,
                           runs=[SimpleNamespace(run=0, trace=[step], output=HOSTILE)],
                           breaches=[SimpleNamespace(severity="critical", id="refund-once", message=HOSTILE)])
    return SimpleNamespace(verdict=SimpleNamespace(cells=[cell], exit_code=1), timings=SimpleNamespace(cells=[]))


def test_reproduce_on_a_terminal_shows_markup_and_escapes_as_text(monkeypatch):
    """On a colour terminal rich writes its own styles; the agent's markup must not become one (nor a link)."""
    monkeypatch.setattr(reproduce, "run_gate", lambda *a, **k: hostile_report())
    loaded = SimpleNamespace(base_dir=Path("."), config=SimpleNamespace(output=SimpleNamespace(dir="out")))
    console = Console(file=io.StringIO(), force_terminal=True, color_system="truecolor", width=4000)
    assert reproduce.reproduce(loaded, "contract/refund/baseline", "chaos-gate.yaml", console) == 1
    out = console.file.getvalue()
    assert all(out.count(m) >= 5 for m in MARKUP)  # title, call, tool, note, breach
    assert all(out.count(s) >= 5 for s in SPELLED)
    assert "✗" in out and "\x1b]" not in out and "\x07" not in out  # no OSC: no hyperlink, no retitle
    assert re.findall(r"\x1b(?!\[[0-9;]*m)", out) == []  # rich's own colours only
    assert "\x1b[31mred" not in out and "\r" not in out and "\x08" not in out


# --- the pytest plugin ------------------------------------------------------------------------------------

HOSTILE_TOOL = '''
import httpx, pytest

HOSTILE = NAME


@pytest.mark.chaos_world("worlds/shop.yaml")
@pytest.mark.chaos_runs(2)
@pytest.mark.chaos_min_pass_rate(1.0)
def test_agent_calls_a_tool_by_a_hostile_name(chaos_run, chaos_world, chaos_trace):
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": HOSTILE, "arguments": {}}}
    httpx.post(chaos_run.env["SHOP_MCP_URL"], json=call, headers={"accept": "application/json, text/event-stream"})
    assert chaos_trace.count() == 0  # fails: pytest shows the trace's repr, the plugin its line
'''


def test_the_plugin_prints_a_hostile_tool_name_inert(suite):  # noqa: F811
    """An MCP tool's name is whatever the agent sends: it is in the run's trace line, which the plugin prints in
    each failing run's section, the pass-rate verdict and the summary (and pytest in the trace's repr)."""
    suite.makepyfile(test_hostile=HOSTILE_TOOL.replace("NAME", repr(HOSTILE)))
    result = run(suite, "--color=no", "-rA")  # -rA: the sections of the runs the rate turned into passes too
    out = result.stdout.str()
    assert result.ret == 1 and "chaos-gate: pass rate over runs" in out and "0% < 100%: 2 runs failed" in out
    assert out.count(MARKUP[2]) >= 4  # the passed run's section, the failed one's, its verdict, the summary
    assert all(m in out for m in (*MARKUP, *SPELLED, "\\::error::forged"))
    assert_inert(out)
