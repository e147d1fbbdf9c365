"""A test service: answers GET with its pid; POST /reset counts resets.

Writes {pid, env names} to $STATE_FILE, so a test can check the gate stopped it and what
environment it got. With FAIL=1 it exits at once.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

if os.environ.get("FAIL"):
    print("echo_service: refusing to start (FAIL set)", flush=True)
    sys.exit(3)
if os.environ.get("STATE_FILE"):
    with open(os.environ["STATE_FILE"], "w") as fh:
        json.dump({"pid": os.getpid(), "env": sorted(os.environ)}, fh)
RESETS = []


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _reply(self, doc):
        body = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._reply({"pid": os.getpid(), "resets": len(RESETS)})

    def do_POST(self):
        RESETS.append(1)
        self._reply({"ok": True})


print("echo_service listening", flush=True)
HTTPServer(("127.0.0.1", int(os.environ["SVC_PORT"])), Handler).serve_forever()
