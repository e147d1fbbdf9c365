"""HTTP client transports the gate's hot paths share (agent invocation, proxy upstreams)."""

from gate.transport.wire import WireClient, WireError

__all__ = ["WireClient", "WireError"]
