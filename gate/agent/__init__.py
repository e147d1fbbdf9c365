"""Agent lifecycle: start (command or existing URL), readiness, invoke, reset, teardown."""

from gate.agent.instance import AgentInstance
from gate.agent.invoke import RawOutcome

__all__ = ["AgentInstance", "RawOutcome"]
