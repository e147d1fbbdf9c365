"""Time dilation (agent.time_scale): verified before it is used, and verdicts unchanged by it.

The agents are real processes under the real libfaketime (.ci/faketime-up.sh installs
Debian's package, as the Action image does); the gate's verdict part of report.json at
10x must equal the one at 1x for the bundled examples, sound and with planted bugs,
while the fault waits cost a fraction of their real time.
"""

import json
import shutil
import subprocess
import sys
import time

import pytest

from conftest import ROOT, load_report
from gate.agent import dilation
from gate.cli import main
from gate.config.models import Config
from gate.errors import ConfigError
from gate.transport.clock import AgentClock

SDK = ROOT / "examples" / "sdk_agent" / "chaos-gate.yaml"
needs_library = pytest.mark.skipif(not any(dilation.probe(lib, 10) for lib in dilation.candidates()),
                                   reason="no libfaketime that dilates (apt-get install libfaketime; .ci does)")


def _config(**agent):
    base = {"start": {"command": [sys.executable, "agent.py"]}, "invoke": {"http": {"url": "{{url}}"}}}
    return Config.model_validate({"agent": {**base, **agent, "time_scale": 10}, "inputs": [{"id": "a", "text": "x"}],
                                  "llm": [{"name": "openai"}]})


@needs_library
def test_a_library_that_dilates_is_accepted_and_measured():
    library = dilation.verify(_config())
    assert library in dilation.candidates() and dilation.library_for(10) == library
    assert dilation.probe(library, 10) >= 5


def test_a_container_agent_is_refused_with_its_reason():
    config = _config(start={"docker": {"image": "agent:latest"}})
    with pytest.raises(ConfigError, match="runs in a container"):
        dilation.verify(config)


def test_an_agent_the_gate_does_not_start_is_refused():
    config = Config.model_validate({"agent": {"url": "http://127.0.0.1:9", "invoke": {"http": {"url": "{{url}}"}},
                                              "time_scale": 5}, "inputs": [{"id": "a", "text": "x"}]})
    with pytest.raises(ConfigError, match="already running at agent.url"):
        dilation.verify(config)


