"""A LangGraph ReAct agent as the 0.2 docs wrote it, on the oldest langchain-core the seam supports.

langchain-core 0.2.32 is the first with `langchain_core.tools.base` (the module the LangChain
seam patches); this agent runs on it with the LangGraph (0.2.4) and langchain-openai of that
day, in 0.2's words: `create_react_agent(..., state_modifier=...)` (no `prompt=`), replies read
as `.content` (no `.text` property yet). `issue_refund` is a plain `@tool` whose write is a line
in $LEDGER, reached only in-process.

The planted bug differs from langgraph_agent.py's because the default did: LangGraph 0.2's
`create_react_agent` takes no ToolNode of one's own, and its ToolNode catches every tool error.
So the bug is the graph the 0.2 docs built "from scratch": a StateGraph whose own tool node runs
`tool.invoke(args)` for each call with no error handling, so one failing tool call crashes the
run (a 500). The sound twin is the prebuilt agent, whose ToolNode tells the model the tool failed.
"""

import json

from front import MODEL, SOUND, SYSTEM, main, record_refund
from langchain_core.messages import SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent


@tool
def issue_refund(order_id: str) -> dict:
    """Issue a refund for an order.

    Args:
        order_id: the order to refund
    """
    return record_refund(order_id)


TOOLS = {issue_refund.name: issue_refund}
MODEL_WITH_TOOLS = ChatOpenAI(model=MODEL).bind_tools(list(TOOLS.values()))


def call_model(state: MessagesState):
    return {"messages": [MODEL_WITH_TOOLS.invoke([SystemMessage(SYSTEM), *state["messages"]])]}


def tool_node(state: MessagesState):
    outputs = []
    for call in state["messages"][-1].tool_calls:
        result = TOOLS[call["name"]].invoke(call["args"])
        outputs.append(ToolMessage(content=json.dumps(result), name=call["name"], tool_call_id=call["id"]))
    return {"messages": outputs}


def should_continue(state: MessagesState):
    return "tools" if state["messages"][-1].tool_calls else END


def from_scratch():
    graph = StateGraph(MessagesState)
    graph.add_node("agent", call_model)
    graph.add_node("tools", tool_node)
    graph.set_entry_point("agent")
    graph.add_conditional_edges("agent", should_continue, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile()


AGENT = create_react_agent(ChatOpenAI(model=MODEL), list(TOOLS.values()), state_modifier=SYSTEM) if SOUND \
    else from_scratch()


def answer(message: str) -> str:
    return AGENT.invoke({"messages": [("user", message)]})["messages"][-1].content


if __name__ == "__main__":
    main(answer, "langgraph 0.2")
