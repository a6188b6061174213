"""The deploy code of an ERC-5202 blueprint, as Ape's `declare` and `vyper -f blueprint_bytecode`
make it: the tests deploy blueprints with it (the package only reads them, `evm/blueprint.py`)."""

from __future__ import annotations

from ape_contract_verify.evm.blueprint import MAGIC

# Returns the code that follows these 10 bytes (PUSH2 <length>, then these 7).
_DEPLOYER = bytes.fromhex("3d81600a3d39f3")


def deploy_code(creation_code: bytes, version: int = 0) -> bytes:
    """The creation transaction's input that deploys `creation_code` as a blueprint (no data section)."""
    code = MAGIC + bytes([version << 2]) + bytes(creation_code)
    return b"\x61" + len(code).to_bytes(2, "big") + _DEPLOYER + code
