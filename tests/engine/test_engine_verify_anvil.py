"""The verifier against real deployments on a real anvil, compiled with the real solc-js / vyper.

Each fixture deploys once per module; compiles are shared with the verifier through one cache,
so a correct submission costs no extra compile.
"""

from __future__ import annotations

import json
import threading

import pytest

from ape_contract_verify.engine.compilers import CompileCache
from ape_contract_verify.engine.verifier import FailureKind, Verifier
from ape_contract_verify.evm import bytecode as bc
from ape_contract_verify.evm.chain import JsonRpcChain
from support.engine import (
    SOLC,
    bytecode_of,
    compiled,
    encode,
    json_request,
    single_file_compiled,
    single_request,
    solc_version_of,
    source,
    standard_input,
)
from support.service import Anvil

BOX_TYPES = ["uint256", "address", "string", "bytes32", "int16[]"]


@pytest.fixture(scope="module")
def anvil():
    node = Anvil()
    yield node
    node.stop()


@pytest.fixture(scope="module")
def cache():
    return CompileCache()


@pytest.fixture(scope="module")
def verifier(anvil, cache):
    return Verifier(JsonRpcChain(anvil.url), cache)


@pytest.fixture(scope="module")
def box(anvil, cache):
    """Box from standard-json (optimizer on, 200 runs), with five constructor argument types."""
    input_json = standard_input({"src/Box.sol": "Box.sol"})
    contract = compiled(cache, SOLC, input_json, "src/Box.sol", "Box")
    args = encode(BOX_TYPES, [7, anvil.accounts[1], "hello box", b"\x11" * 32, [3, -2, 5]])
    address = anvil.deploy(bytecode_of(contract), args)
    return address, input_json, args


def test_box_full_match(verifier, box):
    address, input_json, args = box
    result = verifier.verify(json_request(address, input_json, "src/Box.sol:Box", args))
    assert result.text == "Pass - Verified", result.reason
    assert result.verified and result.match == "full"
    assert result.constructor_arguments == args.hex()
    assert {item.get("name") for item in result.abi} >= {"store", "describe", "created", "owner"}
    assert result.sources == {"src/Box.sol": source("Box.sol")}
    assert result.optimization_used is True and result.runs == 200 and result.evm_version == "Default"
    assert result.license_type == 3  # MIT, from the SPDX line
    assert result.creation_tx and result.factory is False


def test_wrong_constructor_arguments(verifier, box, anvil):
    address, input_json, args = box
    wrong = encode(BOX_TYPES, [8, anvil.accounts[1], "hello box", b"\x11" * 32, [3, -2, 5]])
    result = verifier.verify(json_request(address, input_json, "src/Box.sol:Box", wrong))
    assert not result.verified and result.failure == FailureKind.CONSTRUCTOR_ARGUMENTS
    # Decoded with the compiled ABI: only the differing argument is named.
    assert result.text == (
        "Fail - Unable to verify. Please check if the correct constructor argument was entered. Constructor arguments differ: initial (uint256): submitted 8, deployed 7 "
        "(first difference at byte 31, in 32-byte word 0)"
    )
    assert result.setting == "constructor arguments"


def test_undecodable_constructor_arguments_are_shown_as_hex(verifier, box):
    address, input_json, args = box
    wrong = args[:-1] + b"\x01"  # one byte off the end: no longer the constructor's encoding
    result = verifier.verify(json_request(address, input_json, "src/Box.sol:Box", wrong[:31]))
    assert result.failure == FailureKind.CONSTRUCTOR_ARGUMENTS
    assert result.reason.startswith(
        f"Please check if the correct constructor argument was entered. Constructor arguments differ: submitted 0x{wrong[:31].hex()} but the deployment used 0x{args.hex()}"
    )


def test_missing_constructor_arguments(verifier, box):
    address, input_json, _ = box
    result = verifier.verify(json_request(address, input_json, "src/Box.sol:Box", b""))
    assert result.failure == FailureKind.CONSTRUCTOR_ARGUMENTS
    assert "submitted (none) but the deployment used 0x" in result.reason


