"""What an injected in-process tool failure raises: the exceptions a real failure would.

A framework's tool-error path is what is under test, so these are ordinary exception
types (TimeoutError, ConnectionError, LookupError, Exception) that a tool body could
raise itself; the class names say they were injected, so a log reader is never fooled.
Seams whose framework has an error type of its own (the `mcp` client's MCPError, an
MCP `isError` result) translate in their own module.
"""

from __future__ import annotations


class InjectedToolError(Exception):
    """The tool failed (an `error` or `rate_limit` fault)."""


class InjectedToolNotFound(InjectedToolError, LookupError):
    """The tool's resource was not found (`not_found`)."""


class InjectedToolTimeout(TimeoutError):
    """The tool did not answer in time (`timeout`, `timeout_after_write`)."""


class InjectedConnectionError(ConnectionError):
    """The tool's answer was lost on the way (`reset`, `partial`)."""


def exception_for(answer: dict) -> BaseException:
    kind = answer.get("kind", "error")
    message = answer.get("message") or "tool failed (injected by chaos-gate)"
    cls = {"timeout": InjectedToolTimeout, "connection": InjectedConnectionError,
           "not_found": InjectedToolNotFound}.get(kind, InjectedToolError)
    return cls(message)
