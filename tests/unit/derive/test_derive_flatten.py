"""derive/flatten.py on small hand-written sources (no compiler): import resolution as solc does
it, the dependency order, the header (licence, pragma), what is removed, and the refusals, each
naming what to do instead."""

import pytest

from ape_contract_verify.derive import flatten
from ape_contract_verify.derive.flatten import FlattenError, collect_imports, parse_remapping, resolve_import

pytestmark = pytest.mark.unit

BASE = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

contract Base {
    uint256 public x = 1;
}
"""
LIB = """// SPDX-License-Identifier: Apache-2.0
pragma solidity >=0.8.4 <0.9.0;

library Maths {
    function twice(uint256 a) internal pure returns (uint256) { return a * 2; }
}
"""
TOKEN = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

import "./Base.sol";
import {Maths} from "lib/Maths.sol";

contract Token is Base {
    function y() external view returns (uint256) { return Maths.twice(x); }
}
"""
SOURCES = {"contracts/Base.sol": BASE, "deps/lib/Maths.sol": LIB, "contracts/Token.sol": TOKEN}
REMAP = ["lib/=deps/lib/"]


def test_a_remapping_parses_as_context_prefix_target_and_a_bad_one_says_how_to_write_it():
    assert parse_remapping("ctx:a/=b/") == flatten.Remapping("ctx", "a/", "b/")
    assert parse_remapping("@oz/=node_modules/@oz/") == flatten.Remapping("", "@oz/", "node_modules/@oz/")
    with pytest.raises(FlattenError, match=r"has no '='.*\[context:\]prefix=target"):
        parse_remapping("lib/")
    with pytest.raises(FlattenError, match="empty prefix"):
        parse_remapping("ctx:=x/")


@pytest.mark.parametrize(
    "path, importer, remappings, expected",
    [
        ("./Base.sol", "contracts/Token.sol", [], "contracts/Base.sol"),
        ("../lib/A.sol", "contracts/sub/B.sol", [], "contracts/lib/A.sol"),
        ("lib/Maths.sol", "contracts/Token.sol", [], "lib/Maths.sol"),  # not relative: as written
        ("lib/Maths.sol", "contracts/Token.sol", REMAP, "deps/lib/Maths.sol"),
        # Longest prefix wins; a context applies only inside it.
        ("a/b/C.sol", "x.sol", ["a/=one/", "a/b/=two/"], "two/C.sol"),
        ("a/C.sol", "x.sol", ["other:a/=ctx/", "a/=plain/"], "plain/C.sol"),
        ("a/C.sol", "other/x.sol", ["other:a/=ctx/", "a/=plain/"], "ctx/C.sol"),
    ],
)
def test_imports_resolve_as_solc_resolves_them(path, importer, remappings, expected):
    assert resolve_import(path, importer, remappings) == expected


def test_the_imports_are_collected_dependencies_first_entry_last():
    assert collect_imports("contracts/Token.sol", SOURCES, REMAP) == [
        "contracts/Base.sol",
        "deps/lib/Maths.sol",
        "contracts/Token.sol",
    ]
    assert collect_imports("contracts/Base.sol", SOURCES) == ["contracts/Base.sol"]


def test_a_missing_import_and_a_missing_entry_are_named_with_the_fix():
    with pytest.raises(FlattenError, match=r"resolves to 'lib/Maths.sol'.*add it, or pass the remapping"):
        collect_imports("contracts/Token.sol", SOURCES)  # without the remapping
    with pytest.raises(FlattenError, match="'contracts/Nope.sol' is not among the sources"):
        flatten.flatten("contracts/Nope.sol", SOURCES)


def test_the_flat_file_has_one_header_no_imports_and_every_body_in_order():
    result = flatten.flatten("contracts/Token.sol", SOURCES, REMAP)
    assert result.order == ["contracts/Base.sol", "deps/lib/Maths.sol", "contracts/Token.sol"]
    assert result.license == "MIT AND Apache-2.0"
    assert result.pragma == "^0.8.4"  # the intersection of the two ranges
    text = result.source
    assert text.startswith("// SPDX-License-Identifier: MIT AND Apache-2.0\npragma solidity ^0.8.4;\n")
    assert text.count("SPDX-License-Identifier") == 1 and text.count("pragma solidity") == 1
    assert "import" not in text
    assert text.index("contract Base") < text.index("library Maths") < text.index("contract Token is Base")
    assert "// File: deps/lib/Maths.sol" in text
    assert "function twice(uint256 a) internal pure returns (uint256) { return a * 2; }" in text  # byte for byte


def test_one_pragma_text_is_kept_unchanged_and_no_licence_gives_none():
    plain = {"A.sol": "pragma solidity ^0.8.20;\ncontract A {}\n"}
    result = flatten.flatten("A.sol", plain)
    assert result.pragma == "^0.8.20" and result.license is None
    assert result.source.startswith("pragma solidity ^0.8.20;\n")


def test_the_names_layout_sorts_by_unit_name_with_bases_first():
    result = flatten.flatten("contracts/Token.sol", SOURCES, REMAP, layout="names")
    assert result.order == ["contracts/Base.sol", "contracts/Token.sol", "deps/lib/Maths.sol"]
    # A base in a file whose name sorts later still comes first.
    inverted = flatten.flatten(
        "A.sol",
        {"Z.sol": "contract Base {}\n", "A.sol": 'import "./Z.sol";\ncontract Kid is Base {}\n'},
        layout="names",
    )
    assert inverted.order == ["Z.sol", "A.sol"]
    with pytest.raises(FlattenError, match="layout 'alphabet' is unknown: use 'imports' or 'names'"):
        flatten.flatten("contracts/Token.sol", SOURCES, REMAP, layout="alphabet")


def test_disjoint_pragmas_name_both_files():
    sources = {
        "A.sol": "pragma solidity ^0.7.0;\ncontract A {}\n",
        "B.sol": 'pragma solidity ^0.8.0;\nimport "./A.sol";\ncontract B {}\n',
    }
    with pytest.raises(FlattenError, match=r"do not intersect: B.sol requires '\^0.8.0' but A.sol requires '\^0.7.0'"):
        flatten.flatten("B.sol", sources)


def test_a_name_declared_in_two_files_asks_for_standard_json():
    sources = {
        "A.sol": "contract Same {}\n",
        "B.sol": 'import "./A.sol";\ncontract Other {}\n',
        "C.sol": 'import "./B.sol";\ncontract Same {}\n',
    }
    sources["C.sol"] = 'import "./A.sol";\nlibrary Same {}\n'
    with pytest.raises(FlattenError, match=r"'Same' is declared in both A.sol and C.sol.*submit standard-json"):
        flatten.flatten("C.sol", sources)


def test_mixed_abi_coders_are_refused():
    sources = {
        "A.sol": "pragma solidity ^0.8.0;\npragma abicoder v1;\ncontract A {}\n",
        "B.sol": 'pragma solidity ^0.8.0;\nimport "./A.sol";\ncontract B {}\n',
    }
    with pytest.raises(FlattenError, match=r"A.sol uses ABI coder v1 but B.sol uses ABI coder v2"):
        flatten.flatten("B.sol", sources)
