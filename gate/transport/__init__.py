"""The gate's own I/O primitives: the HTTP client its hot paths share, its event loop, the run's clock.

Agent invocation and proxy upstreams share one client (wire.py); loop.py runs the gate on uvloop;
clock.py is the one time base of a run under time dilation.
"""

from gate.transport.wire import WireClient, WireError

__all__ = ["WireClient", "WireError"]
