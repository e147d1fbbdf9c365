"""An agent service that answers first and writes afterwards: a background task posts an audit record
$LATE_MS after the reply has gone (fire-and-forget, as a confirmation e-mail or an audit log often is).

POST /chat {message}: $WORK_MS of work of its own (a lookup, a prompt to build), then one model
call (the `openai` SDK) answers; then, on a thread of its own, POST $AUDIT_URL/audit {message}
once the delay has passed. WRITE_FIRST=1: the audit record is posted at once, before the model is
asked, and nothing is written afterwards. GET /health.
"""

import os
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from httpkit import AgentHandler, serve_agent  # noqa: E402
from openai import OpenAI  # noqa: E402

llm = OpenAI()


def audit(message: str) -> None:
    time.sleep(int(os.environ.get("LATE_MS", "200")) / 1000)
    request = urllib.request.Request(os.environ["AUDIT_URL"] + "/audit", data=message.encode(), method="POST")
    urllib.request.urlopen(request, timeout=10).read()


class Handler(AgentHandler):
    def do_POST(self):
        message = self.json_body()["message"]
        first = os.environ.get("WRITE_FIRST") == "1"
        if first:
            os.environ["LATE_MS"] = "0"
            audit(message)
        time.sleep(int(os.environ.get("WORK_MS", "0")) / 1000)
        reply = llm.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": message}])
        self.reply(200, {"reply": reply.choices[0].message.content})
        if not first:
            threading.Thread(target=audit, args=(message,), daemon=True).start()


if __name__ == "__main__":
    serve_agent(Handler)