def _bytecode_failure(result):
    assert not result.verified and result.match is None
    assert result.failure == FailureKind.BYTECODE, result.reason
    assert result.text.startswith(
        "Fail - Unable to verify. Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. Compiled bytecode differs from the deployed code at byte "
    )
    assert isinstance(result.offset, int) and f"at byte {result.offset} " in result.reason
    hints = (
        "optimizer runs, evmVersion, viaIR or a source line",
        "optimize (gas, codesize, none), evmVersion or a source line",
    )
    assert "the deployed code was compiled with" in result.reason or any(hint in result.reason for hint in hints)
    return result.reason


def test_wrong_optimizer_runs(verifier, box, cache):
    address, input_json, args = box
    other = json.loads(json.dumps(input_json))
    other["settings"]["optimizer"]["runs"] = 10000
    # The setting must really change the code for this to be a failure, not a partial match.
    a = compiled(cache, SOLC, input_json, "src/Box.sol", "Box")["evm"]["deployedBytecode"]["object"]
    b = compiled(cache, SOLC, other, "src/Box.sol", "Box")["evm"]["deployedBytecode"]["object"]
    assert bc.strip_metadata(a) != bc.strip_metadata(b)
    reason = _bytecode_failure(verifier.verify(json_request(address, other, "src/Box.sol:Box", args)))
    assert reason.endswith("the deployed code was compiled with optimizer.runs=200: resubmit with that setting.")


def test_optimizer_off(verifier, box):
    address, input_json, args = box
    other = json.loads(json.dumps(input_json))
    other["settings"]["optimizer"]["enabled"] = False
    reason = _bytecode_failure(verifier.verify(json_request(address, other, "src/Box.sol:Box", args)))
    assert "compiled with the optimizer enabled with 200 runs (optimizer.enabled=true)" in reason


def test_wrong_evm_version(verifier, box):
    address, input_json, args = box
    other = json.loads(json.dumps(input_json))
    other["settings"]["evmVersion"] = "paris"  # no PUSH0: the code really changes
    reason = _bytecode_failure(verifier.verify(json_request(address, other, "src/Box.sol:Box", args)))
    assert "compiled with the compiler's default evmVersion" in reason


def test_changed_source_line(anvil, cache, box):
    address, input_json, args = box
    verifier = Verifier(JsonRpcChain(anvil.url), cache, diagnose_compiles=2)
    other = json.loads(json.dumps(input_json))
    text = other["sources"]["src/Box.sol"]["content"]
    assert 'require(msg.sender == owner, "not owner");' in text
    other["sources"]["src/Box.sol"]["content"] = text.replace('"not owner"', '"only the owner"')
    reason = _bytecode_failure(verifier.verify(json_request(address, other, "src/Box.sol:Box", args)))
    assert "No single change among the optimizer disabled (optimizer.enabled=false), viaIR=true reproduces it" in reason
    assert reason.endswith("so the source or the compiler most likely differs.")


def test_comment_change_is_partial_match(verifier, box):
    address, input_json, args = box
    other = json.loads(json.dumps(input_json))
    other["sources"]["src/Box.sol"]["content"] = (
        "// a comment changes only the metadata hash\n" + other["sources"]["src/Box.sol"]["content"]
    )
    result = verifier.verify(json_request(address, other, "src/Box.sol:Box", args))
    assert result.verified and result.match == "partial", result.reason
    assert result.text == "Pass - Verified"
    assert "only the metadata hash differs" in result.reason


def test_metadata_settings_must_match(verifier, box):
    address, input_json, args = box
    other = json.loads(json.dumps(input_json))
    other["settings"]["metadata"] = {"bytecodeHash": "none"}
    result = verifier.verify(json_request(address, other, "src/Box.sol:Box", args))
    assert result.failure == FailureKind.BYTECODE
    assert (
        "only in the CBOR metadata's shape" in result.reason and "metadata.bytecodeHash or appendCBOR" in result.reason
    )


