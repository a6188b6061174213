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


__all__ = ["JsonMapping", "JsonObject", "JsonReadable", "JsonScalar", "JsonValue", "as_object"]
