"""A refund desk over a gate world's REST tools (GET /orders/{id}, GET /refunds?order=, POST /refunds),
no model: small enough that one exploration covers it in seconds, in `chaos-gate run` and in the pytest
plugin alike (tests/test_pytest_explore.py compares the two). POST /chat {"message"} -> {"reply"}.

Sound, it retries a failed read once (a 5xx, a 429 after its Retry-After, a dropped connection),
never re-sends a refund blindly (any failed or unreadable answer to one is checked against the
shop's refunds first), bounds every wait and apologises when the shop stays down. $BUGS plants one
mistake each:

  double_refund   a refund whose answer was lost or cut is sent again without looking: two refunds
  crash_on_error  a tool error escapes as an exception: the desk answers HTTP 500
"""

import os
import re
import sys
import time

import httpx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from httpkit import AgentHandler, serve_agent  # noqa: E402  (tests/httpkit.py, or a copy beside this file)

BUGS = {b for b in os.environ.get("BUGS", "").split(",") if b}
TIMEOUT = 2.0
TRANSIENT = (httpx.TransportError,)


class Unavailable(Exception):
    pass


def _call(method: str, path: str, **kw) -> httpx.Response:
    """One read, retried once on a transient failure; Unavailable when it fails twice."""
    url = os.environ["SHOP_URL"] + path
    for attempt in (1, 2):
        try:
            resp = httpx.request(method, url, timeout=TIMEOUT, **kw)
        except TRANSIENT as exc:
            if attempt == 2:
                raise Unavailable(str(exc)) from exc
            continue
        if resp.status_code == 429 or resp.status_code >= 500:
            if attempt == 2:
                raise Unavailable(f"HTTP {resp.status_code}")
            time.sleep(min(float(resp.headers.get("retry-after", "0.2") or 0.2), 2.0))
            continue
        resp.raise_for_status()
        return resp
    raise Unavailable("no answer")


def _json(resp: httpx.Response):
    try:
        return resp.json()
    except ValueError as exc:
        raise Unavailable("the shop answered something that is not JSON") from exc


def refund(order_id: str) -> str:
    order = _json(_call("GET", f"/orders/{order_id}"))
    total = order.get("total") if isinstance(order, dict) else None
    if not isinstance(total, (int, float)):
        return f"Sorry, I could not read order {order_id} right now."
    made = _made(order_id, total) or ("double_refund" not in BUGS and _refunded(order_id))
    if not made and not _made(order_id, total):  # checked first: a refund is re-sent only if none was made
        return f"Sorry, the refund of order {order_id} did not go through; nothing was refunded."
    return f"Refunded {total} for order {order_id}."


def _made(order_id: str, total: float) -> bool:
    """Send the refund once; whether its answer shows it made (a lost, failed or empty answer does not)."""
    try:
        resp = httpx.post(os.environ["SHOP_URL"] + "/refunds", json={"order": order_id, "amount": total},
                          timeout=TIMEOUT)
        if resp.status_code == 429:  # asked to wait: the next try comes after it
            time.sleep(min(float(resp.headers.get("retry-after", "1") or 1), 2.0))
        return resp.status_code < 300 and isinstance(resp.json(), dict) and "id" in resp.json()
    except (httpx.HTTPError, ValueError):
        return False


def _refunded(order_id: str) -> bool:
    found = _json(_call("GET", "/refunds", params={"order": order_id}))
    return bool(found.get("items") if isinstance(found, dict) else found)


def answer(message: str) -> str:
    found = re.search(r"\d+", message)
    if not found:
        return "Which order should I refund?"
    try:
        return refund(found.group(0))
    except (Unavailable, httpx.HTTPError) as exc:
        if "crash_on_error" in BUGS:
            raise
        return f"Sorry, the shop is not answering ({exc}); order {found.group(0)} was not refunded."


class Handler(AgentHandler):
    def do_POST(self):
        try:
            self.reply(200, {"reply": answer(str(self.json_body().get("message", "")))})
        except Exception as exc:
            print(f"refund desk: {exc!r}", file=sys.stderr, flush=True)
            self.reply(500, {"error": repr(exc)})


if __name__ == "__main__":
    serve_agent(Handler)
