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
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def _send(self, status: int, doc: dict):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send(200, {"ok": True})

    def do_POST(self):
        data = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        self._send(200, {"reply": answer(data.get("input", "/"))})


ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
