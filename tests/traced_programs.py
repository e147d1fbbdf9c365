"""Agent programs traced with the real `langsmith` SDK, the way teams instrument production:
`@traceable` with `wrap_openai` / `wrap_anthropic`, LangGraph's prebuilt ReAct agent on
LangChain's ChatOpenAI and ChatAnthropic (content blocks, `output_version="v1"`), a lone
LLM call, and a run that met a 429 and a tool that timed out. Their LLM calls go to the
gate's sim through a ProxyHarness; traces go to the LangSmith stand-in.
"""

from __future__ import annotations

import json

import httpx
from langsmith import traceable

from proxy_harness import AN_TOOLS, OA_TOOLS

QUESTION = "Please refund order 1234, it arrived damaged."
REFUND = {"refund_id": "rf_9", "status": "refunded", "order_id": "1234"}


@traceable(run_type="tool", name="refund_order")
def refund_order(order_id: str, reason: str = "") -> dict:
    return dict(REFUND, order_id=order_id)


def openai_support(h, question: str = QUESTION) -> str:
    from langsmith.wrappers import wrap_openai

    oa = wrap_openai(h.openai())

    @traceable(name="support")
    def support(question: str) -> str:
        msgs = [{"role": "user", "content": question}]
        first = oa.chat.completions.create(model="gpt-4o-mini", messages=msgs, tools=OA_TOOLS)
        call = first.choices[0].message.tool_calls[0]
        result = refund_order(**json.loads(call.function.arguments))
        msgs += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}]
        return oa.chat.completions.create(model="gpt-4o-mini", messages=msgs, tools=OA_TOOLS).choices[0].message.content
    return support(question)


def anthropic_support(h, question: str = QUESTION) -> str:
    from langsmith.wrappers import wrap_anthropic

    an = wrap_anthropic(h.anthropic())

    @traceable(name="support-claude")
    def support(question: str) -> str:
        msgs = [{"role": "user", "content": question}]
        first = an.messages.create(model="claude-sonnet-4-5", max_tokens=256, messages=msgs, tools=AN_TOOLS)
        use = next(b for b in first.content if b.type == "tool_use")
        result = refund_order(**use.input)
        msgs += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                               "content": json.dumps(result)}]}]
        final = an.messages.create(model="claude-sonnet-4-5", max_tokens=256, messages=msgs, tools=AN_TOOLS)
        return "".join(b.text for b in final.content if b.type == "text")
    return support(question)


def langgraph_support(h, tracer, provider: str, question: str = QUESTION) -> str:
    """LangGraph's prebuilt ReAct agent; LangChain serializes its messages (`generations`, ToolMessage)."""
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    @tool("refund_order")
    def lc_refund(order_id: str, reason: str = "") -> dict:
        """Refund an order."""
        return dict(REFUND, order_id=order_id)

    if provider == "openai":
        from langchain_openai import ChatOpenAI
        model = ChatOpenAI(model="gpt-4o-mini", base_url=h.env["OPENAI_BASE_URL"], api_key="sk-test", max_retries=0)
    else:
        from langchain_anthropic import ChatAnthropic
        model = ChatAnthropic(model="claude-sonnet-4-5", base_url=h.env["ANTHROPIC_BASE_URL"], api_key="sk-ant-test",
                              max_retries=0, output_version="v1")  # content as a list of v1 blocks
    agent = create_react_agent(model, [lc_refund], name=f"langgraph-{provider}")
    state = agent.invoke({"messages": [("user", question)]}, config={"callbacks": [tracer]})
    return state["messages"][-1].text


def lone_llm_call(h) -> str:
    """A trace that is a single LLM run (no parent)."""
    from langsmith.wrappers import wrap_openai

    oa = wrap_openai(h.openai())
    return oa.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hello there"}],
                                      tools=OA_TOOLS).choices[0].message.content


def flaky_support(h, question: str = QUESTION) -> str:
    """Production on a bad day: the first LLM call got a 429, the first refund timed out; both retried."""
    import openai
    from langsmith.wrappers import wrap_openai

    oa = wrap_openai(h.openai(max_retries=0))
    attempts = {"refund": 0}

    @traceable(run_type="tool", name="refund_order")
    def timing_out_refund(order_id: str, reason: str = "") -> dict:
        attempts["refund"] += 1
        if attempts["refund"] == 1:
            raise httpx.ReadTimeout("timed out")
        return dict(REFUND, order_id=order_id)

    def ask(msgs):
        try:
            return oa.chat.completions.create(model="gpt-4o-mini", messages=msgs, tools=OA_TOOLS)
        except openai.RateLimitError:
            return oa.chat.completions.create(model="gpt-4o-mini", messages=msgs, tools=OA_TOOLS)

    @traceable(name="support-flaky")
    def support(question: str) -> str:
        msgs = [{"role": "user", "content": question}]
        first = ask(msgs)
        call = first.choices[0].message.tool_calls[0]
        try:
            result = timing_out_refund(**json.loads(call.function.arguments))
        except httpx.ReadTimeout:
            result = timing_out_refund(**json.loads(call.function.arguments))
        msgs += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}]
        return ask(msgs).choices[0].message.content
    return support(question)
