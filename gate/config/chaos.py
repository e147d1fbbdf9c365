"""Config models for the wire: LLM and tool upstreams, the sim, faults, scenarios, profiles.

Faults form a tagged union over the fault catalog (gate/faults), exactly as
invariants do over theirs (built lazily: gate/config/catalog_union.py), so a new fault kind appears in validation, JSON Schema
and docs without touching this file.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from gate.config.catalog_union import CatalogUnion
from gate.config.sim import SimConfig, SimRule  # noqa: F401  (re-exported: part of the wire config)
from gate.contracts.base import StrictModel
from gate.faults import FAULTS
from gate.faults.base import FaultBase

Fault = Annotated[FaultBase, CatalogUnion(FAULTS, "kind")]

DEFAULT_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL", "gemini": "GOOGLE_GEMINI_BASE_URL"}


class LlmUpstream(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    provider: Literal["openai", "anthropic", "gemini", "generic"] = "openai"
    env: str | None = Field(default=None, description="Env var pointed at the proxy (default by provider).")
    upstream: str = Field(default="sim", description="Base URL of the real API, or `sim` for the scripted model.")

    @property
    def env_var(self) -> str:
        return self.env or DEFAULT_ENV.get(self.provider, f"{self.name.upper()}_BASE_URL")


class ToolUpstream(StrictModel):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    env: str = Field(description="Env var the agent reads its tool base URL from.")
    upstream: str = Field(description="Base URL of the real tool service.")
    kind: Literal["http", "mcp"] = "http"


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


class Profile(StrictModel):
    """A file in profiles/: a named, documented fault set."""

    name: str
    description: str
    faults: list[Fault] = Field(min_length=1)
