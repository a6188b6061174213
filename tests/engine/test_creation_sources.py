"""A factory's child through a hosted node that refuses traces (support.rpc_proxy in front of a real
anvil): each creation source on its own, the one answer when none can give the creation code, the
local explorer (`serve --rpc` on such a node) replaying too, and the provider's rate limits.

One anvil and one factory for the module: two children made in one block (the second one's replay
needs the block's first transaction replayed before it) and one on its own."""

from __future__ import annotations

import pytest
import requests
from eth_utils import keccak

from ape_contract_verify.client.etherscan import ExplorerClient
from ape_contract_verify.derive.artifacts import Artifact
from ape_contract_verify.derive.derive import PrecheckFailed, read_chain, resolve_constructor_args
from ape_contract_verify.engine.compilers import CompileCache
from ape_contract_verify.engine.verifier import FailureKind, Verifier
from ape_contract_verify.evm import bytecode as bc
from ape_contract_verify.evm.chain import ForkReplayer, JsonRpcChain
from ape_contract_verify.evm.reads import MemoizingChain
from support.engine import SOLC, bytecode_of, compiled, encode, json_request, standard_input
from support.rpc_proxy import HostedNodeProxy
from support.service import Anvil, ServerProcess
from support.stub_server import StubExplorer, envelope

pytestmark = pytest.mark.timeout(300)

SOURCES = {"src/Factory.sol": "Factory.sol"}


@pytest.fixture(scope="module")
def node():
    anvil = Anvil()
    proxy = HostedNodeProxy(anvil.url)
    yield anvil, proxy
    proxy.stop()
    anvil.stop()


@pytest.fixture(scope="module")
def cache():
    return CompileCache()


def make(anvil, factory: str, value: int, sender: str) -> str:
    """The factory's `make(value)`, sent by `sender`: the transaction's hash."""
    data = "0x" + (keccak(text="make(uint256)")[:4] + encode(["uint256"], [value])).hex()
    return anvil.rpc("eth_sendTransaction", {"from": sender, "to": factory, "data": data, "gas": hex(1_000_000)})


def child_made(anvil, tx_hash: str) -> str:
    """The child a `make` transaction created (its event's one word)."""
    receipt = next(r for r in (anvil.rpc("eth_getTransactionReceipt", tx_hash) for _ in range(100)) if r)
    return "0x" + receipt["logs"][0]["data"][-40:]


@pytest.fixture(scope="module")
def factory(node, cache):
    """The factory and three children: made with 5 and 6 in one block (by two senders), and 7."""
    anvil, _ = node
    input_json = standard_input(SOURCES)
    address = anvil.deploy(bytecode_of(compiled(cache, SOLC, input_json, "src/Factory.sol", "Factory")))
    anvil.rpc("evm_setAutomine", False)
    hashes = [make(anvil, address, 5, anvil.accounts[0]), make(anvil, address, 6, anvil.accounts[1])]
    anvil.rpc("evm_mine")
    anvil.rpc("evm_setAutomine", True)
    hashes.append(make(anvil, address, 7, anvil.accounts[2]))
    children = {value: (child_made(anvil, tx_hash), tx_hash) for value, tx_hash in zip((5, 6, 7), hashes)}
    child = compiled(cache, SOLC, input_json, "src/Factory.sol", "Child")
    return address, children, input_json, child


def child_artifact(child: dict) -> Artifact:
    from ethpm_types import ContractType

    contract_type = ContractType.model_validate({"contractName": "Child", "abi": child["abi"]})
    return Artifact("Child", "src/Factory.sol", contract_type, None, "solidity", SOLC.removeprefix("v"), {})


def args_of(state, child: dict) -> str | None:
    creation = bc.to_bytes(bytecode_of(child))
    return bc.split_constructor_args(state.creation.input, creation) if state.creation else None


def no_record_explorer() -> StubExplorer:
    stub = StubExplorer()
    stub.default = lambda seen: envelope("0", "NOTOK", "No data found")
    return stub


