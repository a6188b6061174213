"""engine/verifier.py's comparison on hand-made byte strings: what the comparison ignores (CBOR metadata,
immutables, link positions), which byte differs, and the cause each failure names.

Real compiler output is tests/engine/'s; here code is written by hand and metadata with cbor2."""

from __future__ import annotations

import cbor2
import pytest
from eth_abi import encode

from ape_contract_verify.engine.compilers import Compiled
from ape_contract_verify.engine.verifier import (
    LIBRARY_REQUIRED,
    Failure,
    FailureKind,
    Matched,
    argument_differences,
    compare,
    compiler_version_difference,
    constructor_arguments_reason,
    constructor_inputs,
    lookup_library,
)
from ape_contract_verify.evm.reads import Creation
from ape_contract_verify.protocol.answers import Texts

SOLC = "v0.8.26+commit.8a97fa7a"
BODY = bytes.fromhex("6080604052348015600f57600080fd5b50603f80601d6000396000f3fe")
LIB = "0x" + "ab" * 20
ABI = [
    {
        "type": "constructor",
        "inputs": [{"name": "owner", "type": "address"}, {"name": "supply", "type": "uint256"}],
    }
]


def tail(ipfs: bytes = b"\x11" * 34, solc: bytes = b"\x00\x08\x1a") -> bytes:
    """Solidity's metadata: a CBOR map, then its length in 2 bytes."""
    blob = cbor2.dumps({"ipfs": ipfs, "solc": solc})
    return blob + len(blob).to_bytes(2, "big")


def compiled(runtime: bytes, creation: bytes = b"", **extra) -> Compiled:
    fields = {"creation_links": {}, "runtime_links": {}, "immutables": {}, "trailing": 0} | extra
    return Compiled(creation=creation or BODY + runtime, runtime=runtime, **fields)


def no_diagnosis() -> tuple[str, str]:
    raise AssertionError("diagnose is called only for code that differs for no reason found")


def run(code: Compiled, on_chain: bytes, creation: Creation | None = None, **overrides) -> Matched:
    options = {
        "compiler_version": SOLC,
        "libraries": {},
        "submitted_args": "",
        "abi": [],
        "diagnose": no_diagnosis,
    } | overrides
    return compare(code, creation, on_chain, **options)


def args(owner: str = "0x" + "01" * 20, supply: int = 1000) -> str:
    return encode(["address", "uint256"], [owner, supply]).hex()


def test_equal_code_is_a_full_match_with_the_deployment_s_arguments():
    runtime = b"\x60\x01\x60\x02\x01" + tail()
    code = compiled(runtime)
    creation = Creation("0xtx", code.creation + bytes.fromhex(args()))
    matched = run(code, runtime, creation, submitted_args=args(), abi=ABI)
    assert matched == Matched("full", {}, args())


def test_only_the_metadata_differs_a_partial_match():
    code = compiled(b"\x60\x01\x60\x02\x01" + tail(b"\x11" * 34))
    on_chain = b"\x60\x01\x60\x02\x01" + tail(b"\x22" * 34)
    assert run(code, on_chain).match == "partial"


def test_immutables_are_masked_on_both_sides():
    runtime = b"\x7f" + bytes(32) + b"\x00"
    code = compiled(runtime, immutables={"7": [{"start": 1, "length": 32}]})
    on_chain = b"\x7f" + (42).to_bytes(32, "big") + b"\x00"
    assert run(code, on_chain).match == "full"
    unmasked = compiled(runtime)
    with pytest.raises(Failure) as caught:
        run(unmasked, on_chain, diagnose=lambda: ("source", "the code differs"))
    assert caught.value.offset == 32  # the first non-zero byte of 42