def test_a_statically_linked_agent_is_refused(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    (tmp_path / "agent.c").write_text("int main(void) { return 0; }\n")
    done = subprocess.run(["gcc", "-static", "-o", str(tmp_path / "agent"), str(tmp_path / "agent.c")],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip("no static libc to link with")
    assert dilation.is_static(str(tmp_path / "agent")) and not dilation.is_static(sys.executable)
    with pytest.raises(ConfigError, match="statically linked"):
        dilation.verify(_config(start={"command": [str(tmp_path / "agent")]}))


def test_a_library_that_does_not_dilate_is_refused(tmp_path, monkeypatch):
    fake = tmp_path / "libfaketime.so.1"
    fake.write_bytes(b"not a library")
    monkeypatch.setattr(dilation, "SYSTEM_GLOBS", ())
    monkeypatch.setenv(dilation.ENV_LIBRARY, str(fake))
    monkeypatch.setitem(sys.modules, "libfaketime", None)  # the PyPI wheel, if installed, is not asked either
    dilation._verified.clear()
    with pytest.raises(ConfigError, match="no libfaketime dilated a probe"):
        dilation.verify(_config())


def test_the_time_base_counts_the_agents_cpu_at_face_value():
    """A process that computes for a while, then sleeps: CPU is not faster under dilation, so it is
    not multiplied; only the wait is (the 1x-equivalent time)."""
    proc = subprocess.Popen([sys.executable, "-c", "x = 0\nfor i in range(3 * 10**6): x += i\n"])
    clock = AgentClock(10, lambda: proc.pid)
    began = time.monotonic()
    while proc.poll() is None:
        clock.elapsed()  # samples the CPU while the process is there to read
        time.sleep(0.01)
    real = time.monotonic() - began
    assert clock.last > 0.05  # its busiest thread's CPU (and run-queue) time was read from /proc
    assert clock.elapsed() < real * 10 * 0.9  # not simply real x 10


def test_time_scale_out_of_range_is_a_flag_error(capsys):
    assert main(["run", "-c", str(SDK), "--time-scale", "0.5"]) == 2
    assert "--time-scale: must be between 1 and 100" in capsys.readouterr().err


def run(tmp_path, scale: float, bugs: str, monkeypatch, *extra) -> tuple[dict, float]:
    monkeypatch.setenv("AGENT_BUGS", bugs)
    out = tmp_path / f"{bugs or 'sound'}-{scale:g}"
    began = time.monotonic()
    main(["run", "-c", str(SDK), "-o", str(out), "--quiet", "--time-scale", str(scale), *extra])
    return load_report(out), time.monotonic() - began


def judged(verdict: dict) -> dict:
    """The verdict part at 10x without the library's own caveat: where libfaketime hangs timed waits
    (Debian's does; test_a_library_that_hangs_timed_waits_is_said_beside_the_verdict), the run says so
    beside the verdict, which is otherwise the 1x one."""
    caveat = [w for w in verdict["warnings"] if "hangs timed waits" in w]
    assert len(caveat) <= 1
    return {**verdict, "warnings": [w for w in verdict["warnings"] if w not in caveat]}


# Each planted bug with the scenario that catches it (and the baseline): the sound agent runs every cell.
# bench/bench_dilation.py --every-example compares every example, sound and with each planted bug.
CAUGHT_BY = {"": None, "double_write": "double_write", "retry_storm": "outage", "no_tool_timeout": "hanging_tool"}


@needs_library
@pytest.mark.parametrize("bugs", list(CAUGHT_BY))
def test_verdicts_at_10x_equal_those_at_1x(tmp_path, monkeypatch, bugs):
    only = ["--only", f"contract/refund/{CAUGHT_BY[bugs]}", "--only", "contract/refund/baseline"] if bugs else []
    slow, slow_s = run(tmp_path, 1, bugs, monkeypatch, *only)
    fast, fast_s = run(tmp_path, 10, bugs, monkeypatch, *only)
    assert json.dumps(judged(fast["verdict"]), sort_keys=True) == json.dumps(slow["verdict"], sort_keys=True)
    assert slow["verdict"]["verdict"] == ("fail" if bugs else "pass")  # each bug caught, at both scales
    rates = fast["run"]["agent_clock_rates"]  # the agent's own clock, read inside it, sped up
    assert fast["run"]["time_scale"] == 10 and rates and min(rates) > 5, fast["run"]
    assert "measured inside" in (tmp_path / f"{bugs or 'sound'}-10" / "summary.md").read_text()
    if bugs == "no_tool_timeout":  # a 60 s tool hang: the fault waits dominate, and cost a fraction at 10x
        assert fast_s < 0.5 * slow_s, (fast_s, slow_s)


@needs_library
@pytest.mark.parametrize("example", ["openai_agents", "langgraph"])
def test_framework_examples_judge_the_same_at_10x(tmp_path, example):
    """Real frameworks at their defaults (CPU-heavier turns than the SDK example): same verdict part."""
    pytest.importorskip({"openai_agents": "agents", "langgraph": "langgraph"}[example])
    config = ROOT / "examples" / "frameworks" / example / "chaos-gate.yaml"
    reports = []
    for scale in ("1", "10"):
        main(["run", "-c", str(config), "-o", str(tmp_path / scale), "--quiet", "--time-scale", scale])
        reports.append(load_report(tmp_path / scale)["verdict"])
    assert json.dumps(reports[0], sort_keys=True) == json.dumps(judged(reports[1]), sort_keys=True)


# -- the agent's own clock, checked from inside it (gate/instrument/clock.py) ----------------------

def test_clock_readings_give_each_process_its_rate_and_ignore_junk():
    from gate.instrument.clock import ClockReadings

    clocks = ClockReadings()
    clocks.note({"pid": 7, "n": 0, "at": 100.0}, now=10.0)
    assert clocks.pending() and clocks.undilated(10) is None
    clocks.note({"pid": 7, "n": 1, "at": 100.5}, now=10.05)  # half a second of its time in 50 ms: 10x
    clocks.note({"pid": 8, "n": 0, "at": 5.0}, now=10.0)
    clocks.note({"pid": 8, "n": 1, "at": 5.5}, now=10.5)  # real time
    for junk in ({"pid": "x", "n": 1, "at": 1}, {"n": 0}, {"pid": 9, "n": 1, "at": None},
                 {"pid": float("inf"), "n": 0, "at": 1.0}, {"pid": 10, "n": [], "at": 1.0}):
        clocks.note(junk, now=11.0)
    assert not clocks.pending()
    assert round(clocks.rates[7], 1) == 10.0 and round(clocks.rates[8], 1) == 1.0
    reason = clocks.undilated(10)
    assert "process 8 ran at 1.0x" in reason and "LD_PRELOAD" in reason
    assert clocks.undilated(3) is not None and ClockReadings().undilated(10) is None


def _clock_posts(program: list[str], env: dict) -> dict:
    """Run `program` with the gate's bootstrap under `env`; the clock posts it made, as rates by pid."""
    from httpkit import JsonHandler, serve

    from gate.instrument.clock import ClockReadings
    from gate.instrument.environment import instrumented

    clocks = ClockReadings()

    class Handler(JsonHandler):
        def do_POST(self):
            doc = self.json_body()
            if self.path.endswith("/clock"):
                clocks.note(doc)
            self.reply(200, {})

    server, url = serve(Handler)
    full = instrumented({**env, "CHAOS_GATE_FN_URL": f"{url}/fn"})
    proc = subprocess.Popen(program, env=full)
    try:  # the program outlives its readings by far; it is stopped once they are in (a loaded machine is slow)
        deadline = time.monotonic() + 30
        while not clocks.rates and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
        server.shutdown()
    return clocks.rates


@needs_library
@pytest.mark.parametrize("runtime", ["python", "node"])
def test_the_bootstrap_reports_the_agents_own_clock_rate(runtime):
    """Python and Node processes under the gate's bootstrap say how fast their clock runs: about 10x
    when dilated, about 1x when a launcher dropped LD_PRELOAD (what the runner then refuses)."""
    import os

    if runtime == "node" and shutil.which("node") is None:
        pytest.skip("no node")
    program = [sys.executable, "-c", "import time; time.sleep(30)"] if runtime == "python" else \
        ["node", "-e", "setTimeout(() => {}, 30000)"]
    library = next(lib for lib in dilation.candidates() if dilation.probe(lib, 10))
    fast = _clock_posts(program, dilation.dilated(dict(os.environ), library, 10))
    slow = _clock_posts(["env", "-u", "LD_PRELOAD", *program], dilation.dilated(dict(os.environ), library, 10))
    # Real time is taken as each reading arrives: a loaded machine that delays the first more than the
    # second reads a dilated clock as faster than 10x (17x once on CI), never an undilated one as 10x.
    assert len(fast) == 1 and 4 < next(iter(fast.values())) < 30, fast
    assert len(slow) == 1 and 0.5 < next(iter(slow.values())) < 2, slow


@needs_library
def test_an_agent_that_sheds_libfaketime_is_refused_not_judged(tmp_path):
    """The probe passes (the library works here), but the agent's launcher clears LD_PRELOAD: the run
    is an error naming the agent's own clock rate, never a verdict on deadlines ten times too short."""
    import yaml

    shutil.copytree(SDK.parent, tmp_path / "agent", ignore=shutil.ignore_patterns("__pycache__"))
    doc = yaml.safe_load(SDK.read_text())
    doc["agent"]["start"]["command"] = ["env", "-u", "LD_PRELOAD", *doc["agent"]["start"]["command"]]
    doc["concurrency"] = 1
    config = tmp_path / "agent" / "chaos-gate.yaml"
    config.write_text(yaml.safe_dump(doc))
    out = tmp_path / "out"
    code = main(["run", "-c", str(config), "-o", str(out), "--quiet", "--time-scale", "10"])
    report = load_report(out)
    assert code != 0 and report["verdict"]["verdict"] == "error", report["verdict"]["verdict"]
    assert "the agent's own clock did not speed up" in json.dumps(report["verdict"])


def test_a_library_that_hangs_timed_waits_is_said_beside_the_verdict(monkeypatch):
    """Debian's libfaketime hangs `threading.Event().wait(timeout)` under a speed-up: an agent waiting so
    would end agent_timeout by the dilation's doing. The run's warnings say so; a library whose timed
    waits return says nothing."""
    monkeypatch.setattr(dilation, "library_for", lambda scale: "/lib/libfaketime.so.1")
    monkeypatch.setattr(dilation, "_timed_waits", {})
    scripts = []

    def hangs(library, scale, env=None, script=dilation.PROBE):
        scripts.append(script)
        return None
    monkeypatch.setattr(dilation, "probe", hangs)
    caveat = dilation.timed_wait_caveat(10)
    assert "hangs timed waits" in caveat and "time_scale 1" in caveat
    assert scripts == [dilation.TIMED_WAIT_PROBE] and "Event().wait(" in scripts[0]
    dilation.timed_wait_caveat(10)
    assert len(scripts) == 1  # probed once per library and scale
    monkeypatch.setattr(dilation, "_timed_waits", {})
    monkeypatch.setattr(dilation, "probe", lambda library, scale, env=None, script=dilation.PROBE: 10.0)
    assert dilation.timed_wait_caveat(10) is None
