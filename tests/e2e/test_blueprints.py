"""ERC-5202 blueprints (issue 29): tests/data/blueprint_project, a Vyper 0.3.10 factory system, by
`ape run deploy` with auto on, in this process: a Pool blueprint declared through an account and
one through the container, a Gauge blueprint sent by a raw transaction, and a Factory that makes
two pools and their gauges with `create_from_blueprint(..., code_offset=3)` and constructor
arguments (the pools' and gauges' immutables), no event naming them. Once on an anvil Ape reads
directly (traces) and once through a hosted node's proxy that refuses traces. Every contract is
verified on an Etherscan-style explorer (the blueprints as blueprints: body against the compiled
creation code); the Sourcify target's rows for the blueprints say `unsupported`, as Sourcify's API
answers a blueprint today. Then by address, `ape verify status`, and an edited source refused
without blaming a setting."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import time
from types import SimpleNamespace as NS

import pytest
import requests
from eth_abi import encode
from eth_utils import keccak, to_checksum_address

from support import BIN, REPO, run
from support.e2e import ape_in_process, as_json, configure, verify_cli
from support.rpc_proxy import HostedNodeProxy
from support.service import Anvil

pytestmark = pytest.mark.timeout(900)
OWN_PROJECT = True  # its own project, no dependency: beside the example's group (conftest.py)

DEPLOYED = re.compile(r"^DEPLOYED (\w+) (0x[0-9a-fA-F]{40})$", re.M)
ROW = re.compile(
    r"^(\S.*?)\s{2,}(0x[0-9a-fA-F]{40})\s{2,}(verified|already verified|failed|pre-check failed|error|skipped|"
    r"unsupported)\s{2,}(etherscan|sourcify)\b(.*)$",
    re.M,
)
BLUEPRINTS = ("PoolBlueprint", "SparePoolBlueprint", "GaugeBlueprint")
MADE = ("Factory", "Pool0", "Gauge0", "Pool1", "Gauge1")
DONE = ("verified", "already verified")
SETTING_WORDS = ("optimi", "evmversion", "evm version", "settings differ", "setting", "viair")


@pytest.fixture(scope="module")
def vvm(tmp_path_factory):
    """A VVM_BINARY_PATH holding vyper 0.3.10 (toolchain/install.sh's side venv), for ape-vyper."""
    exe = REPO / ".vyper" / "0.3.10" / "bin" / "vyper"
    assert exe.exists(), f"vyper 0.3.10 is missing at {exe}: run toolchain/install.sh"
    folder = tmp_path_factory.mktemp("vvm")
    (folder / "vyper-0.3.10").symlink_to(exe)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VVM_BINARY_PATH", str(folder))
        yield folder


@pytest.fixture(scope="module")
def compiled(vvm, tmp_path_factory):
    project = shutil.copytree(REPO / "tests" / "data" / "blueprint_project", tmp_path_factory.mktemp("bp") / "bp")
    proc = ape_in_process(project, "compile")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    manifest = json.loads((project / ".build" / "__local__.json").read_text())
    assert next(c for c in manifest["compilers"] if c["name"] == "vyper")["version"] == "0.3.10"
    return NS(path=project, types=manifest["contractTypes"])


def _deploy(compiled, root, hosted: bool) -> NS:
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.server.runner import start_embedded
    from ape_contract_verify.workflow import after_deploy
    from support.e2e import reset_hook

    project = shutil.copytree(compiled.path, root / "project")
    anvil = Anvil()
    node = HostedNodeProxy(anvil.url) if hosted else None
    explorer = start_embedded(JsonRpcChain(anvil.url))
    sourcify = start_embedded(JsonRpcChain(anvil.url))  # its Sourcify face, a store of its own
    configure(
        project,
        foundry={"host": node.url if node else anvil.url},
        contract_verify={
            "auto": True,
            "max_retries": 1,
            "poll_interval": 0.5,
            "calls_per_second": 50,
            "explorers": {
                "ethereum": {"local": {"url": explorer.base_url, "sourcify": {"url": sourcify.sourcify_url}}}
            },
        },
    )
    started = time.monotonic()
    try:
        proc = ape_in_process(project, "run", "deploy", "--network", "ethereum:local:foundry")
        pending = io.StringIO()  # under pytest the summary is still pending: printed as `ape run` would
        with contextlib.redirect_stdout(pending):
            after_deploy.HOOK.print_summary()
    finally:
        reset_hook()
    output = proc.stdout + pending.getvalue()
    assert proc.returncode == 0, output[-4000:] + proc.stderr[-4000:]
    return NS(
        project=project,
        anvil=anvil,
        node=node,
        explorer=explorer,
        sourcify=sourcify,
        output=output,
        stderr=proc.stderr,
        made=dict(DEPLOYED.findall(output)),
        seconds=time.monotonic() - started,
        types=compiled.types,
    )


@pytest.fixture(scope="module", params=["traces", "hosted"])
def deployed(request, compiled, tmp_path_factory):
    run = _deploy(compiled, tmp_path_factory.mktemp(request.param), hosted=request.param == "hosted")
    try:
        yield run
    finally:
        run.explorer.stop()
        run.sourcify.stop()
        if run.node is not None:
            run.node.stop()
        run.anvil.stop()


def rows(output: str) -> dict:
    """(address lower, target) -> (contract, outcome, rest)."""
    return {
        (m.group(2).lower(), m.group(4)): (m.group(1).strip(), m.group(3), m.group(5).strip())
        for m in ROW.finditer(output)
    }


def record(explorer, address: str) -> dict:
    params = {"module": "contract", "action": "getsourcecode", "address": address}
    return requests.get(explorer.base_url, params=params, timeout=10).json()["result"][0]


def test_every_blueprint_factory_and_pool_is_verified_after_deploy(deployed):
    found = rows(deployed.output)
    assert set(deployed.made) == set(BLUEPRINTS + MADE), deployed.made
    for name, address in deployed.made.items():
        contract, outcome, _ = found.get((address.lower(), "etherscan"), (None, None, None))
        assert outcome in DONE, (
            f"{name} {address}: {found.get((address.lower(), 'etherscan'))}\n{deployed.output[-4000:]}"
        )
        kind = name.rstrip("01").removeprefix("Spare").removesuffix("Blueprint")
        assert contract == (f"{kind} (blueprint)" if name in BLUEPRINTS else kind), (name, contract)
    if deployed.node is not None:  # the proxy really refused the traces: the nonces found the pools
        assert deployed.node.refused.get("debug_traceBlockByNumber"), deployed.node.refused
    assert "Traceback" not in deployed.output + deployed.stderr


def test_sourcify_rows_say_unsupported_for_blueprints_and_verify_the_rest(deployed):
    found = rows(deployed.output)
    for name, address in deployed.made.items():
        contract, outcome, reason = found[(address.lower(), "sourcify")]
        if name in BLUEPRINTS:
            assert outcome == "unsupported" and "argotorg/sourcify#2860" in reason, (name, outcome, reason)
        else:
            assert outcome in DONE, (name, outcome, reason)
    assert "failed" not in {o for (_, t), (_, o, _) in found.items() if t == "sourcify"}
    assert "not verified; run `ape verify all`" not in deployed.stderr, "unsupported is no failure"


def test_the_explorer_holds_blueprints_as_blueprints_and_pools_with_their_arguments(deployed):
    pool_type = deployed.types["Pool"]
    for n, (fee, name) in enumerate(((30, "first"), (5, "second"))):
        token = to_checksum_address("0x" + f"{n + 1:02x}" * 20)
        pool = record(deployed.explorer, deployed.made[f"Pool{n}"])
        assert (pool["ContractName"], pool["MatchType"]) == ("Pool", "full"), pool
        assert pool["ConstructorArguments"] == encode(["address", "uint256", "string"], [token, fee, name]).hex()
        gauge = record(deployed.explorer, deployed.made[f"Gauge{n}"])
        assert gauge["ConstructorArguments"] == encode(["address"], [deployed.made[f"Pool{n}"]]).hex(), gauge
    blueprint = deployed.made["PoolBlueprint"]
    kept = record(deployed.explorer, blueprint)
    assert (kept["ContractName"], kept["MatchType"], kept["ConstructorArguments"]) == ("Pool", "full", ""), kept
    assert kept["CompilerVersion"] == "vyper:0.3.10"
    code = bytes.fromhex(deployed.anvil.rpc("eth_getCode", blueprint, "latest")[2:])
    assert code == b"\xfe\x71\x00" + bytes.fromhex(pool_type["deploymentBytecode"]["bytecode"][2:])
    page = requests.get(f"{deployed.explorer.url}/address/{blueprint}", timeout=30).text
    assert "id='blueprint-note'" in page and "ERC-5202 blueprint" in page
    assert "id='tab-read'" not in page and "id='tab-write'" not in page
    pool_page = requests.get(f"{deployed.explorer.url}/address/{deployed.made['Pool0']}", timeout=30).text
    assert "id='tab-read'" in pool_page and "blueprint-note" not in pool_page


def _call(anvil, to: str, signature: str, types: list, values: list) -> dict:
    return anvil.transact(keccak(text=signature)[:4] + encode(types, values), to=to)


def test_by_address_a_new_blueprint_and_a_new_pool(deployed):
    from support.blueprints import deploy_code

    creation = bytes.fromhex(deployed.types["Gauge"]["deploymentBytecode"]["bytecode"][2:])
    blueprint = to_checksum_address(deployed.anvil.deploy(deploy_code(creation)))
    factory = deployed.made["Factory"]
    _call(
        deployed.anvil,
        factory,
        "make_pool(address,uint256,string)",
        ["address", "uint256", "string"],
        ["0x" + "09" * 20, 7, "third"],
    )
    pool = to_checksum_address(
        "0x"
        + deployed.anvil.rpc(
            "eth_call",
            {"to": factory, "data": "0x" + (keccak(text="pools(uint256)")[:4] + encode(["uint256"], [2])).hex()},
            "latest",
        )[-40:]
    )
    unverified = requests.get(f"{deployed.explorer.url}/address/{blueprint}", timeout=30).text
    assert "not verified" in unverified and "It is an ERC-5202 blueprint" in unverified
    # Named, as the user tried it: the settings were right all along.
    named = as_json(verify_cli(deployed.project, "contract", "Gauge", blueprint, "--target", "etherscan", "--json"))
    assert [(r["contract"], r["outcome"]) for r in named["reports"]] == [("Gauge (blueprint)", "verified")], named
    for address, label in ((blueprint, "Gauge (blueprint)"), (pool, "Pool")):
        report = as_json(verify_cli(deployed.project, "contract", address, "--json"))
        by_target = {r["target"]: r for r in report["reports"]}
        assert by_target["etherscan"]["outcome"] in DONE and by_target["etherscan"]["contract"] == label, report
        if label.endswith("(blueprint)"):
            assert by_target["sourcify"]["outcome"] == "unsupported", report
        else:
            assert by_target["sourcify"]["outcome"] == "verified", report
    assert (
        record(deployed.explorer, pool)["ConstructorArguments"]
        == encode(["address", "uint256", "string"], ["0x" + "09" * 20, 7, "third"]).hex()
    )


def test_status_lists_each_with_its_state_the_blueprints_as_blueprints(deployed):
    proc = verify_cli(deployed.project, "status")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = {
        m.group(0).lower(): line for line in proc.stdout.splitlines() for m in re.finditer(r"0x[0-9a-fA-F]{40}", line)
    }
    for name, address in deployed.made.items():
        line = lines.get(address.lower())
        assert line and "verified" in line and "NOT" not in line, (name, proc.stdout)
        if name in BLUEPRINTS:
            assert "(blueprint)" in line and "unsupported" in line, line
        else:
            assert "(blueprint)" not in line and "unsupported" not in line, line
    from ape_contract_verify.workflow.ledger import Ledger

    [ledger] = Ledger.in_project(NS(path=deployed.project))  # `ape verify all` has nothing left to do
    assert not [
        e
        for e in ledger.deployments()
        if not e.done and e.address.lower() in {a.lower() for a in deployed.made.values()}
    ]
    view = json.loads(verify_cli(deployed.project, "status", "--json").stdout)
    flagged = {r["address"].lower() for r in view["rows"] if r["blueprint"]}
    assert flagged == {deployed.made[n].lower() for n in BLUEPRINTS}, view


def test_an_edited_source_is_refused_without_blaming_a_setting(deployed, tmp_path):
    edited = shutil.copytree(deployed.project, tmp_path / "edited", ignore=shutil.ignore_patterns("contract_verify"))
    path = edited / "contracts" / "Pool.vy"
    path.write_text(path.read_text().replace('assert fee_bps < 10000, "fee"', 'assert fee_bps < 10001, "fee"'))
    compiled = ape_in_process(edited, "compile", "--force")
    assert compiled.returncode == 0, compiled.stderr[-3000:]
    proc = verify_cli(edited, "contract", "Pool", deployed.made["PoolBlueprint"], "--force", "--json")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    reasons = [r["reason"] for r in json.loads(proc.stdout)["reports"]]
    assert reasons and all(r.startswith("source: ") and "ERC-5202 blueprint" in r for r in reasons), reasons
    assert "compiled creation code" in reasons[0] and "differ at byte" in reasons[0], reasons
    assert not [w for w in SETTING_WORDS for r in reasons if w in r.lower()], reasons


def test_auto_off_on_apes_test_provider_records_every_blueprint_and_pool(compiled, tmp_path):
    """Ape's test chain (eth-tester: no traces) with auto off: the ledger gets the declared
    blueprints (by type), the raw one (a creation transaction of the run) and every pool and gauge
    (by nonces), so `ape verify all` sees them."""
    from ape_contract_verify.workflow.ledger import Ledger

    project = shutil.copytree(compiled.path, tmp_path / "project")
    configure(project, contract_verify={"auto": False})
    proc = run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:test"], cwd=project, timeout=300)
    made = dict(DEPLOYED.findall(proc.stdout))
    [ledger] = Ledger.in_project(NS(path=project))
    recorded = {e["address"].lower(): e for e in ledger.entries()}
    assert len(made) == 8 and set(recorded) == {a.lower() for a in made.values()}, (made, recorded)
    for name in ("PoolBlueprint", "SparePoolBlueprint"):
        assert str(recorded[made[name].lower()].get("type", "")).endswith("Pool"), recorded[made[name].lower()]
