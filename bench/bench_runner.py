"""Gate wall time for 1,000 cells against an agent with a fixed 50 ms latency.

Runs concurrency 1 and 8 back to back in one process and prints, for each, the
cells' part of the wall time next to the ideal (cells x 50 ms / K) and the ratio,
with the agents' start-up time on its own line. Target: ratio <= 1.15 at K=8.

    python bench/bench_runner.py [--cells 1000] [--latency-ms 50]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gate.config import load_config  # noqa: E402
from gate.runner import run_gate  # noqa: E402

AGENT = ROOT / "tests" / "agents" / "planted.py"


def write_config(tmp: Path, cells: int, latency_ms: int, concurrency: int) -> Path:
    inputs = 10
    per_input = cells // inputs - 1  # one contract cell + N mutation cells per input
    lines = [
        "agent:",
        "  start:",
        f"    command: [{json.dumps(sys.executable)}, {json.dumps(str(AGENT))}]",
        f"    env: {{BEHAVIOUR: slow, SLOW_MS: '{latency_ms}'}}",
        "    ready: {url: '{{url}}/health'}",
        "  invoke:",
        "    http: {url: '{{url}}/chat', body: {input: '{{input}}'}, output: $.reply}",
        "inputs:",
        *[f"  - {{id: in{n}, text: 'Please refund order {1000 + n} for my broken blue widget today'}}"
          for n in range(inputs)],
        f"mutation: {{count: {per_input}}}",
        "contract:",
        "  invariants:",
        "    - {id: echo, type: contains, value: echo}",
        "    - {id: no-pii, type: excludes_pii}",
        f"concurrency: {concurrency}",
    ]
    path = tmp / f"bench-{concurrency}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def measure(cells: int, latency_ms: int, concurrency: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        loaded = load_config(write_config(Path(tmp), cells, latency_ms, concurrency))
        cpu = time.process_time()
        report = run_gate(loaded, output_dir=Path(tmp) / "out")
        cpu = time.process_time() - cpu
    n = report.verdict.counts.cells
    startup = max(report.timings.agent_startup_seconds)
    cells_part = report.timings.wall_seconds - startup
    ideal = n * latency_ms / 1000 / concurrency
    return {"k": concurrency, "cells": n, "startup": startup, "cells_part": cells_part, "ideal": ideal,
            "cpu_ms_per_cell": cpu * 1000 / n}


def floor(cells: int, latency_ms: int, concurrency: int) -> float:
    """The same requests from a bare asyncio client (no gate): what the agents alone cost."""
    import asyncio
    import os
    import subprocess

    from gate.agent.process import free_port
    from gate.transport import WireClient

    ports = [free_port() for _ in range(concurrency)]
    procs = [subprocess.Popen([sys.executable, str(AGENT)], stdout=subprocess.DEVNULL,
                              env={**os.environ, "PORT": str(p), "BEHAVIOUR": "slow", "SLOW_MS": str(latency_ms)})
             for p in ports]
    time.sleep(1.0)

    async def drive():
        client = WireClient()

        async def worker(port, n):
            for _ in range(n):
                _, _, chunks, close = await client.request("POST", f"http://127.0.0.1:{port}/chat",
                                                           [("content-type", "application/json")], b'{"input": "x"}')
                async for _ in chunks:
                    pass
                await close()
        began = time.perf_counter()
        await asyncio.gather(*(worker(p, cells // concurrency) for p in ports))
        return time.perf_counter() - began
    try:
        return asyncio.run(drive())
    finally:
        for p in procs:
            p.terminate()
            p.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=1000)
    ap.add_argument("--latency-ms", type=int, default=50)
    args = ap.parse_args()
    rows = [measure(args.cells, args.latency_ms, k) for k in (1, 8)]
    floors = {k: floor(args.cells, args.latency_ms, k) for k in (1, 8)}
    print(f"{'K':>3} {'cells':>6} {'cells part s':>13} {'ideal s':>9} {'ratio':>7}")
    for r in rows:
        print(f"{r['k']:>3} {r['cells']:>6} {r['cells_part']:>13.2f} {r['ideal']:>9.2f} "
              f"{r['cells_part'] / r['ideal']:>7.3f}")
    for r in rows:
        print(f"agent start-up at K={r['k']}: {r['startup']:.2f} s (not part of the cells' time); "
              f"gate CPU {r['cpu_ms_per_cell']:.2f} ms per cell")
    print(f"speed-up K=8 vs K=1: {rows[0]['cells_part'] / rows[1]['cells_part']:.2f}x (ideal 8x)")
    for r in rows:
        f = floors[r["k"]]
        print(f"floor at K={r['k']} (bare client, same agents, no gate): {f:.2f} s = {f / r['ideal']:.3f}x ideal; "
              f"the gate adds {r['cells_part'] / f:.3f}x on top")


if __name__ == "__main__":
    main()
