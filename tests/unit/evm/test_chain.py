"""evm/chain.py: the two readers on canned node answers (no node). JsonRpcChain over a fake
requests session: URL credentials never shown, errors and reverts told apart, a rate limit waited
out (and given up on), a batch with its fallback, trace answers of both APIs read and a refusal
remembered. ApeProviderChain over a fake Ape provider: its errors wrapped, a revert's data kept.
Rate limits and refusals told by their codes and words, revert data found."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest
import requests
from ape.exceptions import ContractLogicError

from ape_contract_verify.evm import chain as chain_module
from ape_contract_verify.evm.chain import (
    RATE_LIMIT_MAX_WAIT,
    RATE_LIMIT_RETRIES,
    ApeProviderChain,
    JsonRpcChain,
    is_rate_limited,
    is_refused,
    node_retry,
    rate_limit_text,
    revert_data,
)
from ape_contract_verify.evm.reads import CallReverted, ChainError, Creation

pytestmark = pytest.mark.unit

URL = "https://user:pw@eth.example:8545/v2/SECRET-KEY-1234?token=SECRET2"
EOA = "0x" + "e0" * 20
FACTORY = "0x" + "fa" * 20
CHILD = "0x" + "c1" * 20
TX = "0x" + "ab" * 32

Answer = Callable[[list], object]


def error(code: int, message: str, data: str | None = None) -> dict:
    found: dict = {"code": code, "message": message}
    if data is not None:
        found["data"] = data
    return {"error": found}


class Node:
    """Answers by method: a callable of the params giving a result, or a dict {"error": ...}, or
    an int HTTP status; every request kept."""

    def __init__(self, **answers: object):
        self.answers = answers
        self.asked: list[tuple[str, list]] = []
        self.posts = 0

    def body(self, request: dict) -> dict:
        method, params = request["method"], request["params"]
        self.asked.append((method, params))
        answer = self.answers.get(method, error(-32601, f"the method {method} does not exist/is not available"))
        answer = answer(params) if callable(answer) else answer
        reply = answer if isinstance(answer, dict) and "error" in answer else {"result": answer}
        return {"jsonrpc": "2.0", "id": request["id"], **reply}

    def count(self, method: str) -> int:
        return sum(1 for m, _ in self.asked if m == method)


class Session:
    """requests.Session's `post`, answered by the Node (an exception when told)."""

    node: Node
    raises: Exception | None = None
    status: list[int] = []

    def post(self, url: str, json: object, timeout: float) -> SimpleNamespace:
        self.node.posts += 1
        if self.raises is not None:
            raise self.raises
        status = self.status.pop(0) if self.status else 200
        if status != 200:
            return SimpleNamespace(status_code=status, headers={"Retry-After": "0"}, json=lambda: {})
        body = [self.node.body(r) for r in json] if isinstance(json, list) else self.node.body(json)  # type: ignore[arg-type]
        return SimpleNamespace(status_code=200, headers={}, json=lambda: body)

    def close(self) -> None:
        pass


@pytest.fixture
def node(monkeypatch) -> Node:
    """A fresh Node behind every requests.Session the reader makes; no real sleeping."""
    fake = Node()
    session_class = type("FakeSession", (Session,), {"node": fake, "status": []})
    monkeypatch.setattr(requests, "Session", session_class)
    fake.slept = []  # type: ignore[attr-defined]
    monkeypatch.setattr(chain_module.time, "sleep", fake.slept.append)  # type: ignore[attr-defined]
    fake.session_class = session_class  # type: ignore[attr-defined]
    return fake


def reader(node: Node, **answers: object) -> JsonRpcChain:
    node.answers.update(answers)
    return JsonRpcChain(URL, fork=False)


def test_the_url_s_credentials_path_and_query_never_show():
    rpc = JsonRpcChain(URL, fork=False)
    assert rpc.safe_url == "https://eth.example:8545"
    assert repr(rpc) == "JsonRpcChain('https://eth.example:8545')"
    assert JsonRpcChain("http://127.0.0.1", fork=False).safe_url == "http://127.0.0.1"


