"""Framework environments for the seam tests: each framework in its own cached virtualenv.

The ten frameworks after the first five cannot share the test environment: installing them
would move its pinned pydantic, openai, google-genai, mcp, rich and starlette. They need not:
the agent under test is another process, so it can run on another interpreter. Each group
below is one virtualenv of pinned versions (CrewAI and Google ADK disagree on
opentelemetry-sdk, so they live apart; the oldest supported releases, tests/test_seam_oldest.py,
are groups of their own, as LangChain's of that day wants openai 1.x and the Agents SDK's 2.x),
built once with `uv` under ~/.cache/chaos-gate and reused while its pins are unchanged (the
folder is named by their hash). The Node frameworks share one `npm ci` of tests/agents/node_frameworks.

`python_for("crewai")` is the interpreter an agent on that framework runs with; a machine
that cannot build the group fails the test with the installer's own words (CI must run them).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("CHAOS_GATE_ENV_CACHE") or Path.home() / ".cache" / "chaos-gate" / "envs")
NODE_FRAMEWORKS = Path(__file__).resolve().parent / "agents" / "node_frameworks"

GROUPS = {
    "crew": ["crewai==1.15.30", "dspy==3.4.1", "smolagents[openai]==1.26.0", "agno==3.1.10", "openai==2.54.0"],
    "adk": ["google-adk==2.13.0", "llama-index-core==0.14.25", "llama-index-llms-openai==0.8.3",
            "strands-agents[openai]==1.62.0", "openai==2.54.0"],
    # the MCP SDK's 1.x line, which published apps still pin (the test env has 2.x)
    "mcp1": ["mcp==1.12.4", "pydantic==2.11.7", "openai==2.54.0"],  # pydantic as a lock of its day had it
    # LangGraph over langchain-mcp-adapters: every release of the adapter imports mcp 1.x names (0.3.2 pins
    # mcp<2), and the test env has mcp 2.x; the rest at the test env's own pins
    "langgraph-mcp": ["langchain-mcp-adapters==0.3.2", "mcp==1.30.0", "langgraph==1.2.24", "langgraph-prebuilt==1.1.3",
                      "langchain-openai==1.7.4", "langchain-core==1.8.3", "openai==3.51.0", "pydantic==2.13.4",
                      "httpx==0.28.1"],
    # the oldest release each seam supports (docs/reach.md), for the frameworks of the test env:
    # the first whose tool-invocation function the seam patches exists (tests/test_seam_oldest.py)
    "oldest": ["openai-agents==0.10.4", "pydantic-ai-slim[openai]==0.4.4", "anthropic==0.68.0",
               "google-genai==1.11.0", "openai==2.19.0", "pydantic==2.12.3",  # the floors openai-agents sets
               "opentelemetry-api==1.35.0"],  # pydantic-ai 0.4 imports `opentelemetry._events`, gone since
    # langchain-core 0.2.32 made `langchain_core.tools.base`; its LangGraph and langchain-openai want openai 1.x
    "oldest-langchain": ["langchain-core==0.2.32", "langgraph==0.2.4", "langchain-openai==0.1.21",
                         "openai==1.109.1", "pydantic==2.8.2"],
    # Agno 1.4.2: the first with `tool_hooks`, the sound twin's hook (the `execute` the seam patches is older)
    "oldest-agno": ["agno==1.4.2", "openai==1.109.1", "pydantic==2.11.4"],
    # one release below a floor: google-genai 1.10 calls functions, but has no async hook to patch
    "below-floor": ["google-genai==1.10.0", "pydantic==2.12.3"],
}
GROUP_OF = {"crewai": "crew", "dspy": "crew", "smolagents": "crew", "agno": "crew",
            "google-adk": "adk", "llama-index": "adk", "strands": "adk", "mcp1": "mcp1",
            "langgraph-mcp": "langgraph-mcp",
            "oldest": "oldest", "oldest-langchain": "oldest-langchain", "oldest-agno": "oldest-agno",
            "below-floor": "below-floor"}


def _folder(group: str) -> Path:
    digest = hashlib.sha256("\n".join(sorted(GROUPS[group])).encode()).hexdigest()[:12]
    return CACHE / f"{group}-{digest}"


def _uv() -> str:
    found = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not Path(found).exists():
        pytest.fail("uv is not installed: pip install -e '.[test]' installs it")
    return found


def python_for(framework: str) -> str:
    """The interpreter of `framework`'s group, built on first use (a lock keeps parallel builders apart)."""
    group = GROUP_OF[framework]
    folder = _folder(group)
    python = folder / "bin" / "python"
    if (folder / ".complete").exists():
        return str(python)
    CACHE.mkdir(parents=True, exist_ok=True)
    import fcntl

    with open(CACHE / f"{group}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".complete").exists():
            _build(folder, GROUPS[group])
    return str(python)


def _build(folder: Path, pins: list[str]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    uv = _uv()
    steps = [[uv, "venv", "-q", "-p", sys.executable, str(folder)],
             [uv, "pip", "install", "-q", "-p", str(folder / "bin" / "python"), *pins]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=900)
        if done.returncode:
            pytest.fail(f"could not build {folder.name}: {' '.join(step[:3])}: {done.stderr[-2000:]}")
    (folder / ".complete").write_text("\n".join(pins))


def node_frameworks() -> Path:
    """tests/agents/node_frameworks with its node_modules (`npm ci` once, under a lock)."""
    from conftest import npm_ci

    return npm_ci(NODE_FRAMEWORKS)
