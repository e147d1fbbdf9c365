"""Import OpenTelemetry GenAI traces (OTLP JSON) as sessions: vendor-neutral, beyond LangSmith.

Reads `resourceSpans -> scopeSpans -> spans` (a file, or JSONL of such exports) as any
OTLP exporter writes them (OpenLLMetry, Langfuse, Phoenix, Logfire, the OpenTelemetry
contrib instrumentations). A span is an LLM call when its `gen_ai.operation.name` is
chat / text_completion / generate_content, a tool call when it is execute_tool. The
answer comes from `gen_ai.output.messages` (the current conventions' parts), else the
flattened `gen_ai.completion.N.*` attributes older instrumentations write; a span with
status ERROR is the failure its `error.type` and exception event describe. Spans are
grouped by trace id and ordered by start time with the LangSmith importer's index.

A session (spans sharing `session.id`, `gen_ai.conversation.id` or `langfuse.session.id`) of
several turns imports as one conversation: a turn is a trace, or, where one trace holds several
`invoke_agent` spans (none inside another), each of those with the calls under it; the turns go in
start-time order. A trace with no such attribute imports as it always did.
"""

from __future__ import annotations

import base64
import binascii
import json
import string
from pathlib import Path
from typing import Any

from gate.dialects.model import ToolCall, Turn
from gate.replay.importers import ImportResult, Skip, failed, llm_answer, session_of, tool_answer
from gate.replay.importers.failures import classify
from gate.replay.importers.langsmith import Index, import_runs, start_of
from gate.replay.importers.messages import FINISH

LLM_OPS = ("chat", "text_completion", "generate_content", "completion")
SESSION_KEYS = ("session.id", "gen_ai.conversation.id", "langfuse.session.id")  # the conversation a span is in
AGENT_OP = "invoke_agent"


def value(v: dict) -> Any:
    """An OTLP AnyValue as a Python value."""
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        return int(v["intValue"])
    if "arrayValue" in v:
        return [value(x) for x in v["arrayValue"].get("values", [])]
    if "kvlistValue" in v:
        return {kv["key"]: value(kv.get("value", {})) for kv in v["kvlistValue"].get("values", [])}
    return None


def attributes(items: list | None) -> dict:
    return {kv["key"]: value(kv.get("value", {})) for kv in items or []}


def spans_of(doc: Any) -> list[dict]:
    if isinstance(doc, list):
        return [s for d in doc for s in spans_of(d)]
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
        raise ValueError("expected OTLP JSON: an object with resourceSpans")
    return [span for rs in doc["resourceSpans"] for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []
            for span in ss.get("spans") or []]


def as_run(span: dict) -> dict:
    """A span in the shape the trace index reads (id, parent, trace, type, start)."""
    attrs = attributes(span.get("attributes"))
    op = attrs.get("gen_ai.operation.name")
    kind = "llm" if op in LLM_OPS or (op is None and "gen_ai.completion.0.content" in attrs) \
        else "tool" if op == "execute_tool" else "chain"
    return {"id": hex_id(span.get("spanId")), "parent_run_id": hex_id(span.get("parentSpanId")) or None,
            "trace_id": hex_id(span.get("traceId")), "run_type": kind, "name": span.get("name"),
            "start_time": str(span.get("startTimeUnixNano") or 0).zfill(20), "attrs": attrs, "span": span}


def hex_id(raw: Any) -> str:
    """OTLP/JSON ids are hex; protobuf's own JSON mapping writes them base64: read both as hex."""
    raw = str(raw or "")
    if all(c in string.hexdigits for c in raw):
        return raw.lower()
    try:
        return base64.b64decode(raw, validate=True).hex()
    except (binascii.Error, ValueError):
        return raw


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text


def turn_of_parts(messages: Any) -> Turn | None:
    """The assistant message of `gen_ai.output.messages` (role, parts, finish_reason) as a Turn."""
    said = next((m for m in messages or [] if isinstance(m, dict) and m.get("role") in ("assistant", None)), None)
    if said is None:
        return None
    parts = [p for p in said.get("parts") or [] if isinstance(p, dict)]
    text = "".join(str(p.get("content") or "") for p in parts if p.get("type") == "text")
    calls = [ToolCall(str(p.get("id") or f"call_{n}"), str(p.get("name")), _args(p.get("arguments")))
             for n, p in enumerate(parts) if p.get("type") == "tool_call"]
    finish = "tool_calls" if calls else FINISH.get(said.get("finish_reason") or "stop", "stop")
    return Turn(text=text, tool_calls=calls, finish=finish)


def _args(raw: Any) -> str:
    return raw if isinstance(raw, str) else json.dumps(raw if raw is not None else {})


def turn_of_flat(attrs: dict) -> Turn | None:
    """OpenLLMetry's flattened gen_ai.completion.0.* attributes as a Turn."""
    base = "gen_ai.completion.0."
    if not any(k.startswith(base) for k in attrs):
        return None
    calls, n = [], 0
    while f"{base}tool_calls.{n}.name" in attrs:
        pre = f"{base}tool_calls.{n}."
        calls.append(ToolCall(str(attrs.get(pre + "id") or f"call_{n}"), attrs[pre + "name"],
                              _args(attrs.get(pre + "arguments"))))
        n += 1
    finish = "tool_calls" if calls else FINISH.get(attrs.get(base + "finish_reason") or "stop", "stop")
    return Turn(text=str(attrs.get(base + "content") or ""), tool_calls=calls, finish=finish)


