"""protocol/sourcify.py: Sourcify API v2's rules, both ways: a request as the client's JSON body,
a submission's body as a request (the local explorer's face), and the error codes' outcomes."""

import json
import uuid

import pytest

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.protocol import sourcify
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.request import CodeFormat, VerificationRequest
from support.client import SOURCIFY_HTTP_STATUS

pytestmark = pytest.mark.unit

ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
TX = "0x" + "ab" * 32
SOLC = "0.8.26+commit.8a97fa7a"
STD_INPUT = {
    "language": "Solidity",
    "sources": {"src/Box.sol": {"content": "contract Box {}"}},
    "settings": {"optimizer": {"enabled": True, "runs": 200}},
}


def flat(**fields) -> VerificationRequest:
    base = dict(
        address=ADDRESS,
        contract_name="Box",
        source_code="contract Box {}",
        code_format=CodeFormat.SINGLE_FILE,
        compiler_version="v" + SOLC,
    )
    return VerificationRequest(**{**base, **fields})


def json_request(**fields) -> VerificationRequest:
    base = dict(
        contract_name="src/Box.sol:Box", source_code=json.dumps(STD_INPUT), code_format=CodeFormat.STANDARD_JSON
    )
    return flat(**{**base, **fields})


def refused(call, *args, **kwargs) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as info:
        call(*args, **kwargs)
    return info.value


# -- codes and matches -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (sourcify.ALREADY_VERIFIED, Outcome.ALREADY_VERIFIED),
        (sourcify.UNSUPPORTED_CHAIN, Outcome.UNSUPPORTED_CHAIN),
        (sourcify.TOO_MANY_REQUESTS, Outcome.RATE_LIMITED),
        (sourcify.DUPLICATE_VERIFICATION_REQUEST, Outcome.RATE_LIMITED),
        (sourcify.JOB_NOT_FOUND, Outcome.UNKNOWN_GUID),
        (sourcify.CONTRACT_NOT_DEPLOYED, Outcome.NOT_FOUND),
        (sourcify.INTERNAL_ERROR, Outcome.ERROR),
        (sourcify.NO_MATCH, Outcome.FAILED),
        ("a_code_lib_sourcify_adds_later", Outcome.FAILED),  # a job's reason it did not verify
        (None, Outcome.ERROR),
        ("", Outcome.ERROR),
    ],
)
def test_each_error_code_has_its_outcome(code, outcome):
    assert sourcify.outcome_for(code) is outcome


def test_request_level_errors_have_sourcify_s_http_status():
    assert SOURCIFY_HTTP_STATUS[sourcify.INVALID_PARAMETER] == 400
    assert SOURCIFY_HTTP_STATUS[sourcify.ALREADY_VERIFIED] == 409
    assert SOURCIFY_HTTP_STATUS[sourcify.TOO_MANY_REQUESTS] == 429
    assert SOURCIFY_HTTP_STATUS[sourcify.JOB_NOT_FOUND] == 404
    assert sourcify.NO_MATCH not in SOURCIFY_HTTP_STATUS  # a job's error rides in a 200


def test_error_body_has_sourcify_s_shape_with_a_fresh_error_id():
    one = sourcify.error_body(sourcify.JOB_NOT_FOUND, "no such job", testId="x")
    two = sourcify.error_body(sourcify.JOB_NOT_FOUND, "no such job")
    assert one["customCode"] == "job_not_found" and one["message"] == "no such job" and one["testId"] == "x"
    assert uuid.UUID(one["errorId"]) and one["errorId"] != two["errorId"]


def test_overall_match_is_the_better_of_creation_and_runtime():
    assert sourcify.overall_match("exact_match", "match") == "exact_match"
    assert sourcify.overall_match(None, "match") == "match"
    assert sourcify.overall_match("match", "exact_match") == "exact_match"
    assert sourcify.overall_match(None, None) is None
    assert sourcify.overall_match("match", "exact_match") == "exact_match"  # exact_match ranks above match
    assert sourcify.overall_match("match", None) == "match"
    assert sourcify.overall_match("match", "match") == "match"


# -- versions --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        ("v" + SOLC, SOLC),
        (SOLC, SOLC),
        ("V0.8.4-nightly.2021.1.1+commit.1234abcd", "0.8.4-nightly.2021.1.1+commit.1234abcd"),
    ],
)
def test_the_solidity_version_is_sent_long_without_v(given, sent):
    assert sourcify.sourcify_compiler_version(flat(compiler_version=given)) == sent


def test_a_vyper_request_needs_the_long_version_given_beside_it():
    vyper = flat(compiler_version="vyper:0.4.3", code_format=CodeFormat.VYPER_JSON)
    assert sourcify.is_vyper(vyper) and not sourcify.is_vyper(flat())
    assert sourcify.sourcify_compiler_version(vyper, "0.4.3+commit.bff19ea2") == "0.4.3+commit.bff19ea2"
    err = refused(sourcify.sourcify_compiler_version, vyper)
    assert err.param == "compilerVersion" and "'vyper:0.4.3' has no commit" in err.problem
    assert "vyper --version" in err.fix


