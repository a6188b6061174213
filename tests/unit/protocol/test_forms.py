"""Every rule of issue 3 point 6 is checked before anything is sent: the error names the
parameter and the fix, and the server hears nothing."""

import json

import pytest

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.protocol import forms
from ape_contract_verify.protocol.forms import validate_verify_form
from ape_contract_verify.request import CodeFormat
from support.client import single_file_request
from support.stub_server import ADDRESS, GUID, IMPL, make_client, ok

BAD_ADDRESSES = ["", "0x123", "5FbDB2315678afecb367f032d93F642f64180aa3", "0x" + "g" * 40, ADDRESS + "00", " "]


def assert_rejected(stub, call, param: str, *words: str):
    with pytest.raises(InvalidRequest) as info:
        call()
    err = info.value
    assert err.param == param
    message = str(err)
    assert message.startswith(f"{param}: ") and "Fix: " in message
    for word in words:
        assert word in message
    assert stub.seen == []  # nothing reached the server
    return err


@pytest.mark.parametrize("address", BAD_ADDRESSES)
def test_addresses_everywhere(stub, address):
    client = make_client(stub)
    assert_rejected(stub, lambda: client.get_abi(address), "address", "40 hex digits")
    assert_rejected(stub, lambda: client.contract_record(address), "address", "40 hex digits")
    assert_rejected(stub, lambda: client.verify_proxy(address), "address")
    assert_rejected(stub, lambda: client.verify_proxy(ADDRESS, address.strip() or "0x1"), "expectedimplementation")
    assert_rejected(
        stub, lambda: client.verify_source_code(single_file_request(address=address)), "contractaddress", "40 hex"
    )


@pytest.mark.parametrize(
    "guid", ["", "abc", GUID[:-1], GUID + "x", GUID[:25] + " " + GUID[26:], "!" * 50, GUID[:49] + "²", GUID[:49] + "é"]
)
def test_guid_is_fifty_ascii_alphanumerics(stub, guid):
    client = make_client(stub)
    assert_rejected(stub, lambda: client.job_status(guid), "guid", "50")
    assert_rejected(stub, lambda: client.job_status(guid, proxy=True), "guid", "50")


@pytest.mark.parametrize(
    "version,words",
    [
        ("0.8.26", ["v<major>.<minor>.<patch>+commit.<hash>"]),
        ("v0.8.26", ["v<major>.<minor>.<patch>+commit.<hash>"]),
        ("v0.8.26+commit.xyz", ["not a compiler version"]),
        ("v0.4.10+commit.9e8cc01b", ["older than v0.4.11"]),
        ("v0.3.6+commit.3fc68da5", ["older than v0.4.11"]),
        ("vyper0.4.3", ["vyper:<version>"]),
        ("", ["not a compiler version"]),
    ],
)
def test_compiler_version(stub, version, words):
    client = make_client(stub)
    request = single_file_request(compiler_version=version)
    assert_rejected(stub, lambda: client.verify_source_code(request), "compilerversion", *words)


def test_compiler_versions_accepted(stub):
    stub.default = lambda seen: ok(GUID)
    client = make_client(stub)
    for version in ("v0.4.11+commit.68ef5810", "v0.8.26+commit.8a97fa7a", "v0.8.28-nightly.2024.9.2+commit.12345678"):
        client.verify_source_code(single_file_request(compiler_version=version))
    vyper_input = json.dumps({"language": "Vyper", "sources": {"a.vy": {"content": "# a"}}})
    std = single_file_request(
        compiler_version="vyper:0.4.3",
        code_format=CodeFormat.VYPER_JSON,
        contract_name="a.vy:A",
        source_code=vyper_input,
    )
    client.verify_source_code(std)
    assert len(stub.seen) == 4


def test_compiler_must_match_the_format(stub):
    client = make_client(stub)
    vyper_as_solidity = single_file_request(compiler_version="vyper:0.4.3")
    assert_rejected(stub, lambda: client.verify_source_code(vyper_as_solidity), "codeformat", "vyper-json")
    solc_as_vyper = single_file_request(code_format=CodeFormat.VYPER_JSON, contract_name="a.vy:A")
    assert_rejected(stub, lambda: client.verify_source_code(solc_as_vyper), "compilerversion", "vyper:<version>")


@pytest.mark.parametrize(
    "version, code_format, param, problem",
    [
        # No `vyper:`: solc's spelling (the Sourcify client and the engine read it as Vyper 0.8.26)
        ("v0.8.26+commit.8a97fa7a", "vyper-json", "compilerversion", "reads as a Solidity version"),
        ("v0.8.26", "vyper-json", "compilerversion", "reads as a Solidity version"),
        # was "older than v0.4.11, compile with solc 0.4.11 or newer": advice for the other compiler
        ("v0.4.3+commit.bff19ea2", "vyper-json", "compilerversion", "reads as a Solidity version"),
        ("0.4.0rc6", "vyper-json", "compilerversion", "is not a Vyper compiler version"),
        ("vyper:0.4.3", "solidity-standard-json-input", "codeformat", "cannot carry a Vyper compiler"),
        ("vyper:0.4.3", "solidity-single-file", "codeformat", "cannot carry a Vyper compiler"),
    ],
)
def test_a_version_of_the_other_compiler_is_refused_naming_the_form_to_use(version, code_format, param, problem):
    with pytest.raises(InvalidRequest) as caught:
        forms.validate_compiler_version(version, code_format)
    assert caught.value.param == param and problem in caught.value.problem
    assert ("vyper:0.4.3" if param == "compilerversion" else "codeformat vyper-json") in caught.value.fix


