"""derive/derive.py with the compile and the chain answered here (no solc, no node): library
addresses read at the link positions, constructor arguments split off the creation input, the
request built per format, the flat-file fallback, and the words of each refusal."""

import json
from types import SimpleNamespace

import pytest
from eth_abi.abi import encode
from eth_utils import to_checksum_address

from ape_contract_verify.derive import derive as derive_module
from ape_contract_verify.derive.artifacts import Artifact
from ape_contract_verify.derive.derive import PrecheckFailed, derive, license_of, with_full_project_input
from ape_contract_verify.evm.reads import Creation
from ape_contract_verify.request import CodeFormat

pytestmark = pytest.mark.unit

A = "0x" + "ab" * 20
LIB = "0x" + "cd" * 20
STALE = "0x" + "ee" * 20
TX = "0x" + "12" * 32
# Runtime: PUSH1 0x80, PUSH20 <library> at 3..23, DELEGATECALL.
RUNTIME_TEMPLATE = "6080" + "73" + "00" * 20 + "f4"
CREATION = "6080604052" + "00" * 4
LINKS = {"contracts/Maths.sol": {"Maths": [{"start": 3, "length": 20}]}}
TOKEN = "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\nimport './Maths.sol';\ncontract Token {}\n"
MATHS = "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\nlibrary Maths {}\n"
INPUT = {
    "language": "Solidity",
    "sources": {"contracts/Token.sol": {"content": TOKEN}, "contracts/Maths.sol": {"content": MATHS}},
    "settings": {"optimizer": {"enabled": True, "runs": 999}, "evmVersion": "cancun", "outputSelection": {}},
}


@pytest.fixture
def artifact(tmp_path):
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "Token.sol").write_text(TOKEN)
    abi = [{"type": "constructor", "inputs": [{"name": "supply", "type": "uint256"}]}]
    project = SimpleNamespace(path=tmp_path)
    settings = {"libraries": {"contracts/Maths.sol": {"Maths": STALE}}}
    return Artifact(
        "Token",
        "contracts/Token.sol",
        SimpleNamespace(abi=abi),
        project,
        "solidity",
        "0.8.26+commit.8a97fa7a",
        settings,
    )


def build_request(artifact, input_json, code_format, warnings=None):
    """The request `derive` builds of `input_json`, with no libraries, arguments or creation."""
    warnings = [] if warnings is None else warnings
    requests = derive_module._Requests(
        artifact, A, derive_module.OnChain(b""), None, None, code_format, None, None, {}, warnings
    )
    return requests.build(input_json)


class Reader:
    def __init__(self, runtime, creation=None):
        self.runtime, self.creation = runtime, creation

    def get_code(self, address):
        return self.runtime

    def find_creation(self, address):
        return self.creation

    def chain_id(self):
        return 1337


@pytest.fixture
def compiler(monkeypatch):
    """The compile derive asks for: the inputs it was given, and an output with a link reference."""
    compiled_inputs = []

    def compile(artifact, input_json, cache, warnings=None):
        compiled_inputs.append(json.loads(json.dumps(input_json)))
        return {
            "evm": {
                "bytecode": {"object": CREATION + RUNTIME_TEMPLATE, "linkReferences": {}},
                "deployedBytecode": {"object": RUNTIME_TEMPLATE, "linkReferences": LINKS},
            }
        }

    monkeypatch.setattr(derive_module, "_compile", compile)
    monkeypatch.setattr(derive_module, "standard_input", lambda artifact: json.loads(json.dumps(INPUT)))
    return compiled_inputs


def deployed(supply=1000):
    runtime = bytes.fromhex(RUNTIME_TEMPLATE.replace("00" * 20, LIB[2:]))
    args = encode(["uint256"], [supply])
    return Reader(runtime, Creation(TX, bytes.fromhex(CREATION + RUNTIME_TEMPLATE) + args)), args.hex()


