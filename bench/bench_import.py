"""Trace import at scale: N LangSmith runs (flat list_runs export, newest first) and the same
conversations as OTLP JSON spans, imported into sessions; prints runs/s. Linear by design:
runs are indexed by id and parent once. Usage: python bench/bench_import.py [RUNS]"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gate.replay.importers.langsmith import import_langsmith  # noqa: E402
from gate.replay.importers.otel import import_otel  # noqa: E402

PER_TRACE = 5  # root chain, LLM (tool call), tool, LLM (answer), plus one failed LLM call in every 4th trace


def langsmith_runs(n_runs: int) -> list[dict]:
    runs = []
    for t in range(n_runs // PER_TRACE):
        root = f"{t:08x}-0000-0000-0000-000000000000"
        def run(k, kind, t=t, root=root, **kw):
            return {"id": f"{t:08x}-{k:04x}-0000-0000-000000000000", "trace_id": root, "parent_run_id": root,
                    "run_type": kind, "dotted_order": f"{t:08d}.{k:04d}", "start_time": f"2026-01-01T00:00:{k:02d}Z", **kw}
        call = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{t}", "type": "function", "function": {"name": "refund_order", "arguments": '{"order_id": "1"}'}}]},
            "finish_reason": "tool_calls"}]}
        runs += [{"id": root, "trace_id": root, "run_type": "chain", "name": "support", "dotted_order": f"{t:08d}",
                  "inputs": {"messages": [["user", f"refund order {t}"]]}, "outputs": {"output": "done"}},
                 run(1, "llm", error="RateLimitError('Error code: 429 - slow down')") if t % 4 == 0
                 else run(1, "prompt", inputs={}),
                 run(2, "llm", outputs=call), run(3, "tool", name="refund_order", outputs={"output": {"ok": True}}),
                 run(4, "llm", outputs={"generations": [[{"text": "done", "message": {
                     "lc": 1, "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": {"content": "done"}}}]]})]
    return runs[::-1]  # list_runs lists newest first


def otel_doc(n_spans: int) -> dict:
    spans = []
    for t in range(n_spans // 4):
        tid, root = f"{t:032x}", f"{t:012x}0000"
        def span(k, op, attrs, t=t, tid=tid, root=root):
            return {"traceId": tid, "spanId": f"{t:012x}{k:04x}", "parentSpanId": root, "name": op,
                    "startTimeUnixNano": str(t * 10 + k),
                    "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": op}}]
                    + [{"key": k2, "value": {"stringValue": v}} for k2, v in attrs.items()]}
        user = json.dumps([{"role": "user", "parts": [{"type": "text", "content": f"refund order {t}"}]}])
        said = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "done"}], "finish_reason": "stop"}])
        spans += [{"traceId": tid, "spanId": root, "name": "invoke_agent", "startTimeUnixNano": str(t * 10)},
                  span(1, "chat", {"gen_ai.input.messages": user, "gen_ai.output.messages": said}),
                  span(2, "execute_tool", {"gen_ai.tool.name": "refund_order", "gen_ai.tool.call.result": "{}"}),
                  span(3, "chat", {"gen_ai.input.messages": user, "gen_ai.output.messages": said})]
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def measure(label: str, doc, importer, count: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.json"
        path.write_text(json.dumps(doc))
        began = time.perf_counter()
        result = importer(path)
        took = time.perf_counter() - began
    assert not result.skipped, result.skipped[:3]
    print(f"{label}: {count} runs -> {len(result.sessions)} sessions in {took:.2f} s ({count / took:,.0f} runs/s)")
    return took


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    small = measure("langsmith", langsmith_runs(n // 10), import_langsmith, n // 10)
    large = measure("langsmith", langsmith_runs(n), import_langsmith, n)
    print(f"10x the runs took {large / small:.1f}x the time (linear: about 10x)")
    measure("otel", otel_doc(n), import_otel, n)


if __name__ == "__main__":
    main()
