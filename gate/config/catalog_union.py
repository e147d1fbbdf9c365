"""A tagged union over a registry (faults by `kind`, invariants by `type`) whose members are built on first use.

(And `LazyModel`, the same idea for one config section: its model imported and built when a config has it.)

A plain pydantic discriminated union builds the validator of every member when the
config model is defined: 56 catalog classes, most of them unused by any one config,
were two thirds of `chaos-gate validate`'s start-up. This marker validates an item
with the one class its tag names, building that class on first use (catalog classes
set `defer_build`). Errors keep the exact shape the discriminated union gave them —
the tag inside the location, `union_tag_invalid` / `union_tag_not_found` — so line
mapping and "did you mean" in the loader see no difference. The JSON Schema is the
full union, built only when asked for.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any, Union, get_args

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError, core_schema


class CatalogUnion:
    """`Annotated[BaseClass, CatalogUnion(REGISTRY, "kind")]`: one registry member per item."""

    def __init__(self, catalog: dict[str, type[BaseModel]], tag: str):
        self.catalog = catalog
        self.tag = tag

    def members(self) -> list[type[BaseModel]]:
        return list(self.catalog.values())

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        # Union[...] of a tuple built at run time: `X | Y` has no spelling for it
        union = Annotated[Union[tuple(self.members())], Field(discriminator=self.tag)]  # noqa: UP007
        return handler(TypeAdapter(union).core_schema)

    def validate(self, value: Any) -> BaseModel:
        if isinstance(value, BaseModel) and type(value) in self.catalog.values():
            return value
        if not isinstance(value, dict):
            raise PydanticCustomError(
                "model_attributes_type", "Input should be a valid dictionary or object to extract fields from")
        if self.tag not in value:
            raise PydanticCustomError(
                "union_tag_not_found", "Unable to extract tag using discriminator {discriminator}",
                {"discriminator": repr(self.tag)})
        member = self.catalog.get(value[self.tag]) if isinstance(value[self.tag], str) else None
        if member is None:
            raise PydanticCustomError(
                "union_tag_invalid",
                "Input tag {tag} found using {discriminator} does not match any of the expected tags: {expected_tags}",
                {"discriminator": repr(self.tag), "tag": repr(value[self.tag]),
                 "expected_tags": ", ".join(repr(t) for t in self.catalog)})
        try:
            return member.model_validate(value)
        except ValidationError as exc:
            raise _under_tag(exc, value[self.tag]) from None


def _under_tag(exc: ValidationError, tag: str) -> ValidationError:
    """The member's errors with the tag prefixed to each location, as a discriminated union reports them."""
    return relocated(exc, (tag,))


def relocated(exc: ValidationError, prefix: tuple = ()) -> ValidationError:
    """`exc`'s errors re-raisable from a plain validator (pydantic prepends the field's own location),
    `prefix` before each location; types pydantic-core does not know kept as custom errors."""
    details: list[InitErrorDetails] = []
    for err in exc.errors():
        detail: dict[str, Any] = {"type": err["type"], "loc": (*prefix, *err["loc"]), "input": err["input"]}
        if "ctx" in err:
            detail["ctx"] = err["ctx"]
        if err["type"] not in _KNOWN_TYPES:
            detail["type"] = PydanticCustomError(err["type"], err["msg"])
            detail.pop("ctx", None)
        details.append(detail)  # type: ignore[arg-type]
    return ValidationError.from_exception_data(exc.title, details)


_KNOWN_TYPES = frozenset(get_args(core_schema.ErrorType))  # pydantic-core's own error types, by name


class LazyModel:
    """`Annotated[Any, LazyModel("gate.worlds.model", "World")]`: a config section whose model is imported
    and built on first use, for a section most configs leave empty (worlds: a tenth of `validate`'s start).
    Errors keep the locations the plain model gave them; the JSON Schema is the model's."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def model(self) -> type[BaseModel]:
        return getattr(importlib.import_module(self.module), self.name)

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self.validate)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> Any:
        inner = TypeAdapter(self.model()).core_schema
        if "ref" in inner:  # a reference to its $defs entry, as a plain model field gets, not the model inlined
            inner = core_schema.definitions_schema(core_schema.definition_reference_schema(inner["ref"]), [inner])
        return handler(inner)

    def validate(self, value: Any) -> BaseModel:
        model = self.model()
        if isinstance(value, model):
            return value
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            raise relocated(exc) from None
