"""An agent instance that tries to read its sibling instances' environment (their worker's /fn/ token).

Stdlib only (it runs under the system python3 as the separated user). POST /chat answers
{"reply": "uid=U siblings=[...]"}: for every other process whose command line carries this
script's name, whether its /proc/<pid>/environ could be read ("GOT" and the token's start) or not.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

ME = os.path.basename(__file__)


def siblings() -> list[str]:
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if ME.encode() not in fh.read():
                    continue
        except OSError:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                environ = fh.read()
            token = next((v for v in environ.split(b"\0") if v.startswith(b"CHAOS_GATE_FN_URL=")), b"")
            out.append(f"GOT {token[:40].decode(errors='replace')}")
        except OSError as exc:
            out.append(f"denied: {exc.strerror}")
    return out


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self._answer({"ok": True})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._answer({"reply": f"uid={os.getuid()} siblings={json.dumps(siblings())}"})

    def _answer(self, doc):
        body = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
    sys.exit(0)
