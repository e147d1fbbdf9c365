"""A small bank for the exploration tests (stdlib only): balances, and transfers that honour an
Idempotency-Key the way payment APIs do (a repeat under one key is answered, not executed again).

GET /accounts/{id} -> {"id", "balance"};  POST /transfers {"from", "to", "amount"} -> {"transfer_id",
"status"};  GET /transfers -> every executed transfer;  POST /reset.  $BANK_PORT is the port.
"""

import os
import sys
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from httpkit import JsonHandler  # noqa: E402

STATE = {"executed": [], "by_key": {}}


class Bank(JsonHandler):
    def do_GET(self):
        if self.path.startswith("/accounts/"):
            return self.reply(200, {"id": self.path.rsplit("/", 1)[1], "balance": 500})
        if self.path == "/transfers":
            return self.reply(200, STATE["executed"])
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        doc = self.json_body()
        if self.path == "/reset":
            STATE["executed"].clear()
            STATE["by_key"].clear()
            return self.reply(200, {"ok": True})
        if self.path != "/transfers":
            return self.reply(404, {"error": "not found"})
        key = self.headers.get("idempotency-key")
        if key and key in STATE["by_key"]:
            return self.reply(200, STATE["by_key"][key])
        done = {"transfer_id": f"t{len(STATE['executed']) + 1}", "status": "done", **doc}
        STATE["executed"].append(done)
        if key:
            STATE["by_key"][key] = done
        self.reply(201, done)


ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("BANK_PORT", "18977"))), Bank).serve_forever()
