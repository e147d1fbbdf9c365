"""Services the agent depends on (`services:` in the config): started before the agents, torn down after.

`runtime` starts, health-checks and stops them; `{{services.NAME.url}}` is checked at load and
resolved once the ports are known by gate/config/service_refs.py (a pure function of the config).
`runtime` is imported on first use: it pulls in the agent layer and httpx (~60 ms) that `validate`
and `plan` never need.
"""

__all__ = ["running_services"]


def __getattr__(name: str):
    if name == "running_services":
        from gate.services.runtime import running_services

        return running_services
    raise AttributeError(f"module 'gate.services' has no attribute {name!r}")
