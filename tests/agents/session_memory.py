"""A multi-turn HTTP agent (stdlib only) for tests/test_conversations.py: one that remembers.

Two ways real chat agents keep a conversation, on one server:
- POST /chat {"session", "message"}: the memory is the server's, keyed by the session id; "My name is X"
  is remembered for that session alone, and "What is my name?" answers from it.
- POST /chat_client {"history", "message"}: no memory at all; the answer reads the client-sent history
  (OpenAI-style messages), as an agent that takes the conversation from the client does.

Every request is appended to $RECORD (JSON lines) as it arrived, so a test sees the order, the session
and the turn the gate sent without trusting the gate's own account. A message with FAIL answers 500 (a
turn that breaks); SLOW sleeps $SLOW_SECONDS first (a deadline that must be per turn). With
$OPENAI_BASE_URL set, each turn also asks the model once (the call exploration faults); a failed model
call is answered politely, the memory still used.
"""

import json
import os
import re
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from httpkit import AgentHandler, serve_agent  # noqa: E402

NAME = re.compile(r"my name is (\w+)", re.I)
MEMORY: dict[str, str] = {}  # session id -> the name it was told
LOCK = threading.Lock()


def record(doc: dict) -> None:
    with LOCK, open(os.environ["RECORD"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(doc) + "\n")


def ask_model(message: str) -> str:
    base = os.environ.get("OPENAI_BASE_URL")
    if not base:
        return ""
    body = {"model": "gpt-test", "messages": [{"role": "user", "content": message}]}
    req = urllib.request.Request(base + "/chat/completions", data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json", "authorization": "Bearer sk-test"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            json.loads(resp.read())
    except Exception:
        return " (the model did not answer)"
    return ""


def answer(message: str, name: str | None) -> str:
    told = NAME.search(message)
    if told:
        return f"Nice to meet you, {told.group(1)}."
    if "name" in message.lower():
        return f"Your name is {name}." if name else "I do not know your name."
    return f"You said: {message}"


def remembered(history: list) -> str | None:
    names = [m.group(1) for msg in history if msg.get("role") == "user" and (m := NAME.search(msg["content"]))]
    return names[-1] if names else None


class Chat(AgentHandler):
    def do_POST(self):
        doc = self.json_body()
        record({"path": self.path, **doc})
        message = doc.get("message", "")
        if "SLOW" in message:
            time.sleep(float(os.environ.get("SLOW_SECONDS", "0.5")))
        if "FAIL" in message:
            return self.reply(500, {"error": "this turn broke"})
        if self.path == "/chat_client":
            return self.reply(200, {"reply": answer(message, remembered(doc.get("history", []))) + ask_model(message)})
        session = doc.get("session", "")
        if told := NAME.search(message):
            MEMORY[session] = told.group(1)
        self.reply(200, {"reply": answer(message, MEMORY.get(session)) + ask_model(message)})


if __name__ == "__main__":
    serve_agent(Chat)