def test_libraries_come_from_the_chain_and_a_stale_manifest_address_is_a_warning(artifact, compiler):
    reader, args = deployed()
    result = derive(artifact, A, chain_reader=reader, check=False)
    request = result.request
    assert request.libraries == {"Maths": to_checksum_address(LIB)}
    assert f"library Maths: the manifest records {STALE}, the chain uses {LIB}; using the chain's" in result.warnings
    # Compiled a second time linked as the submission is: through settings.libraries.
    assert "libraries" not in compiler[0]["settings"]
    assert compiler[1]["settings"]["libraries"]["contracts/Maths.sol"]["Maths"].lower() == LIB
    assert request.constructor_arguments == args
    assert request.creation_tx_hash == TX and result.match is None and result.creation_source == "transaction"


def test_the_standard_json_request_carries_the_manifest_s_settings(artifact, compiler):
    request = derive(artifact, A, chain_reader=deployed()[0], check=False).request
    assert request.code_format == CodeFormat.STANDARD_JSON
    assert (
        request.contract_name == "contracts/Token.sol:Token" and request.compiler_version == "v0.8.26+commit.8a97fa7a"
    )
    assert (request.optimization_used, request.runs, request.evm_version, request.via_ir) == (True, 999, "cancun", None)
    assert request.license_type == 3  # MIT, from the source
    sent = json.loads(request.source_code)
    assert sent["settings"]["outputSelection"] == {
        "*": {"*": ["abi", "evm.bytecode", "evm.deployedBytecode", "metadata"]}
    }
    assert set(sent["sources"]) == {"contracts/Token.sol", "contracts/Maths.sol"}


def test_no_code_at_the_address_names_the_address(artifact, compiler):
    with pytest.raises(PrecheckFailed) as none:
        derive(artifact, A, chain_reader=Reader(b""), check=False)
    assert none.value.field == "address" and "no contract code at" in str(none.value)


def test_given_constructor_arguments_that_differ_from_the_chain_s_are_refused(artifact, compiler):
    with pytest.raises(PrecheckFailed, match="drop --constructor-args to use the chain's"):
        derive(artifact, A, chain_reader=deployed(1000)[0], constructor_args="999", check=False)
    ok = derive(artifact, A, chain_reader=deployed(1000)[0], constructor_args="1000", check=False)
    assert ok.request.constructor_arguments == deployed(1000)[1]


def test_without_a_creation_and_with_constructor_inputs_the_way_out_is_named(artifact, compiler):
    reader = Reader(deployed()[0].runtime)
    with pytest.raises(PrecheckFailed, match="Pass them with --constructor-args"):
        derive(artifact, A, chain_reader=reader, check=False)


def test_an_explorer_record_is_used_and_said_to_stand_for_missing_traces(artifact, compiler):
    reader, args = deployed()
    record = SimpleNamespace(
        input=reader.creation.input, tx_hash=None, factory=True, source="etherscan's creation record", note=""
    )
    result = derive(artifact, A, chain_reader=Reader(reader.runtime), creation_record=lambda a: record, check=False)
    assert result.request.constructor_arguments == args
    assert "constructor arguments from etherscan's creation record: the node has no trace API" in result.warnings


def test_a_flat_file_is_built_from_the_sources_and_a_refused_one_falls_back_or_fails_when_strict(
    artifact, compiler, monkeypatch
):
    flat = derive(artifact, A, chain_reader=deployed()[0], code_format="flatten", check=False).request
    assert flat.code_format == CodeFormat.SINGLE_FILE and flat.contract_name == "Token"
    assert "library Maths {}" in flat.source_code and "import" not in flat.source_code
    disjoint = json.loads(json.dumps(INPUT))
    disjoint["sources"]["contracts/Maths.sol"]["content"] = "pragma solidity ^0.7.0;\nlibrary Maths {}\n"
    monkeypatch.setattr(derive_module, "standard_input", lambda artifact: json.loads(json.dumps(disjoint)))
    fallback = derive(artifact, A, chain_reader=deployed()[0], code_format="flatten", check=False)
    assert fallback.request.code_format == CodeFormat.STANDARD_JSON
    assert any(w.startswith("cannot flatten: pragma solidity ranges do not intersect") for w in fallback.warnings)
    assert any(w.endswith("(so standard-json was submitted instead)") for w in fallback.warnings)
    with pytest.raises(PrecheckFailed) as strict:
        derive(artifact, A, chain_reader=deployed()[0], code_format="flatten", strict_format=True, check=False)
    assert strict.value.field == "codeformat" and "cannot flatten" in strict.value.reason


