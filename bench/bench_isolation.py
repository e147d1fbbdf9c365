"""The start-up cost of running the agent as another user (gate/agent/separation.py), and its ratio.

Two measures, each with `agent.user: off` (the gate's own user) and as the separated user, alternated
so a busy machine slows both alike:
- an agent's start: AgentProcess.spawn to its first ready answer (a stdlib HTTP agent under the system
  python3, which the separated user can read), median of N starts;
- a whole one-cell run of the real CLI on that agent (what a user waits for), median of M runs.
Goal (issue 41): the separation adds under 5 % to a cell. Needs root; prints why not otherwise.

    python bench/bench_isolation.py [--starts 20] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
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


def one_start(folder: Path, user: str) -> float:
    from gate.agent import separation
    from gate.agent.process import AgentProcess, free_port

    port = free_port()
    proc = AgentProcess([PYTHON, str(folder / "agent.py")], folder, {"PORT": str(port), "PATH": "/usr/bin:/bin"},
                        folder / "agent.log", user=user)
    began = time.perf_counter()
    proc.spawn()
    try:
        asyncio.run(proc.wait_ready(f"http://127.0.0.1:{port}/", None, 20))
        return time.perf_counter() - began
    finally:
        proc.stop()
        separation.end_run()


def one_run(folder: Path, user: str) -> float:
    config = folder / f"chaos-gate-{user}.yaml"
    config.write_text(textwrap.dedent(f"""
        agent:
          user: {user}
          start: {{command: [{PYTHON}, {folder / 'agent.py'}]}}
          invoke: {{http: {{url: "{{{{url}}}}/chat", output: $.reply}}}}
          offline: true
        inputs: [{{id: hello, text: hi}}]
        mutation: {{enabled: false}}
        """))
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gate", "run", "-c", str(config), "-o", str(folder / f"out-{user}"),
                    "--quiet"], cwd=ROOT, check=False, capture_output=True)
    return time.perf_counter() - began


def compare(measure, folder: Path, times: int, user: str) -> tuple[float, float]:
    plain, separated = [], []
    for _ in range(times):
        plain.append(measure(folder, "off"))
        separated.append(measure(folder, user))
    return statistics.median(plain), statistics.median(separated)


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
    for label, measure, times in (("agent start", one_start, args.starts), ("one-cell run", one_run, args.runs)):
        plain, separated = compare(measure, folder, times, args.user)
        print(f"{label:>13}: off {plain * 1000:7.1f} ms · separated {separated * 1000:7.1f} ms · "
              f"ratio {separated / plain:.3f} (+{(separated - plain) * 1000:.1f} ms, median of {times})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
