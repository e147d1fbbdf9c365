"""Import exported LangSmith runs (a root run with child LLM and tool runs) as sessions.

The recorded LLM answers are re-shaped as OpenAI chat completions and the tool
outputs as JSON answers of the tool named by the run; imported sessions match
requests in order per target (`sequence`), since the agent's request bodies cannot
be expected to match the trace byte for byte. A wrong shape names what is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

from gate.errors import ConfigError
from gate.proxy.routes import body_digest
from gate.replay.session import RecordedExchange, Session


def _runs(doc, source: str) -> list[dict]:
    runs = doc.get("runs") if isinstance(doc, dict) else doc
    if not isinstance(runs, list) or not runs:
        raise ConfigError(f"{source}: expected a list of runs (or {{\"runs\": [...]}}), found {type(runs).__name__}")
    for n, run in enumerate(runs):
        for key in ("id", "run_type"):
            if not isinstance(run, dict) or key not in run:
                raise ConfigError(f"{source}: run {n} has no '{key}'")
    return runs


def _text_input(inputs, source: str, run_id: str) -> str:
    if isinstance(inputs, dict):
        for key in ("input", "question", "query", "message", "prompt"):
            if isinstance(inputs.get(key), str):
                return inputs[key]
        strings = [v for v in inputs.values() if isinstance(v, str)]
        if strings:
            return strings[0]
        msgs = inputs.get("messages")
        if isinstance(msgs, list) and msgs:
            last = msgs[-1][-1] if isinstance(msgs[-1], list) else msgs[-1]
            content = last.get("content") if isinstance(last, dict) else None
            content = content or (last.get("kwargs", {}).get("content") if isinstance(last, dict) else None)
            if isinstance(content, str):
                return content
    raise ConfigError(f"{source}: root run {run_id} has no text input (inputs.input, .question or .messages)")


def _llm_body(run: dict, source: str) -> dict:
    outputs = run.get("outputs") or {}
    gens = outputs.get("generations")
    if not (isinstance(gens, list) and gens):
        raise ConfigError(f"{source}: LLM run {run['id']} ({run.get('name', '?')}) has no outputs.generations")
    gen = gens[0][0] if isinstance(gens[0], list) else gens[0]
    message = gen.get("message") or {}
    kwargs = message.get("kwargs", message)
    content = kwargs.get("content", gen.get("text", ""))
    tool_calls = [{"id": tc.get("id") or f"call_{n}", "type": "function",
                   "function": {"name": tc["name"], "arguments": json.dumps(tc.get("args", {}))}}
                  for n, tc in enumerate(kwargs.get("tool_calls") or [])]
    msg = {"role": "assistant", "content": content if isinstance(content, str) and content else None}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {"id": f"chatcmpl-{run['id']}", "object": "chat.completion", "created": 0,
            "model": (run.get("extra") or {}).get("invocation_params", {}).get("model", "imported"),
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if tool_calls else "stop"}]}


def import_langsmith(path: Path, llm_target: str = "openai") -> list[Session]:
    source = str(path)
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{source}: cannot read runs JSON: {exc}") from None
    runs = _runs(doc, source)
    ids = {r["id"] for r in runs}
    roots = [r for r in runs if not r.get("parent_run_id") or r["parent_run_id"] not in ids]
    sessions = []
    for root in roots:
        children = sorted((r for r in runs if r is not root and _descends(r, root["id"], runs)),
                          key=lambda r: (r.get("dotted_order") or "", r.get("start_time") or ""))
        exchanges = []
        for child in children:
            if child["run_type"] == "llm":
                body = json.dumps(_llm_body(child, source))
                exchanges.append(RecordedExchange(target=llm_target, kind="llm", method="POST",
                                                  path="/chat/completions", digest=body_digest(b""),
                                                  status=200, body=body))
            elif child["run_type"] == "tool":
                if "outputs" not in child:
                    raise ConfigError(f"{source}: tool run {child['id']} ({child.get('name', '?')}) has no outputs")
                out = child["outputs"]
                out = out.get("output", out) if isinstance(out, dict) else out
                exchanges.append(RecordedExchange(target=child.get("name", "tool"), kind="tool", method="POST",
                                                  path="", digest="", status=200,
                                                  body=out if isinstance(out, str) else json.dumps(out)))
        if not exchanges:
            raise ConfigError(f"{source}: root run {root['id']} has no child llm or tool runs")
        output = (root.get("outputs") or {}).get("output")
        sessions.append(Session(id=f"langsmith-{root['id']}", input_id=str(root.get("name") or "imported"),
                                input=_text_input(root.get("inputs"), source, root["id"]),
                                output=output if isinstance(output, str) else None, match="sequence",
                                source="langsmith", exchanges=exchanges))
    return sessions


def _descends(run: dict, root_id: str, runs: list[dict]) -> bool:
    by_id = {r["id"]: r for r in runs}
    parent = run.get("parent_run_id")
    while parent:
        if parent == root_id:
            return True
        parent = by_id.get(parent, {}).get("parent_run_id")
    return False
