"""`{{services.NAME.url}}` (and `.host`, `.port`): where a service's address enters the config.

A service's port is only known once the gate picked it (and, in a container network, its
host once it runs), so these templates are resolved at run time, after the services are
up: the agent, tool and LLM upstreams, and worlds then see plain URLs. The checks here run
at load time, so a misspelt service name is a config error on its own line.
"""

from __future__ import annotations

import re
from typing import Any

from gate.config.models import Config
from gate.config.problems import Problem
from gate.config.value_checks import _strings, hint

SERVICE_REF = re.compile(r"\{\{\s*services\.([^.}\s]*)(?:\.([^}\s]*))?\s*\}\}")
ATTRS = ("url", "host", "port")
# sections whose strings may name a service; the order matters only for error messages
SECTIONS = ("agent", "llm", "tools", "worlds", "contract")  # contract: a state probe may ask a service
OWN_NAMES = ("host", "port")  # what a service's own url, env, command and ready.url may use
RESET_NAMES = ("url", "cell_id", "run")  # and its reset call, made before each cell run
OWN_TEMPLATE = re.compile(r"\{\{\s*([^}]*?)\s*\}\}")


def render_services(value: Any, known: dict[str, dict[str, str]]) -> Any:
    """`value` with every reference to a known service replaced; others are left for the checks."""
    if isinstance(value, str):
        def sub(m: re.Match) -> str:
            attrs = known.get(m.group(1))
            return attrs.get(m.group(2) or "", m.group(0)) if attrs else m.group(0)
        return SERVICE_REF.sub(sub, value)
    if isinstance(value, dict):
        return {render_services(k, known): render_services(v, known) for k, v in value.items()}
    if isinstance(value, list):
        return [render_services(v, known) for v in value]
    return value


def resolve_config(config: Config, known: dict[str, dict[str, str]]) -> Config:
    """The config the run uses: every `{{services.*}}` replaced by the running service's address."""
    if not known:
        return config
    update = {}
    for name in SECTIONS:
        section = getattr(config, name)
        dumped = section.model_dump(by_alias=True) if hasattr(section, "model_dump") else \
            [item.model_dump(by_alias=True) for item in section]
        rendered = render_services(dumped, known)
        if rendered != dumped:
            field = type(config).model_fields[name]
            update[name] = _revalidate(field.annotation, section, rendered)
    return config.model_copy(update=update) if update else config


def _revalidate(annotation, section, rendered):
    from pydantic import BaseModel, TypeAdapter

    fresh = TypeAdapter(annotation).validate_python(rendered)
    if isinstance(section, list):  # fields kept out of dumps (a world's code_dir) carry over as they were
        for new, old in zip(fresh, section, strict=False):
            if isinstance(old, BaseModel):
                for name, info in type(old).model_fields.items():
                    if info.exclude:
                        setattr(new, name, getattr(old, name))
    return fresh


# --- load-time checks --------------------------------------------------------------------------

def service_problems(config: Config) -> list[Problem]:
    """Duplicate names, references to services that do not exist (or start later), unknown templates."""
    names = [s.name for s in config.services]
    out = [Problem(("services", i, "name"), f"duplicate service name '{name}' (already used by "
                                             f"services[{names.index(name)}])")
           for i, name in enumerate(names) if names.index(name) != i]
    for section in SECTIONS:
        value = getattr(config, section)
        dumped = value.model_dump(by_alias=True) if hasattr(value, "model_dump") else \
            [item.model_dump(by_alias=True) for item in value]
        out += _reference_problems(dumped, (section,), names)
    for i, service in enumerate(config.services):
        loc = ("services", i)
        out += _reference_problems(service.env, loc + ("env",), names[:i], later=names[i:])
        out += _own_template_problems(service.url, loc + ("url",), OWN_NAMES)
        out += _own_template_problems(service.env, loc + ("env",), OWN_NAMES)
        out += _own_template_problems(service.ready.url, loc + ("ready", "url"), OWN_NAMES + ("url",))
        out += _reference_problems(service.command, loc + ("command",), names[:i], later=names[i:])
        out += _own_template_problems(service.command, loc + ("command",), OWN_NAMES)
        if service.reset is not None:
            dumped = service.reset.model_dump()
            out += _own_template_problems(dumped, loc + ("reset",), OWN_NAMES + RESET_NAMES)
        if (service.reset is not None or service.restart != "never") and config.concurrency > 1:
            what = "reset" if service.reset is not None else "restart"
            out.append(Problem(loc + (what,), f"service '{service.name}' is made fresh before every cell run, but "
                                             f"it is shared by all {config.concurrency} agent instances: one cell's "
                                             f"{what} would wipe another's state mid-run; set concurrency: 1"))
    return out


def _reference_problems(value: Any, loc, names: list[str], later: list[str] = ()) -> list[Problem]:
    out = []
    for at, text in _strings(value, loc):
        for m in SERVICE_REF.finditer(text):
            name, attr = m.group(1), m.group(2)
            if name in later:
                out.append(Problem(at, f"'{m.group(0)}': service '{name}' starts after this one; "
                                       "services start in the order they are listed"))
            elif name not in names:
                known = f"{hint(name, names)}" if names else " (no `services:` are configured)"
                out.append(Problem(at, f"'{m.group(0)}' names no service{known}"))
            elif attr not in ATTRS:
                out.append(Problem(at, f"'{m.group(0)}': a service has {', '.join(ATTRS)}"
                                       f"{hint(attr or '', ATTRS)}"))
    return out


def _own_template_problems(value: Any, loc, names: tuple[str, ...]) -> list[Problem]:
    out = []
    for at, text in _strings(value, loc):
        for m in OWN_TEMPLATE.finditer(text):
            name = m.group(1)
            if name not in names and not name.startswith("services."):
                known = ", ".join("{{" + n + "}}" for n in names)
                out.append(Problem(at, f"unknown template '{m.group(0)}'{hint(name, names)}; here a service "
                                       f"knows {known} and earlier services' {{{{services.NAME.url}}}}"))
    return out
