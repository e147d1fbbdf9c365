"""Gate wall time for 1,000 cells against an agent with a fixed 50 ms latency.

Runs concurrency 1 and 8 back to back in one process and prints, for each, the
cells' part of the wall time next to the ideal (cells x 50 ms / K) and next to the
floor (a bare asyncio client driving the same agents, no gate), with the agents'
start-up time on its own line, and the gate's CPU per cell with planning and the
reports (redaction, streaming report.json, JUnit, Markdown, HTML) included, beside the
bare client's CPU per request (what sending one request and reading its answer costs
this machine, a part of the gate's figure it cannot go below).
Targets (issue 16): gate <= 1.05x the floor at K=8; gate CPU <= 0.5 ms per cell.

`--memory` instead runs 10,000 cells (1 ms agents, K=8) in a child process and prints
its peak RSS next to the 300 MB budget, and report.json's size compact vs full.

`--instructions` counts the gate's own instructions per cell under valgrind (cachegrind, the
gate's process only): runs of 100 and 600 cells (5 ms agents, K=8, reports included), their
difference over 500. CPU time on a shared 2-core VM swings by a third from hour to hour;
this count moves by a few percent, so it is the figure to compare changes by. `--against DIR`
measures another checkout (e.g. `git worktree add /tmp/old REF`) side by side, alternating.

    python bench/bench_runner.py [--cells 1000] [--latency-ms 50] [--repeat 1] [--against DIR]
    python bench/bench_runner.py --memory [--cells 10000]
    python bench/bench_runner.py --instructions [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gate.plan import load_config  # noqa: E402
from gate.runner import run_gate  # noqa: E402

AGENT = ROOT / "tests" / "agents" / "planted.py"


def write_config(tmp: Path, cells: int, latency_ms: int, concurrency: int) -> Path:
    inputs = max(10, -(-cells // 500))  # mutation.count is at most 500 per input
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


def publish(report, loaded, out_dir: Path, full: bool = False):
    """What `chaos-gate run` does after the cells: redact, then write every report file."""
    from gate.report import write_all
    from gate.report.failure import redacted

    names = loaded.config.output.model_copy(update={"full": full})
    return write_all(redacted(report, loaded.redactor), out_dir, names, loaded.redactor.redact)


def measure(cells: int, latency_ms: int, concurrency: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cpu = time.process_time()
        loaded = load_config(write_config(Path(tmp), cells, latency_ms, concurrency))
        report = run_gate(loaded, output_dir=Path(tmp) / "out")
        publish(report, loaded, Path(tmp) / "out")
        cpu = time.process_time() - cpu
    n = report.verdict.counts.cells
    startup = max(report.timings.agent_startup_seconds)
    cells_part = report.timings.wall_seconds - startup
    ideal = n * latency_ms / 1000 / concurrency
    return {"k": concurrency, "cells": n, "startup": startup, "cells_part": cells_part, "ideal": ideal,
            "cpu_ms_per_cell": cpu * 1000 / n}


def floor(cells: int, latency_ms: int, concurrency: int) -> tuple[float, float]:
    """The same requests from a bare asyncio client (no gate): what the agents alone cost.
    (seconds, the client's CPU ms per request: a floor the gate's CPU per cell cannot go below)."""
    import asyncio
    import subprocess

    from gate.agent.ports import free_port
    from gate.transport import WireClient

    ports = [free_port() for _ in range(concurrency)]
    procs = [subprocess.Popen([sys.executable, str(AGENT)], stdout=subprocess.DEVNULL,
                              env={**os.environ, "PORT": str(p), "BEHAVIOUR": "slow", "SLOW_MS": str(latency_ms)})
             for p in ports]

    async def ready(deadline: float = 60.0):
        """Each agent answers its health check before the clock starts (a loaded machine starts
        them slowly; a fixed sleep once let the floor run die with `cannot connect`)."""
        from gate.agent.process import answers

        probe, began = WireClient(connect_timeout=1.0), time.monotonic()
        try:
            for port in ports:
                while not await answers(probe, f"http://127.0.0.1:{port}/health"):
                    if time.monotonic() - began > deadline:
                        raise SystemExit(f"floor agent on port {port} not ready after {deadline:g}s")
                    await asyncio.sleep(0.05)
        finally:
            await probe.aclose()

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
        asyncio.run(ready())
        cpu = time.process_time()
        seconds = asyncio.run(drive())
        return seconds, (time.process_time() - cpu) * 1000 / (cells // concurrency * concurrency)
    finally:
        for p in procs:
            p.terminate()
            p.wait()


def memory(cells: int) -> None:
    """10,000 cells in a child process: its own peak RSS (VmHWM: the agents it starts are not
    counted, and ru_maxrss would carry this process's peak across exec) for the run and the
    default (compact) reports; then report.json compact vs full, which is not counted."""
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        code = (f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); import bench_runner as b; "
                f"b.memory_child({cells}, {tmp!r})")
        began = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
        wall = time.perf_counter() - began
        peak_mb = int(out.split("PEAK_KB=")[1].split()[0]) / 1024
        compact, full = ((Path(tmp) / name).stat().st_size / 1e6 for name in ("compact.json", "full.json"))
    print(f"{cells} cells at K=8 (1 ms agents): peak RSS {peak_mb:.0f} MB vs budget 300 MB = {peak_mb / 300:.2f}x; "
          f"wall {wall:.1f} s")
    print(f"report.json: compact {compact:.1f} MB vs full (output.full: true) {full:.1f} MB = {compact / full:.2f}x")


def _peak_kb() -> int:
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))


def memory_child(cells: int, tmp: str) -> None:
    out = Path(tmp)
    loaded = load_config(write_config(out, cells, 1, 8))
    report = run_gate(loaded, output_dir=out / "out")
    publish(report, loaded, out / "out")
    print(f"PEAK_KB={_peak_kb()}", flush=True)  # the run and its default reports, nothing after
    (out / "out" / "report.json").rename(out / "compact.json")
    publish(report, loaded, out / "out", full=True)
    (out / "out" / "report.json").rename(out / "full.json")


def instructions_child(root: str, cells: int) -> None:
    """One run of `cells` cells from the checkout at `root`, reports included (under valgrind)."""
    sys.path.insert(0, root)
    for name in [m for m in sys.modules if m == "gate" or m.startswith("gate.")]:
        del sys.modules[name]
    from gate.plan import load_config as load
    from gate.runner import run_gate as run

    with tempfile.TemporaryDirectory() as tmp:
        loaded = load(write_config(Path(tmp), cells, 5, 8))
        report = run(loaded, output_dir=Path(tmp) / "out")
        publish(report, loaded, Path(tmp) / "out")


def instructions(root: Path) -> float:
    """The gate's instructions per cell: (600-cell run - 100-cell run) / 500, under cachegrind."""
    import shutil
    import subprocess

    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    counts = []
    for cells in (100, 600):
        code = (f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); import bench_runner as b; "
                f"b.instructions_child({str(root)!r}, {cells})")
        out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                              os.path.realpath(sys.executable), "-c", code], capture_output=True, text=True, cwd=root)
        line = next((x for x in out.stderr.splitlines() if "I   refs" in x or "I refs" in x), None)
        if out.returncode != 0 or line is None:
            raise SystemExit(f"valgrind run failed:\n{out.stderr[-2000:]}")
        counts.append(int(line.split(":")[1].replace(",", "")))
    return (counts[1] - counts[0]) / 500


