"""The input for a contract holds every file its sources import, in whatever order ape-solidity
lists a file's imports (issue 38).

The project's Impl.sol imports order-lib's Token.sol by the dependency's name and its Wrapper.sol,
which imports `./Token.sol`; only Token.sol imports order-strings' LibString.sol, and order-lib
declares order-strings itself. ape-solidity reads a file's imports from a set (their order follows
the process's hash seed) and resolves each file's imports once per tree: when Token.sol is first
reached by the dependency's name, its imports are resolved with order-lib's own remappings, which
name no file of this project, and LibString.sol is left out. The tests drive both orders in-process
and compile what the plugin built with no disk behind it (solc-js without an import callback)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import BIN, REPO, load_manifest, tool_env
from support.engine import compiled, single_file_compiled

DATA = REPO / "tests" / "data" / "import_order_project"
LIB, STRINGS = "order-lib", "order-strings"  # this test's own: Ape keeps dependencies by name
LEAF = f"contracts/.cache/{STRINGS}/1.0.0/src/utils/LibString.sol"
TOKEN_LINE, WRAPPER_LINE = "Token.sol", "Wrapper.sol"  # what tells Impl.sol's two import lines apart

PROJECT_CONFIG = """\
name: import-order
solidity:
  version: 0.8.26
dependencies:
  - name: {lib}
    local: {root}/lib
    version: 1.0.0
    config_override:
      contracts_folder: src
  - name: {strings}
    local: {root}/strings
    version: 1.0.0
    config_override:
      contracts_folder: src
"""
LIB_CONFIG = """\
contracts_folder: src
dependencies:
  - name: {strings}
    local: {root}/strings
    version: 1.0.0
    config_override:
      contracts_folder: src
