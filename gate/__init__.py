"""agent-chaos-gate: a CI gate that attacks an AI agent and scores its resilience.

The public surface is deliberately small (httpx-style): load a config, run it,
get a Report. Everything else lives in one package per concern:

    config -> plan -> runner (agent + worker) -> contracts -> scoring -> report
"""

from gate.errors import ConfigError, GateError, HarnessError

__version__ = "0.1.0"

__all__ = ["ConfigError", "GateError", "HarnessError", "__version__", "load_config", "run_gate"]


def load_config(path):
    """Load and validate a chaos-gate.yaml file; raises ConfigError with file:line on bad input."""
    from gate.config import load_config as _load

    return _load(path)


def run_gate(config, **options):
    """Run every stage of a loaded config and return the canonical Report."""
    from gate.runner import run_gate as _run

    return _run(config, **options)
