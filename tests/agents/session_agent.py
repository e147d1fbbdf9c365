"""An HTTP agent (stdlib only) with the flaws that verdict semantics must get right.

POST /chat {"input": ...}:
- REFUND: POSTs $TOOL_URL/refunds over one "session" the process keeps; a tool call that
  times out is answered politely ("may not have gone through"), but the session is then
  lost for good: every later request answers 500 (the shared resource one cell breaks).
- ASK / STREAM: asks the LLM at $OPENAI_BASE_URL (plain JSON, or streamed); a malformed
  or cut answer is answered politely, never raised.
- CRASH: the process dies mid-cell (os._exit) after printing why; FAIL: always a 500.
Anything else is echoed.
"""

import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from httpkit import AgentHandler, serve_agent  # noqa: E402

SESSION = {"broken": False}


def refund() -> str:
    req = urllib.request.Request(os.environ["TOOL_URL"] + "/refunds", data=b'{"order": 1234}', method="POST",
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=1.0) as resp:
            resp.read()
    except Exception:  # the session's connection is gone, and this agent never reopens it
        SESSION["broken"] = True
        return "Your refund may not have gone through."
    return "Your refund is issued."


def ask(text: str, stream: bool) -> str:
    body = {"model": "gpt-test", "messages": [{"role": "user", "content": text}], "stream": stream}
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", method="POST",
                                 data=json.dumps(body).encode(), headers={"content-type": "application/json",
                                                                          "authorization": "Bearer sk-test"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            raw = resp.read()
    except Exception as exc:  # a cut stream or a failed call
        return f"The model's answer was cut ({type(exc).__name__})."
    if not stream:
        try:
            return "Answer: " + str(json.loads(raw)["choices"][0]["message"]["content"])
        except Exception:
            return "The model's answer was malformed."
    text, done = [], False
    for line in raw.decode("utf-8", "replace").splitlines():
        if line.strip() == "data: [DONE]":
            done = True
        elif line.startswith("data: "):
            try:
                delta = json.loads(line[6:])["choices"][0].get("delta", {})
            except Exception:
                continue
            text.append(delta.get("content") or "")
    return ("Streamed: " if done else "The stream was cut: ") + "".join(text)


class Handler(AgentHandler):
    def do_POST(self):
        text = self.json_body().get("input", "")
        if SESSION["broken"]:
            return self.reply(500, {"error": "session lost"})
        if "FAIL" in text:
            return self.reply(500, {"error": "this input always fails"})
        if "CRASH" in text:
            print("agent: fatal error in the tool loop (planted crash)", flush=True)
            os._exit(70)
        if "REFUND" in text:
            return self.reply(200, {"reply": refund()})
        if "ASK" in text or "STREAM" in text:
            return self.reply(200, {"reply": ask(text, stream="STREAM" in text)})
        self.reply(200, {"reply": f"echo: {text}"})


serve_agent(Handler)
