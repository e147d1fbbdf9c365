"""Anthropic message threads: the server keeps a conversation so a turn sends only what is new.

What the `anthropic` SDK (2.10) sends, and why the sim must answer it: its tool runner
(`client.beta.messages.tool_runner(...)` with its defaults) runs over a thread. Every
turn is a plain `POST /v1/messages` (no query) with the `message-threads-2026-08-12`
beta (in `anthropic-beta`) and one extra body field, `thread`:

- `{"type": "create"}` on the first turn: the whole history, `system` and `tools`;
  the server holds the conversation under the reply's `id`;
- `{"type": "continue", "previous_message_id": <the last reply's id>}` on later turns:
  only the new messages (the tool results) and neither `system` nor `tools`, which
  the server takes from the thread (`tool_choice`, `output_config` are sent again).

There is no thread endpoint and no thread id: the reply looks as usual and its `id`
names the thread's position. An unknown `previous_message_id` is refused with 404
`error.details.error_code: thread_not_found`, from which the SDK recovers by replaying
the whole history under a new `create` — so that is the sim's answer too.
"""

from __future__ import annotations

from typing import Any

from gate.dialects.model import Conversation

BETA = "message-threads-2026-08-12"
NOT_FOUND = "thread_not_found"


def read(doc: dict, conv: Conversation) -> None:
    """Set `continues` / `store` on a decoded conversation from the request's `thread` field."""
    thread: Any = doc.get("thread")
    if not isinstance(thread, dict):
        return
    if thread.get("type") == "continue" and isinstance(thread.get("previous_message_id"), str):
        conv.continues = thread["previous_message_id"]
    conv.store = thread.get("type") in ("create", "continue")  # a continued thread goes on from this reply


def inherit(conv: Conversation, stored: Conversation) -> None:
    """A `continue` leaves out what the thread was created with: take it from the stored turn."""
    conv.system = conv.system or stored.system
    conv.tools = conv.tools or list(stored.tools)
    # tool results name their call only by id; the call itself is in the stored history
    names = {c.id: c.name for m in conv.messages for c in m.tool_calls}
    for message in conv.messages:
        for result in message.tool_results:
            result.name = result.name or names.get(result.call_id)


def not_found(error: dict, message_id: str) -> dict:
    """The error body the SDK reads as ThreadNotFoundError and recovers from."""
    error["error"]["message"] = f"sim: no thread holds the reply {message_id!r}; replay it with thread create"
    error["error"]["details"] = {"error_code": NOT_FOUND}
    return error
