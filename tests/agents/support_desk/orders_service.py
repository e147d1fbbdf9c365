"""The orders service the support desk calls (stdlib only): GET /orders/<id>, POST /orders/<id>/cancel,
POST /reset. $ORDERS_PORT is its port. A cancellation is recorded, not shown by a later lookup: cells run side
by side share this one service, and what each reads must not depend on which ran first (a verdict is the
same at any concurrency)."""

import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from http.server import ThreadingHTTPServer  # noqa: E402

from httpkit import JsonHandler  # noqa: E402

FRESH = {"1042": "shipped", "2077": "processing"}
ORDERS = dict(FRESH)
CANCELLED: list[str] = []
LOCK = threading.Lock()


class Orders(JsonHandler):
    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "orders" and parts[1] in ORDERS:
            return self.reply(200, {"id": parts[1], "status": ORDERS[parts[1]]})
        return self.reply(404, {"error": "no such order"})

    def do_POST(self):
        self.json_body()
        parts = self.path.strip("/").split("/")
        with LOCK:
            if parts == ["reset"]:
                CANCELLED.clear()
                return self.reply(200, {"ok": True})
            if len(parts) == 3 and parts[0] == "orders" and parts[2] == "cancel" and parts[1] in ORDERS:
                CANCELLED.append(parts[1])
                return self.reply(200, {"id": parts[1], "status": "cancelled"})
        return self.reply(404, {"error": "no such order"})


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["ORDERS_PORT"])), Orders).serve_forever()
