"""A flat file that must compile to the deployed code (issue 21). Under via-IR the compiler's
output can depend on how the sources are laid out: Morpho Blue's `Morpho`, flattened along its
imports, differs from its standard-json compile at byte 1044, and laid out by source unit name (as
solc reads a standard-json input) it does not (the corpus proves that on the real protocol). Here
a small via-IR project in Morpho's layout, on anvil and a real `ape verify serve`, with the
flattener's output spoiled where a test needs a layout that changes the code: the plugin tries
the other layout, and where none keeps the code it says so in one reason and, unless the flat
file was asked for on the command line, sends standard-json instead."""

import shutil

import pytest
import requests

from support import BIN, REPO, load_manifest, run
from support.e2e import ROW, configure, verify_cli
from support.service import Anvil, ServerProcess

OWN_PROJECT = True  # its own project, no dependency: beside the example's group (conftest.py)

REASON = "flattening changes this contract's via-IR output; standard-json reproduces it"


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("viair")
    project = shutil.copytree(REPO / "tests" / "data" / "viair_vault", root / "viair_vault")
    run([BIN / "ape", "compile"], cwd=project, timeout=300)
    anvil = Anvil()
    explorer = None
    try:
        explorer = ServerProcess(anvil.url, root / "explorer.sqlite", use_ape=True)
        configure(
            project,
            foundry={"host": anvil.url},
            contract_verify={
                "auto": False,
                "max_retries": 1,
                "poll_interval": 0.5,
                "calls_per_second": 50,
                "explorers": {"ethereum": {"local": {"url": explorer.base_url}}},
            },
        )
        code = load_manifest(project)["contractTypes"]["Vault"]["deploymentBytecode"]["bytecode"]
        yield project, anvil, explorer, code
    finally:
        if explorer is not None:
            explorer.stop()
        anvil.stop()


def spoil(monkeypatch, *layouts: str) -> list:
    """The flattener, with `layouts` made to change the code (a constant altered), as via-IR's
    layout sensitivity would; returns the layouts asked for."""
    from ape_contract_verify.derive import flatten as module

    real, asked = module.flatten, []

    def flatten(entry, sources, remappings=(), layout="imports"):
        asked.append(layout)
        result = real(entry, sources, remappings, layout=layout)
        if layout in layouts:
            result = module.FlattenResult(
                result.source.replace("1e6", "1e7"), result.order, result.license, result.pragma
            )
        return result

    monkeypatch.setattr(module, "flatten", flatten)
    return asked


def record(explorer: ServerProcess, address: str) -> dict:
    return requests.get(
        explorer.base_url, params={"module": "contract", "action": "getsourcecode", "address": address}, timeout=10
    ).json()["result"][0]


def row(output: str, address: str) -> tuple:
    found = [
        (m.group(1).strip(), m.group(3), m.group(4).strip())
        for m in ROW.finditer(output)
        if m.group(2).lower() == address.lower()
    ]
    assert found, output
    return found[0]


def test_flattened_along_the_imports_it_verifies(vault):
    project, anvil, explorer, code = vault
    address = anvil.deploy(code)
    proc = verify_cli(project, "contract", address, "--flatten")
    assert row(proc.stdout, address)[:2] == ("Vault", "verified"), proc.stdout + proc.stderr
    source = record(explorer, address)["SourceCode"]
    assert (
        source.index("// File: contracts/interfaces/IVault.sol")
        < source.index("// File: contracts/libraries/MathLib.sol")
        < source.index("// File: contracts/Vault.sol")
    )


def test_a_layout_by_name_is_tried_when_the_imports_change_the_code(vault, monkeypatch):
    project, anvil, explorer, code = vault
    address = anvil.deploy(code)
    asked = spoil(monkeypatch, "imports")
    proc = verify_cli(project, "contract", address, "--flatten")
    assert row(proc.stdout, address)[:2] == ("Vault", "verified"), proc.stdout + proc.stderr
    assert asked[:2] == ["imports", "names"]
    found = record(explorer, address)
    assert found["SourceCode"].lstrip().startswith("// SPDX") and "1e7" not in found["SourceCode"]
    # By name: Vault right after the interface its contract inherits, before the libraries.
    source = found["SourceCode"]
    assert (
        source.index("// File: contracts/interfaces/IVault.sol")
        < source.index("// File: contracts/Vault.sol")
        < source.index("// File: contracts/libraries/MathLib.sol")
    )


def test_asked_for_on_the_command_line_it_ends_with_the_one_reason(vault, monkeypatch):
    project, anvil, explorer, code = vault
    address = anvil.deploy(code)
    spoil(monkeypatch, "imports", "names")
    proc = verify_cli(project, "contract", address, "--flatten")
    name, outcome, rest = row(proc.stdout, address)
    assert (name, outcome) == ("Vault", "pre-check failed") and proc.returncode == 1, proc.stdout
    assert REASON in rest
    for blamed in ("optimizer", "runs", "evmVersion", "settings or source differ"):
        assert blamed not in rest, rest  # standard-json's compile proves the settings right
    assert record(explorer, address)["SourceCode"] == "", "nothing was submitted"


def test_from_the_config_it_falls_back_to_standard_json(vault, monkeypatch):
    project, anvil, explorer, code = vault
    address = anvil.deploy(code)
    spoil(monkeypatch, "imports", "names")
    configure(project, contract_verify={"codeformat": "flatten"})
    try:
        proc = verify_cli(project, "contract", address, "--json")
    finally:
        configure(project, contract_verify={"codeformat": "standard-json"})
    import json

    report = json.loads(proc.stdout)["reports"][0]
    assert report["outcome"] == "verified", report
    assert any(REASON in w and "standard-json was submitted instead" in w for w in report["warnings"]), report
    assert record(explorer, address)["SourceCode"].startswith("{{"), "standard-json, in Etherscan's {{…}} form"


def test_settings_that_are_wrong_are_still_named(vault, tmp_path):
    """Deployed with 200 runs, not the project's 999999: standard-json fails too, so the flat
    file's diagnosis stands and names the setting."""
    project, anvil, explorer, _ = vault
    import json

    from support.service import solc_compile

    sources = {
        f"contracts/{p.relative_to(project / 'contracts')}": {"content": p.read_text()}
        for p in sorted((project / "contracts").rglob("*.sol"))
    }
    out = solc_compile(
        {
            "language": "Solidity",
            "sources": sources,
            "settings": {
                "viaIR": True,
                "optimizer": {"enabled": True, "runs": 200},
                "outputSelection": {"*": {"*": ["evm.bytecode.object"]}},
            },
        }
    )
    address = anvil.deploy(out["contracts"]["contracts/Vault.sol"]["Vault"]["evm"]["bytecode"]["object"])
    proc = verify_cli(project, "contract", "Vault", address, "--flatten", "--json")  # its code matches no artifact
    report = json.loads(proc.stdout)["reports"][0]
    assert report["outcome"] == "pre-check failed", report
    assert "flattening changes" not in report["reason"] and "runs" in report["reason"], report["reason"]
