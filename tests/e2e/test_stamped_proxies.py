"""Proxies known by what their code does, and data known as data (issue 38): tests/data/stamped_project,
a wallet factory on Solady's LibClone (solady from npm), deployed by `ape run deploy` with auto on
through a hosted node's proxy that refuses traces (the CREATE2 accounts are found by replaying the
run's transactions). Its accounts are ERC-1967 minimal proxies, ERC1967I and beacon proxies, Solady's
own clones and a clone with immutable arguments: no source compiles to any of them, so each is
linked to its implementation, counted done, and never "name the contract type", after the deploy,
by address, in a dry run and in `ape verify status`. An SSTORE2 pointer and a contract whose
constructor returns raw bytes (deployed by name) are data contracts, nothing to verify."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil

import pytest

from support import REPO
from support.e2e import ROW, ape_in_process, as_json, configure, verify_cli
from support.rpc_proxy import HostedNodeProxy
from support.service import Anvil

pytestmark = pytest.mark.timeout(600)
OWN_PROJECT = True  # its own project (its one dependency a local package): beside the example's group

DEPLOYED = re.compile(r"^DEPLOYED (\w+) (0x[0-9a-fA-F]{40})$", re.M)
ACCOUNTS = {  # what each account's row is labelled: its template, as its code shows it
    "ERC1967": "EIP-1967 minimal proxy",
    "ERC1967I": "EIP-1967 minimal proxy",
    "BeaconProxy": "EIP-1967 beacon minimal proxy",
    "Clone": "minimal proxy",
    "CloneWithArgs": "EIP-1167 clone",
}
DATA = ("Pointer", "RawBytes")
DATA_LINE = "a data contract (its code does nothing: run from its start, it halts at once): nothing to verify"
SOLADY = REPO / "toolchain" / "node_modules" / "solady"


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.server.runner import start_embedded
    from ape_contract_verify.workflow import after_deploy
    from support.e2e import reset_hook

    solc_path = os.environ.get("SOLCX_BINARY_PATH")
    os.environ.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))  # in-process compiles, as `make` sets it
    project = shutil.copytree(REPO / "tests" / "data" / "stamped_project", tmp_path_factory.mktemp("stamped") / "p")
    anvil = Anvil()
    node = HostedNodeProxy(anvil.url)
    explorer = start_embedded(JsonRpcChain(anvil.url))
    configure(
        project,
        dependencies=[
            {
                "name": "solady",
                "local": str(SOLADY),
                "version": "0.1.26",
                "config_override": {"contracts_folder": "src"},
            }
        ],
        foundry={"host": node.url},
        contract_verify={
            "auto": True,
            "max_retries": 1,
            "poll_interval": 0.5,
            "calls_per_second": 50,
            "explorers": {"ethereum": {"local": {"url": explorer.base_url}}},
        },
    )
    try:
        proc = ape_in_process(project, "run", "deploy", "--network", "ethereum:local:foundry")
        pending, advice = io.StringIO(), io.StringIO()  # under pytest the summary is still pending
        with contextlib.redirect_stdout(pending), contextlib.redirect_stderr(advice):
            after_deploy.HOOK.print_summary()
        reset_hook()
        output = proc.stdout + pending.getvalue()
        assert proc.returncode == 0, output[-4000:] + proc.stderr[-4000:]
        yield {
            "project": project,
            "output": output,
            "stderr": proc.stderr + advice.getvalue(),
            "made": dict(DEPLOYED.findall(output)),
            "node": node,
        }
    finally:
        reset_hook()
        explorer.stop()
        node.stop()
        anvil.stop()
        if solc_path is None:
            os.environ.pop("SOLCX_BINARY_PATH", None)


def rows_for(output: str, address: str) -> list[tuple[str, str, str]]:
    return [
        (m.group(1).strip(), m.group(3), m.group(4).strip())
        for m in ROW.finditer(output)
        if m.group(2).lower() == address.lower()
    ]


def test_every_account_is_linked_and_counted_done_after_the_deploy(deployed):
    said = deployed["output"] + deployed["stderr"]
    assert deployed["node"].refused.get("debug_traceBlockByNumber"), "the node must refuse traces"
    assert "name the contract type" not in said and "skipped" not in said, said[-4000:]
    for kind, label in ACCOUNTS.items():
        rows = rows_for(deployed["output"], deployed["made"][kind])
        assert rows == [(f"{label} (proxy link)", "verified", rows[0][2])], (kind, rows)
    implementation = rows_for(deployed["output"], deployed["made"]["Account"])
    assert [(r[0], r[1]) for r in implementation] == [("Account", "verified")], implementation
    for name in DATA:  # RawBytes was deployed by name: its code is data all the same
        rows = rows_for(deployed["output"], deployed["made"][name])
        assert [r[:2] for r in rows] == [("data contract", "nothing to verify")], (name, rows)
        assert rows[0][2].endswith(DATA_LINE), rows  # after the target's column
    assert re.search(
        r"^contract_verify: ethereum:local:foundry: \d+ rows, \d+ verified, 2 nothing to verify$",
        deployed["stderr"],
        re.M,
    ), deployed["stderr"][-2000:]
    assert "not verified" not in deployed["stderr"] and "Traceback" not in said


@pytest.mark.parametrize("kind", sorted(ACCOUNTS))
def test_by_address_an_account_is_linked_and_exits_0(deployed, kind):
    address = deployed["made"][kind]
    proc = verify_cli(deployed["project"], "contract", address, "--json")
    report = as_json(proc)
    assert proc.returncode == 0 and report["ok"], report
    mine = [r for r in report["reports"] if r["address"].lower() == address.lower()]
    assert [(r["kind"], r["contract"]) for r in mine] == [("proxy", f"{ACCOUNTS[kind]} (proxy link)")], mine
    assert mine[0]["implementation"].lower() == deployed["made"]["Account"].lower(), mine


@pytest.mark.parametrize("name", DATA)
def test_by_address_and_in_a_dry_run_a_data_contract_is_named_as_data(deployed, name):
    address = deployed["made"][name]
    report = as_json(verify_cli(deployed["project"], "contract", address, "--json"))
    assert report["ok"] and [(r["outcome"], r["reason"]) for r in report["reports"]] == [
        ("nothing to verify", DATA_LINE)
    ], report
    dry = verify_cli(deployed["project"], "contract", address, "--dry-run")
    assert dry.returncode == 0 and f"data contract {address}: {DATA_LINE}" in dry.stdout, dry.stdout + dry.stderr


def test_a_dry_run_of_an_account_plans_only_its_link(deployed):
    address = deployed["made"]["ERC1967"]
    dry = verify_cli(deployed["project"], "contract", address, "--dry-run")
    said = dry.stdout + dry.stderr
    assert dry.returncode == 0, said[-3000:]
    assert f"EIP-1967 minimal proxy (proxy link) {address}: verifyproxycontract" in dry.stdout, said[-3000:]
    assert "name the contract type" not in said and "NOT SENT" not in said, said[-3000:]


def test_status_exits_0_with_every_account_linked(deployed):
    # A new process: Ape's in-memory records of other modules' local deployments are not this chain's.
    proc = verify_cli(deployed["project"], "status", "--json", real=True)
    status = as_json(proc)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = {row["address"].lower(): row for row in status["rows"]}
    for kind in ACCOUNTS:
        row = rows[deployed["made"][kind].lower()]
        assert row["proxy"]["stamped"] is True, row
        assert [t["state"] for t in row["targets"].values()] == ["linked"], row
    for name in DATA:
        assert [t["state"] for t in rows[deployed["made"][name].lower()]["targets"].values()] == ["data contract"]
