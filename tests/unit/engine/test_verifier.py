"""engine/verifier.py with a fake chain and a fake compiler: what a submission must hold, each
failure's kind and words, and a passing result's fields. Real compiles and chains are tests/engine/'s."""

from __future__ import annotations

import json

import pytest
from eth_abi import encode

from ape_contract_verify.engine import compilers
from ape_contract_verify.engine.compilers import SOLIDITY_OUTPUTS, CompilerFailed, CompilerNotInstalled
from ape_contract_verify.engine.verifier import FailureKind, VerificationResult, Verifier
from ape_contract_verify.evm.reads import ChainError, Creation
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.request import CodeFormat, VerificationRequest

SOLC = "v0.8.26+commit.8a97fa7a"
ADDRESS = "0x" + "12" * 20
TX = "0x" + "ab" * 32
SOURCE = (
    "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\n"
    "// contract Commented {}\nlibrary Math {}\ncontract Token { constructor(uint256 s) {} }\n"
)
CREATION = bytes.fromhex("6080604052348015600f57600080fd5b50")
RUNTIME = bytes.fromhex("608060405260043610")
ABI = [{"type": "constructor", "inputs": [{"name": "supply", "type": "uint256"}]}]
ARGS = encode(["uint256"], [1000]).hex()


class Chain:
    """A chain reader holding one contract: its code and, unless told otherwise, its creation."""

    def __init__(self, code: bytes = RUNTIME, creation: Creation | None | str = "default", error: str = ""):
        self.code, self.error = code, error
        self.creation = (
            Creation(TX, CREATION + bytes.fromhex(ARGS), deployer="0x" + "99" * 20, block=7)
            if creation == "default"
            else creation
        )

    def get_code(self, address: str) -> bytes:
        if self.error:
            raise ChainError(self.error)
        return self.code if address.lower() == ADDRESS else b""

    def find_creation(self, address: str) -> Creation | None:
        return self.creation

    def creation_attempts(self, address: str) -> list[str]:
        return ["trace_filter", "a fork replay"]


class Solc:
    """compile_input answering one contract's code; counts its calls."""

    def __init__(
        self, creation: bytes = CREATION, runtime: bytes = RUNTIME, abi: list = ABI, error: Exception | None = None
    ):
        self.creation, self.runtime, self.abi, self.error = creation, runtime, abi, error
        self.inputs: list[dict] = []

    def __call__(self, version, input_json, *, timeout, cache):
        self.inputs.append(input_json)
        if self.error:
            raise self.error
        ((file, selected),) = input_json["settings"]["outputSelection"].items()
        ((name, _),) = selected.items()
        evm = {"bytecode": {"object": self.creation.hex()}, "deployedBytecode": {"object": self.runtime.hex()}}
        return {"contracts": {file: {name: {"abi": self.abi, "metadata": "{}", "evm": evm}}}}


@pytest.fixture(autouse=True)
def _own_caches(monkeypatch):
    """The suite's shared disk cache holds real compiles: a fake output must never land there."""
    monkeypatch.delenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", raising=False)


@pytest.fixture
def solc(monkeypatch):
    fake = Solc()
    monkeypatch.setattr(compilers, "compile_input", fake)
    return fake


def single(**fields) -> VerificationRequest:
    values = {
        "address": ADDRESS,
        "contract_name": "Token",
        "source_code": SOURCE,
        "code_format": CodeFormat.SINGLE_FILE,
        "compiler_version": SOLC,
        "optimization_used": True,
        "runs": 500,
        "constructor_arguments": ARGS,
    } | fields
    return VerificationRequest(**values)


def standard(sources: dict | None = None, **fields) -> VerificationRequest:
    input_json = {
        "language": "Solidity",
        "sources": sources or {"src/Token.sol": {"content": SOURCE}},
        "settings": {"optimizer": {"enabled": False, "runs": 200}, "evmVersion": "paris"},
    }
    json_fields = {
        "code_format": CodeFormat.STANDARD_JSON,
        "contract_name": "src/Token.sol:Token",
        "source_code": json.dumps(input_json),
    }
    return single(**(json_fields | fields))