def test_fork_replay_alone(node, factory):
    """No traces and no explorer record: the transaction replayed on a fork gives the creation code;
    the second child's needs the block's first transaction replayed before it."""
    anvil, proxy = node
    address, children, _, child = factory
    refused_before = sum(proxy.refused.values())
    with no_record_explorer() as stub:
        record = ExplorerClient(stub.url, calls_per_second=100, name="stub").creation_records()
        chain = JsonRpcChain(proxy.url)
        try:
            for value in (5, 6, 7):
                state = read_chain(children[value][0], chain, record)
                assert state.creation.source == "fork replay" and state.creation.factory
                assert state.creation.tx_hash == children[value][1]
                assert args_of(state, child) == encode(["uint256"], [value]).hex()
            fork = chain.fork_replayer()
            assert fork.forks_started == 2  # one per block: the first two children share theirs
            process = fork.proc
        finally:
            chain.close()
        assert stub.actions() == []  # the explorer's record was not needed, so not asked
    assert process.poll() is not None  # the fork ended with the reader
    assert sum(proxy.refused.values()) > refused_before  # the node did refuse the traces


def test_explorer_record_alone(node, factory, cache, tmp_path):
    """No traces and no fork: the explorer's getcontractcreation (a local explorer that reads its
    own node, with traces) gives the creation bytecode, and the pre-check compares it."""
    anvil, proxy = node
    address, children, input_json, child = factory
    explorer = ServerProcess(anvil.url, tmp_path / "explorer.sqlite")
    try:
        client = ExplorerClient(explorer.base_url, calls_per_second=100, name="local")
        chain = JsonRpcChain(proxy.url, fork=False)
        child_address = children[7][0]
        state = read_chain(child_address, chain, client.creation_records())
        assert state.creation.source == "local's creation record" and state.creation.factory
        assert state.tried == ["the node's trace APIs (refused)", "a replay on a local fork (off)"]
        args = resolve_constructor_args(child_artifact(child), None, args_of(state, child), state.tried)
        assert args == encode(["uint256"], [7]).hex()
        # The pre-check compares the creation code it was given: right arguments pass, others fail.
        known = MemoizingChain(chain)  # as derive tells its pre-check a recorded creation
        known.remember_creation(child_address, state.creation)
        checker = Verifier(known, cache)
        assert checker.verify(
            json_request(child_address, input_json, "src/Factory.sol:Child", bytes.fromhex(args))
        ).verified
        wrong = checker.verify(
            json_request(child_address, input_json, "src/Factory.sol:Child", encode(["uint256"], [8]))
        )
        assert wrong.failure == FailureKind.CONSTRUCTOR_ARGUMENTS, wrong.reason
    finally:
        explorer.stop()


def test_neither_gives_one_answer(node, factory, tmp_path):
    """No traces, anvil missing for the fork, no explorer record: one reason naming each try, and
    the way out."""
    _, proxy = node
    _, children, _, child = factory
    chain = JsonRpcChain(proxy.url, fork=ForkReplayer(proxy.url, anvil=str(tmp_path / "no-anvil")))
    with no_record_explorer() as stub:
        state = read_chain(
            children[7][0], chain, ExplorerClient(stub.url, calls_per_second=100, name="etherscan").creation_records()
        )
        assert stub.actions() == ["getcontractcreation"]
    assert state.creation is None
    with pytest.raises(PrecheckFailed) as err:
        resolve_constructor_args(child_artifact(child), None, None, state.tried)
    assert err.value.field == "constructor arguments"
    assert err.value.reason == (
        "the creation code of this contract was not found (tried the node's trace APIs (refused), "
        f"a replay on a local fork (anvil could not run ({tmp_path / 'no-anvil'}: No such file or directory)), "
        "etherscan's creation record (no record of it)). Pass them with --constructor-args, as values or ABI-encoded hex"
    )
    assert proxy.url not in err.value.reason


