"""The start-up cost of running the agent as another user (gate/agent/separation.py), and its ratio.

Two measures, each with `agent.user: off` (the gate's own user), as the separated user, and as the
separated user in a network namespace of its own (`agent.network: proxy-only`, gate/agent/netns.py),
alternated so a busy machine slows all alike:
- an agent's start: AgentProcess.spawn until it answers a GET (a stdlib HTTP agent under the
  system python3, which the separated user can read; polled every millisecond, as the gate's own 50 ms
  readiness poll would round every start to a multiple of 50 ms), median of N starts;
- a whole one-cell run of the real CLI on that agent (what a user waits for), median of M runs.
Goal (issue 41): the separation adds under 5 % to a cell; the last line puts what each mode adds to an
agent's start over the time of a one-cell run (the start happens once per worker, so a run of more cells
pays it less). Needs root; prints why not otherwise.

    python bench/bench_isolation.py [--starts 20] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PYTHON = "/usr/bin/python3"
AGENT = textwrap.dedent("""
    import http.server, json, os
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def _ok(self):
            body = json.dumps({"reply": "hello"}).encode()
            self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers()
            self.wfile.write(body)
        do_GET = do_POST = _ok
    http.server.HTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
    """)


MODES = {"off": ("off", "host"), "separated": ("auto", "host"), "proxy-only": ("auto", "proxy-only")}


def answers(port: int) -> bool:
    """An answer to a GET, not just an accepted connection: under proxy-only the gate's relay accepts at once."""
    with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
        sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
        return sock.recv(12).startswith(b"HTTP/")


def one_start(folder: Path, user: str, network: str) -> float:
    from gate.agent import separation
    from gate.agent.ports import free_port
    from gate.agent.process import AgentProcess

    port = free_port()
    proc = AgentProcess([PYTHON, str(folder / "agent.py")], folder, {"PORT": str(port), "PATH": "/usr/bin:/bin"},
                        folder / "agent.log", user=user, network=network, port=port, proxy_ports=(free_port(),))
    began = time.perf_counter()
    proc.spawn()
    try:
        while time.perf_counter() - began < 20:  # a connect every millisecond: the gate's own 50 ms poll would
            try:                                 # round every start to a multiple of it
                if answers(port):
                    return time.perf_counter() - began
            except OSError:
                pass
            time.sleep(0.001)
        raise TimeoutError("the agent did not listen within 20 s")
    finally:
        proc.stop()
        separation.end_run()


def one_run(folder: Path, user: str, network: str) -> float:
    config = folder / f"chaos-gate-{user}-{network}.yaml"
    config.write_text(textwrap.dedent(f"""
        agent:
          user: {user}
          network: {network}
          start: {{command: [{PYTHON}, {folder / 'agent.py'}]}}
          invoke: {{http: {{url: "{{{{url}}}}/chat", output: $.reply}}}}
          offline: true
        inputs: [{{id: hello, text: hi}}]
        mutation: {{enabled: false}}
        """))
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(config), "-o", str(folder / f"out-{user}"),
                           "--quiet"], cwd=ROOT, check=False, capture_output=True, text=True)
    took = time.perf_counter() - began
    if done.returncode > 1:  # it could not judge: no cell ran, so the time measured nothing
        raise SystemExit(f"the one-cell run as {user}, {network} failed:\n{done.stderr[-2000:]}")
    return took


def compare(measure, folder: Path, times: int, user: str) -> dict[str, float]:
    found: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(times):
        for mode, (who, network) in MODES.items():
            found[mode].append(measure(folder, user if who == "auto" else who, network))
    return {mode: statistics.median(values) for mode, values in found.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--user", default="auto", help="the separated user (default: chaos-agent, else nobody)")
    args = parser.parse_args()
    if os.geteuid() != 0 or not os.path.exists(PYTHON):
        print(f"needs root and {PYTHON}: the separation only happens as root")
        return 1
    folder = Path(tempfile.mkdtemp(prefix="bench-isolation-"))
    folder.chmod(0o755)
    (folder / "agent.py").write_text(AGENT)
    medians = {}
    for label, measure, times in (("agent start", one_start, args.starts), ("one-cell run", one_run, args.runs)):
        medians[label] = found = compare(measure, folder, times, args.user)
        print(f"{label:>13}: " + " · ".join(f"{mode} {found[mode] * 1000:7.1f} ms" for mode in MODES)
              + f" (median of {times})")
    start, cell = medians["agent start"], medians["one-cell run"]["off"]
    print(f"{'of a cell':>13}: " + " · ".join(
        f"{mode} adds {(start[mode] - start['off']) * 1000:+.1f} ms = {(start[mode] - start['off']) / cell:+.1%}"
        for mode in list(MODES)[1:]) + f" of a one-cell run ({cell * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
