"""What every Python framework example shares: the orders tool's HTTP call and the tiny
HTTP front the gate drives (POST /chat {"message"} -> {"reply"}; GET /health).

Kept apart so each agent.py shows only its framework. What a framework raises is not
papered over: it comes back as a 500 naming the exception, so the gate sees what the
framework itself does under each fault.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Callable

import httpx

ORDERS = os.environ.get("ORDERS_URL", "http://127.0.0.1:18931")


def post_refund(order_id: str, reason: str = "") -> str:
    """The orders service's refund, with an idempotency key: a retried refund is answered
    like the original instead of refunding twice."""
    resp = httpx.post(f"{ORDERS}/refunds", json={"order_id": order_id, "reason": reason},
                      headers={"idempotency-key": f"refund-{order_id}"}, timeout=2.0)
    resp.raise_for_status()
    return resp.text


def serve(answer: Callable[[str], str], label: str) -> None:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, status: int, doc: dict):
            body = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self._send(200, {"ok": True})

        def do_POST(self):
            message = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")["message"]
            try:
                self._send(200, {"reply": answer(message)})
            except Exception as exc:  # the framework gave up: let the gate see it
                print(f"agent: {exc!r}", file=sys.stderr, flush=True)
                self._send(500, {"error": type(exc).__name__})

    port = int(os.environ.get("PORT", "8080"))
    print(f"{label} agent on {port}", flush=True)
    # Single-threaded on purpose: the gate sends one cell at a time to an instance.
    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
