"""World files: record types, seed data, operations, faults and the clock of a fake, stateful tool service.

Field types are `str`, `int`, `float`, `bool`, `datetime`, `{enum: [...]}`, `{ref: type}`,
`{object: {field: type}}` and `{list: type}`. A world is written in this format under
`worlds:`, or is a faultbench world file referenced as it is (`{faultbench: shop.yaml}`,
gate/worlds/faultbench.py). `check_world` (gate/worlds/checks.py) validates what pydantic
cannot (type names, refs, seed ids, importable custom operations) on the exact line.
"""

from __future__ import annotations

import re
from datetime import datetime, UTC
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from gate.contracts.base import StrictModel

SCALARS = ("str", "int", "float", "bool", "datetime")
COMPOUND = ("enum", "ref", "object", "list")
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)  # where every world's clock starts unless told
ERROR_KINDS = ("timeout", "http_500", "http_429", "not_found", "empty_result", "malformed_json")
CONDITIONS = ("not_found_if_newer_than",)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


def seconds_of(value: Any) -> float:
    """`30s`, `90m`, `2h`, `1d`, `250ms` or a number of seconds -> seconds."""
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError(f"not a duration: {value!r} (write e.g. 30s, 90m, 2h, 1d, or seconds)")
    return float(match.group(1)) * _UNITS[match.group(2)]


def env_name(name: str, suffix: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", name).upper() + suffix


class RecordType(StrictModel):
    fields: dict[str, Any] = Field(description="field name -> type (str, int, float, bool, datetime, "
                                               "{enum: [...]}, {ref: type}, {object: {...}}, {list: type})")
    key: str = "id"
    sync_lag: float = Field(default=0.0, ge=0, description="Seconds before a record shows up in the agent's gets "
                                                           "and lists, measured on the world clock from its "
                                                           "`age_field` (seeded records too) or its creation.")
    age_field: str | None = Field(default=None, description="The datetime field that dates a record (default: "
                                                            "its first datetime field).")
    ids: Literal["prefixed", "sequential"] = Field(
        default="prefixed", description="prefixed: order_0001, ...; sequential: 1, 2, 3 (faultbench's ids).")

    def dated_by(self) -> str | None:
        return self.age_field or next((f for f, s in self.fields.items() if s == "datetime"), None)


class Operation(StrictModel):
    op: Literal["get", "list", "create", "update", "delete", "custom"]
    type: str | None = None
    filters: list[str] = Field(default_factory=list)
    function: str | None = Field(default=None, description="custom: 'module:function' (or module.function), "
                                                           "imported relative to the config at load; called as "
                                                           "function(world, clock, **arguments).")
    description: str | None = None
    service: str | None = Field(default=None, description="A service name grouping operations: faults may be "
                                                          "keyed `service.operation`.")


class SeedData(StrictModel):
    rows: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict, description="type -> records; a datetime may be relative to the clock's start: "
                                          "`now`, `-2h`, `-30d`.")
    generate: dict[str, int] = Field(default_factory=dict, description="type -> how many seeded random rows")


class RateLimitSpec(StrictModel):
    calls: int = Field(ge=1)
    per_seconds: float = Field(gt=0, description="The window, on the world clock.")


class WorldFaultRule(StrictModel):
    """faultbench's fault vocabulary for one operation (or `default`)."""

    latency_ms: tuple[float, float] | None = Field(default=None, description="[lo, hi]: a delay drawn per call.")
    errors: dict[str, Any] = Field(
        default_factory=dict,
        description=f"kind -> probability ({', '.join(ERROR_KINDS)}; they sum to at most 1), and "
                    "not_found_if_newer_than: <duration> (a record younger than that is not found).")
    rate_limit: RateLimitSpec | None = None

    @field_validator("latency_ms")
    @classmethod
    def _ordered(cls, value):
        if value is not None and not 0 <= value[0] <= value[1]:
            raise ValueError(f"latency_ms is [lo, hi] with 0 <= lo <= hi, not {list(value)}")
        return value

    @field_validator("errors")
    @classmethod
    def _known(cls, value: dict) -> dict:
        total = 0.0
        for kind, p in value.items():
            if kind in CONDITIONS:
                seconds_of(p)
            elif kind not in ERROR_KINDS:
                import difflib

                close = difflib.get_close_matches(kind, ERROR_KINDS + CONDITIONS, n=1)
                raise ValueError(f"unknown error kind '{kind}'" + (f" (did you mean '{close[0]}'?)" if close else
                                 f" (known: {', '.join(ERROR_KINDS + CONDITIONS)})"))
            elif isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
                raise ValueError(f"errors.{kind} is a probability between 0 and 1, not {p!r}")
            else:
                total += p
        if total > 1 + 1e-9:
            raise ValueError(f"error probabilities sum to {total:g}, more than 1")
        return value

    def probabilities(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.errors.items() if k in ERROR_KINDS}

    def newer_than(self) -> float | None:
        value = self.errors.get("not_found_if_newer_than")
        return None if value is None else seconds_of(value)


