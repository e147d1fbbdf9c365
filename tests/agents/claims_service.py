"""The claims tests' tool upstream: orders and refunds (stdlib only).

GET /orders/<id> -> {"order_id", "status": "shipped"}; POST /refunds {order_id} -> 201 with
the refund, except order 4040, past its return window, which is declined the way many
services decline: a 200 whose body is an error object. POST /reset empties the ledger.
GET /refunds lists what was refunded. Port from $CLAIMS_PORT.
"""

import os
import sys
import threading
from http.server import ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from httpkit import JsonHandler  # noqa: E402  (tests/httpkit.py: the shared JSON handler)

REFUNDS: list[dict] = []
LOCK = threading.Lock()
DECLINED = "4040"


class Handler(JsonHandler):
    def do_GET(self):
        if self.path.startswith("/orders/"):
            return self.reply(200, {"order_id": self.path.rsplit("/", 1)[-1], "status": "shipped"})
        if self.path == "/refunds":
            with LOCK:
                return self.reply(200, list(REFUNDS))
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        body = self.json_body()
        if self.path == "/reset":
            with LOCK:
                REFUNDS.clear()
            return self.reply(200, {"ok": True})
        order = str(body.get("order_id"))
        if order == DECLINED:
            return self.reply(200, {"error": f"refund declined: order {order} is past its return window"})
        with LOCK:
            refund = {"refund_id": f"rf_{len(REFUNDS) + 1}", "order_id": order, "status": "refunded"}
            REFUNDS.append(refund)
        self.reply(201, refund)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["CLAIMS_PORT"])), Handler).serve_forever()
