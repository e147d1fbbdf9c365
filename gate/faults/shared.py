"""Faults that mean the same on LLM and tool upstreams: status errors, rate limits,
timeouts, resets, latency, empty and garbage bodies."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from gate.faults.base import LLM, TOOL, FaultBase, register
from gate.faults.shapes import error_for, error_headers, mcp_error_result


def seeded_bytes(label: str, ex, size: int) -> bytes:
    """Random-looking bytes that are the same for the same call of the same cell run."""
    return random.Random(f"{label}:{ex.entry.seq}:{ex.info.path}").randbytes(size)


async def _status_error(ex, status: int, retry_after=None, should_retry=None, message=None) -> None:
    info = ex.info
    ex.entry.retry_after = retry_after
    headers = error_headers(info, retry_after, should_retry)
    if info.provider == "mcp" and info.rpc_id is not None and status < 500 and status != 429:
        await ex.respond_json(200, mcp_error_result(info.rpc_id, message or f"tool error {status}"))
        return
    await ex.respond_json(status, error_for(info, status, message), headers)


@register
class RateLimit(FaultBase):
    """429 with Retry-After (and retry-after-ms), provider-shaped."""

    kind: Literal["rate_limit"] = "rate_limit"
    retry_after: float = Field(default=1.0, ge=0)
    should_retry: bool | None = None

    async def apply(self, ex):
        await _status_error(ex, 429, self.retry_after, self.should_retry)


@register
class ServerError(FaultBase):
    """A provider-shaped 5xx (`status` 500, 502 or 503): the SDKs raise their own error classes."""

    kind: Literal["server_error"] = "server_error"
    applies_to = frozenset({LLM})
    status: Literal[500, 502, 503] = 500
    should_retry: bool | None = None

    async def apply(self, ex):
        await _status_error(ex, self.status, should_retry=self.should_retry)


@register
class Overloaded(FaultBase):
    """529 overloaded, in the provider's error shape (Anthropic's `overloaded_error`)."""

    kind: Literal["overloaded"] = "overloaded"
    applies_to = frozenset({LLM})

    async def apply(self, ex):
        await _status_error(ex, 529)


@register
class AuthError(FaultBase):
    """401 with the provider's authentication error body: a key that expired mid-run."""

    kind: Literal["auth_error"] = "auth_error"
    applies_to = frozenset({LLM})

    async def apply(self, ex):
        await _status_error(ex, 401)


@register
class Error(FaultBase):
    """A tool answers with an error status and body (MCP: an isError result). `status: 200` is the soft
    error many APIs give a declined write: an error object in a 200, which an agent that trusts the
    status reads as done."""

    kind: Literal["error"] = "error"
    applies_to = frozenset({TOOL})
    status: int = Field(default=500, ge=200, le=599, description="4xx/5xx, or 200: an error object in a 200.")
    message: str = "tool failed (injected by chaos-gate)"

    async def apply(self, ex):
        if ex.info.provider == "mcp" and ex.info.rpc_id is not None:
            await ex.respond_json(200, mcp_error_result(ex.info.rpc_id, self.message))
        else:
            await ex.respond_json(self.status, {"error": self.message, "status": self.status})


@register
class NotFound(FaultBase):
    """The tool answers 404 (the record, or the endpoint, is gone)."""

    kind: Literal["not_found"] = "not_found"
    applies_to = frozenset({TOOL})

    async def apply(self, ex):
        await _status_error(ex, 404, message="not found (injected by chaos-gate)")


@register
class Timeout(FaultBase):
    """Hold the connection silent (never forwarded), then drop it."""

    kind: Literal["timeout"] = "timeout"
    seconds: float = Field(default=30.0, gt=0, le=600)

    async def apply(self, ex):
        await ex.hold(self.seconds)
        await ex.abort("then dropped")


@register
class Reset(FaultBase):
    """Close the connection without a response."""

    kind: Literal["reset"] = "reset"

    async def apply(self, ex):
        await ex.abort("reset before any response")


@register
class Latency(FaultBase):
    """Delay before the first byte, then the real response."""

    kind: Literal["latency"] = "latency"
    ms: float = Field(default=1000.0, ge=0, le=600_000)

    async def apply(self, ex):
        ex.note(f"+{self.ms:g} ms")
        await ex.delay(self.ms / 1000)
        await ex.pipe(await ex.forward())


@register
class Empty(FaultBase):
    """200 with an empty body."""

    kind: Literal["empty"] = "empty"

    async def apply(self, ex):
        await ex.respond(200, b"")


@register
class Garbage(FaultBase):
    """200 with seeded random bytes labelled as JSON."""

    kind: Literal["garbage"] = "garbage"
    size: int = Field(default=256, ge=1, le=1 << 20)

    async def apply(self, ex):
        await ex.respond(200, seeded_bytes("garbage", ex, self.size))
