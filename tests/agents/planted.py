"""A configurable misbehaving HTTP agent for the lifecycle tests (stdlib only).

BEHAVIOUR selects the planted bug: echo (sound), hang, exit_at_start, crash_on
(dies when the input contains CRASH), flaky (alternates answers), flood (huge
reply), slow (sleeps SLOW_MS), status500, notjson, spawn_child (leaves a child).
"""

import json
import os
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = os.environ.get("BEHAVIOUR", "echo")
COUNTER = {"n": 0}

if MODE == "exit_at_start":
    print("fatal: missing OPENAI_API_KEY (planted start-up failure)", flush=True)
    sys.exit(3)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the gate reuses connections
    disable_nagle_algorithm = True  # headers and body go out as two writes
    def log_message(self, *a):
        pass

    def _send(self, status, body: bytes, ctype="application/json"):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send(200, b'{"ok": true}')

    def do_POST(self):
        data = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        text = data.get("input", "")
        if self.path == "/reset":
            COUNTER["n"] = 0
            return self._send(200, b"{}")
        if MODE == "hang":
            time.sleep(3600)
        if MODE == "crash_on" and "CRASH" in text:
            if os.environ.get("LEAK"):
                print(f"agent: debug dump token={os.environ.get('AGENT_API_TOKEN')}", flush=True)
            print("agent: segfault-like crash on planted input", flush=True)
            os._exit(139)
        if MODE == "slow":
            time.sleep(int(os.environ.get("SLOW_MS", "50")) / 1000)
        if MODE == "status500":
            return self._send(500, b'{"error": "boom"}')
        if MODE == "notjson":
            return self._send(200, b"<html>oops</html>", "text/html")
        if MODE == "flood":
            return self._send(200, json.dumps({"reply": "x" * (3 << 20)}).encode())
        reply = f"echo: {text}"
        if MODE == "flaky":
            COUNTER["n"] += 1
            reply = reply if COUNTER["n"] % 2 else "I don't know"
        self._send(200, json.dumps({"reply": reply}).encode())


if MODE == "spawn_child":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", os.environ.get("CHILD_TAG", "")])

port = int(os.environ["PORT"])
print(f"planted agent {MODE} on {port} pid {os.getpid()}", flush=True)
ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
