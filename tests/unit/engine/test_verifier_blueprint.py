"""engine/verifier.py's comparison: an ERC-5202 blueprint's body against the compiled creation code,
with code written here (a preamble, a body, CBOR metadata by cbor2), no compiler and no chain."""

from __future__ import annotations

import cbor2
import pytest

from ape_contract_verify.engine.compilers import Compiled
from ape_contract_verify.engine.verifier import Failure, FailureKind, compare_blueprint
from ape_contract_verify.evm import blueprint
from ape_contract_verify.protocol.answers import Texts

pytestmark = pytest.mark.unit

CODE = bytes.fromhex("6080604052348015600e575f5ffd5b50") * 4
SOLC = "v0.8.26+commit.8a97fa7a"
CONSTRUCTOR = [{"type": "constructor", "inputs": [{"name": "owner", "type": "uint256"}]}]


def with_metadata(code: bytes, solc: tuple[int, int, int] = (0, 8, 26)) -> bytes:
    """Solidity's layout: the code, the CBOR map naming the compiler, the map's length."""
    blob = cbor2.dumps({"ipfs": bytes.fromhex("1220") + bytes(32), "solc": bytes(solc)})
    return code + blob + len(blob).to_bytes(2, "big")


def compiled(creation: bytes) -> Compiled:
    return Compiled(creation=creation, creation_links={}, runtime=b"", runtime_links={}, immutables={}, trailing=0)


def on_chain(body: bytes) -> blueprint.Blueprint:
    """What the chain holds after `declare`: the preamble, version 0, no data, then `body`."""
    parsed = blueprint.parse(blueprint.MAGIC + b"\x00" + body)
    assert parsed is not None and parsed.body == body
    return parsed


def test_a_body_that_is_the_creation_code_matches_fully():
    matched = compare_blueprint(
        compiled(with_metadata(CODE)), on_chain(with_metadata(CODE)), compiler_version=SOLC, submitted_args="", abi=[]
    )
    assert (matched.match, matched.constructor_arguments, matched.libraries) == ("full", "", {})


def test_arguments_after_the_creation_code_must_be_the_submitted_ones():
    args = (7).to_bytes(32, "big")
    creation = with_metadata(CODE)
    matched = compare_blueprint(
        compiled(creation), on_chain(creation + args), compiler_version=SOLC, submitted_args=args.hex(), abi=CONSTRUCTOR
    )
    assert matched.match == "full" and matched.constructor_arguments == args.hex()

    with pytest.raises(Failure) as caught:
        compare_blueprint(
            compiled(creation),
            on_chain(creation + args),
            compiler_version=SOLC,
            submitted_args=(8).to_bytes(32, "big").hex(),
            abi=CONSTRUCTOR,
        )
    failure = caught.value
    assert failure.kind == FailureKind.CONSTRUCTOR_ARGUMENTS and failure.setting == "constructor arguments"
    assert failure.reason.startswith(Texts.CHECK_CONSTRUCTOR_ARGUMENTS)
    assert "owner (uint256): submitted 8, deployed 7" in failure.reason and blueprint.BLUEPRINT in failure.reason


def test_arguments_from_the_chain_are_the_bodys_bytes_after_the_code():
    args = (7).to_bytes(32, "big")
    creation = with_metadata(CODE)
    matched = compare_blueprint(
        compiled(creation),
        on_chain(creation + args),
        compiler_version=SOLC,
        submitted_args="",
        abi=CONSTRUCTOR,
        args_from_chain=True,
    )
    assert matched.constructor_arguments == args.hex()


def test_only_the_metadata_differing_is_a_partial_match():
    other_hash = cbor2.dumps({"ipfs": bytes.fromhex("1220") + bytes([1] * 32), "solc": bytes([0, 8, 26])})
    body = CODE + other_hash + len(other_hash).to_bytes(2, "big")
    matched = compare_blueprint(
        compiled(with_metadata(CODE)), on_chain(body), compiler_version=SOLC, submitted_args="", abi=[]
    )
    assert matched.match == "partial"


def test_other_code_is_a_difference_of_the_source_never_of_a_setting():
    changed = bytearray(CODE)
    changed[10] ^= 0xFF
    with pytest.raises(Failure) as caught:
        compare_blueprint(
            compiled(with_metadata(CODE)),
            on_chain(with_metadata(bytes(changed))),
            compiler_version=SOLC,
            submitted_args="",
            abi=[],
        )
    failure = caught.value
    assert (failure.kind, failure.setting, failure.offset) == (FailureKind.BYTECODE, "source", 10)
    assert failure.reason.startswith(Texts.BYTECODE_MISMATCH) and "differ at byte 10 of the body" in failure.reason


def test_a_body_shorter_than_the_creation_code_does_not_match():
    creation = with_metadata(CODE)
    with pytest.raises(Failure) as caught:
        compare_blueprint(compiled(creation), on_chain(creation[:20]), compiler_version=SOLC, submitted_args="", abi=[])
    assert caught.value.kind == FailureKind.BYTECODE and caught.value.setting == "source"
    assert f"({len(creation)} bytes)" in caught.value.reason


def test_metadata_naming_another_compiler_is_said_as_such():
    changed = bytearray(CODE)
    changed[0] ^= 0xFF
    with pytest.raises(Failure) as caught:
        compare_blueprint(
            compiled(with_metadata(CODE)),
            on_chain(with_metadata(bytes(changed), (0, 8, 20))),
            compiler_version=SOLC,
            submitted_args="",
            abi=[],
        )
    assert caught.value.kind == FailureKind.COMPILER_VERSION
    assert "the deployed code's metadata says solc 0.8.20, but v0.8.26+commit.8a97fa7a was submitted" in (
        caught.value.reason
    )
