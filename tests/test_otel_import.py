"""OpenTelemetry GenAI traces become sessions: a fixture recorded in the test by the real
`opentelemetry-instrumentation-openai-v2` (spans exported as OTLP JSON by the SDK's own
protobuf encoder), imported with `--otel`, and replayed against the SDK example agent."""

import json
import os

import pytest
from google.protobuf.json_format import MessageToDict

from gate.cli import main
from proxy_harness import OA_TOOLS, ProxyHarness, ToolServer
from test_trace_import import replay
import traced_programs as tp

CAPTURE = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
           "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}


def hex_ids(doc):
    """OTLP/JSON writes trace and span ids as hex (protobuf's mapping would write base64)."""
    import base64

    for rs in doc["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return doc


def support(oa, tracer):
    """The example's conversation, instrumented: a 429 retried, a tool span per the GenAI conventions."""
    import openai
    from opentelemetry.trace import SpanKind

    def ask(msgs):
        try:
            return oa.chat.completions.create(model="gpt-4o-mini", messages=msgs, tools=OA_TOOLS)
        except openai.RateLimitError:
            return oa.chat.completions.create(model="gpt-4o-mini", messages=msgs, tools=OA_TOOLS)

    with tracer.start_as_current_span("invoke_agent support", attributes={"gen_ai.operation.name": "invoke_agent"}):
        msgs = [{"role": "user", "content": tp.QUESTION}]
        first = ask(msgs)
        call = first.choices[0].message.tool_calls[0]
        result = json.dumps(tp.REFUND)
        with tracer.start_as_current_span(f"execute_tool {call.function.name}", kind=SpanKind.INTERNAL, attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.function.name,
                "gen_ai.tool.call.id": call.id, "gen_ai.tool.call.arguments": call.function.arguments,
                "gen_ai.tool.call.result": result}):
            pass
        msgs += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": result}]
        return ask(msgs).choices[0].message.content


@pytest.fixture(scope="module")
def otlp(tmp_path_factory):
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    saved = {k: os.environ.get(k) for k in CAPTURE}
    os.environ.update(CAPTURE)
    exporter, provider = InMemorySpanExporter(), TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    tools = ToolServer()
    h = ProxyHarness(tools.url)
    try:
        h.begin({"kind": "rate_limit", "target": "openai", "on_calls": [1]})
        answer = support(h.openai(max_retries=0), provider.get_tracer("support-agent"))
        h.end()
    finally:
        instrumentor.uninstrument()
        h.close()
        tools.close()
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    path = tmp_path_factory.mktemp("otel") / "traces.json"
    path.write_text(json.dumps(hex_ids(MessageToDict(encode_spans(exporter.get_finished_spans())))))
    return path, answer


def test_otel_genai_trace_imports_and_replays_run_by_run(otlp, tmp_path, monkeypatch):
    path, answer = otlp
    assert main(["replay", "import", "--otel", str(path), "-o", str(tmp_path / "sessions")]) == 0
    [session] = [json.loads(p.read_text()) for p in (tmp_path / "sessions").glob("*.json")]
    assert session["input"] == tp.QUESTION and session["output"] == answer and session["source"] == "otel"
    steps = [(e["kind"], e["name"], e["status"]) for e in session["exchanges"]]
    assert steps == [("llm", "gpt-4o-mini", 429), ("llm", "gpt-4o-mini", 200), ("tool", "refund_order", 200),
                     ("llm", "gpt-4o-mini", 200)]
    assert session["exchanges"][0]["error"].startswith("RateLimitError")
    code, cells = replay(tmp_path, monkeypatch, tmp_path / "sessions", "anthropic")  # a Messages agent replays it
    [cell] = cells.values()
    assert code == 0 and cell["status"] == "pass" and cell["runs"][0]["output"] == answer
    assert [(s["target"], s["status"]) for s in cell["runs"][0]["trace"]] == [
        ("anthropic", 429), ("anthropic", 200), ("orders", 200), ("anthropic", 200)]


def test_otel_wrong_shape_is_skipped_with_its_reason(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "chat gpt-4o",
         "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]}]}]}]}))
    assert main(["replay", "import", "--otel", str(path), "-o", str(tmp_path / "s")]) == 2
    assert "skipped trace " + "ab" * 16 + ": no user input" in capsys.readouterr().err  # content capture off
