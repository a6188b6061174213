"""derive/artifacts.py: contract types found by name and by the code at an address, from
manifests built here (no compile): names, ties broken by the full runtime then the creation code,
immutables and library addresses allowed to differ, and the errors saying what to pass instead."""

import re
from types import SimpleNamespace

import pytest
from ethpm_types import ContractType

from ape_contract_verify.derive import artifacts
from ape_contract_verify.derive.artifacts import Artifact, ArtifactNotFound, find_artifact, identify, short_name

pytestmark = pytest.mark.unit

A = "0x" + "ab" * 20
RUNTIME = "0x6080604052348015600e575f80fd5b50"
LIBRARY_CALL = "0x60806040527300000000000000000000000000000000000000005af4"  # PUSH20 <library>
IMMUTABLE = "0x6080604052" + "7f" + "00" * 32 + "5b"  # PUSH32 <immutable>


def contract(name, source, runtime=RUNTIME, creation="0x6080" + "00" * 4):
    return ContractType(
        contractName=name,
        sourceId=source,
        abi=[],
        runtimeBytecode={"bytecode": runtime},
        deploymentBytecode={"bytecode": creation + runtime[2:]},
    )


def project(types, version="0.8.26+commit.8a97fa7a", dependencies=(), path="/nowhere", compiler="solidity"):
    compiler_entry = SimpleNamespace(
        name=compiler, version=version, settings={"optimizer": {"enabled": True}}, contractTypes=[t.name for t in types]
    )
    manifest = SimpleNamespace(contract_types={t.name: t for t in types}, compilers=[compiler_entry])
    return SimpleNamespace(
        manifest=manifest,
        path=path,
        contracts_folder=f"{path}/contracts",
        dependencies=SimpleNamespace(specified=list(dependencies)),
    )


def dependency(name, types):
    return SimpleNamespace(name=name, project=project(types))


@pytest.fixture(autouse=True)
def no_closure(monkeypatch):
    """The import closure is a compile: here it holds nothing, and says when it was searched."""
    searched = []
    monkeypatch.setattr(artifacts, "closure_artifacts", lambda project, cache=None: searched.append(project) or [])
    return searched


def test_an_artifact_s_names_and_its_explorer_compiler_version():
    own = Artifact("Token", "contracts/Token.sol", None, None, "solidity", "0.8.26+commit.8a97fa7a", {})
    assert (own.qualified_name, own.label, own.reference) == (
        "contracts/Token.sol:Token",
        "Token",
        "contracts/Token.sol:Token",
    )
    assert own.explorer_compiler_version == "v0.8.26+commit.8a97fa7a" and not own.is_vyper
    dep = Artifact(
        "ERC20", "contracts/ERC20.sol", None, None, "Solidity", "v0.8.20+commit.a1b79de6", {}, dependency="openzeppelin"
    )
    assert (dep.label, dep.reference) == ("openzeppelin:ERC20", "openzeppelin:contracts/ERC20.sol:ERC20")
    assert dep.explorer_compiler_version == "v0.8.20+commit.a1b79de6"
    vy = Artifact("Vault", "contracts/Vault.vy", None, None, "Vyper", "0.4.3+commit.bff19ea2", {})
    assert vy.is_vyper and vy.explorer_compiler_version == "vyper:0.4.3"


def test_a_solc_version_without_its_commit_asks_for_a_forced_recompile():
    bare = Artifact("Token", "contracts/Token.sol", None, None, "solidity", "0.8.26", {})
    with pytest.raises(ArtifactNotFound, match=r"solc 0.8.26 without its commit; recompile with `ape compile --force`"):
        bare.explorer_compiler_version


@pytest.mark.parametrize(
    "compiler, version",
    [
        ("vyper", "0.4.0-rc6"),  # was sent on as vyper:0.4.0-rc6, for the form to refuse far from here
        ("solidity", "0.8.26+commit.not-hex"),  # was sent on as v0.8.26+commit.not-hex
    ],
)
def test_a_manifest_version_that_is_no_compiler_version_is_refused_naming_the_artifact(compiler, version):
    artifact = Artifact("Vault", "contracts/Vault.vy", None, None, compiler, version, {})
    with pytest.raises(
        ArtifactNotFound, match=re.escape(f"Vault: the manifest records {version!r}, which is no {compiler}")
    ):
        artifact.explorer_compiler_version


