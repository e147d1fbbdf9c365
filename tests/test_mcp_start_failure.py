"""A tool server the agent starts that dies as it starts is named, with its stderr (issue 40, item 3).

The app (tests/agents/mcp_start/app.py) starts its MCP server over stdio as plain `python` and,
as the data-analysis app of the issue did, swallows the failure and answers with no tools. The
gate's MCP seam tees the server's stderr (every byte still reaches the agent's log) and, when
the server ends before it answered `initialize`, reports it: the reach names the command, the
error the client saw and the end of the server's stderr — the ImportError that explains
"offered: none". A server that starts, and an app failure after it answered, are not reported.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import AGENTS, load_report, write_config

pytest.importorskip("mcp")
APP = AGENTS / "mcp_start" / "app.py"


def run(tmp_path, server: str):
    from gate.cli import main

    doc = {"version": 1, "seed": 1,
           "agent": {"invoke": {"command": {"command": [sys.executable, str(APP)],
                                            "env": {"SERVER": server, "OPENAI_API_KEY": "sk-sim"}}},
                     "timeout": 30},
           "llm": [{"name": "openai", "provider": "openai", "upstream": "sim"}],
           "sim": {"default": "I have no tools for that."},
           "inputs": [{"id": "ask", "text": "What is the status of order 5?"}],
           "mutation": {"enabled": False}, "chaos": {"explore": "off"},
           "contract": {"baseline": True, "invariants": [{"id": "completes", "type": "completes",
                                                           "severity": "critical"}]},
           "gate": {"min_score": 0, "allow_vacuous": True}}
    out = tmp_path / server
    main(["run", "-c", str(write_config(tmp_path, json.dumps(doc), f"{server}.yaml")), "-o", str(out), "--quiet",
          "--full-report"])
    return load_report(out), (out / "summary.md").read_text()


def test_a_server_that_dies_at_start_is_named_with_its_stderr(tmp_path):
    report, summary = run(tmp_path, "broken")
    (died,) = report["verdict"]["reach"]["died"]
    assert "server_broken.py" in died and "sqlalchemy_is_not_installed_here" in died, died
    assert any("died before it answered" in note for note in report["verdict"]["reach"]["notes"])
    assert "sqlalchemy_is_not_installed_here" in summary.replace("\\", "")  # (Markdown escapes _)
    logs = " ".join(p.read_text() for p in (tmp_path / "broken" / "logs").glob("*"))
    assert "ModuleNotFoundError" in logs  # the tee passed the server's stderr on to the agent's own log


def test_a_server_that_starts_is_not_reported(tmp_path):
    report, _ = run(tmp_path, "ok")
    assert report["verdict"]["reach"]["died"] == []
    assert "order_status" in report["verdict"]["reach"]["offered"]
