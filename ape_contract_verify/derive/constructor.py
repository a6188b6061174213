"""Constructor arguments: read from the creation transaction, or given by the user and checked.

A given value is checked against the chain's. Values are encoded with the artifact's ABI; a difference is explained (argument by
argument) with the engine's own text, so the pre-check and the explorer word it the same way."""

import json

from ape_contract_verify.derive.artifacts import Artifact, CompilerJson
from ape_contract_verify.engine.verifier import constructor_arguments_reason, constructor_inputs
from ape_contract_verify.evm.abi import abi_type
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.json_types import JsonValue
from ape_contract_verify.protocol.values import checksum as _checksum


class PrecheckFailed(ContractVerifyError):
    """The derived request would not verify: `field` names the input that differs."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"Local pre-check failed ({field}): {reason}")


def _inputs(artifact: Artifact) -> list[CompilerJson]:
    return constructor_inputs(list(artifact.contract_type.abi))


def sources_tried(tried: list[str] | None = None) -> str:
    """What was tried for a creation, in words: only what the chain reader and the target tried on
    this network (an in-process chain has no trace API to name, the embedded explorer no record)."""
    return f"tried {', '.join(tried)}" if tried else "no source of it answered"


def not_found_reason(tried: list[str] | None = None) -> str:
    """The one answer when no source gave the creation code: what was tried, and the way out."""
    return (
        f"the creation code of this contract was not found ({sources_tried(tried)}). "
        "Pass them with --constructor-args, as values or ABI-encoded hex"
    )


def resolve_constructor_args(
    artifact: Artifact, given: str | None, derived: str | None, tried: list[str] | None = None
) -> str:
    """The arguments to submit: the chain's (`derived`), or `given` when it agrees with them.
    `tried` names the creation sources that could not answer, for the reason when none did."""
    if given is None:
        if derived is None and _inputs(artifact):
            raise PrecheckFailed("constructor arguments", not_found_reason(tried))
        return derived or ""
    encoded = encode_constructor_args(artifact, given)
    if derived is not None and encoded.lower() != derived.lower():
        raise PrecheckFailed(
            "constructor arguments",
            f"--constructor-args: {constructor_arguments_reason(encoded.lower(), derived.lower(), list(artifact.contract_type.abi))}; "
            "drop --constructor-args to use the chain's",
        )
    return encoded


def encode_constructor_args(artifact: Artifact, given: str) -> str:
    """Raw hex (with or without 0x) as is, or comma-separated / JSON-list values encoded with the ABI."""
    text = given.strip()
    hex_text = text.removeprefix("0x")
    inputs = _inputs(artifact)
    is_hex = all(c in "0123456789abcdefABCDEF" for c in hex_text)
    # Raw hex: 0x and hex digits only ("0x10, true" is a list of values), or whole ABI words.
    if (text.startswith("0x") and is_hex) or (hex_text and is_hex and len(hex_text) % 64 == 0):
        if len(hex_text) % 2:
            raise PrecheckFailed("constructor arguments", "hex constructor arguments must have an even length")
        return hex_text.lower()
    from eth_abi.abi import encode

    values: list[JsonValue]
    try:
        values = json.loads(text if text.startswith("[") else f"[{text}]")
    except json.JSONDecodeError:
        values = [v.strip() for v in text.split(",")] if text else []
    if len(values) != len(inputs):
        signature = ", ".join(f"{i.get('type')} {i.get('name')}" for i in inputs) or "none"
        raise PrecheckFailed(
            "constructor arguments",
            f"{len(values)} value(s) given, the constructor takes {len(inputs)} ({signature})",
        )
    types = [abi_type(i) for i in inputs]
    try:
        return encode(types, [_coerce(t, v) for t, v in zip(types, values)]).hex()
    except Exception as err:
        raise PrecheckFailed("constructor arguments", f"cannot encode {values} as ({', '.join(types)}): {err}")


def _coerce(abi_type: str, value: JsonValue) -> object:
    """The value eth_abi encodes as `abi_type` (it takes any Python value it can encode)."""
    if abi_type.endswith("]") and isinstance(value, list):
        inner = abi_type[: abi_type.rindex("[")]
        return [_coerce(inner, v) for v in value]
    if abi_type.startswith(("uint", "int")) and isinstance(value, str):
        return int(value, 0)
    if abi_type == "bool" and isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    if abi_type.startswith("bytes") and isinstance(value, str):
        return bytes.fromhex(value.removeprefix("0x"))
    if abi_type == "address" and isinstance(value, str):
        return _checksum(value)
    return value
