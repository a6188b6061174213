"""server/api.py: the contract API's handlers and the app around them, driven in this process over
ASGI (no socket): the envelope, each action's answers and refusals, the chain-id check, the
catch-all that turns any exception into status "0", and the answers for unknown paths.
(test_server_api.py drives the same app through uvicorn with a job runner.)"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlencode

import pytest
from eth_utils import to_checksum_address

from ape_contract_verify.evm.reads import Creation
from ape_contract_verify.explorer.jobs import code_hash
from ape_contract_verify.explorer.store import PROXY, SOURCE, Store, VerifiedContract
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.server import api
from ape_contract_verify.server.api import CatchAll, ExplorerService, create_app, envelope
from support.service import ADDRESS_A, ADDRESS_B, EMPTY_ADDR, PROXY_ADDR, FakeChain, form

pytestmark = pytest.mark.unit

KEY = "api-Key-7Hw"
ABI_TEXT = '[{"type":"function","name":"value","inputs":[],"outputs":[]}]'


def call(app, method: str, path: str, fields: dict | None = None, headers: tuple = ()) -> tuple[int, dict, dict]:
    """One request through the ASGI app: (HTTP status, headers, JSON body)."""
    route, _, query = path.partition("?")
    body = urlencode(fields).encode() if fields is not None else b""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": route,
        "raw_path": route.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"content-length", str(len(body)).encode()),
            *headers,
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    sent: list[dict] = []
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict:
        return chunks.pop(0) if chunks else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    start = next(m for m in sent if m["type"] == "http.response.start")
    text = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode().lower(): v.decode() for k, v in start["headers"]}, json.loads(text)


def get(app, **params) -> dict:
    status, headers, answer = call(app, "GET", "/api?" + urlencode({"module": "contract", **params}))
    assert status == 200 and headers["x-content-type-options"] == "nosniff"
    assert set(answer) == {"status", "message", "result"}
    return answer


def post(app, fields: dict, query: str = "") -> dict:
    status, _, answer = call(app, "POST", "/api" + (f"?{query}" if query else ""), fields)
    assert status == 200
    return answer


class Explorer:
    def __init__(self, store: Store, chain: FakeChain, **options):
        self.woken = 0
        self.chain = chain
        self.service = ExplorerService(store, chain, notify=self.wake, **options)
        self.app = create_app(self.service)

    def wake(self) -> None:
        self.woken += 1


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "explorer.sqlite")
    yield store
    store.close()


@pytest.fixture
def explorer(store):
    return Explorer(store, FakeChain())


@pytest.fixture
def keyed(store):
    return Explorer(store, FakeChain(), api_keys=[KEY])


def verified(address: str, code: bytes = b"", match: str = "full") -> VerifiedContract:
    return VerifiedContract(
        address=address.lower(),
        contract_name="Box",
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-single-file",
        source_code="contract Box {}",
        abi=ABI_TEXT,
        match=match,
        code_hash=code_hash(code) if code else "",
    )


# -- the envelope ----------------------------------------------------------------------------------


def test_the_envelope_is_etherscan_s():
    assert json.loads(envelope("1", "x")) == {"status": "1", "message": "OK", "result": "x"}
    assert json.loads(envelope("0", "y")) == {"status": "0", "message": "NOTOK", "result": "y"}
    assert json.loads(envelope("0", [], "No records")) == {"status": "0", "message": "No records", "result": []}
    assert envelope("1", "ü") == '{"status":"1","message":"OK","result":"ü"}'.encode()  # compact, UTF-8
    response = api.envelope_response("1", {"a": 1})
    assert response.media_type == "application/json" and json.loads(response.body)["result"] == {"a": 1}


# -- module, action, chain id ----------------------------------------------------------------------


def test_module_and_action_are_checked_with_the_explorer_s_words(explorer):
    missing = get(explorer.app, module="")
    assert missing["status"] == "0" and missing["result"].startswith(Texts.INVALID_MODULE + ". module: is missing")
    wrong = get(explorer.app, module="account", action="balance")
    assert "module: 'account' is not served here. Fix: send module=contract" in wrong["result"]
    action = get(explorer.app, action="selfdestruct")
    assert action["result"].startswith(Texts.INVALID_ACTION) and "'selfdestruct' is not an action" in action["result"]
    assert "getabi" in action["result"]  # the fix lists the actions


def test_a_chain_id_other_than_the_chain_s_is_refused(explorer):
    ok = get(explorer.app, action="getabi", address=ADDRESS_A, chainid="31337")
    assert ok["result"] == Texts.NOT_VERIFIED  # the check passed; the action answered
    wrong = get(explorer.app, action="getabi", address=ADDRESS_A, chainid="1")
    assert wrong["status"] == "0"
    assert "this explorer serves chainid 31337, got '1'" in wrong["result"]
    assert "send chainid=31337, or leave it out" in wrong["result"]


def test_a_chain_id_that_cannot_be_read_is_named(store):
    class DeadChain(FakeChain):
        def chain_id(self) -> int:
            raise ConnectionError("node unreachable")

    app = Explorer(store, DeadChain()).app
    answer = get(app, action="getabi", address=ADDRESS_A, chainid="1")
    assert answer["result"] == "The explorer could not read the chain id: ConnectionError: node unreachable"
    assert get(app, action="getabi", address=ADDRESS_A)["result"] == Texts.NOT_VERIFIED  # no chainid: no read


# -- reads -----------------------------------------------------------------------------------------


def test_getabi_answers_the_stored_abi_verbatim(explorer, store):
    assert get(explorer.app, action="getabi", address=ADDRESS_A) == {
        "status": "0",
        "message": "NOTOK",
        "result": Texts.NOT_VERIFIED,
    }
    store.save_contract(verified(ADDRESS_A))
    answer = get(explorer.app, action="getabi", address=ADDRESS_A.upper().replace("0X", "0x"))
    assert answer["status"] == "1" and answer["result"] == ABI_TEXT


def test_getsourcecode_answers_one_record_verified_or_not(explorer, store):
    empty = get(explorer.app, action="getsourcecode", address=ADDRESS_B)
    assert empty["status"] == "1" and len(empty["result"]) == 1 and empty["result"][0]["SourceCode"] == ""
    store.save_contract(verified(ADDRESS_B))
    record = get(explorer.app, action="getsourcecode", address=ADDRESS_B)["result"][0]
    assert record["SourceCode"] == "contract Box {}" and record["ContractName"] == "Box" and record["ABI"] == ABI_TEXT


@pytest.mark.parametrize("action", ["getabi", "getsourcecode"])
def test_a_read_with_a_bad_address_names_the_parameter(explorer, action):
    answer = get(explorer.app, action=action, address="0x1234")
    assert answer["status"] == "0" and "address" in answer["result"] and "'0x1234'" in answer["result"]
    assert "40 hex digits" in answer["result"]


# -- verifysourcecode ------------------------------------------------------------------------------


def test_a_submission_is_queued_and_wakes_the_runner(explorer, store):
    answer = post(explorer.app, form())
    assert answer["status"] == "1" and len(answer["result"]) > 10
    submission = store.get_submission(answer["result"])
    assert submission.kind == SOURCE and submission.address == ADDRESS_A and submission.state == "pending"
    assert explorer.woken == 1


def test_a_submission_must_be_a_post(explorer):
    answer = get(explorer.app, **form())
    assert answer["result"] == (
        "verifysourcecode must be sent as a POST with form fields; GET is not supported for submissions."
    )
    assert explorer.woken == 0


def test_a_submission_needs_one_of_the_keys(keyed):
    assert post(keyed.app, form())["result"] == Texts.INVALID_API_KEY
    assert post(keyed.app, form(apikey="wrong"))["result"] == Texts.INVALID_API_KEY
    assert post(keyed.app, form(apikey=KEY))["status"] == "1"
    assert keyed.woken == 1


def test_a_wrong_key_in_the_query_is_refused_before_the_body_is_read(keyed):
    # a body that would be refused for its own reasons: the key's refusal comes first
    answer = post(keyed.app, {"garbage": "x"}, query="apikey=wrong&action=verifysourcecode")
    assert answer["result"] == Texts.INVALID_API_KEY
    # no action in the query: the body's is likely a submission, so the key is checked first
    assert post(keyed.app, {"action": "getabi"}, query="apikey=wrong")["result"] == Texts.INVALID_API_KEY
    fields = {"module": "contract", "address": ADDRESS_A}
    reads = post(keyed.app, fields, query="apikey=wrong&action=getabi")
    assert reads["result"] == Texts.NOT_VERIFIED  # reads need no key, even with a wrong one in the query


def test_a_submission_for_an_address_without_code_is_refused(explorer):
    answer = post(explorer.app, form(address=EMPTY_ADDR))
    assert answer["result"] == Texts.UNABLE_TO_LOCATE.format(address=EMPTY_ADDR)
    assert explorer.woken == 0


def test_a_chain_read_failure_is_named_not_a_crash(store):
    class Flaky(FakeChain):
        def get_code(self, address: str) -> bytes:
            raise TimeoutError("read timed out")

    answer = post(Explorer(store, Flaky()).app, form())
    assert answer["result"] == "The explorer could not read the chain: TimeoutError: read timed out"


def test_a_fully_verified_address_is_not_queued_again_unless_its_code_changed(explorer, store):
    code = explorer.chain.get_code(ADDRESS_A)
    store.save_contract(verified(ADDRESS_A, code))
    assert post(explorer.app, form())["result"] == Texts.SOURCE_ALREADY_VERIFIED
    store.save_contract(verified(ADDRESS_A, b"other code"))  # a restarted chain: other code there now
    assert post(explorer.app, form())["status"] == "1"
    store.save_contract(verified(ADDRESS_B, explorer.chain.get_code(ADDRESS_B), match="partial"))
    assert post(explorer.app, form(address=ADDRESS_B))["status"] == "1"  # a partial match may be bettered


def test_a_bad_form_field_is_refused_naming_it(explorer):
    answer = post(explorer.app, form(compilerversion="latest"))
    assert answer["status"] == "0" and answer["result"].startswith(Texts.INVALID_COMPILER_VERSION)
    assert "compilerversion" in answer["result"] and "Fix:" in answer["result"]
    assert explorer.woken == 0


# -- status checks ---------------------------------------------------------------------------------


def test_checkverifystatus_follows_a_submission(explorer, store):
    malformed = get(explorer.app, action="checkverifystatus", guid="nope")["result"]
    assert malformed.startswith(Texts.UNKNOWN_UID + ". guid: 'nope' is 4 characters long")
    assert get(explorer.app, action="checkverifystatus", guid="A" * 50)["result"] == Texts.UNKNOWN_UID
    guid = post(explorer.app, form())["result"]
    assert get(explorer.app, action="checkverifystatus", guid=guid) == {
        "status": "0",
        "message": "NOTOK",
        "result": Texts.PENDING,
    }
    claimed = store.claim_next()
    store.finish(claimed.guid, "1", Texts.PASS)
    assert get(explorer.app, action="checkverifystatus", guid=guid) == {
        "status": "1",
        "message": "OK",
        "result": Texts.PASS,
    }


def test_each_status_action_answers_only_its_own_kind(explorer, store):
    source = store.add_submission(SOURCE, ADDRESS_A, {})
    proxy = store.add_submission(PROXY, PROXY_ADDR, {})
    wrong = get(explorer.app, action="checkproxyverification", guid=source)["result"]
    assert wrong == f"{Texts.UNKNOWN_UID} (this guid is a source code submission; use checkverifystatus)"
    wrong = get(explorer.app, action="checkverifystatus", guid=proxy)["result"]
    assert wrong == f"{Texts.UNKNOWN_UID} (this guid is a proxy submission; use checkproxyverification)"
    assert get(explorer.app, action="checkproxyverification", guid=proxy)["result"] == Texts.PROXY_IN_PROGRESS


# -- verifyproxycontract ---------------------------------------------------------------------------


def proxy_form(**extra) -> dict:
    return {"module": "contract", "action": "verifyproxycontract", "address": PROXY_ADDR, **extra}


def test_a_proxy_submission_is_queued_with_its_expected_implementation(explorer, store):
    expected = "0x" + "D4" * 20
    guid = post(explorer.app, proxy_form(expectedimplementation=expected))["result"]
    submission = store.get_submission(guid)
    assert submission.kind == PROXY and submission.payload == {"expected_implementation": expected.lower()}
    assert explorer.woken == 1
    assert "must be sent as a POST" in get(explorer.app, **proxy_form())["result"]
    assert post(explorer.app, proxy_form(address=EMPTY_ADDR))["result"] == Texts.UNABLE_TO_LOCATE.format(
        address=EMPTY_ADDR
    )


def test_proxy_submissions_have_a_daily_quota(store):
    explorer = Explorer(store, FakeChain(), proxy_daily_limit=2)
    assert [post(explorer.app, proxy_form())["status"] for _ in range(2)] == ["1", "1"]
    refused = post(explorer.app, proxy_form())["result"]
    assert refused == (
        "Max daily proxy verification submissions reached (2 a day per API key); try again after 00:00 UTC."
    )
    assert explorer.woken == 2


# -- getcontractcreation ---------------------------------------------------------------------------


def test_getcontractcreation_answers_each_found_address(explorer):
    answer = get(explorer.app, action="getcontractcreation", contractaddresses=f"{ADDRESS_A},{EMPTY_ADDR}")
    assert answer["status"] == "1" and len(answer["result"]) == 1  # nothing was created at EMPTY_ADDR
    found = answer["result"][0]
    assert found == {
        "contractAddress": to_checksum_address(ADDRESS_A),
        "contractCreator": "0x" + "99" * 20,
        "txHash": "0x" + "ab" * 32,
        "blockNumber": "7",
        "contractFactory": "",
        "creationBytecode": "0x60806080604052",
    }
    none = get(explorer.app, action="getcontractcreation", contractaddresses=EMPTY_ADDR)
    assert none == {"status": "0", "message": "NOTOK", "result": "No data found"}


def test_getcontractcreation_reads_the_reader_s_creation_type(store):
    factory = "0x" + "fa" * 20

    class Factory(FakeChain):
        def find_creation(self, address: str) -> Creation:
            return Creation(
                tx_hash="0x" + "cd" * 32, input=b"\x01\x02", deployer="0x" + "11" * 20, factory=True, creator=factory
            )

    found = get(Explorer(store, Factory()).app, action="getcontractcreation", contractaddresses=ADDRESS_A)["result"][0]
    assert found["contractFactory"] == factory and found["creationBytecode"] == "0x0102"
    assert found["blockNumber"] == "" and found["contractCreator"] == "0x" + "11" * 20


def test_getcontractcreation_names_a_failed_lookup(store):
    class Broken(FakeChain):
        def find_creation(self, address: str):
            raise RuntimeError("scan limit reached")

    answer = get(Explorer(store, Broken()).app, action="getcontractcreation", contractaddresses=ADDRESS_A)
    assert answer["result"] == (
        f"The explorer could not find the creation of {ADDRESS_A}: RuntimeError: scan limit reached"
    )


# -- the app's edges -------------------------------------------------------------------------------


def test_unknown_paths_and_methods_answer_in_the_envelope(explorer):
    status, headers, answer = call(explorer.app, "GET", "/nowhere")
    assert status == 404 and headers["x-content-type-options"] == "nosniff"
    assert answer["status"] == "0" and answer["result"].startswith("Not found: /nowhere. The API is at /api")
    status, _, answer = call(explorer.app, "DELETE", "/api")
    assert status == 405 and answer["result"] == "Method DELETE is not supported; use GET or POST on /api."
    assert get(explorer.app, action="getabi", address=ADDRESS_A)["result"] == Texts.NOT_VERIFIED
    status, _, answer = call(explorer.app, "GET", "/v2/api?module=contract&action=getabi&address=" + ADDRESS_A)
    assert status == 200 and answer["result"] == Texts.NOT_VERIFIED  # Etherscan V2's path too


def test_an_unexpected_exception_becomes_status_0_never_a_500(explorer):
    explorer.service.store = None  # every handler that reads the store now fails unexpectedly
    status, headers, answer = call(explorer.app, "GET", "/api?module=contract&action=getabi&address=" + ADDRESS_A)
    assert status == 200 and headers["content-type"] == "application/json"
    assert answer["status"] == "0" and answer["result"].startswith("Internal error while handling the request (")
    assert answer["result"].endswith("Nothing was recorded.") and "AttributeError" in answer["result"]


def test_catch_all_adds_nosniff_and_leaves_a_started_answer_alone():
    async def fails_after_start(scope, receive, send):
        await send({"type": "http.response.start", "status": 201, "headers": [(b"x-a", b"1")]})
        raise RuntimeError("late")

    async def fails_at_once(scope, receive, send):
        raise KeyError("early")

    def run(app) -> list[dict]:
        sent: list[dict] = []

        async def send(message):
            sent.append(message)

        async def receive():
            return {"type": "http.request", "body": b""}

        asyncio.run(CatchAll(app)({"type": "http"}, receive, send))
        return sent

    late = run(fails_after_start)
    assert len(late) == 1 and late[0]["status"] == 201  # no second start: the client sees a cut answer
    assert (b"x-content-type-options", b"nosniff") in late[0]["headers"]
    early = run(fails_at_once)
    assert early[0]["status"] == 200
    assert json.loads(early[1]["body"])["result"].startswith("Internal error while handling the request (KeyError")


def test_catch_all_passes_other_scopes_through():
    seen = []

    async def lifespan_app(scope, receive, send):
        seen.append(scope["type"])

    asyncio.run(CatchAll(lifespan_app)({"type": "lifespan"}, None, None))
    assert seen == ["lifespan"]
