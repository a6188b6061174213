"""The flattener: a single file that compiles to the same code as the multi-file input.

Proof with the real compiler (solc 0.8.37 through solc-js): every entry below is compiled once as
the original multi-file input and once as its flat file, in two batched standard-json compiles,
and the creation and runtime code must be equal once the CBOR metadata is cut out.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import solcx
from solcx.install import get_executable

from ape_contract_verify.derive.flatten import (
    FlattenError,
    VersionRange,
    collect_imports,
    flatten,
    parse_remapping,
    resolve_import,
)

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "flatten_fixtures"
OZ = REPO / "toolchain" / "node_modules" / "@openzeppelin" / "contracts"
OZ_PREFIX = "@openzeppelin/contracts/"
REMAPPINGS = [
    f"{OZ_PREFIX}={OZ}/",
    "dep/=resolve/vendor/dep1/",
    "resolve/src/app:dep/=resolve/vendor/dep2/",
]
SETTINGS = {"optimizer": {"enabled": True, "runs": 200}}

# Entries that must flatten to the same code.
SAME = [
    "oz/MyToken.sol",
    "oz/MyNFT.sol",
    "oz/MyMultiToken.sol",
    "oz/Access.sol",
    "oz/MyGovernor.sol",
    "oz/ProxyFactory.sol",
    f"{OZ}/proxy/ERC1967/ERC1967Proxy.sol",
    f"{OZ}/proxy/transparent/TransparentUpgradeableProxy.sol",
    f"{OZ}/proxy/transparent/ProxyAdmin.sol",
    f"{OZ}/proxy/beacon/BeaconProxy.sol",
    f"{OZ}/proxy/beacon/UpgradeableBeacon.sol",
    f"{OZ}/governance/TimelockController.sol",
    f"{OZ}/access/manager/AccessManager.sol",
    "features/licenses/Main.sol",
    "features/pragmas/Entry.sol",
    "features/comments/Tricky.sol",
    "features/aliases/UnitAlias.sol",
    "features/aliases/StarAlias.sol",
    "features/aliases/SymbolAlias.sol",
    "features/aliases/Chained.sol",
    "features/aliases/SameName.sol",
    "resolve/src/app/Main.sol",
    "features/cycle/Child.sol",
]
# Valid multi-file Solidity that cannot be flattened faithfully: refused, with the reason.
REFUSED = {
    "features/aliases/ShadowAlias.sol": [
        "features/aliases/ShadowAlias.sol",
        'import {Foo as Bar} from "./lib/Foo.sol";',
        "'Foo' is also declared in features/aliases/ShadowAlias.sol line 9",
    ],
    "features/aliases/NestedAlias.sol": [
        "features/aliases/NestedAlias.sol",
        'import "./lib/Reexport.sol" as R;',
        "R.Inner",
        "refers to 'Inner', which is not a file-level declaration",
    ],
    "features/aliases/ClashAlias.sol": [
        "'Foo' is declared in both features/aliases/lib/Foo.sol and features/aliases/lib2/Foo.sol"
    ],
    # Depth-first order from Parent puts Child (which inherits Parent) first: one file can't.
    "features/cycle/Parent.sol": [
        "Child (features/cycle/Child.sol) inherits Parent (features/cycle/Parent.sol)",
        "import cycle",
    ],
    # ABI coder v1 in one file, v2 (0.8's default) in the other: a single file has one coder.
    "features/abicoder/OldCoder.sol": [
        "features/abicoder/Store.sol uses ABI coder v2 but features/abicoder/OldCoder.sol uses ABI coder v1"
    ],
}
# A copy of this entry's flat file with one constant changed: the comparison must notice.
MUTANT = ("features/pragmas/Entry.sol", "return 4;", "return 5;")

# solc's CBOR metadata: ipfs + solc version (0.6+), bzzr1 (0.5.9+), bzzr0 (older).
_METADATA = re.compile(
    r"a264697066735822[0-9a-f]{68}64736f6c6343[0-9a-f]{6}0033"
    r"|a265627a7a72315820[0-9a-f]{64}64736f6c6343[0-9a-f]{6}0032"
    r"|a165627a7a72305820[0-9a-f]{64}0029"
)
_LINK = re.compile(r"__\$[0-9a-f]{34}\$__")


def load_sources() -> dict[str, str]:
    sources = {p.relative_to(FIXTURES).as_posix(): p.read_text() for p in sorted(FIXTURES.rglob("*.sol"))}
    sources.update({str(p): p.read_text() for p in sorted(OZ.rglob("*.sol"))})
    return sources


def compile_batch(sources: dict[str, str], selected: list[str], remappings=()) -> dict:
    selection = {name: {"*": ["evm.bytecode.object", "evm.deployedBytecode.object"]} for name in selected}
    standard_input = {
        "language": "Solidity",
        "sources": {name: {"content": text} for name, text in sources.items()},
        "settings": {**SETTINGS, "remappings": list(remappings), "outputSelection": selection},
    }
    out = solcx.compile_standard(standard_input, solc_binary=get_executable("0.8.37"))
    errors = [e["formattedMessage"] for e in out.get("errors", []) if e["severity"] == "error"]
    assert not errors, "\n".join(errors)
    return out


def compile_raw(standard_input: dict, version: str = "0.8.37") -> dict:
    """The compiler's answer as it is, errors included (solcx raises on those)."""
    proc = subprocess.run(
        [str(get_executable(version)), "--standard-json"],
        input=json.dumps(standard_input),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return json.loads(proc.stdout)


def strip_runtime(code: str) -> str:
    """Runtime code without its CBOR tail, whose length is in the last two bytes."""
    tail = (int(code[-4:], 16) + 2) * 2
    assert _METADATA.fullmatch(code[-tail:]), "expected solc's CBOR metadata at the end"
    return code[:-tail]


def strip_creation(code: str) -> str:
    """Creation code with every metadata blob cut out (its own and those of code it embeds)."""
    return _LINK.sub("0" * 40, _METADATA.sub("", code))


def flat_name(entry: str) -> str:
    return "flat/" + entry.lstrip("/")


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    return load_sources()


@pytest.fixture(scope="module")
def compiled(sources):
    original = {k: v for k, v in sources.items() if not k.startswith("features/conflict/")}
    orig = compile_batch(original, SAME + list(REFUSED), REMAPPINGS)
    flat_sources = {flat_name(e): flatten(e, sources, REMAPPINGS).source for e in SAME}
    entry, old, new = MUTANT
    assert old in flat_sources[flat_name(entry)]
    flat_sources["mutant/" + entry] = flat_sources[flat_name(entry)].replace(old, new)
    flat = compile_batch(flat_sources, list(flat_sources))
    return orig, flat


def contracts_with_code(output: dict, unit: str) -> dict[str, dict]:
    return {n: c["evm"] for n, c in output["contracts"][unit].items() if c["evm"]["bytecode"]["object"]}


@pytest.mark.parametrize("entry", SAME, ids=lambda e: e.replace(str(OZ), "OZ"))
def test_flat_file_compiles_to_the_same_code(compiled, entry):
    orig, flat = compiled
    expected = contracts_with_code(orig, entry)
    assert expected, f"{entry} defines no deployable contract: a vacuous fixture"
    got = flat["contracts"][flat_name(entry)]
    for name, evm in expected.items():
        flat_evm = got[name]["evm"]
        a, b = evm["bytecode"]["object"], flat_evm["bytecode"]["object"]
        assert len(_METADATA.findall(a)) == len(_METADATA.findall(b)) >= 1
        assert strip_creation(a) == strip_creation(b), f"{name}: creation code differs"
        ra, rb = evm["deployedBytecode"]["object"], flat_evm["deployedBytecode"]["object"]
        # Runtime code that deploys other contracts embeds their creation code, metadata and all.
        assert strip_creation(strip_runtime(ra)) == strip_creation(strip_runtime(rb)), f"{name}: runtime differs"


def test_the_comparison_notices_a_changed_constant(compiled):
    orig, flat = compiled
    entry = MUTANT[0]
    a = orig["contracts"][entry]["Entry"]["evm"]["deployedBytecode"]["object"]
    b = flat["contracts"]["mutant/" + entry]["Entry"]["evm"]["deployedBytecode"]["object"]
    assert strip_runtime(a) != strip_runtime(b)


@pytest.mark.parametrize("entry", list(REFUSED))
def test_unsafe_aliases_are_refused_with_the_reason(compiled, sources, entry):
    orig, _ = compiled
    assert contracts_with_code(orig, entry), "the refused fixture must be valid multi-file Solidity"
    with pytest.raises(FlattenError) as err:
        flatten(entry, sources, REMAPPINGS)
    for part in REFUSED[entry]:
        assert part in err.value.reason


# ---------------------------------------------------------------------------------------------
# The rules, checked on the flat text


def test_licences_are_combined_into_one_spdx_line(sources):
    result = flatten("features/licenses/Main.sol", sources)
    assert result.order == [
        "features/licenses/MitToo.sol",
        "features/licenses/MitLib.sol",
        "features/licenses/Dual.sol",
        "features/licenses/Main.sol",
    ]
    assert result.license == "MIT AND (MIT OR Apache-2.0) AND GPL-3.0-or-later"
    assert result.source.startswith(f"// SPDX-License-Identifier: {result.license}\npragma solidity ^0.8.20;\n")
    assert result.source.count("SPDX-License-Identifier") == 1
    assert "/*" not in result.source  # MitToo's `/* SPDX… */` comment held nothing else


def test_pragmas_are_intersected_and_other_pragmas_kept_once(sources):
    result = flatten("features/pragmas/Entry.sol", sources)
    assert result.pragma == ">=0.8.26 <0.8.38"
    lines = result.source.splitlines()
    assert lines[:3] == [
        "// SPDX-License-Identifier: MIT",
        "pragma solidity >=0.8.26 <0.8.38;",
        "pragma abicoder v2;",
    ]
    assert sum(1 for line in lines if line.lstrip().startswith("pragma")) == 2


def test_an_empty_intersection_names_both_files(sources):
    with pytest.raises(FlattenError) as err:
        flatten("features/conflict/New.sol", sources)
    assert err.value.reason == (
        "pragma solidity ranges do not intersect: features/conflict/New.sol requires '^0.8.0' "
        "but features/conflict/Old.sol requires '^0.7.6'"
    )


def test_imports_and_pragmas_in_comments_and_strings_are_untouched(sources):
    result = flatten("features/comments/Tricky.sol", sources)
    assert result.order == ["features/comments/Helper.sol", "features/comments/Tricky.sol"]
    text = result.source
    for kept in [
        '// import "./Missing1.sol";\n/* import "./Missing2.sol";\n   pragma solidity 0.4.26; */\n',
        " // pragma solidity ^0.5.0;\n",
        ' // import "./Missing3.sol";\n',
        'string constant BANNER = "import \\"./Missing4.sol\\"; pragma solidity ^0.4.0; '
        '// SPDX-License-Identifier: GPL";',
        "    // SPDX-License-Identifier: WTFPL (inside a contract: not a licence, kept)\n",
        "string public constant single = 'import \"./Missing5.sol\";';",
        '/**\n * import "./Missing6.sol";\n */',
        'return "// pragma solidity 0.6.0;";',
        "        /* pragma abicoder v1; */\n",
    ]:
        assert kept in text
    assert 'import "./Helper.sol";' not in text
    assert text.count("pragma solidity ^0.8.20;") == 1


def test_aliases_are_rewritten_to_the_names_they_stand_for(sources):
    unit = flatten("features/aliases/UnitAlias.sol", sources).source
    assert "contract UnitAlias is IAdder {" in unit
    assert "/// @inheritdoc IAdder" in unit
    assert "return MathLib.add(a, b) + MathLib.add(1, 2);" in unit
    star = flatten("features/aliases/StarAlias.sol", sources).source
    assert "using Shapes for Point;" in star and "Point public origin = Point(1, 2);" in star
    symbol = flatten("features/aliases/SymbolAlias.sol", sources).source
    assert "contract SymbolAlias is Foo {" in symbol and "constructor(uint256 seed_) Foo(seed_)" in symbol
    assert "return MathLib.add(Foo.foo(), sibling.foo());" in symbol
    chained = flatten("features/aliases/Chained.sol", sources).source
    assert "return MathLib.add(a, 3);" in chained
    same = flatten("features/aliases/SameName.sol", sources).source
    assert "contract SameName is Counter {\n    Counter public other;" in same
    assert "override(Counter)" in same and "other = Counter(address(this));" in same
    for text in (unit, star, symbol, chained, same):
        assert not re.search(r"^\s*import\b", text, re.M)


def test_a_file_imported_twice_appears_once_in_dependency_order(sources):
    order = collect_imports("resolve/src/app/Main.sol", sources, REMAPPINGS)
    assert order == [
        "resolve/src/lib/Base.sol",
        "resolve/src/app/Local.sol",
        "resolve/vendor/dep1/Thing.sol",
        "resolve/src/lib/Util.sol",
        "resolve/vendor/dep2/Thing.sol",
        "resolve/src/app/Main.sol",
    ]
    text = flatten("resolve/src/app/Main.sol", sources, REMAPPINGS).source
    assert text.count("abstract contract Base {") == 1
    assert text.count("// File: ") == len(order)


def test_missing_sources_and_bad_remappings_are_named(sources):
    with pytest.raises(
        FlattenError,
        match=r"resolve/src/app/Main\.sol: `import \{ThingTwo\} from \"dep/Thing\.sol\";` "
        r"resolves to 'dep/Thing\.sol', which is not among the sources",
    ):
        flatten("resolve/src/app/Main.sol", sources, REMAPPINGS[:1])
    with pytest.raises(FlattenError, match="entry 'nope.sol' is not among the sources"):
        flatten("nope.sol", sources)
    with pytest.raises(FlattenError, match=r"remapping 'dep/' has no '='"):
        flatten("resolve/src/app/Main.sol", sources, ["dep/"])


def test_every_openzeppelin_file_flattens_preserving_its_code(sources):
    """No compile: the structure of all 248 flat files, against an independent line oracle."""
    oz = sorted(k for k in sources if k.startswith(str(OZ)))
    assert len(oz) > 200
    import_stmt = re.compile(r"^import\b[^;]*;[ \t]*\n", re.M)
    header = re.compile(r"^(// SPDX-License-Identifier:[^\n]*|pragma [^;\n]*;)[ \t]*\n", re.M)
    for entry in oz:
        result = flatten(entry, sources, REMAPPINGS)
        assert result.order[-1] == entry and len(set(result.order)) == len(result.order)
        assert result.source.count("SPDX-License-Identifier:") == 1, entry
        assert len(re.findall(r"^pragma solidity", result.source, re.M)) == 1, entry
        assert not re.search(r"^import\b", result.source, re.M), entry
        assert result.pragma and "0.8.37" in VersionRange.parse(result.pragma), entry
        for unit in result.order:
            body = header.sub("", import_stmt.sub("", sources[unit])).lstrip("\n")
            assert f"// File: {unit}\n\n{body}" in result.source, (entry, unit)


# ---------------------------------------------------------------------------------------------
# solc's own rules: import resolution and version ranges, checked against the compiler


RESOLVE_CASES = [
    ("./a.sol", "x/y/B.sol"),
    ("../a.sol", "x/y/B.sol"),
    ("../../../a.sol", "x/y/B.sol"),
    (".//./z/../a.sol", "x/B.sol"),
    ("lib/a.sol", "x/B.sol"),
    ("lib/sub/a.sol", "x/B.sol"),
    ("lib/sub/a.sol", "ctx/B.sol"),
    ("lib/a.sol", "ctx/inner/B.sol"),
    ("./lib/a.sol", "B.sol"),
    ("/abs/a.sol", "x/B.sol"),
    ("../a.sol", "/root/dir/B.sol"),
]
RESOLVE_REMAPPINGS = ["lib/=L1/", "lib/sub/=L2/", "ctx:lib/=C1/", "ctx/inner:lib/=C2/", "lib/=L3/"]


def test_import_resolution_matches_solc():
    """solc names the unit it looked for in `Source "…" not found`; ours must be the same name."""
    inputs: dict[str, list[str]] = {}
    expected: dict[str, list[str]] = {}
    for path, importer in RESOLVE_CASES:
        unit = importer
        inputs.setdefault(unit, []).append(path)
        expected.setdefault(unit, []).append(resolve_import(path, unit, RESOLVE_REMAPPINGS))
    standard_input = {
        "language": "Solidity",
        "sources": {
            unit: {"content": "pragma solidity >=0.8.0;\n" + "".join(f'import "{p}";\n' for p in paths)}
            for unit, paths in inputs.items()
        },
        "settings": {"remappings": RESOLVE_REMAPPINGS, "outputSelection": {}},
    }
    out = compile_raw(standard_input)
    found: dict[str, set[str]] = {}
    for err in out["errors"]:
        if err["severity"] != "error":
            continue
        m = re.search(r'Source "([^"]*)" not found', err["message"])
        assert m, err["formattedMessage"]
        found.setdefault(err["sourceLocation"]["file"], set()).add(m.group(1))
    assert found == {unit: set(names) for unit, names in expected.items()}
    assert resolve_import("lib/sub/a.sol", "x/B.sol", RESOLVE_REMAPPINGS) == "L2/a.sol"  # longest prefix
    assert resolve_import("lib/a.sol", "x/B.sol", RESOLVE_REMAPPINGS) == "L3/a.sol"  # the last one wins a tie
    assert resolve_import("lib/a.sol", "ctx/inner/B.sol", RESOLVE_REMAPPINGS) == "C2/a.sol"  # longest context


RANGES = [
    "^0.8.20",
    "^0.8",
    "^0.8.37",
    "^0.8.38",
    "~0.8.30",
    "~0.8",
    "~0",
    "^0",
    ">=0.8.37",
    ">0.8.37",
    ">0.8",
    ">=0.8.38",
    "<0.8.37",
    "<=0.8.37",
    "<=0.8",
    "<0.9",
    "=0.8.37",
    "0.8.37",
    "0.8.26",
    "0.8",
    "0.8.x",
    ">=0.4.16 <0.9.0",
    ">=0.8.0 <0.8.37",
    "^0.7.0 || ^0.8.10",
    "^0.6.0 || ^0.7.0",
    "0.8.0 - 0.8.37",
    "0.8.0 - 0.8.36",
    "0.8.0 - 0.8",
    "*",
    ">= 0.8.0 <= 0.8.37",
    "^0.0.1",
    "~1.2.3 || >=0.8.30 <0.8.40",
]


@pytest.mark.parametrize("version", ["0.8.37", "0.8.26"])
def test_version_ranges_match_solc(version):
    standard_input = {
        "language": "Solidity",
        "sources": {f"r{i}.sol": {"content": f"pragma solidity {r};\n"} for i, r in enumerate(RANGES)},
        "settings": {"outputSelection": {}},
    }
    out = compile_raw(standard_input, version)
    rejected = {
        err["sourceLocation"]["file"]
        for err in out.get("errors", [])
        if "requires different compiler version" in err["message"]
    }
    assert rejected and len(rejected) < len(RANGES)
    for i, r in enumerate(RANGES):
        assert (version in VersionRange.parse(r)) == (f"r{i}.sol" not in rejected), r


def test_version_range_intersection_and_text():
    def meet(*ranges):
        out = VersionRange.parse(ranges[0])
        for r in ranges[1:]:
            out = out & VersionRange.parse(r)
        return str(out)

    assert meet("^0.8.20", ">=0.4.16") == "^0.8.20"
    assert meet("^0.8.20", "^0.8.24", ">=0.6.2") == "^0.8.24"
    assert meet("^0.7.0 || ^0.8.10", ">=0.7.5 <0.8.12") == "^0.7.5 || >=0.8.10 <0.8.12"
    assert meet(">=0.8.0", "<=0.8.19") == ">=0.8.0 <0.8.20"
    assert meet("0.8.26", "^0.8.0") == "0.8.26"
    assert meet(">=0.8.4") == ">=0.8.4"
    assert not VersionRange.parse("^0.7.0") & VersionRange.parse("^0.8.0")
    with pytest.raises(FlattenError, match="cannot parse the version range '0.8.a'"):
        VersionRange.parse("0.8.a")


def test_parse_remapping_follows_solc():
    r = parse_remapping("ctx:@oz/=lib/oz/")
    assert (r.context, r.prefix, r.target) == ("ctx", "@oz/", "lib/oz/")
    r = parse_remapping("@oz/=lib/a=b/")
    assert (r.context, r.prefix, r.target) == ("", "@oz/", "lib/a=b/")
    with pytest.raises(FlattenError, match="empty prefix"):
        parse_remapping("ctx:=x")


def test_the_cycle_refusal_is_what_solc_would_reject(sources, monkeypatch):
    """Without the check, the flat file of Parent.sol defines Child before its base: solc says no."""
    import ape_contract_verify.derive.flatten as module

    monkeypatch.setattr(module, "_check_bases_come_first", lambda *unit_data: None)
    text = flatten("features/cycle/Parent.sol", sources).source
    out = compile_raw(
        {"language": "Solidity", "sources": {"Flat.sol": {"content": text}}, "settings": {"outputSelection": {}}}
    )
    messages = [e["message"] for e in out.get("errors", []) if e["severity"] == "error"]
    assert messages == ["Definition of base has to precede definition of derived contract"]


# ---------------------------------------------------------------------------------------------
# The example project: every Solidity contract, with its package's own compiler settings

EXAMPLE_SOURCES = REPO / "example"


def example_groups() -> list[tuple[Path, dict]]:
    """(package root, its standard-json settings) for the project and each local package."""
    import yaml

    roots = [EXAMPLE_SOURCES] + sorted(p.parent for p in (EXAMPLE_SOURCES / "packages").glob("*/ape-config.yaml"))
    groups = []
    for root in roots:
        config = yaml.safe_load((root / "ape-config.yaml").read_text()) or {}
        sol = config.get("solidity") or {}
        settings = {"optimizer": {"enabled": sol.get("optimize", True), "runs": sol.get("optimization_runs", 200)}}
        if sol.get("evm_version"):
            settings["evmVersion"] = sol["evm_version"]
        if sol.get("via_ir"):
            settings["viaIR"] = True
        groups.append((root, settings))
    return groups


def newest_installed(pragma: str) -> str:
    installed = sorted(solcx.get_installed_solc_versions(), reverse=True)
    return next(str(v) for v in installed if str(v) in VersionRange.parse(pragma))


def test_every_example_contract_flattens_to_the_same_code():
    compared = []
    for root, settings in example_groups():
        own = {
            p.relative_to(root).as_posix(): p.read_text()
            for p in sorted((root / "contracts").rglob("*.sol"))
            if ".cache" not in p.relative_to(root).parts  # Ape's copies of dependencies
        }
        # OpenZeppelin, which the example imports as `@openzeppelin/contracts/...` (an Ape dependency).
        oz_root = REPO / "toolchain" / "openzeppelin-contracts"
        oz = {
            f"@openzeppelin/contracts/{p.relative_to(oz_root).as_posix()}": p.read_text()
            for p in oz_root.rglob("*.sol")
        }
        sources = {**own, **oz}
        batches: dict[str, list[str]] = {}
        flat_sources = {}
        for entry in own:
            result = flatten(entry, sources)
            flat_sources[flat_name(entry)] = result.source
            batches.setdefault(newest_installed(result.pragma), []).append(entry)
        for version, entries in batches.items():
            # One compile per compiler version: the originals and their flat files side by side.
            batch = {k: sources[k] for e in entries for k in collect_imports(e, sources)}
            batch.update({flat_name(e): flat_sources[flat_name(e)] for e in entries})
            selection = {name: {"*": ["evm.bytecode", "evm.deployedBytecode.object"]} for name in batch}
            out = compile_raw(
                {
                    "language": "Solidity",
                    "sources": {k: {"content": v} for k, v in batch.items()},
                    "settings": {**settings, "outputSelection": selection},
                },
                version,
            )
            errors = [e["formattedMessage"] for e in out.get("errors", []) if e["severity"] == "error"]
            assert not errors, "\n".join(errors)
            for entry in entries:
                for name, evm in contracts_with_code(out, entry).items():
                    flat_evm = out["contracts"][flat_name(entry)][name]["evm"]
                    a, b = evm["bytecode"], flat_evm["bytecode"]
                    assert strip_creation(a["object"]) == strip_creation(b["object"]), (root.name, entry, name)

                    def links(refs):
                        return sorted((lib, tuple(map(str, pos))) for f in refs.values() for lib, pos in f.items())

                    assert links(a["linkReferences"]) == links(b["linkReferences"]), (entry, name)
                    ra, rb = evm["deployedBytecode"]["object"], flat_evm["deployedBytecode"]["object"]
                    assert strip_creation(strip_runtime(ra)) == strip_creation(strip_runtime(rb)), (entry, name)
                    compared.append((root.name, entry, name, version))
    names = {c[2] for c in compared}
    # The project's own contracts, the library-linked one, the legacy compiler and the viaIR package.
    for expected in ("Token", "Calculator", "MathLib", "LegacyStore", "ViaIRCounter", "TunedStore"):
        assert expected in names, (expected, compared)


def test_broken_sources_get_a_flatten_error_never_a_crash(sources):
    """Truncated, cut and spliced versions of the fixtures: a FlattenError or a result, nothing else."""
    rnd = __import__("random").Random(5)
    junk = ['"', "'", "/*", "*/", "{", "}", ";", "import", 'import "x"', "pragma solidity", " as ", "//"]
    outcomes = {"flat": 0, "refused": 0}
    for entry in [
        "features/comments/Tricky.sol",
        "features/aliases/SymbolAlias.sol",
        "features/aliases/UnitAlias.sol",
        "features/pragmas/Tilde.sol",
        "resolve/src/app/Main.sol",
    ]:
        text = sources[entry]
        for cut in range(0, len(text), 5):
            for variant in (text[:cut], text[:cut] + text[cut + 7 :], text[:cut] + rnd.choice(junk) + text[cut:]):
                try:
                    flatten(entry, {**sources, entry: variant}, REMAPPINGS)
                    outcomes["flat"] += 1
                except FlattenError as err:
                    assert err.reason and str(err) == err.reason
                    outcomes["refused"] += 1
    assert outcomes["flat"] and outcomes["refused"]
