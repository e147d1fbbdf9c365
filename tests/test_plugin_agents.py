"""The pytest plugin on real agents: an openai-SDK agent with REST tools and a pydantic-ai agent over
MCP, both against the sim and faultbench's shop world (vendored as it is), under chaos_runs(20).

Each agent comes twice: with a planted double refund (it retries a refund whose answer was
lost after the world wrote it) — caught, with the one-line trace and the replay command
printed — and its sound twin, which passes every run. The inner suites run through
pytester with nothing configured: the plugin is loaded by the package's entry point.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
SHOP = Path(__file__).parent / "fixtures" / "faultbench_shop"

OPENAI_AGENT = '''
import json, os
import httpx, openai, pytest

TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}
         for name, props in [("get_order", {"id": {"type": "string"}}),
                             ("issue_refund", {"order_id": {"type": "string"}, "amount": {"type": "number"}})]]


def call_tool(name, args, retries):
    for attempt in range(retries + 1):
        try:
            r = httpx.post(os.environ["SHOP_URL"] + "/ops/" + name, json=args, timeout=5)
            return r.text
        except httpx.HTTPError as exc:
            if attempt == retries:
                return json.dumps({"error": f"{type(exc).__name__}: the call may or may not have happened"})


def refund_agent(prompt, retries):
    client = openai.OpenAI(max_retries=0)  # OPENAI_BASE_URL and a key: set by the chaos fixture
    messages = [{"role": "user", "content": prompt}]
    while True:
        msg = client.chat.completions.create(model="sim-1", messages=messages, tools=TOOLS).choices[0].message
        if not msg.tool_calls:
            return msg.content
        messages.append(msg.model_dump(exclude_none=True))
        for tc in msg.tool_calls:
            # the planted bug: a write is retried like a read (retries=1); the sound twin never retries one
            again = retries if tc.function.name == "get_order" else RETRY_WRITES
            messages.append({"role": "tool", "tool_call_id": tc.id,
                             "content": call_tool(tc.function.name, json.loads(tc.function.arguments), again)})


RULES = [{"when": r"refund order (\\d+)", "steps": [
    {"call": "get_order", "arguments": {"id": "{{1}}"}},
    {"call": "issue_refund", "arguments": {"order_id": "{{1}}", "amount": 10.0}},
    {"answer": "Order {{1}} is refunded."}]}]


@pytest.mark.chaos_world("worlds/shop.yaml")
@pytest.mark.chaos_sim(RULES)
@pytest.mark.chaos_faults({"kind": "timeout_after_write", "target": "shop", "path": "issue_refund",
                           "probability": 0.3, "seconds": 0})
@pytest.mark.chaos_runs(20)
@pytest.mark.chaos_min_pass_rate(0.95)
def test_refunds_once(chaos_world, chaos_trace):
    order = chaos_world.orders.pick(status="delivered")
    refund_agent(f"Please refund order {order.id}", retries=1)
    assert len(chaos_world.refunds.where(order_id=order.id)) <= 1, chaos_trace.summary()
'''

PYDANTIC_AGENT = '''
import os
import pytest
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

RULES = [{"when": r"refund order (\\d+)", "on_error": {"action": "retry", "retries": 1}, "steps": [
    {"call": "get_order", "arguments": {"id": "{{1}}"}},
    {"call": "issue_refund", "arguments": {"order_id": "{{1}}", "amount": 10.0}},
    {"answer": "Order {{1}} is refunded."}]}]


def make_agent():
    submitted = set()

    async def once_per_order(ctx, call_tool, name, args):  # the sound twin's guard
        if name == "issue_refund" and args.get("order_id") in submitted:
            return "That refund was already submitted; do not submit it again."
        submitted.add(args.get("order_id"))
        return await call_tool(name, args)

    shop = MCPToolset(os.environ["SHOP_MCP_URL"], process_tool_call=once_per_order if GUARD else None)
    model = OpenAIChatModel("sim-1", provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"], api_key="k"))
    return Agent(model, toolsets=[shop], retries=3)


@pytest.mark.chaos_world("worlds/shop.yaml", faults={"payments.issue_refund": {"errors": {"timeout": 0.3}}})
@pytest.mark.chaos_sim(RULES)
@pytest.mark.chaos_runs(20)
@pytest.mark.chaos_min_pass_rate(0.95)
async def test_refunds_once(chaos_world, chaos_trace):
    order = chaos_world.orders.pick(status="delivered")
    await make_agent().run(f"Please refund order {order.id}")
    assert len(chaos_world.refunds.where(order_id=order.id)) <= 1, chaos_trace.summary()
'''


@pytest.fixture
def shop(pytester):
    shutil.copytree(SHOP, pytester.path, dirs_exist_ok=True)
    return pytester


def _run(pytester, source: str, **consts):
    head = "".join(f"{k} = {v!r}\n" for k, v in consts.items())
    pytester.makepyfile(test_agent=head + source)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")


@pytest.mark.parametrize("agent, source, consts, fault", [
    ("openai", OPENAI_AGENT, {"RETRY_WRITES": 1}, "timeout_after_write"),
    ("pydantic-ai", PYDANTIC_AGENT, {"GUARD": False}, "timeout")], ids=["openai", "pydantic-ai"])
def test_planted_double_refund_is_caught(shop, agent, source, consts, fault):
    result = _run(shop, source, **consts)
    assert result.ret == 1
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["*chaos-gate: pass rate over runs*",
                                 "test_agent.py::test_refunds_once",
                                 "  FAIL *% < 95%: * runs failed (* of 20 passed)",
                                 f"  run* failed: get_order → issue_refund!{fault} → issue_refund",
                                 "    python -m pytest 'test_agent.py::test_refunds_once?run*?'"])
    # ? for [ and ]: fnmatch reads [...] as a set
    passed = int(out.split("runs failed (")[1].split(" ")[0])
    assert 5 <= passed <= 18  # p=0.3 over 20 seeded runs: some, never all, runs see the lost answer


@pytest.mark.parametrize("source, consts", [(OPENAI_AGENT, {"RETRY_WRITES": 0}), (PYDANTIC_AGENT, {"GUARD": True})],
                         ids=["openai", "pydantic-ai"])
def test_sound_twin_passes(shop, source, consts):
    result = _run(shop, source, **consts)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["test_agent.py::test_refunds_once", "  PASS 100% >= 95% (20 of 20 passed)"])


def test_same_seed_same_runs_fail(shop):
    first = _run(shop, OPENAI_AGENT, RETRY_WRITES=1).stdout.str()
    again = _run(shop, OPENAI_AGENT, RETRY_WRITES=1).stdout.str()
    failing = [line.strip() for line in first.splitlines() if line.startswith("  run")]
    assert failing and failing == [line.strip() for line in again.splitlines() if line.startswith("  run")]
