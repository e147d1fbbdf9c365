"""The LangChain tool shapes the seam must cover (tests/test_instrument_python_b.py).

`python langchain_shapes.py schemas` prints every tool's schemas as LangChain builds
them, to compare with and without instrumentation; a custom BaseTool without
`args_schema` is there because LangChain builds its schema from the very `_run` the
seam wraps. `python langchain_shapes.py calls` invokes each shape once (sync and
async, a content_and_artifact tool, an injected argument, a one-string Tool) and
prints what came back, or what was raised.
"""

import asyncio
import json
import sys
from typing import Annotated

from langchain_core.callbacks import CallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolArg, Tool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool


@tool
def lookup_order(order_id: str, token: Annotated[str, InjectedToolArg] = "") -> dict:
    """Look up an order.

    Args:
        order_id: the order to look up
    """
    return {"order_id": order_id, "status": "delivered"}


@tool
async def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    return f"cancelled {order_id}"


@tool(response_format="content_and_artifact")
def order_report(order_id: str) -> tuple[str, dict]:
    """Report on an order."""
    return f"order {order_id} is fine", {"raw": [1, 2, 3]}


class RefundTool(BaseTool):
    name: str = "refund_tool"
    description: str = "Refund an order by hand."

    def _run(self, order_id: str, amount: int = 0, *, config: RunnableConfig,
             run_manager: CallbackManagerForToolRun | None = None) -> str:
        return f"refunded {order_id} by {amount}"


echo = Tool.from_function(func=lambda text: f"echo {text}", name="echo", description="Echo text.")
TOOLS = [lookup_order, cancel_order, order_report, RefundTool(), echo]


def _schema(schema):
    return schema if isinstance(schema, dict) else schema.model_json_schema()


def schemas() -> dict:
    return {t.name: {"openai": convert_to_openai_tool(t), "args": t.args, "call": _schema(t.tool_call_schema),
                     "input": _schema(t.get_input_schema()), "injected": sorted(t._injected_args_keys)}
            for t in TOOLS}


async def calls() -> dict:
    async def attempt(name, run):
        try:
            value = await run() if asyncio.iscoroutinefunction(run) else run()
            out[name] = value if isinstance(value, (str, dict)) else {"content": value.content,
                                                                       "artifact": value.artifact}
        except Exception as exc:  # noqa: BLE001 - what the tool raised is the result here
            out[name] = {"raised": type(exc).__name__, "message": str(exc)}

    out: dict = {}
    await attempt("lookup", lambda: lookup_order.invoke({"order_id": "1", "token": "secret"}))

    async def lookup_async():  # a sync function run through ainvoke: _arun falls back to _run on a thread
        return await lookup_order.ainvoke({"order_id": "2", "token": "secret"})

    async def cancel():
        return await cancel_order.ainvoke({"order_id": "3"})

    await attempt("lookup_async", lookup_async)
    await attempt("cancel", cancel)
    await attempt("report", lambda: order_report.invoke(
        {"type": "tool_call", "id": "call_1", "name": "order_report", "args": {"order_id": "4"}}))
    await attempt("refund", lambda: RefundTool().invoke({"order_id": "5", "amount": 7}))
    await attempt("echo", lambda: echo.invoke("hi"))
    return out


if __name__ == "__main__":
    print(json.dumps(schemas() if sys.argv[1] == "schemas" else asyncio.run(calls()), sort_keys=True, default=repr))
    print(json.dumps({"patched": bool(getattr(RefundTool._run, "__chaos_gate__", False))}))
