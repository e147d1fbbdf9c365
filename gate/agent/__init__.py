"""Agent lifecycle: start (command or existing URL), readiness, invoke, reset, teardown.

`AgentInstance` and `RawOutcome` are imported on first use, so that `validate` and `plan`, which
only render templates (gate.templates), do not pay for httpx (~60 ms of start-up).
"""

__all__ = ["AgentInstance", "RawOutcome"]


def __getattr__(name: str):
    if name == "AgentInstance":
        from gate.agent.instance import AgentInstance

        return AgentInstance
    if name == "RawOutcome":
        from gate.agent.invoke import RawOutcome

        return RawOutcome
    raise AttributeError(f"module 'gate.agent' has no attribute {name!r}")
