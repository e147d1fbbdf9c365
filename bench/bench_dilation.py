"""Wall time at 1x and at 10x (agent.time_scale), side by side in one run, and their ratio.

Two workloads, each run by the real CLI as a user would, once per scale:
- the SDK example (examples/sdk_agent) sound and with each planted bug that waits;
- a fault-heavy profile set on the same agent: high_latency, rate_limited, double_write,
  cascading_failure (its chaos stage only).
For each run: the whole run's wall time, the wall time of the cells whose faults wait
(holds, latency, Retry-After, timeouts), and whether the verdict part is the same at both
scales. Goals: the waiting cells cost <= 0.2x at 10x, the whole run <= 0.5x.

    python bench/bench_dilation.py [--scale 10] [--smoke]
    python bench/bench_dilation.py --every-example

`--smoke` runs the profile set alone, once per scale: every step at the smallest size, so that
tests/test_benches.py keeps the script from rotting. Its figures mean little.

`--every-example` runs every bundled example and every framework example instead, each sound
and with each of its planted bugs, at 1x and 10x, and prints whether the verdict part is the
same (issue 24's "same verdicts"; tests/test_dilation.py holds a subset that CI runs).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SDK = ROOT / "examples" / "sdk_agent" / "chaos-gate.yaml"
WAITING = ("timeout", "latency", "rate_limit", "stall", "hang", "overloaded")
BUGS = ["", "double_write", "no_tool_timeout", "retry_storm"]
PROFILES = ["high_latency", "rate_limited", "double_write", "cascading_failure"]


def profile_config(folder: Path) -> Path:
    """The SDK example with only a chaos stage of fault-heavy profiles."""
    doc = yaml.safe_load(SDK.read_text())
    doc["contract"]["scenarios"] = []
    doc["contract"]["baseline"] = True
    doc["chaos"] = {"profiles": PROFILES}
    doc.setdefault("gate", {})["allow_vacuous"] = True
    path = folder / "chaos-gate.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    for name in ("agent.py", "orders_service.py"):
        (folder / name).symlink_to(SDK.parent / name)
    return path


EXAMPLES = ROOT / "examples"
SDK_BUGS = ["no_retry", "retry_storm", "double_write", "crash_on_bad_args", "accept_truncated", "obey_injection",
            "no_tool_timeout", "trust_tool_json"]


def every_example() -> list[tuple[str, Path, dict]]:
    """(name, config, env) for each bundled and framework example, sound and with each planted bug."""
    out = [("support", EXAMPLES / "support" / "chaos-gate.yaml", {"AGENT_MODE": "sound"}),
           ("support, fragile", EXAMPLES / "support" / "chaos-gate.yaml", {"AGENT_MODE": "fragile"})]
    out += [(f"sdk_agent, bugs={b or 'none'}", SDK, {"AGENT_BUGS": b}) for b in ["", *SDK_BUGS]]
    out += [(f"worlds_agent, {tools} {retry}", EXAMPLES / "worlds_agent" / "chaos-gate.yaml",
             {"TOOLS": tools, "RETRY": retry}) for tools in ("mcp", "http") for retry in ("careful", "naive")]
    out += [(f"frameworks/{d.name}", d / "chaos-gate.yaml", {}) for d in sorted((EXAMPLES / "frameworks").iterdir())
            if (d / "chaos-gate.yaml").exists()]
    return out


def run(config: Path, scale: float, bugs: str, out: Path, env: dict | None = None) -> dict:
    env = {**os.environ, "AGENT_BUGS": bugs, **(env or {})}
    began = time.monotonic()
    subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(config), "-o", str(out), "--quiet",
                    "--time-scale", f"{scale:g}", "--full-report"], env=env, capture_output=True, timeout=1800)
    wall = time.monotonic() - began
    report = json.loads((out / "report.json").read_text())
    waits = {c["id"] for c in report["verdict"]["cells"]
             if any(any(w in (s.get("fault") or "") for w in WAITING) for r in c.get("runs", [])
                    for s in r.get("trace", []))}
    waiting_ms = sum(t["wall_ms"] for t in report["timings"]["cells"] if t["id"] in waits)
    return {"wall": wall, "waiting": waiting_ms / 1000, "verdict": report["verdict"], "waits": waits}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=10.0)
    parser.add_argument("--every-example", action="store_true", help="same verdict at 1x and N for every example")
    parser.add_argument("--smoke", action="store_true", help="the profile set alone: every step once (CI)")
    args = parser.parse_args()
    if args.every_example:
        return verdicts_of_every_example(args.scale)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        profiles = profile_config(Path(tempfile.mkdtemp(dir=tmp)))
        workloads = [(f"sdk example, bugs={b or 'none'}", SDK, b) for b in BUGS] + [("profiles " + "+".join(PROFILES),
                                                                                    profiles, "")]
        if args.smoke:  # the one workload whose config this script builds itself
            workloads = workloads[-1:]
        for n, (name, config, bugs) in enumerate(workloads):
            slow = run(config, 1, bugs, tmp / f"{n}-1")
            fast = run(config, args.scale, bugs, tmp / f"{n}-fast")
            waits = slow["waits"] | fast["waits"]
            same = json.dumps(slow["verdict"], sort_keys=True) == json.dumps(fast["verdict"], sort_keys=True)
            rows.append((name, slow, fast, same, len(waits)))
    print(f"{'workload':58}{'1x s':>8}{f'{args.scale:g}x s':>8}{'ratio':>7}   {'waiting cells: 1x s':>20}"
          f"{f'{args.scale:g}x s':>8}{'ratio':>7}  same verdict")
    for name, slow, fast, same, _ in rows:
        wait_ratio = fast["waiting"] / slow["waiting"] if slow["waiting"] else float("nan")
        print(f"{name[:58]:58}{slow['wall']:8.1f}{fast['wall']:8.1f}{fast['wall'] / slow['wall']:7.2f}   "
              f"{slow['waiting']:20.1f}{fast['waiting']:8.1f}{wait_ratio:7.2f}  {'yes' if same else 'NO'}")
    total_slow = sum(r[1]["wall"] for r in rows)
    total_fast = sum(r[2]["wall"] for r in rows)
    wait_slow = sum(r[1]["waiting"] for r in rows)
    wait_fast = sum(r[2]["waiting"] for r in rows)
    print(f"{'all':58}{total_slow:8.1f}{total_fast:8.1f}{total_fast / total_slow:7.2f}   "
          f"{wait_slow:20.1f}{wait_fast:8.1f}{wait_fast / wait_slow:7.2f}")
    print("goals: waiting cells <= 0.20x, whole runs <= 0.50x")


def verdicts_of_every_example(scale: float) -> None:
    print(f"{'example':46}{'verdict':>9}{'1x s':>8}{f'{scale:g}x s':>8}{'ratio':>7}  same verdict part")
    same_all = True
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, config, env) in enumerate(every_example()):
            slow = run(config, 1, env.get("AGENT_BUGS", ""), Path(tmp) / f"{n}-1", env)
            fast = run(config, scale, env.get("AGENT_BUGS", ""), Path(tmp) / f"{n}-fast", env)
            same = json.dumps(slow["verdict"], sort_keys=True) == json.dumps(fast["verdict"], sort_keys=True)
            same_all &= same
            print(f"{name[:46]:46}{slow['verdict']['verdict']:>9}{slow['wall']:8.1f}{fast['wall']:8.1f}"
                  f"{fast['wall'] / slow['wall']:7.2f}  {'yes' if same else 'NO'}", flush=True)
    print("every verdict part the same" if same_all else "SOME VERDICT PARTS DIFFER")


if __name__ == "__main__":
    main()