def verify(request: VerificationRequest, chain: Chain | None = None, **options) -> VerificationResult:
    return Verifier(chain or Chain(), **options).verify(request)


def test_a_matching_submission_passes_with_every_field(solc):
    result = verify(single())
    assert (result.verified, result.match, result.failure, result.text) == (True, "full", None, Texts.PASS)
    assert result.constructor_arguments == ARGS and result.abi == ABI
    assert (result.optimization_used, result.runs, result.evm_version, result.via_ir) == (True, 500, "Default", False)
    assert result.license_type == 3  # MIT, from the SPDX line
    assert result.sources == {"Token.sol": SOURCE}
    assert (result.creation_tx, result.creation_block, result.deployer) == (TX, 7, "0x" + "99" * 20)
    assert result.onchain_runtime == RUNTIME.hex() and result.recompiled_creation == CREATION.hex()
    assert solc.inputs[0]["settings"]["outputSelection"] == {"Token.sol": {"Token": SOLIDITY_OUTPUTS}}
    assert solc.inputs[0]["settings"]["optimizer"] == {"enabled": True, "runs": 500}


def test_standard_json_finds_the_unit_and_keeps_its_settings(solc):
    result = verify(standard())
    assert result.verified and result.settings == {"optimizer": {"enabled": False, "runs": 200}, "evmVersion": "paris"}
    assert result.evm_version == "paris" and solc.inputs[0]["language"] == "Solidity"
    bare = verify(standard(contract_name="Token"))  # a bare name: the one unit declaring it
    assert bare.verified


@pytest.mark.parametrize("address", ["", "0x12", "12" * 20, "0x" + "zz" * 20])
def test_a_bad_address_is_invalid_input(solc, address):
    result = verify(single(address=address))
    assert result.failure == FailureKind.INVALID_INPUT and result.setting == "input"
    assert result.text == f"{Texts.FAIL}. contractaddress {address!r} is not a 0x-prefixed 20-byte address"
    assert solc.inputs == []


def test_no_code_is_etherscan_s_words(solc):
    result = verify(single(address="0x" + "34" * 20))
    assert result.failure == FailureKind.NO_CODE and result.setting == "address"
    assert result.text == Texts.UNABLE_TO_LOCATE.format(address="0x" + "34" * 20)


def test_a_chain_that_cannot_be_read(solc):
    result = verify(single(), Chain(error="connection refused"))
    assert result.failure == FailureKind.CHAIN and result.setting == "chain"
    assert result.reason == "The chain could not be read: connection refused"


@pytest.mark.parametrize("arguments", ["0xzz", "abc", "0x0", "not hex"])
def test_constructor_arguments_must_be_hex(solc, arguments):
    result = verify(single(constructor_arguments=arguments))
    assert result.failure == FailureKind.INVALID_INPUT
    assert result.reason == f"{Texts.INVALID_CONSTRUCTOR_ARGUMENTS} (constructorArguements must be ABI-encoded hex)"


def test_arguments_are_taken_with_0x_spaces_and_capitals(solc):
    spaced = "0x" + ARGS[:10].upper() + " \n" + ARGS[10:]
    assert verify(single(constructor_arguments=spaced)).verified
    assert verify(single(constructor_arguments="0X" + ARGS.upper())).verified  # 0X, as the code strips it


def test_other_arguments_are_named(solc):
    result = verify(single(constructor_arguments=encode(["uint256"], [7]).hex()))
    assert result.failure == FailureKind.CONSTRUCTOR_ARGUMENTS
    assert "supply (uint256): submitted 7, deployed 1000" in result.reason


@pytest.mark.parametrize("version", ["latest", "0.8", ""])
def test_a_bad_compiler_version_is_etherscan_s_words(solc, version):
    result = verify(single(compiler_version=version))
    assert result.failure == FailureKind.INVALID_INPUT
    assert result.reason.startswith(f"{Texts.INVALID_COMPILER_VERSION}: compilerversion")
    assert solc.inputs == []


def test_single_file_needs_solidity(solc):
    result = verify(single(compiler_version="vyper:0.4.3"))
    assert (
        result.failure == FailureKind.INVALID_INPUT
        and "solidity-single-file needs a Solidity compilerversion" in result.reason
    )


