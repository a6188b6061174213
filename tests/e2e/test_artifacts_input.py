"""The standard input `artifacts.standard_input` builds: the same as with ape-solidity choosing the
compiler itself (`get_standard_input_json`), for every Solidity contract of the example and its
dependencies, in either order, first and again (the second time from the per-project import
memo); and a memo that notices an import added after it was filled. The whole group's input
(ape-solidity's, for the remappings a partial match may lack) is asked once per project state."""

import json
import shutil

from support import BIN, run

SAME_AS_APE_SOLIDITY = """
import json
from ape import project
from ape_contract_verify.derive import artifacts

fast = artifacts.inputs_by_version


def ape_solidity_chooses(solidity, paths, project, versions):
    return solidity.get_standard_input_json(paths, project=project)


solidity = [a for a in artifacts.iter_artifacts(project) if not a.is_vyper]  # dependencies too
artifacts.inputs_by_version = ape_solidity_chooses
theirs = {a.label: artifacts.standard_input(a) for a in solidity}
artifacts.inputs_by_version = fast
checked = []
# Both orders: inside an import cycle (OpenZeppelin's TransparentUpgradeableProxy and ProxyAdmin
# import each other) what is remembered from the first file must serve the second.
for order in (solidity, solidity[::-1]):
    artifacts._MEMO.clear()
    for artifact in order:
        for attempt in ("first", "memo"):
            ours = artifacts.standard_input(artifact)
            wanted = theirs[artifact.label]
            assert ours == wanted, (artifact.label, attempt, sorted(ours["sources"]), sorted(wanted["sources"]))
        checked.append([artifact.label, len(ours["sources"])])
print(json.dumps(checked))
"""

MEMO_SEES_NEW_IMPORT = """
import json
from pathlib import Path
from ape import project
from ape_contract_verify.derive import artifacts

artifact = artifacts.find_artifact("Token", project)
before = sorted(artifacts.standard_input(artifact)["sources"])
path = artifact.source_path
(path.parent / "Extra.sol").write_text("// SPDX-License-Identifier: MIT\\npragma solidity ^0.8.0;\\nlibrary Extra {}\\n")
text = path.read_text()
path.write_text(text.replace("pragma solidity", 'import "./Extra.sol";\\npragma solidity', 1))
after = sorted(artifacts.standard_input(artifact)["sources"])
print(json.dumps({"before": before, "after": after}))
"""

GROUP_ONCE_PER_STATE = """
import json
from ape import compilers, project
from ape_contract_verify.derive import artifacts

calls = []
cls = type(compilers.solidity)
theirs = cls.get_standard_input_json
cls.get_standard_input_json = lambda self, *a, **k: calls.append(1) or theirs(self, *a, **k)
box, token = artifacts.find_artifact("Box", project), artifacts.find_artifact("Token", project)
first = artifacts.group_input(box)
first["settings"]["remappings"] = ["changed=by-a-caller"]  # a copy: the memo keeps its own
again, other = artifacts.group_input(box), artifacts.group_input(token)
asked = len(calls)
box.source_path.write_text(box.source_path.read_text() + "\\n// edited\\n")
after = artifacts.group_input(box)
print(json.dumps({"asked": asked, "asked_after_edit": len(calls), "same": again == other,
                  "kept": "changed=by-a-caller" not in (again["settings"].get("remappings") or []),
                  "edit_seen": any("// edited" in s.get("content", "") for s in after["sources"].values()),
                  "sources": len(again["sources"])}))
"""


def test_the_whole_group_s_input_is_asked_once_per_project_state(compiled_example, tmp_path):
    project = tmp_path / "example"
    shutil.copytree(compiled_example, project, symlinks=True)
    out = run([BIN / "python", "-c", GROUP_ONCE_PER_STATE], cwd=project, timeout=300).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    # Box, Box again and Token (one compiler): one ask; an edited source: asked again.
    assert seen["asked"] == 1 and seen["same"] and seen["kept"] and seen["sources"] > 1, seen
    assert seen["asked_after_edit"] == 2 and seen["edit_seen"], seen


def test_the_input_is_ape_solidity_s_for_every_example_contract(compiled_example):
    out = run([BIN / "python", "-c", SAME_AS_APE_SOLIDITY], cwd=compiled_example, timeout=600).stdout
    checked = dict(json.loads(out.strip().splitlines()[-1]))
    assert {
        "Token",
        "BoxUUPS",
        "CloneFactory",
        "LegacyStore",
        "openzeppelin:ProxyAdmin",
        "openzeppelin:TransparentUpgradeableProxy",
        "viair:ViaIRCounter",
    } <= set(checked)
    assert all(count >= 1 for count in checked.values())
    assert max(checked.values()) > 1  # some contract brings its imports along


def test_an_import_added_later_is_seen_through_the_memo(compiled_example, tmp_path):
    project = tmp_path / "example"
    shutil.copytree(compiled_example, project, symlinks=True)
    out = run([BIN / "python", "-c", MEMO_SEES_NEW_IMPORT], cwd=project, timeout=300).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    added = set(seen["after"]) - set(seen["before"])
    assert len(added) == 1 and next(iter(added)).endswith("Extra.sol"), seen
