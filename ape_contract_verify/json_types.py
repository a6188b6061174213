"""JSON's shapes, named once, so a layer that reads or writes JSON says so instead of `Any`.

`JsonObject` is what a layer builds and owns; `JsonMapping` is what it only reads (covariant, so
a `dict[str, str]` passes). Values parsed from the wire are `JsonValue` until checked.
"""

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonScalar: TypeAlias = None | bool | int | float | str
JsonValue: TypeAlias = JsonScalar | list["JsonValue"] | dict[str, "JsonValue"]
JsonObject: TypeAlias = dict[str, JsonValue]
# What a function only reads: any mapping or sequence of JSON values.
JsonReadable: TypeAlias = JsonScalar | Sequence["JsonReadable"] | Mapping[str, "JsonReadable"]
JsonMapping: TypeAlias = Mapping[str, JsonReadable]


def as_object(value: JsonValue) -> JsonObject:
    """`value` when it is a JSON object; {} where the answer has none (null, or another shape)."""
    return value if isinstance(value, dict) else {}


def as_text(value: object) -> str | None:
    """`value` when it is text; None for any other shape (a JSON field, a node's answer)."""
    return value if isinstance(value, str) else None


def to_json(value: object) -> JsonValue:
    """A JsonValue copy of `value`: str-keyed mappings, lists, tuples and scalars (a TypedDict,
    which mypy will not take as JSON); a TypeError names anything else, as `json.dumps` would."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        copied: JsonObject = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"A JSON object's keys are text, not {type(key).__name__}.")
            copied[key] = to_json(item)
        return copied
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    raise TypeError(f"{type(value).__name__} is not JSON.")


__all__ = ["JsonMapping", "JsonObject", "JsonReadable", "JsonScalar", "JsonValue", "as_object", "as_text", "to_json"]
