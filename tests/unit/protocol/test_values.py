"""protocol/values.py: the address and hex primitives every layer checks input with."""

import pytest

from ape_contract_verify.protocol import values

LOWER = "0x5fbdb2315678afecb367f032d93f642f64180aa3"
CHECKSUMMED = "0x5FbDB2315678afecb367f032d93F642f64180aa3"

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("good", [LOWER, CHECKSUMMED, "0x" + "A" * 40, "0x" + "0" * 40])
def test_an_address_is_0x_and_40_hex_digits(good):
    assert values.is_address(good)
    assert values.ADDRESS.match(good)


@pytest.mark.parametrize(
    "bad",
    [
        LOWER[:-1],  # 39 digits
        LOWER + "0",  # 41 digits
        LOWER[2:],  # no 0x
        "0X" + LOWER[2:],  # the prefix is lowercase x only
        "0x" + "g" * 40,
        " " + LOWER,
        "",
        None,
        int(LOWER, 16),
        LOWER.encode(),
    ],
)
def test_anything_else_is_not_an_address(bad):
    assert not values.is_address(bad)


def test_checksum_gives_eip55_whatever_the_case_given():
    assert values.checksum(LOWER) == CHECKSUMMED
    assert values.checksum(LOWER.upper().replace("0X", "0x")) == CHECKSUMMED
    assert values.checksum(CHECKSUMMED) == CHECKSUMMED


def test_checksum_refuses_what_is_not_an_address():
    with pytest.raises(ValueError):
        values.checksum("0x1234")


def test_checksum_is_worked_out_once_per_address_and_a_refusal_is_not_kept(monkeypatch):
    import eth_utils.address

    real, calls = eth_utils.address.to_checksum_address, []
    monkeypatch.setattr(eth_utils.address, "to_checksum_address", lambda a: calls.append(a) or real(a))
    values.checksum.cache_clear()
    try:
        assert [values.checksum(LOWER) for _ in range(3)] == [CHECKSUMMED] * 3
        assert calls == [LOWER]  # the lookups that name an address pay for its keccak once
        for _ in range(2):
            with pytest.raises(ValueError):
                values.checksum("0x1234")
        assert calls == [LOWER, "0x1234", "0x1234"]  # refused again: never answered from a cache
    finally:
        values.checksum.cache_clear()  # later tests see eth-utils' own function again


def test_tx_hash_is_64_hex_digits_by_fullmatch():
    good = "0x" + "ab" * 32
    assert values.TX_HASH.fullmatch(good)
    assert not values.TX_HASH.fullmatch(good[:-1])
    assert not values.TX_HASH.fullmatch(good + "0")
    assert not values.TX_HASH.fullmatch("ab" * 32)


def test_hex_matches_bare_hex_digits_only():
    assert values.HEX.match("") and values.HEX.match("00aaFF")
    assert not values.HEX.match("0x00") and not values.HEX.match("zz")


@pytest.mark.parametrize(("text", "bare"), [("0xabc", "abc"), ("0Xabc", "abc"), ("abc", "abc"), ("", ""), ("0x", "")])
def test_strip_0x_removes_only_a_leading_prefix(text, bare):
    assert values.strip_0x(text) == bare


def test_hex_to_bytes_takes_text_bytes_and_none():
    assert values.hex_to_bytes("0x6080") == b"\x60\x80"
    assert values.hex_to_bytes("  6080\n") == b"\x60\x80"
    assert values.hex_to_bytes("0X00ff") == b"\x00\xff"
    assert values.hex_to_bytes(b"\x01\x02") == b"\x01\x02"
    assert values.hex_to_bytes(bytearray(b"\x03")) == b"\x03"
    assert values.hex_to_bytes(memoryview(b"\x04")) == b"\x04"
    assert values.hex_to_bytes(None) == b""
    assert values.hex_to_bytes("") == b""


def test_hex_to_bytes_turns_unlinked_library_placeholders_into_zero_addresses():
    modern = "__$" + "1f" * 17 + "$__"
    legacy = "__contracts/Lib.sol:Lib" + "_" * 17
    assert len(modern) == len(legacy) == 40
    for placeholder in (modern, legacy):
        code = values.hex_to_bytes("0x73" + placeholder + "ff")
        assert code == b"\x73" + b"\x00" * 20 + b"\xff"


@pytest.mark.parametrize("bad", ["0xabc", "0xzz", "0x__short__"])
def test_hex_to_bytes_refuses_odd_or_non_hex_text(bad):
    with pytest.raises(ValueError):
        values.hex_to_bytes(bad)


def test_an_address_with_a_trailing_newline_is_no_address():
    """`$` matches before a final newline: `/address/0x…%0A` once reached the node as an address."""
    assert not values.is_address("0x" + "a1" * 20 + "\n")
    assert not values.ADDRESS.match("0x" + "a1" * 20 + "\n")
    assert not values.HEX.match("ab\n")
