"""An agent whose answers carry hostile bytes, for the "agent's bytes never crash the gate" tests.

The input picks the answer: ANSI (colour codes), NUL (NUL and other C0 controls),
BADUTF8 (a Latin-1 byte, not UTF-8), SURROGATE (a JSON-escaped lone surrogate);
anything else is echoed. `--http` serves POST /chat on $PORT ({"reply": …});
otherwise it is a command agent reading stdin and writing raw bytes to stdout.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSI = "\x1b[31mred alert\x1b[0m done"
CONTROLS = "nul\x00 bell\x07 vt\x0b ff\x0c del\x7f end"


def answer(text: str) -> bytes:
    """The JSON body for an input (the command agent prints the reply alone)."""
    if "BADUTF8" in text:
        return b'{"reply": "caf\xe9 cr\xe8me"}'
    if "SURROGATE" in text:
        return b'{"reply": "half \\ud83d pair"}'
    reply = ANSI if "ANSI" in text else CONTROLS if "NUL" in text else f"echo: {text}"
    return json.dumps({"reply": reply}).encode()


def command_answer(text: str) -> bytes:
    if "BADUTF8" in text:
        return b"caf\xe9 cr\xe8me\n"
    return json.loads(answer(text))["reply"].encode("utf-8", "surrogatepass") + b"\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, body: bytes):
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._send(b'{"ok": true}')

    def do_POST(self):
        data = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        self._send(answer(data.get("input", "")))


if "--http" in sys.argv:
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
else:
    sys.stdout.buffer.write(command_answer(sys.stdin.read()))
