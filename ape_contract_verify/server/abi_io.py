"""The Read and Write forms' ABI work: a person's typed values parsed, calldata built, results as text.

Inputs come as strings (arrays and tuples as JSON text, e.g. `[1, 2]`); outputs go back as
JSON-safe values with every integer as a decimal string, since JavaScript numbers stop at 2**53.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from ape_contract_verify.evm.abi import abi_type
from ape_contract_verify.evm.abi import selector as selector
from ape_contract_verify.evm.abi import signature as signature
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.json_types import JsonObject, JsonValue
from ape_contract_verify.protocol.forms import clip
from ape_contract_verify.protocol.values import ADDRESS, checksum

if TYPE_CHECKING:
    from eth_abi.codec import ABICodec

_INT = re.compile(r"^(u?)int(\d*)$")
_FIXED_BYTES = re.compile(r"^bytes(\d+)$")
_ARRAY = re.compile(r"^(.*)\[(\d*)\]$")
# A value as eth_abi encodes and decodes it (tuples as tuples, arrays as lists or tuples).
AbiValue: TypeAlias = int | bool | str | bytes | list["AbiValue"] | tuple["AbiValue", ...]


# The ABI's type strings and selectors are evm/abi.py's (eth_utils); this name is the pages'.
canonical_type = abi_type


class InputError(ContractVerifyError, ValueError):
    """A form value that does not fit its ABI type; the text names the parameter and the fix."""


def functions(abi: Sequence[JsonValue], read: bool | None = None) -> list[JsonObject]:
    """The ABI's functions for Read (view/pure), Write (everything else) or both (None), in ABI order."""
    found: list[JsonObject] = []
    for item in abi:
        if not isinstance(item, dict) or item.get("type", "function") != "function" or not item.get("name"):
            continue
        mutability = item.get("stateMutability") or ("view" if item.get("constant") else "nonpayable")
        if read is None or (mutability in ("view", "pure")) == read:
            found.append(item)
    return found


def find_function(abi: Sequence[JsonValue], wanted: str) -> JsonObject:
    for item in functions(abi):
        if signature(item) == wanted:
            return item
    raise InputError(f"Unknown function: {wanted!r} is not in this contract's ABI; reload the page.")


def param_list(value: JsonValue) -> list[JsonObject]:
    """An entry's `inputs`, `outputs` or `components`: its objects; [] when it has none."""
    return [p for p in value if isinstance(p, dict)] if isinstance(value, list) else []


def load_abi(text: str) -> list[JsonValue]:
    try:
        abi = json.loads(text)
    except ValueError:
        return []
    return abi if isinstance(abi, list) else []


# -- inputs ------------------------------------------------------------------------------------


def parse_args(item: JsonObject, values: list[JsonValue]) -> list[AbiValue]:
    inputs = param_list(item.get("inputs"))
    if len(values) != len(inputs):
        raise InputError(f"{signature(item)} takes {len(inputs)} argument(s), {len(values)} were given.")
    return [parse_value(p, v, _label(p, i)) for i, (p, v) in enumerate(zip(inputs, values))]


def _label(param: JsonObject, index: int) -> str:
    return f"{param.get('name') or f'argument {index + 1}'} ({canonical_type(param)})"


def parse_value(param: JsonObject, raw: JsonValue, label: str) -> AbiValue:
    kind = str(param.get("type", ""))
    array = _ARRAY.match(kind)
    if array:
        items = _json_list(raw, label, "a JSON array, e.g. [1, 2]")
        if array.group(2) and len(items) != int(array.group(2)):
            raise InputError(f"{label}: {len(items)} item(s) given, exactly {array.group(2)} are needed.")
        element = {**param, "type": array.group(1)}
        return [parse_value(element, item, f"{label} item {i + 1}") for i, item in enumerate(items)]
    if kind == "tuple":
        components = param_list(param.get("components"))
        items = _json_list(raw, label, f'a JSON array of its {len(components)} fields, e.g. [1, "0x…"]')
        if len(items) != len(components):
            raise InputError(f"{label}: {len(items)} field(s) given, the tuple has {len(components)}.")
        return tuple(
            parse_value(c, v, f"{label} field {c.get('name') or i + 1} ({canonical_type(c)})")
            for i, (c, v) in enumerate(zip(components, items))
        )
    text = raw if isinstance(raw, str) else json.dumps(raw)
    if kind == "string":
        return text
    text = text.strip()
    if kind == "address":
        if not ADDRESS.match(text):
            raise InputError(f"{label}: {clip(text)!r} is not an address; use 0x followed by 40 hex digits.")
        return text.lower()
    if kind == "bool":
        if text.lower() in ("true", "1"):
            return True
        if text.lower() in ("false", "0"):
            return False
        raise InputError(f"{label}: {clip(text)!r} is not a bool; use true or false.")
    number = _INT.match(kind)
    if number:
        return _parse_int(text, label, number.group(1) == "u", int(number.group(2) or 256))
    fixed = _FIXED_BYTES.match(kind)
    if fixed or kind == "bytes":
        data = _parse_hex(text, label)
        if fixed and len(data) > int(fixed.group(1)):
            raise InputError(f"{label}: {len(data)} bytes given, at most {fixed.group(1)} fit.")
        return data.ljust(int(fixed.group(1)), b"\0") if fixed else data
    raise InputError(f"{label}: the form cannot encode the ABI type {kind!r}.")


def _json_list(raw: JsonValue, label: str, hint: str) -> list[JsonValue]:
    if isinstance(raw, list):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        value = None
    if not isinstance(value, list):
        raise InputError(f"{label}: {clip(str(raw))!r} is not {hint}.")
    return value


