"""Runner: workers (agent instance + attachments) executing the plan's cells."""

from gate.runner.gate_run import assemble, plan_for, run_gate

__all__ = ["assemble", "plan_for", "run_gate"]
