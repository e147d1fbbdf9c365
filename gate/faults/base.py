"""What every fault shares: where it applies (target + match), when it fires (trigger),
and the registry that makes adding a fault a one-file change (Toxiproxy-style).

A fault class's fields are its config parameters; its `apply(exchange)` coroutine is
its wire behaviour, written against the small Exchange interface of the proxy.
"""

from __future__ import annotations

import fnmatch
import re
from typing import ClassVar

from pydantic import ConfigDict, Field

from gate.contracts.base import Regex, StrictModel

LLM, TOOL = "llm", "tool"


class FaultBase(StrictModel):
    # built on first use: most configs name few of the catalog's kinds (gate/config/catalog_union.py)
    model_config = ConfigDict(extra="forbid", defer_build=True)

    # where
    target: str = Field(default="*", description="llm, tools, an upstream name, or * (every upstream the kind fits).")
    method: str | None = Field(default=None, description="HTTP method to match.")
    path: Regex | None = Field(default=None, description="Regex searched in the request path.")
    model: str | None = Field(default=None, description="Glob on the request's model.")
    tool: str | None = Field(default=None, description="Glob on the tool name: an HTTP tool's upstream name; "
                                                    "on MCP, the tools/call name or the MCP upstream's name.")
    # when
    probability: float | None = Field(default=None, ge=0, le=1)
    on_calls: list[int] | None = Field(default=None, description="Fire on these call numbers (1-based, per fault).")
    after_calls: int | None = Field(default=None, ge=0, description="Fire on every call after the first N.")
    every: int | None = Field(default=None, ge=1, description="Fire on every Nth call.")
    max_fires: int | None = Field(default=None, ge=1, description="Fire at most this many times per cell run.")
    on_turns: list[int] | None = Field(default=None, description="A conversation input: only calls made during "
                                                                "these turns (1-based) match, so `on_calls` counts "
                                                                "within them.")

    applies_to: ClassVar[frozenset[str]] = frozenset({LLM, TOOL})

    @property
    def name(self) -> str:
        return self.kind  # type: ignore[attr-defined]

    def matches(self, info) -> bool:
        """Does this fault concern the request described by `info` (a RequestInfo)?"""
        if info.kind not in self.applies_to:
            return False
        if self.target not in ("*", info.name) and not (self.target == "llm" and info.kind == LLM) \
                and not (self.target == "tools" and info.kind == TOOL):
            return False
        if self.method and self.method.upper() != info.method:
            return False
        if self.path and not re.search(self.path, info.path):
            return False
        if self.model and not fnmatch.fnmatchcase(info.model or "", self.model):
            return False
        if self.on_turns is not None and (info.turn or 1) not in self.on_turns:
            return False
        return not self.tool or tool_matches(self.tool, info)

    def label(self) -> str:
        return self.kind  # type: ignore[attr-defined]

    async def apply(self, ex) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def tool_matches(pattern: str, info) -> bool:
    """A `tool:` glob against the request's tool, each tool of a JSON-RPC batch, and, on an MCP
    tools/call, the upstream's own name (users name an MCP server as they name an HTTP tool)."""
    names = [info.tool or ""] + [c["tool"] or "" for c in getattr(info, "batch", ()) if c["method"] == "tools/call"]
    if info.provider == "mcp" and info.rpc_method == "tools/call":
        names.append(info.name)
    return any(fnmatch.fnmatchcase(name, pattern) for name in names)


FAULTS: dict[str, type[FaultBase]] = {}


def register(cls: type[FaultBase]) -> type[FaultBase]:
    FAULTS[cls.model_fields["kind"].default] = cls
    return cls
