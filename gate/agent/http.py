"""The gate's own HTTP clients to the agent: one shared TLS context, no proxies from env.

Building a TLS context reads the CA bundle (tens of ms); sharing one keeps agent
start-up fast with many workers. `trust_env=False` so a CI runner's HTTP_PROXY
never reroutes loopback traffic to the agent.
"""

from __future__ import annotations

import httpx

from gate.transport.tls import tls_context


def async_client(timeout: float | None = None) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
    return httpx.AsyncClient(verify=tls_context(), trust_env=False, timeout=timeout, limits=limits)