@pytest.mark.parametrize(
    "version, code_format, param",
    [
        ("v0.8.26+commit.8a97fa7a", CodeFormat.VYPER_JSON, "compilerversion"),  # was sent as Vyper 0.8.26
        ("vyper:0.4.3", CodeFormat.STANDARD_JSON, "codeformat"),  # was sent as Vyper with a Solidity input
    ],
)
def test_a_version_of_the_other_compiler_is_refused_by_the_form_s_rule(version, code_format, param):
    request = flat(compiler_version=version, code_format=code_format)
    err = refused(sourcify.sourcify_compiler_version, request, "0.8.26+commit.8a97fa7a")
    assert err.param == param and ("vyper:0.4.3" in err.fix or "vyper-json" in err.fix)


@pytest.mark.parametrize("bad", ["0.8.26", "latest", "v0.8+commit.8a97fa7a", "0.8.26+commit.12345", ""])
def test_a_short_or_malformed_solidity_version_is_refused(bad):
    err = refused(sourcify.sourcify_compiler_version, flat(compiler_version=bad))
    assert err.param == "compilerVersion" and "is not a long compiler version" in err.problem
    assert "+commit.<hash>" in err.fix


# -- request -> body -------------------------------------------------------------------------------


def test_a_flat_request_becomes_a_one_source_input_with_its_settings():
    request = flat(
        optimization_used=True,
        runs=999,
        evm_version="paris",
        via_ir=False,
        libraries={"Z": "0x" + "11" * 20, "A": "0x" + "22" * 20},
        creation_tx_hash=TX,
    )
    body = sourcify.request_to_body(request)
    assert body["contractIdentifier"] == "Box.sol:Box"
    assert body["compilerVersion"] == SOLC
    assert body["creationTransactionHash"] == TX
    std = body["stdJsonInput"]
    assert std["language"] == "Solidity" and std["sources"] == {"Box.sol": {"content": "contract Box {}"}}
    settings = std["settings"]
    assert settings["optimizer"] == {"enabled": True, "runs": 999}
    assert settings["evmVersion"] == "paris" and settings["viaIR"] is False
    assert list(settings["libraries"]["Box.sol"]) == ["A", "Z"]  # sorted


def test_a_flat_request_leaves_out_what_it_does_not_know():
    body = sourcify.request_to_body(flat(evm_version="Default"))
    assert body["stdJsonInput"]["settings"] == {}
    assert "creationTransactionHash" not in body
    runs_default = sourcify.request_to_body(flat(optimization_used=False))["stdJsonInput"]["settings"]
    assert runs_default["optimizer"] == {"enabled": False, "runs": 200}


def test_an_empty_flat_source_is_refused():
    err = refused(sourcify.request_to_body, flat(source_code="  \n"))
    assert err.param == "sourceCode" and err.problem == "is empty"


def test_a_json_request_keeps_only_what_the_compiler_takes():
    extra = {**STD_INPUT, "allowPaths": ["/"], "basePath": "/x"}
    body = sourcify.request_to_body(json_request(source_code=json.dumps(extra)))
    assert set(body["stdJsonInput"]) == {"language", "sources", "settings"}
    assert body["stdJsonInput"]["sources"] == STD_INPUT["sources"]
    assert body["contractIdentifier"] == "src/Box.sol:Box"


def test_a_vyper_json_request_is_sent_as_vyper():
    source = json.dumps({"sources": {"c/V.vy": {"content": "# @version 0.4.3"}}})
    request = json_request(
        contract_name="c/V.vy:V", source_code=source, code_format=CodeFormat.VYPER_JSON, compiler_version="vyper:0.4.3"
    )
    body = sourcify.request_to_body(request, "0.4.3+commit.bff19ea2")
    assert body["stdJsonInput"]["language"] == "Vyper" and body["stdJsonInput"]["settings"] == {}
    assert body["compilerVersion"] == "0.4.3+commit.bff19ea2"


@pytest.mark.parametrize("name", ["Box", "src/Box.sol:", ":Box", ""])
def test_a_json_request_needs_path_and_name(name):
    err = refused(sourcify.request_to_body, json_request(contract_name=name))
    assert err.param == "contractIdentifier" and "is not <path>:<Name>" in err.problem


def test_a_json_request_with_bad_json_or_a_bad_tx_hash_is_refused():
    assert refused(sourcify.request_to_body, json_request(source_code="{not json")).param == "sourceCode"
    err = refused(sourcify.request_to_body, json_request(creation_tx_hash="0x1234"))
    assert err.param == "creationTransactionHash" and "'0x1234' is not a transaction hash" in err.problem


# -- body -> request (the face) --------------------------------------------------------------------