def test_reads_and_their_encoding(node):
    rpc = reader(
        node,
        eth_chainId="0x539",
        eth_getCode="0x6080",
        eth_getStorageAt="0x01",
        eth_call=lambda params: "0x" + params[0]["data"][2:] * 2,
    )
    assert rpc.chain_id() == rpc.chain_id() == 1337
    assert node.count("eth_chainId") == 1  # asked once
    assert rpc.get_code(CHILD) == b"\x60\x80"
    assert rpc.get_storage_at(CHILD, 255) == b"\0" * 31 + b"\x01"
    assert node.asked[-1] == ("eth_getStorageAt", [CHILD, "0xff", "latest"])
    assert rpc.call(CHILD, b"\x12\x34") == b"\x12\x34\x12\x34"
    assert node.asked[-1] == ("eth_call", [{"to": CHILD, "data": "0x1234"}, "latest"])


def test_a_revert_is_a_call_reverted_with_its_data_and_other_errors_are_chain_errors(node):
    rpc = reader(
        node,
        eth_call=error(3, "execution reverted", "0x08c379a0"),
        eth_getCode=error(-32000, "header not found"),
    )
    with pytest.raises(CallReverted) as reverted:
        rpc.call(CHILD, b"")
    assert reverted.value.data == bytes.fromhex("08c379a0")
    assert "rejected eth_call: execution reverted" in str(reverted.value)
    with pytest.raises(ChainError) as rejected:
        rpc.get_code(CHILD)
    assert not isinstance(rejected.value, CallReverted)
    assert str(rejected.value) == "the node at https://eth.example:8545 rejected eth_getCode: header not found"


def test_an_unanswered_request_says_the_error_s_type_not_the_url(node):
    node.session_class.raises = requests.ConnectionError(f"Max retries exceeded with url: {URL}")
    rpc = JsonRpcChain(URL, fork=False)
    with pytest.raises(ChainError) as info:
        rpc.get_code(CHILD)
    assert str(info.value) == "the node at https://eth.example:8545 did not answer eth_getCode: ConnectionError"
    assert "SECRET" not in str(info.value) and "SECRET" not in repr(info.value.__context__ or "")
    # A URL without secrets may say requests' words.
    plain = JsonRpcChain("http://127.0.0.1:9", fork=False)
    with pytest.raises(ChainError, match="did not answer eth_getCode: Max retries exceeded"):
        plain.get_code(CHILD)


def test_an_unexpected_body_is_a_chain_error(node):
    class NotJson(Session):
        def post(self, url, json, timeout):
            return SimpleNamespace(status_code=200, headers={}, json=lambda: ["a", "list"])

    node.session_class.post = NotJson.post
    with pytest.raises(ChainError, match="answered eth_getCode with an unexpected body"):
        JsonRpcChain(URL, fork=False).get_code(CHILD)


def test_a_rate_limit_is_waited_out_and_counted(node):
    node.session_class.status = [429, 429]
    rpc = reader(node, eth_getCode="0x60")
    assert rpc.get_code(CHILD) == b"\x60"
    assert len(node.slept) == 2 and node.posts == 3  # two waits
    limited = {"n": 0}

    def once_limited(params):
        limited["n"] += 1
        return error(-32005, "limit exceeded") if limited["n"] == 1 else "0x61"

    rpc = reader(node, eth_getCode=once_limited)
    assert rpc.get_code(CHILD) == b"\x61" and len(node.slept) == 3


def test_a_rate_limit_that_never_ends_is_given_up(node):
    rpc = reader(node, eth_getCode=error(429, "Too Many Requests"))
    with pytest.raises(ChainError, match="kept answering eth_getCode with its rate limit"):
        rpc.get_code(CHILD)
    assert node.count("eth_getCode") == chain_module.RATE_LIMIT_RETRIES + 1


def test_code_and_slots_in_one_batch_else_one_by_one(node):
    rpc = reader(
        node, eth_getCode="0x60", eth_getStorageAt=lambda params: "0x" + int(params[1], 16).to_bytes(32, "big").hex()
    )
    code, words = rpc.code_and_slots(CHILD, (1, 2))
    assert code == b"\x60" and words == [(1).to_bytes(32, "big"), (2).to_bytes(32, "big")]
    assert node.posts == 1
    node.posts = 0
    node.session_class.status = [400]  # a node that refuses batches
    code, words = rpc.code_and_slots(CHILD, (3,))
    assert code == b"\x60" and words == [(3).to_bytes(32, "big")]
    assert node.posts == 3  # the refused batch, then code and the slot


