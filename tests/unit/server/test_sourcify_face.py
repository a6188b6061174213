"""The Sourcify face's parts, imported directly: `server/sourcify_face.py` (fields, lookups),
`server/shared_reads.py` (the lookups' live chain reads) and `protocol/sourcify.py` (the rules).

The lookups run on a real explorer (uvicorn on 127.0.0.1, real SQLite) over a chain reader of
dicts that counts its reads and can hold them, so the reads a lookup makes can be seen.
`data/sourcify-lookup-all.json` is what the lookups of two stored verifications (a contract, and an
EIP-1967 proxy of it) answered with `fields=all` before the lookups' reads were shared; they must
answer the same.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from ape_contract_verify.engine.verifier import FailureKind, VerificationResult
from ape_contract_verify.evm.proxies import EIP1967_IMPLEMENTATION_SLOT
from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.explorer import jobs
from ape_contract_verify.explorer.store import VerifiedContract
from ape_contract_verify.protocol import sourcify as sfy
from ape_contract_verify.server import sourcify_face
from ape_contract_verify.server.runner import LocalExplorer

GOLDEN = Path(__file__).parents[2] / "data" / "sourcify-lookup-all.json"
BOX = "0x" + "b0" * 20
PROXY = "0x" + "c1" * 20
RUNTIME = bytes.fromhex("6080604052348015600e575f5ffd5b50")
PROXY_RUNTIME = bytes.fromhex("363d3d373d3d3d363d7f") + b"\xf4" * 4
SOURCE = "// SPDX-License-Identifier: MIT\npragma solidity 0.8.26;\n/// @title A box\ncontract Box { uint256 public value; }\n"
STD_INPUT = {
    "language": "Solidity",
    "sources": {"src/Box.sol": {"content": SOURCE}},
    "settings": {
        "optimizer": {"enabled": True, "runs": 200},
        "evmVersion": "cancun",
        "outputSelection": {"*": {"*": ["abi"]}},
    },
}
METADATA = {
    "compiler": {"version": "0.8.26+commit.8a97fa7a"},
    "language": "Solidity",
    "output": {
        "abi": [],
        "devdoc": {"title": "A box", "kind": "dev", "version": 1},
        "userdoc": {"kind": "user", "version": 1},
    },
    "settings": {"compilationTarget": {"src/Box.sol": "Box"}},
    "version": 1,
}
ABI = [
    {
        "type": "function",
        "name": "value",
        "inputs": [],
        "outputs": [{"name": "", "type": "uint256"}],
        "stateMutability": "view",
    }
]


class DictChain:
    """A ChainReader over dicts: counts every read, and holds them while `gate` is clear."""

    def __init__(self):
        self.codes = {BOX: RUNTIME, PROXY: PROXY_RUNTIME}
        self.slots = {(PROXY, EIP1967_IMPLEMENTATION_SLOT): bytes(12) + bytes.fromhex(BOX[2:])}
        self.reads = 0
        self.gate = threading.Event()
        self.gate.set()
        self.started = threading.Event()
        self.fail = False

    def chain_id(self) -> int:
        return 31337

    def _read(self, value):
        """The state as the read started, returned once the gate lets it through."""
        self.started.set()
        assert self.gate.wait(20), "a test held the chain's reads too long"
        self.reads += 1
        if self.fail:
            raise ConnectionError("the node went away")
        return value

    def get_code(self, address: str) -> bytes:
        return self._read(self.codes.get(address.lower(), b""))

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return self._read(self.slots.get((address.lower(), slot), bytes(32)))

    def call(self, to: str, data: bytes) -> bytes:
        return self._read(b"")


def box(address: str = BOX, **changes) -> VerifiedContract:
    fields = dict(
        address=address,
        contract_name="src/Box.sol:Box",
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-standard-json-input",
        source_code=json.dumps(STD_INPUT),
        abi=json.dumps(ABI),
        settings={"optimizer": {"enabled": True, "runs": 200}},
        constructor_arguments="00" * 31 + "07",
        code_hash="ab" * 32,
        details={
            "recompiled_creation": "6080" + "00" * 8,
            "recompiled_runtime": RUNTIME.hex(),
            "onchain_creation": "0x6080" + "00" * 8 + "00" * 31 + "07",
            "creation_tx": "0x" + "cd" * 32,
            "creation_block": 12,
            "deployer": "0x" + "de" * 20,
            "metadata": json.dumps(METADATA),
        },
    )
    fields.update(changes)
    return VerifiedContract(**fields)


@pytest.fixture
def explorer(tmp_path):
    chain = DictChain()
    running = LocalExplorer(chain, db_path=tmp_path / "explorer.sqlite")
    running.store.save_contract(box())
    running.store.save_contract(
        box(
            PROXY,
            contract_name="Proxy.sol:Proxy",
            code_format="solidity-single-file",
            source_code="contract Proxy {}",
            details={},
            constructor_arguments="",
        )
    )
    running.chain_reader = chain
    running.start()
    try:
        yield running
    finally:
        chain.gate.set()
        running.stop()


def lookup(explorer, address: str, query: str = "?fields=all") -> requests.Response:
    return requests.get(f"{explorer.url}/v2/contract/31337/{address}{query}", timeout=30)


def answers(explorer) -> dict:
    """Both lookups, their verifiedAt (the time of this run's save) given back as the store's."""
    out = {}
    for address in (BOX, PROXY):
        answer = lookup(explorer, address)
        assert answer.status_code == 200, answer.text
        data = answer.json()
        assert data["verifiedAt"] == sourcify_face.iso(explorer.store.get_contract(address).verified_at)
        data["verifiedAt"] = "<the store's>"
        out[address] = data
    return out


# -- the lookup's content ---------------------------------------------------------------------


def test_lookup_all_answers_what_it_answered_before(explorer):
    now = answers(explorer)
    assert now == json.loads(GOLDEN.read_text())
    assert now[PROXY]["proxyResolution"] == {
        "isProxy": True,
        "proxyType": "EIP-1967",
        "implementations": [{"address": sfy_checksum(BOX), "name": "Box"}],
    }
    assert now[BOX]["runtimeBytecode"]["onchainBytecode"] == "0x" + RUNTIME.hex()


def sfy_checksum(address: str) -> str:
    from ape_contract_verify.protocol.values import checksum

    return checksum(address)


def test_a_lookup_reads_the_code_once_for_both_fields(explorer):
    chain = explorer.chain_reader
    lookup(explorer, BOX, "?fields=runtimeBytecode")
    alone = chain.reads
    assert alone == 1
    lookup(explorer, BOX, "?fields=proxyResolution")
    proxy_reads = chain.reads - alone
    before = chain.reads
    lookup(explorer, BOX, "?fields=runtimeBytecode,proxyResolution")
    assert chain.reads - before == proxy_reads  # the runtime code is the code proxy detection read
    before = chain.reads
    lookup(explorer, BOX, "?fields=abi,sources")
    assert lookup(explorer, BOX, "").status_code == 200
    assert chain.reads == before  # fields kept in the store read no chain


def test_waiting_lookups_share_one_read_and_none_is_older_than_its_request(explorer):
    chain = explorer.chain_reader
    chain.gate.clear()
    chain.started.clear()
    with ThreadPoolExecutor(12) as pool:
        first = pool.submit(lookup, explorer, BOX, "?fields=runtimeBytecode")
        assert chain.started.wait(10)  # the first read is under way, held
        chain.codes[BOX] = RUNTIME + b"\x00"  # the chain changes after it started
        later = [pool.submit(lookup, explorer, BOX, "?fields=runtimeBytecode") for _ in range(10)]
        time.sleep(0.5)  # the later ones arrive while the first read is held
        chain.gate.set()
        old = first.result(timeout=20).json()["runtimeBytecode"]["onchainBytecode"]
        new = {f.result(timeout=20).json()["runtimeBytecode"]["onchainBytecode"] for f in later}
    assert old == "0x" + RUNTIME.hex()
    assert new == {"0x" + RUNTIME.hex() + "00"}  # read after they arrived: the changed code
    assert chain.reads == 2  # the held read, then one read for the ten that waited


def test_a_failed_read_fails_its_lookups_and_is_not_kept(explorer):
    chain = explorer.chain_reader
    chain.fail = True
    failed = lookup(explorer, BOX, "?fields=runtimeBytecode")
    assert failed.status_code == 503
    assert failed.json()["customCode"] == sfy.INTERNAL_ERROR and "the node went away" in failed.json()["message"]
    proxy = lookup(explorer, BOX, "?fields=proxyResolution").json()["proxyResolution"]
    assert proxy["proxyResolutionError"]["customCode"] == sfy.PROXY_RESOLUTION_ERROR
    chain.fail = False
    assert (
        lookup(explorer, BOX, "?fields=runtimeBytecode").json()["runtimeBytecode"]["onchainBytecode"]
        == "0x" + RUNTIME.hex()
    )


def test_shared_reads_end_and_a_cancelled_waiter_leaves_the_read_to_the_others():
    from ape_contract_verify.server.shared_reads import SharedReads

    calls = []
    release = threading.Event()

    def read(key):
        calls.append(key)
        assert release.wait(10)
        return f"read {len(calls)} of {key}"

    async def scenario():
        reads = SharedReads(read)
        one = asyncio.ensure_future(reads.get("a"))
        two = asyncio.ensure_future(reads.get("a"))
        other = asyncio.ensure_future(reads.get("b"))
        await asyncio.sleep(0.1)
        one.cancel()
        release.set()
        results = await asyncio.gather(two, other)
        assert one.cancelled()
        again = await reads.get("a")
        return results, again, reads

    (two, other), again, reads = asyncio.run(scenario())
    assert two == "read 1 of a" or two == "read 2 of a"
    assert other.endswith("of b") and again.endswith("of a")
    assert sorted(calls) == ["a", "a", "b"]
    assert not reads._waiting and not reads._running  # nothing kept once idle: a read is never a cache


# -- fields and the protocol's rules ----------------------------------------------------------


def test_requested_fields():
    assert sourcify_face.requested_fields({}) is None
    assert sourcify_face.requested_fields({"fields": "all"}) == list(sourcify_face.ALL_FIELDS)
    assert sourcify_face.requested_fields({"fields": "abi, compilation.name"}) == ["abi", "compilation.name"]
    omitted = sourcify_face.requested_fields({"omit": "sources,abi"})
    assert "sources" not in omitted and "abi" not in omitted and "metadata" in omitted


@pytest.mark.parametrize(
    "query, param, named",
    [
        ({"fields": "abi", "omit": "abi"}, "fields", "omit"),
        ({"fields": "colour"}, "fields", "colour"),
        ({"fields": "compilation.colour"}, "fields", "compilerSettings"),  # the fix lists the parts
        ({"omit": "all"}, "omit", "all"),
    ],
)
def test_unknown_fields_are_refused_naming_the_parameter(query, param, named):
    with pytest.raises(InvalidRequest) as refused:
        sourcify_face.requested_fields(query)
    assert refused.value.param == param and named in str(refused.value)


def test_protocol_rules():
    assert sfy.validate_chain_id(" 0031337 ") == "31337"
    for bad in ("0", "x1", "", None, "1" * 21):
        with pytest.raises(InvalidRequest, match="chainId"):
            sfy.validate_chain_id(bad)
    assert sfy.error_body(sfy.NO_MATCH, "differs", onchainRuntimeCode="0x00")["customCode"] == "no_match"
    assert sfy.overall_match(sfy.EXACT_MATCH, sfy.MATCH) == sfy.EXACT_MATCH  # the better, as Sourcify's Vyper answer
    assert sfy.overall_match(None, None) is None
    assert sfy.overall_match(sfy.MATCH, sfy.EXACT_MATCH) == sfy.EXACT_MATCH  # exact_match ranks above match
    request = sfy.body_to_request(
        "31337",
        BOX,
        {
            "stdJsonInput": STD_INPUT,
            "compilerVersion": "0.8.26+commit.8a97fa7a",
            "contractIdentifier": "src/Box.sol:Box",
        },
    )
    assert request.compiler_version == "v0.8.26+commit.8a97fa7a" and request.contract_name == "src/Box.sol:Box"
    with pytest.raises(InvalidRequest, match="contractIdentifier"):
        sfy.body_to_request("31337", BOX, {"stdJsonInput": STD_INPUT, "compilerVersion": "0.8.26+commit.8a97fa7a"})
    with pytest.raises(InvalidRequest, match="compilerVersion"):
        sfy.body_to_request(
            "31337",
            BOX,
            {"stdJsonInput": STD_INPUT, "compilerVersion": "0.8.26", "contractIdentifier": "src/Box.sol:Box"},
        )


# -- one round trip for proxy detection's first reads ------------------------------------------


class StubNode:
    """A JSON-RPC node on 127.0.0.1 (canned state) that answers batches, or refuses them as some
    hosted nodes do; it records every POST's body."""

    def __init__(self, batches: bool):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        node = self
        self.posts: list = []

        def answer(call: dict) -> dict:
            method, params = call["method"], call["params"]
            if method == "eth_chainId":
                result = hex(31337)
            elif method == "eth_getCode":
                result = "0x" + RUNTIME.hex()
            elif method == "eth_getStorageAt" and int(params[1], 16) == EIP1967_IMPLEMENTATION_SLOT:
                result = "0x" + "00" * 12 + BOX[2:]
            else:
                result = "0x" + "00" * 32
            return {"jsonrpc": "2.0", "id": call["id"], "result": result}

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                node.posts.append(body)
                if isinstance(body, list):
                    reply = (
                        [answer(c) for c in reversed(body)]
                        if batches
                        else {
                            "jsonrpc": "2.0",
                            "id": None,
                            "error": {"code": -32600, "message": "batch requests are not supported"},
                        }
                    )
                else:
                    reply = answer(body)
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("batches", [True, False])
def test_code_and_slots_is_one_round_trip_or_reads_one_by_one(batches):
    from ape_contract_verify.evm.chain import JsonRpcChain

    node = StubNode(batches)
    try:
        slots = sourcify_face.PROXY_SLOTS
        code, words = JsonRpcChain(node.url).code_and_slots(PROXY, slots)
    finally:
        node.stop()
    assert code == RUNTIME
    assert words[0] == bytes(12) + bytes.fromhex(BOX[2:]) and words[1:] == [bytes(32)] * (len(slots) - 1)
    if batches:  # the answers came back in another order: matched by id
        assert len(node.posts) == 1 and [c["method"] for c in node.posts[0]] == ["eth_getCode"] + [
            "eth_getStorageAt"
        ] * len(slots)
    else:
        assert len(node.posts) == 2 + len(slots) and all(isinstance(p, dict) for p in node.posts[1:])


def test_a_lookup_reads_proxy_detection_in_one_round_trip(tmp_path):
    from ape_contract_verify.evm.chain import JsonRpcChain

    node = StubNode(True)
    explorer = LocalExplorer(JsonRpcChain(node.url), db_path=tmp_path / "explorer.sqlite")
    try:
        explorer.store.save_contract(box())
        explorer.store.save_contract(
            box(
                PROXY,
                contract_name="Proxy.sol:Proxy",
                code_format="solidity-single-file",
                source_code="contract Proxy {}",
                details={},
                constructor_arguments="",
            )
        )
        explorer.start()
        node.posts.clear()
        data = lookup(explorer, PROXY, "?fields=runtimeBytecode,proxyResolution").json()
    finally:
        explorer.stop()
        node.stop()
    assert data["proxyResolution"]["implementations"] == [{"address": sfy_checksum(BOX), "name": "Box"}]
    assert data["runtimeBytecode"]["onchainBytecode"] == "0x" + RUNTIME.hex()
    reads = [post for post in node.posts if not (isinstance(post, dict) and post["method"] == "eth_chainId")]
    assert len(reads) == 1 and isinstance(reads[0], list)  # code and proxy slots: one round trip


def test_an_explorer_gone_leaves_no_shared_reads_behind(tmp_path):
    import gc
    import weakref

    from ape_contract_verify.explorer.store import Store
    from ape_contract_verify.server.api import ExplorerService

    store = Store(tmp_path / "explorer.sqlite")
    service = ExplorerService(store, DictChain())
    assert sourcify_face._live_reads(service) is sourcify_face._live_reads(service)  # one per explorer
    gone = weakref.ref(service)
    del service
    gc.collect()
    assert gone() is None  # its shared reads did not keep it alive
    store.close()


def test_a_rendered_answer_serves_again_until_the_chain_or_the_store_changes(explorer, monkeypatch):
    """Lookups of an unchanged verification on an unchanged chain are one rendering; a changed
    chain or a new save renders again, so no answer is older than what it depends on."""
    renders = []
    real = sourcify_face._details
    monkeypatch.setattr(sourcify_face, "_details", lambda *args: renders.append(1) or real(*args))
    first = lookup(explorer, BOX).json()
    assert lookup(explorer, BOX).json() == first and len(renders) == 1
    assert lookup(explorer, BOX, "?fields=abi").json()["abi"] == first["abi"] and len(renders) == 2
    explorer.chain_reader.codes[BOX] = RUNTIME + b"\x00"  # the chain changed
    assert lookup(explorer, BOX).json()["runtimeBytecode"]["onchainBytecode"] == "0x" + RUNTIME.hex() + "00"
    assert len(renders) == 3
    explorer.store.save_contract(box(constructor_arguments="00" * 31 + "08"))  # saved again
    again = lookup(explorer, BOX).json()
    assert again["creationBytecode"]["transformationValues"]["constructorArguments"] == "0x" + "00" * 31 + "08"
    assert len(renders) == 4


# -- what a lookup reads: the store's facts never, the chain's for every wave ----------------


class Hops:
    """Counts the worker-thread calls the face and its shared reads make (each a thread hop on
    the event loop's path), by what they ran."""

    def __init__(self, monkeypatch):
        from ape_contract_verify.server import shared_reads

        self.calls: list[str] = []
        for module in (sourcify_face, shared_reads):
            real = module.run_in_threadpool

            async def counted(func, *args, _real=real, **kwargs):
                self.calls.append(getattr(func, "__name__", repr(func)))
                return await _real(func, *args, **kwargs)

            monkeypatch.setattr(module, "run_in_threadpool", counted)


def test_a_lookup_takes_the_cheap_path_once_the_chain_id_is_known(explorer, monkeypatch):
    """Once read, the chain id is the service's: no lookup waits for a worker thread to be told it.
    A repeated `fields=all` lookup is one shared chain read and the kept rendering, no more."""
    assert lookup(explorer, BOX).status_code == 200  # the chain id read, the answer rendered
    hops = Hops(monkeypatch)
    reads = explorer.chain_reader.reads
    assert lookup(explorer, BOX, "").status_code == 200
    assert hops.calls == [] and explorer.chain_reader.reads == reads  # the default fields: the store only
    assert lookup(explorer, BOX).status_code == 200
    assert hops.calls == ["read"]  # the wave's chain read; neither the chain id nor a rendering


def test_the_stored_facts_are_never_read_from_the_chain(explorer):
    chain = explorer.chain_reader
    before = chain.reads
    data = lookup(explorer, BOX, "?fields=deployment,creationBytecode,compilation,sources,abi,metadata").json()
    assert chain.reads == before  # DictChain has no get_transaction: a creation read would also fail
    assert data["deployment"] == {
        "transactionHash": "0x" + "cd" * 32,
        "blockNumber": "12",
        "transactionIndex": None,
        "deployer": sfy_checksum("0x" + "de" * 20),
    }


def test_a_selfdestruct_is_seen_by_the_next_lookup_not_served_from_the_kept_answer(explorer):
    first = lookup(explorer, BOX).json()
    assert first["runtimeBytecode"]["onchainBytecode"] == "0x" + RUNTIME.hex()
    assert lookup(explorer, BOX).json() == first  # the kept answer, while the chain is unchanged
    del explorer.chain_reader.codes[BOX]  # selfdestructed (or the chain reset without it)
    gone = lookup(explorer, BOX).json()
    assert gone["runtimeBytecode"]["onchainBytecode"] == "0x"
    assert gone["proxyResolution"] == {"isProxy": False, "proxyType": None, "implementations": []}
    explorer.chain_reader.codes[BOX] = RUNTIME  # deployed again at the address
    assert lookup(explorer, BOX).json() == first


def test_an_upgrade_is_seen_by_the_next_lookup_though_the_code_is_unchanged(explorer):
    """The proxy's code stays; its implementation slot changes: the kept answer is not served."""
    before = lookup(explorer, PROXY).json()["proxyResolution"]
    assert before["implementations"] == [{"address": sfy_checksum(BOX), "name": "Box"}]
    other = "0x" + "e7" * 20
    explorer.chain_reader.slots[(PROXY, EIP1967_IMPLEMENTATION_SLOT)] = bytes(12) + bytes.fromhex(other[2:])
    after = lookup(explorer, PROXY).json()["proxyResolution"]
    assert after == {"isProxy": True, "proxyType": "EIP-1967", "implementations": [{"address": sfy_checksum(other)}]}


# -- a job's record as the face answers it ----------------------------------------------------


def failed(kind: FailureKind | None, reason: str = "", **fields) -> dict:
    """An engine result as the job records it (its `jobs.FAILURE` fields), answered by the face."""
    result = VerificationResult(False, None, reason, failure=kind, **fields)
    return sourcify_face.job_error(BOX, json.dumps(jobs.result_fields(result, jobs.FAILURE)))


@pytest.mark.parametrize("match, level", [("full", sfy.EXACT_MATCH), ("partial", sfy.MATCH)])
def test_success_names_the_match_as_sourcify_does(match, level):
    answer = sourcify_face.job_match(json.dumps({"match": match, "milliseconds": 1234}))
    assert answer == {"creationMatch": level, "runtimeMatch": level, "match": level, "compilationTime": "1234"}


def test_a_bytecode_mismatch_carries_both_sides_and_a_length_mismatch_stops_before_creation():
    same = failed(FailureKind.BYTECODE, recompiled_runtime="aabb", onchain_runtime="ccdd", recompiled_creation="ee")
    assert same["customCode"] == sfy.NO_MATCH
    assert same["message"] == "The deployed and recompiled bytecode don't match."  # no reason given
    assert (same["recompiledRuntimeCode"], same["onchainRuntimeCode"], same["recompiledCreationCode"]) == (
        "0xaabb",
        "0xccdd",
        "0xee",
    )
    longer = failed(FailureKind.BYTECODE, recompiled_runtime="aabb", onchain_runtime="cc", onchain_creation="ff")
    assert longer["customCode"] == sfy.BYTECODE_LENGTH_MISMATCH and "onchainCreationCode" not in longer


def test_each_failure_kind_has_its_custom_code():
    compiler = failed(FailureKind.COMPILER, "ParserError: <b>")
    assert compiler["customCode"] == sfy.COMPILER_ERROR
    assert compiler["errorData"]["compilerErrors"][0]["message"] == "ParserError: <b>"
    no_code = failed(FailureKind.NO_CODE, "no code", onchain_runtime="00")
    assert no_code["customCode"] == sfy.CONTRACT_NOT_DEPLOYED and "onchainRuntimeCode" not in no_code
    assert failed(FailureKind.CHAIN, "node down")["customCode"] == sfy.INTERNAL_ERROR
    assert failed(None, "something")["customCode"] == sfy.NO_MATCH
    blueprint = sourcify_face.job_error(BOX, json.dumps({"failure": "blueprint"}))
    assert (blueprint["customCode"], blueprint["message"]) == (
        sfy.NO_MATCH,
        "The deployed and recompiled bytecode don't match.",
    )


def test_read_gives_back_what_was_recorded_or_an_internal_error_for_plain_text():
    recorded = sourcify_face.job_error(BOX, json.dumps({"failure": jobs.ALREADY_VERIFIED}))
    assert recorded["customCode"] == sfy.ALREADY_VERIFIED
    plain = sourcify_face.job_error(BOX, "interrupted too often")
    assert (plain["customCode"], plain["message"]) == (sfy.INTERNAL_ERROR, "interrupted too often")
    assert sourcify_face.job_error(BOX, None)["message"] == "The job ended without an answer."
