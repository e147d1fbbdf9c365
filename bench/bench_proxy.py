"""Added latency of the chaos proxy, measured side by side with a direct connection.

Four processes, as in a real run: an upstream (uvicorn: a JSON endpoint and a
200-event SSE stream), the gate's proxy (ProxyHook, no faults, a cell in progress so
every exchange is traced), a naive pass-through proxy built here (uvicorn + one shared
httpx.AsyncClient, streaming both ways: what anyone would write first), and this client.
Prints median and p99 per request for JSON, direct vs each proxy, each proxy's added
median, the gate's added median as a ratio of the naive proxy's, and stream throughput.
Targets: gate's added median <= 0.3x the naive proxy's; proxied stream throughput >= 90% of direct.

    python bench/bench_proxy.py [--requests 2000] [--streams 200] [--repeat 1]
    python bench/bench_proxy.py --instructions [--against DIR]

`--instructions` counts the gate proxy's own instructions per JSON request under valgrind
(cachegrind, the proxy's process only: a short and a long run, differenced), for this checkout
and, with `--against`, another one (a copy of the code before a change): on a loaded machine
the latency ratio moves more between rounds than a change moves it; this count does not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
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


def serve_proxy(upstream: str, root: str | None = None) -> None:
    if root:  # another checkout's proxy (--instructions --against)
        sys.path.insert(0, root)
    from gate.config.models import Config
    from gate.runner.proxy_hook import ProxyHook

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

    from gate.heap import frozen_heap
    from gate.transport.loop import run_async

    with frozen_heap():  # as in a gate run, whose proxies live inside it (gate/runner/gate_run.py)
        run_async(main())


def serve_naive(upstream: str) -> None:
    """The floor to beat: a plain uvicorn + httpx pass-through proxy."""
    import socket

    import uvicorn

    client = httpx.AsyncClient(base_url=upstream, trust_env=False, timeout=30)

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        path = scope["path"].removeprefix("/llm/up")
        req = client.build_request(scope["method"], path, content=body)
        resp = await client.send(req, stream=True)
        headers = [(k.encode(), v.encode()) for k, v in resp.headers.items()
                   if k.lower() not in ("content-length", "transfer-encoding", "connection")]
        await send({"type": "http.response.start", "status": resp.status_code, "headers": headers})
        async for chunk in resp.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await resp.aclose()
        await send({"type": "http.response.body", "body": b""})

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off")).run(sockets=[sock])


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


def wait_ready(urls: dict, deadline: float = 30.0) -> None:
    """Each server answers before the clock starts (a child prints its port before it listens)."""
    began = time.monotonic()
    with httpx.Client(trust_env=False) as client:
        for url in urls.values():
            while True:
                try:
                    client.post(url + "/v1/chat", content=b"{}").read()
                    break
                except httpx.TransportError:
                    if time.monotonic() - began > deadline:
                        raise SystemExit(f"{url} not ready after {deadline:g}s") from None
                    time.sleep(0.05)


def measure(requests: int, streams: int) -> tuple[dict, dict]:
    """One round in fresh processes: (JSON latencies, stream rates) per path."""
    up, up_port = spawn("--serve-upstream")
    proxy, proxy_port = spawn("--serve-proxy", f"http://127.0.0.1:{up_port}")
    naive, naive_port = spawn("--serve-naive", f"http://127.0.0.1:{up_port}")
    urls = {"direct": f"http://127.0.0.1:{up_port}", "gate": f"http://127.0.0.1:{proxy_port}/llm/up",
            "naive": f"http://127.0.0.1:{naive_port}/llm/up"}
    lat = {k: [] for k in urls}
    rate = {k: [] for k in urls}
    try:
        import socket

        wait_ready(urls)
        # like asyncio does for every transport: no Nagle delay between headers and body
        nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        with httpx.Client(trust_env=False, transport=nodelay) as client:
            for url in urls.values():
                time_json(client, url + "/v1/chat", 200)  # warm up every path
            for _ in range(4):  # interleave to share the machine's noise fairly
                for name, url in urls.items():
                    lat[name] += time_json(client, url + "/v1/chat", requests // 4)
            for _ in range(4):
                for name, url in urls.items():
                    rate[name].append(time_stream(client, url + "/v1/stream", max(1, streams // 4)))
    finally:
        for proc in (proxy, naive, up):
            proc.terminate()
            proc.wait()
    return lat, rate


def instructions(root: Path, counts: tuple[int, int] = (300, 1300)) -> float:
    """The proxy process's instructions per JSON request: (long run - short run) / their difference."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    up, up_port = spawn("--serve-upstream")
    totals = []
    try:
        for n in counts:
            valgrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
            proxy = subprocess.Popen([*valgrind, os.path.realpath(sys.executable), __file__, "--serve-proxy",
                                      f"http://127.0.0.1:{up_port}", str(root)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            url = f"http://127.0.0.1:{int(proxy.stdout.readline())}/llm/up"
            wait_ready({"gate": url}, deadline=120)
            with httpx.Client(trust_env=False) as client:
                time_json(client, url + "/v1/chat", n)
            proxy.terminate()  # valgrind still writes its summary
            line = next((x for x in proxy.communicate()[1].splitlines() if "I   refs" in x or "I refs" in x), None)
            if line is None:
                raise SystemExit("valgrind run failed")
            totals.append(int(line.split(":")[1].replace(",", "")))
    finally:
        up.terminate()
        up.wait()
    return (totals[1] - totals[0]) / (counts[1] - counts[0])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--streams", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=1, help="rounds in fresh processes; the ratio's median and range")
    ap.add_argument("--instructions", action="store_true", help="the proxy's instructions per request (valgrind)")
    ap.add_argument("--against", type=Path, help="with --instructions: another checkout to count beside this one")
    args = ap.parse_args()
    if args.instructions:
        for root in (ROOT, *([args.against.resolve()] if args.against else [])):
            print(f"{root}: {instructions(root):,.0f} proxy instructions per JSON request")
        return
    ratios = []
    for _ in range(args.repeat):
        ratios.append(report(*measure(args.requests, args.streams)))
    if args.repeat > 1:
        ratios.sort()
        print(f"gate/naive added latency over {args.repeat} rounds: median {statistics.median(ratios):.2f}x, "
              f"range {ratios[0]:.2f}-{ratios[-1]:.2f}x (target <= 0.30x)")


def report(lat: dict, rate: dict) -> float:
    """Print one round; its gate/naive ratio of added median latency."""
    med = {k: statistics.median(v) for k, v in lat.items()}
    for name in ("direct", "gate", "naive"):
        print(f"JSON request   {name:<6} median {med[name]:.3f} ms p99 {p99(lat[name]):.3f} ms")
    added = {k: med[k] - med["direct"] for k in ("gate", "naive")}
    print(f"added latency  gate {added['gate']:.3f} ms | naive uvicorn+httpx proxy {added['naive']:.3f} ms | "
          f"gate/naive {added['gate'] / added['naive']:.2f}x (target <= 0.30x)")
    events = {k: statistics.median(v) for k, v in rate.items()}
    print(f"200-event SSE  direct {events['direct']:,.0f} events/s | gate {events['gate']:,.0f} "
          f"({events['gate'] / events['direct']:.2f}x direct, target >= 0.90) | naive {events['naive']:,.0f} "
          f"({events['naive'] / events['direct']:.2f}x direct)")
    return added["gate"] / added["naive"]


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-upstream":
        serve_upstream()
    elif len(sys.argv) > 2 and sys.argv[1] == "--serve-proxy":
        serve_proxy(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    elif len(sys.argv) > 2 and sys.argv[1] == "--serve-naive":
        serve_naive(sys.argv[2])
    else:
        main()
