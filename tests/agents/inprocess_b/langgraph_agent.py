"""A LangGraph ReAct agent (`create_react_agent` on langchain-openai `ChatOpenAI`) with a local tool.

`issue_refund` is a plain `@tool` function whose write is a line in $LEDGER. The gate
reaches it only in-process (the chaos_gate_agent LangChain seam): no HTTP crosses.

The planted bug is LangGraph's own default: `create_react_agent(model, [tool])`
builds a ToolNode whose default `handle_tool_errors` turns only argument-validation
errors into a message for the model and re-raises everything else, so one failing
tool call crashes the whole graph run (here: a 500). The sound twin passes
`ToolNode([...], handle_tool_errors=True)`, so the model is told the tool failed and
can answer (or retry) instead.
"""

from front import MODEL, SOUND, SYSTEM, main, record_refund
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import ToolNode, create_react_agent


@tool
def issue_refund(order_id: str) -> dict:
    """Issue a refund for an order.

    Args:
        order_id: the order to refund
    """
    return record_refund(order_id)


TOOLS = ToolNode([issue_refund], handle_tool_errors=True) if SOUND else [issue_refund]
AGENT = create_react_agent(ChatOpenAI(model=MODEL), TOOLS, prompt=SYSTEM)


def answer(message: str) -> str:
    return AGENT.invoke({"messages": [("user", message)]})["messages"][-1].text


if __name__ == "__main__":
    main(answer, "langgraph")