def body(**fields):
    return {"stdJsonInput": STD_INPUT, "compilerVersion": SOLC, "contractIdentifier": "src/Box.sol:Box", **fields}


def test_a_submission_becomes_a_standard_json_request():
    request = sourcify.body_to_request("31337", ADDRESS, body(creationTransactionHash=TX))
    assert request.address == ADDRESS and request.contract_name == "src/Box.sol:Box"
    assert request.code_format == CodeFormat.STANDARD_JSON
    assert request.compiler_version == "v" + SOLC
    assert request.creation_tx_hash == TX
    assert json.loads(request.source_code) == STD_INPUT
    assert request.constructor_arguments == ""  # Sourcify reads them from the creation transaction


def test_a_vyper_submission_carries_the_short_vyper_version():
    vyper_input = {"language": "vyper", "sources": {"V.vy": {"content": "x: uint256"}}, "outputSelection": {}}
    request = sourcify.body_to_request(
        1,
        ADDRESS,
        body(stdJsonInput=vyper_input, compilerVersion="v0.4.3+commit.bff19ea2", contractIdentifier="V.vy:V"),
    )
    assert request.code_format == CodeFormat.VYPER_JSON and request.compiler_version == "vyper:0.4.3"
    assert set(json.loads(request.source_code)) == {"language", "sources"}  # other keys dropped
    assert request.creation_tx_hash is None


@pytest.mark.parametrize(
    ("chain_id", "address", "payload", "param", "words"),
    [
        ("0", ADDRESS, body(), "chainId", "'0' is not a chain id"),
        ("main", ADDRESS, body(), "chainId", "'main' is not a chain id"),
        ("1", "0x1234", body(), "address", "'0x1234' is not an address"),
        ("1", ADDRESS, [], "body", "is JSON list, not an object"),
        ("1", ADDRESS, {"compilerVersion": SOLC, "contractIdentifier": "a:B"}, "stdJsonInput", "required property"),
        ("1", ADDRESS, body(stdJsonInput="{}"), "stdJsonInput", "must be a JSON object, not str"),
        ("1", ADDRESS, body(compilerVersion=None), "compilerVersion", "required property"),
        ("1", ADDRESS, body(compilerVersion=True), "compilerVersion", "must be a JSON string, not bool"),
        ("1", ADDRESS, body(compilerVersion="0.8.26"), "compilerVersion", "is not a long compiler version"),
        ("1", ADDRESS, body(compilerVersion="0.4.10+commit.12345678"), "compilerVersion", "older than v0.4.11"),
        ("1", ADDRESS, body(contractIdentifier="Box"), "contractIdentifier", "is not <path>:<Name>"),
        ("1", ADDRESS, body(contractIdentifier=7), "contractIdentifier", "must be a JSON string, not int"),
        ("1", ADDRESS, body(stdJsonInput={**STD_INPUT, "language": "Yul"}), "stdJsonInput.language", "'Yul'"),
        ("1", ADDRESS, body(stdJsonInput={"language": "Solidity", "sources": {}}), "stdJsonInput", '"sources"'),
        ("1", ADDRESS, body(creationTransactionHash="0xab"), "creationTransactionHash", "not a transaction hash"),
        ("1", ADDRESS, body(creationTransactionHash=5), "creationTransactionHash", "not a transaction hash"),
    ],
)
def test_a_bad_submission_is_refused_naming_the_field(chain_id, address, payload, param, words):
    err = refused(sourcify.body_to_request, chain_id, address, payload)
    assert err.param == param and words in err.problem, err
    assert err.fix  # always a way out


def test_chain_ids_and_tx_hashes_are_normalised():
    assert sourcify.validate_chain_id(" 0011155111 ") == "11155111"
    assert sourcify.validate_chain_id(5) == "5"
    assert refused(sourcify.validate_chain_id, "1" * 21).param == "chainId"
    assert refused(sourcify.validate_chain_id, None, "chain").param == "chain"
    assert sourcify.validate_tx_hash(" " + TX + " ") == TX
    assert refused(sourcify.validate_tx_hash, None).problem == "'' is not a transaction hash"


@pytest.mark.parametrize(
    "stored, served",
    [
        ("v0.8.26+commit.8a97fa7a", "0.8.26+commit.8a97fa7a"),
        ("v0.8.28-nightly.2024.9.2+commit.12345678", "0.8.28-nightly.2024.9.2+commit.12345678"),
        ("vyper:0.4.3", "0.4.3"),
        ("vyper:0.4.0rc6", "0.4.0rc6"),
        ("vyper:0.3.10+commit.9136169", "0.3.10+commit.9136169"),
        ("not a version", "not a version"),  # the form checks before storing; a lookup never fails on it
    ],
)
def test_the_lookup_serves_the_stored_version_as_sourcify_spells_it(stored, served):
    assert sourcify.sourcify_version(stored) == served
