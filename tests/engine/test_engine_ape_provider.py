"""ApeProviderChain and the verifier through Ape's in-process `ethereum:local:test` provider."""

from __future__ import annotations

import threading

import pytest
from eth_utils import keccak

from ape_contract_verify.engine.compilers import CompileCache, compile_input, with_output_selection
from ape_contract_verify.engine.verifier import FailureKind, Verifier
from ape_contract_verify.evm.chain import ApeProviderChain
from ape_contract_verify.evm.proxies import EIP1967_IMPLEMENTATION_SLOT, ProxyKind, detect_proxy
from ape_contract_verify.evm.reads import ChainReader
from support.engine import SOLC, compiled, encode, json_request, standard_input

BOX_TYPES = ["uint256", "address", "string", "bytes32", "int16[]"]


def _contract_type(name: str, contract: dict):
    from ethpm_types import ContractType

    return ContractType.model_validate(
        {
            "contractName": name,
            "abi": contract["abi"],
            "deploymentBytecode": {"bytecode": "0x" + contract["evm"]["bytecode"]["object"]},
        }
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
    worker = threading.Thread(
        target=lambda: results.append(verifier.verify(json_request(address, input_json, "contracts/Box.sol:Box", args)))
    )
    worker.start()
    worker.join(timeout=120)
    (result,) = results
    assert result.text == "Pass - Verified", result.reason
    assert result.match == "full"
    wrong = verifier.verify(
        json_request(
            address,
            input_json,
            "contracts/Box.sol:Box",
            encode(BOX_TYPES, [10, "0x" + "00" * 20, "ape", b"\x33" * 32, [4, -4]]),
        )
    )
    assert wrong.failure == FailureKind.CONSTRUCTOR_ARGUMENTS
    assert wrong.text.startswith(
        "Fail - Unable to verify. Please check if the correct constructor argument was entered. Constructor arguments differ"
    )


# --- a factory's children, found by replaying the block in the in-process chain ----------------

FACTORY_SOURCES = {"src/Factory.sol": "Factory.sol", "src/Deep.sol": "Deep.sol"}


@pytest.fixture(scope="module")
def made(ape_chain, cache):
    """Contracts the engine's sources make on Ape's test provider: children of a factory (CREATE,
    CREATE2, and CREATE three calls deep through two relays), one made in a constructor, one
    undone by a revert; each with its receipt and what its creation input must be."""
    provider, owner = ape_chain
    input_json = standard_input(FACTORY_SOURCES)

    def contract(file: str, name: str) -> dict:
        return compiled(cache, SOLC, input_json, file, name)

    child_code = bytes.fromhex(contract("src/Factory.sol", "Child")["evm"]["bytecode"]["object"])
    factory = owner.deploy(_contract_type("Factory", contract("src/Factory.sol", "Factory")))
    relay_type = _contract_type("Relay", contract("src/Deep.sol", "Relay"))
    outer, inner = owner.deploy(relay_type), owner.deploy(relay_type)
    undone = owner.deploy(_contract_type("Undone", contract("src/Deep.sol", "Undone")))

    created = factory.make(5, sender=owner)
    created2 = factory.make2(b"\x07" * 32, 6, sender=owner)
    # owner -> outer.forward -> inner.forward -> factory.make -> CREATE: three calls deep.
    deep_call = inner.forward.encode_input(str(factory.address), factory.make.encode_input(7))
    deep = outer.forward(str(inner.address), deep_call, sender=owner)
    maker = owner.deploy(_contract_type("Maker", contract("src/Deep.sol", "Maker")), 8)
    reverted = outer.tryForward(str(undone.address), undone.makeAndRevert.encode_input(9), sender=owner)
    plain = owner.transfer(ape_chain[1].address, 1)  # a block without a create
    provider.mine(2)  # the creations are not the latest blocks: the search goes back

    def child_of(receipt) -> str:
        (log,) = [log for log in receipt.events if log.event_name == "Made"]
        return str(log.child)

    expected = lambda x: child_code + encode(["uint256"], [x])  # noqa: E731
    return {
        "owner": owner.address,
        "factory": str(factory.address),
        "input_json": input_json,
        "create": (child_of(created), created, expected(5)),
        "create2": (child_of(created2), created2, expected(6)),
        "deep": (child_of(deep), deep, expected(7)),
        "constructor": (str(maker.child()), expected(8), str(maker.address), maker.txn_hash),
        "reverted": reverted,
        "plain": plain,
    }


def _tester_state(provider) -> tuple:
    """What the replay must leave as it was: the head, its state, the pending block, every key
    of the chain's database."""
    from ape_contract_verify.evm.tester_replay import tester_chain

    chain = tester_chain(provider)
    head = chain.get_canonical_head()
    kv = getattr(chain.chaindb.db, "wrapped_db", chain.chaindb.db)
    keys = frozenset(getattr(kv, "kv_store", {}))
    return head.hash, head.state_root, chain.header.hash, provider.get_block("latest").hash, keys


@pytest.mark.parametrize("kind", ["create", "create2", "deep"])
def test_factory_child_creation_is_replayed_in_process(ape_chain, made, kind):
    provider, _ = ape_chain
    address, receipt, expected = made[kind]
    before = _tester_state(provider)
    assert before[-1], "the test reads eth-tester's database keys"
    chain = ApeProviderChain(provider)
    creation = chain.find_creation(address)
    assert creation is not None, chain.creation_attempts(address)
    assert creation.factory is True and creation.source == "in-process replay"
    assert creation.tx_hash.lower() == receipt.txn_hash.lower()
    assert creation.block == receipt.block_number
    assert creation.deployer.lower() == made["owner"].lower()
    assert creation.creator.lower() == made["factory"].lower()
    assert creation.input == expected  # the Child's init code and its constructor argument, exactly
    # The replay ran on a copy: the test chain's head, its state and its database are as they were.
    assert _tester_state(provider) == before


def test_replayed_frames_have_the_call_tracers_shape(ape_chain, made):
    provider, _ = ape_chain
    chain = ApeProviderChain(provider)
    for kind, opcode in (("create", "CREATE"), ("create2", "CREATE2"), ("deep", "CREATE")):
        address, receipt, expected = made[kind]
        frames = chain._block_create_frames(receipt.block_number)
        ((tx_hash, sender, frame),) = frames
        assert tx_hash.lower() == receipt.txn_hash.lower() and sender.lower() == made["owner"].lower()
        assert frame["type"] == opcode and frame["to"] == address.lower() and frame["from"] == made["factory"].lower()
        assert frame["input"] == "0x" + expected.hex()
        assert bytes.fromhex(frame["output"][2:]) == chain.get_code(address)
    # A contract whose constructor creates another (OpenZeppelin 5's proxy and its ProxyAdmin):
    # both creations, the transaction's first, depth first.
    child, expected, maker, txn_hash = made["constructor"]
    block = provider.get_receipt(txn_hash).block_number
    frames = chain._block_create_frames(block)
    assert [(f["type"], f["from"], f["to"]) for _, _, f in frames] == [
        ("CREATE", made["owner"].lower(), maker.lower()),
        ("CREATE", maker.lower(), child.lower()),
    ]
    assert frames[1][2]["input"] == "0x" + expected.hex()
    # A CREATE inside a call that reverted is not a creation; a block without creates has none.
    assert chain._block_create_frames(made["reverted"].block_number) == []
    assert chain._block_create_frames(made["plain"].block_number) == []


def test_constructor_child_is_a_factory_child_and_the_deployment_is_not(ape_chain, made):
    provider, _ = ape_chain
    child, expected, maker, txn_hash = made["constructor"]
    chain = ApeProviderChain(provider)
    creation = chain.find_creation(child)
    assert creation is not None and creation.factory is True and creation.creator.lower() == maker.lower()
    assert creation.tx_hash.lower() == txn_hash.lower() and creation.input == expected
    direct = chain.find_creation(maker)  # the transaction's own deployment: not a factory child
    assert direct is not None and direct.factory is False and direct.source == "transaction"
    assert direct.tx_hash.lower() == txn_hash.lower() and direct.input.endswith(encode(["uint256"], [8]))


def test_factory_child_verifies_in_process(ape_chain, made, cache):
    provider, _ = ape_chain
    address = made["deep"][0]
    verifier = Verifier(ApeProviderChain(provider), cache)
    request = json_request(address, made["input_json"], "src/Factory.sol:Child", encode(["uint256"], [7]))
    results = []
    # The deploy hook's workers and the local explorer verify from threads: the replay is serialised.
    worker = threading.Thread(target=lambda: results.append(verifier.verify(request)))
    worker.start()
    worker.join(timeout=120)
    (result,) = results
    assert result.text == "Pass - Verified" and result.match == "full", result.reason
    wrong = verifier.verify(
        json_request(address, made["input_json"], "src/Factory.sol:Child", encode(["uint256"], [8]))
    )
    assert wrong.failure == FailureKind.CONSTRUCTOR_ARGUMENTS, wrong.reason


def test_a_failed_replay_is_named_truthfully(ape_chain, made, monkeypatch):
    """When the replay cannot run, the search says so, and names no trace API and no fork: the
    in-process chain has neither."""
    from ape_contract_verify.evm import chain as chain_module
    from ape_contract_verify.evm.tester_replay import ReplayFailed, create_frames, tester_chain

    provider, _ = ape_chain
    head = tester_chain(provider).get_canonical_head().block_number
    with pytest.raises(ReplayFailed, match=f"block {head + 50} is not in the chain"):
        create_frames(tester_chain(provider), head + 50)

    def failing(in_process, block):
        raise ReplayFailed(f"block {block}: MissingTrieNode")

    monkeypatch.setattr(chain_module, "create_frames", failing)
    address, receipt, _ = made["create"]
    chain = ApeProviderChain(provider)
    assert chain.find_creation(address) is None
    assert chain.creation_attempts(address) == [
        f"a replay in the in-process chain (block {receipt.block_number}: MissingTrieNode)"
    ]


def test_a_provider_that_is_not_in_process_keeps_the_trace_path():
    from ape_contract_verify.evm.tester_replay import tester_chain

    class NodeProvider:  # what ape-foundry's web3 is: an HTTP provider, no ethereum_tester
        class web3:
            provider = type("HTTPProvider", (), {"endpoint_uri": "http://127.0.0.1:1"})()

    assert tester_chain(NodeProvider()) is None and tester_chain(object()) is None
    assert ApeProviderChain(NodeProvider())._frames_source() == "trace"


def test_the_plugins_precheck_can_still_compare_runtime_only(ape_chain, made, cache):
    """The explorer a plugin submits to may compare the runtime code alone; it still refuses code
    that differs."""
    provider, _ = ape_chain
    address = made["create"][0]
    precheck = Verifier(ApeProviderChain(provider), cache, require_creation=False)
    other = precheck.verify(json_request(address, made["input_json"], "src/Factory.sol:Factory", b""))
    assert not other.verified and other.failure == FailureKind.BYTECODE, other.reason


def test_proxy_detection_through_ape(ape_chain):
    provider, owner = ape_chain
    input_json = standard_input({"Proxies.sol": "Proxies.sol"})
    output = compile_input(SOLC, with_output_selection(input_json, "Proxies.sol", "*"))["contracts"]["Proxies.sol"]
    target = owner.deploy(_contract_type("Target", output["Target"]))
    proxy = owner.deploy(
        _contract_type("SlotProxy", output["SlotProxy"]),
        EIP1967_IMPLEMENTATION_SLOT.to_bytes(32, "big"),
        target.address,
    )
    beacon = owner.deploy(_contract_type("Beacon", output["Beacon"]), target.address)
    beacon_proxy = owner.deploy(_contract_type("BeaconProxy", output["BeaconProxy"]), beacon.address)
    chain = ApeProviderChain(provider)
    info = detect_proxy(chain, str(proxy.address))
    assert info and info.kind == ProxyKind.EIP1967 and info.implementation == str(target.address).lower()
    info = detect_proxy(chain, str(beacon_proxy.address))
    assert info and info.kind == ProxyKind.EIP1967_BEACON and info.beacon == str(beacon.address).lower()
    assert detect_proxy(chain, str(target.address)) is None
