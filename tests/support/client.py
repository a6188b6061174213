"""Requests, explorer records and explorer answers shared by the client tests (test_client_*.py)."""

import json

from ape_contract_verify.protocol import answers, sourcify
from ape_contract_verify.request import CodeFormat, VerificationRequest
from support.stub_server import ADDRESS

ABI = [
    {"type": "function", "name": "retrieve", "inputs": [], "outputs": [{"type": "uint256"}], "stateMutability": "view"}
]


def single_file_request(**overrides) -> VerificationRequest:
    fields = dict(
        address=ADDRESS,
        contract_name="Box",
        source_code="// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\ncontract Box {}\n",
        code_format=CodeFormat.SINGLE_FILE,
        compiler_version="v0.8.26+commit.8a97fa7a",
        optimization_used=True,
        runs=200,
        evm_version="cancun",
        constructor_arguments="00" * 32,
        license_type=3,
    )
    fields.update(overrides)
    return VerificationRequest(**fields)


def source_item(**overrides):
    item = {
        "SourceCode": "pragma solidity ^0.8.0; contract Box {}",
        "ABI": json.dumps(ABI),
        "ContractName": "Box",
        "CompilerVersion": "v0.8.26+commit.8a97fa7a",
        "OptimizationUsed": "1",
        "Runs": "200",
        "ConstructorArguments": "00" * 32,
        "EVMVersion": "Default",
        "Library": "",
        "LicenseType": "MIT",
        "Proxy": "0",
        "Implementation": "",
        "SwarmSource": "ipfs://abc",
    }
    item.update(overrides)
    return item


class Texts(answers.Texts):
    """The texts the package answers with, and more that real explorers answer with that only the
    client's tests feed it (the client matches them by `classify`'s rules)."""

    FAIL_BYTECODE_MISMATCH = f"Fail - Unable to verify. {answers.Texts.BYTECODE_MISMATCH}"
    # Blockscout's Etherscan-compatible API (apps/block_scout_web/.../api/rpc/contract_controller.ex).
    # Its errors are {"status": "0", "message": <text>, "result": <text or null>}: the text may be
    # only in `message`.
    BLOCKSCOUT_ALREADY_VERIFIED = "Smart-contract already verified."
    BLOCKSCOUT_NOT_A_CONTRACT = "The address is not a smart contract"  # Jan-Sep 2025 (#11504)
    UNABLE_TO_LOCATE_NAME = "Unable to locate ContractName , did you specify the correct Contract Name ?"
    INVALID_API_KEY_ERR2 = "Invalid API Key (#err2)|10"
    TOO_MANY_INVALID_KEYS = "Too many invalid api key attempts, please try again later"
    RATE_LIMIT = "Max rate limit reached"
    RATE_LIMIT_USE_KEY = "Max rate limit reached, please use API Key for higher rate limit"
    RATE_LIMIT_PER_SEC = "Max calls per sec rate limit reached ({n}/sec)"
    OK_NO_KEY_MESSAGE = "OK-Missing/Invalid API Key, rate limit of 1/5sec applied"
    DEPRECATED_V1 = "You are using a deprecated V1 endpoint, switch to Etherscan API V2."


# The HTTP status Sourcify answers each request-level error with (a job's errors ride in a 200).
SOURCIFY_HTTP_STATUS = {
    sourcify.INVALID_PARAMETER: 400,
    sourcify.UNSUPPORTED_CHAIN: 400,
    sourcify.ALREADY_VERIFIED: 409,
    sourcify.TOO_MANY_REQUESTS: 429,
    sourcify.DUPLICATE_VERIFICATION_REQUEST: 429,
    sourcify.JOB_NOT_FOUND: 404,
    sourcify.INTERNAL_ERROR: 500,
}
