"""Runner: workers (agent instance + attachments) executing the plan's cells; the verdict is
gate/verdict's."""

from gate.runner.gate_run import plan_for, run_gate

__all__ = ["plan_for", "run_gate"]
