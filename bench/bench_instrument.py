"""Added cost of an instrumented local tool call, measured side by side in one run.

An agent process calls a small local function N times three ways: bare (no
instrumentation), instrumented with no cell running (the proxy passes it through,
traced as stray), and instrumented inside a cell (traced, the schedule consulted,
one fault that never matches). Prints the median and p99 per call for each, the added
median over bare in microseconds, and the instrumented time relative to a whole LLM
round trip through the same proxy (the unit an agent's turn is made of).

Then the Node preload's start-up cost: a Node agent bare and under `NODE_OPTIONS=--require` the
gate's preload, side by side in one run (interleaved rounds, medians, the ratio beside them): a
CommonJS and an ESM agent, each in a folder with no seam package and in one with the npm `openai`
package installed (on a Node with only `module.register`, an ESM entry near a seam package other
than a prototype one is the one case that starts the loader thread; near `openai` alone the preload
imports its seam file instead, which an agent that never imports it pays for), an ESM agent that
imports `openai` there, one that imports the MCP client (tests/agents/inprocess_node: openai and the
MCP SDK, both imported by the preload) and one that imports the AI SDK (the loader's case).

    python bench/bench_instrument.py [--calls 2000] [--starts 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

AGENT = r'''
import json, sys, time
from chaos_gate_agent.call import call_sync, PLAIN
def lookup(order_id):
    return {"order_id": order_id, "status": "delivered", "items": [{"sku": "w", "price": 19.99}]}
n, mode = int(sys.argv[1]), sys.argv[2]
times = []
for i in range(n):
    t = time.perf_counter()
    if mode == "bare":
        lookup("1234")
    else:
        call_sync(PLAIN, "lookup_order", {"order_id": "1234"}, lambda: lookup("1234"))
    times.append(time.perf_counter() - t)
llm = []
if mode == "cell":
    import os, urllib.request
    url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
    body = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]}).encode()
    for i in range(200):
        t = time.perf_counter()
        urllib.request.urlopen(urllib.request.Request(url, body, {"content-type": "application/json",
                                                                  "authorization": "Bearer sk-x"})).read()
        llm.append(time.perf_counter() - t)
print(json.dumps({"calls": times, "llm": llm}))
'''


def run(mode: str, calls: int, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", AGENT, str(calls), mode], env=env, capture_output=True, text=True,
                         check=True, timeout=600)
    return json.loads(out.stdout)


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e6, ordered[int(len(ordered) * 0.99) - 1] * 1e6


# name -> (file name, text, folder): a do-nothing agent of each module system, and ones that load a seam
NODE_AGENTS = {
    "CJS agent": ("agent.cjs", "1;\n", None),
    "ESM agent": ("agent.mjs", "1;\n", None),
    "ESM agent importing openai": ("agent.mjs", "import OpenAI from 'openai';\n", None),
    "ESM agent importing the MCP client": ("agent.mjs", "import { Client } from "
                                                        "'@modelcontextprotocol/sdk/client/index.js';\n"
                                                        "import OpenAI from 'openai';\n", "inprocess_node"),
    "ESM agent importing ai": ("agent.mjs", "import { generateText } from 'ai';\n"
                                            "import { openai } from '@ai-sdk/openai';\n", "node_frameworks"),
}


def node_starts(rounds: int) -> None:
    """Median wall time of a Node agent's start, bare and preloaded: a CommonJS and an ESM agent, each in a
    folder with no seam package and in one with `openai` installed (a link to tests/agents/inprocess_node's,
    an empty folder without it), an ESM agent importing it there, and ESM agents importing the MCP client
    and the AI SDK from their test agents' node_modules (when installed)."""
    import shutil
    import tempfile
    import time

    from gate.instrument import environment

    if shutil.which("node") is None:
        print("node start-up: no node on PATH")
        return
    agents = ROOT / "tests" / "agents"
    openai = agents / "inprocess_node" / "node_modules" / "openai"
    env = {**os.environ, "CHAOS_GATE_FN_URL": "http://127.0.0.1:9/fn"}
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as with_seam:
        (Path(with_seam) / "node_modules").mkdir()
        if openai.exists():
            (Path(with_seam) / "node_modules" / "openai").symlink_to(openai, target_is_directory=True)
        else:
            (Path(with_seam) / "node_modules" / "openai").mkdir()
        cases = {}
        for agent, (name, text, folder) in NODE_AGENTS.items():
            if folder:
                if (agents / folder / "node_modules").exists():
                    bench_dir = Path(tempfile.mkdtemp(dir=agents / folder, prefix=".bench-"))
                    cases[(agent, "its node_modules")] = bench_dir / name
            elif "importing" in agent:
                if openai.exists():
                    cases[(agent, "openai near")] = Path(with_seam) / "importing" / name
            else:
                cases[(agent, "no seam package")] = Path(empty) / name
                cases[(agent, "openai near, unused")] = Path(with_seam) / name
            for script in [p for (a, _), p in cases.items() if a == agent]:
                script.parent.mkdir(exist_ok=True)
                script.write_text(text)
        times = {(case, m): [] for case in cases for m in ("bare", "preload")}
        try:
            for _ in range(rounds):  # interleaved, so a busy moment hits every column alike
                for case, script in cases.items():
                    for mode, e in (("bare", env), ("preload", environment.instrumented(env))):
                        began = time.perf_counter()
                        subprocess.run(["node", script.name], env=e, cwd=script.parent, check=True)
                        times[(case, mode)].append(time.perf_counter() - began)
        finally:
            for (agent, _), script in cases.items():
                if NODE_AGENTS[agent][2]:
                    shutil.rmtree(script.parent, ignore_errors=True)
    version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"\nnode {version} start-up{'':32}{'bare ms':>10}{'preload ms':>12}{'ratio':>8}")
    for agent, where in cases:
        bare, pre = (statistics.median(times[((agent, where), m)]) * 1e3 for m in ("bare", "preload"))
        print(f"{agent + ', ' + where:62}{bare:10.1f}{pre:12.1f}{pre / bare:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--starts", type=int, default=15, help="rounds of the Node start-up measure")
    parser.add_argument("--node-only", action="store_true", help="only the Node start-up measure")
    args = parser.parse_args()
    if args.node_only:
        return node_starts(args.starts)
    from gate.instrument import environment
    from proxy_harness import sim_proxy

    with sim_proxy() as proxy:
        base = {**os.environ, "PYTHONPATH": str(environment.PYTHON_BOOTSTRAP)}
        bare = run("bare", args.calls, base)
        stray = run("stray", args.calls, environment.instrumented({**os.environ, **proxy.env}))
        proxy.begin({"kind": "error", "tool": "never_called_tool"})
        cell = run("cell", args.calls, environment.instrumented({**os.environ, **proxy.env}))
        traced = proxy.end()
    assert len([e for e in traced if e.target == "functions"]) == args.calls
    rows = [("bare call", *stats(bare["calls"])), ("instrumented, no cell", *stats(stray["calls"])),
            ("instrumented, in a cell", *stats(cell["calls"]))]
    print(f"{'':26}{'median us':>12}{'p99 us':>12}")
    for name, med, p99 in rows:
        print(f"{name:26}{med:12.1f}{p99:12.1f}")
    llm_med, _ = stats(cell["llm"])
    added = rows[2][1] - rows[0][1]
    print(f"added per instrumented call (in a cell): {added:.1f} us")
    print(f"one sim LLM round trip through the same proxy: {llm_med:.1f} us; "
          f"an instrumented tool call costs {added / llm_med:.2f}x of it")
    node_starts(args.starts)


if __name__ == "__main__":
    main()
