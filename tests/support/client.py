"""Requests and explorer records shared by the client tests (test_client_*.py)."""

import json

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
