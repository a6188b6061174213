"""Blockscout's Etherscan-compatible answers, replayed over loopback, become the right outcomes;
its Pro API gets `chain_id`; Etherscan's free-plan refusal is final and asked once.

The envelopes are built as Blockscout renders them (apps/block_scout_web/lib/block_scout_web/views/
api/rpc/rpc_view.ex): success `{"status": "1", "message": "OK", "result": data}`, error
`{"status": "0", "message": <text>, "result": <data, often null>}`, with the texts of
controllers/api/rpc/contract_controller.ex (blockscout/blockscout, master of Aug 2026)."""

import json

import pytest

from ape_contract_verify.client.targets import Target
from ape_contract_verify.exceptions import (
    AddressNotFound,
    BadEndpoint,
    ContractNotVerified,
    ExplorerRefused,
    VerificationRejected,
)
from ape_contract_verify.protocol.answers import Outcome, classify
from support.client import Texts, single_file_request
from support.stub_server import ADDRESS, GUID, IMPL, Http, Sleeps, make_client, notok, ok


class Recorded:
    """Texts real explorers answer with that only the client reads (it matches them by `classify`'s
    rules): Blockscout's (controllers/api/rpc/contract_controller.ex) and Etherscan's plan refusals."""

    BLOCKSCOUT_NOT_A_SMART_CONTRACT = "Address is not a smart-contract"  # since Sep 2025 (#13081)
    BLOCKSCOUT_CONTRACT_NOT_FOUND = "Smart-contract not found or is not verified"  # verifyproxycontract
    BLOCKSCOUT_PROXY_TOO_SOON = "Only one attempt in {ms}ms"  # verifyproxycontract, implementation fresh
    BLOCKSCOUT_INVALID_ADDRESS = "Invalid address hash"
    BLOCKSCOUT_MISSING_CODEFORMAT = "Missing codeformat field"
    BLOCKSCOUT_PUBLISH_FAILED = "Something went wrong while publishing the contract"
    BLOCKSCOUT_UNKNOWN_ACTION = "Unknown action"  # also: the instance has verification turned off
    BLOCKSCOUT_UNKNOWN_MODULE = "Unknown module"
    BLOCKSCOUT_RATE_LIMIT = "Too many requests. Increase limits now at https://dev.blockscout.com"  # with HTTP 429
    # Etherscan's paid-plan refusals: an answer, not a fault; asking again changes nothing.
    FREE_PLAN_UNSUPPORTED_CHAIN = (
        "Free API access is not supported for this chain. Please upgrade your api plan for full chain coverage. "
        "https://etherscan.io/apis"
    )
    PRO_ENDPOINT = (
        "Sorry, it looks like you are trying to access an API Pro endpoint. Contact us to upgrade to API Pro."
    )
    # A free key turned away for a while under load: a rate limit, waited out.
    FREE_PLAN_BUSY = (
        "Free API access is temporarily unavailable due to unusually high network activity. To maintain "
        "uninterrupted service, we recommend upgrading to a paid plan: https://etherscan.io/apis"
    )


def shown(result):
    """Blockscout's `show.json`."""
    return {"status": "1", "message": "OK", "result": result}


def error(message, data=None):
    """Blockscout's `error.json`: the text in `message`, `result` the data (null when none given)."""
    return {"status": "0", "message": message, "result": data}


# -- verifysourcecode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        error(Texts.BLOCKSCOUT_ALREADY_VERIFIED, Texts.BLOCKSCOUT_ALREADY_VERIFIED),
        error(Texts.BLOCKSCOUT_ALREADY_VERIFIED),
    ],
    ids=["standard-json", "flattened-result-null"],
)
def test_already_verified_is_a_success_even_with_a_null_result(stub, answer):
    stub.answer(answer)
    client = make_client(stub)
    receipt = client.verify_source_code(single_file_request())
    assert receipt.guid == "" and receipt.already_verified
    assert receipt.answer.reason == Texts.BLOCKSCOUT_ALREADY_VERIFIED
    assert client.wait(receipt, interval=0.01, timeout=1).outcome == Outcome.ALREADY_VERIFIED
    assert stub.actions() == ["verifysourcecode"]


@pytest.mark.parametrize(
    "text", [Recorded.BLOCKSCOUT_NOT_A_SMART_CONTRACT, Texts.BLOCKSCOUT_NOT_A_CONTRACT], ids=["2025-09+", "2025-01"]
)
def test_not_a_smart_contract_is_waited_out_as_not_indexed(stub, text):
    stub.answer(error(text, text), error(text, text), shown(GUID))
    sleeps = Sleeps()
    receipt = make_client(stub, not_indexed_timeout=60, not_indexed_interval=4, sleep=sleeps).verify_source_code(
        single_file_request()
    )
    assert receipt.guid == GUID and sleeps == [4, 4]
    assert stub.actions() == ["verifysourcecode"] * 3


