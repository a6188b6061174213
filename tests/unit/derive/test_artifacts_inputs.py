"""derive/artifacts.py's inputs: the compiler input for an artifact, with Ape's compiler managers answered
here: the manifest's settings win over ape-solidity's, host-specific ones are dropped, Vyper's
import closure and pragmas, copies handed out so a caller cannot change what was read."""

from types import SimpleNamespace

import ape
import pytest
from packaging.version import Version

from ape_contract_verify.derive import artifacts, derive
from ape_contract_verify.derive.artifacts import Artifact, ArtifactNotFound
from ape_contract_verify.engine.compilers import SOLIDITY_OUTPUTS, VYPER_OUTPUTS

pytestmark = pytest.mark.unit


def solidity(settings=None, version="0.8.26+commit.8a97fa7a", root="/nowhere"):
    project = SimpleNamespace(path=root, contracts_folder=f"{root}/contracts")
    manifest_settings = (
        settings
        if settings is not None
        else {
            "optimizer": {"enabled": True, "runs": 200},
            "outputSelection": {"x": {"x": ["abi"]}},
            "search_paths": ["/home/me/.ape"],
            "libraries": {"contracts/L.sol": {"L": "0x" + "11" * 20}},
        }
    )
    return Artifact("Token", "contracts/Token.sol", None, project, "solidity", version, manifest_settings)


@pytest.fixture
def ape_solidity(monkeypatch):
    """ape-solidity's inputs by version, as `inputs_by_version` would give them."""
    given = {
        Version("0.8.20"): {"sources": {"old.sol": {}}, "settings": {}},
        Version("0.8.26"): {
            "sources": {"contracts/Token.sol": {"content": "contract Token {}"}},
            "settings": {"remappings": ["@oz/=.cache/oz/"], "optimizer": {"enabled": False}, "search_paths": ["/tmp"]},
        },
    }
    monkeypatch.setattr(ape, "compilers", SimpleNamespace(solidity=object()), raising=False)
    monkeypatch.setattr(artifacts, "inputs_by_version", lambda solidity, paths, project, versions: given)
    return given


def test_the_manifest_s_settings_win_and_host_specific_ones_are_dropped(ape_solidity):
    got = artifacts.standard_input(solidity())
    assert got["language"] == "Solidity"
    assert got["sources"] == {"contracts/Token.sol": {"content": "contract Token {}"}}  # the 0.8.26 input
    assert got["settings"] == {
        "remappings": ["@oz/=.cache/oz/"],
        "optimizer": {"enabled": True, "runs": 200},
        "outputSelection": {"*": {"*": SOLIDITY_OUTPUTS}},
    }
    libraries = {"contracts/L.sol": {"L": "0x" + "22" * 20}}  # as derive links it, once read from the chain
    assert derive._as_built([got], solidity(), None, libraries)["settings"]["libraries"] == libraries


def test_without_ape_solidity_s_input_for_the_version_the_first_is_taken_and_none_is_an_error(
    ape_solidity, monkeypatch
):
    assert artifacts.standard_input(solidity(version="0.8.19+commit.7dd6d404"))["sources"] == {"old.sol": {}}
    monkeypatch.setattr(artifacts, "inputs_by_version", lambda *a: {})
    with pytest.raises(ArtifactNotFound, match="Token: ape-solidity produced no input for contracts/Token.sol"):
        artifacts.standard_input(solidity())


def test_a_nightly_takes_the_input_of_its_release_s_number(ape_solidity):
    # Matched as text, `0.8.26-nightly.2024.5.1` matched no input and took the first (0.8.20's).
    nightly = solidity(version="0.8.26-nightly.2024.5.1+commit.12345678")
    assert artifacts.standard_input(nightly)["sources"] == {"contracts/Token.sol": {"content": "contract Token {}"}}


@pytest.mark.parametrize("version", ["latest", "0.8", "0.8.26.1+commit.8a97fa7a", "0.8.26+8a97fa7a"])
def test_a_manifest_version_that_is_none_says_to_recompile_before_ape_solidity_is_asked(monkeypatch, version):
    monkeypatch.setattr(ape, "compilers", SimpleNamespace(solidity=object()), raising=False)
    monkeypatch.setattr(artifacts, "inputs_by_version", lambda *a: pytest.fail("no version: ape-solidity is not asked"))
    with pytest.raises(ArtifactNotFound) as caught:
        artifacts.standard_input(solidity(version=version))
    assert str(caught.value) == (
        f"Token: the manifest records {version!r}, which is no solidity compiler version; "
        "recompile with `ape compile --force`"
    )


def test_a_prepared_input_is_handed_out_as_a_copy(ape_solidity, monkeypatch):
    artifact = solidity()
    monkeypatch.setattr(artifacts, "_group_input", lambda a: {"settings": {"remappings": ["b/=y/", "a/=x/"]}})
    artifacts.prepare(artifact)
    assert set(artifact.resolved) == {"input", "group"}
    monkeypatch.setattr(artifacts, "inputs_by_version", lambda *a: pytest.fail("prepared: ape-solidity is not asked"))
    first = artifacts.standard_input(artifact)
    first["settings"]["optimizer"]["runs"] = 1
    assert artifacts.standard_input(artifact)["settings"]["optimizer"]["runs"] == 200
    group = artifacts.group_input(artifact)
    group["settings"]["remappings"].clear()
    assert artifacts.project_remappings(artifact) == ["a/=x/", "b/=y/"]  # sorted, and not cleared


