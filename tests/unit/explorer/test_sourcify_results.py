"""server/sourcify_results.py: an engine result as what the Sourcify face's job records and answers:
match levels, each failure kind's customCode, the bytecodes a no_match carries, plain texts read back."""

from __future__ import annotations

import json

import pytest

from ape_contract_verify.engine.verifier import FailureKind, VerificationResult
from ape_contract_verify.explorer import sourcify_results
from ape_contract_verify.protocol import sourcify as sfy

pytestmark = pytest.mark.unit


def failed(kind: FailureKind | None, reason: str = "", **fields) -> dict:
    result = VerificationResult(False, None, reason, failure=kind, **fields)
    return json.loads(sourcify_results.failure(result))["error"]


def test_details_keep_what_a_lookup_serves_and_drop_what_is_empty():
    result = VerificationResult(
        True, "full", "", recompiled_creation="6080", onchain_creation="", creation_tx="0x" + "aa" * 32, deployer=""
    )
    kept = sourcify_results.details(result)
    assert kept == {"recompiled_creation": "6080", "creation_tx": "0x" + "aa" * 32, "factory": False}


@pytest.mark.parametrize("match, level", [("full", sfy.EXACT_MATCH), ("partial", sfy.MATCH)])
def test_success_names_the_match_as_sourcify_does(match, level):
    answer = json.loads(sourcify_results.success(match, 1234.9))
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


def test_read_gives_back_what_was_recorded_or_an_internal_error_for_plain_text():
    recorded = sourcify_results.error(sfy.ALREADY_VERIFIED, "already")
    assert sourcify_results.read(recorded)["error"]["customCode"] == sfy.ALREADY_VERIFIED
    plain = sourcify_results.read("interrupted too often")["error"]
    assert (plain["customCode"], plain["message"]) == (sfy.INTERNAL_ERROR, "interrupted too often")
    assert sourcify_results.read(None)["error"]["message"] == "The job ended without an answer."
