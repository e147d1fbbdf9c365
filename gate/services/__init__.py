"""Services the agent depends on (`services:` in the config): started before the agents, torn down after.

`templates` resolves and checks `{{services.NAME.url}}`; `runtime` starts, health-checks and stops them.
Both are imported on first use: loading a config checks its templates, and importing `runtime` there
would pull in the agent layer and httpx (~60 ms) that `validate` and `plan` never need.
"""

__all__ = ["resolve_config", "running_services", "service_problems"]


def __getattr__(name: str):
    if name == "running_services":
        from gate.services.runtime import running_services

        return running_services
    if name in ("resolve_config", "service_problems"):
        from gate.services import templates

        return getattr(templates, name)
    raise AttributeError(f"module 'gate.services' has no attribute {name!r}")
