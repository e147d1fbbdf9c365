"""How long `chaos-gate validate` / `plan` / `schema` take from a cold process, beside their floors.

Each command is timed as a whole process (what a user waits for), best of N, next to a
bare interpreter (`python -c pass`) and to importing pydantic alone, measured in the same
run, so a slow or loaded machine shows in the floors too. Target (issue 34): validate ≤ 0.25 s
on a quiet machine; plan ≤ 0.3 s.

`--imports` adds where validate's start goes: its heaviest imports by `python -X importtime`
(cumulative, best of the repeats), the way to find what to defer next.

Timed with the package's bytecode cached, as every install has it (pip compiles on install,
the image runs `compileall`), even when the caller's environment sets
PYTHONDONTWRITEBYTECODE (this machine does: compiling gate/ on every start adds ~80 ms).

    python bench/bench_startup.py [--repeat 7] [--imports]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "examples" / "sdk_agent" / "chaos-gate.yaml"
COMMANDS = {
    "python -c pass (floor)": [sys.executable, "-c", "pass"],
    "import pydantic (floor)": [sys.executable, "-c", "import pydantic"],
    "chaos-gate validate": [sys.executable, "-m", "gate", "validate", "-c", str(CONFIG)],
    "chaos-gate plan": [sys.executable, "-m", "gate", "plan", "-c", str(CONFIG)],
    "chaos-gate schema": [sys.executable, "-m", "gate", "schema"],
}


def best_of(argv: list[str], repeat: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - began)
    return min(times)


TARGETS = {"chaos-gate validate": 0.25, "chaos-gate plan": 0.3}


def heaviest_imports(env: dict[str, str], repeat: int, top: int = 12) -> list[tuple[str, float]]:
    """validate's imports by cumulative `-X importtime` microseconds, best of `repeat`, heaviest first."""
    best: dict[str, int] = {}
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-X", "importtime", *COMMANDS["chaos-gate validate"][1:]], cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
        for line in proc.stderr.splitlines():
            parts = line.removeprefix("import time:").split("|")
            if len(parts) == 3 and parts[1].strip().isdigit():
                name = parts[2].strip()
                best[name] = min(best.get(name, 1 << 62), int(parts[1]))
    return [(name, us / 1e6) for name, us in sorted(best.items(), key=lambda kv: -kv[1])[:top]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--imports", action="store_true", help="also list validate's heaviest imports (-X importtime)")
    args = ap.parse_args()
    cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(COMMANDS["chaos-gate schema"], cwd=ROOT, env=cached, stdout=subprocess.DEVNULL, check=True)
    results = {name: best_of(argv, args.repeat, cached) for name, argv in COMMANDS.items()}
    bare = results["python -c pass (floor)"]
    for name, seconds in results.items():
        print(f"{name:<26} {seconds:6.3f} s   {seconds / bare:5.1f}x the bare interpreter")
    for name, target in TARGETS.items():
        print(f"{name}: {results[name]:.3f} s (target <= {target} s on a quiet machine); bare interpreter "
              f"{bare:.3f} s; above it: {results[name] - bare:.3f} s")
    if args.imports:
        print("validate's heaviest imports (cumulative, -X importtime, which inflates them):")
        for name, seconds in heaviest_imports(cached, args.repeat):
            print(f"  {seconds:6.3f} s  {name}")


if __name__ == "__main__":
    main()