def test_local_explorer_on_such_a_node_replays(node, factory, tmp_path):
    """`serve --rpc` on a node without traces: getcontractcreation answers as Etherscan's does,
    creation bytecode included, for a transaction's contract and a factory's; and it verifies the
    factory's child, whose constructor arguments it replays."""
    anvil, proxy = node
    address, children, input_json, _ = factory
    child_address, tx_hash = children[6]
    explorer = ServerProcess(proxy.url, tmp_path / "explorer.sqlite")
    try:
        answer = requests.get(
            explorer.base_url,
            params={
                "module": "contract",
                "action": "getcontractcreation",
                "contractaddresses": f"{address},{child_address}",
            },
            timeout=120,
        ).json()
        assert answer["status"] == "1", answer
        made, child = answer["result"]
        deployment = anvil.rpc("eth_getTransactionByHash", made["txHash"])
        assert made["creationBytecode"] == deployment["input"] and made["contractFactory"] == ""
        assert child["txHash"] == tx_hash and child["contractFactory"].lower() == address.lower()
        assert child["creationBytecode"].endswith(encode(["uint256"], [6]).hex())
        client = ExplorerClient(explorer.base_url, calls_per_second=100)
        request = json_request(child_address, input_json, "src/Factory.sol:Child", encode(["uint256"], [6]))
        result = client.wait(client.verify_source_code(request), interval=0.2, timeout=120)
        assert result.outcome.is_success, result.reason
    finally:
        explorer.stop()


@pytest.mark.parametrize("code", [None, -32005, -32029])
def test_rate_limits_slow_reads_and_fail_nothing(node, factory, code, monkeypatch):
    """HTTP 429, or JSON-RPC -32005 / -32029, on one request in three: every read still answers."""
    from ape_contract_verify.evm import chain as chain_module

    waits: list[float] = []
    monkeypatch.setattr(chain_module.time, "sleep", waits.append)
    anvil, _ = node
    address, children, _, _ = factory
    limited = HostedNodeProxy(anvil.url, rate_limit_every=3, rate_limit_code=code)
    try:
        chain = JsonRpcChain(limited.url, fork=False)
        codes = [chain.get_code(address) for _ in range(6)]
        assert all(c == codes[0] and c for c in codes)
        assert chain.find_creation(address).source == "transaction"
        assert limited.limited >= 2 and len(waits) == limited.limited  # one wait per rate limit
    finally:
        limited.stop()


def test_rate_limit_that_never_ends_is_an_error_not_a_hang(node, monkeypatch):
    from ape_contract_verify.evm import chain as chain_module
    from ape_contract_verify.evm.reads import ChainError

    monkeypatch.setattr(chain_module, "RATE_LIMIT_RETRIES", 2)
    monkeypatch.setattr(chain_module, "RATE_LIMIT_MAX_WAIT", 0.01)
    anvil, _ = node
    always = HostedNodeProxy(anvil.url, rate_limit_every=1)
    try:
        with pytest.raises(ChainError, match="kept answering eth_blockNumber with its rate limit"):
            JsonRpcChain(always.url)._block_number()
    finally:
        always.stop()


def test_a_pruning_node_gives_a_new_childs_creation_from_its_recent_state(node, factory):
    """A node that keeps only the last 128 blocks' state (geth's default), 300 blocks after the
    factory: the search finds the new child's block in the state it keeps, and the fork replays it
    from the block before (within that state)."""
    anvil, _ = node
    address, _, _, child = factory
    anvil.rpc("anvil_mine", hex(300))
    tx_hash = make(anvil, address, 8, anvil.accounts[3])
    made = child_made(anvil, tx_hash)
    pruning = HostedNodeProxy(anvil.url, state_blocks=128)
    chain = JsonRpcChain(pruning.url)
    try:
        state = read_chain(made, chain)
        assert state.creation.source == "fork replay" and state.creation.tx_hash == tx_hash
        assert args_of(state, child) == encode(["uint256"], [8]).hex()
    finally:
        chain.close()
        pruning.stop()
    assert pruning.pruned > 0, "no old state was asked: the node's pruning was never met"