def test_not_a_smart_contract_after_the_wait_names_the_address(stub):
    text = Recorded.BLOCKSCOUT_NOT_A_SMART_CONTRACT
    stub.answer(error(text, text))
    with pytest.raises(AddressNotFound) as info:
        make_client(stub).verify_source_code(single_file_request())
    assert info.value.answer.outcome == Outcome.NOT_FOUND and text in str(info.value)
    assert len(stub.seen) == 1


@pytest.mark.parametrize(
    "text",
    [
        Recorded.BLOCKSCOUT_MISSING_CODEFORMAT,
        "contractname is required.",
        Recorded.BLOCKSCOUT_INVALID_ADDRESS,
        f'{Recorded.BLOCKSCOUT_PUBLISH_FAILED}: %{{name: ["can\'t be blank"]}}',
    ],
    ids=["codeformat", "param", "address", "publish"],
)
def test_refusals_with_the_text_only_in_message_carry_it(stub, text):
    stub.answer(error(text))  # result null: the reason must come from `message`
    with pytest.raises(VerificationRejected) as info:
        make_client(stub).verify_source_code(single_file_request())
    assert info.value.answer.outcome == Outcome.FAILED
    assert info.value.reason == text and text in str(info.value)
    assert len(stub.seen) == 1


@pytest.mark.parametrize("text", [Recorded.BLOCKSCOUT_UNKNOWN_ACTION, Recorded.BLOCKSCOUT_UNKNOWN_MODULE])
def test_unknown_action_means_a_wrong_endpoint_not_a_failed_verification(stub, text):
    stub.answer(error(text))
    with pytest.raises(BadEndpoint) as info:
        make_client(stub).verify_source_code(single_file_request())
    assert text in str(info.value) and len(stub.seen) == 1


# -- checkverifystatus: every answer is status "1" -----------------------------------------------

STATUS = [
    (Texts.PENDING, Outcome.PENDING),
    (Texts.PASS, Outcome.VERIFIED),
    (Texts.FAIL, Outcome.FAILED),
    (Texts.UNKNOWN_UID, Outcome.UNKNOWN_GUID),
]


@pytest.mark.parametrize("text,outcome", STATUS, ids=[t for t, _ in STATUS])
def test_checkverifystatus_status_one_answers(stub, text, outcome):
    stub.answer(shown(text))
    answer = make_client(stub).job_status(GUID)
    assert answer.outcome == outcome and answer.reason == text and answer.status == "1"


def test_a_submission_polls_through_pending_to_failed(stub):
    stub.answer(shown(GUID), shown(Texts.PENDING), shown(Texts.FAIL))
    client = make_client(stub)
    answer = client.wait(client.verify_source_code(single_file_request()), interval=0.01, timeout=5)
    assert answer.outcome == Outcome.FAILED and not answer.outcome.is_success
    assert stub.actions() == ["verifysourcecode", "checkverifystatus", "checkverifystatus"]


# -- proxies ---------------------------------------------------------------------------------------

ONE = f"The proxy's ({ADDRESS}) implementation contract is found at {IMPL} and is successfully updated."
MANY = f'The proxy\'s ({ADDRESS}) implementation contracts are found at ["{IMPL}", "{ADDRESS}"] and they\'ve been successfully updated.'
PROXY = [
    (shown(Texts.PROXY_IN_PROGRESS), Outcome.PENDING),
    (shown(ONE), Outcome.VERIFIED),
    (shown(MANY), Outcome.VERIFIED),
    (error("NOTOK", Texts.PROXY_NOT_DETECTED), Outcome.FAILED),
    (shown(Texts.UNKNOWN_UID), Outcome.UNKNOWN_GUID),
]


@pytest.mark.parametrize("answer,outcome", PROXY, ids=["progress", "one", "many", "not-detected", "unknown"])
def test_checkproxyverification_answers(stub, answer, outcome):
    stub.answer(answer)
    assert make_client(stub).job_status(GUID, proxy=True).outcome == outcome


def test_proxy_of_an_unverified_contract_is_not_verified(stub):
    stub.answer(error(Recorded.BLOCKSCOUT_CONTRACT_NOT_FOUND))
    with pytest.raises(ContractNotVerified) as info:
        make_client(stub).verify_proxy(ADDRESS)
    assert info.value.answer.outcome == Outcome.NOT_VERIFIED
    assert info.value.reason == Recorded.BLOCKSCOUT_CONTRACT_NOT_FOUND
    assert len(stub.seen) == 1


def test_proxy_asked_again_too_soon_is_a_final_reason(stub):
    text = Recorded.BLOCKSCOUT_PROXY_TOO_SOON.format(ms=12000)
    stub.answer(error(text))
    with pytest.raises(VerificationRejected) as info:
        make_client(stub).verify_proxy(ADDRESS)
    assert info.value.reason == text and len(stub.seen) == 1


# -- reads -----------------------------------------------------------------------------------------


def test_getabi_of_an_unverified_contract(stub):
    stub.answer(error(Texts.NOT_VERIFIED))  # result null
    with pytest.raises(ContractNotVerified) as info:
        make_client(stub).get_abi(ADDRESS)
    assert info.value.reason == Texts.NOT_VERIFIED


