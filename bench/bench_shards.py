"""Wall time of a suite as 1 shard and as 4 shards run side by side (as processes).

By default the suite is the bundled example; `--cells N` uses instead N cells against
an agent with a fixed 50 ms latency (bench_runner's suite), where sharding can pay off.

Prints both wall times, the merge time, and the ideal (one shard's time / 4), in one run.
On a 2-core machine the 4 shard processes share two cores, so the ratio to ideal shows
what sharding buys here; on a matrix each shard gets its own runner.

    python bench/bench_shards.py [--shards 4]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "examples" / "support" / "chaos-gate.yaml"


def gate(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gate", *args, "--quiet"], cwd=ROOT)


def finish(*procs: subprocess.Popen) -> None:
    """Wait for the gate processes. One that could not judge (exit 2: a bad config, an agent that never
    started) ran no cells, and a time that measured nothing must not be printed as one."""
    codes = [p.wait() for p in procs]
    if any(code > 1 for code in codes):
        raise SystemExit(f"a gate process could not judge (exit codes {codes}): nothing was timed")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--cells", type=int, default=0)
    args = ap.parse_args()
    n = args.shards
    with tempfile.TemporaryDirectory() as tmp:
        config = CONFIG
        if args.cells:
            sys.path.insert(0, str(ROOT / "bench"))
            from bench_runner import write_config

            config = write_config(Path(tmp), args.cells, 50, 1)
        t = time.perf_counter()
        finish(gate("run", "-c", str(config), "-o", f"{tmp}/whole", "--concurrency", "1"))
        whole = time.perf_counter() - t
        t = time.perf_counter()
        procs = [gate("run", "-c", str(config), "-o", f"{tmp}/s{i}", "--concurrency", "1", "--shard", f"{i}/{n}")
                 for i in range(1, n + 1)]
        finish(*procs)
        sharded = time.perf_counter() - t
        t = time.perf_counter()
        finish(gate("merge", *[f"{tmp}/s{i}/report.json" for i in range(1, n + 1)], "-c", str(config),
                    "-o", f"{tmp}/merged"))
        merge = time.perf_counter() - t
    print(f"1 shard          {whole:7.2f} s")
    print(f"{n} shards (procs) {sharded:7.2f} s   ideal {whole / n:6.2f} s   ratio {sharded / (whole / n):5.2f}")
    print(f"merge            {merge:7.2f} s")


if __name__ == "__main__":
    main()
