"""Services the agent depends on (`services:` in the config): started before the agents, torn down after.

`templates` resolves and checks `{{services.NAME.url}}`; `runtime` starts, health-checks and stops them.
"""

from gate.services.runtime import running_services
from gate.services.templates import resolve_config, service_problems

__all__ = ["resolve_config", "running_services", "service_problems"]
