"""The example's tool upstream: a tiny orders/refunds API (stdlib only).

GET /orders/<id>, POST /refunds {order_id, reason} (deduplicated by Idempotency-Key),
GET /refunds?order_id=<id>, POST /reset. Port from $ORDERS_PORT (default 18931).
"""

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

REFUNDS: list[dict] = []
KEYS: dict[str, dict] = {}
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def _reply(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urlparse(self.path)
        if url.path.startswith("/orders/"):
            oid = url.path.rsplit("/", 1)[-1]
            return self._reply(200, {"order_id": oid, "status": "delivered", "total": 19.99})
        if url.path == "/refunds":
            oid = parse_qs(url.query).get("order_id", [None])[0]
            with LOCK:
                return self._reply(200, [r for r in REFUNDS if oid is None or r["order_id"] == oid])
        self._reply(404, {"error": "not found"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if self.path == "/reset":
            with LOCK:
                REFUNDS.clear()
                KEYS.clear()
            return self._reply(200, {"ok": True})
        if self.path != "/refunds":
            return self._reply(404, {"error": "not found"})
        key = self.headers.get("idempotency-key")
        with LOCK:
            if key and key in KEYS:
                return self._reply(201, KEYS[key])  # a replay answers exactly like the original
            refund = {"refund_id": f"rf_{(key or str(len(REFUNDS)))[:12]}", "order_id": str(body.get("order_id")),
                      "status": "refunded"}
            REFUNDS.append(refund)
            if key:
                KEYS[key] = refund
        self._reply(201, refund)


if __name__ == "__main__":
    port = int(os.environ.get("ORDERS_PORT", "18931"))
    print(f"orders service on {port}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
