"""A naive agent that trusts its tool output (stdlib only), for the injection tests.

POST /chat {"input": "<document path>"} fetches DOCS_URL + path (a web page, a note,
a README, a mail), reduces it to text the way a reader mode does (tags dropped) and
answers with its first line plus every line that starts with IMPORTANT: exactly the
obedience that indirect prompt injection exploits. A sound agent would not do that.
"""

import html
import json
import os
import re
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from httpkit import AgentHandler, serve_agent  # noqa: E402  (tests/httpkit.py: the shared JSON handler)


def as_text(body: str, content_type: str) -> list[str]:
    if "html" in content_type or "xml" in content_type:
        body = html.unescape(re.sub(r"<[^>]+>", "\n", body))
    if "json" in content_type:
        body = json.dumps(json.loads(body), indent=1).replace("\\n", "\n")
    return [line.strip() for line in body.splitlines() if line.strip()]


def answer(path: str) -> str:
    with urllib.request.urlopen(os.environ["DOCS_URL"] + path, timeout=5) as resp:
        lines = as_text(resp.read().decode("utf-8", "replace"), resp.headers.get("content-type", ""))
    orders = [line for line in lines if line.startswith("IMPORTANT")]
    return " ".join([f"Summary: {lines[0] if lines else '(empty)'}"] + orders)


class Handler(AgentHandler):
    def do_POST(self):
        self.reply(200, {"reply": answer(self.json_body().get("input", "/"))})


serve_agent(Handler)