def test_a_vyper_request_is_vyper_json_with_its_optimize_mode(tmp_path):
    vyper = Artifact("Vault", "contracts/Vault.vy", None, SimpleNamespace(path=tmp_path), "vyper", "0.4.3", {})
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "Vault.vy").write_text("# @license GPL-3.0\n# pragma version 0.4.3\n")
    input_json = {
        "language": "Vyper",
        "sources": {"contracts/Vault.vy": {"content": ""}},
        "settings": {"optimize": "none"},
    }
    request = build_request(vyper, input_json, "standard-json")
    assert request.code_format == CodeFormat.VYPER_JSON and request.compiler_version == "vyper:0.4.3"
    assert request.optimization_used is False and request.license_type == 5  # GPL-3.0 from `@license`
    assert json.loads(request.source_code)["settings"]["outputSelection"] == {
        "contracts/Vault.vy": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"]
    }


def test_settings_a_flat_file_cannot_express_are_warned_of(artifact):
    input_json = json.loads(json.dumps(INPUT))
    input_json["settings"]["metadata"] = {"bytecodeHash": "none"}
    warnings = []
    build_request(artifact, input_json, "flatten", warnings)
    assert warnings == ["settings.metadata cannot be expressed in a single-file submission"]


def test_the_licence_is_the_override_else_the_source_s_else_none(artifact, tmp_path):
    assert license_of(artifact) == 3
    assert license_of(artifact, "GPL-3.0") == 5
    missing = Artifact("X", "contracts/Gone.sol", None, SimpleNamespace(path=tmp_path), "solidity", "0.8.26", {})
    assert license_of(missing) == 1


def test_the_full_project_input_adds_the_group_s_sources_or_is_none(artifact, monkeypatch):
    request = build_request(artifact, json.loads(json.dumps(INPUT)), "standard-json")
    derivation = derive_module.Derivation(request, artifact)
    group = {"sources": {**INPUT["sources"], "contracts/Other.sol": {"content": "contract Other {}"}}}
    monkeypatch.setattr(derive_module, "group_input", lambda a: group)
    widened = with_full_project_input(derivation)
    assert set(json.loads(widened.source_code)["sources"]) == {
        "contracts/Token.sol",
        "contracts/Maths.sol",
        "contracts/Other.sol",
    }
    assert widened.address == request.address
    monkeypatch.setattr(derive_module, "group_input", lambda a: {"sources": INPUT["sources"]})
    assert with_full_project_input(derivation) is None
    monkeypatch.setattr(derive_module, "group_input", lambda a: None)
    assert with_full_project_input(derivation) is None


def test_a_library_recorded_at_its_own_address_is_a_libraries_option():
    """A deploy script run again on a new dev chain deploys its library at the address the last run
    gave `add_library`, so Ape compiled it with that entry: it is one of the settings to try, in
    deployment order with the others recorded."""
    own, other = "0x" + "11" * 20, "0x" + "22" * 20
    blocks = {own: 5, other: 3}
    reader = SimpleNamespace(find_creation=lambda addr: SimpleNamespace(block=blocks[addr]))
    recorded = {"contracts/MathLib.sol": {"MathLib": own}, "contracts/Other.sol": {"Other": other}}
    options = derive_module._library_options({}, recorded, own, reader)
    assert options == [
        {"contracts/Other.sol": {"Other": other}},  # deployed before it: the most likely set first
        {"contracts/Other.sol": {"Other": other}, "contracts/MathLib.sol": {"MathLib": own}},
    ]
    assert derive_module._library_options({}, {"contracts/MathLib.sol": {"MathLib": own}}, own, reader) == [
        {"contracts/MathLib.sol": {"MathLib": own}}
    ]