def test_source_unit_name_change_is_partial_match(verifier, box):
    address, _, args = box
    moved = standard_input({"contracts/deep/Box.sol": "Box.sol"})
    result = verifier.verify(json_request(address, moved, "contracts/deep/Box.sol:Box", args))
    assert result.verified and result.match == "partial", result.reason


def test_wrong_compiler_version(verifier, box):
    address, input_json, args = box
    newer = solc_version_of("0.8.37")
    result = verifier.verify(json_request(address, input_json, "src/Box.sol:Box", args, version=newer))
    assert not result.verified
    assert result.failure in (FailureKind.COMPILER_VERSION, FailureKind.BYTECODE)
    assert "Compiler version differs: the deployed code's metadata says solc 0.8.26" in result.reason


def test_compiler_not_installed(verifier, box):
    address, input_json, args = box
    result = verifier.verify(
        json_request(address, input_json, "src/Box.sol:Box", args, version="v0.8.20+commit.a1b79de6")
    )
    assert result.failure == FailureKind.COMPILER
    assert result.text.startswith(
        "Fail - Unable to verify. Invalid or not supported solc version, see https://etherscan.io/solcversions for list: Compiler v0.8.20+commit.a1b79de6 is not installed"
    )
    assert "0.8.26" in result.reason  # names what is installed


def test_wrong_contract_name(verifier, box, cache):
    address, input_json, args = box
    before = cache.compiles
    result = verifier.verify(json_request(address, input_json, "src/Box.sol:Crate", args))
    assert result.failure == FailureKind.CONTRACT_NAME
    assert result.reason.startswith("Unable to locate ContractName Crate, did you specify the correct Contract Name ?")
    assert "declares: Box" in result.reason
    result = verifier.verify(json_request(address, input_json, "src/Crate.sol:Box", args))
    assert result.failure == FailureKind.CONTRACT_NAME and "no source unit 'src/Crate.sol'" in result.reason
    assert cache.compiles == before  # a wrong name is caught before compiling


def test_bare_name_in_json_input(verifier, box):
    address, input_json, args = box
    assert verifier.verify(json_request(address, input_json, "Box", args)).match == "full"
    missing = verifier.verify(json_request(address, input_json, "Crate", args))
    assert missing.failure == FailureKind.CONTRACT_NAME
    assert "no source declares it; use path/File.sol:Crate" in missing.reason


def test_no_code_at_address(verifier, box):
    _, input_json, args = box
    empty = "0x" + "ab" * 20
    result = verifier.verify(json_request(empty, input_json, "src/Box.sol:Box", args))
    assert result.failure == FailureKind.NO_CODE
    assert result.text == f"Unable to locate ContractCode at {empty}"


def test_bad_input_json(verifier, box):
    address, _, args = box
    request = json_request(address, {"sources": {}}, "src/Box.sol:Box", args)
    request.source_code = "{not json"
    result = verifier.verify(request)
    assert result.failure == FailureKind.INVALID_INPUT and "sourceCode is not valid JSON" in result.reason


def test_constructor_arguments_must_be_hex(verifier, box):
    address, input_json, _ = box
    request = json_request(address, input_json, "src/Box.sol:Box")
    request.constructor_arguments = "0x12zz"
    result = verifier.verify(request)
    assert result.failure == FailureKind.INVALID_INPUT
    assert result.reason.startswith(
        "Invalid constructor arguments provided. Please verify that they are in ABI-encoded format"
    )


def test_etherscan_double_brace_wrapping(verifier, box):
    address, input_json, args = box
    request = json_request(address, input_json, "src/Box.sol:Box", args)
    request.source_code = "{" + request.source_code + "}"
    assert verifier.verify(request).match == "full"


def test_cache_verifies_again_without_compiling(anvil, box, tmp_path):
    address, input_json, args = box
    fresh = CompileCache(tmp_path / "own")  # not the session's shared cache: this one counts
    verifier = Verifier(JsonRpcChain(anvil.url), fresh)
    assert verifier.verify(json_request(address, input_json, "src/Box.sol:Box", args)).match == "full"
    assert (fresh.compiles, fresh.hits) == (1, 0)
    assert verifier.verify(json_request(address, input_json, "src/Box.sol:Box", args)).match == "full"
    assert (fresh.compiles, fresh.hits) == (1, 1)


