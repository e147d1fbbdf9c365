"""`chaos-gate sim serve` and `chaos-gate world serve`, as real processes, judged by the real clients:
the openai (Chat Completions and Responses), anthropic and google-genai SDKs against the sim on one
port; the `mcp` SDK over streamable HTTP and over stdio against faultbench's shop world, with its
faults, the clock moved from outside, and state read back."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

SHOP = Path(__file__).parent / "fixtures" / "faultbench_shop" / "worlds" / "shop.yaml"


@contextmanager
def serving(*args: str, cwd=None):
    proc = subprocess.Popen([sys.executable, "-m", "gate", *args, "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd)
    try:
        first = proc.stdout.readline()
        assert "serve" in first, (first, proc.stderr.read() if proc.poll() is not None else "")
        base = first.split(" at ")[-1].split(" ")[0] if " at " in first else first.split(": ")[1].split(" ")[0]
        env = dict(proc.stdout.readline().strip().split("=", 1) for _ in range(3 if "sim" in args else 2))
        yield base, env
    finally:
        proc.terminate()
        proc.wait(10)


def test_sim_serve_answers_every_dialect_from_the_configs_rules(tmp_path):
    (tmp_path / "sim.yaml").write_text("sim:\n  rules:\n    - {when: hello, answer: Hello from the standalone sim.}\n")
    import anthropic
    import openai
    from google import genai
    from google.genai import types

    with serving("sim", "serve", "-c", str(tmp_path / "sim.yaml")) as (base, env):
        hello = [{"role": "user", "content": "hello"}]
        client = openai.OpenAI(base_url=env["OPENAI_BASE_URL"], api_key="k")
        assert client.chat.completions.create(model="m", messages=hello).choices[0].message.content == \
            "Hello from the standalone sim."
        streamed = "".join(c.choices[0].delta.content or "" for c in
                           client.chat.completions.create(model="m", messages=hello, stream=True) if c.choices)
        assert streamed == "Hello from the standalone sim."
        assert client.responses.create(model="m", input="hello").output_text == "Hello from the standalone sim."
        an = anthropic.Anthropic(base_url=env["ANTHROPIC_BASE_URL"], api_key="k")
        assert an.messages.create(model="m", max_tokens=64, messages=hello).content[0].text == \
            "Hello from the standalone sim."
        gm = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=env["GOOGLE_GEMINI_BASE_URL"]))
        assert gm.models.generate_content(model="gemini-2.5-flash", contents="hello").text == \
            "Hello from the standalone sim."
        assert httpx.get(f"{base}/llm/openai/v1/models").json()["data"][0]["id"] == "sim-1"  # proxy-style paths too


def test_sim_serve_refuses_a_bad_config(tmp_path):
    (tmp_path / "sim.yaml").write_text("sim: {rules: [{whne: x}]}\n")
    done = subprocess.run([sys.executable, "-m", "gate", "sim", "serve", "-c", str(tmp_path / "sim.yaml")],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "not a sim config" in done.stderr and "whne" in done.stderr


async def _mcp_http(url: str, calls):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        return await calls(session)


def test_world_serve_http_mcp_rest_clock_and_state(tmp_path):
    state = tmp_path / "state.json"
    with serving("world", "serve", str(SHOP), "--http", "--state-file", str(state)) as (base, env):
        assert env == {"SHOP_URL": base, "SHOP_MCP_URL": f"{base}/mcp"}

        async def calls(session):
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert tools["create_return"].input_schema["required"] == ["order_id"]
            assert tools["issue_refund"].input_schema["properties"]["amount"] == {"type": "number"}
            assert tools["get_order"].annotations.read_only_hint is True
            order = json.loads((await session.call_tool("get_order", {"id": "5"})).content[0].text)
            assert order["status"] == "delivered"
            done = await session.call_tool("create_return", {"order_id": "5"})
            again = await session.call_tool("create_return", {"order_id": "5"})
            return done, again
        done, again = asyncio.run(_mcp_http(env["SHOP_MCP_URL"], calls))
        assert json.loads(done.content[0].text) == {"order_id": "5", "status": "returned"}
        assert again.is_error and "order 5 is returned, not delivered" in again.content[0].text
        assert json.loads(state.read_text())["orders"]["5"]["status"] == "returned"
        assert httpx.post(f"{base}/ops/issue_refund", json={"order_id": "5", "amount": "ten"}).status_code == 422
        order = httpx.get(f"{base}/orders/7")  # a resource route
        assert order.status_code == 200
        moved = httpx.post(f"{base}/_world/clock", json={"advance": 40 * 86400}).json()
        assert moved["now"].startswith("2026-02-10")
        late = httpx.post(f"{base}/ops/create_return", json={"order_id": "7"})
        if order.json()["status"] == "delivered":
            assert late.status_code == 422 and "return window" in late.json()["error"]
        assert httpx.post(f"{base}/_world/reset").json()["tables"]["orders"]["5"]["status"] == "delivered"


def test_world_serve_faults_over_mcp(tmp_path):
    world = tmp_path / "shop.yaml"
    text = SHOP.read_text().split("faults:")[0] + (
        "faults:\n  payments.issue_refund:\n    errors: {timeout: 1.0}\n"
        "  orders.list_orders:\n    errors: {empty_result: 1.0}\n  orders.get_order:\n    errors: {malformed_json: 1.0}\n")
    world.write_text(text)
    (tmp_path / "shop_rules.py").write_text((SHOP.parent.parent / "shop_rules.py").read_text())
    with serving("world", "serve", str(world), "--faults") as (base, env):
        async def calls(session):
            refund = await session.call_tool("issue_refund", {"order_id": "5", "amount": 3.0})
            listed = await session.call_tool("list_orders", {"customer_id": "x"})
            got = await session.call_tool("get_order", {"id": "5"})
            return refund, listed, got
        refund, listed, got = asyncio.run(_mcp_http(env["SHOP_MCP_URL"], calls))
        assert refund.is_error and refund.content[0].text == "timeout: issue_refund timed out after executing"
        assert len(httpx.get(f"{base}/_world/state").json()["tables"]["refunds"]) == 1, base  # it ran, then failed
        assert not listed.is_error and listed.content == []  # a valid empty result, not a parse error
        assert not got.is_error and got.content[0].text == "}{ not valid json"
    with serving("world", "serve", str(world)) as (base, env):  # without --faults: none apply
        assert httpx.post(f"{base}/ops/issue_refund", json={"order_id": "5", "amount": 3.0}).status_code == 201


def test_world_serve_stdio_with_the_mcp_sdk():
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "gate", "world", "serve", str(SHOP),
                                                                     "--stdio"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            result = await session.call_tool("create_return", {"order_id": "5"})
            return names, result
    names, result = asyncio.run(main())
    assert names == ["get_order", "list_orders", "create_return", "issue_refund"]
    assert json.loads(result.content[0].text)["status"] == "returned"


def test_world_serve_names_a_bad_world_file_on_its_line(tmp_path):
    bad = tmp_path / "shop.yaml"
    bad.write_text(SHOP.read_text().replace("handler: shop_rules.create_return", "handler: shop_rulez.create_return"))
    done = subprocess.run([sys.executable, "-m", "gate", "world", "serve", str(bad)], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 2
    assert f"{bad}:23: services.orders.operations.create_return.handler: cannot import module 'shop_rulez'" \
        in done.stderr


@pytest.mark.parametrize("path, provider", [("/v1/chat/completions", "openai"), ("/v1/responses", "openai"),
                                            ("/v1/messages", "anthropic"),
                                            ("/v1beta/models/gemini-2.5-flash:generateContent", "gemini")])
def test_sim_paths_pick_their_provider(path, provider):
    from gate.testing.standalone import provider_of

    assert provider_of(path) == provider
