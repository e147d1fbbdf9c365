"""agent-chaos-gate: a CI gate that attacks an AI agent and scores its resilience.

The public surface is deliberately small (httpx-style): load a config, run it,
get a Report. Everything else lives in one package per concern, in layers that import only
downwards (pyproject.toml's import contract; docs/architecture.md):

    edges (cli, github, pytest_plugin) > run (runner, agent, proxy) > judge (verdict, scoring)
    > report > core (plan, config, faults, contracts, dialects)
"""

from gate.errors import ConfigError, GateError, HarnessError

from gate.version import __version__

__all__ = ["ConfigError", "GateError", "HarnessError", "__version__", "load_config", "run_gate"]


def load_config(path):
    """Load and validate a chaos-gate.yaml file; raises ConfigError with file:line on bad input."""
    from gate.plan import load_config as _load

    return _load(path)


def run_gate(config, **options):
    """Run every stage of a loaded config and return the canonical Report."""
    from gate.runner import run_gate as _run

    return _run(config, **options)