def test_get_transaction_of_a_malformed_answer_is_a_chain_error(node):
    rpc = reader(node, eth_getTransactionByHash={"from": EOA})  # no hash
    with pytest.raises(ChainError, match="eth_getTransactionByHash with an unexpected body: KeyError"):
        rpc.get_transaction(TX)
    assert reader(node, eth_getTransactionByHash=None).get_transaction(TX) is None


def a_factory_s_child(node: Node, **traces: object) -> JsonRpcChain:
    """A child whose code appeared at block 5 (of 6), made by FACTORY in TX."""
    return reader(
        node,
        eth_blockNumber="0x6",
        eth_getCode=lambda params: "0x6000" if params[1] == "latest" or int(params[1], 16) >= 5 else "0x",
        eth_getBlockByNumber=lambda params: {
            "transactions": [{"hash": TX, "from": EOA, "to": FACTORY, "input": "0x12"}] if params[1] else [TX]
        },
        eth_getTransactionByHash={"hash": TX, "from": EOA},
        **traces,
    )


CREATION = Creation(TX, b"\x60\x00\xaa", EOA, factory=True, block=5, creator=FACTORY, source="trace")


def test_a_debug_trace_without_tx_hashes_takes_them_from_the_block(node):
    frames = [{"result": {"type": "CALL", "from": EOA, "to": FACTORY, "calls": [
        {"type": "CREATE", "from": FACTORY, "to": CHILD, "input": "0x6000aa"}]}}]  # fmt: skip
    rpc = a_factory_s_child(node, debug_traceBlockByNumber=frames)
    assert rpc.find_creation(CHILD) == CREATION
    assert ("eth_getBlockByNumber", ["0x5", True]) in node.asked


def test_parity_traces_when_debug_is_refused(node):
    traces = [
        {"type": "call", "action": {"from": EOA}, "traceAddress": [], "transactionHash": TX},
        {"type": "create", "action": {"from": FACTORY, "init": "0x6000"}, "error": "Reverted", "traceAddress": [0]},
        {"type": "create", "action": {"from": FACTORY, "init": "0x6000aa"}, "result": {"address": CHILD},
         "traceAddress": [1], "transactionHash": TX},
    ]  # fmt: skip
    rpc = a_factory_s_child(node, trace_block=traces)
    assert rpc.find_creation(CHILD) == CREATION


def test_a_node_without_traces_is_asked_once(node):
    rpc = a_factory_s_child(node)
    assert rpc.find_creation(CHILD) is None
    assert rpc.creation_attempts(CHILD) == ["the node's trace APIs (refused)", "a replay on a local fork (off)"]
    asked = node.count("debug_traceBlockByNumber") + node.count("trace_block")
    assert asked == 2
    assert rpc.find_creation(CHILD) is None
    assert node.count("debug_traceBlockByNumber") + node.count("trace_block") == asked  # remembered


class Provider:
    """An Ape provider without web3: its JSON-RPC passthrough answers by method; `fail` makes
    every read raise it."""

    ANSWERS = {"eth_chainId": "0x539", "eth_getCode": "0x6080", "eth_getStorageAt": "0x02"}

    def __init__(self, fail: Exception | None = None, failures: int = 1_000):
        self.fail, self.failures, self.reads = fail, failures, 0
        self.network = SimpleNamespace(
            ecosystem=SimpleNamespace(create_transaction=lambda receiver, data: SimpleNamespace(to=receiver, data=data))
        )
        self.sent: object = b"\x01"

    def send_call(self, txn: object) -> object:
        if isinstance(self.sent, Exception):
            raise self.sent
        return self.sent

    def make_request(self, method: str, params: list) -> object:
        self.reads += 1
        if self.fail is not None and self.reads <= self.failures:
            raise self.fail
        return self.ANSWERS.get(method)


def test_ape_provider_reads_and_repr():
    chain = ApeProviderChain(Provider(), fork=False)  # type: ignore[arg-type]
    assert chain.chain_id() == 1337 and chain.get_code(CHILD) == b"\x60\x80"
    assert chain.get_storage_at(CHILD, 0) == b"\0" * 31 + b"\x02"
    assert chain.call(CHILD, b"\x12") == b"\x01"
    assert repr(chain) == "ApeProviderChain(Provider)"
    assert chain.get_transaction(TX) is None  # no web3: JSON-RPC through the provider, unknown hash


