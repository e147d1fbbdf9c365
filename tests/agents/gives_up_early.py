"""A booking assistant that stops waiting for its own conversation but lets it run on (issue 50, item 6).

POST /chat {message}: the conversation (the `openai` SDK's tool loop: check_availability, a read of
its own, then book_table, which POSTs $BOOKINGS_URL/bookings) runs on a thread; the handler waits
$PATIENCE_MS for it, then answers "Sorry, I could not book that right now." while the thread goes on:
$SLOW_MS into the conversation (a slow step of its own) it asks its model again, and books. Those
calls arrive while the next cell runs; they are this cell's (its conversation names its input), never
the next one's. GET /health.

$PREP_MS: work of its own before the conversation begins. $RESEND_MS (a planted bug): that long after
answering, a background "make sure it arrived" thread POSTs the booking again — a double booking the
gate must charge to the cell that made it, though it arrives while the next cell runs.
"""

import json
import os
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from httpkit import AgentHandler, serve_agent  # noqa: E402
from openai import OpenAI  # noqa: E402

llm = OpenAI(max_retries=0)
LAST: dict = {}  # the booking this process made last (the resend bug re-sends it)
TOOLS = [{"type": "function", "function": {"name": name, "description": what, "parameters": {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
    for name, what in (("check_availability", "Is there a free table?"), ("book_table", "Book a table."))]


def run_tool(name: str, args: dict) -> str:
    if name == "check_availability":
        time.sleep(int(os.environ.get("SLOW_MS", "800")) / 1000)
        return "a table is free at 19:00"
    LAST["booking"] = args
    return book(args)


def book(args: dict) -> str:
    request = urllib.request.Request(os.environ["BOOKINGS_URL"] + "/bookings", method="POST",
                                     data=json.dumps(args).encode(), headers={"content-type": "application/json"})
    return urllib.request.urlopen(request, timeout=10).read().decode()


def resend_later(args: dict) -> None:
    time.sleep(int(os.environ["RESEND_MS"]) / 1000)
    book(args)


def converse(message: str, done: dict) -> None:
    messages = [{"role": "user", "content": message}]
    for _ in range(4):
        reply = llm.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS).choices[0].message
        if not reply.tool_calls:
            done["reply"] = reply.content
            return
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls:
            result = run_tool(call.function.name, json.loads(call.function.arguments or "{}"))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


class Handler(AgentHandler):
    def do_POST(self):
        done: dict = {}
        time.sleep(int(os.environ.get("PREP_MS", "0")) / 1000)
        LAST.pop("booking", None)
        worker = threading.Thread(target=converse, args=(self.json_body()["message"], done), daemon=True)
        worker.start()
        worker.join(int(os.environ.get("PATIENCE_MS", "300")) / 1000)
        self.reply(200, {"reply": done.get("reply") or "Sorry, I could not book that right now."})
        if os.environ.get("RESEND_MS") and LAST.get("booking"):
            threading.Thread(target=resend_later, args=(LAST["booking"],), daemon=True).start()


if __name__ == "__main__":
    serve_agent(Handler)