def test_the_first_differing_byte_is_named_with_diagnose_s_setting():
    code = compiled(b"\x60\x01\x60\x02\x01\x00" + tail())
    on_chain = b"\x60\x01\x60\x03\x01\x00" + tail()
    calls = []

    def diagnose() -> tuple[str, str]:
        calls.append(1)
        return "optimizer", "compiled with the optimizer"

    with pytest.raises(Failure) as caught:
        run(code, on_chain, diagnose=diagnose)
    failure = caught.value
    assert (failure.kind, failure.offset, failure.setting) == (FailureKind.BYTECODE, 3, "optimizer")
    assert failure.reason.startswith(Texts.BYTECODE_MISMATCH)
    assert "at byte 3 of the runtime code" in failure.reason and failure.reason.endswith("compiled with the optimizer")
    assert calls == [1]


def test_a_creation_code_difference_is_named_as_the_creation_s():
    runtime = b"\x60\x01\x00"
    code = compiled(runtime, creation=b"\x60\x80\x60\x40\x52")
    creation = Creation("0xtx", b"\x60\x80\x60\x41\x52")
    with pytest.raises(Failure) as caught:
        run(code, runtime, creation, diagnose=lambda: ("source", "x"))
    assert "at byte 3 of the creation code" in caught.value.reason


def test_metadata_only_in_one_side_names_the_metadata_settings():
    body = b"\x60\x01\x60\x02\x01"
    with pytest.raises(Failure) as caught:
        run(compiled(body + tail()), body)
    assert caught.value.setting == "metadata" and Texts.CHECK_BYTECODEHASH in caught.value.reason
    assert "bytecodeHash or appendCBOR" in caught.value.reason


def test_another_compiler_in_the_deployed_metadata_is_named():
    body = b"\x60\x01\x60\x02\x01"
    on_chain = body + tail(solc=b"\x00\x08\x14")  # 0.8.20
    with pytest.raises(Failure) as caught:
        run(compiled(body + tail()), on_chain)  # differs only in metadata, but the version is wrong
    assert caught.value.kind == FailureKind.COMPILER_VERSION
    assert "metadata says solc 0.8.20, but v0.8.26+commit.8a97fa7a was submitted" in caught.value.reason
    assert compiler_version_difference(SOLC, on_chain, b"") is not None
    assert compiler_version_difference("v0.8.20", on_chain, b"") is None
    assert compiler_version_difference("not a version", on_chain, b"") is None
    assert compiler_version_difference(SOLC, body, b"") is None  # no metadata: nothing to say


def test_other_constructor_arguments_are_named_argument_by_argument():
    runtime = b"\x60\x01\x00"
    code = compiled(runtime)
    creation = Creation("0xtx", code.creation + bytes.fromhex(args(supply=5)))
    with pytest.raises(Failure) as caught:
        run(code, runtime, creation, submitted_args=args(supply=6), abi=ABI)
    assert caught.value.kind == FailureKind.CONSTRUCTOR_ARGUMENTS
    assert caught.value.reason.startswith(Texts.CHECK_CONSTRUCTOR_ARGUMENTS)
    assert "supply (uint256): submitted 6, deployed 5" in caught.value.reason
    assert "owner" not in caught.value.reason


def test_without_the_creation_the_submitted_arguments_are_taken():
    runtime = b"\x60\x01\x00"
    assert run(compiled(runtime), runtime, None, submitted_args="abcd").constructor_arguments == "abcd"


LINKS = {"L.sol": {"Lib": [{"start": 1, "length": 20}]}}


def linked(address: str) -> bytes:
    return b"\x73" + bytes.fromhex(address[2:]) + b"\x00"


def test_a_linked_library_must_be_submitted_with_its_chain_address():
    code = compiled(b"\x73" + bytes(20) + b"\x00", runtime_links=LINKS)
    on_chain = linked(LIB)
    matched = run(code, on_chain, libraries={"Lib": LIB})
    assert matched.libraries == {"Lib": LIB}
    assert run(code, on_chain, libraries={"Lib": LIB.upper().replace("0X", "0x")}).libraries == {"Lib": LIB}

    with pytest.raises(Failure) as missing:
        run(code, on_chain)
    assert missing.value.kind == FailureKind.LIBRARY and missing.value.setting == "library"
    assert f"submit libraryname1=Lib and libraryaddress1={LIB}" in missing.value.reason
    assert missing.value.reason.startswith(LIBRARY_REQUIRED)

    with pytest.raises(Failure) as other:
        run(code, on_chain, libraries={"Lib": "0x" + "cd" * 20})
    assert f"address differs: submitted 0x{'cd' * 20}, on chain {LIB}" in other.value.reason


