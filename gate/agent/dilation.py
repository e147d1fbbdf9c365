"""Time dilation: the agent's clock runs N times fast, so fault waits cost 1/N of real time.

A chaos suite is bound by waits (a held tool, a Retry-After, an agent cut at its
deadline), and a black-box agent cannot be handed an injected clock. libfaketime can
give it one: LD_PRELOAD'ed with `FAKETIME="+0 xN"`, it speeds up the clocks, sleeps,
timers and poll timeouts of any dynamically linked program (Python, Node), so the
agent's own timeouts and backoff run on its clock.

The gate then keeps one time base, the agent's: every duration a config or a fault
names is agent time, executed at 1/N real time by the proxy, and every timing it
reports is agent time (gate/proxy/app.py RunState, gate/agent/instance.py).

Dilation is verified, never assumed: `verify` finds a library that really speeds up
a probe process under the agent's own environment (a library that loads but does not
dilate, or hangs, as the PyPI wheel's build does on this machine, is rejected), and
refuses a container agent or a statically linked one with its reason. Once the agent runs,
its own clock is checked too, from inside it (gate/instrument/clock.py).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from gate.errors import ConfigError

ENV_LIBRARY = "CHAOS_GATE_LIBFAKETIME"  # a path that overrides the search
SYSTEM_GLOBS = ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1",
                "/usr/local/lib/faketime/libfaketime.so.1", "/usr/lib64/faketime/libfaketime.so.1")
PROBE = "import sys, time; print('ready', flush=True); time.sleep(2.0); print('done', flush=True)"
PROBE_AGENT_SECONDS = 2.0
# A timed wait on a condition (threading.Event/Condition/Queue/Future timeouts): some libfaketime builds hang
# in it under a speed-up (Debian's 0.9.10 does), which would hang an agent that waits so and blame it
TIMED_WAIT_PROBE = ("import threading; print('ready', flush=True); threading.Event().wait(2.0); "
                    "print('done', flush=True)")
_timed_waits: dict[tuple[str, float], bool] = {}  # (library, scale) -> its timed waits return
_verified: dict[tuple[str, float], str] = {}  # (library, scale) that passed the probe, per gate process


def candidates() -> list[str]:
    """Libraries to try, best first: an explicit path, the system package, the PyPI wheel."""
    found = [os.environ[ENV_LIBRARY]] if os.environ.get(ENV_LIBRARY) else []
    for pattern in SYSTEM_GLOBS:
        found += sorted(glob.glob(pattern))
    try:
        import libfaketime  # noqa: F401  (optional: `pip install libfaketime`)

        found += sorted(glob.glob(str(Path(libfaketime.__file__).parent / "vendor" / "*" / "src" / "libfaketime.so.1")))
    except ImportError:
        pass
    return list(dict.fromkeys(found))


def dilated(env: dict[str, str], library: str, scale: float) -> dict[str, str]:
    """`env` with the agent's clock at `scale`× (the agent's own LD_PRELOAD kept after ours)."""
    env = dict(env)
    env["LD_PRELOAD"] = library + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["FAKETIME"] = f"+0 x{scale:g}"
    env.pop("DONT_FAKE_MONOTONIC", None)  # asyncio and Node timers run on the monotonic clock
    env["CHAOS_GATE_TIME_SCALE"] = f"{scale:g}"  # the bootstrap then reports the agent's own clock (gate/instrument/clock.py)
    return env


def probe(library: str, scale: float, env: dict[str, str] | None = None, script: str = PROBE) -> float | None:
    """The measured rate of a probe process's clock under `library`, or None if it failed or hung.

    The gate times the probe's sleep from outside, between two lines it prints, so the
    interpreter's start-up (CPU work, not faster under dilation) does not count."""
    budget = max(2.0, 3 * PROBE_AGENT_SECONDS / scale + 1.0)
    try:
        proc = subprocess.Popen([sys.executable, "-S", "-c", script], env=dilated(env or dict(os.environ), library, scale),
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return None
    try:
        return _time_probe(proc, budget)
    finally:
        proc.kill()
        proc.wait()


def _time_probe(proc: subprocess.Popen, budget: float) -> float | None:
    import selectors

    lines, marks, deadline = [], [], time.monotonic() + 10 + budget  # 10 s for the interpreter to start
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while len(lines) < 2:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(timeout=left):
                return None
            line = proc.stdout.readline()
            if not line:
                return None
            lines.append(line.strip())
            marks.append(time.monotonic())
            if len(lines) == 1:
                deadline = time.monotonic() + budget
    real = marks[1] - marks[0]
    return PROBE_AGENT_SECONDS / real if lines == ["ready", "done"] and real > 0 else None


def is_static(executable: str) -> bool:
    """A statically linked ELF binary (no program interpreter): LD_PRELOAD cannot reach it."""
    try:
        with open(executable, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return False
    return head[:4] == b"\x7fELF" and b"/ld-linux" not in head and b"ld-musl" not in head


def _executable(command) -> str | None:
    if isinstance(command, str):
        return None  # a shell line: its programs are dynamically linked as /bin/sh is, or the probe cannot know
    return shutil.which(command[0]) if command else None


def library_for(scale: float) -> str | None:
    """The library `verify` accepted for this scale in this process (None at 1x)."""
    return None if scale <= 1 else next((lib for (lib, sc) in _verified if sc == scale), None)


def verify(config) -> str:
    """The library to preload for this config's agent at its time_scale; ConfigError saying why not."""
    scale = config.agent.time_scale
    start = config.agent.start
    if start is not None and start.docker is not None:
        raise ConfigError(f"agent.time_scale {scale:g} cannot apply: the agent runs in a container, where the gate "
                          "cannot preload libfaketime (set time_scale: 1, or run the agent as a process)")
    if start is None and config.agent.invoke.command is None:
        raise ConfigError(f"agent.time_scale {scale:g} cannot apply: the agent is already running at agent.url, so "
                          "the gate does not start it (set time_scale: 1, or give agent.start)")
    command = start.command if start is not None else config.agent.invoke.command.command
    exe = _executable(command)
    if exe is not None and is_static(exe):
        raise ConfigError(f"agent.time_scale {scale:g} cannot apply: {exe} is statically linked, so libfaketime "
                          "cannot reach its clock (set time_scale: 1)")
    tried = []
    for library in candidates():
        if (library, scale) in _verified:
            return library
        rate = probe(library, scale)
        if rate is not None and rate >= scale * 0.5:
            _verified[(library, scale)] = library
            return library
        tried.append(f"{library} ({'no answer' if rate is None else f'clock ran {rate:.1f}x'})")
    if not tried:
        raise ConfigError(f"agent.time_scale {scale:g} needs libfaketime, and none was found: install the system "
                          "package (apt-get install libfaketime) or point CHAOS_GATE_LIBFAKETIME at the library")
    raise ConfigError(f"agent.time_scale {scale:g}: no libfaketime dilated a probe process to at least "
                      f"{scale * 0.5:g}x; tried {', '.join(tried)}")


def timed_wait_caveat(scale: float) -> str | None:
    """A warning for the report when the verified library hangs timed waits at `scale` (probed once)."""
    library = library_for(scale)
    if library is None:
        return None
    if (library, scale) not in _timed_waits:
        _timed_waits[(library, scale)] = probe(library, scale, script=TIMED_WAIT_PROBE) is not None
    if _timed_waits[(library, scale)]:
        return None
    return (f"agent.time_scale {scale:g}: {library} hangs timed waits (threading Event/Condition/Queue and "
            "Future.result with a timeout) under a speed-up, so an agent that waits so never wakes: a cell that "
            "ended agent_timeout may be the dilation's, not the agent's — confirm it at time_scale 1")
