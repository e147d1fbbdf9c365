"""A chat server that keeps each session's conversation and hands all of it to its model (stdlib only, so
a test can copy it as a scaffolded project's agent.py): POST /chat {"session", "message"} -> {"reply"}.

Its model is $OPENAI_BASE_URL (the gate's sim, under `chaos-gate init`'s starter): each request holds the
session's earlier user messages and answers, then the new message. With $FORGET set it keeps nothing (a
session bug): every message reaches the model alone.
"""

import json
import os
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SESSIONS: dict[str, list] = {}
LOCK = threading.Lock()


def ask_model(messages: list) -> str:
    body = {"model": "gpt-test", "messages": messages}
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", method="POST",
                                 data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json",
                                          "authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', 'sk')}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())["choices"][0]["message"]["content"]


class Chat(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status: int, doc) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(200, {"ok": True})

    def do_POST(self):
        doc = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        with LOCK:
            kept = [] if os.environ.get("FORGET") else SESSIONS.setdefault(doc.get("session", ""), [])
            messages = kept + [{"role": "user", "content": doc.get("message", "")}]
        said = ask_model(messages)
        with LOCK:
            kept += [messages[-1], {"role": "assistant", "content": said}]
        self.reply(200, {"reply": said})


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Chat).serve_forever()
