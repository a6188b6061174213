"""protocol/inputs.py: the JSON formats' sourceCode, one parse for forms, Sourcify's rules and the
engine: what it takes (Etherscan's `{{…}}` too) and each refusal, naming sourceCode and the fix."""

from __future__ import annotations

import json

import pytest

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.protocol.inputs import JSON_FORMATS, parse_json_input, unwrap_json_source

pytestmark = pytest.mark.unit

SOLIDITY = {
    "language": "Solidity",
    "sources": {"src/Box.sol": {"content": "contract Box {}"}},
    "settings": {"optimizer": {"enabled": True, "runs": 200}},
    "remappings": ["kept/=as/sent/"],
}
VYPER = {"language": "Vyper", "sources": {"Box.vy": {"content": "# box"}}}


def refusal(text: str | None, code_format: str = "solidity-standard-json-input") -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        parse_json_input(text, code_format)
    assert caught.value.param == "sourceCode"
    return caught.value


def test_the_two_json_formats():
    assert JSON_FORMATS == ("solidity-standard-json-input", "vyper-json")


def test_a_standard_json_input_is_returned_whole():
    assert parse_json_input(json.dumps(SOLIDITY)) == SOLIDITY
    assert parse_json_input(json.dumps(VYPER), "vyper-json") == VYPER


def test_etherscans_double_braces_are_unwrapped_once():
    text = json.dumps(SOLIDITY)
    assert unwrap_json_source("{" + text + "}") == text
    assert unwrap_json_source("  {" + text + "}  ") == text
    assert unwrap_json_source(text) == text
    assert unwrap_json_source("contract A {}") == "contract A {}"
    assert parse_json_input("{" + text + "}") == SOLIDITY


def test_text_that_is_no_json_names_where():
    err = refusal('{"sources": ')
    assert "is not valid JSON (Expecting value at line 1 column 13)" in err.problem
    assert "solidity-standard-json-input" in err.problem and "as JSON text" in err.fix
    assert "is not valid JSON" in refusal(None).problem


@pytest.mark.parametrize(
    "data, problem",
    [
        ([1, 2], "is JSON list, not an object"),
        ("text", "is JSON str, not an object"),
        ({"language": "Solidity"}, 'has no non-empty "sources" object'),
        ({"sources": {}}, 'has no non-empty "sources" object'),
        ({"sources": ["a.sol"]}, 'has no non-empty "sources" object'),
        ({"sources": {"a.sol": {"urls": ["ipfs://x"]}}}, "sources['a.sol'] has only \"urls\""),
        ({"sources": {"a.sol": {"content": 1}}}, "sources['a.sol'] has no string \"content\""),
        ({"sources": {"a.sol": "contract A {}"}}, "sources['a.sol'] has no string \"content\""),
        ({"sources": {"a.sol": {"content": ""}}, "settings": []}, '"settings" is JSON list, not an object'),
    ],
)
def test_each_shape_the_compilers_refuse_is_named(data, problem):
    assert problem in refusal(json.dumps(data)).problem


def test_urls_are_refused_because_explorers_do_not_fetch_them():
    err = refusal(json.dumps({"sources": {"a.sol": {"urls": ["ipfs://x"]}}}))
    assert "explorers do not fetch urls" in err.fix


def test_the_language_must_be_the_formats():
    vyper_as_solidity = refusal(json.dumps(VYPER))
    assert vyper_as_solidity.problem == "\"language\" is 'Vyper' but codeformat is solidity-standard-json-input"
    assert vyper_as_solidity.fix == "use codeformat vyper-json"
    solidity_as_vyper = refusal(json.dumps(SOLIDITY), "vyper-json")
    assert solidity_as_vyper.fix == "use codeformat solidity-standard-json-input"
    yul = refusal(json.dumps({**SOLIDITY, "language": "Yul"}))
    assert yul.fix == 'set "language" to "Solidity"'
    assert parse_json_input(json.dumps({**SOLIDITY, "language": "solidity"}))["language"] == "solidity"