def test_concurrent_verifications_compile_once(anvil, box, tmp_path):
    address, input_json, args = box
    fresh = CompileCache(tmp_path / "own")  # not the session's shared cache: this one counts
    verifier = Verifier(JsonRpcChain(anvil.url), fresh)
    results = []
    threads = [
        threading.Thread(
            target=lambda: results.append(verifier.verify(json_request(address, input_json, "src/Box.sol:Box", args)))
        )
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert [r.match for r in results] == ["full"] * 4
    assert fresh.compiles == 1 and fresh.hits == 3


# --- settings variants, single-file ---------------------------------------------------------


def test_via_ir_paris_10000_runs(anvil, verifier, cache):
    input_json = standard_input({"Box.sol": "Box.sol"}, viaIR=True, evmVersion="paris")
    input_json["settings"]["optimizer"]["runs"] = 10000
    contract = compiled(cache, SOLC, input_json, "Box.sol", "Box")
    args = encode(BOX_TYPES, [1, anvil.accounts[2], "", b"\0" * 32, []])
    address = anvil.deploy(bytecode_of(contract), args)
    result = verifier.verify(json_request(address, input_json, "Box.sol:Box", args))
    assert result.match == "full", result.reason
    assert result.via_ir and result.evm_version == "paris" and result.runs == 10000
    without_ir = json.loads(json.dumps(input_json))
    without_ir["settings"]["viaIR"] = False
    assert "compiled with viaIR=true" in _bytecode_failure(
        verifier.verify(json_request(address, without_ir, "Box.sol:Box", args))
    )


def test_single_file(anvil, verifier, cache):
    text = source("Box.sol")
    contract = single_file_compiled(cache, SOLC, text, "Box", optimizer=False, evm_version="shanghai")
    args = encode(BOX_TYPES, [2, anvil.accounts[0], "flat", b"\x22" * 32, [-1]])
    address = anvil.deploy(bytecode_of(contract), args)
    ok = verifier.verify(single_request(address, text, "Box", args, optimization_used=False, evm_version="shanghai"))
    assert ok.match == "full", ok.reason
    assert ok.settings["optimizer"] == {"enabled": False, "runs": 200} and ok.evm_version == "shanghai"
    runs_on = verifier.verify(
        single_request(address, text, "Box", args, optimization_used=True, runs=200, evm_version="shanghai")
    )
    assert "compiled with the optimizer disabled (optimizationUsed=0)" in _bytecode_failure(runs_on)
    wrong_name = verifier.verify(
        single_request(address, text, "Crate", args, optimization_used=False, evm_version="shanghai")
    )
    assert wrong_name.failure == FailureKind.CONTRACT_NAME and "The source declares: Box" in wrong_name.reason


# --- libraries --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def math_lib(anvil, cache):
    contract = single_file_compiled(cache, SOLC, source("Calculator.sol"), "MathLib", optimizer=True)
    return anvil.deploy(bytecode_of(contract))


def test_library_itself(verifier, math_lib):
    """A library's runtime starts with PUSH20 <its own address>, filled in at deployment."""
    text = source("Calculator.sol")
    result = verifier.verify(single_request(math_lib, text, "MathLib", optimization_used=True))
    assert result.match == "full", result.reason


def test_library_linked_by_settings(anvil, verifier, cache, math_lib):
    text = source("Calculator.sol")
    contract = single_file_compiled(cache, SOLC, text, "Calculator", optimizer=True, libraries={"MathLib": math_lib})
    args = encode(["uint256"], [3])
    address = anvil.deploy(bytecode_of(contract), args)
    assert bc.find_address(anvil.rpc("eth_getCode", address, "latest"), math_lib)  # really linked

    ok = verifier.verify(
        single_request(address, text, "Calculator", args, optimization_used=True, libraries={"MathLib": math_lib})
    )
    assert ok.match == "full", ok.reason
    assert ok.libraries == {"MathLib": math_lib}

    other = "0x" + "5a" * 20
    wrong = verifier.verify(
        single_request(address, text, "Calculator", args, optimization_used=True, libraries={"MathLib": other})
    )
    assert wrong.failure == FailureKind.LIBRARY
    assert (
        wrong.text
        == f"Fail - Unable to verify. Library was required but suitable match not found: Library MathLib address differs: submitted {other}, on chain {math_lib.lower()}"
    )


def test_library_at_link_positions(anvil, verifier, cache, math_lib):
    """Compiled unlinked (no settings.libraries): link positions are blanked and read back."""
    input_json = standard_input({"src/Calculator.sol": "Calculator.sol"})
    contract = compiled(cache, SOLC, input_json, "src/Calculator.sol", "Calculator")
    links = contract["evm"]["bytecode"]["linkReferences"]
    assert links["src/Calculator.sol"]["MathLib"]
    creation = bytearray(bc.to_bytes(bytecode_of(contract)))
    for position in bc.link_positions(links):
        creation[position.start : position.start + 20] = bytes.fromhex(math_lib[2:])
    args = encode(["uint256"], [4])
    address = anvil.deploy(bytes(creation), args)
    runtime = anvil.rpc("eth_getCode", address, "latest")
    assert bc.link_addresses_all(runtime, contract["evm"]["deployedBytecode"]["linkReferences"]) == {
        "MathLib": [math_lib.lower()]
    }

    ok = verifier.verify(
        json_request(address, input_json, "src/Calculator.sol:Calculator", args, libraries={"MathLib": math_lib})
    )
    assert ok.match == "full", ok.reason
    assert ok.libraries == {"MathLib": math_lib.lower()}

    other = "0x" + "77" * 20
    wrong = verifier.verify(
        json_request(address, input_json, "src/Calculator.sol:Calculator", args, libraries={"MathLib": other})
    )
    assert wrong.failure == FailureKind.LIBRARY
    assert (
        wrong.reason
        == f"Library was required but suitable match not found: Library MathLib address differs: submitted {other}, on chain {math_lib.lower()}"
    )

    missing = verifier.verify(json_request(address, input_json, "src/Calculator.sol:Calculator", args))
    assert missing.failure == FailureKind.LIBRARY
    assert missing.reason.startswith(
        f"Library was required but suitable match not found: MathLib is linked at {math_lib.lower()}"
    )


# --- factories --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def children(anvil, cache):
    input_json = standard_input({"src/Factory.sol": "Factory.sol"})
    factory = anvil.deploy(bytecode_of(compiled(cache, SOLC, input_json, "src/Factory.sol", "Factory")))
    made = {}
    from eth_utils import keccak

    make = keccak(text="make(uint256)")[:4] + encode(["uint256"], [41])
    make2 = keccak(text="make2(bytes32,uint256)")[:4] + encode(["bytes32", "uint256"], [b"\x42" * 32, 42])
    for kind, data in (("create", make), ("create2", make2)):
        receipt = anvil.transact(data, to=factory)
        (log,) = receipt["logs"]
        made[kind] = "0x" + log["data"][-40:]
    anvil.rpc("evm_mine")  # the child is not in the latest block: the search must go back
    return factory, input_json, made


@pytest.mark.parametrize("kind,value", [("create", 41), ("create2", 42)])
def test_factory_child_found_through_traces(verifier, children, kind, value):
    factory, input_json, made = children
    address = made[kind]
    creation = verifier.chain.find_creation(address)
    assert creation is not None and creation.factory is True
    assert creation.creator.lower() == factory.lower()
    result = verifier.verify(json_request(address, input_json, "src/Factory.sol:Child", encode(["uint256"], [value])))
    assert result.match == "full", result.reason
    assert result.factory is True
    wrong = verifier.verify(
        json_request(address, input_json, "src/Factory.sol:Child", encode(["uint256"], [value + 1]))
    )
    assert wrong.failure == FailureKind.CONSTRUCTOR_ARGUMENTS


def test_parity_traces_give_the_same_creation(anvil, children):
    """Nodes with only the trace_ namespace (Erigon, Nethermind): trace_block finds the frame too."""
    _, _, made = children
    debug, parity = JsonRpcChain(anvil.url), JsonRpcChain(anvil.url)
    parity._traces = "parity"
    for address in made.values():
        by_debug, by_parity = debug.find_creation(address), parity.find_creation(address)
        assert by_parity is not None and by_parity.factory
        assert (by_parity.tx_hash, by_parity.input, by_parity.creator.lower()) == (
            by_debug.tx_hash,
            by_debug.input,
            by_debug.creator.lower(),
        )
    assert debug._traces == "debug"


# --- vyper ------------------------------------------------------------------------------------


def test_vyper_json(anvil, verifier, cache):
    input_json = {
        "language": "Vyper",
        "sources": {"contracts/Counter.vy": {"content": source("Counter.vy")}},
        "settings": {"evmVersion": "cancun"},
    }
    contract = compiled(cache, "vyper:0.4.3", input_json, "contracts/Counter.vy", "Counter")
    args = encode(["uint256", "string"], [5, "vy"])
    address = anvil.deploy(bytecode_of(contract), args)
    ok = verifier.verify(json_request(address, input_json, "contracts/Counter.vy:Counter", args, version="vyper:0.4.3"))
    assert ok.match == "full", ok.reason
    assert {item.get("name") for item in ok.abi} >= {"bump", "owner", "start"}
    wrong = verifier.verify(
        json_request(
            address,
            input_json,
            "contracts/Counter.vy:Counter",
            encode(["uint256", "string"], [6, "vy"]),
            version="vyper:0.4.3",
        )
    )
    assert wrong.failure == FailureKind.CONSTRUCTOR_ARGUMENTS
    wrong_name = verifier.verify(
        json_request(address, input_json, "contracts/Counter.vy:Count", args, version="vyper:0.4.3")
    )
    assert (
        wrong_name.failure == FailureKind.CONTRACT_NAME
        and "contracts/Counter.vy declares: Counter" in wrong_name.reason
    )
    other_version = verifier.verify(
        json_request(address, input_json, "contracts/Counter.vy:Counter", args, version="vyper:0.4.2")
    )
    assert other_version.failure == FailureKind.COMPILER and "vyper:0.4.2 is not installed" in other_version.reason
    commented = json.loads(json.dumps(input_json))
    commented["sources"]["contracts/Counter.vy"]["content"] = "# a comment: only the integrity hash changes\n" + source(
        "Counter.vy"
    )
    partial = verifier.verify(
        json_request(address, commented, "contracts/Counter.vy:Counter", args, version="vyper:0.4.3")
    )
    assert partial.verified and partial.match == "partial", partial.reason
    changed = json.loads(json.dumps(input_json))
    changed["sources"]["contracts/Counter.vy"]["content"] = source("Counter.vy").replace(
        "self.count += by", "self.count += by + 1"
    )
    _bytecode_failure(
        verifier.verify(json_request(address, changed, "contracts/Counter.vy:Counter", args, version="vyper:0.4.3"))
    )


# --- older compilers, unreachable nodes -------------------------------------------------------

OLD_SOLIDITY = """pragma solidity ^0.5.0;

contract Legacy {
    uint256 public value;
    address public owner;

    constructor(uint256 v) public {
        value = v;
        owner = msg.sender;
    }
}
"""


def test_solidity_0_5(anvil, verifier, cache):
    version = solc_version_of("0.5.17")
    contract = single_file_compiled(cache, version, OLD_SOLIDITY, "Legacy", optimizer=True, evm_version="petersburg")
    args = encode(["uint256"], [55])
    address = anvil.deploy(bytecode_of(contract), args)
    ok = verifier.verify(
        single_request(
            address, OLD_SOLIDITY, "Legacy", args, version=version, optimization_used=True, evm_version="petersburg"
        )
    )
    assert ok.match == "full", ok.reason
    # 0.5 metadata is bzzr1 and records solc's version too.
    assert bc.tail_metadata(anvil.rpc("eth_getCode", address, "latest")).compiler == ("solc", "0.5.17")
    wrong = verifier.verify(
        single_request(
            address, OLD_SOLIDITY, "Legacy", args, version=version, optimization_used=False, evm_version="petersburg"
        )
    )
    _bytecode_failure(wrong)


def test_unreachable_node_is_a_clear_failure_without_the_url_path(box):
    from support.service import free_port

    address, input_json, args = box
    chain = JsonRpcChain(f"http://127.0.0.1:{free_port()}/v2/SECRET-RPC-KEY", timeout=2)
    result = Verifier(chain, CompileCache()).verify(json_request(address, input_json, "src/Box.sol:Box", args))
    assert result.failure == FailureKind.CHAIN
    assert result.text.startswith("Fail - Unable to verify. The chain could not be read: the node at http://127.0.0.1:")
    assert "SECRET-RPC-KEY" not in result.text and "SECRET-RPC-KEY" not in repr(chain)


def test_creation_search_is_bounded(anvil, box, cache):
    address, input_json, args = box
    for _ in range(3):
        anvil.rpc("evm_mine")
    narrow = JsonRpcChain(anvil.url, max_scan_blocks=2)
    assert narrow.find_creation(address) is None  # deployed before the window
    result = Verifier(narrow, cache).verify(json_request(address, input_json, "src/Box.sol:Box", args))
    assert result.failure == FailureKind.NO_CREATION
    assert result.reason.startswith(f"Unable to find the transaction that created {address}")


def test_creation_found_without_historical_state(cache):
    """A node that keeps no old state (anvil --prune-history): a bounded backwards scan instead."""
    pruned = Anvil(extra=("--prune-history",))
    try:
        input_json = standard_input({"src/Box.sol": "Box.sol"})
        args = encode(BOX_TYPES, [5, pruned.accounts[0], "pruned", b"\x05" * 32, []])
        address = pruned.deploy(bytecode_of(compiled(cache, SOLC, input_json, "src/Box.sol", "Box")), args)
        for _ in range(3):
            pruned.rpc("evm_mine")
        chain = JsonRpcChain(pruned.url)
        assert chain._code_at(address, 1) is None  # really no historical state here
        creation = chain.find_creation(address)
        assert creation is not None and creation.input.endswith(args) and creation.block == 1
        assert Verifier(chain, cache).verify(json_request(address, input_json, "src/Box.sol:Box", args)).match == "full"
    finally:
        pruned.stop()


def test_the_local_explorer_in_process_shares_the_pre_check_s_compile(anvil, box, monkeypatch, tmp_path):
    """The deploy hook's pre-check and the local explorer in the same process: one compile, the
    explorer's a hit of the process's cache (engine.compilers.process_cache)."""
    from ape_contract_verify.engine import compilers
    from ape_contract_verify.explorer.contract_api import EmbeddedExplorer
    from ape_contract_verify.workflow.local_target import LocalTarget
    from ape_contract_verify.workflow.plan import Derivations

    address, input_json, args = box
    fresh = CompileCache(tmp_path / "own")  # not the session's shared cache: this one counts
    monkeypatch.setattr(compilers, "_PROCESS_CACHE", fresh)
    assert compilers.process_cache() is fresh and Derivations(None).cache is fresh
    request = json_request(address, input_json, "src/Box.sol:Box", args)
    chain = JsonRpcChain(anvil.url)
    assert Verifier(chain, compilers.process_cache()).verify(request).match == "full"  # the pre-check
    explorer = EmbeddedExplorer(chain, cache=compilers.process_cache()).start()
    try:
        target = LocalTarget(explorer)
        answer = target.wait(target.verify_source_code(request), interval=0.1, timeout=60)
    finally:
        explorer.stop()
    assert answer.outcome.is_success, answer
    assert (fresh.compiles, fresh.hits) == (1, 1)
