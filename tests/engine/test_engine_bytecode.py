"""bytecode.py: metadata, immutables, link positions and comparison, on real compiler output."""

from __future__ import annotations

import pytest

from ape_contract_verify.engine.compilers import CompileCache
from ape_contract_verify.evm import bytecode as bc
from support.engine import SOLC, compiled, source, standard_input


@pytest.fixture(scope="module")
def cache():
    return CompileCache()


@pytest.fixture(scope="module")
def box(cache):
    return compiled(cache, SOLC, standard_input({"Box.sol": "Box.sol"}), "Box.sol", "Box")


@pytest.fixture(scope="module")
def box_commented(cache):
    input_json = standard_input({"Box.sol": "Box.sol"})
    input_json["sources"]["Box.sol"]["content"] += "\n// trailing comment\n"
    return compiled(cache, SOLC, input_json, "Box.sol", "Box")


def runtime(contract):
    return contract["evm"]["deployedBytecode"]["object"]


def creation(contract):
    return contract["evm"]["bytecode"]["object"]


def test_solidity_tail_metadata(box):
    code = bc.to_bytes(runtime(box))
    tail = bc.tail_metadata(code)
    assert tail is not None and tail.end == len(code)
    assert tail.compiler == ("solc", "0.8.26")
    assert set(tail.value) == {"ipfs", "solc"}
    assert bc.strip_metadata(code) == code[: tail.start]
    assert bc.strip_metadata(b"\x60\x00") == b"\x60\x00"  # nothing to strip


def test_comment_changes_only_metadata(box, box_commented):
    a, b = runtime(box), runtime(box_commented)
    assert a != b and bc.strip_metadata(a) == bc.strip_metadata(b)
    result = bc.compare(a, b, immutable_references=box["evm"]["deployedBytecode"]["immutableReferences"])
    assert result.match == "partial" and result.metadata_differs and result.offset is None
    result = bc.compare(creation(box), creation(box_commented))
    assert result.match == "partial"
    assert bc.compare(a, a).match == "full"


def test_mismatch_reports_first_offset(box):
    code = bytearray(bc.to_bytes(runtime(box)))
    code[100] ^= 0xFF
    result = bc.compare(runtime(box), bytes(code))
    assert result.match is None and result.offset == 100 and not result.matches
    shorter = bc.compare(runtime(box), bytes(code[:50]))
    assert shorter.match is None and shorter.offset == 50


def test_immutables_are_zeroed(box):
    refs = box["evm"]["deployedBytecode"]["immutableReferences"]
    ranges = bc.immutable_ranges(refs)
    assert len(ranges) >= 2 and all(length == 32 for _, length in ranges)
    on_chain = bytearray(bc.to_bytes(runtime(box)))
    for start, length in ranges:
        on_chain[start : start + length] = b"\x99" * length
    assert bc.compare(runtime(box), bytes(on_chain)).match is None
    assert bc.compare(runtime(box), bytes(on_chain), immutable_references=refs).match == "full"


def test_link_positions_blank_and_extract(cache):
    calc = compiled(cache, SOLC, standard_input({"Calculator.sol": "Calculator.sol"}), "Calculator.sol", "Calculator")
    links = calc["evm"]["deployedBytecode"]["linkReferences"]
    (position,) = bc.link_positions(links)
    assert (position.file, position.library, position.length) == ("Calculator.sol", "MathLib", 20)
    unlinked = runtime(calc)
    assert "__$" in unlinked  # placeholders become zeros when read
    assert bc.to_bytes(unlinked)[position.start : position.start + 20] == bytes(20)
    linked = bytearray(bc.to_bytes(unlinked))
    linked[position.start : position.start + 20] = bytes.fromhex("ab" * 20)
    assert bc.link_addresses_all(bytes(linked), links) == {"MathLib": ["0x" + "ab" * 20]}
    assert bc.zero_ranges(bytes(linked), [(position.start, position.length)]) == bc.to_bytes(unlinked)
    assert bc.compare(unlinked, bytes(linked), link_references=links).match == "full"
    assert bc.compare(unlinked, bytes(linked)).match is None
    assert bc.find_address(bytes(linked), "0x" + "ab" * 20) == [position.start]


def test_embedded_creation_code_metadata_is_found(cache):
    factory = compiled(cache, SOLC, standard_input({"Factory.sol": "Factory.sol"}), "Factory.sol", "Factory")
    segments = bc.metadata_segments(runtime(factory))
    # The factory's own tail plus the embedded Child creation code's.
    assert len(segments) == 2
    assert segments[-1].end == len(bc.to_bytes(runtime(factory)))
    assert all(s.compiler == ("solc", "0.8.26") for s in segments)


def test_vyper_layout_and_trailing_immutables(cache):
    input_json = {"language": "Vyper", "sources": {"Counter.vy": {"content": source("Counter.vy")}}}
    counter = compiled(cache, "vyper:0.4.3", input_json, "Counter.vy", "Counter")
    assert bc.vyper_immutables(creation(counter), b"") == 64  # owner + start, from the initcode's metadata
    tail = bc.tail_metadata(creation(counter))
    assert tail.compiler == ("vyper", "0.4.3")
    sizes = [item for item in tail.value if isinstance(item, int)]
    assert sizes[-2:] == [len(bc.to_bytes(runtime(counter))), 64]  # the runtime's size, then the immutables'
    on_chain = bc.to_bytes(runtime(counter)) + b"\x01" * 64
    assert bc.compare(runtime(counter), on_chain, trailing_immutables=64).match == "full"
    assert bc.compare(runtime(counter), on_chain).match is None


def test_split_constructor_args(box, box_commented):
    args = bytes.fromhex("00" * 31 + "07")
    deployed = bc.to_bytes(creation(box_commented)) + args
    # Metadata differs, but its size does not: the compiled length still finds the arguments.
    assert bc.split_constructor_args(deployed, creation(box)) == args.hex()
    assert bc.split_constructor_args(b"\x60", creation(box)) == ""


def test_to_bytes_forms():
    assert bc.to_bytes("0x6001") == b"\x60\x01" == bc.to_bytes("6001") == bc.to_bytes(b"\x60\x01")
    assert bc.to_hex(b"\x60\x01") == "0x6001"
    with pytest.raises(ValueError):
        bc.to_bytes("0xzz")