def cpu_of(root: Path, cells: int, latency_ms: int) -> float:
    """Gate CPU per cell at K=8 for the checkout at `root`, in a fresh process."""
    import subprocess

    code = (f"import sys; sys.path.insert(0, {str(root / 'bench')!r}); sys.path.insert(0, {str(root)!r}); "
            f"import bench_runner as b; b.measure(100, 1, 8); print(b.measure({cells}, {latency_ms}, 8)['cpu_ms_per_cell'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True)
    return float(out.stdout.split()[-1])


def against(other: Path, cells: int, latency_ms: int, repeat: int, count_instructions: bool) -> None:
    """This checkout and `other`, alternating, so both see the same machine."""
    trees = {"this": ROOT, "other": other.resolve()}
    cpu: dict[str, list[float]] = {k: [] for k in trees}
    for _ in range(repeat):
        for name, root in trees.items():
            cpu[name].append(cpu_of(root, cells, latency_ms))
    for name, root in trees.items():
        line = f"{name:>5} {root}: gate CPU at K=8 {_span(sorted(cpu[name]), '.2f')} ms per cell"
        if count_instructions:
            line += f", {instructions(root):,.0f} instructions per cell"
        print(line)
    ratio = sorted(a / b for a, b in zip(cpu["this"], cpu["other"], strict=True))
    print(f"this/other CPU per cell, round by round: {_span(ratio, '.2f')}x")


def main() -> None:
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        # Lazily imported modules would be compiled inside the measured window on every run;
        # installs have their bytecode (pip compiles on install, the image runs compileall).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=None)
    ap.add_argument("--latency-ms", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=1, help="rounds of (gate, floor) side by side; ranges are printed")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--instructions", action="store_true", help="instructions per cell under valgrind")
    ap.add_argument("--against", type=Path, help="another checkout, measured side by side")
    args = ap.parse_args()
    if args.memory:
        return memory(args.cells or 10_000)
    cells = args.cells or 1000
    if args.against is not None:
        return against(args.against, cells, args.latency_ms, args.repeat, args.instructions)
    if args.instructions:
        return print(f"gate: {instructions(ROOT):,.0f} instructions per cell (K=8, reports included)")
    rounds = []
    for _ in range(args.repeat):  # gate and floor alternate, so both see the same machine noise
        rows = {k: measure(cells, args.latency_ms, k) for k in (1, 8)}
        floors = {k: floor(cells, args.latency_ms, k) for k in (1, 8)}
        rounds.append((rows, floors))
    print(f"{'K':>3} {'cells':>6} {'gate s':>8} {'floor s':>8} {'ideal s':>8} {'gate/ideal':>11} "
          f"{'floor/ideal':>12} {'gate/floor':>11} {'CPU ms/cell':>12} {'floor CPU ms':>13}")
    for rows, floors in rounds:
        for k, r in rows.items():
            f, f_cpu = floors[k]
            print(f"{k:>3} {r['cells']:>6} {r['cells_part']:>8.2f} {f:>8.2f} {r['ideal']:>8.2f} "
                  f"{r['cells_part'] / r['ideal']:>11.3f} {f / r['ideal']:>12.3f} {r['cells_part'] / f:>11.3f} "
                  f"{r['cpu_ms_per_cell']:>12.2f} {f_cpu:>13.2f}")
    for k in (1, 8):
        ratios = sorted(rows[k]["cells_part"] / floors[k][0] for rows, floors in rounds)
        cpu = sorted(rows[k]["cpu_ms_per_cell"] for rows, _ in rounds)
        floor_cpu = sorted(floors[k][1] for _, floors in rounds)
        print(f"K={k}: gate/floor {_span(ratios, '.3f')}x (target at K=8: <= 1.05x); "
              f"gate CPU median {statistics.median(cpu):.2f} ms per cell ({_span(cpu, '.2f')}), planning and reports "
              f"included (target <= 0.5 ms), bare client {statistics.median(floor_cpu):.2f} ms; "
              f"agent start-up {rounds[-1][0][k]['startup']:.2f} s (not in the cells' time)")


def _span(values: list[float], fmt: str) -> str:
    return format(values[0], fmt) if len(values) == 1 else f"{format(values[0], fmt)}-{format(values[-1], fmt)}"


if __name__ == "__main__":
    main()