def test_a_vyper_json_submission_needs_a_vyper_version(solc):
    source = json.dumps({"sources": {"A.vy": {"content": "x: uint256"}}})
    request = single(
        code_format=CodeFormat.VYPER_JSON, contract_name="A.vy:A", source_code=source, compiler_version="latest"
    )
    result = verify(request)
    assert result.failure == FailureKind.INVALID_INPUT
    assert "compilerversion 'latest' is not a vyper compiler version; use the form vyper:0.4.3" in result.reason
    assert solc.inputs == []


@pytest.mark.parametrize(
    "code_format, language, version, named",
    [
        # Read as Vyper 0.8.26 and compiled (here, the fake's; for real, "not installed")
        (CodeFormat.VYPER_JSON, "Vyper", "v0.8.26+commit.8a97fa7a", "compilerversion: v0.8.26+commit.8a97fa7a reads"),
        # A Vyper compiler handed a Solidity input
        (CodeFormat.STANDARD_JSON, "Solidity", "vyper:0.4.3", "codeformat: solidity-standard-json-input cannot"),
    ],
)
def test_a_json_submission_naming_the_other_compiler_is_refused_by_the_form_s_rule(
    solc, code_format, language, version, named
):
    source = json.dumps({"language": language, "sources": {"A.x": {"content": "x: uint256"}}})
    request = single(code_format=code_format, contract_name="A.x:A", source_code=source, compiler_version=version)
    result = verify(request)
    assert result.failure == FailureKind.INVALID_INPUT
    assert result.reason.startswith(f"{Texts.INVALID_COMPILER_VERSION}: {named}")
    assert solc.inputs == []


def test_an_unknown_code_format(solc):
    result = verify(single(code_format="solidity-yul"))
    assert result.failure == FailureKind.INVALID_INPUT
    assert "codeformat 'solidity-yul' is not supported; use solidity-single-file" in result.reason


def test_a_name_the_source_does_not_declare_is_refused_without_a_compile(solc):
    result = verify(single(contract_name="Commented"))  # only in a comment
    assert result.failure == FailureKind.CONTRACT_NAME and result.setting == "contract name"
    assert result.reason == (
        "Unable to locate ContractName Commented, did you specify the correct Contract Name ? "
        "The source declares: Math, Token"
    )
    assert solc.inputs == []


def test_standard_json_names_that_do_not_point_at_one_unit(solc):
    missing = verify(standard(contract_name="src/Other.sol:Token"))
    assert "The input has no source unit 'src/Other.sol'; use path:Name with one of: src/Token.sol" in missing.reason
    twice = {"a/T.sol": {"content": SOURCE}, "b/T.sol": {"content": SOURCE}}
    ambiguous = verify(standard(twice, contract_name="Token"))
    assert "it is declared in a/T.sol, b/T.sol; use path/File.sol:Token" in ambiguous.reason
    nowhere = verify(standard(contract_name="Nope"))
    assert "no source declares it" in nowhere.reason
    assert {missing.failure, ambiguous.failure, nowhere.failure} == {FailureKind.CONTRACT_NAME}
    assert solc.inputs == []


def test_bad_json_input_names_the_parameter(solc):
    result = verify(single(code_format=CodeFormat.STANDARD_JSON, contract_name="A.sol:A", source_code="{not json"))
    assert result.failure == FailureKind.INVALID_INPUT and result.reason.startswith("sourceCode is not valid JSON")
    caught = verify(
        single(code_format=CodeFormat.STANDARD_JSON, contract_name="A.sol:A", source_code='{"sources": {}}')
    )
    assert caught.failure == FailureKind.INVALID_INPUT and 'has no non-empty "sources" object' in caught.reason
    wrapped = "{" + json.dumps({"sources": {"A.sol": {"content": "contract A {}"}}}) + "}"  # Etherscan's {{…}}
    read = verify(single(code_format=CodeFormat.STANDARD_JSON, contract_name="A.sol:A", source_code=wrapped))
    assert read.sources == {"A.sol": "contract A {}"}


