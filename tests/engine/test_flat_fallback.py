"""A flat file the flattener refuses (issue 27): an abicoder-v2 file importing an abicoder-v1 one
(tests/data/mixed_abicoder, solc 0.7.6) cannot be one file. `codeformat: flatten` from the config
sends standard-json with the flattener's reason, pre-check or not; the flat file asked for on the
command line (`strict_format`) ends with that reason. Real compiles, deployed on anvil; the
end-to-end run through `ape run` and `ape verify` is tests/e2e/test_flat_fallback_e2e.py's."""

import json
import os
import shutil

import pytest

from support import REPO
from support.service import Anvil, encode

pytestmark = pytest.mark.timeout(300)

FALLBACK = "(so standard-json was submitted instead)"


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """(project, chain reader, {name: address}): the project compiled in this process, on one anvil."""
    from ape import Project

    from ape_contract_verify.evm.chain import JsonRpcChain

    solc_path = os.environ.get("SOLCX_BINARY_PATH")
    os.environ.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))  # in-process compiles, as `make` sets it
    root = shutil.copytree(REPO / "tests" / "data" / "mixed_abicoder", tmp_path_factory.mktemp("mixed") / "mixed")
    anvil = Anvil()
    try:
        project = Project(root)
        project.load_contracts()
        types = project.manifest.contract_types
        addresses = {
            "Registry": anvil.deploy(types["Registry"].deployment_bytecode.bytecode, encode(["string"], ["mixed"])),
            "Plain": anvil.deploy(types["Plain"].deployment_bytecode.bytecode),
        }
        yield project, JsonRpcChain(anvil.url), addresses
    finally:
        anvil.stop()
        if solc_path is None:
            os.environ.pop("SOLCX_BINARY_PATH", None)


def derive_as(deployed, name: str, **options):
    from ape_contract_verify.derive.artifacts import find_artifact
    from ape_contract_verify.derive.derive import derive
    from ape_contract_verify.engine.compilers import CompileCache

    project, reader, addresses = deployed
    return derive(find_artifact(name, project), addresses[name], chain_reader=reader, cache=CompileCache(), **options)


def test_the_flattener_refuses_these_sources(deployed):
    """The premise: the v2 file's imports are v1, and the flattener says so."""
    from ape_contract_verify.derive.flatten import FlattenError, flatten

    project, _, _ = deployed
    sources = {f"contracts/{n}": (project.path / "contracts" / n).read_text() for n in ("Owned.sol", "Registry.sol")}
    with pytest.raises(
        FlattenError, match=r"contracts/Owned.sol uses ABI coder default but contracts/Registry.sol uses ABI coder v2"
    ):
        flatten("contracts/Registry.sol", sources)


@pytest.mark.parametrize("check", [True, False], ids=["pre-checked", "no-check"])
def test_from_the_config_it_falls_back_to_standard_json_with_the_reason(deployed, check):
    from ape_contract_verify.request import CodeFormat

    derivation = derive_as(deployed, "Registry", code_format="flatten", check=check)
    request = derivation.request
    assert request.code_format == CodeFormat.STANDARD_JSON
    assert request.contract_name == "contracts/Registry.sol:Registry"
    assert set(json.loads(request.source_code)["sources"]) == {"contracts/Owned.sol", "contracts/Registry.sol"}
    assert request.constructor_arguments == encode(["string"], ["mixed"]).hex()
    assert derivation.match == ("full" if check else None)
    (warning,) = [w for w in derivation.warnings if FALLBACK in w]
    assert warning.startswith(
        "cannot flatten: contracts/Owned.sol uses ABI coder default but contracts/Registry.sol uses ABI coder v2"
    ), warning


@pytest.mark.parametrize("check", [True, False], ids=["pre-checked", "no-check"])
def test_asked_for_on_the_command_line_it_ends_with_the_reason(deployed, check):
    from ape_contract_verify.derive.derive import PrecheckFailed

    with pytest.raises(PrecheckFailed) as raised:
        derive_as(deployed, "Registry", code_format="flatten", check=check, strict_format=True)
    assert raised.value.field == "codeformat"
    assert "uses ABI coder v2; one file cannot mix them, submit standard-json" in raised.value.reason, (
        raised.value.reason
    )


def test_a_file_that_flattens_is_still_sent_flat(deployed):
    """The fallback is for refusals only: a contract of one ABI coder goes as the flat file asked for."""
    from ape_contract_verify.request import CodeFormat

    for check in (True, False):
        derivation = derive_as(deployed, "Plain", code_format="flatten", check=check)
        assert derivation.request.code_format == CodeFormat.SINGLE_FILE
        assert "contract Plain" in derivation.request.source_code
        assert not [w for w in derivation.warnings if "standard-json" in w], derivation.warnings
        # One file's name is not the project's, and the metadata hash holds it: a partial match.
        assert derivation.match == ("partial" if check else None)
