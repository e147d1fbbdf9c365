"""The proxy's client side: forward to a real upstream over HTTP/1.1 and stream back
(through the lean transport in wire.py).

Bodies are passed raw (identity encoding) so faults can count events and bytes; hop
headers are dropped; auth headers are forwarded as they are and never recorded.
"""

from __future__ import annotations

from gate.proxy.exchange import HOP_BY_HOP, RequestInfo, UpstreamResponse
from gate.transport.wire import WireClient, WireError

NOT_FORWARDED = HOP_BY_HOP | {"accept-encoding"}  # identity is asked for instead: faults read raw bytes


class UpstreamUnavailable(Exception):
    pass


class HttpUpstream:
    def __init__(self, base_url: str, client: WireClient):
        self.base_url = base_url.rstrip("/")
        self.client = client

    async def send(self, info: RequestInfo, headers: list[tuple[str, str]], body: bytes) -> UpstreamResponse:
        out = [(k, v) for k, v in headers if k.lower() not in NOT_FORWARDED]
        out.append(("accept-encoding", "identity"))
        try:
            status, got, chunks, close = await self.client.request(info.method, self.base_url + info.path, out, body)
        except WireError as exc:
            raise UpstreamUnavailable(str(exc)) from None
        headers_out, length = [], None
        for k, v in got:
            low = k.lower()
            if low not in HOP_BY_HOP:
                headers_out.append((k, v))
            elif low == "content-length" and v.isdigit():
                length = int(v)
        return UpstreamResponse(status, headers_out, chunks, close, length=length)


def upstream_client() -> WireClient:
    return WireClient()