def test_ape_provider_errors_are_chain_errors_naming_the_read():
    chain = ApeProviderChain(Provider(fail=RuntimeError("node gone")), fork=False)  # type: ignore[arg-type]
    with pytest.raises(ChainError, match="^the Ape provider could not answer eth_getCode: node gone$") as info:
        chain.get_code(CHILD)
    assert isinstance(info.value.__cause__, RuntimeError)


def test_ape_provider_rate_limits_are_waited_out_then_given_up(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(chain_module.time, "sleep", slept.append)
    provider = Provider(fail=RuntimeError("429 Too Many Requests"), failures=2)
    chain = ApeProviderChain(provider, fork=False)  # type: ignore[arg-type]
    assert chain.get_code(CHILD) == b"\x60\x80" and len(slept) == 2
    endless = ApeProviderChain(Provider(fail=RuntimeError("429 Too Many Requests")), fork=False)  # type: ignore[arg-type]
    with pytest.raises(ChainError, match="could not answer eth_getCode: 429 Too Many Requests"):
        endless.get_code(CHILD)
    assert len(slept) == 2 + chain_module.RATE_LIMIT_RETRIES


def test_ape_provider_revert_keeps_custom_error_data():
    provider = Provider()
    chain = ApeProviderChain(provider, fork=False)  # type: ignore[arg-type]
    provider.sent = ContractLogicError("0x08c379a0")
    with pytest.raises(CallReverted) as custom:
        chain.call(CHILD, b"")
    assert custom.value.data == bytes.fromhex("08c379a0")
    provider.sent = ContractLogicError("Ownable: caller is not the owner")
    with pytest.raises(CallReverted, match="the call reverted: Ownable") as words:
        chain.call(CHILD, b"")
    assert words.value.data == b""


@pytest.mark.parametrize(
    "body, limited",
    [
        ({"error": {"code": -32005, "message": "limit exceeded"}}, True),
        ({"error": {"code": -32029, "message": "x"}}, True),
        ({"error": {"code": 429, "message": "x"}}, True),
        ({"error": {"code": -32000, "message": "Your app has exceeded its Rate Limit"}}, True),
        ({"error": {"code": -32000, "message": "Too Many Requests"}}, True),
        ({"error": {"code": -32000, "message": "execution reverted"}}, False),
        ({"error": "rate limit"}, False),  # not an error object
        ({"result": "0x1"}, False),
        ("rate limit", False),
        (None, False),
    ],
)
def test_is_rate_limited(body, limited):
    assert is_rate_limited(body) is limited


def test_provider_errors_are_told_by_their_words():
    assert rate_limit_text(RuntimeError("429 Client Error: Too Many Requests"))
    assert rate_limit_text(ValueError({"code": -32005, "message": "x"}))
    assert not rate_limit_text(RuntimeError("connection refused"))
    assert is_refused(ValueError({"code": -32601, "message": "the method debug_traceBlockByNumber does not exist"}))
    assert is_refused(RuntimeError("Unsupported method: trace_block"))
    assert not is_refused(RuntimeError("execution reverted"))


def test_revert_data_flat_nested_or_absent():
    assert revert_data({"code": 3, "data": "0x08c379a0"}) == bytes.fromhex("08c379a0")
    assert revert_data({"data": {"data": "0xdeadbeef"}}) == bytes.fromhex("deadbeef")
    assert revert_data({"data": "0xzz"}) == b""  # not hex: no data rather than an error
    assert revert_data({"data": 5}) == b"" and revert_data("reverted") == b"" and revert_data(None) == b""


def test_node_retry_is_the_one_policy_bounded():
    policy = node_retry()
    assert policy.max_retries == RATE_LIMIT_RETRIES and policy.max_delay == RATE_LIMIT_MAX_WAIT
    assert policy.base_delay == 0.25
    assert node_retry(0).max_retries == 0
    assert policy.retry_after("3") == 3.0 and policy.retry_after("600") == RATE_LIMIT_MAX_WAIT
