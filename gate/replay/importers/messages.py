"""Read the message shapes traces store (LangChain serialized, LangGraph tuples, OpenAI,
Anthropic, the LangSmith `messages` format) into text, tool calls and a neutral Turn.

A trace keeps an LLM answer in whatever shape its tracer saw; the replay needs the
answer itself (text and every tool call), so each known shape is reduced to one
`Turn`, which the replay then encodes in the dialect the agent asks in.
"""

from __future__ import annotations

import json
from typing import Any

from gate import dialects
from gate.dialects.model import ToolCall, Turn

FINISH = {"stop": "stop", "end_turn": "stop", "stop_sequence": "stop", "tool_calls": "tool_calls",
          "tool_use": "tool_calls", "function_call": "tool_calls", "length": "length", "max_tokens": "length",
          "MAX_TOKENS": "length", "content_filter": "content_filter", "refusal": "refusal", "STOP": "stop"}
ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant", "AIMessage": "assistant",
         "AIMessageChunk": "assistant", "HumanMessage": "user", "system": "system", "SystemMessage": "system",
         "tool": "tool", "ToolMessage": "tool", "model": "assistant"}


def unwrap(msg: Any) -> Any:
    """A LangChain-serialized object ({lc, id, kwargs}) as its plain fields, with its class as `type`."""
    if isinstance(msg, dict) and isinstance(msg.get("kwargs"), dict) and "content" not in msg:
        cls = (msg.get("id") if isinstance(msg.get("id"), list) and msg["id"] else ["?"])[-1]
        return {"type": cls, **msg["kwargs"]}
    return msg


def role_of(msg: Any) -> str | None:
    """user | assistant | system | tool for any message shape (a LangGraph tuple included)."""
    if isinstance(msg, (list, tuple)) and len(msg) == 2 and isinstance(msg[0], str):
        return ROLES.get(msg[0], msg[0])
    msg = unwrap(msg)
    if isinstance(msg, dict):
        return ROLES.get(msg.get("role") or msg.get("type") or "")
    return None


