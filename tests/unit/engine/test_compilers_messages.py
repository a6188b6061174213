"""engine/compilers.py: a compiler's errors as one line each, never a file it was not given."""

import pytest

from ape_contract_verify.engine.compilers import CompilerCrashed, CompilerFailed, one_line, raise_on_errors

SOURCE = "pragma solidity ^0.8.0;\ncontract A {\n    uint x\n}\n"
SENT = {"language": "Solidity", "sources": {"A.sol": {"content": SOURCE}}}


def error(message="Expected ';' but got '}'", kind="ParserError", file="A.sol", start=None, severity="error"):
    located = {"file": file} if start is None else {"file": file, "start": start}
    return {"severity": severity, "type": kind, "message": message, "sourceLocation": located}


def test_an_error_names_its_line_and_column_in_the_submitted_source():
    start = SOURCE.index("}")
    assert one_line(error(start=start), SENT) == "ParserError: Expected ';' but got '}' --> A.sol:4:1"


def test_vyper_s_place_is_read_from_its_formatted_message():
    vyper = {"type": "SyntaxException", "message": "invalid syntax", "formattedMessage": "line 7:3 invalid syntax"}
    vyper["sourceLocation"] = {"file": "a.vy"}
    assert one_line(vyper, {"sources": {}}) == "SyntaxException: invalid syntax --> a.vy:7:3"


def test_a_message_of_many_lines_is_one():
    assert "\n" not in one_line(error(message="first\nsecond", file=""), SENT)


def test_warnings_raise_nothing():
    raise_on_errors({"errors": [error(severity="warning")]}, SENT, "solc 0.8.26")
    raise_on_errors({}, SENT, "solc 0.8.26")


def test_errors_raise_the_first_three_and_count_the_rest():
    with pytest.raises(CompilerFailed) as caught:
        raise_on_errors({"errors": [error(message=f"e{i}") for i in range(5)]}, SENT, "solc 0.8.26")
    text = str(caught.value)
    assert text.startswith("solc 0.8.26 reported errors (and 2 more): ParserError: e0")
    assert "e2" in text and "e3" not in text
    assert not isinstance(caught.value, CompilerCrashed)


def test_a_file_the_submission_did_not_include_is_named_never_quoted():
    leaked = error(message="secret text of another file", file="/etc/other.sol")
    with pytest.raises(CompilerFailed) as caught:
        raise_on_errors({"errors": [leaked]}, SENT, "solc")
    assert "secret text" not in str(caught.value)
    assert "/etc/other.sol, which the submitted sources do not include" in str(caught.value)


@pytest.mark.parametrize(
    "crash", [error(kind="InternalCompilerError", message="boom"), error(message="Compiled contract not found.")]
)
def test_an_internal_error_is_a_crash_not_the_sources_fault(crash):
    with pytest.raises(CompilerCrashed):
        raise_on_errors({"errors": [crash]}, SENT, "solc")
