"""README.md's Python API example, run as written: extracted from between its markers (so the README
and this test cannot drift) and run with `python` in a copy of the deployed example, on the same
anvil, verifying on the embedded local explorer and reading the status view in the same process."""

import re
import shutil
import sys

from support import REPO, run
from support.e2e import configure, summary

START, END = "<!-- api-example:start -->", "<!-- api-example:end -->"


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    assert text.count(START) == 1 and text.count(END) == 1, "the README has one API example between its markers"
    block = text.split(START, 1)[1].split(END, 1)[0]
    code = re.fullmatch(r"\s*```python\n(.*?)```\s*", block, re.S)
    assert code, "the markers hold one ```python block"
    return code.group(1)


def test_the_example_imports_only_the_package():
    imports = re.findall(r"^\s*(?:import|from)\s+([\w.]+)", readme_example(), re.M)
    assert imports == ["ape_contract_verify"]


def test_the_readme_script_verifies_the_example_and_reads_the_status(example_on_anvil, tmp_path):
    # The deployed project with its ledger (.build/contract_verify), on the anvil itself, and no
    # explorer URL: the network's target is the process's embedded local explorer, which starts empty.
    project = tmp_path / "example"
    shutil.copytree(example_on_anvil.project, project, ignore=shutil.ignore_patterns("__pycache__"))
    configure(project, foundry={"host": example_on_anvil.anvil.url})
    configure(project, contract_verify={"explorers": {}})
    script = project / "verify_example.py"
    script.write_text(readme_example())

    proc = run([sys.executable, script.name], cwd=project, timeout=900, check=False)
    assert proc.returncode == 0, f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"

    check_output(proc.stdout, example_on_anvil.deployed)


def check_output(stdout: str, deployed: dict) -> None:
    rows = summary(stdout)
    # What the deploy script printed is what the script verified: each at its address, freshly.
    for name in ("Token", "Calculator", "MathLib", "Box", "SimpleProxy", "Vault", "Escrow"):
        address, outcome, _ = rows[name]
        assert address.lower() == deployed[name].lower(), name
        assert outcome == "verified", (name, outcome)
    # The status view, read in the same process from the same embedded explorer: one row per
    # recorded deployment, each verified, a proxy linked to the implementation on chain.
    states = {
        address.lower(): targets for address, targets in re.findall(r"^.+? (0x[0-9a-fA-F]{40}) (\{.*\})$", stdout, re.M)
    }
    for name in ("Token", "MathLib", "Box", "Vault", "Escrow", "ViaIRCounter", "TunedStore"):
        assert re.fullmatch(r"\{'\w+': 'verified'\}", states[deployed[name].lower()]), (
            name,
            states[deployed[name].lower()],
        )
    for name in ("SimpleProxy", "UUPSProxy", "TransparentProxy", "BeaconProxy", "OZBeaconProxy"):
        assert re.fullmatch(r"\{'\w+': 'linked'\}", states[deployed[name].lower()]), (
            name,
            states[deployed[name].lower()],
        )
    assert len(states) >= len(deployed)
