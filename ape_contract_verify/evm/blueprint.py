"""Reading ERC-5202 blueprints: the preamble parsed, the creation code held.

A blueprint is code that is never run, kept on chain for `create_from_blueprint`. Its code is a
preamble, `0xFE 0x71` and a version byte (six bits of version, two that give the size of an
optional data-length field), the optional data, then the body: a contract's creation code, which
factories copy (`code_offset` past the preamble) and run with constructor arguments. Explorers
verify the body against the compiled creation code, not a runtime code.
"""

from __future__ import annotations

from dataclasses import dataclass

from ape_contract_verify.protocol.values import hex_to_bytes

MAGIC = b"\xfe\x71"

BLUEPRINT = "an ERC-5202 blueprint"
SOURCIFY_UNSUPPORTED = (
    "Sourcify's API does not verify ERC-5202 blueprints yet (argotorg/sourcify#2860): it compares the "
    "on-chain code with a runtime code, and a blueprint holds a creation code"
)


@dataclass(frozen=True)
class Blueprint:
    version: int
    data: bytes  # the preamble's optional data section
    body: bytes  # the creation code (and any constructor arguments after it)
    preamble_length: int  # where the body starts: a factory's `code_offset`


def parse(code: bytes | bytearray | str | None) -> Blueprint | None:
    """The blueprint `code` is, or None: not the preamble, or a data length past the code's end."""
    try:
        code = hex_to_bytes(code)
    except ValueError:
        return None
    if len(code) < 3 or code[:2] != MAGIC:
        return None
    version, length_size = code[2] >> 2, code[2] & 0b11
    start = 3 + length_size
    if length_size == 3 or len(code) < start:  # 0b11 is reserved by the standard
        return None
    data_length = int.from_bytes(code[3:start], "big") if length_size else 0
    if start + data_length > len(code):
        return None
    return Blueprint(version, code[start : start + data_length], code[start + data_length :], start + data_length)


def is_blueprint(code: bytes | bytearray | str | None) -> bool:
    return parse(code) is not None


def arguments_after(blueprint: Blueprint, creation_code: bytes) -> str | None:
    """The body past `creation_code` (constructor arguments deployed with it; usually none), hex;
    None when the body is shorter than the creation code."""
    if len(blueprint.body) < len(creation_code):
        return None
    return blueprint.body[len(creation_code) :].hex()