def test_codeformat_is_one_of_three(stub):
    client = make_client(stub)
    request = single_file_request(code_format="solidity-flat")
    err = assert_rejected(stub, lambda: client.verify_source_code(request), "codeformat", "solidity-flat")
    assert "solidity-single-file, solidity-standard-json-input, vyper-json" in err.fix


@pytest.mark.parametrize("value", [2, "yes", -1, "true"])
def test_optimization_used_is_0_or_1(stub, value):
    client = make_client(stub)
    request = single_file_request(optimization_used=value)
    assert_rejected(stub, lambda: client.verify_source_code(request), "optimizationUsed", "0 or 1")


@pytest.mark.parametrize("value", [-1, "200.5", "many", True, "²", "٢٠٠", 2**32])
def test_runs_is_a_uint32(stub, value):
    client = make_client(stub)
    request = single_file_request(runs=value)
    assert_rejected(stub, lambda: client.verify_source_code(request), "runs", "whole number from 0 to 4294967295")


@pytest.mark.parametrize("value", [0, 2**32 - 1])
def test_runs_bounds_are_fine(value):
    assert validate_verify_form(single_file_request(runs=value).to_form())["runs"] == str(value)


@pytest.mark.parametrize("value", ["osaka2", "frontier", "Cancun!"])
def test_evm_version_is_blank_or_known(stub, value):
    client = make_client(stub)
    request = single_file_request(evm_version=value)
    err = assert_rejected(stub, lambda: client.verify_source_code(request), "evmversion", value)
    assert "prague" in err.fix and "istanbul" in err.fix


@pytest.mark.parametrize(
    "value",
    [
        "",
        "homestead",
        "tangerineWhistle",
        "spuriousDragon",
        "byzantium",
        "constantinople",
        "petersburg",
        "istanbul",
        "berlin",
        "london",
        "paris",
        "shanghai",
        "cancun",
        "prague",
        "osaka",
    ],
)
def test_evm_versions_accepted(value):
    form = single_file_request(evm_version=None).to_form() | {"evmversion": value}
    assert validate_verify_form(form)["evmversion"] == value


@pytest.mark.parametrize("value", [0, 15, "WTFPL", "99"])
def test_license_type(stub, value):
    client = make_client(stub)
    request = single_file_request(license_type=value)
    assert_rejected(stub, lambda: client.verify_source_code(request), "licenseType")


@pytest.mark.parametrize("value,code", [(1, "1"), (14, "14"), ("MIT", "3"), ("Apache-2.0", "12"), ("BUSL-1.1", "14")])
def test_license_spdx_maps_to_code(stub, value, code):
    stub.answer(ok(GUID))
    make_client(stub).verify_source_code(single_file_request(license_type=value))
    assert stub.seen[0].form["licenseType"] == code


def test_at_most_ten_library_pairs(stub):
    libraries = {f"Lib{i}": "0x" + f"{i:040x}" for i in range(11)}
    client = make_client(stub)
    request = single_file_request(libraries=libraries)
    assert_rejected(stub, lambda: client.verify_source_code(request), "libraryname11", "at most 10")


@pytest.mark.parametrize("libraries, param", [({"": IMPL}, "libraryname1"), ({"MathLib": ""}, "libraryaddress1")])
def test_library_pairs_need_both_members(stub, libraries, param):
    client = make_client(stub)
    request = single_file_request(libraries=libraries)
    assert_rejected(stub, lambda: client.verify_source_code(request), param, "both")


def test_library_rules_on_a_raw_form():
    form = single_file_request().to_form()
    with pytest.raises(InvalidRequest) as info:
        validate_verify_form(form | {"libraryname1": "L"})
    assert info.value.param == "libraryaddress1"
    with pytest.raises(InvalidRequest) as info:
        validate_verify_form(form | {"libraryaddress2": IMPL})
    assert info.value.param == "libraryname2"
    with pytest.raises(InvalidRequest) as info:
        validate_verify_form(form | {"libraryname11": "L", "libraryaddress11": IMPL})
    assert "at most 10" in str(info.value)
    with pytest.raises(InvalidRequest) as info:
        validate_verify_form(form | {"libraryname1": "L", "libraryaddress1": "0x12"})
    assert info.value.param == "libraryaddress1"
    ten = {f"libraryname{i}": f"L{i}" for i in range(1, 11)} | {f"libraryaddress{i}": IMPL for i in range(1, 11)}
    assert len([k for k in validate_verify_form(form | ten) if k.startswith("libraryname")]) == 10


def test_contract_name_needs_a_source_unit_for_json_formats(stub):
    client = make_client(stub)
    request = single_file_request(code_format=CodeFormat.STANDARD_JSON, source_code="{}")
    assert_rejected(stub, lambda: client.verify_source_code(request), "contractname", "<path>:<Name>")


def test_constructor_arguments_are_hex(stub):
    client = make_client(stub)
    request = single_file_request(constructor_arguments="0xzz")
    assert_rejected(stub, lambda: client.verify_source_code(request), "constructorArguements", "hex")
