"""Every LLM fault kind, JSON and stream, judged by the npm `openai` SDK in Node.

The same contract as tests/test_dialect_faults.py, for the one non-Python client the
brief names: the un-faulted sim answer parses, a fault the trace calls `fired`
changes what the SDK hands the caller (or makes it raise), and one that cannot apply
says so and leaves the answer alone.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from proxy_harness import sim_proxy
from test_dialect_faults import HELLO, LLM_KINDS, NOT_APPLICABLE, PARAMS, REFUND, TEXT_KINDS
from test_frameworks import node_ready

JUDGE = __file__.rsplit("/", 1)[0] + "/node_sdk/judge.mjs"


@pytest.fixture(scope="module")
def proxy():
    node_ready()
    with sim_proxy() as harness:
        yield harness


def _judge(proxy, mode: str, prompt: str, fault: dict | None = None):
    proxy.begin(*([fault] if fault else []))
    try:
        out = subprocess.run(["node", JUDGE, proxy.env["OPENAI_BASE_URL"], mode, prompt], capture_output=True,
                             text=True, timeout=60)
    finally:
        proxy.trace = proxy.end()
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("mode", ["json", "stream"])
@pytest.mark.parametrize("kind", LLM_KINDS)
def test_node_openai_sdk_sees_every_fault_or_a_reason(proxy, kind, mode):
    prompt = HELLO if kind in TEXT_KINDS else REFUND
    clean = _judge(proxy, mode, prompt)
    assert "ok" in clean, clean
    faulted = _judge(proxy, mode, prompt, {"kind": kind, "target": "llm", **PARAMS.get(kind, {})})
    [step] = [e for e in proxy.trace if e.fault][:1]
    if (kind, mode) in NOT_APPLICABLE or (kind, "chat", mode) in NOT_APPLICABLE:
        assert step.fault_status == "not_applicable" and step.note
        assert faulted == clean
        return
    assert step.fault_status == "fired", (kind, mode, step.note)
    if kind != "latency":
        assert faulted != clean, f"{kind}/{mode}: the Node SDK saw the same answer {clean}"
