"""Every answer listed in docs/explorer-behaviour.md, replayed over real HTTP, becomes a typed outcome."""

import json

import pytest

from ape_contract_verify.client.etherscan import SourceRecord, SubmissionReceipt
from ape_contract_verify.exceptions import (
    AddressNotFound,
    BadEndpoint,
    ContractNotVerified,
    InvalidApiKey,
    VerificationRejected,
)
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome, classify
from ape_contract_verify.request import CodeFormat, Receipt
from support.client import ABI, Texts, single_file_request, source_item
from support.stub_server import ADDRESS, GUID, IMPL, Sleeps, make_client, notok, ok


def test_guid_constant_is_fifty_characters():
    assert len(GUID) == 50


# -- checkverifystatus -----------------------------------------------------------------------

CHECK_ANSWERS = [
    (notok(Texts.PENDING), Outcome.PENDING),  # status "0" that is not a failure
    (ok(Texts.PASS), Outcome.VERIFIED),
    (notok(Texts.FAIL), Outcome.FAILED),
    (notok(Texts.FAIL_BYTECODE_MISMATCH), Outcome.FAILED),
    (notok(Texts.ALREADY_VERIFIED), Outcome.ALREADY_VERIFIED),  # status "0" that is a success
    (notok(Texts.UNKNOWN_UID), Outcome.UNKNOWN_GUID),
    (notok(Texts.INVALID_API_KEY), Outcome.INVALID_KEY),
]


@pytest.mark.parametrize("answer,outcome", CHECK_ANSWERS, ids=[a["result"][:30] for a, _ in CHECK_ANSWERS])
def test_checkverifystatus_answers(stub, answer, outcome):
    stub.answer(answer)
    result = make_client(stub).job_status(GUID)
    assert isinstance(result, ExplorerAnswer)
    assert result.outcome == outcome
    assert result.reason == answer["result"]  # the explorer's own text, kept verbatim
    assert result.status == answer["status"]
    (seen,) = stub.seen
    assert seen.method == "GET" and seen.path == "/api"
    assert seen.query["module"] == "contract" and seen.query["action"] == "checkverifystatus"
    assert seen.query["guid"] == GUID


def test_status_zero_outcomes_split_into_success_pending_and_failure():
    assert classify("0", "NOTOK", Texts.ALREADY_VERIFIED).outcome.is_success
    assert not classify("0", "NOTOK", Texts.PENDING).outcome.is_final
    assert classify("0", "NOTOK", Texts.FAIL).outcome.is_final
    assert not classify("0", "NOTOK", Texts.FAIL).outcome.is_success


# -- proxies ------------------------------------------------------------------------------------

PROXY_FOUND = Texts.PROXY_FOUND.format(proxy=ADDRESS, implementation=IMPL)
PROXY_ANSWERS = [
    (notok(Texts.PROXY_IN_PROGRESS), Outcome.PENDING),
    (ok(PROXY_FOUND), Outcome.VERIFIED),
    (notok(Texts.PROXY_NOT_DETECTED), Outcome.FAILED),
    (notok(Texts.PROXY_EXPECTED_MISMATCH), Outcome.FAILED),
    (notok(Texts.PROXY_NO_DELEGATECALL), Outcome.FAILED),
]


@pytest.mark.parametrize("answer,outcome", PROXY_ANSWERS, ids=[a["result"][:30] for a, _ in PROXY_ANSWERS])
def test_checkproxyverification_answers(stub, answer, outcome):
    stub.answer(answer)
    result = make_client(stub).job_status(GUID, proxy=True)
    assert result.outcome == outcome
    assert result.reason == answer["result"]
    assert stub.seen[0].method == "GET" and stub.seen[0].query["action"] == "checkproxyverification"


