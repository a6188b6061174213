"""derive/flatten.py's scanner: Solidity text read at file level (imports, pragmas, SPDX lines,
declarations) and solc's version ranges; what it cannot read it refuses with FlattenError."""

import pytest

from ape_contract_verify.derive.flatten import (
    INHERITDOC,
    FlattenError,
    VersionRange,
    analyse,
    tokenize,
)

pytestmark = pytest.mark.unit

UNIT = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
pragma abicoder   v2;

import "./A.sol";
import "../lib/B.sol" as B;
import * as C from "@oz/C.sol";
import {D, E as Eagle} from './D.sol';

/// @title says contract Fake { in a comment
contract Token is D {
    string constant s = "import \\"x.sol\\"; contract Nope {}";
    struct Inner { uint a; }
    function f() public {}
}

library Lib {}
error Oops(uint256 code);
"""


# -- analyse ----------------------------------------------------------------------------------------


def test_imports_are_read_in_each_form_solc_has():
    unit = analyse(UNIT, "Token.sol")
    forms = [(i.path, i.unit_alias, i.symbols) for i in unit.imports]
    assert forms == [
        ("./A.sol", None, []),
        ("../lib/B.sol", "B", []),
        ("@oz/C.sol", "C", []),
        ("./D.sol", None, [("D", "D"), ("E", "Eagle")]),
    ]
    first = unit.imports[0]
    assert UNIT[first.start : first.end] == first.statement == 'import "./A.sol";'


def test_pragmas_licenses_and_file_level_declarations():
    unit = analyse(UNIT, "Token.sol")
    assert [(p.name, p.value) for p in unit.pragmas] == [("solidity", "^0.8.20"), ("abicoder", "v2")]
    assert unit.licenses == ["MIT"]
    (edit,) = unit.spdx_edits
    assert UNIT[edit[0] : edit[1]] == "// SPDX-License-Identifier: MIT" and edit[2] == ""
    # Only file-level names: not the struct inside the contract, nor words in comments or strings.
    assert [(kw, name) for kw, name, _ in unit.declarations] == [
        ("contract", "Token"),
        ("library", "Lib"),
        ("error", "Oops"),
    ]


def test_an_spdx_line_inside_a_longer_comment_keeps_the_rest():
    text = "/* SPDX-License-Identifier: GPL-3.0\n   keep this note */\ncontract A {}\n"
    unit = analyse(text, "A.sol")
    assert unit.licenses == ["GPL-3.0"]
    ((start, end, replacement),) = unit.spdx_edits
    assert (start, end) == (0, text.index("*/") + 2)
    assert "keep this note" in replacement and "SPDX" not in replacement


def test_a_source_without_imports_or_pragmas_is_all_declarations():
    unit = analyse("interface I { function f() external; }\n", "I.sol")
    assert unit.imports == [] and unit.pragmas == [] and unit.licenses == []
    assert [(kw, name) for kw, name, _ in unit.declarations] == [("interface", "I")]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('import "./A.sol"\ncontract A {}', "has no closing ';'"),
        ('import {A as} from "./A.sol";', "cannot parse the import statement"),
        ('import {A B} from "./A.sol";', "cannot parse the import statement"),
        ("import * from './A.sol';", "cannot parse the import statement"),
        ("pragma;", "cannot parse `pragma;`"),
    ],
)
def test_what_cannot_be_read_is_refused_naming_the_file(text, words):
    with pytest.raises(FlattenError) as info:
        analyse(text, "Bad.sol")
    assert str(info.value).startswith("Bad.sol")
    assert words in str(info.value)


def test_the_missing_semicolon_error_gives_the_line():
    with pytest.raises(FlattenError, match=r"Bad\.sol line 3: `import \"\./A\.sol\"…`"):
        analyse('// one\n// two\nimport "./A.sol"\n', "Bad.sol")


# -- tokenize and @inheritdoc -----------------------------------------------------------------------


def test_tokens_carry_their_kind_offsets_and_brace_depth():
    text = 'contract A { string s = "}"; } // }'
    toks = list(tokenize(text))
    assert [(t.kind, t.text) for t in toks][:3] == [("id", "contract"), ("id", "A"), ("p", "{")]
    string = next(t for t in toks if t.kind == "s")
    assert string.text == '"}"' and string.depth == 1 and text[string.start : string.end] == '"}"'
    assert toks[-1].kind == "c" and toks[-1].depth == 0  # the brace in the string did not close A


def test_inheritdoc_finds_dotted_names():
    found = INHERITDOC.search("/// @inheritdoc  IERC20 . Meta\nfunction f() {}")
    assert found is not None and found.group(2) == "IERC20 . Meta"


# -- version ranges ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "inside", "outside"),
    [
        ("^0.8.20", ["0.8.20", "0.8.99+commit.abc"], ["0.8.19", "0.9.0"]),
        ("^1.2.3", ["1.2.3", "1.9.0"], ["2.0.0", "1.2.2"]),
        ("~0.8.1", ["0.8.1", "0.8.9"], ["0.9.0", "0.8.0"]),
        (">=0.6.0 <0.9.0", ["0.6.0", "0.8.30"], ["0.5.17", "0.9.0"]),
        ("0.8.24", ["0.8.24"], ["0.8.23", "0.8.25"]),
        ("0.8", ["0.8.0", "0.8.30"], ["0.9.0"]),
        (">0.8.1", ["0.8.2"], ["0.8.1"]),
        ("<=0.8.1", ["0.8.1", "0.1.0"], ["0.8.2"]),
        ("0.7.0 - 0.7.6", ["0.7.0", "0.7.6"], ["0.7.7", "0.6.12"]),
        ("^0.6.0 || ^0.8.0", ["0.6.12", "0.8.1"], ["0.7.0"]),
        ("*", ["0.4.11", "0.8.30"], []),
    ],
)
def test_a_range_holds_what_solc_accepts(text, inside, outside):
    rng = VersionRange.parse(text)
    assert all(v in rng for v in inside), (text, inside)
    assert not any(v in rng for v in outside), (text, outside)


def test_ranges_intersect_and_an_empty_one_is_false():
    both = VersionRange.parse("^0.8.0") & VersionRange.parse(">=0.8.20 <0.8.25")
    assert str(both) == ">=0.8.20 <0.8.25" and both.intervals[0][0] == (0, 8, 20)
    none = VersionRange.parse("^0.7.0") & VersionRange.parse("^0.8.0")
    assert not none and none.intervals == [] and str(none) == ""


def test_ranges_print_as_solc_would_read_them():
    assert str(VersionRange.parse("^0.8.20")) == "^0.8.20"
    assert str(VersionRange.parse("0.8.24")) == "0.8.24"
    assert str(VersionRange.parse(">=0.6.2")) == ">=0.6.2"
    assert str(VersionRange.parse("<0.9.0")) == "<0.9.0"
    assert str(VersionRange.parse("^0.6.0 || ^0.6.5")) == "^0.6.0"  # overlapping intervals merge
    assert repr(VersionRange.parse("^1.0.0")) == "VersionRange('^1.0.0')"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("^0.8.a", "cannot parse the version range"),
        (">=", "ends with '>='"),
        ("0.8.x1", "cannot parse the version"),
        ("!0.8.0", "cannot parse the version range"),
    ],
)
def test_a_range_that_cannot_be_read_is_refused(text, words):
    with pytest.raises(FlattenError) as info:
        VersionRange.parse(text)
    assert words in str(info.value) and repr(text) in str(info.value)
