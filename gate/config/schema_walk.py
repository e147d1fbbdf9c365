"""Find the pydantic model that owns a key path, so a typo gets a 'did you mean'.

Walks field annotations through Optional, list, dict, discriminated unions (invariants
are tagged by `type`, faults by `kind`) and lazily built sections (worlds).
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel

from gate.config.catalog_union import CatalogUnion, LazyModel

DISCRIMINATORS = ("type", "kind")


def _unwrap(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        catalogs = [m for m in typing.get_args(annotation)[1:] if isinstance(m, CatalogUnion)]
        lazy = [m.model() for m in typing.get_args(annotation)[1:] if isinstance(m, LazyModel)]
        return catalogs[0].members() if catalogs else lazy or _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for arg in typing.get_args(annotation) for t in _unwrap(arg)]
    return [annotation]


def _field(model: type[BaseModel], key: str):
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info.annotation
    return None


def _is_tag(model: type[BaseModel], part: str) -> bool:
    """Is `part` the discriminator value of `model` (invariants' `type`, faults' `kind`)?"""
    return any(model.model_fields.get(name) is not None and model.model_fields[name].default == part
               for name in DISCRIMINATORS)


def model_for_path(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    candidates: list[Any] = [root]
    for part in loc:
        following: list[Any] = []
        for cand in candidates:
            for t in _unwrap(cand):
                origin = typing.get_origin(t)
                if isinstance(part, int) and origin in (list, tuple):
                    following.extend(typing.get_args(t)[:1])
                elif origin is dict:
                    following.append(typing.get_args(t)[1])
                elif isinstance(t, type) and issubclass(t, BaseModel):
                    if isinstance(part, str) and _is_tag(t, part):
                        following.append(t)  # discriminator tag in the loc
                    else:
                        ann = _field(t, str(part))
                        if ann is not None:
                            following.append(ann)
        candidates = following
    models = [t for c in candidates for t in _unwrap(c) if isinstance(t, type) and issubclass(t, BaseModel)]
    return models[0] if models else None