class ClockSpec(StrictModel):
    start: datetime = Field(default=EPOCH, description="Where the world clock starts (UTC when no zone is given).")
    per_call: float = Field(default=0.0, ge=0, description="Seconds the clock advances after every operation.")

    @field_validator("start")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return value if value.tzinfo else value.replace(tzinfo=UTC)

    @field_validator("per_call", mode="before")
    @classmethod
    def _duration(cls, value):
        return seconds_of(value)


class World(StrictModel):
    name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+$")
    faultbench: str | None = Field(default=None, description="A faultbench world file, relative to this config: "
                                                             "its records, seed, operations, rule modules and "
                                                             "faults, loaded as they are.")
    env: str | None = Field(default=None, description="Env var the agent reads the world's HTTP base URL from "
                                                      "(default NAME_URL).")
    mcp_env: str | None = Field(default=None, description="Env var for its MCP (streamable HTTP) endpoint "
                                                          "(default for a faultbench world: NAME_MCP_URL).")
    types: dict[str, RecordType] = Field(default_factory=dict)
    seed: SeedData = Field(default_factory=SeedData)
    operations: dict[str, Operation] = Field(default_factory=dict)
    allow_code: bool = Field(default=False, description="Allow custom operations (they execute Python).")
    faults: dict[str, WorldFaultRule] = Field(
        default_factory=dict, description="faultbench-style faults keyed `default`, `operation` or "
                                          "`service.operation`, drawn from the cell's seed.")
    faults_apply: Literal["scenarios", "always", "never"] = Field(
        default="scenarios", description="In `chaos-gate run`: scenarios = every cell but the fault-free ones "
                                         "(baseline, mutation); always; never (then only `world serve --faults` "
                                         "and the pytest plugin apply them).")
    clock: ClockSpec = Field(default_factory=ClockSpec)
    data_seed: int | None = Field(default=None, description="Seeds the generated records instead of the config's "
                                                             "seed (a faultbench file's own `seed:`).")
    # where the world came from: not part of what is judged (a config's digest is the same on every machine)
    code_dir: str | None = Field(default=None, exclude=True, description="Where custom operations are imported "
                                                                         "from (default: the config's directory).")
    source: str | None = Field(default=None, exclude=True,
                               description="Set by the gate: the file a faultbench world came from.")

    @model_validator(mode="after")
    def _complete(self):
        if self.faultbench is not None:
            given = [k for k in ("types", "operations", "faults") if getattr(self, k)]
            if given:
                raise ValueError(f"a faultbench world takes its {', '.join(given)} from its file; "
                                 "set only name, env, mcp_env or faults_apply beside `faultbench:`")
            return self
        if self.name is None:
            raise ValueError("a world needs a `name` (or `faultbench: FILE`)")
        if not self.operations:
            raise ValueError("a world needs `operations` (or `faultbench: FILE`)")
        if self.env is None:
            self.env = env_name(self.name, "_URL")
        return self

    def rule_for(self, operation: str) -> WorldFaultRule | None:
        """The fault rule of an operation: `default` merged with `service.op` or `op` (the specific wins)."""
        default = self.faults.get("default")
        service = self.operations[operation].service if operation in self.operations else None
        specific = self.faults.get(f"{service}.{operation}") if service else None
        specific = specific or self.faults.get(operation)
        if specific is None:
            return default
        if default is None:
            return specific
        return WorldFaultRule(latency_ms=specific.latency_ms or default.latency_ms,
                              errors={**default.errors, **specific.errors},
                              rate_limit=specific.rate_limit or default.rate_limit)
