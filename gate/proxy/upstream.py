"""The proxy's client side: forward to a real upstream over HTTP/1.1 and stream back.

Bodies are passed raw (identity encoding) so faults can count events and bytes; hop
headers are dropped; auth headers are forwarded as they are and never recorded.
"""

from __future__ import annotations

import httpx

from gate.agent.http import tls_context
from gate.proxy.exchange import HOP_BY_HOP, RequestInfo, UpstreamResponse


class UpstreamUnavailable(Exception):
    pass


class HttpUpstream:
    def __init__(self, base_url: str, client: httpx.AsyncClient):
        self.base_url = base_url.rstrip("/")
        self.client = client

    async def send(self, info: RequestInfo, headers: list[tuple[str, str]], body: bytes) -> UpstreamResponse:
        out = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() != "accept-encoding"]
        out.append(("accept-encoding", "identity"))
        request = self.client.build_request(info.method, self.base_url + info.path, headers=out, content=body)
        try:
            resp = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise UpstreamUnavailable(f"{type(exc).__name__}: {exc}") from None
        headers_out = [(k, v) for k, v in resp.headers.multi_items() if k.lower() not in HOP_BY_HOP]
        return UpstreamResponse(resp.status_code, headers_out, resp.aiter_raw(), resp.aclose)


def upstream_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(verify=tls_context(), trust_env=False, timeout=httpx.Timeout(None),
                             limits=httpx.Limits(max_connections=64, max_keepalive_connections=32))