def test_remappings_are_none_for_vyper_and_for_a_group_that_cannot_be_read(monkeypatch):
    vyper = Artifact("V", "contracts/V.vy", None, None, "vyper", "0.4.3", {})
    assert artifacts.project_remappings(vyper) == []

    def broken(artifact):
        raise RuntimeError("ape-solidity failed")

    monkeypatch.setattr(artifacts, "_group_input", broken)
    assert artifacts.project_remappings(solidity()) == []
    monkeypatch.setattr(artifacts, "_group_input", lambda a: None)
    assert artifacts.project_remappings(solidity()) == [] and artifacts.group_input(solidity()) is None


@pytest.fixture
def vyper_project(tmp_path, monkeypatch):
    (tmp_path / "contracts" / "interfaces").mkdir(parents=True)
    (tmp_path / "contracts" / "Vault.vy").write_text(
        "# pragma version ~=0.4.0\n# pragma optimize codesize\n#pragma evm-version cancun\nimport lib\n"
    )
    (tmp_path / "contracts" / "lib.vy").write_text("@internal\ndef f(): pass\n")
    (tmp_path / "contracts" / "interfaces" / "IToken.json").write_text('{"abi": [{"type": "function", "name": "x"}]}')
    imports = {"contracts/Vault.vy": ["contracts/lib.vy", "contracts/interfaces/IToken.json"], "contracts/lib.vy": []}
    asked = []

    def get_imports(files, project):
        asked.append(files[0].name)
        return imports

    monkeypatch.setattr(
        ape, "compilers", SimpleNamespace(vyper=SimpleNamespace(get_imports=get_imports)), raising=False
    )
    project = SimpleNamespace(path=tmp_path)
    settings = {"optimize": "gas", "search_paths": [".", "/home/me/lib"], "outputSelection": {}}
    return SimpleNamespace(project=project, settings=settings, imports=imports, asked=asked)


def vault(vyper_project, version):
    return Artifact(
        "Vault", "contracts/Vault.vy", None, vyper_project.project, "vyper", version, dict(vyper_project.settings)
    )


def test_a_vyper_0_4_input_holds_its_modules_as_sources_and_obeys_its_pragmas(vyper_project):
    got = artifacts.standard_input(vault(vyper_project, "0.4.3"))
    assert got["language"] == "Vyper"
    assert sorted(got["sources"]) == ["contracts/Vault.vy", "contracts/lib.vy"]
    assert got["interfaces"] == {"contracts/interfaces/IToken.json": {"abi": [{"type": "function", "name": "x"}]}}
    assert got["settings"] == {
        "optimize": "codesize",  # the pragma, not the manifest's "gas"
        "evmVersion": "cancun",
        "outputSelection": {"contracts/Vault.vy": VYPER_OUTPUTS},
    }
    assert sorted(vyper_project.asked) == ["Vault.vy", "lib.vy"]  # the JSON interface is not parsed for imports


@pytest.mark.parametrize("version", ["0.3.10", "0.3.10+commit.91361694", "v0.3.7", "0.3.10rc1"])
def test_before_vyper_0_4_an_import_is_an_interface(vyper_project, version):
    got = artifacts.standard_input(vault(vyper_project, version))
    assert list(got["sources"]) == ["contracts/Vault.vy"]
    assert set(got["interfaces"]) == {"contracts/lib.vy", "contracts/interfaces/IToken.json"}


@pytest.mark.parametrize("version", ["0.4.0rc6", "0.4.0b1", "vyper:0.4.3+commit.bff19ea2", "1.0.0"])
def test_from_vyper_0_4_on_and_its_pre_releases_an_import_is_a_module(vyper_project, version):
    got = artifacts.standard_input(vault(vyper_project, version))
    assert sorted(got["sources"]) == ["contracts/Vault.vy", "contracts/lib.vy"]


def test_a_vyper_manifest_version_that_is_none_says_to_recompile(vyper_project):
    # It was read by its first two numbers (`0.3` an interface, `0.3.7junk` too) or, unread, as 0.4.
    with pytest.raises(ArtifactNotFound, match=r"'0\.3\.7junk', which is no vyper compiler version; recompile"):
        artifacts.standard_input(vault(vyper_project, "0.3.7junk"))


def test_an_import_found_nowhere_says_to_install_or_vendor_it(vyper_project):
    vyper_project.imports["contracts/lib.vy"] = ["snekmate/auth/ownable.vy"]
    with pytest.raises(ArtifactNotFound) as missing:
        artifacts.standard_input(vault(vyper_project, "0.4.3"))
    assert "contracts/Vault.vy imports snekmate/auth/ownable.vy" in str(missing.value)
    assert "install it, or vendor it into contracts/" in str(missing.value)