def test_verify_proxy_posts_form_and_waits_through_in_progress(stub):
    stub.answer(ok(GUID), notok(Texts.PROXY_IN_PROGRESS), notok(Texts.PROXY_IN_PROGRESS), ok(PROXY_FOUND))
    client = make_client(stub)
    receipt = client.verify_proxy(ADDRESS, expected_implementation=IMPL)
    assert receipt == SubmissionReceipt(guid=GUID, address=ADDRESS, proxy=True, answer=receipt.answer)
    seen = stub.seen[0]
    assert seen.method == "POST"
    assert seen.form["action"] == "verifyproxycontract" and seen.form["module"] == "contract"
    assert seen.form["address"] == ADDRESS and seen.form["expectedimplementation"] == IMPL
    progress = []
    answer = client.wait(receipt, interval=0.01, timeout=5, on_progress=progress.append)
    assert answer.outcome == Outcome.VERIFIED
    assert [a.outcome for a in progress] == [Outcome.PENDING, Outcome.PENDING, Outcome.VERIFIED]
    assert stub.actions() == ["verifyproxycontract"] + ["checkproxyverification"] * 3


def test_verify_proxy_without_expected_implementation_omits_it(stub):
    stub.answer(ok(GUID))
    make_client(stub).verify_proxy(ADDRESS)
    assert "expectedimplementation" not in stub.seen[0].form


# -- verifysourcecode ----------------------------------------------------------------------------


def test_submission_is_a_post_form_with_every_parameter(stub):
    stub.answer(ok(GUID))
    request = single_file_request(via_ir=False, libraries={"MathLib": IMPL})
    receipt = make_client(stub, api_key="K3Y", chain_id=11155111).verify_source_code(request)
    assert receipt.guid == GUID and receipt.address == ADDRESS and not receipt.proxy
    assert isinstance(receipt, Receipt)
    (seen,) = stub.seen
    assert seen.method == "POST"
    assert seen.query == {"module": "contract", "action": "verifysourcecode", "chainid": "11155111"}
    form = seen.form
    assert form["apikey"] == "K3Y" and "apikey" not in seen.query
    assert form["module"] == "contract" and form["action"] == "verifysourcecode" and form["chainid"] == "11155111"
    assert form["contractaddress"] == ADDRESS
    assert form["sourceCode"] == request.source_code
    assert form["codeformat"] == "solidity-single-file"
    assert form["contractname"] == "Box"
    assert form["compilerversion"] == "v0.8.26+commit.8a97fa7a"
    assert form["optimizationUsed"] == "1" and form["runs"] == "200"
    assert form["evmversion"] == "cancun"
    assert form["viaIR"] == "0"
    assert form["licenseType"] == "3"
    # both spellings of the constructor arguments
    assert form["constructorArguements"] == form["constructorArguments"] == "00" * 32
    assert form["libraryname1"] == "MathLib" and form["libraryaddress1"] == IMPL


def test_vyper_json_submission(stub):
    stub.answer(ok(GUID))
    source = json.dumps({"language": "Vyper", "sources": {"contracts/Counter.vy": {"content": "# x"}}, "settings": {}})
    request = single_file_request(
        contract_name="contracts/Counter.vy:Counter",
        source_code=source,
        code_format=CodeFormat.VYPER_JSON,
        compiler_version="vyper:0.4.3",
        optimization_used=None,
        runs=None,
        evm_version=None,
        constructor_arguments="0x" + "ab" * 32,
    )
    make_client(stub).verify_source_code(request)
    form = stub.seen[0].form
    assert form["codeformat"] == "vyper-json" and form["compilerversion"] == "vyper:0.4.3"
    assert form["contractname"] == "contracts/Counter.vy:Counter"
    assert form["constructorArguements"] == "ab" * 32  # the 0x prefix is dropped, as explorers want


@pytest.mark.parametrize(
    "text", [Texts.SOURCE_ALREADY_VERIFIED, Texts.BLOCKSCOUT_ALREADY_VERIFIED], ids=["etherscan", "blockscout"]
)
def test_already_verified_submission_is_a_success(stub, text):
    stub.answer(notok(text))
    client = make_client(stub)
    receipt = client.verify_source_code(single_file_request())
    assert receipt.guid == "" and receipt.already_verified
    answer = client.wait(receipt, interval=0.01, timeout=1)
    assert answer.outcome == Outcome.ALREADY_VERIFIED and answer.outcome.is_success
    assert stub.actions() == ["verifysourcecode"]  # nothing to poll


REJECTIONS = [
    Texts.INVALID_CONSTRUCTOR_ARGUMENTS,
    Texts.LIBRARY_NOT_FOUND,
    Texts.UNABLE_TO_LOCATE_NAME,
]


