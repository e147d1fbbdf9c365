"""Reads and writes of tools whose names say neither, and a keyless walk that reads what it is asked
to read (issue 52, item 6).

Google's ADK customer-service sample names its cart read `access_cart_information` (the name rule of
gate/contracts/writes.py took it for a write) and, asked "what's currently in my cart?", the keyless walk
called `modify_cart` and filled `customer_id` with a filler word of the input. Its description says it
reads; the question asks to be told; the agent's instructions carry the customer's id.
"""

import json

import pytest

from gate.contracts.writes import call_writes, described_read
from gate.dialects.model import Conversation, Message, ToolSpec
from gate.dialects.offered import tool_specs
from gate.sim import walk

ID = {"type": "object", "properties": {"customer_id": {"type": "string"}}, "required": ["customer_id"]}
CART = ToolSpec("access_cart_information", "Args: customer_id. Returns: a dictionary representing the cart contents.",
                ID)
MODIFY = ToolSpec("modify_cart", "Modifies the user's cart by adding and/or removing items.",
                  {"type": "object", "properties": {"customer_id": {"type": "string"},
                                                    "items_to_add": {"type": "array", "items": {"type": "string"}}},
                   "required": ["customer_id", "items_to_add"]})
PROFILE = 'You help customers of Cymbal. The customer profile: {"customer_id": "123", "name": "Alex"}.'


@pytest.mark.parametrize("name, description, reads", [
    ("access_cart_information", CART.description, True),
    ("get_product_recommendations", "", True),  # the name rule, as before
    ("modify_cart", MODIFY.description, False),
    ("approve_discount", "Approve a discount for the customer; returns its status.", False),  # a write word wins
    ("sync_erp", "Synchronise the ledger.", False),  # says neither: a write, as before (a double write missed
                                                     # is worse than a read counted twice)
])
def test_a_description_tells_a_read_when_the_name_does_not(name, description, reads):
    assert (not call_writes(name) or described_read(name, description)) is reads


def test_every_dialect_s_request_names_its_tools_with_their_descriptions():
    chat = {"tools": [{"type": "function", "function": {"name": "a", "description": "Reads a."}}]}
    gemini = {"tools": [{"functionDeclarations": [{"name": "b", "description": "Returns b."}]}]}
    anthropic = {"tools": [{"name": "c", "description": "Gets c.", "input_schema": {}}]}
    for doc, want in ((chat, {"a": "Reads a."}), (gemini, {"b": "Returns b."}), (anthropic, {"c": "Gets c."})):
        assert tool_specs(json.dumps(doc).encode(), doc) == want
    assert tool_specs(b'{"messages": []}', {"messages": []}) == {}


def ask(text: str) -> walk.Step:
    conv = Conversation(messages=[Message(role="user", text=text)], system=PROFILE, tools=[MODIFY, CART])
    return walk.step(conv, [MODIFY, CART], seed="1")


@pytest.mark.parametrize("text", ["hm, what's currently in my cart?", "Show me my cart", "is my cart empty?"])
def test_a_question_that_asks_to_read_is_answered_with_reads_and_the_instructions_id(text):
    name, args = ask(text).call
    assert name == "access_cart_information" and args == {"customer_id": "123"}  # never modify_cart, never "hm"


def test_a_request_to_change_may_still_write_after_it_looks():
    plan, _ = walk.chosen([MODIFY, CART], "Please add the soil to my cart")
    assert [t.name for t in plan] == ["access_cart_information", "modify_cart"]  # reads first, as before
    plan, _ = walk.chosen([MODIFY, CART], "what's currently in my cart?")
    assert [t.name for t in plan] == ["access_cart_information"]
    plan, _ = walk.chosen([MODIFY], "Hello! Can you help me with my cart?")  # a request for help, not a question
    assert [t.name for t in plan] == ["modify_cart"]


def test_an_identifier_is_never_filled_with_a_filler_word():
    args = walk.arguments(CART, "hm, what's in my cart?", seed="1")  # no instructions to take it from
    assert args["customer_id"] not in ("hm", "what", "cart")


ADK_TOOLS = '''
from google.adk.agents import Agent

def access_cart_information(customer_id: str) -> dict:
    """Args: customer_id. Returns: a dictionary representing the cart contents."""
    return {}

def modify_cart(customer_id: str, items_to_add: list) -> dict:
    """Modifies the user's cart by adding and/or removing items."""
    return {}

def helper():  # no tool: in no tools list, under no decorator
    return 1

root_agent = Agent(name="cs", model="gemini-2.0-flash", tools=[access_cart_information, modify_cart])
'''
SDK_TOOLS = '''
from agents import function_tool

@function_tool
def lookup_order(order_id: str) -> str:
    return "ok"

@function_tool(name_override="refund")
async def refund_order(order_id: str) -> str:
    """Refund an order."""
    return "ok"
'''


def test_init_lists_the_tools_it_finds_with_the_guess_beside_each(tmp_path):
    from argparse import Namespace

    from gate.plan import load_config
    from gate.scaffold import run_init

    (tmp_path / "customer_service").mkdir()
    (tmp_path / "customer_service" / "agent.py").write_text(ADK_TOOLS)
    (tmp_path / "desk.py").write_text(SDK_TOOLS)
    printed = []

    class Out:
        def write(self, text):
            printed.append(text)

    args = Namespace(dir=str(tmp_path), agent_url="http://127.0.0.1:9", agent_command=None, script=None,
                     framework=None, provider="openai", service=None, input=None, force=False)
    assert run_init(args, out=Out(), interactive=False) == 0
    said = "".join(printed)
    assert "found tool access_cart_information (customer_service/agent.py:4): read" in said
    assert "found tool modify_cart (customer_service/agent.py:8): write" in said
    assert "found tool lookup_order (desk.py:5): read" in said and "found tool refund_order (desk.py:9): write" in said
    assert "helper" not in said
    config = (tmp_path / "chaos-gate.yaml").read_text()
    assert 'function: "desk:lookup_order", writes: true' in config  # how to correct the first one listed
    assert "modify_cart" in config and "write" in config
    load_config(tmp_path / "chaos-gate.yaml")  # the listing is comments: the config still validates
