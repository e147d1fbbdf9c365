"""What the agent saw when a traced call failed: a status with its error, a hold, or a drop.

A trace records a failure as an exception's class and message (LangSmith `error`, an
OpenTelemetry span's `error.type` and exception event). Importing it as a 200 would
skip the recovery path the incident was about, so the failure is mapped back to the
wire: an HTTP status (from the message, else from the exception class), a timeout
(the connection held until the agent gives up, then dropped) or a dropped connection.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

# Exception class names (OpenAI, Anthropic, httpx, requests, Google, builtins) -> what the wire did.
STATUS_OF_CLASS = {
    "RateLimitError": 429, "TooManyRequests": 429, "ResourceExhausted": 429, "InternalServerError": 500,
    "APIError": 500, "ServiceUnavailableError": 503, "ServiceUnavailable": 503, "OverloadedError": 529,
    "AuthenticationError": 401, "PermissionDeniedError": 403, "NotFoundError": 404, "BadRequestError": 400,
    "UnprocessableEntityError": 422, "ConflictError": 409, "BadGateway": 502, "GatewayTimeout": 504,
}
TIMEOUTS = ("Timeout", "TimeoutError", "APITimeoutError", "ReadTimeout", "WriteTimeout", "PoolTimeout",
            "ConnectTimeout", "DeadlineExceeded", "CancelledError")
DROPS = ("APIConnectionError", "ConnectError", "ConnectionError", "RemoteProtocolError", "ConnectionResetError",
         "ServerDisconnectedError", "ReadError", "IncompleteRead", "ChunkedEncodingError")
STATUS_PATTERNS = (re.compile(r"Error code: (\d{3})"), re.compile(r"status(?:[ _]code)?[\"']?\s*[=:]\s*(\d{3})", re.I),
                   re.compile(r"'(\d{3}) [A-Z][A-Za-z ]+'"), re.compile(r"\bHTTP(?:/\d(?:\.\d)?)? (\d{3})\b"),
                   re.compile(r"^(\d{3}) [A-Z]"))
RETRY_AFTER = re.compile(r"retry[-_ ]after(?:[-_]ms)?[\"']?\s*[=:]\s*[\"']?(\d+(?:\.\d+)?)", re.I)
CLASS = re.compile(r"^\s*(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Timeout|Exceeded|Requests|Unavailable|Exhausted"
                   r"|Gateway|Disconnected|Read|Entity)?)\s*[(:]")


@dataclass
class Failure:
    """How a failed call looked on the wire, and the message to put in its error body."""

    status: int | None  # None: no response (timeout or drop)
    message: str
    timeout: bool = False
    retry_after: float | None = None
    kind: str = "error"  # the exception class, or "error"


def classify(error: str, error_type: str | None = None) -> Failure:
    """A recorded error (an exception's repr and traceback, or a span's error type) as a Failure."""
    text = str(error or "").strip()
    kind = error_type or _class_name(text) or "error"
    short = kind.rsplit(".", 1)[-1]
    message = _message(text) or short
    retry = RETRY_AFTER.search(text)
    retry_after = float(retry.group(1)) if retry else None
    status = _status(text) or (int(short) if short.isdigit() and len(short) == 3 else None)
    if status is None and any(short.endswith(t) for t in TIMEOUTS):
        return Failure(None, message, timeout=True, kind=short)
    if status is None and short in DROPS:
        return Failure(None, message, kind=short)
    status = status or STATUS_OF_CLASS.get(short, 500)
    return Failure(status, message, retry_after=retry_after if status in (429, 503, 529) else None, kind=short)


def _class_name(text: str) -> str | None:
    first = text.splitlines()[0] if text else ""
    match = CLASS.match(first)
    if match:
        return match.group(1)
    last = [line for line in text.splitlines() if line.strip()][-1:]  # a traceback ends "Class: message"
    match = CLASS.match(last[0]) if last else None
    return match.group(1) if match else None


def _status(text: str) -> int | None:
    for pattern in STATUS_PATTERNS:
        match = pattern.search(text)
        if match and 100 <= int(match.group(1)) <= 599:
            return int(match.group(1))
    return None


def _message(text: str) -> str:
    """The provider's own message when the error carries its body, else the exception's first line."""
    body = re.search(r"Error code: \d{3} - (\{.*\})", text)
    if body:
        try:
            doc = ast.literal_eval(body.group(1))
            inner = doc.get("error", doc) if isinstance(doc, dict) else {}
            inner = inner if isinstance(inner, dict) else {"message": inner}
            if isinstance(inner.get("message"), str):
                return inner["message"][:300]
        except (ValueError, SyntaxError):
            pass
    first = text.splitlines()[0] if text else ""
    inner = re.match(r"^[\w.]+\((['\"])(.*)\1\)$", first)
    said = inner.group(2) if inner else first
    return re.sub(r"^Error code: \d{3} - ", "", said)[:300]