@pytest.mark.parametrize("text", REJECTIONS, ids=["constructor", "library", "name"])
def test_submission_rejections_carry_the_explorer_reason(stub, text):
    stub.answer(notok(text))
    with pytest.raises(VerificationRejected) as info:
        make_client(stub).verify_source_code(single_file_request())
    assert text in str(info.value)
    assert info.value.answer.outcome == Outcome.FAILED
    assert len(stub.seen) == 1  # a final answer is not retried


@pytest.mark.parametrize("text", [Texts.INVALID_API_KEY, Texts.INVALID_API_KEY_ERR2, Texts.TOO_MANY_INVALID_KEYS])
def test_invalid_key_answers(stub, text):
    stub.answer(notok(text))
    with pytest.raises(InvalidApiKey) as info:
        make_client(stub, api_key="WRONG").verify_proxy(ADDRESS)
    assert info.value.answer.outcome == Outcome.INVALID_KEY
    assert "--api-key" in str(info.value)
    assert len(stub.seen) == 1  # retrying bad keys only earns a lock-out


@pytest.mark.parametrize(
    "text",
    [Texts.UNABLE_TO_LOCATE.format(address=ADDRESS), Texts.BLOCKSCOUT_NOT_A_CONTRACT],
    ids=["etherscan", "blockscout"],
)
def test_not_indexed_yet_is_retried_then_accepted(stub, text):
    stub.answer(notok(text), notok(text), ok(GUID))
    sleeps = Sleeps()
    client = make_client(stub, not_indexed_timeout=60, not_indexed_interval=7, sleep=sleeps)
    receipt = client.verify_source_code(single_file_request())
    assert receipt.guid == GUID
    assert sleeps == [7, 7]
    assert stub.actions() == ["verifysourcecode"] * 3


def test_not_indexed_gives_up_after_the_configured_while(stub):
    text = Texts.UNABLE_TO_LOCATE.format(address=ADDRESS)
    stub.default = lambda seen: notok(text)
    clock = [0.0]

    def sleep(seconds):
        clock[0] += seconds

    client = make_client(stub, not_indexed_timeout=20, not_indexed_interval=5, sleep=sleep, clock=lambda: clock[0])
    with pytest.raises(AddressNotFound) as info:
        client.verify_source_code(single_file_request())
    assert text in str(info.value)
    assert len(stub.seen) == 5  # t = 0, 5, 10, 15, 20


# -- rate limits ---------------------------------------------------------------------------------

RATE_LIMITS = [
    Texts.RATE_LIMIT,
    Texts.RATE_LIMIT_USE_KEY,
    Texts.RATE_LIMIT_PER_SEC.format(n=5),
    Texts.RATE_LIMIT_PER_SEC.format(n=3),
    Texts.RATE_LIMIT_PER_SEC.format(n=2),
]


@pytest.mark.parametrize("text", RATE_LIMITS)
def test_rate_limit_answers_are_retried_not_failures(stub, text):
    stub.answer(notok(text), notok(text), notok(Texts.PASS) | {"status": "1", "message": "OK"})
    sleeps = Sleeps()
    answer = make_client(stub, sleep=sleeps).job_status(GUID)
    assert answer.outcome == Outcome.VERIFIED
    assert len(stub.seen) == 3 and len(sleeps) == 2
    assert classify("0", "NOTOK", text).outcome == Outcome.RATE_LIMITED


# -- reads ---------------------------------------------------------------------------------------


def test_getabi_parses_the_result_string(stub):
    stub.answer(ok(json.dumps(ABI), message=Texts.OK_NO_KEY_MESSAGE))  # a success with an extra message
    assert make_client(stub).get_abi(ADDRESS) == ABI
    seen = stub.seen[0]
    assert seen.method == "GET" and seen.query["action"] == "getabi" and seen.query["address"] == ADDRESS


def test_getabi_unverified(stub):
    stub.answer(notok(Texts.NOT_VERIFIED))
    with pytest.raises(ContractNotVerified) as info:
        make_client(stub).get_abi(ADDRESS)
    assert Texts.NOT_VERIFIED in str(info.value)
    assert info.value.answer.outcome == Outcome.NOT_VERIFIED