def test_an_artifact_s_version_is_the_manifest_s_parsed_commit_or_none():
    bare = Artifact("Token", "contracts/Token.sol", None, None, "solidity", "0.8.26", {})
    assert (bare.version.number, bare.version.commit, bare.version.language) == ("0.8.26", None, "solidity")
    vy = Artifact("Vault", "contracts/Vault.vy", None, None, "Vyper", "0.3.10+commit.91361694", {})
    assert (vy.version.long, vy.version.release) == ("vyper:0.3.10+commit.91361694", (0, 3, 10))
    with pytest.raises(ArtifactNotFound, match=r"Token: the manifest records 'latest', which is no solidity"):
        Artifact("Token", "contracts/Token.sol", None, None, "solidity", "latest", {}).version


def test_ape_solidity_s_input_for_a_version_is_the_one_keyed_by_its_number():
    from packaging.version import Version

    from ape_contract_verify.protocol.compiler_version import CompilerVersion

    old, new, odd = {"n": "old"}, {"n": "new"}, {"n": "odd"}
    inputs = {"not a version": odd, Version("0.8.20"): old, Version("0.8.26+commit.8a97fa7a"): new}
    for text in ("0.8.26+commit.8a97fa7a", "v0.8.26", "0.8.26-nightly.2024.5.1+commit.12345678"):
        assert artifacts.input_for(inputs, CompilerVersion.parse(text)) is new, text
    assert artifacts.input_for(inputs, CompilerVersion.parse("0.8.20+commit.a1b79de6")) is old
    assert artifacts.input_for(inputs, CompilerVersion.parse("0.8.19")) is None
    assert artifacts.input_for({}, CompilerVersion.parse("0.8.26")) is None


def test_the_explorer_version_is_the_one_spelling_of_compiler_version():
    vy = Artifact("Vault", "contracts/Vault.vy", None, None, "vyper", "0.4.0rc6+commit.33719560", {})
    assert vy.explorer_compiler_version == "vyper:0.4.0rc6"
    sol = Artifact("Token", "contracts/Token.sol", None, None, "solidity", "0.8.26+commit.8A97FA7A", {})
    assert sol.explorer_compiler_version == "v0.8.26+commit.8a97fa7a"  # was sent with its capitals


@pytest.mark.parametrize(
    "reference, short",
    [
        ("Token", "Token"),
        ("contracts/Token.sol:Token", "Token"),
        ("openzeppelin:contracts/ERC20.sol:ERC20", "openzeppelin:ERC20"),
    ],
)
def test_a_summary_row_s_short_name(reference, short):
    assert short_name(reference) == short


def test_a_type_s_reference_needs_both_its_source_and_its_name():
    assert artifacts.type_reference(contract("Token", "contracts/Token.sol")) == "contracts/Token.sol:Token"
    assert artifacts.type_reference(ContractType(contractName="Token", abi=[])) is None


def test_a_name_finds_the_project_s_own_type_before_a_dependency_s():
    own = contract("Token", "contracts/Token.sol")
    proj = project([own], dependencies=[dependency("openzeppelin", [contract("Token", "contracts/token/Token.sol")])])
    found = find_artifact("Token", proj)
    assert found.dependency is None and found.settings == {"optimizer": {"enabled": True}}
    assert find_artifact("openzeppelin:Token", proj).reference == "openzeppelin:contracts/token/Token.sol:Token"


def test_an_unknown_name_says_what_to_run_and_an_ambiguous_one_lists_the_choices():
    proj = project([contract("Token", "contracts/Token.sol")])
    with pytest.raises(ArtifactNotFound, match=r"No compiled contract type named 'Nope' in the manifests"):
        find_artifact("Nope", proj, compile=False)
    with pytest.raises(ArtifactNotFound, match=r"run `ape compile --include-dependencies`, or check the name"):
        find_artifact("Nope", proj)
    two_deps = project(
        [], dependencies=[dependency("a", [contract("T", "x/T.sol")]), dependency("b", [contract("T", "y/T.sol")])]
    )
    with pytest.raises(
        ArtifactNotFound, match=r"'T' is ambiguous: a:x/T.sol:T, b:y/T.sol:T. Pass one of these instead"
    ):
        find_artifact("T", two_deps)