def test_a_library_at_two_addresses_is_refused():
    links = {"L.sol": {"Lib": [{"start": 1, "length": 20}, {"start": 22, "length": 20}]}}
    code = compiled(b"\x73" + bytes(20) + b"\x73" + bytes(20), runtime_links=links)
    on_chain = linked(LIB)[:-1] + linked("0x" + "cd" * 20)[:-1]
    with pytest.raises(Failure, match="linked at two addresses on chain"):
        run(code, on_chain, libraries={"Lib": LIB})


def test_a_library_linked_at_compile_time_with_another_address_on_chain():
    code = compiled(linked(LIB))  # settings.libraries put the address into the code
    other = "0x" + "cd" * 20
    with pytest.raises(Failure) as caught:
        run(code, linked(other), libraries={"Lib": LIB})
    assert caught.value.kind == FailureKind.LIBRARY
    assert f"submitted {LIB}, on chain {other}" in caught.value.reason
    assert run(code, linked(LIB), libraries={"Lib": LIB}).libraries == {"Lib": LIB}


def test_vyper_trailing_immutables_are_cut_and_a_wrong_length_is_said():
    runtime = b"\x60\x01\x00"
    code = compiled(runtime, trailing=32)
    assert run(code, runtime + (7).to_bytes(32, "big")).match == "full"
    with pytest.raises(Failure) as caught:
        run(code, runtime + bytes(40))
    assert "followed by 40 bytes, but the contract's immutables take 32 bytes" in caught.value.reason


def test_compiled_from_evm_reads_hex_and_references():
    evm = {
        "bytecode": {"object": "0x6001", "linkReferences": LINKS},
        "deployedBytecode": {"object": "6002", "immutableReferences": {"3": [{"start": 0, "length": 1}]}},
    }
    code = Compiled.from_evm(evm, "solidity")
    assert (code.creation, code.runtime, code.trailing) == (b"\x60\x01", b"\x60\x02", 0)
    assert code.creation_links == LINKS and code.runtime_links == {} and "3" in code.immutables
    empty = Compiled.from_evm({}, "solidity")
    assert (empty.creation, empty.runtime) == (b"", b"")


def test_failure_points_at_its_input_unless_told():
    assert Failure(FailureKind.NO_CODE, "x").setting == "address"
    assert Failure(FailureKind.BYTECODE, "x", setting="viaIR").setting == "viaIR"
    assert all(Failure(kind, "x").setting for kind in FailureKind)  # every kind points at an input
    assert str(Failure(FailureKind.CHAIN, "node down")) == "node down"


def test_constructor_arguments_reason_without_an_abi_shows_both_blobs():
    reason = constructor_arguments_reason("00ff", "00fe")
    assert (
        reason
        == "Constructor arguments differ: submitted 0x00ff but the deployment used 0x00fe (first difference at byte 1, in 32-byte word 0)"
    )
    assert "submitted (none)" in constructor_arguments_reason("", "00")
    long = constructor_arguments_reason("aa" * 600, "bb", limit=8)
    assert "0xaaaaaaaa… (600 bytes)" in long


def test_argument_differences_decode_or_give_up():
    inputs = constructor_inputs(ABI)
    assert [i["name"] for i in inputs] == ["owner", "supply"]
    assert argument_differences(args(supply=1), args(supply=2), inputs) == "supply (uint256): submitted 1, deployed 2"
    assert argument_differences("00", args(), inputs) == ""  # not an encoding of the inputs
    assert argument_differences(args(), args(), []) == ""
    assert constructor_inputs([{"type": "function", "name": "f"}]) == []


def test_lookup_library_by_full_or_bare_name():
    assert lookup_library({"Lib": LIB}, "L.sol:Lib") == LIB
    assert lookup_library({"L.sol:Lib": LIB}, "L.sol:Lib") == LIB
    assert lookup_library({"Other": LIB}, "Lib") is None
