"""`validate` hints at guessed `tool:` names (issue 34, item 2).

Where the agent's in-process tools are named only at run time, a `tool:` that names no
upstream is let through (it may be a function tool), but `validate` warns with the nearest
known name and still exits 0: on a trace invariant, on a fault and on a sim rule.
"""

from __future__ import annotations

from conftest import write_config
from gate.cli import main
from gate.plan import load_config

# A started agent (so in-process tools are reachable) with an HTTP tool upstream `orders`.
BASE = """
version: 1
agent:
  start: {command: [python3, agent.py], ready: {url: "{{url}}/health"}}
  invoke:
    http: {url: "{{url}}/chat"}
llm:
  - {name: openai, provider: openai, upstream: sim}
tools:
  - {name: orders, env: ORDERS_URL, upstream: "http://127.0.0.1:9"}
inputs:
  - {id: a, text: refund order 1234}
"""
HINT = "names no upstream or declared tool; if it is an in-process tool it is checked at run time"


def _validate(tmp_path, capsys, extra: str) -> tuple[int, str]:
    path = write_config(tmp_path, BASE + extra)
    code = main(["validate", "-c", str(path)])
    return code, capsys.readouterr().err


def test_misspelt_invariant_tool_warns_with_the_upstream_and_exits_0(tmp_path, capsys):
    code, err = _validate(tmp_path, capsys, "contract:\n  invariants:\n"
                                            "    - {id: once, type: side_effect_once, tool: ordrs}\n")
    assert code == 0
    assert (f"contract.invariants[0].tool: `ordrs` {HINT} (did you mean `orders`?)") in err
    assert err.startswith("warning: ")


def test_misspelt_fault_and_sim_rule_tools_warn(tmp_path, capsys):
    extra = ("sim:\n  rules:\n    - {when: refund, tool: ordres, answer: done}\n"
             "chaos:\n  faults: [{kind: timeout, target: orders, tool: ordrs, seconds: 1}]\n")
    code, err = _validate(tmp_path, capsys, extra)
    assert code == 0
    assert f"sim.rules[0].tool: `ordres` {HINT} (did you mean `orders`?)" in err
    assert f"chaos.faults[0].tool: `ordrs` {HINT} (did you mean `orders`?)" in err


def test_known_and_declared_names_are_silent(tmp_path):
    """An upstream, a glob matching one, and a function tool a sim rule names: no warning."""
    extra = ("sim:\n  rules:\n    - {when: refund, tool: refund_order, answer: done}\n"
             "contract:\n  invariants:\n"
             "    - {id: a, type: side_effect_once, tool: orders}\n"
             "    - {id: b, type: side_effect_once, tool: 'ord*'}\n"
             "    - {id: c, type: side_effect_once, tool: refund_order}\n")
    assert load_config(write_config(tmp_path, BASE + extra)).warnings == []


def test_a_new_function_tool_name_warns_without_a_guess(tmp_path, capsys):
    code, err = _validate(tmp_path, capsys, "contract:\n  invariants:\n"
                                            "    - {id: once, type: side_effect_once, tool: lookup_weather}\n")
    assert code == 0
    assert f"`lookup_weather` {HINT}\n" in err
