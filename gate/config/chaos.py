"""Config models for the wire: LLM and tool upstreams, the sim, faults, scenarios, profiles.

Faults form a tagged union over the fault catalog (gate/faults), exactly as
invariants do over theirs (built lazily: gate/config/catalog_union.py), so a new fault kind appears in validation, JSON Schema
and docs without touching this file.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from gate.config.catalog_union import CatalogUnion
from gate.config.explore import ExploreConfig
from gate.config.sim import SimConfig, SimRule  # noqa: F401  (re-exported: part of the wire config)
from gate.contracts.base import StrictModel
from gate.faults import FAULTS
from gate.faults.base import FaultBase

Fault = Annotated[FaultBase, CatalogUnion(FAULTS, "kind")]

DEFAULT_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL", "gemini": "GOOGLE_GEMINI_BASE_URL",
               "azure": "AZURE_OPENAI_ENDPOINT"}
# The other names clients read the same base URL from, set beside the default (each checked in the client's
# source): LiteLLM (and so DSPy) and LlamaIndex read OPENAI_API_BASE; LiteLLM reads ANTHROPIC_API_BASE,
# GEMINI_API_BASE and, for `azure/` models, AZURE_API_BASE; langchain-anthropic reads ANTHROPIC_API_URL before
# ANTHROPIC_BASE_URL. An Azure endpoint is the resource's root: the clients append /openai/deployments/<d>/….
ALIAS_ENV = {"openai": ("OPENAI_API_BASE",), "anthropic": ("ANTHROPIC_API_BASE", "ANTHROPIC_API_URL"),
             "gemini": ("GEMINI_API_BASE",), "azure": ("AZURE_API_BASE",)}
# The wire family a provider speaks (its dialects, its error shapes): Azure OpenAI is the OpenAI wire.
WIRE = {"azure": "openai"}
# What a client needs besides the URL to be built at all, set for a `sim` upstream only (a real one needs the
# user's own values): AzureOpenAI raises without an api_version, read from OPENAI_API_VERSION (openai,
# langchain-openai), AZURE_OPENAI_API_VERSION (Semantic Kernel, Azure's samples) or AZURE_API_VERSION (LiteLLM).
AZURE_API_VERSION = "2025-04-01-preview"
SIM_ENV = {"azure": {"OPENAI_API_VERSION": AZURE_API_VERSION, "AZURE_OPENAI_API_VERSION": AZURE_API_VERSION,
                     "AZURE_API_VERSION": AZURE_API_VERSION}}


class LlmUpstream(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    provider: Literal["openai", "anthropic", "gemini", "azure", "generic"] = Field(
        default="openai", description="The API the agent's client speaks: openai, anthropic, gemini, azure (Azure "
                                      "OpenAI: /openai/deployments/<deployment>/…?api-version=, the OpenAI wire), "
                                      "or generic.")
    env: str | None = Field(default=None, description="Env var pointed at the proxy (default by provider).")
    upstream: str = Field(default="sim", description="Base URL of the real API, or `sim` for the scripted model.")

    @property
    def env_var(self) -> str:
        return self.env or DEFAULT_ENV.get(self.provider, f"{self.name.upper()}_BASE_URL")

    @property
    def env_vars(self) -> tuple[str, ...]:
        """Every env var pointed at the proxy: `env` alone when given, else the provider's names."""
        return (self.env,) if self.env else (self.env_var, *ALIAS_ENV.get(self.provider, ()))

    @property
    def wire(self) -> str:
        """The provider family whose dialects and error shapes this upstream speaks (gate/dialects)."""
        return WIRE.get(self.provider, self.provider)

    @property
    def sim_env(self) -> dict[str, str]:
        """What the agent's client needs besides the URL, when the upstream is the sim (SIM_ENV)."""
        return dict(SIM_ENV.get(self.provider, {})) if self.upstream == "sim" else {}


IN_PROCESS_KINDS = ("command", "function")  # reached inside the agent (gate/instrument), not through a URL


