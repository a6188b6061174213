"""derive/flatten.py's `missing_imports`: what an input's sources import and lack, found as solc
resolves imports (relative to the importer, then the remappings), read through the reader given,
transitively; nothing read twice, nothing invented."""

import pytest

from ape_contract_verify.derive.flatten import missing_imports

pytestmark = pytest.mark.unit

REMAPPINGS = ["lib=contracts/.cache/lib/1.0.0", "strings=contracts/.cache/strings/1.0.0"]
TOKEN = "contracts/.cache/lib/1.0.0/src/Token.sol"
LEAF = "contracts/.cache/strings/1.0.0/src/utils/LibString.sol"
DISK = {
    TOKEN: 'import {LibString} from "strings/src/utils/LibString.sol";\ncontract Token {}\n',
    LEAF: 'import "./LibBytes.sol";\nlibrary LibString {}\n',
    "contracts/.cache/strings/1.0.0/src/utils/LibBytes.sol": 'import "./LibString.sol";\nlibrary LibBytes {}\n',
}
IMPL = 'import {Token} from "lib/src/Token.sol";\n// import "lib/src/Commented.sol";\ncontract Impl is Token {}\n'


def reader(log: list):
    def read(name: str) -> str | None:
        log.append(name)
        return DISK.get(name)

    return read


def test_what_the_sources_lack_is_found_transitively_through_remappings_and_relative_imports():
    log: list = []
    sources = {"contracts/Impl.sol": IMPL, TOKEN: DISK[TOKEN]}
    added = missing_imports(sources, REMAPPINGS, reader(log))
    assert added == {name: DISK[name] for name in (LEAF, "contracts/.cache/strings/1.0.0/src/utils/LibBytes.sol")}
    assert sorted(log) == sorted(added)  # what the sources hold is not read; a cycle ends; a comment is no import


def test_without_the_remapping_the_import_names_another_file():
    log: list = []
    assert missing_imports({TOKEN: DISK[TOKEN]}, [], reader(log)) == {}
    assert log == ["strings/src/utils/LibString.sol"]


def test_a_file_not_there_is_asked_once_and_left_for_the_compile():
    log: list = []
    sources = {"a.sol": 'import "./gone.sol";\n', "b.sol": 'import "./gone.sol";\n'}
    assert missing_imports(sources, [], reader(log)) == {}
    assert log == ["gone.sol"]


def test_remappings_not_in_solc_s_form_or_an_unscannable_file_add_nothing():
    log: list = []
    assert missing_imports({TOKEN: DISK[TOKEN]}, ["no equals sign"], reader(log)) == {}
    assert missing_imports({"x.sol": 'import "./y.sol"\n'}, [], reader(log)) == {}  # no closing ';'
    assert log == []
