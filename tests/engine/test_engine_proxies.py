"""Proxy detection against tiny real proxies on anvil, one per pattern."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from eth_utils import keccak

from ape_contract_verify.engine.compilers import CompileCache, compile_input, with_output_selection
from ape_contract_verify.evm.chain import JsonRpcChain
from ape_contract_verify.evm.proxies import (
    EIP1822_PROXIABLE_SLOT,
    EIP1967_IMPLEMENTATION_SLOT,
    OZ_LEGACY_SLOT,
    ProxyInfo,
    ProxyKind,
    detect_proxy,
    has_delegatecall,
)
from support.engine import SOLC, encode, standard_input
from support.service import Anvil

SET_NUMBER = keccak(text="setNumber(uint256)")[:4]
NUMBER = keccak(text="number()")[:4]


@pytest.fixture(scope="module")
def anvil():
    node = Anvil()
    yield node
    node.stop()


@pytest.fixture(scope="module")
def contracts():
    input_json = standard_input({"Proxies.sol": "Proxies.sol"})
    output = compile_input(SOLC, with_output_selection(input_json, "Proxies.sol", "*"), cache=CompileCache())
    return {name: c["evm"]["bytecode"]["object"] for name, c in output["contracts"]["Proxies.sol"].items()}


@pytest.fixture(scope="module")
def deployed(anvil, contracts):
    target = anvil.deploy(contracts["Target"])
    beacon = anvil.deploy(contracts["Beacon"], encode(["address"], [target]))

    def slot_proxy(slot: int) -> str:
        return anvil.deploy(contracts["SlotProxy"], encode(["bytes32", "address"], [slot.to_bytes(32, "big"), target]))

    runtime = bytes.fromhex("363d3d373d3d3d363d73" + target[2:] + "5af43d82803e903d91602b57fd5bf3")
    init = bytes.fromhex("3d602d80600a3d3981f3")  # EIP-1167's own deployer prefix
    return {
        "target": target,
        "beacon": beacon,
        ProxyKind.EIP1967: slot_proxy(EIP1967_IMPLEMENTATION_SLOT),
        ProxyKind.EIP1822: slot_proxy(EIP1822_PROXIABLE_SLOT),
        ProxyKind.OZ_LEGACY: slot_proxy(OZ_LEGACY_SLOT),
        ProxyKind.EIP1967_BEACON: anvil.deploy(contracts["BeaconProxy"], encode(["address"], [beacon])),
        ProxyKind.GNOSIS_SAFE: anvil.deploy(contracts["MasterCopyProxy"], encode(["address"], [target])),
        ProxyKind.EIP1167: anvil.deploy(init + runtime),
        "unset": slot_proxy(12345),  # a forwarder whose slot no standard reads
    }


@pytest.mark.parametrize(
    "kind",
    [
        ProxyKind.EIP1967,
        ProxyKind.EIP1967_BEACON,
        ProxyKind.EIP1822,
        ProxyKind.OZ_LEGACY,
        ProxyKind.EIP1167,
        ProxyKind.GNOSIS_SAFE,
    ],
)
def test_detects_each_pattern(anvil, deployed, kind):
    proxy = deployed[kind]
    # The proxy really forwards: Target's number() reads the proxy's own storage.
    if kind == ProxyKind.GNOSIS_SAFE:  # slot 0 is masterCopy itself, so number() shows it
        expected = int(deployed["target"], 16)
    else:
        anvil.transact(SET_NUMBER + encode(["uint256"], [77]), to=proxy)
        expected = 77
    assert int(anvil.rpc("eth_call", {"to": proxy, "data": "0x" + NUMBER.hex()}, "latest"), 16) == expected

    info = detect_proxy(JsonRpcChain(anvil.url), proxy)
    assert info is not None
    assert info.kind == kind
    assert info.implementation == deployed["target"].lower()
    assert info.beacon == (deployed["beacon"].lower() if kind == ProxyKind.EIP1967_BEACON else None)


def test_not_a_proxy(anvil, deployed):
    chain = JsonRpcChain(anvil.url)
    assert detect_proxy(chain, deployed["target"]) is None
    assert not has_delegatecall(chain.get_code(deployed["target"]))
    # Delegatecall present, but no standard slot holds an implementation.
    assert has_delegatecall(chain.get_code(deployed["unset"]))
    assert detect_proxy(chain, deployed["unset"]) is None
    assert detect_proxy(chain, "0x" + "cd" * 20) is None  # no code at all


def test_has_delegatecall_skips_push_data():
    assert has_delegatecall(bytes([0x60, 0x00, 0xF4]))
    assert not has_delegatecall(bytes([0x7F]) + b"\xf4" * 32 + bytes([0x00]))  # 0xf4 only as PUSH32 data
    assert not has_delegatecall(bytes([0x61, 0xF4, 0xF4, 0x00]))


def test_has_delegatecall_skips_an_embedded_contracts_metadata():
    """`new Child()` embeds the child's creation code, metadata and all: a 0xf4 in its hash is no
    opcode (a factory holding an address in slot 0 was taken for a Safe proxy)."""
    child_metadata = (
        bytes.fromhex("a2646970667358221220ee04000337a8c6bcf40f98be2d4dad9b7faa")
        + bytes(14)
        + bytes.fromhex("64736f6c634300081a0033")
    )
    own_metadata = bytes.fromhex("a2646970667358221220") + bytes(32) + bytes.fromhex("64736f6c634300081a0033")
    assert not has_delegatecall(bytes([0x60, 0x00, 0xFE]) + child_metadata + own_metadata)
    assert has_delegatecall(
        bytes([0x60, 0x00, 0xF4, 0xFE]) + child_metadata + own_metadata
    )  # its own DELEGATECALL still counts
    clone = "363d3d373d3d3d363d73" + "ab" * 20 + "5af43d82803e903d91602b57fd5bf3"

    def found(code: str) -> ProxyInfo | None:
        reads = SimpleNamespace(get_code=lambda a: bytes.fromhex(code), get_storage_at=lambda a, s: bytes(32))
        return detect_proxy(reads, "0x" + "cd" * 20)  # type: ignore[arg-type]

    assert found(clone) == ProxyInfo(ProxyKind.EIP1167, "0x" + "ab" * 20, stamped=True)
    assert found("00" + clone) == ProxyInfo(ProxyKind.FORWARDER, "0x" + "ab" * 20, stamped=True)  # not EIP-1167's start
