"""The standard input `inputs.standard_input` builds: the same as with ape-solidity choosing the
compiler itself (`get_standard_input_json`), for every Solidity contract of the example and its
dependencies, in either order, first and again (the second time from the per-project import
memo); and a memo that notices an import added after it was filled."""

import json
import shutil

import pytest

from support import BIN, run

pytestmark = pytest.mark.e2e

SAME_AS_APE_SOLIDITY = """
import json
from ape import project
from ape_contract_verify.derive import artifacts, inputs

fast = inputs._solidity_inputs


def ape_solidity_chooses(solidity, path, version, project):
    return solidity.get_standard_input_json([path], project=project)


solidity = [a for a in artifacts.iter_artifacts(project) if not a.is_vyper]  # dependencies too
inputs._solidity_inputs = ape_solidity_chooses
theirs = {a.label: inputs.standard_input(a) for a in solidity}
inputs._solidity_inputs = fast
checked = []
# Both orders: inside an import cycle (OpenZeppelin's TransparentUpgradeableProxy and ProxyAdmin
# import each other) what is remembered from the first file must serve the second.
for order in (solidity, solidity[::-1]):
    inputs._IMPORTS.clear()
    for artifact in order:
        for attempt in ("first", "memo"):
            ours = inputs.standard_input(artifact)
            wanted = theirs[artifact.label]
            assert ours == wanted, (artifact.label, attempt, sorted(ours["sources"]), sorted(wanted["sources"]))
        checked.append([artifact.label, len(ours["sources"])])
print(json.dumps(checked))
"""

MEMO_SEES_NEW_IMPORT = """
import json
from pathlib import Path
from ape import project
from ape_contract_verify.derive import artifacts, inputs

artifact = artifacts.find_artifact("Token", project)
before = sorted(inputs.standard_input(artifact)["sources"])
path = artifact.source_path
(path.parent / "Extra.sol").write_text("// SPDX-License-Identifier: MIT\\npragma solidity ^0.8.0;\\nlibrary Extra {}\\n")
text = path.read_text()
path.write_text(text.replace("pragma solidity", 'import "./Extra.sol";\\npragma solidity', 1))
after = sorted(inputs.standard_input(artifact)["sources"])
print(json.dumps({"before": before, "after": after}))
"""


def test_the_input_is_ape_solidity_s_for_every_example_contract(compiled_example):
    out = run([BIN / "python", "-c", SAME_AS_APE_SOLIDITY], cwd=compiled_example, timeout=600).stdout
    checked = dict(json.loads(out.strip().splitlines()[-1]))
    assert {"Token", "BoxUUPS", "CloneFactory", "LegacyStore", "openzeppelin:ProxyAdmin",
            "openzeppelin:TransparentUpgradeableProxy", "viair:ViaIRCounter"} <= set(checked)
    assert all(count >= 1 for count in checked.values())
    assert max(checked.values()) > 1  # some contract brings its imports along


def test_an_import_added_later_is_seen_through_the_memo(compiled_example, tmp_path):
    project = tmp_path / "example"
    shutil.copytree(compiled_example, project, symlinks=True)
    out = run([BIN / "python", "-c", MEMO_SEES_NEW_IMPORT], cwd=project, timeout=300).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    added = set(seen["after"]) - set(seen["before"])
    assert len(added) == 1 and next(iter(added)).endswith("Extra.sol"), seen
