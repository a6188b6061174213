"""Helpers for the verification-engine tests: real compiles and the requests built from them
(the anvil they deploy on is support.service's `Anvil`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ape_contract_verify.engine.compilers import CompileCache, compile_input, single_file_input, with_output_selection
from ape_contract_verify.request import CodeFormat, VerificationRequest
from support.service import encode  # noqa: F401  (the engine tests take it from here too)

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = Path(__file__).resolve().parents[1] / "contracts_engine"
SOLC = "v0.8.26+commit.8a97fa7a"


def source(name: str) -> str:
    return (CONTRACTS / name).read_text()


def standard_input(files: dict[str, str], **settings: Any) -> dict:
    """Standard-json input with the given {source unit name: file in contracts_engine}."""
    return {
        "language": "Solidity",
        "sources": {unit: {"content": source(file)} for unit, file in files.items()},
        "settings": {"optimizer": {"enabled": True, "runs": 200}, **settings},
    }


def compiled(cache: CompileCache, version: str, input_json: dict, file: str, name: str) -> dict:
    """The contract's output through the same selection (and cache) the verifier uses."""
    output = compile_input(version, with_output_selection(input_json, file, name), cache=cache)
    return output["contracts"][file][name]


def single_file_compiled(cache: CompileCache, version: str, text: str, name: str, **settings: Any) -> dict:
    input_json = single_file_input(text, file_name=f"{name}.sol", **settings)
    return compiled(cache, version, input_json, f"{name}.sol", name)


def json_request(
    address: str, input_json: dict, contract: str, args: bytes = b"", version: str = SOLC, **extra: Any
) -> VerificationRequest:
    vyper = str(input_json.get("language", "")).lower() == "vyper"
    return VerificationRequest(
        address=address,
        contract_name=contract,
        source_code=json.dumps(input_json),
        code_format=CodeFormat.VYPER_JSON if vyper else CodeFormat.STANDARD_JSON,
        compiler_version=version,
        constructor_arguments=args.hex(),
        **extra,
    )


def single_request(
    address: str, text: str, name: str, args: bytes = b"", version: str = SOLC, **extra: Any
) -> VerificationRequest:
    return VerificationRequest(
        address=address,
        contract_name=name,
        source_code=text,
        code_format=CodeFormat.SINGLE_FILE,
        compiler_version=version,
        constructor_arguments=args.hex(),
        **extra,
    )


def bytecode_of(contract: dict) -> str:
    return contract["evm"]["bytecode"]["object"]


def solc_version_of(label: str) -> str:
    """The installed executable's full version for X.Y.Z (so tests do not hard-code commits)."""
    import solcx

    from ape_contract_verify.engine.compilers import printed_version

    return printed_version([str(solcx.install.get_executable(label))], "solidity").long