def test_compiler_errors_map_to_etherscan_s_texts(monkeypatch):
    monkeypatch.setattr(compilers, "compile_input", Solc(error=CompilerFailed("solc reported errors: TypeError: x")))
    failed = verify(single())
    assert failed.failure == FailureKind.COMPILER
    assert failed.reason == Texts.COMPILATION_ERROR.format(
        language="Solidity", message="solc reported errors: TypeError: x"
    )
    monkeypatch.setattr(
        compilers, "compile_input", Solc(error=CompilerNotInstalled("Compiler v0.8.26 is not installed"))
    )
    missing = verify(single())
    assert missing.failure == FailureKind.COMPILER
    assert missing.reason == f"{Texts.INVALID_COMPILER_VERSION}: Compiler v0.8.26 is not installed"


def test_an_interface_has_no_bytecode(monkeypatch):
    monkeypatch.setattr(compilers, "compile_input", Solc(creation=b"", runtime=b""))
    result = verify(single())
    assert (
        result.failure == FailureKind.CONTRACT_NAME
        and "Token has no bytecode (an interface or abstract contract)" in result.reason
    )


def test_other_code_is_a_bytecode_mismatch_without_a_diagnosis_when_none_is_allowed(solc):
    result = verify(single(), Chain(code=RUNTIME[:-1] + b"\x11"), diagnose_compiles=0)
    assert result.failure == FailureKind.BYTECODE and result.setting == "source"
    assert result.offset == len(RUNTIME) - 1
    assert (
        result.reason.startswith(Texts.BYTECODE_MISMATCH)
        and f"at byte {len(RUNTIME) - 1} of the runtime code" in result.reason
    )
    assert len(solc.inputs) == 1  # no compile beyond the submission's


def test_without_its_creation_an_explorer_fails_and_the_pre_check_compares_the_runtime(solc):
    result = verify(single(), Chain(creation=None))
    assert result.failure == FailureKind.NO_CREATION and result.setting == "creation transaction"
    assert f"Unable to find the transaction that created {ADDRESS}" in result.reason
    assert "then tried trace_filter, a fork replay" in result.reason
    runtime_only = verify(single(), Chain(creation=None), require_creation=False)
    assert runtime_only.verified and runtime_only.creation_tx is None and runtime_only.constructor_arguments == ARGS


def test_a_creation_transaction_that_did_not_create_it(solc):
    other = "0x" + "cd" * 32
    result = verify(single(creation_tx_hash=other))
    assert result.failure == FailureKind.NO_CREATION
    assert (
        f"creationTransactionHash {other} did not create {ADDRESS}: the transaction that created it is {TX}"
        in result.reason
    )
    assert verify(single(creation_tx_hash=TX.upper().replace("0X", "0x"))).verified


def test_arguments_from_the_creation_must_be_the_constructor_s_encoding(monkeypatch):
    sourcify = single(constructor_arguments="")
    monkeypatch.setattr(compilers, "compile_input", Solc())
    taken = Verifier(Chain()).verify(sourcify, args_from_creation=True)
    assert taken.verified and taken.constructor_arguments == ARGS

    monkeypatch.setattr(compilers, "compile_input", Solc(abi=[]))  # a constructor without inputs
    extra = Verifier(Chain()).verify(sourcify, args_from_creation=True)
    assert extra.failure == FailureKind.CONSTRUCTOR_ARGUMENTS
    assert (
        f"The constructor takes no arguments, but the creation transaction {TX} carries 32 bytes after the code"
        in extra.reason
    )

    odd = Creation(TX, CREATION + bytes.fromhex(ARGS) + b"\x01")
    monkeypatch.setattr(compilers, "compile_input", Solc())
    garbled = Verifier(Chain(creation=odd)).verify(sourcify, args_from_creation=True)
    assert garbled.failure == FailureKind.CONSTRUCTOR_ARGUMENTS
    assert "not an ABI encoding of constructor(uint256)" in garbled.reason


def test_a_result_s_text_by_outcome():
    assert VerificationResult(True, "full", "").text == Texts.PASS
    assert VerificationResult(False, None, "why", failure=FailureKind.BYTECODE).text == f"{Texts.FAIL}. why"
    no_code = VerificationResult(False, None, "", address=ADDRESS, failure=FailureKind.NO_CODE)
    assert no_code.text == Texts.UNABLE_TO_LOCATE.format(address=ADDRESS)
