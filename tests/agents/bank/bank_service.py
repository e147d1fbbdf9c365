"""A small bank for the exploration tests (stdlib only): balances, and transfers that honour an
Idempotency-Key the way payment APIs do (a repeat under one key is answered, not executed again).

GET /accounts/{id} -> {"id", "balance"};  POST /transfers {"from", "to", "amount"} -> {"transfer_id",
"status"};  GET /transfers -> every executed transfer;  POST /reset.  $BANK_PORT is the port.
"""

import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"executed": [], "by_key": {}}


class Bank(BaseHTTPRequestHandler):
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
        if self.path.startswith("/accounts/"):
            return self._send(200, {"id": self.path.rsplit("/", 1)[1], "balance": 500})
        if self.path == "/transfers":
            return self._send(200, STATE["executed"])
        self._send(404, {"error": "not found"})

    def do_POST(self):
        doc = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if self.path == "/reset":
            STATE["executed"].clear()
            STATE["by_key"].clear()
            return self._send(200, {"ok": True})
        if self.path != "/transfers":
            return self._send(404, {"error": "not found"})
        key = self.headers.get("idempotency-key")
        if key and key in STATE["by_key"]:
            return self._send(200, STATE["by_key"][key])
        done = {"transfer_id": f"t{len(STATE['executed']) + 1}", "status": "done", **doc}
        STATE["executed"].append(done)
        if key:
            STATE["by_key"][key] = done
        self._send(201, done)


ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("BANK_PORT", "18977"))), Bank).serve_forever()
