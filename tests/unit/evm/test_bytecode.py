"""evm/bytecode.py's compiler metadata (decoded with cbor2): what it finds, and that garbage at the
end of the code (truncated blobs, non-CBOR bytes, CBOR that compilers never write) is no metadata.

Real compiler output is tests/engine/test_engine_bytecode.py's; here the blobs are written with cbor2's
encoder in the compilers' layouts, so each malformed variant differs from a good one by one thing.
"""

from __future__ import annotations

import random

import cbor2
import pytest

from ape_contract_verify.evm import bytecode as bc

BODY = bytes.fromhex("6080604052348015600e575f5ffd5b50") * 4
SOLC = {"ipfs": bytes.fromhex("1220") + bytes(range(32)), "solc": bytes([0, 8, 26])}


def solidity(meta=SOLC, body: bytes = BODY) -> bytes:
    """Solidity's layout: the CBOR map, then its length (not counting the 2 length bytes)."""
    blob = cbor2.dumps(meta)
    return body + blob + len(blob).to_bytes(2, "big")


def vyper(body: bytes = BODY) -> bytes:
    """Vyper >= 0.3.10's: an array (the map last), its length counting the 2 length bytes too."""
    blob = cbor2.dumps([len(body), [], 0, {"vyper": [0, 4, 3]}])
    return body + blob + (len(blob) + 2).to_bytes(2, "big")


def test_good_tails_are_found_and_stripped():
    code = solidity()
    tail = bc.tail_metadata(code)
    assert tail is not None and (tail.start, tail.end) == (len(BODY), len(code))
    assert tail.value == SOLC and tail.compiler == ("solc", "0.8.26")
    assert bc.strip_metadata(code) == BODY
    assert bc.metadata_segments(code) == [tail]
    vy = bc.tail_metadata(vyper())
    assert vy is not None and vy.compiler == ("vyper", "0.4.3") and bc.strip_metadata(vyper()) == BODY
    string_version = bc.tail_metadata(solidity({"ipfs": b"\x12", "solc": "0.8.26-nightly"}))
    assert string_version.compiler == ("solc", "0.8.26-nightly")


def test_embedded_blobs_are_found_beside_the_tail():
    child = solidity(body=bytes.fromhex("6080604052"))
    code = solidity(body=BODY + child + BODY)
    segments = bc.metadata_segments(code)
    assert [s.end for s in segments] == [len(BODY) + len(child), len(code)]
    assert all(s.compiler == ("solc", "0.8.26") for s in segments)


def garbage_tails() -> dict[str, bytes]:
    good = cbor2.dumps(SOLC)

    def with_length(blob: bytes, length: int = -1) -> bytes:
        return BODY + blob + (len(blob) if length < 0 else length).to_bytes(2, "big")

    return {
        "truncated blob": with_length(good[:-5], len(good)),  # the length says more than is there
        "truncated, own length": with_length(good[:-5]),  # the map's last value cut short
        "length off by one": with_length(good, len(good) + 1),
        "length zero": BODY + good + b"\x00\x00",
        "length past the start": with_length(good, 0xFFFF),
        "no CBOR at all": with_length(bytes(range(0xE0, 0x100)) * 2),
        "random bytes": with_length(random.Random(7).randbytes(60)),
        "a bare string, not a map": with_length(cbor2.dumps("ipfs solc")),
        "float value": with_length(cbor2.dumps({"ipfs": b"\x12", "solc": 0.8})),
        "tag value": with_length(cbor2.dumps({"ipfs": cbor2.CBORTag(42, b"\x12"), "solc": b"\x00\x08\x1a"})),
        "undefined value": with_length(cbor2.dumps({"ipfs": cbor2.undefined})),
        "simple value": with_length(b"\xa1\x64solc\xf0"),
        "text key invalid UTF-8": with_length(b"\xa1\x64so\xff\xfe\x01"),
        "integer key": with_length(cbor2.dumps({1: b"\x12", "solc": b"\x00\x08\x1a"})),
        "array of 2**64 items": with_length(b"\x9b" + b"\xff" * 8 + b"\x01" * 10),
        "byte string of 2**64 bytes": with_length(b"\xa1\x64ipfs\x5b" + b"\xff" * 8 + b"\x01" * 10),
        "map of 2**32 pairs": with_length(b"\xba\xff\xff\xff\xff\x64solc\x01"),
        "nested too deep": with_length(b"\xa1\x64solc" + b"\x81" * 12 + b"\x01"),
        "break byte": with_length(b"\xff"),
        "one byte": b"\x01",
        "empty": b"",
    }


@pytest.mark.parametrize("name", list(garbage_tails()))
def test_malformed_tails_are_no_metadata(name):
    code = garbage_tails()[name]
    assert bc.tail_metadata(code) is None
    assert bc.strip_metadata(code) == code  # nothing stripped
    assert bc.metadata_segments(code) == []


def test_markers_in_garbage_find_nothing_and_end():
    rng = random.Random(31)
    code = b"".join(
        rng.randbytes(200) + marker for _ in range(20) for marker in (b"\x64ipfs", b"\x64solc", b"\x65vyper")
    )
    assert bc.metadata_segments(code) == []
    assert bc.metadata_segments(code + solidity())[-1].compiler == ("solc", "0.8.26")


def test_nesting_within_the_limit_is_kept():
    nested: object = 1
    for _ in range(7):
        nested = [nested]
    tail = bc.tail_metadata(solidity({"solc": bytes([0, 8, 26]), "x": nested}))
    assert tail is not None and tail.compiler == ("solc", "0.8.26")


# --- data contracts ----------------------------------------------------------------------------

SOLIDITY_START = "6080604052348015600f57600080fd5b50"  # PUSH1 80 PUSH1 40 MSTORE CALLVALUE … JUMPI
VYPER_START = "5f3560e01c63a9059cbb81186100285760"  # PUSH0 CALLDATALOAD … JUMPI (Vyper 0.4)
EMPTY_CONTRACT = "6080604052600080fdfe"  # a contract without functions: it reverts at once


@pytest.mark.parametrize(
    "code",
    [
        "00" + b"bytes kept as code".hex(),  # SSTORE2: a STOP first
        "fe" + "6080604052348015600f57",  # CodeDeployer: an INVALID first, then code never run
        b"hello, world".hex(),  # raw text a constructor returned: PUSH9 … PUSH5 …, then its end
        "01" + "ff" * 8,  # ADD on an empty stack: it halts before SELFDESTRUCT
        "0c" + "55",  # an undefined opcode before any SSTORE
        "6001",  # a PUSH and nothing after it
    ],
)
def test_code_that_halts_before_doing_anything_is_data(code):
    assert bc.is_data_contract(code) and bc.is_data_contract(bytes.fromhex(code))


@pytest.mark.parametrize(
    "code",
    [
        SOLIDITY_START,
        VYPER_START,
        EMPTY_CONTRACT,  # a REVERT is an answer: compiled code
        "363d3d373d3d3d363d73" + "11" * 20 + "5af43d82803e903d91602b57fd5bf3",  # an EIP-1167 clone
        "fe7100" + SOLIDITY_START,  # an ERC-5202 blueprint: compiled creation code
        "6001600055",  # PUSH1 1 PUSH1 0 SSTORE: it acts
        "60016000a0",  # LOG0
        "",
    ],
)
def test_code_that_acts_before_it_halts_is_no_data(code):
    assert not bc.is_data_contract(code)