"""


def _data_folder() -> Path:
    from ape import config

    return Path(config.DATA_FOLDER)


def _forget_packages() -> None:
    for name in (LIB, STRINGS):
        for folder in (_data_folder() / "packages").glob(f"*/{name}"):
            shutil.rmtree(folder, ignore_errors=True)


def _seed_listing_first(path: Path, wanted: str) -> str:
    """A hash seed under which ape-solidity lists the import line naming `wanted` first."""
    probe = "import sys, pathlib; from ape_solidity._utils import get_single_import_lines as g; print(g(pathlib.Path(sys.argv[1]))[0])"
    for seed in range(64):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        first = subprocess.run([sys.executable, "-c", probe, path], env=env, capture_output=True, text=True, check=True)
        if wanted in first.stdout:
            return str(seed)
    raise AssertionError(f"no hash seed below 64 lists {wanted} first")


@pytest.fixture(scope="module")
def order_project(tmp_path_factory):
    """The project compiled by `ape compile` in the order its compile works in: in the other,
    ape-solidity's own remaps order-strings as order-lib does, and solc finds no LibString.sol."""
    root = tmp_path_factory.mktemp("order")
    shutil.copytree(DATA, root, dirs_exist_ok=True)
    (root / "lib" / "ape-config.yaml").write_text(LIB_CONFIG.format(root=root, strings=STRINGS))
    project = root / "project"
    (project / "ape-config.yaml").write_text(PROJECT_CONFIG.format(root=root, lib=LIB, strings=STRINGS))
    _forget_packages()
    try:
        env = {**tool_env(), "PYTHONHASHSEED": _seed_listing_first(project / "contracts" / "Impl.sol", WRAPPER_LINE)}
        proc = subprocess.run(
            [BIN / "ape", "compile"], cwd=project, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        yield project
    finally:
        _forget_packages()


@pytest.fixture
def listing_first(monkeypatch):
    """ape-solidity's real import lines, the one naming `first` put first; the plugin's memo of
    resolved imports emptied, so this order is the one it meets."""
    import ape_solidity._models as models

    from ape_contract_verify.derive import artifacts

    real = models.get_single_import_lines

    def drive(first: str) -> None:
        monkeypatch.setattr(
            models, "get_single_import_lines", lambda path: sorted(real(path), key=lambda line: first not in line)
        )
        artifacts._MEMO.clear()

    yield drive
    artifacts._MEMO.clear()


def _impl(project_dir: Path):
    from ape import Project

    from ape_contract_verify.derive.artifacts import find_artifact

    return find_artifact("Impl", Project(project_dir), compile=False)


def _runtime(contract: dict) -> str:
    return contract["evm"]["deployedBytecode"]["object"]


def test_ape_solidity_resolves_token_s_import_only_outside_order_lib_s_context(order_project):
    """The cause: the same import line of Token.sol, resolved for the project (reached by
    `./Token.sol`) and for order-lib (reached by `order-lib/src/Token.sol`)."""
    from ape import Project
    from ape_solidity._models import ImportStatementMetadata

    project = Project(order_project)
    token = order_project / "contracts" / ".cache" / LIB / "1.0.0" / "src" / "Token.sol"
    line = next(line for line in token.read_text().splitlines() if line.startswith("import"))
    for_project = ImportStatementMetadata.parse_line(line, token, project)
    for_lib = ImportStatementMetadata.parse_line(line, token, project, dependency=project.dependencies[LIB]["1.0.0"])
    assert for_project.source_id == LEAF
    assert for_lib.path is None, "ape-solidity resolves it in order-lib's context now: the cause is gone"


@pytest.mark.parametrize("first", [WRAPPER_LINE, TOKEN_LINE])
def test_the_input_compiles_with_no_disk_behind_it_in_either_order(order_project, listing_first, first, tmp_path):
    from ape_contract_verify.derive.artifacts import standard_input
    from ape_contract_verify.engine.compilers import CompileCache

    listing_first(first)
    impl = _impl(order_project)
    built = standard_input(impl)
    # The engine's compile: solc-js with --no-import-callback and an empty base path, so a file
    # missing from the input is an error (ParserError: Source ... not found).
    contract = compiled(CompileCache(directory=tmp_path), impl.compiler_version, built, impl.source_id, "Impl")
    assert LEAF in built["sources"], sorted(built["sources"])
    manifest = load_manifest(order_project)["contractTypes"]["Impl"]
    # The very code Ape compiled, metadata hash included: the same sources, under the same names.
    assert "0x" + _runtime(contract) == manifest["runtimeBytecode"]["bytecode"]


@pytest.mark.parametrize("first", [WRAPPER_LINE, TOKEN_LINE])
def test_the_flat_file_compiles_in_either_order(order_project, listing_first, first, tmp_path):
    from ape_contract_verify.derive.artifacts import standard_input
    from ape_contract_verify.derive.flatten import flatten
    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.evm.bytecode import strip_metadata

    listing_first(first)
    impl = _impl(order_project)
    built = standard_input(impl)
    sources = {unit: source["content"] for unit, source in built["sources"].items()}
    flat = flatten(impl.source_id, sources, built["settings"].get("remappings") or ())
    assert flat.order[0] == LEAF and "library LibString" in flat.source
    optimizer = built["settings"]["optimizer"]
    cache = CompileCache(directory=tmp_path)
    contract = single_file_compiled(
        cache, impl.compiler_version, flat.source, "Impl", optimizer=optimizer["enabled"], runs=optimizer["runs"]
    )
    manifest = load_manifest(order_project)["contractTypes"]["Impl"]["runtimeBytecode"]["bytecode"]
    assert strip_metadata(_runtime(contract)) == strip_metadata(manifest)


def test_the_inputs_are_the_same_in_either_order(order_project, listing_first):
    from ape_contract_verify.derive.artifacts import group_input, standard_input

    built, groups = {}, {}
    for first in (WRAPPER_LINE, TOKEN_LINE):
        listing_first(first)
        impl = _impl(order_project)
        built[first] = json.dumps(standard_input(impl), sort_keys=True)
        group = group_input(impl)
        assert group is not None and LEAF in group["sources"], first
        del group["settings"]["outputSelection"]  # ape-solidity's list of its files; no compile here reads it
        groups[first] = json.dumps(group, sort_keys=True)
    assert built[WRAPPER_LINE] == built[TOKEN_LINE]
    assert groups[WRAPPER_LINE] == groups[TOKEN_LINE]


@pytest.mark.parametrize("first", [WRAPPER_LINE, TOKEN_LINE])
def test_types_only_the_imports_define_are_found_in_either_order(order_project, listing_first, first, tmp_path):
    """Identification compiles the project's imports to find the types only they define: that
    input is closed over its imports too, or in one order it does not compile and finds none."""
    from ape import Project

    from ape_contract_verify.derive import artifacts
    from ape_contract_verify.engine.compilers import CompileCache

    listing_first(first)
    artifacts._MEMO.clear()
    try:
        found = artifacts.closure_artifacts(Project(order_project), CompileCache(directory=tmp_path))
    finally:
        artifacts._MEMO.clear()
    assert {"Token", "Wrapper"} <= {a.name for a in found}, sorted(a.label for a in found)
