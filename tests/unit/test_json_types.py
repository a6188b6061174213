"""json_types.py: JSON's shapes named once; the aliases admit what json.loads gives and nothing else."""

import json
from collections.abc import Mapping, Sequence
from typing import get_args, get_origin

import pytest

from ape_contract_verify import json_types
from ape_contract_verify.json_types import JsonMapping, JsonObject, JsonReadable, JsonScalar, JsonValue

pytestmark = pytest.mark.unit


def conforms(value: object) -> bool:
    """Whether `value` is a JsonValue, read off the alias itself (its scalars, list, dict)."""
    scalars = tuple(type(None) if arg is None else arg for arg in get_args(JsonScalar))
    if isinstance(value, scalars):
        return True
    if isinstance(value, list):
        return all(conforms(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and conforms(item) for key, item in value.items())
    return False


def test_scalars_are_json_s_five():
    assert set(get_args(JsonScalar)) == {type(None), bool, int, float, str}


def test_value_is_scalar_list_or_object_and_object_is_a_str_keyed_dict():
    origins = {get_origin(arg) for arg in get_args(JsonValue)}
    assert {list, dict} <= origins
    assert get_origin(JsonObject) is dict and get_args(JsonObject)[0] is str


def test_readable_and_mapping_are_the_abstract_read_only_shapes():
    origins = {get_origin(arg) for arg in get_args(JsonReadable)}
    assert {Sequence, Mapping} <= origins  # a tuple or a dict[str, str] passes where only read
    assert get_origin(JsonMapping) is Mapping


def test_what_json_parses_conforms_and_what_it_cannot_write_does_not():
    parsed = json.loads('{"a": [1, 2.5, true, null, "x", {"b": []}], "c": {}}')
    assert conforms(parsed)
    assert not conforms({"a": {1, 2}})  # a set
    assert not conforms({1: "x"})  # a non-text key
    assert not conforms(b"\x00")  # bytes: hex text on the wire


def test_the_module_exports_every_alias_and_its_one_narrowing():
    assert set(json_types.__all__) == {
        "JsonMapping",
        "JsonObject",
        "JsonReadable",
        "JsonScalar",
        "JsonValue",
        "as_object",
        "as_text",
        "to_json",
    }


def test_to_json_copies_typed_dicts_and_tuples_as_json_and_refuses_the_rest():
    settings = {"optimizer": {"enabled": True, "runs": 200}, "remappings": ("a=b",), "evmVersion": None}
    copied = json_types.to_json(settings)
    assert copied == {"optimizer": {"enabled": True, "runs": 200}, "remappings": ["a=b"], "evmVersion": None}
    assert conforms(copied)
    assert copied is not settings and copied["optimizer"] is not settings["optimizer"]
    with pytest.raises(TypeError, match="set is not JSON"):
        json_types.to_json({"a": {1, 2}})
    with pytest.raises(TypeError, match="keys are text, not int"):
        json_types.to_json({"a": {1: "x"}})
    with pytest.raises(TypeError, match="bytes is not JSON"):
        json_types.to_json([b"\x00"])


def test_as_text_is_the_text_or_none():
    from ape_contract_verify.json_types import as_text

    assert as_text("0xab") == "0xab" and as_text("") == ""
    assert [as_text(value) for value in (None, [], {}, 0, True, b"x")] == [None] * 6


def test_as_object_is_the_object_or_an_empty_one():
    from ape_contract_verify.json_types import as_object

    assert as_object({"a": 1}) == {"a": 1}
    assert [as_object(value) for value in (None, [], "x", 0, True)] == [{}, {}, {}, {}, {}]
