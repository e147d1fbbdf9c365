"""Negative indexes in the JSON path of `output:` (issue 52): `$[-1]` counts from the end, as in Python,
so Google ADK's `/run` answer (a JSON list of events) is read at its last event; config validation takes
them too, and every malformed path is refused as before."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import one_run, write_config
from gate.errors import ConfigError
from gate.plan import load_config
from gate.templates import PathError, parse_path, pick

# what ADK's POST /run answers: every event of the turn, the reply last
EVENTS = [{"content": {"parts": [{"text": "first"}]}}, {"content": {"parts": [{"text": "last"}]}}]
LAST = "$[-1].content.parts[0].text"


def test_a_negative_index_counts_from_the_end():
    assert parse_path(LAST) == (-1, "content", "parts", 0, "text")
    assert pick(EVENTS, LAST) == "last"
    assert pick(EVENTS, "$[-2].content.parts[-1].text") == "first"
    assert pick(EVENTS, "$[1].content.parts[0].text") == "last"  # positive indexes as before


@pytest.mark.parametrize("path", ["$[-3].content", "$[2].content", "$[-1].content.parts[-2]"])
def test_an_index_out_of_range_is_the_same_path_error(path):
    with pytest.raises(PathError, match=r"no -?\d+ in the response"):
        pick(EVENTS, path)


def test_a_negative_index_into_an_object_is_a_missing_step():
    with pytest.raises(PathError, match="no -1 in the response"):
        pick({"reply": "x"}, "$[-1]")


@pytest.mark.parametrize("path", ["$[-]", "$[--1]", "$[1-]", "$[- 1]", "$[-1.5]", "$[+1]", "$-1", "[-1]"])
def test_malformed_paths_are_still_refused(path):
    with pytest.raises(PathError):
        parse_path(path)


def agent_config(tmp_path, output: str):
    """An agent (`http.server`) whose answer is ADK's list of events, read at `output`."""
    (tmp_path / "www").mkdir(exist_ok=True)
    (tmp_path / "www" / "run.json").write_text(json.dumps(EVENTS))
    serve = [sys.executable, "-m", "http.server", "{{port}}", "--bind", "127.0.0.1"]
    return write_config(tmp_path, f"""
        version: 1
        agent:
          start: {{command: {json.dumps(serve)}, cwd: www, ready: {{url: "{{{{url}}}}/run.json", timeout: 20}}}}
          invoke:
            http: {{method: GET, url: "{{{{url}}}}/run.json", output: {json.dumps(output)}}}
          timeout: 10
        inputs:
          - {{id: hello, text: hello}}
        mutation: {{enabled: false}}
        """)


def test_the_config_takes_it_and_a_run_reads_the_last_event(tmp_path):
    path = agent_config(tmp_path, LAST)
    assert load_config(path).config.agent.invoke.http.output == LAST
    code, _, run, failed, logs = one_run(path, tmp_path / "out")
    assert (code, run["output"], failed) == (0, "last", set()), logs


def test_the_config_still_refuses_a_malformed_index(tmp_path):
    with pytest.raises(ConfigError, match="cannot parse JSON path"):
        load_config(agent_config(tmp_path, "$[--1].content"))


def test_a_run_out_of_range_fails_naming_the_step(tmp_path):
    code, _, run, _, _ = one_run(agent_config(tmp_path, "$[-3].content"), tmp_path / "out")
    assert code != 0 and run["reason"] == "bad_output_shape" and "no -3 in the response" in run["detail"]