def _parse_int(text: str, label: str, unsigned: bool, bits: int) -> int:
    try:
        value = int(text, 16) if text.lower().startswith(("0x", "-0x")) else int(text.replace("_", ""), 10)
    except ValueError:
        raise InputError(f"{label}: {clip(text)!r} is not a whole number; use decimal digits or 0x hex.") from None
    low, high = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if not low <= value <= high:
        raise InputError(f"{label}: {value} is out of range; it must be from {low} to {high}.")
    return value


def _parse_hex(text: str, label: str) -> bytes:
    digits = text[2:] if text.lower().startswith("0x") else None
    if digits is None or len(digits) % 2 or not re.fullmatch(r"[0-9a-fA-F]*", digits):
        raise InputError(f"{label}: {clip(text)!r} is not hex bytes; use 0x followed by an even number of hex digits.")
    return bytes.fromhex(digits)


def calldata(item: JsonObject, values: list[JsonValue]) -> bytes:
    from eth_abi.abi import encode

    args = parse_args(item, values)
    types = [canonical_type(p) for p in param_list(item.get("inputs"))]
    try:
        return selector(item) + encode(types, args)
    except Exception as err:  # eth_abi's own range and shape checks, if ours let something through
        raise InputError(f"The arguments could not be ABI-encoded for {signature(item)}: {err}") from None


# -- outputs -----------------------------------------------------------------------------------


def decode(types: list[str], data: bytes) -> tuple[AbiValue, ...]:
    """eth_abi's decoding, strict: data too short for a uint is refused. Ape swaps the shared
    registry's uint decoder for one that pads short data (ape/utils/abi.py), which would show a
    number made up of too few bytes; this codec keeps eth_abi's own."""
    return tuple(_strict_codec().decode(types, data))


@functools.cache
def _strict_codec() -> ABICodec:
    from eth_abi.codec import ABICodec
    from eth_abi.decoding import UnsignedIntegerDecoder
    from eth_abi.encoding import UnsignedIntegerEncoder
    from eth_abi.registry import BaseEquals, registry

    # eth_abi leaves these two unannotated; the types say what they are. copy.copy is registry.copy().
    base_equals: Callable[[str], Callable[[str], bool]] = BaseEquals
    own = copy.copy(registry)
    own.unregister("uint")
    own.register(base_equals("uint"), UnsignedIntegerEncoder, UnsignedIntegerDecoder, label="uint")
    return ABICodec(own)


def decode_outputs(item: JsonObject, data: bytes) -> list[JsonObject]:
    """[{name, type, value}] for a call's return data; raises InputError if it does not decode."""
    outputs = param_list(item.get("outputs"))
    types = [canonical_type(p) for p in outputs]
    try:
        values = decode(types, data)
    except Exception as err:
        raise InputError(
            f"The call returned {len(data)} bytes that do not decode as ({', '.join(types)}): {type(err).__name__}."
        ) from None
    return [
        {"name": p.get("name") or "", "type": canonical_type(p), "value": show(p, v)} for p, v in zip(outputs, values)
    ]


def show(param: JsonObject, value: AbiValue) -> JsonValue:
    """A decoded value as JSON: integers as decimal strings, bytes as 0x hex, addresses checksummed."""
    kind = str(param.get("type", ""))
    array = _ARRAY.match(kind)
    if isinstance(value, (list, tuple)):  # eth_abi decodes arrays and tuples, and only them, to sequences
        if array:
            return [show({**param, "type": array.group(1)}, v) for v in value]
        return {
            str(c.get("name") or i): show(c, v)
            for i, (c, v) in enumerate(zip(param_list(param.get("components")), value))
        }
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()
    if kind == "address":
        return checksum(value)
    return value


_ERROR_STRING = bytes.fromhex("08c379a0")  # Error(string)
_PANIC = bytes.fromhex("4e487b71")  # Panic(uint256)


def describe_revert(abi: Sequence[JsonValue], data: bytes) -> str:
    """A revert as the contract's author named it: `Error(string)`'s reason, a `Panic` code, or a
    custom error of the verified ABI with its arguments; else the raw selector and data."""
    head, payload = bytes(data[:4]), bytes(data[4:])
    if not data:
        return "reverted without a reason"
    try:
        if head == _ERROR_STRING:
            return f"reverted: {decode(['string'], payload)[0]!r}"
        if head == _PANIC:
            code = decode(["uint256"], payload)[0]
            if isinstance(code, int):  # always: a uint256 decodes to an int
                return f"reverted: Panic(0x{code:02x})"
        for item in abi:
            if isinstance(item, dict) and item.get("type") == "error" and "name" in item:
                if selector(item) == head:
                    inputs = param_list(item.get("inputs"))
                    values = decode([canonical_type(p) for p in inputs], payload)
                    shown = ", ".join(str(show(p, v)) for p, v in zip(inputs, values))
                    return f"reverted: {item['name']}({shown})"
    except Exception:  # data that does not decode as its selector promises: show it raw
        pass
    return f"reverted: custom error 0x{head.hex()}" + (f" (data 0x{payload.hex()})" if payload else "")


def decode_constructor(abi: Sequence[JsonValue], hex_args: str) -> list[JsonObject] | None:
    """The constructor's arguments by name, or None when there are none to decode or they do not decode."""
    constructor = next((i for i in abi if isinstance(i, dict) and i.get("type") == "constructor"), None)
    if constructor is None or not constructor.get("inputs") or not hex_args:
        return None
    try:
        data = bytes.fromhex(hex_args.removeprefix("0x"))
    except ValueError:
        return None
    try:
        return decode_outputs({"outputs": constructor["inputs"]}, data)
    except InputError:
        return None