def user_text(attrs: dict) -> str | None:
    for m in reversed(_json(attrs.get("gen_ai.input.messages")) or []):
        if isinstance(m, dict) and m.get("role") == "user":
            return "".join(str(p.get("content") or "") for p in m.get("parts") or [] if p.get("type") == "text")
    n = max((int(k.split(".")[2]) for k in attrs if k.startswith("gen_ai.prompt.") and k.split(".")[2].isdigit()),
            default=-1)
    for i in range(n, -1, -1):
        if attrs.get(f"gen_ai.prompt.{i}.role") == "user":
            return str(attrs.get(f"gen_ai.prompt.{i}.content") or "")
    return None


def _error(run: dict) -> str | None:
    status = run["span"].get("status") or {}
    if status.get("code") not in ("STATUS_CODE_ERROR", 2):
        return None
    events = [attributes(e.get("attributes")) for e in run["span"].get("events") or [] if e.get("name") == "exception"]
    message = next((e.get("exception.message") for e in events if e.get("exception.message")), status.get("message"))
    return str(message or run["attrs"].get("error.type") or "error")


def exchange(run: dict, llm_target: str, tool_map: dict[str, str]):
    attrs, sid = run["attrs"], str(run["id"])
    name = attrs.get("gen_ai.tool.name") or attrs.get("gen_ai.request.model") or run["name"]
    target = llm_target if run["run_type"] == "llm" else tool_map.get(name, name)
    error = _error(run)
    if error is not None:
        return failed(classify(error, attrs.get("error.type")), run["run_type"], sid, name, target)
    if run["run_type"] == "tool":
        if "gen_ai.tool.call.result" not in attrs:
            raise Skip(f"tool span {sid} ({name}) has no gen_ai.tool.call.result")
        return tool_answer(_json(attrs["gen_ai.tool.call.result"]), sid, name, target)
    turn = turn_of_parts(_json(attrs.get("gen_ai.output.messages"))) or turn_of_flat(attrs)
    if turn is None:
        raise Skip(f"LLM span {sid} ({run['name']}) records no answer (gen_ai.output.messages or "
                   "gen_ai.completion.*; is message content capture on?)")
    return llm_answer(turn, sid, name, target)


def build(trace_id: str, runs: list[dict], index: Index, wrappers: set[str], llm_target: str, tool_map: dict):
    runs.sort(key=index.sort_key)
    calls = [r for r in runs if r["run_type"] in ("llm", "tool") and r["id"] not in wrappers]
    if not calls:
        raise Skip("has no gen_ai LLM or execute_tool spans")
    text = next((t for r in calls if r["run_type"] == "llm" for t in [user_text(r["attrs"])] if t), None)
    if text is None:
        raise Skip("no user input in gen_ai.input.messages (is message content capture on?)")
    exchanges = [exchange(r, llm_target, tool_map) for r in calls]
    root = next((r for r in runs if index.parent(r) is None), runs[0])
    answers = [e for e in exchanges if e.kind == "llm" and e.status == 200]
    from gate.dialects.translate import turn_of

    output = turn_of(answers[-1].body).text if answers else None
    return session_of("otel", trace_id, root["name"], text, output or None, exchanges)


def session_key(run: dict) -> str | None:
    attrs = run.get("attrs") or {}
    return next((str(attrs[k]) for k in SESSION_KEYS if attrs.get(k) not in (None, "")), None)


def _agent_above(run: dict, agents: set[str], index: Index) -> str | None:
    node = index.parent(run)
    while node is not None and node["id"] not in agents:
        node = index.parent(node)
    return node["id"] if node is not None else None


def agent_turns(trace_id: str, runs: list[dict], index: Index) -> list[tuple[str | None, str, list[dict]]]:
    """A trace's turns: the trace itself, or its outermost agent spans when it holds several. Each turn
    keyed by its session: a span of its own, else (for a turn of a longer trace) an ancestor's."""
    key = next((k for r in runs if (k := session_key(r)) is not None), None)
    if key is None:  # no session: the trace imports as it always did
        return [(None, trace_id, runs)]
    agents = {r["id"] for r in runs if r["attrs"].get("gen_ai.operation.name") == AGENT_OP}
    outer = [r for r in runs if r["id"] in agents and _agent_above(r, agents, index) is None]
    if len(outer) < 2:
        return [(key, trace_id, runs)]
    outer.sort(key=lambda r: (start_of(r), index.sort_key(r)))
    members: dict[str, list[dict]] = {r["id"]: [] for r in outer}
    tops = {r["id"] for r in outer}
    for run in runs:
        top = run["id"] if run["id"] in tops else _agent_above(run, agents, index)
        while top is not None and top not in tops:  # an inner agent: the outermost one above it
            top = _agent_above(index.by_id[top], agents, index)
        if top is None:  # a call outside every agent span: the turn it happened in (the last begun before it)
            if run["run_type"] not in ("llm", "tool"):
                continue
            begun = [r["id"] for r in outer if start_of(r) <= start_of(run)]
            top = begun[-1] if begun else outer[0]["id"]
        members[top].append(run)
    out = []
    for agent in outer:
        group = members[agent["id"]]
        own = next((k for r in group if (k := session_key(r)) is not None), None)
        ancestors, node = [], index.parent(agent)
        while node is not None:
            ancestors.append(node)
            node = index.parent(node)
        above = next((k for r in ancestors if (k := session_key(r)) is not None), None)
        out.append((own or above or key, f"{trace_id}-{agent['id']}", group))
    return out


def import_otel(path: Path, llm_target: str = "llm", tool_map: dict[str, str] | None = None) -> ImportResult:
    return import_runs(path, lambda doc: (as_run(s) for s in spans_of(doc)), build, llm_target, tool_map,
                       agent_turns)
