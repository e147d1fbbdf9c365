"""An agent whose handler outlives its cell: on RUNAWAY it keeps calling its tool for
seconds after the gate's deadline, and it shrugs off SIGTERM, so some of those calls
are certain to reach the proxy after the cell ended (stdlib only).

ONCE calls the tool once and answers with what it said; any other input gets an
immediate answer without a tool call.
"""

import json
import os
import signal
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOL = os.environ["TOOL_URL"].rstrip("/")
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the gate's SIGKILL after its grace period ends us


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, status, doc):
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
        if "ONCE" in data.get("input", ""):
            try:
                said = urllib.request.urlopen(f"{TOOL}/orders/1", timeout=5).read().decode()
            except OSError as exc:
                said = f"tool failed: {exc}"
            return self._send(200, {"reply": f"tool said {said}."})
        if "RUNAWAY" not in data.get("input", ""):
            return self._send(200, {"reply": "calm answer."})
        until = time.monotonic() + 6
        while time.monotonic() < until:  # a retry storm that ignores every deadline
            try:
                urllib.request.urlopen(f"{TOOL}/orders/1034", timeout=2).read()
            except OSError:
                pass
            time.sleep(0.05)
        self._send(200, {"reply": "finally done."})


port = int(os.environ["PORT"])
print(f"runaway agent on {port}", flush=True)
ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
