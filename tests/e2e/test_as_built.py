"""Compile only what Ape did not (issue 40): Ape's own build is the proof.

A scratch project's `ape compile` keeps ape-solidity's build (workflow/ape_builds.py) in the compile
cache; `ape run deploy` with auto on then verifies both contracts on an anvil with no compile
of its own, and submits the input Ape compiled them from (every source of the group). With
`minimal_input` the contract's own sources are sent, compiled again to pre-check them."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from support import BIN, run
from support.e2e import configure, summary
from support.service import Anvil

CONFIG = """\
name: as-built
solidity:
  version: 0.8.26
  optimize: true
  optimization_runs: 500
contract_verify:
  auto: true
"""
SOURCES = {
    "contracts/Token.sol": (
        '// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\nimport "./lib/Halve.sol";\n'
        "contract Token { uint256 public supply; constructor(uint256 s) { supply = Halve.half(s); } }\n"
    ),
    "contracts/lib/Halve.sol": (
        "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\n"
        "library Halve { function half(uint256 x) internal pure returns (uint256) { return x / 2; } }\n"
    ),
    "contracts/Other.sol": (
        "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\ncontract Other { uint256 public x = 3; }\n"
    ),
}
DEPLOY = """\
from ape import accounts, project


def main():
    owner = accounts.test_accounts[0]
    owner.deploy(project.Token, 1000)
    owner.deploy(project.Other)
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The project as `ape compile` left it, and the compile cache it filled (its own, empty before)."""
    root = tmp_path_factory.mktemp("as-built")
    project, cache = root / "as-built", root / "compile-cache"
    for name, text in {**SOURCES, "ape-config.yaml": CONFIG, "scripts/deploy.py": DEPLOY}.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", str(cache))
        run([BIN / "ape", "compile"], cwd=project, timeout=600)
    return project, cache


@pytest.fixture
def scratch(compiled, tmp_path, monkeypatch):
    """A copy of both, for one test's deploy on an anvil of its own."""
    project = shutil.copytree(compiled[0], tmp_path / "as-built")
    cache = shutil.copytree(compiled[1], tmp_path / "compile-cache")
    monkeypatch.setenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", str(cache))
    anvil = Anvil()  # a node that outlives the run: its local explorer's store is kept
    configure(project, foundry={"host": anvil.url})
    yield project, cache
    anvil.stop()


def stored_sources(project: Path) -> dict[str, list[str]]:
    """Each verified contract's submitted source units, as the local explorer keeps them."""
    (db,) = (project / ".build" / "contract_verify").glob("explorer-*.sqlite")
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT contract_name, json_extract(record, '$.source_code') FROM contracts").fetchall()
    return {name.rpartition(":")[2]: sorted(json.loads(code)["sources"]) for name, code in rows}


def deploy(project: Path) -> dict:
    proc = run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"], cwd=project, timeout=600)
    return summary(proc.stdout)


def test_apes_build_verifies_what_it_deployed_with_no_compile_and_the_input_it_was_built_from(scratch):
    project, cache = scratch
    (kept,) = [path.name for path in cache.iterdir()]  # the group's build, kept by `ape compile`
    assert kept.startswith("build-")
    rows = deploy(project)
    assert sorted(outcome for _, outcome, _ in rows.values()) == ["verified", "verified"], rows
    # A compile the run made would be kept under its own key: there is none.
    assert [path.name for path in cache.iterdir()] == [kept]
    assert stored_sources(project) == {name: sorted(SOURCES) for name in ("Token", "Other")}


def test_minimal_input_sends_the_contracts_own_sources_compiled_again(scratch):
    project, cache = scratch
    configure(project, contract_verify={"minimal_input": True})
    rows = deploy(project)
    assert sorted(outcome for _, outcome, _ in rows.values()) == ["verified", "verified"], rows
    assert len([path for path in cache.iterdir() if not path.name.startswith("build-")]) == 2
    assert stored_sources(project) == {
        "Token": ["contracts/Token.sol", "contracts/lib/Halve.sol"],
        "Other": ["contracts/Other.sol"],
    }