def test_a_dependency_not_compiled_is_named_when_the_code_matches_nothing(no_closure):
    unbuilt = SimpleNamespace(name="solmate", project=project([]))
    proj = project([contract("Token", "contracts/Token.sol")], dependencies=[unbuilt])
    with pytest.raises(ArtifactNotFound) as none:
        identify(A, proj, runtime=bytes.fromhex("fe" * 17))
    assert "not compiled, so not searched beyond what the project imports: solmate" in str(none.value)
    assert "name the contract type: `ape verify contract NAME ADDRESS`" in str(none.value)
    assert no_closure  # the closure was searched before giving up
    with pytest.raises(ArtifactNotFound, match="no contract code at"):
        identify(A, proj, runtime=b"")


def test_the_code_identifies_its_type_with_metadata_immutables_and_library_addresses_aside():
    proj = project(
        [
            contract("Token", "contracts/Token.sol"),
            contract("Lib", "contracts/Lib.sol", LIBRARY_CALL),
            contract("Imm", "contracts/Imm.sol", IMMUTABLE),
        ]
    )
    assert identify(A, proj, runtime=bytes.fromhex(RUNTIME[2:])).name == "Token"
    linked = bytes.fromhex(LIBRARY_CALL[2:].replace("00" * 20, "cd" * 20))
    assert identify(A, proj, runtime=linked).name == "Lib"
    filled = bytes.fromhex(IMMUTABLE[2:].replace("00" * 32, "11" * 32))
    assert identify(A, proj, runtime=filled).name == "Imm"
    assert artifacts.has_code_of(find_artifact("Token", proj), bytes.fromhex(RUNTIME[2:]))
    # A changed opcode is no immutable: no match.
    assert not artifacts.has_code_of(find_artifact("Token", proj), bytes.fromhex(RUNTIME[2:-2] + "51"))


def test_types_with_the_same_runtime_are_told_apart_by_their_creation_code():
    parent = contract("Parent", "contracts/Parent.sol", creation="0x60aa0000")
    child = contract("Child", "contracts/Child.sol", creation="0x60bb0000")
    proj = project([parent, child])
    runtime = bytes.fromhex(RUNTIME[2:])
    asked = []

    def creation():
        asked.append(1)
        return bytes.fromhex("60bb0000" + RUNTIME[2:] + "00" * 32)  # constructor arguments follow

    assert identify(A, proj, runtime=runtime, creation=creation).name == "Child" and asked == [1]
    with pytest.raises(ArtifactNotFound) as tie:
        identify(A, proj, runtime=runtime, creation=lambda: None)
    assert "matches several contract types, identical in runtime and creation code" in str(tie.value)
    assert "contracts/Child.sol:Child, contracts/Parent.sol:Parent" in str(tie.value)
    assert f"name one: `ape verify contract contracts/Parent.sol:Parent {A}`" in str(tie.value)


def test_a_linked_contracts_folder_s_files_are_named_under_contracts(tmp_path):
    target = tmp_path / "node_modules" / "pkg" / "src"
    target.mkdir(parents=True)
    root = tmp_path / "project"
    root.mkdir()
    (root / "contracts").symlink_to(target)
    proj = SimpleNamespace(path=root, contracts_folder=root / "contracts")
    sources = {"../node_modules/pkg/src/X.sol": {"content": "x"}, "contracts/Y.sol": {"content": "y"}}
    assert artifacts.project_source_names(sources, proj) == {
        "contracts/X.sol": {"content": "x"},
        "contracts/Y.sol": {"content": "y"},
    }
    plain = SimpleNamespace(path=root, contracts_folder=root / "elsewhere")
    assert artifacts.project_source_names(sources, plain) is sources
