"""`codeformat: flatten` on a project whose abicoder-v2 file imports an abicoder-v1 one (issue 27),
through the real commands: `ape run deploy` with auto verification verifies every contract (the
mixed one as standard-json, with the flattener's reason; the plain one flat), and `ape verify
contract ADDRESS --flatten` ends with that reason. tests/data/mixed_abicoder on one anvil, `ape`
run in this process, the explorer embedded beside it (derive's own cases: test_flat_fallback.py)."""

import contextlib
import io
import logging
import os
import re
import shutil

import pytest
import requests

from support import REPO
from support.e2e import ROW, ape_in_process, as_json, configure, summary, verify_cli
from support.service import Anvil

pytestmark = pytest.mark.timeout(300)
OWN_PROJECT = True  # its own project, no dependency: beside the example's group (conftest.py)

REASON = "cannot flatten: contracts/Owned.sol uses ABI coder default but contracts/Registry.sol uses ABI coder v2"
FALLBACK = "(so standard-json was submitted instead)"
DEPLOYED = re.compile(r"^DEPLOYED (\w+) (0x[0-9a-fA-F]{40})$", re.M)


def record(explorer, address: str) -> dict:
    params = {"module": "contract", "action": "getsourcecode", "address": address}
    return requests.get(explorer.base_url, params=params, timeout=30).json()["result"][0]


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """(project, explorer, {name: address}, the deploy's output, its warnings): deployed and verified once."""
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.server.runner import start_embedded
    from ape_contract_verify.workflow import after_deploy
    from support.e2e import reset_hook

    solc_path = os.environ.get("SOLCX_BINARY_PATH")
    os.environ.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))  # in-process compiles, as `make` sets it
    project = shutil.copytree(REPO / "tests" / "data" / "mixed_abicoder", tmp_path_factory.mktemp("mixed") / "mixed")
    anvil = Anvil()
    explorer = None
    try:
        explorer = start_embedded(JsonRpcChain(anvil.url))
        configure(
            project,
            foundry={"host": anvil.url},
            contract_verify={
                "auto": True,
                "codeformat": "flatten",
                "max_retries": 1,
                "poll_interval": 0.5,
                "calls_per_second": 50,
                "explorers": {"ethereum": {"local": {"url": explorer.base_url}}},
            },
        )
        warned = _Warnings()
        logging.getLogger("ape.contract_verify").addHandler(warned)
        try:
            proc = ape_in_process(project, "run", "deploy", "--network", "ethereum:local:foundry")
            # Under pytest the run's outermost network context is not the last to exit, so the
            # deploy hook's summary is still pending: printed here, as `ape run` would.
            pending = io.StringIO()
            with contextlib.redirect_stdout(pending):
                after_deploy.HOOK.print_summary()
        finally:
            logging.getLogger("ape.contract_verify").removeHandler(warned)
            reset_hook()
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
        output = proc.stdout + pending.getvalue()
        addresses = dict(DEPLOYED.findall(output))
        assert set(addresses) == {"Registry", "Plain"}, output[-3000:]
        yield project, explorer, addresses, output, warned.lines
    finally:
        if explorer is not None:
            explorer.stop()
        anvil.stop()
        if solc_path is None:
            os.environ.pop("SOLCX_BINARY_PATH", None)


class _Warnings(logging.Handler):
    """The plugin's warnings during the run, as `ape run` prints them to stderr."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def test_the_deploy_verifies_every_contract_from_a_flatten_config(deployed):
    project, explorer, addresses, output, warnings = deployed
    rows = summary(output)
    assert {name: row[1] for name, row in rows.items()} == {"Registry": "verified", "Plain": "verified"}, output[-3000:]
    # The mixed contract went as standard-json ({{…}}, Etherscan's form), the plain one as the flat file asked for.
    assert record(explorer, addresses["Registry"])["SourceCode"].startswith("{{")
    plain = record(explorer, addresses["Plain"])["SourceCode"]
    assert plain.lstrip().startswith("// SPDX") and "contract Plain" in plain
    # Said once, with the reason, for the contract it concerns only.
    fallbacks = [w for w in warnings if FALLBACK in w]
    assert len(fallbacks) == 1 and fallbacks[0].startswith(f"Registry: {REASON}"), warnings


def test_asked_for_on_the_command_line_it_ends_with_the_reason(deployed):
    project, explorer, addresses, _, _ = deployed
    address = addresses["Registry"]
    proc = verify_cli(project, "contract", address, "--flatten", "--force")
    found = [m for m in ROW.finditer(proc.stdout) if m.group(2).lower() == address.lower()]
    assert len(found) == 1, proc.stdout + proc.stderr
    assert (found[0].group(1).strip(), found[0].group(3)) == ("Registry", "pre-check failed"), proc.stdout
    assert f"codeformat: {REASON}" in found[0].group(4) and "submit standard-json" in found[0].group(4), proc.stdout
    assert proc.returncode == 1


def test_by_address_from_the_config_it_says_why_in_the_report(deployed):
    """`ape verify contract ADDRESS` with the config's flatten: submitted again (the explorer holds
    it since the deploy), the reason among the report's warnings."""
    project, explorer, addresses, _, _ = deployed
    report = as_json(verify_cli(project, "contract", addresses["Registry"], "--force", "--json"))["reports"][0]
    assert report["outcome"] == "already verified" and report["ok"], report
    assert any(w.startswith(REASON) and w.endswith(FALLBACK) for w in report["warnings"]), report["warnings"]
