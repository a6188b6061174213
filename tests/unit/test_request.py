"""request.py: the verification request's form for verifysourcecode (both spellings of the
constructor arguments, optional fields only when set, libraries numbered in name order)."""

import dataclasses

import pytest

from ape_contract_verify.request import CodeFormat, Receipt, VerificationRequest

pytestmark = pytest.mark.unit

ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"


def request(**changes) -> VerificationRequest:
    base = VerificationRequest(
        address=ADDRESS,
        contract_name="contracts/Token.sol:Token",
        source_code='{"language": "Solidity"}',
        code_format=CodeFormat.STANDARD_JSON,
        compiler_version="v0.8.26+commit.8a97fa7a",
    )
    return dataclasses.replace(base, **changes)


def test_code_formats_are_the_contract_api_s_words():
    assert [f.value for f in CodeFormat] == ["solidity-single-file", "solidity-standard-json-input", "vyper-json"]
    assert CodeFormat("vyper-json") is CodeFormat.VYPER_JSON
    # The plugin's spellings of Solidity's two (the config's, the API's), and nothing else.
    assert CodeFormat("flatten") is CodeFormat.SINGLE_FILE and CodeFormat("standard-json") is CodeFormat.STANDARD_JSON
    assert CodeFormat.for_solidity("flatten") is CodeFormat.SINGLE_FILE
    for bad in ("vyper-json", "single-file", 3, ["flatten"]):
        with pytest.raises(ValueError, match="give standard-json or flatten"):
            CodeFormat.for_solidity(bad)
    with pytest.raises(ValueError):
        CodeFormat("solidity-flat")


def test_bare_name_drops_the_path():
    assert request().bare_name == "Token"
    assert request(contract_name="Token").bare_name == "Token"
    assert request(contract_name="a:b/C.sol:C").bare_name == "C"


def test_a_minimal_form_has_the_required_fields_only():
    form = request().to_form()
    assert form == {
        "contractaddress": ADDRESS,
        "sourceCode": '{"language": "Solidity"}',
        "codeformat": "solidity-standard-json-input",
        "contractname": "contracts/Token.sol:Token",
        "compilerversion": "v0.8.26+commit.8a97fa7a",
        "constructorArguements": "",
        "constructorArguments": "",
    }
    assert "apikey" not in form and "module" not in form and "action" not in form


def test_optional_fields_are_written_when_set_and_false_is_not_unset():
    form = request(
        optimization_used=False,
        runs=200,
        evm_version="cancun",
        via_ir=True,
        constructor_arguments="00" * 31 + "2a",
        license_type=3,
    ).to_form()
    assert form["optimizationUsed"] == "0" and form["runs"] == "200" and form["evmversion"] == "cancun"
    assert form["viaIR"] == "1" and form["licenseType"] == "3"
    assert form["constructorArguements"] == form["constructorArguments"] == "00" * 31 + "2a"
    other = request(optimization_used=True, via_ir=False, runs=0).to_form()
    assert (other["optimizationUsed"], other["viaIR"], other["runs"]) == ("1", "0", "0")
    assert "licenseType" not in other and "evmversion" not in other


def test_empty_evm_version_is_left_out():
    assert "evmversion" not in request(evm_version="").to_form()


def test_libraries_are_numbered_in_name_order():
    form = request(libraries={"Zeta": "0x" + "22" * 20, "Alpha": "0x" + "11" * 20}).to_form()
    assert (form["libraryname1"], form["libraryaddress1"]) == ("Alpha", "0x" + "11" * 20)
    assert (form["libraryname2"], form["libraryaddress2"]) == ("Zeta", "0x" + "22" * 20)
    assert "libraryname3" not in form


def test_the_creation_transaction_is_not_an_etherscan_field():
    form = request(creation_tx_hash="0x" + "ab" * 32).to_form()
    assert "0x" + "ab" * 32 not in form.values()


def test_requests_do_not_share_their_libraries_and_receipts_are_frozen():
    first, second = request(), request()
    first.libraries["L"] = "0x" + "33" * 20
    assert second.libraries == {}
    receipt = Receipt(guid="abc", address=ADDRESS)
    assert receipt.proxy is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        receipt.guid = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    "given, text",
    [(CodeFormat.VYPER_JSON, "vyper-json"), ("solidity-standard-json-input", "solidity-standard-json-input"), ("", "")],
)
def test_format_text_is_the_api_s_spelling_whether_enum_or_text(given, text):
    request = VerificationRequest(ADDRESS, "A", "{}", given, "vyper:0.4.3")
    assert request.format_text == text
