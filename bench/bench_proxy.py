"""Added latency of the chaos proxy, measured side by side with a direct connection.

Three processes, as in a real run: an upstream (uvicorn: a JSON endpoint and a
200-event SSE stream), the gate's proxy (ProxyHook, no faults, a cell in progress so
every exchange is traced), and this client. Prints median and p99 per request for
JSON, direct vs proxied, the added median, and stream throughput as a ratio.
Targets: added median < 1 ms; proxied stream throughput >= 90% of direct.

    python bench/bench_proxy.py [--requests 2000] [--streams 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EVENT = b'data: {"choices":[{"index":0,"delta":{"content":"token "},"finish_reason":null}]}\n\n'
JSON = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi" * 50}}]}).encode()


async def upstream_app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    if scope["path"].endswith("/stream"):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        for _ in range(200):
            await send({"type": "http.response.body", "body": EVENT, "more_body": True})
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(JSON)).encode())]})
    await send({"type": "http.response.body", "body": JSON})


def serve_upstream() -> None:
    import socket

    import uvicorn
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # so asyncio sets NODELAY
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(upstream_app, log_level="warning", lifespan="off")).run(sockets=[sock])


def serve_proxy(upstream: str) -> None:
    from gate.config.models import Config
    from gate.proxy.hook import ProxyHook

    config = Config.model_validate({
        "agent": {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "{{url}}"}}},
        "inputs": [{"id": "a", "text": "x"}],
        "llm": [{"name": "up", "provider": "generic", "upstream": upstream}]})

    class Cell:
        id, seed, faults = "bench/a/none", 1, ()

    async def main():
        hook = ProxyHook(config)
        await hook.start()
        print(hook.server.port, flush=True)
        while True:  # a long-running cell, trimmed so the trace does not grow without bound
            await hook.begin(Cell(), 0)
            await asyncio.sleep(1)
            hook.app.current = None

    from gate.runner.loop import run_async

    run_async(main())


def spawn(*args) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)
    return proc, int(proc.stdout.readline())


def time_json(client: httpx.Client, url: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        client.post(url, content=b'{"model":"m"}').read()
        out.append((time.perf_counter() - t) * 1000)
    return out


def time_stream(client: httpx.Client, url: str, n: int) -> float:
    """Events per second over n full 200-event streams."""
    t = time.perf_counter()
    events = 0
    for _ in range(n):
        with client.stream("POST", url, content=b'{"model":"m","stream":true}') as resp:
            for chunk in resp.iter_bytes():
                events += chunk.count(b"\n\n")
    return events / (time.perf_counter() - t)


def p99(xs):
    return sorted(xs)[int(len(xs) * 0.99) - 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--streams", type=int, default=200)
    args = ap.parse_args()
    up, up_port = spawn("--serve-upstream")
    proxy, proxy_port = spawn("--serve-proxy", f"http://127.0.0.1:{up_port}")
    direct = f"http://127.0.0.1:{up_port}"
    proxied = f"http://127.0.0.1:{proxy_port}/llm/up"
    try:
        import socket

        # like asyncio does for every transport: no Nagle delay between headers and body
        nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        with httpx.Client(trust_env=False, transport=nodelay) as client:
            time_json(client, direct + "/v1/chat", 200)  # warm up both paths
            time_json(client, proxied + "/v1/chat", 200)
            d, p = [], []
            for _ in range(4):  # interleave to share the machine's noise fairly
                d += time_json(client, direct + "/v1/chat", args.requests // 4)
                p += time_json(client, proxied + "/v1/chat", args.requests // 4)
            sd, sp = [], []
            for _ in range(4):
                sd.append(time_stream(client, direct + "/v1/stream", args.streams // 4))
                sp.append(time_stream(client, proxied + "/v1/stream", args.streams // 4))
    finally:
        for proc in (proxy, up):
            proc.terminate()
            proc.wait()
    md, mp = statistics.median(d), statistics.median(p)
    print(f"JSON request   direct median {md:.3f} ms p99 {p99(d):.3f} ms | proxied median {mp:.3f} ms p99 {p99(p):.3f} ms")
    print(f"added latency  median {mp - md:.3f} ms, p99 {p99(p) - p99(d):.3f} ms (target: median < 1 ms)")
    ed, ep = statistics.median(sd), statistics.median(sp)
    print(f"200-event SSE  direct {ed:,.0f} events/s | proxied {ep:,.0f} events/s | ratio {ep / ed:.2f} (target >= 0.90)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-upstream":
        serve_upstream()
    elif len(sys.argv) > 2 and sys.argv[1] == "--serve-proxy":
        serve_proxy(sys.argv[2])
    else:
        main()
