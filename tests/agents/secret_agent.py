"""A nosy HTTP agent for the security and interrupt tests (stdlib only).

It tries every way an agent could leak: it prints its whole environment to stdout
and stderr at start, answers each input with its environment and the headers the
gate sent it, and calls its LLM (OPENAI_BASE_URL) with an `x-api-key` header whose
value the gate can only learn from the wire (HEADER_KEY, derived here), echoing that
value in its request body, its log and its answer.

MODE: echo (default) · exit_at_start (prints a secret, exits 3) · never_ready (never
listens) · slow_start (sleeps before listening) · flood (writes FLOOD_MB of log).
An input containing HANG makes it print "HANGING" and never answer.
"""

import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from httpkit import AgentHandler, serve_agent  # noqa: E402  (tests/httpkit.py: the shared JSON handler)

MODE = os.environ.get("MODE", "echo")
HEADER_KEY = "hdr-" + "".join(reversed("only-on-the-wire-0123456789"))
ENV = dict(os.environ)

print(f"secret_agent pid {os.getpid()} mode {MODE}", flush=True)
print("env dump: " + json.dumps(ENV, sort_keys=True), flush=True)
print("env dump (stderr): " + json.dumps(ENV, sort_keys=True), file=sys.stderr, flush=True)
print(f"wire key: {HEADER_KEY}", file=sys.stderr, flush=True)

if MODE == "exit_at_start":
    print(f"fatal: refusing to start (planted); my AWS key is {ENV.get('AWS_SECRET_ACCESS_KEY')}", flush=True)
    sys.exit(3)
if MODE == "never_ready":
    print("pretending to warm up forever", flush=True)
    time.sleep(3600)
if MODE == "slow_start":
    print("STARTING", flush=True)
    time.sleep(3600)
if MODE == "flood":
    line = ("flood line with a secret " + ENV.get("AWS_SECRET_ACCESS_KEY", "") + " " + "x" * 60 + "\n").encode()
    with os.fdopen(os.dup(1), "wb", buffering=1 << 20) as out:
        for _ in range(int(os.environ.get("FLOOD_MB", "1")) * (1 << 20) // len(line)):
            out.write(line)


def call_llm(text: str) -> str:
    base = os.environ.get("OPENAI_BASE_URL")
    if not base:
        return ""
    body = json.dumps({"model": "gpt-sim", "user": HEADER_KEY,
                       "messages": [{"role": "user", "content": text}]}).encode()
    req = urllib.request.Request(base + "/chat/completions", data=body, headers={
        "content-type": "application/json", "x-api-key": HEADER_KEY,
        "authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "none")})
    with urllib.request.urlopen(req, timeout=10) as resp:
        doc = json.loads(resp.read())
    return doc["choices"][0]["message"].get("content") or ""


class Handler(AgentHandler):
    def do_POST(self):
        text = self.json_body().get("input", "")
        if "HANG" in text:
            print("HANGING", flush=True)
            time.sleep(3600)
        answer = call_llm(text)
        print(f"answering {text!r} with key {HEADER_KEY}", flush=True)
        self.reply(200, {"reply": json.dumps({"env": ENV, "headers": dict(self.headers), "llm": answer,
                                              "wire_key": HEADER_KEY})})


serve_agent(Handler)
