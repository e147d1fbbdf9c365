"""A config for the SDK example agent written into a test's directory, so tests of
shrinking, usage and baseline comparison choose their own scenarios and gate settings."""

from __future__ import annotations

import json
import os
import sys

from conftest import ROOT, write_config

AGENT = ROOT / "examples" / "sdk_agent" / "agent.py"

INVARIANTS = """
    - {id: completes, type: completes, severity: critical}
    - {id: finished-sentence, type: regex, pattern: '[.!?]$', severity: high}
    - {id: llm-budget, type: llm_calls_max, max: 8, severity: high}
    - {id: refund-once, type: side_effect_once, tool: orders, severity: critical}
"""

# five faults the sound agent (SDK retries, idempotency key) shrugs off, and one that breaks
# an agent retrying a timed-out refund without an idempotency key
SIX_FAULTS = """name: six_faults
description: five survivable faults and one double write
faults:
  - {kind: rate_limit, target: llm, on_calls: [1], retry_after: 0.05}
  - {kind: latency, target: llm, on_calls: [2], ms: 20}
  - {kind: server_error, target: llm, status: 500, on_calls: [3]}
  - {kind: latency, target: llm, on_calls: [4], ms: 20}
  - {kind: timeout_after_write, target: orders, method: POST, path: ^/refunds, on_calls: [1], seconds: 5}
  - {kind: latency, target: orders, on_calls: [2], ms: 20}
"""


def sdk_config(tmp, scenarios: str = "", gate: str = "{min_score: 80}", extra: str = "",
               invariants: str = INVARIANTS, name: str = "chaos-gate.yaml"):
    (tmp / "profiles").mkdir(exist_ok=True)
    (tmp / "profiles" / "six_faults.yaml").write_text(SIX_FAULTS)
    body = f"""
version: 1
seed: 11
profiles_dir: profiles
agent:
  start:
    command: [{json.dumps(sys.executable)}, {json.dumps(str(AGENT))}]
    env: {{PROVIDER: "${{PROVIDER:-openai}}", AGENT_BUGS: "${{AGENT_BUGS:-}}", OPENAI_API_KEY: sk-sim, ANTHROPIC_API_KEY: sk-sim}}
    ready: {{url: "{{{{url}}}}/health", timeout: 20}}
  invoke:
    http: {{url: "{{{{url}}}}/chat", body: {{message: "{{{{input}}}}"}}, output: $.reply}}
  reset: {{method: POST, url: "${{ORDERS_URL}}/reset"}}
  timeout: 12
llm:
  - {{name: openai, provider: openai, upstream: sim}}
  - {{name: anthropic, provider: anthropic, upstream: sim}}
tools:
  - {{name: orders, env: ORDERS_URL, upstream: "${{ORDERS_URL}}"}}
sim:
  rules:
    - when: 'refund.*?(\\d{{3,}})'
      tool: refund_order
      arguments: {{order_id: "{{{{1}}}}", reason: damaged}}
      answer: "Your refund for order {{{{1}}}} has been issued."
  default: "I can help with refunds. Which order is it?"
inputs:
  - {{id: refund, text: "Please refund order 1234, it arrived damaged."}}
mutation: {{enabled: false}}
contract:
  invariants:{invariants}
  scenarios:{scenarios or " []"}
gate: {gate}
{extra}
"""
    return write_config(tmp, body, name)


def set_agent(monkeypatch, bugs: str = "", provider: str = "openai") -> None:
    monkeypatch.setenv("AGENT_BUGS", bugs)
    monkeypatch.setenv("PROVIDER", provider)
    os.environ["AGENT_BUGS"], os.environ["PROVIDER"] = bugs, provider