def text_of(content: Any) -> str:
    """Text of string or list-of-blocks content (Anthropic, LangChain v1, OpenAI parts, Gemini parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    out = []
    for block in content:
        if isinstance(block, str):
            out.append(block)
        elif isinstance(block, dict) and block.get("type") in (None, "text", "output_text", "input_text"):
            value = block.get("text", block.get("content"))
            out.append(value if isinstance(value, str) else "")
    return "".join(out)


def message_text(msg: Any) -> str:
    if isinstance(msg, (list, tuple)) and len(msg) == 2:
        return text_of(msg[1])
    msg = unwrap(msg)
    if isinstance(msg, dict):
        return text_of(msg.get("content", msg.get("parts", msg.get("text", ""))))
    return msg if isinstance(msg, str) else ""


def _args(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value if value is not None else {})


def _call(raw: dict, n: int) -> ToolCall | None:
    """One tool call in LangChain ({name, args}), OpenAI ({function}), Anthropic (tool_use) or v1 form."""
    if raw.get("type") not in (None, "tool_call", "tool_use", "function", "function_call"):
        return None
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    args = fn.get("args", fn.get("arguments", fn.get("input")))
    return ToolCall(str(raw.get("id") or raw.get("call_id") or f"call_{n}"), name, _args(args))


def tool_calls_of(msg: dict) -> list[ToolCall]:
    """Every tool call of an assistant message, from the first place that has any."""
    extra = msg.get("additional_kwargs") or {}
    content = msg.get("content") if isinstance(msg.get("content"), list) else []
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") in ("tool_use", "tool_call")]
    for source in (msg.get("tool_calls"), blocks, extra.get("tool_calls")):
        calls = [c for n, raw in enumerate(source or []) if isinstance(raw, dict) for c in [_call(raw, n)] if c]
        if calls:
            return calls
    return []


def turn_of_message(msg: Any, finish: Any = None) -> Turn | None:
    """An assistant message of any known shape as a Turn; None if it is not one."""
    msg = unwrap(msg)
    if not isinstance(msg, dict) or role_of(msg) not in ("assistant", None):
        return None
    if not any(k in msg for k in ("content", "tool_calls", "text", "parts")):
        return None
    calls = tool_calls_of(msg)
    meta = msg.get("response_metadata") or {}
    why = finish or meta.get("finish_reason") or meta.get("stop_reason") or msg.get("finish_reason")
    kind = "tool_calls" if calls else FINISH.get(why or "stop", "stop")
    return Turn(text=message_text(msg), tool_calls=calls, finish=kind if kind != "tool_calls" or calls else "stop")


def _generations(outputs: dict) -> Turn | None:
    gens = outputs.get("generations")
    if not isinstance(gens, list) or not gens:
        return None
    gen = gens[0][0] if isinstance(gens[0], list) and gens[0] else gens[0]
    if not isinstance(gen, dict):
        return None
    finish = (gen.get("generation_info") or {}).get("finish_reason")
    turn = turn_of_message(gen.get("message"), finish) if gen.get("message") else None
    return turn or (Turn(text=gen["text"]) if isinstance(gen.get("text"), str) else None)


def llm_turn(outputs: Any) -> Turn | None:
    """The answer of an LLM run, from any documented output format; None if none applies."""
    if isinstance(outputs, dict) and isinstance(outputs.get("output"), (dict, str)) and len(outputs) == 1:
        inner = outputs["output"]
        return Turn(text=inner) if isinstance(inner, str) else llm_turn(inner)
    if not isinstance(outputs, dict):
        return None
    for dialect in dialects.DIALECTS.values():  # OpenAI choices / Responses, Anthropic message, Gemini
        turn = dialect.decode_turn({"object": "chat.completion", **outputs} if "choices" in outputs else outputs)
        if turn is not None:
            return turn
    turn = _generations(outputs)
    if turn is not None:
        return turn
    for key in ("messages", "message"):
        found = outputs.get(key)
        last = found[-1] if isinstance(found, list) and found else found
        if last is not None and (turn := turn_of_message(last[0] if isinstance(last, list) and last
                                                         and isinstance(last[0], dict) else last)):
            return turn
    return turn_of_message(outputs)


def last_user_text(messages: Any) -> str | None:
    """The latest user text of a message list (nested batches and LangGraph tuples included)."""
    if isinstance(messages, list) and messages and isinstance(messages[0], list) \
            and not (len(messages[0]) == 2 and isinstance(messages[0][0], str)):
        messages = messages[-1]  # a batch of conversations: [[msg, msg, ...]]
    if not isinstance(messages, list):
        return None
    for msg in reversed(messages):
        if role_of(msg) == "user" and (text := message_text(msg)):
            return text
    return None


def input_text(inputs: Any) -> str | None:
    """What the user asked, from a run's inputs (a plain string key or a message list)."""
    if isinstance(inputs, str):
        return inputs
    if not isinstance(inputs, dict):
        return None
    for key in ("input", "question", "query", "message", "prompt", "text"):
        if isinstance(inputs.get(key), str):
            return inputs[key]
    for key in ("messages", "contents", "input"):
        if (text := last_user_text(inputs.get(key))) is not None:
            return text
    strings = [v for v in inputs.values() if isinstance(v, str)]
    if strings:
        return strings[0]
    nested = [v for v in inputs.values() if isinstance(v, dict)]
    return next((t for v in nested if (t := input_text(v)) is not None), None)


def output_text(outputs: Any) -> str | None:
    """The final answer of a root run, if it recorded one as text."""
    if isinstance(outputs, str):
        return outputs
    if not isinstance(outputs, dict):
        return None
    if isinstance(outputs.get("output"), str):
        return outputs["output"]
    turn = llm_turn(outputs)
    return turn.text if turn is not None and turn.text else None
