"""Property-based shapes: per-dialect hypothesis strategies of valid-but-wrong-shaped LLM answers,
bent on the wire by the proxy, and a failing (shrunk) shape pinned as a regression that runs first.

The strategies are checked against real sim answers of every dialect; the plugin's use is
checked through pytester with the openai SDK: a careless agent fails and its minimal shape is
pinned in chaos-gate.shapes.yaml, the next run replays the pin first, a careful agent passes.
"""

from __future__ import annotations

import json

import httpx
import pytest
import yaml
from hypothesis import given, settings

from gate.testing.shapes import PATHS, Edit, Shape, wrong_shapes
from proxy_harness import sim_proxy

pytest_plugins = ["pytester"]
REQUESTS = {
    "openai_chat": ("openai", "/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hello"}]}),
    "openai_responses": ("openai", "/responses", {"model": "m", "input": "hello"}),
    "anthropic_messages": ("anthropic", "/v1/messages", {"model": "m", "max_tokens": 64,
                                                         "messages": [{"role": "user", "content": "hello"}]}),
    "gemini": ("gemini", "/v1beta/models/gemini-2.5-flash:generateContent",
               {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}),
}


@pytest.fixture(scope="module")
def answers():
    with sim_proxy() as proxy:
        proxy.begin()
        docs = {d: httpx.post(f"{proxy.base}/llm/{route}{path}", json=body).json()
                for d, (route, path, body) in REQUESTS.items()}
        proxy.end()
    return docs


@pytest.mark.parametrize("dialect", list(PATHS))
def test_every_dialect_has_shapes_that_bend_its_real_answer(answers, dialect):
    doc = answers[dialect]
    original = json.dumps(doc, sort_keys=True)
    bent = []

    @settings(max_examples=60, derandomize=True, database=None)
    @given(shape=wrong_shapes(dialect))
    def check(shape):
        out = shape.apply(doc)
        json.dumps(out)  # still valid JSON
        assert json.dumps(doc, sort_keys=True) == original  # the answer itself untouched
        bent.append(out != doc)
        assert Shape.from_dict(json.loads(json.dumps(shape.to_dict()))) == shape  # pins round-trip
    check()
    assert sum(bent) >= 30  # most shapes really change a real answer


def test_edits_do_what_they_say():
    doc = {"choices": [{"message": {"content": "hi", "tool_calls": [{"id": "a"}, {"id": "b"}]},
                        "finish_reason": "stop"}]}
    path = ("choices", 0, "message", "content")
    assert Shape("openai_chat", (Edit(path, "null"),)).apply(doc)["choices"][0]["message"]["content"] is None
    assert Shape("openai_chat", (Edit(("choices",), "empty"),)).apply(doc)["choices"] == []
    assert "content" not in Shape("openai_chat", (Edit(path, "drop"),)).apply(doc)["choices"][0]["message"]
    assert Shape("openai_chat", (Edit(path, "rename"),)).apply(doc)["choices"][0]["message"]["content_v2"] == "hi"
    ids = Shape("openai_chat", (Edit(("choices", 0, "message", "tool_calls", "*", "id"), "retype", 7),)).apply(doc)
    assert [c["id"] for c in ids["choices"][0]["message"]["tool_calls"]] == [7, 7]
    odd = Shape("openai_chat", (Edit(("choices", 0, "finish_reason"), "unknown"),)).apply(doc)
    assert odd["choices"][0]["finish_reason"] == "chaos_unknown_value"
    assert repr(Shape("openai_chat", (Edit(path, "null"),), True)) == \
        "Shape(openai_chat, first answer only: null choices.0.message.content)"


AGENT = '''
import openai
from gate.testing.shapes import given_shapes


def ask(question):
    client = openai.OpenAI(max_retries=0)
    CAREFUL_OR_NOT


@given_shapes("openai_chat", max_examples=40)
def test_agent_survives_wrong_shapes(shape, chaos_run):
    with chaos_run.fresh(shape) as run:
        reply = ask("hello")
        assert [e["tool"] for e in run.trace.llm_calls()] == ["llm"]  # its answer bent (when the edit found its path)
    assert reply is None or isinstance(reply, str)
'''
CARELESS = """resp = client.chat.completions.create(model="m", messages=[{"role": "user", "content": question}])
    return resp.choices[0].message.content.strip()"""
CAREFUL = """try:
        resp = client.chat.completions.create(model="m", messages=[{"role": "user", "content": question}])
        content = resp.choices[0].message.content
    except (openai.APIError, AttributeError, IndexError, KeyError, TypeError, ValueError):
        return None
    return content.strip() if isinstance(content, str) else None"""


def test_a_failing_shape_is_pinned_and_runs_first_next_time(pytester):
    pytester.makepyfile(test_shapes_agent=AGENT.replace("CAREFUL_OR_NOT", CARELESS))
    first = fast(pytester)
    first.assert_outcomes(failed=1)
    assert "pinned: Shape(openai_chat" in first.stdout.str()
    corpus = yaml.safe_load((pytester.path / "chaos-gate.shapes.yaml").read_text())
    [pin] = corpus["pins"]
    assert pin["test"] == "test_shapes_agent.py::test_agent_survives_wrong_shapes" and pin["dialect"] == "openai_chat"
    assert len(pin["edits"]) == 1  # hypothesis shrank it to one edit
    again = fast(pytester)
    again.assert_outcomes(failed=1)
    out = again.stdout.str()
    assert "explicit example" in out.lower() and "already pinned" in out  # the pin ran first, as an @example
    assert len(yaml.safe_load((pytester.path / "chaos-gate.shapes.yaml").read_text())["pins"]) == 1
    pytester.makepyfile(test_shapes_agent=AGENT.replace("CAREFUL_OR_NOT", CAREFUL))
    fast(pytester).assert_outcomes(passed=1)  # pins included


def fast(pytester, *args):
    """An inner pytest run with only this plugin loaded (what autoload gives, minus the other installed plugins'
    seconds of start-up); test_plugin_agents.py and test_docs_pytest.py run with autoload, as a user would."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return pytester.runpytest_subprocess("-p", "gate.pytest_plugin", "-p", "no:cacheprovider", "-q", *args)