def test_getsourcecode_unverified_is_status_one(stub):
    stub.answer(ok([source_item(SourceCode="", ABI=Texts.NOT_VERIFIED, LicenseType="Unknown", ContractName="")]))
    record = make_client(stub).contract_record(ADDRESS)
    assert not record.verified
    assert record.license == "Unknown" and record.proxy is False and record.files == {}


def test_getsourcecode_flat_text(stub):
    stub.answer(ok([source_item(Library="MathLib:e7f1725e7734ce288f8367e1bb143e90bb3f0512")]))
    record = make_client(stub).contract_record(ADDRESS)
    assert isinstance(record, SourceRecord) and record.verified
    assert record.source_format == "flat"
    assert record.files == {"Box.sol": "pragma solidity ^0.8.0; contract Box {}"}
    assert record.name == "Box" and record.compiler == "v0.8.26+commit.8a97fa7a"
    assert record.optimization_used is True and record.runs == 200
    assert record.constructor_arguments == "00" * 32 and record.evm_version == "Default"
    assert record.license == "MIT" and record.swarm_source == "ipfs://abc"
    assert record.abi == ABI
    assert record.settings == {
        "optimizer": {"enabled": True, "runs": 200},
        "libraries": {"": {"MathLib": "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512"}},
    }


def test_getsourcecode_blockscout_additional_sources(stub):
    item = source_item(
        FileName="src/Box.sol",
        AdditionalSources=[{"Filename": "src/Lib.sol", "SourceCode": "library L {}"}],
    )
    stub.answer(ok([item]))
    record = make_client(stub).contract_record(ADDRESS)
    assert record.source_format == "files"
    assert record.files == {"src/Box.sol": item["SourceCode"], "src/Lib.sol": "library L {}"}


def test_getsourcecode_json_of_files(stub):
    files = {"contracts/Box.sol": {"content": "contract Box {}"}, "contracts/Lib.sol": {"content": "library L {}"}}
    stub.answer(ok([source_item(SourceCode=json.dumps(files), EVMVersion="paris", OptimizationUsed="0")]))
    record = make_client(stub).contract_record(ADDRESS)
    assert record.source_format == "files"
    assert record.files == {"contracts/Box.sol": "contract Box {}", "contracts/Lib.sol": "library L {}"}
    assert record.settings == {"optimizer": {"enabled": False, "runs": 200}, "evmVersion": "paris"}


def test_getsourcecode_standard_json_in_double_braces(stub):
    std = {
        "language": "Solidity",
        "sources": {"src/Box.sol": {"content": "contract Box {}"}},
        "settings": {"optimizer": {"enabled": True, "runs": 999}, "evmVersion": "cancun", "viaIR": True},
    }
    stub.answer(ok([source_item(SourceCode="{" + json.dumps(std) + "}", Proxy="1", Implementation=IMPL)]))
    record = make_client(stub).contract_record(ADDRESS)
    assert record.source_format == "standard-json"
    assert record.files == {"src/Box.sol": "contract Box {}"}
    assert record.settings == std["settings"]  # the JSON input's own settings win
    assert record.proxy is True and record.implementation == IMPL


def test_getsourcecode_standard_json_of_odd_shapes_reads_what_it_can():
    """A source or settings that is no object (an explorer's bug) is read as empty, not a traceback."""
    odd = {"language": "Solidity", "sources": {"src/Box.sol": "contract Box {}"}, "settings": [1]}
    record = SourceRecord.from_result(ADDRESS, source_item(SourceCode="{" + json.dumps(odd) + "}"))
    assert record.source_format == "standard-json" and record.files == {"src/Box.sol": ""} and record.settings == {}


# -- Etherscan V2 ----------------------------------------------------------------------------------


def test_chainid_rides_in_the_query_of_reads(stub):
    stub.answer(ok(json.dumps(ABI)))
    make_client(stub, chain_id=8453, api_key="K").get_abi(ADDRESS)
    assert stub.seen[0].query["chainid"] == "8453" and stub.seen[0].query["apikey"] == "K"


@pytest.mark.parametrize("text", [Texts.MISSING_CHAINID, Texts.DEPRECATED_V1])
def test_v2_endpoint_errors_are_configuration_errors(stub, text):
    stub.answer(notok(text))
    with pytest.raises(BadEndpoint) as info:
        make_client(stub).job_status(GUID)
    assert text in str(info.value)
