"""Every bench script under bench/ runs at a smoke size in CI, so none can rot unseen (issue 52).

Each bench/bench_*.py is run as a user runs it (its own process, from the repository's root) with the
smallest arguments that still take its measuring path. A run must exit 0 and print its measurement's
header or label; a number is never asserted (speed lives in bench/, not in a test's verdict). A script
added without an entry in SMOKE fails here. One that needs what this machine lacks (Docker, libfaketime,
root) is skipped with the reason, as tests/test_docker.py, test_dilation.py and test_isolation.py do.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from conftest import ROOT, fast_clock

BENCHES = sorted((ROOT / "bench").glob("bench_*.py"))
DOCKER_BASE = "local/python-base"  # tests/test_docker.py's base image, built by .ci/docker-up.sh


class Run(NamedTuple):
    args: tuple[str, ...]
    shows: tuple[str, ...]  # what the output must contain: the measurement's header or label, never a number


class Smoke(NamedTuple):
    runs: tuple[Run, ...]
    needs: str = ""  # "docker", "libfaketime" or "root": skipped without it
    timeout: float = 120  # seconds for each run


SMOKE = {
    # the profile set alone, at 1x and 10x (~13 s)
    "bench_dilation.py": Smoke((Run(("--smoke",), ("waiting cells: 1x s", "same verdict", "goals: ")),),
                               needs="libfaketime"),
    # each agent's first bug, 3 explored cells, 1 swarm scenario (~20 s)
    "bench_explore.py": Smoke((Run(("--smoke",), ("cells to find every bug", "sys/swarm", "hindsight/swarm")),)),
    # two docker builds, the second from the cache that tests/test_docker.py's build warms
    "bench_image.py": Smoke((Run((), ("cached rebuild after a one-line change", "dependency layer cached")),),
                            needs="docker", timeout=900),
    "bench_import.py": Smoke((Run(("200",), ("langsmith: ", "otel: ", "runs/s", "10x the runs took")),)),
    "bench_instrument.py": Smoke((Run(("--calls", "50", "--starts", "1"),
                                      ("median us", "added per instrumented call", "one sim LLM round trip")),)),
    "bench_isolation.py": Smoke((Run(("--starts", "1", "--runs", "1"),
                                     ("agent start:", "one-cell run:", "of a cell:")),), needs="root"),
    "bench_proxy.py": Smoke((Run(("--requests", "40", "--streams", "4"),
                                 ("added latency", "gate/naive", "200-event SSE")),)),
    "bench_runner.py": Smoke((Run(("--cells", "20", "--latency-ms", "1"), ("gate/floor", "CPU ms/cell", "K=8: ")),
                              Run(("--memory", "--cells", "20"), ("peak RSS", "report.json: compact")))),
    # --cells: bench_runner's suite, imported from it
    "bench_shards.py": Smoke((Run(("--shards", "2", "--cells", "20"), ("1 shard", "2 shards (procs)", "merge")),)),
    "bench_startup.py": Smoke((Run(("--repeat", "1"), ("python -c pass (floor)", "chaos-gate validate: ")),)),
    # one seed of one planted bug (~6 s)
    "bench_sweep.py": Smoke((Run(("--seeds", "1", "--bugs", "no_retry"), ("distinct failing schedules", "no_retry")),)),
}


def _docker_ready() -> bool:
    try:
        done = subprocess.run(["docker", "image", "inspect", DOCKER_BASE], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _require(need: str) -> None:
    """Skip (or, for Docker in CI, fail) when this machine lacks what the bench measures."""
    if need == "docker" and not _docker_ready():
        if os.environ.get("CI"):
            pytest.fail("CI must provide a Docker engine and local/python-base (.ci/docker-up.sh)")
        pytest.skip("no Docker engine with local/python-base; run .ci/docker-up.sh")
    if need == "libfaketime" and not fast_clock():
        pytest.skip("no libfaketime that dilates (apt-get install libfaketime; .ci does)")
    if need == "root" and (os.geteuid() != 0 or not os.path.exists("/usr/bin/python3")):
        pytest.skip("the agent runs as another user only when the gate is root, with /usr/bin/python3")


def _param(script: Path):
    smoke = SMOKE.get(script.name)
    limit = smoke.timeout * len(smoke.runs) + 60 if smoke else 60
    return pytest.param(script, id=script.name, marks=pytest.mark.timeout(limit))


def test_the_table_names_only_scripts_that_exist():
    assert sorted(SMOKE) == sorted(SMOKE.keys() & {s.name for s in BENCHES})


@pytest.mark.parametrize("script", [_param(s) for s in BENCHES])
def test_bench_runs_and_prints_its_measurement(script: Path):
    smoke = SMOKE.get(script.name)
    if smoke is None:
        pytest.fail(f"bench/{script.name} has no entry in SMOKE: give it the smallest arguments that still measure")
    _require(smoke.needs)
    for run in smoke.runs:
        done = subprocess.run([sys.executable, str(script.relative_to(ROOT)), *run.args], cwd=ROOT,
                              capture_output=True, text=True, timeout=smoke.timeout)
        told = f"{script.name} {' '.join(run.args)}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        assert done.returncode == 0, told
        assert [s for s in run.shows if s not in done.stdout] == [], told
