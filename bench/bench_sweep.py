"""How many distinct failing fault schedules a seed sweep finds on the planted-bug agents.

For each planted bug of examples/sdk_agent, sweeps N derived seeds over the chaos stage
with probabilistic profiles (flaky_llm, degraded_llm, plus a probabilistic tool-write
timeout), and counts the distinct failing schedules: (cell, the faults that fired, on which
calls). The sound agent is swept too, as the false-alarm baseline (it should find none).

    python bench/bench_sweep.py [--seeds 50] [--bugs no_retry,double_write]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SDK = ROOT / "examples" / "sdk_agent"

from gate.config import LoadedConfig  # noqa: E402
from gate.plan import load_config  # noqa: E402
from gate.plan import derive_seed  # noqa: E402
from gate.runner import run_gate  # noqa: E402

FLAKY_WRITE = {"name": "flaky_write", "faults": [
    {"kind": "timeout_after_write", "target": "orders", "method": "POST", "probability": 0.5, "seconds": 3}]}


def _absolute(command: list[str]) -> list[str]:
    """A command of the example's, its scripts named by absolute path: the config is written elsewhere."""
    return [str(SDK / arg) if (SDK / arg).is_file() else arg for arg in command]


def config_file(tmp: Path) -> Path:
    """The example with only a chaos stage of probabilistic profiles; the gate starts its orders service."""
    doc = yaml.safe_load((SDK / "chaos-gate.yaml").read_text())
    doc["agent"]["start"]["command"] = [sys.executable, str(SDK / "agent.py")]
    for service in doc.get("services", []):
        service["command"] = _absolute(service["command"])
    doc["agent"].pop("reset")
    doc["contract"]["scenarios"] = []
    doc["contract"]["baseline"] = False
    doc["chaos"] = {"profiles": ["flaky_llm", "degraded_llm"], "scenarios": [FLAKY_WRITE]}
    path = tmp / "sweep.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def schedules(loaded: LoadedConfig, seeds: int) -> set:
    found = set()
    for k in range(seeds):
        seed = derive_seed(loaded.config.seed, "sweep", k) % (2 ** 31)
        cfg = loaded.config.model_copy(update={"seed": seed})
        report = run_gate(LoadedConfig(cfg, loaded.path, loaded.lines, loaded.redactor, loaded.digest),
                          output_dir=loaded.base_dir / "out")
        for cell in report.verdict.cells:
            if cell.status == "fail":
                fired = tuple((s.target, s.call, s.fault) for s in cell.runs[0].trace if s.fault)
                found.add((cell.id, fired))
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--bugs", default="none,no_retry,retry_storm,double_write,crash_on_bad_args")
    args = ap.parse_args()
    os.environ["PROVIDER"] = "openai"
    with tempfile.TemporaryDirectory() as tmp:
        path = config_file(Path(tmp))
        print(f"{'agent':<20} {'seeds':>5} {'distinct failing schedules':>27} {'time s':>8}", flush=True)
        for bug in args.bugs.split(","):
            os.environ["AGENT_BUGS"] = "" if bug == "none" else bug
            loaded = load_config(path)  # ${AGENT_BUGS} expands at load time
            began = time.perf_counter()
            found = schedules(loaded, args.seeds)
            print(f"{bug:<20} {args.seeds:>5} {len(found):>27} {time.perf_counter() - began:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