def test_getsourcecode_of_an_unverified_contract_has_only_its_address(stub):
    stub.answer(shown([{"Address": ADDRESS.lower()}]))  # Blockscout leaves every other key out
    record = make_client(stub).contract_record(ADDRESS)
    assert not record.verified and record.source_code == "" and record.abi == []


# -- rate limits -----------------------------------------------------------------------------------


def test_too_many_requests_is_waited_out(stub):
    body = json.dumps(error(Recorded.BLOCKSCOUT_RATE_LIMIT))
    stub.answer(
        Http(429, body, {"Content-Type": "application/json"}), error(Recorded.BLOCKSCOUT_RATE_LIMIT), shown(Texts.PASS)
    )
    sleeps = Sleeps()
    answer = make_client(stub, sleep=sleeps).job_status(GUID)
    assert answer.outcome == Outcome.VERIFIED
    assert len(stub.seen) == 3 and len(sleeps) == 2
    assert classify("0", Recorded.BLOCKSCOUT_RATE_LIMIT, None).outcome == Outcome.RATE_LIMITED


# -- Blockscout's Pro API: `chain_id`, never `chainid` ----------------------------------------------


def pro_target(stub, api_key=None):
    return Target(
        ecosystem="ethereum",
        network="sepolia",
        url=stub.url,
        chain_id=11155111,
        api_key=api_key,
        name="blockscout",
        chain_id_param="chain_id",
    )


def test_pro_api_sends_chain_id_in_reads_and_submissions(stub):
    from ape_contract_verify.protocol.secrets import ApiKey

    stub.answer(shown(GUID), shown(Texts.PASS))
    client = pro_target(stub, api_key=ApiKey("proapi_k3y")).client(
        max_retries=0, timeout=(2.0, 2.0), sleep=Sleeps(), not_indexed_timeout=0
    )
    client.verify_source_code(single_file_request())
    client.job_status(GUID)
    post, get = stub.seen
    assert post.query == {"module": "contract", "action": "verifysourcecode", "chain_id": "11155111"}
    assert post.form["chain_id"] == "11155111" and "chainid" not in post.form and post.form["apikey"] == "proapi_k3y"
    assert get.query["chain_id"] == "11155111" and "chainid" not in get.query and get.query["apikey"] == "proapi_k3y"


def test_a_plain_blockscout_instance_gets_no_chain_parameter(stub):
    stub.answer(shown(Texts.PASS))
    target = Target(ecosystem="base", network="sepolia", url=stub.url, chain_id=84532, api_key=None, name="blockscout")
    target.client(max_retries=0, sleep=Sleeps()).job_status(GUID)
    assert "chainid" not in stub.seen[0].query and "chain_id" not in stub.seen[0].query


# -- Etherscan's free plan: an answer of its own, asked once ---------------------------------------


@pytest.mark.parametrize(
    "text", [Recorded.FREE_PLAN_UNSUPPORTED_CHAIN, Recorded.PRO_ENDPOINT], ids=["chain", "endpoint"]
)
def test_free_plan_refusal_is_refused_and_not_retried(stub, text):
    stub.answer(notok(text), notok(text))
    sleeps = Sleeps()
    client = make_client(stub, api_key="FREE", chain_id=56, sleep=sleeps)
    with pytest.raises(ExplorerRefused) as info:
        client.verify_source_code(single_file_request())
    assert info.value.answer.outcome == Outcome.REFUSED and info.value.answer.outcome.is_final
    assert info.value.reason == text and "FREE" not in str(info.value)
    assert len(stub.seen) == 1 and sleeps == []  # one request, no retry, no pause


def test_free_plan_refusal_of_a_read(stub):
    stub.answer(notok(Recorded.FREE_PLAN_UNSUPPORTED_CHAIN))
    with pytest.raises(ExplorerRefused):
        make_client(stub, chain_id=56).get_abi(ADDRESS)
    assert len(stub.seen) == 1


def test_free_plan_refusal_leaves_other_targets_alone(stub):
    """The refusal does not pause the limiter, so a target sharing nothing, or even the same
    limiter, is not held back."""
    from support.stub_server import StubExplorer

    with StubExplorer() as other:
        other.answer(ok(GUID))
        stub.answer(notok(Recorded.FREE_PLAN_UNSUPPORTED_CHAIN))
        refused = make_client(stub, chain_id=56)
        shared = make_client(other, limiter=refused.limiter)
        with pytest.raises(ExplorerRefused):
            refused.verify_source_code(single_file_request())
        assert refused.limiter.reserve() < 0.5  # not paused (a rate limit would hold it back)
        assert shared.verify_source_code(single_file_request()).guid == GUID


def test_free_plan_busy_is_a_rate_limit_waited_out(stub):
    stub.answer(notok(Recorded.FREE_PLAN_BUSY), ok(GUID))
    sleeps = Sleeps()
    receipt = make_client(stub, sleep=sleeps).verify_source_code(single_file_request())
    assert receipt.guid == GUID and len(sleeps) == 1 and len(stub.seen) == 2
