"""ApeProviderChain and the verifier through Ape's in-process `ethereum:local:test` provider."""

from __future__ import annotations

import threading

import pytest
from eth_utils import keccak

from ape_contract_verify.engine.compilers import CompileCache, compile_input, with_output_selection
from ape_contract_verify.evm.chain import ApeProviderChain, ChainReader
from ape_contract_verify.engine.verifier import FailureKind, Verifier
from ape_contract_verify.evm.proxies import EIP1967_IMPLEMENTATION_SLOT, ProxyKind, detect_proxy
from support.engine import SOLC, compiled, encode, json_request, standard_input

pytestmark = pytest.mark.engine

BOX_TYPES = ["uint256", "address", "string", "bytes32", "int16[]"]


def _contract_type(name: str, contract: dict):
    from ethpm_types import ContractType

    return ContractType.model_validate(
        {"contractName": name, "abi": contract["abi"], "deploymentBytecode": {"bytecode": "0x" + contract["evm"]["bytecode"]["object"]}}
    )


@pytest.fixture(scope="module")
def ape_chain():
    import ape

    with ape.networks.ethereum.local.use_provider("test") as provider:
        yield provider, ape.accounts.test_accounts[0]


@pytest.fixture(scope="module")
def cache():
    return CompileCache()


@pytest.fixture(scope="module")
def box(ape_chain, cache):
    provider, owner = ape_chain
    input_json = standard_input({"contracts/Box.sol": "Box.sol"})
    contract = compiled(cache, SOLC, input_json, "contracts/Box.sol", "Box")
    instance = owner.deploy(_contract_type("Box", contract), 9, owner.address, "ape", b"\x33" * 32, [4, -4])
    provider.mine(3)  # the deployment is not the latest block: the search goes back
    args = encode(BOX_TYPES, [9, owner.address, "ape", b"\x33" * 32, [4, -4]])
    return str(instance.address), input_json, args, instance.txn_hash


def test_reader_primitives(ape_chain, box):
    provider, owner = ape_chain
    address, _, args, txn_hash = box
    chain = ApeProviderChain(provider)
    assert isinstance(chain, ChainReader)
    assert chain.chain_id() == provider.chain_id
    assert chain.get_code(address)
    assert int.from_bytes(chain.get_storage_at(address, 0), "big") == 9  # Box.value
    assert int.from_bytes(chain.call(address, keccak(text="value()")[:4]), "big") == 9
    creation = chain.find_creation(address)
    assert creation is not None and creation.factory is False
    assert creation.tx_hash.lower() == txn_hash.lower()
    assert creation.deployer.lower() == owner.address.lower()
    assert creation.input.endswith(args)
    assert chain.find_creation("0x" + "ee" * 20) is None


def test_verify_through_ape_provider(ape_chain, box, cache):
    provider, _ = ape_chain
    address, input_json, args, _ = box
    verifier = Verifier(ApeProviderChain(provider), cache)
    results = []
    # The service verifies from worker threads.
    worker = threading.Thread(target=lambda: results.append(verifier.verify(json_request(address, input_json, "contracts/Box.sol:Box", args))))
    worker.start()
    worker.join(timeout=120)
    (result,) = results
    assert result.text == "Pass - Verified", result.reason
    assert result.match == "full"
    wrong = verifier.verify(json_request(address, input_json, "contracts/Box.sol:Box", encode(BOX_TYPES, [10, "0x" + "00" * 20, "ape", b"\x33" * 32, [4, -4]])))
    assert wrong.failure == FailureKind.CONSTRUCTOR_ARGUMENTS
    assert wrong.text.startswith("Fail - Unable to verify. Please check if the correct constructor argument was entered. Constructor arguments differ")


def test_factory_child_without_traces_is_explained(ape_chain, cache):
    provider, owner = ape_chain
    input_json = standard_input({"src/Factory.sol": "Factory.sol"})
    factory = owner.deploy(_contract_type("Factory", compiled(cache, SOLC, input_json, "src/Factory.sol", "Factory")))
    receipt = factory.make(5, sender=owner)
    child = receipt.events[0].child
    result = Verifier(ApeProviderChain(provider), cache).verify(json_request(str(child), input_json, "src/Factory.sol:Child", encode(["uint256"], [5])))
    assert result.failure == FailureKind.NO_CREATION
    # eth-tester has no trace API and no URL a fork could start from: the reason names both tries.
    assert "tried the node's trace APIs (refused), a replay on a local fork (no node URL to fork)" in result.reason, result.reason

    # The plugin's pre-check cannot see that CREATE either, but the explorer it submits to can:
    # it compares the runtime code alone, and still refuses code that differs.
    precheck = Verifier(ApeProviderChain(provider), cache, require_creation=False)
    runtime_only = precheck.verify(json_request(str(child), input_json, "src/Factory.sol:Child", encode(["uint256"], [5])))
    assert runtime_only.verified and runtime_only.creation_tx is None, runtime_only.reason
    other = precheck.verify(json_request(str(child), input_json, "src/Factory.sol:Factory", b""))
    assert not other.verified and other.failure == FailureKind.BYTECODE, other.reason


def test_proxy_detection_through_ape(ape_chain):
    provider, owner = ape_chain
    input_json = standard_input({"Proxies.sol": "Proxies.sol"})
    output = compile_input(SOLC, with_output_selection(input_json, "Proxies.sol", "*"))["contracts"]["Proxies.sol"]
    target = owner.deploy(_contract_type("Target", output["Target"]))
    proxy = owner.deploy(_contract_type("SlotProxy", output["SlotProxy"]), EIP1967_IMPLEMENTATION_SLOT.to_bytes(32, "big"), target.address)
    beacon = owner.deploy(_contract_type("Beacon", output["Beacon"]), target.address)
    beacon_proxy = owner.deploy(_contract_type("BeaconProxy", output["BeaconProxy"]), beacon.address)
    chain = ApeProviderChain(provider)
    info = detect_proxy(chain, str(proxy.address))
    assert info and info.kind == ProxyKind.EIP1967 and info.implementation == str(target.address).lower()
    info = detect_proxy(chain, str(beacon_proxy.address))
    assert info and info.kind == ProxyKind.EIP1967_BEACON and info.beacon == str(beacon.address).lower()
    assert detect_proxy(chain, str(target.address)) is None
