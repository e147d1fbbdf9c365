"""What a provider answers a request it refuses whole, in each wire family's exact status and body.

Two refusals only a conversation meets, both measured on the real APIs' documented errors:

- a history whose assistant tool calls were never answered (an agent that stored the model's tool call
  and lost the tool's result when the tool failed): OpenAI, Anthropic and Gemini refuse every later
  request of that session with a 400, so the sim refuses it too (a sim that answered would hide the
  session the agent broke);
- a prompt over the model's context window (`context_length_exceeded` and its kin): the fault
  `context_length` (gate/faults/llm.py) answers with it.

Pure: the neutral conversation in (gate/dialects/model.py), a dialect's name and an error document out.
"""

from __future__ import annotations

from gate.dialects.model import Conversation

CONTEXT_WINDOW = 128000  # the window the errors name (the figures are the error's, not a measurement)


def unanswered_calls(conv: Conversation) -> list[str]:
    """The ids of assistant tool calls a later message follows without their results: each call must be
    answered by the tool messages right after it (by id; by name or order where the wire leaves ids out).
    A call the history ends on, with nothing after it, is left alone."""
    out: list[str] = []
    messages = conv.messages
    for i, message in enumerate(messages):
        if message.role != "assistant" or not message.tool_calls:
            continue
        results = []
        j = i + 1
        while j < len(messages) and messages[j].role == "tool":
            results.extend(messages[j].tool_results)
            j += 1
        if j == i + 1 and j == len(messages):
            continue  # the history ends on the call: nothing follows it yet
        answered = {r.call_id for r in results if r.call_id}
        spare = [r for r in results if r.call_id not in {c.id for c in message.tool_calls}]
        for call in message.tool_calls:
            if call.id and call.id in answered:
                continue
            # a result whose id names no call of this turn answers one by name (Gemini pairs by name when
            # ids are left out) or, nameless too (the legacy `function` role), the next call in order
            match = next((r for r in spare if r.name == call.name), None) or \
                next((r for r in spare if not r.name), None)
            if match is not None:
                spare.remove(match)
                continue
            out.append(call.id or call.name)
    return out


def unanswered_error(dialect: str, ids: list[str]) -> tuple[int, dict]:
    """The provider's 400 for a history with unanswered tool calls."""
    shown = ", ".join(ids)
    if dialect == "openai_responses":
        return 400, _openai(f"No tool output found for function call {ids[0]}.", "input")
    if dialect.startswith("anthropic"):
        return 400, _anthropic(f"messages: `tool_use` ids were found without `tool_result` blocks immediately after: "
                               f"{shown}. Each `tool_use` block must have a corresponding `tool_result` block in the "
                               "next message.")
    if dialect == "gemini":
        return 400, _gemini("Please ensure that the number of function response parts is equal to the number of "
                            "function call parts of the function call turn.")
    return 400, _openai("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                        f"'tool_call_id'. The following tool_call_ids did not have response messages: {shown}",
                        "messages")


def context_length_error(dialect: str, tokens: int) -> dict:
    """The provider's 400 for a prompt over the context window (`tokens`: what the prompt came to)."""
    over = max(tokens, CONTEXT_WINDOW + 1)
    if dialect == "openai_responses":
        return _openai("Your input exceeds the context window of this model. Please adjust your input and try again.",
                       "input", "context_length_exceeded")
    if dialect.startswith("anthropic"):
        return _anthropic(f"prompt is too long: {over} tokens > {CONTEXT_WINDOW} maximum")
    if dialect == "gemini":
        return _gemini(f"The input token count ({over}) exceeds the maximum number of tokens allowed "
                       f"({CONTEXT_WINDOW}).")
    return _openai(f"This model's maximum context length is {CONTEXT_WINDOW} tokens. However, your messages "
                   f"resulted in {over} tokens. Please reduce the length of the messages.", "messages",
                   "context_length_exceeded")


def _openai(message: str, param: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def _anthropic(message: str) -> dict:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def _gemini(message: str) -> dict:
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
