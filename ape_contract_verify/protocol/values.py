"""The contract API's primitive values, addresses and hex, written once.

Every layer checks addresses with `ADDRESS`, checksums with `checksum` and turns hex into
bytes with `hex_to_bytes`; the form rules (`forms`) and the EVM helpers build on these.
"""

import functools
import re

ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}\Z")  # \Z: `$` would take a trailing newline
TX_HASH = re.compile(r"0x[0-9a-fA-F]{64}")  # use with fullmatch
HEX = re.compile(r"^[0-9a-fA-F]*\Z")
# An unlinked library placeholder (`__$<34 hex>$__`, or the legacy `__<name padded>__`): 40 chars.
_PLACEHOLDER = re.compile(r"__.{36}__")


def is_address(value: object) -> bool:
    return isinstance(value, str) and bool(ADDRESS.match(value))


@functools.lru_cache(maxsize=4096)
def checksum(address: str) -> str:
    """EIP-55 form; Ape and web3 accept only checksummed addresses, explorers answer with them.

    Kept per address given (a refusal is not kept): a keccak and eth-utils' checks cost 25-90 us,
    paid on every answer that names an address (the explorer's lookups: issue 31)."""
    from eth_utils.address import to_checksum_address

    return str(to_checksum_address(address))


def strip_0x(text: str) -> str:
    return text[2:] if text[:2].lower() == "0x" else text


def hex_to_bytes(value: object) -> bytes:
    """Hex text (0x optional; unlinked placeholders become zero addresses), bytes, or None, as bytes."""
    if value is None:
        return b""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return bytes.fromhex(_PLACEHOLDER.sub("0" * 40, strip_0x(str(value).strip())))
