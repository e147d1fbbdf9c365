"""Custom world operations: `module:function` (or faultbench's `module.function`), resolved at load.

The contract, the same as faultbench's so its rule modules run unchanged:

    def create_return(world, clock, order_id: str, reason: str = "") -> dict:
        order = world.orders.get(order_id)          # gate/worlds/table.py: the world/table API
        if order is None:
            raise LookupError(f"order {order_id} not found")   # -> a tool error carrying the message
        ...

- `world` is the live world (tables by record type name), `clock` its fake clock
  (`clock.now()`, an aware UTC datetime); read time only from it.
- The typed parameters after `world, clock` become the tool's JSON Schema (pydantic
  types: str, int, float, bool, list[...], Literal[...], X | None, models), and the agent's
  arguments are validated against them before the function runs.
- `ValueError` → a tool error (422), `LookupError`/`KeyError` → not found (404), both
  carrying the message; any other exception is a 500 naming it, with its traceback logged.

Modules are imported from the config's directory (and its parent), so a rules module
beside the world file imports by its bare name.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import logging
import sys
import traceback
from pathlib import Path
from typing import Any
from collections.abc import Callable

from pydantic import ConfigDict, ValidationError, create_model

log = logging.getLogger("gate.worlds")
RESERVED = ("world", "clock")


class CodeError(Exception):
    """A custom operation that cannot be resolved: a config error on the function's line."""


def _split(function: str) -> tuple[str, str]:
    module, sep, name = function.partition(":")
    if not sep:
        module, _, name = function.rpartition(".")
    if not module or not name:
        raise CodeError(f"function {function!r} is not 'module:function'")
    return module, name


def _import(module: str, code_dir: Path):
    dirs = [str(code_dir.resolve()), str(code_dir.resolve().parent)]
    for d in reversed(dirs):
        if d not in sys.path:
            sys.path.insert(0, d)
    loaded = sys.modules.get(module)
    path = code_dir.resolve() / (module.replace(".", "/") + ".py")
    if loaded is not None and path.exists() and Path(getattr(loaded, "__file__", "") or "").resolve() != path:
        spec = importlib.util.spec_from_file_location(module, path)  # a same-named module from elsewhere
        fresh = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fresh)
        sys.modules[module] = fresh
        return fresh
    return importlib.import_module(module)


def resolve(function: str, code_dir: Path) -> Callable:
    module_name, name = _split(function)
    try:
        module = _import(module_name, Path(code_dir))
    except Exception as exc:  # ImportError, SyntaxError, or the module's own error at import
        raise CodeError(f"cannot import module '{module_name}' (searched {code_dir}): "
                        f"{type(exc).__name__}: {exc}") from None
    func = getattr(module, name, None)
    if not callable(func):
        names = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise CodeError(f"module '{module_name}' has no function '{name}'{hint}")
    params = list(inspect.signature(func).parameters)
    if params[:2] != list(RESERVED):
        raise CodeError(f"{function} must take (world, clock, **arguments) first; it takes ({', '.join(params)})")
    return func


class _Args:
    """The argument model of one function: its JSON Schema, and validation of a call's arguments."""

    def __init__(self, func: Callable):
        fields: dict[str, Any] = {}
        self.var_kw = False
        for name, p in list(inspect.signature(func).parameters.items())[2:]:
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                self.var_kw = True
                continue
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                continue
            annotation = Any if p.annotation is inspect.Parameter.empty else p.annotation
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[name] = (annotation, default)
        extra = "allow" if self.var_kw else "forbid"
        self.model = create_model(f"{func.__name__}_args", __config__=ConfigDict(extra=extra), **fields)

    def schema(self) -> dict:
        schema = self.model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("properties", {})
        return schema

    def validate(self, args: dict) -> dict:
        try:
            parsed = self.model.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
            raise ValueError(f"invalid arguments: {problems}") from None
        out = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        out.update(parsed.model_extra or {})
        return out


_ARGS: dict[Callable, _Args] = {}


def args_of(func: Callable) -> _Args:
    if func not in _ARGS:
        _ARGS[func] = _Args(func)
    return _ARGS[func]


def call(func: Callable, world, clock, args: dict, name: str):
    """Run one custom operation; its errors become OperationErrors carrying their message."""
    from gate.worlds.errors import OperationError

    try:
        kwargs = args_of(func).validate(args or {})
    except ValueError as exc:
        raise OperationError(422, str(exc)) from None
    try:
        return func(world, clock, **kwargs)
    except OperationError:
        raise
    except (LookupError, KeyError) as exc:
        raise OperationError(404, _message(exc)) from None
    except ValueError as exc:
        raise OperationError(422, _message(exc)) from None
    except Exception as exc:
        log.error("custom operation %s failed:\n%s", name, traceback.format_exc())
        raise OperationError(500, f"custom operation {name} failed: {type(exc).__name__}: {exc}") from None


def _message(exc: Exception) -> str:
    # KeyError's str() quotes its argument; the message a handler wrote is its first argument
    return str(exc.args[0]) if exc.args and isinstance(exc.args[0], str) else str(exc)