class ToolUpstream(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="The upstream's name; for `kind: command`, the "
                                                                  "command's name as the agent runs it (git); for "
                                                                  "`kind: function`, the tool's name in the trace.")
    env: str | None = Field(default=None, description="Env var the agent reads its tool base URL from "
                                                      "(http, mcp).")
    upstream: str | None = Field(default=None, description="Base URL of the real tool service (http, mcp).")
    kind: Literal["http", "mcp", "command", "function"] = Field(
        default="http", description="http, mcp (streamable HTTP), command: a command-line tool the agent runs, "
                                    "reached through a shim first on its PATH (gate/instrument/commands.py), or "
                                    "function: a Python function the agent calls, named by `function`, wrapped "
                                    "where the agent looks it up (any framework, or none).")
    function: str | None = Field(default=None, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$",
                                 description="`kind: function`: MODULE:ATTR of a Python function (weather.tools:"
                                             "get_weather; ATTR may be Class.method), wrapped when the agent's "
                                             "process imports MODULE.")
    module: str | None = Field(default=None, min_length=1,
                               description="`kind: function` in a Node agent: the module that defines it, as "
                                           "`require` resolves it from the agent's working directory (./tools.js, "
                                           "or a package name); CommonJS or ESM.")
    writes: bool | None = Field(default=None,
                                description="Whether a call changes anything (for an MCP upstream: a call of any of "
                                            "its tools). Overrides the server's readOnlyHint, the tool's name and the "
                                            "HTTP method (gate/contracts/writes.py); side_effect_once counts repeats "
                                            "of writes only.")
    export: str | None = Field(default=None, pattern=r"^(?:[A-Za-z_$][\w$]*)$",
                               description="`kind: function` in a Node agent: the name `module` exports the "
                                           "function under (getWeather, or default).")

    @property
    def declared(self) -> str | None:
        """A `kind: function` tool's function as one string: MODULE:ATTR (Python) or module:export (Node)."""
        return self.function if self.function is not None else \
            (f"{self.module}:{self.export}" if self.module is not None else None)

    @model_validator(mode="after")
    def _keys_of_kind(self):
        """A command or a function is found inside the agent, so it has no URL; a served tool needs both."""
        node = [k for k in ("module", "export") if getattr(self, k) is not None]
        if self.kind != "function" and (self.function is not None or node):
            named = "`function: MODULE:ATTR`" if self.function is not None else "`module:` and `export:`"
            raise ValueError(f"{named} name the function of a `kind: function` tool, and only of one: add "
                             f"`kind: function`, or drop them")
        if self.kind == "function" and self.function is not None and node:
            raise ValueError("a `kind: function` tool is either a Python function (`function: MODULE:ATTR`) or a "
                             "Node one (`module:` and `export:`), not both: keep the one the agent runs")
        if self.kind == "function" and len(node) == 1:
            raise ValueError(f"a Node `kind: function` tool needs both `module:` and `export:` (e.g. module: "
                             f"./tools.js, export: getWeather); add `{'export' if node == ['module'] else 'module'}:`")
        if self.kind == "function" and self.function is None and not node:
            raise ValueError("a `kind: function` tool needs `function: MODULE:ATTR` (Python, e.g. "
                             "weather.tools:get_weather) or `module:` and `export:` (Node, e.g. module: ./tools.js, "
                             "export: getWeather)")
        given = [k for k in ("env", "upstream") if getattr(self, k) is not None]
        if self.kind == "command" and given:
            raise ValueError(f"a `kind: command` tool takes no {' or '.join(repr(k) for k in given)}: the gate "
                             f"puts a shim named '{self.name}' first on the agent's PATH and runs the real "
                             f"command from there")
        if self.kind == "function" and given:
            raise ValueError(f"a `kind: function` tool takes no {' or '.join(repr(k) for k in given)}: the gate "
                             f"wraps {self.declared} inside the agent's process")
        missing = [f"'{k}' ({what})" for k, what in (("env", "the env var the agent reads its URL from"),
                                                       ("upstream", "the real service's base URL"))
                   if getattr(self, k) is None]
        if self.kind not in IN_PROCESS_KINDS and missing:
            raise ValueError(f"a `kind: {self.kind}` tool needs {' and '.join(missing)}; a command-line tool the "
                             f"agent runs is `kind: command`, a function it calls `kind: function`")
        return self


class Scenario(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    description: str | None = None
    profiles: list[str] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)


class ChaosConfig(StrictModel):
    enabled: bool = True
    profiles: list[str] = Field(default_factory=list, description="Built-in or local profiles; one scenario each.")
    faults: list[Fault] = Field(default_factory=list, description="Ad-hoc faults, run as the scenario `custom`.")
    scenarios: list[Scenario] = Field(default_factory=list)  # unique names: gate/config/references.py
    explore: ExploreConfig | bool | None = Field(
        default=None, description="Fault every call site the baselines reach, judged by the universal oracles "
                                  "(docs/explore.md). Unset: on when the config names no fault; `off` (false): "
                                  "never; `on` (true) or a mapping: on, beside any scenarios.")


class Profile(StrictModel):
    """A file in profiles/: a named, documented fault set."""

    name: str
    description: str
    faults: list[Fault] = Field(min_length=1)
    cascade: bool = Field(default=False, description="The faults are one story (each sets up the next): run them "
                                                     "together in one cell, not one cell per fault.")
