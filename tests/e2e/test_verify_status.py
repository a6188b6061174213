"""`ape verify status` (issue 23): every recorded deployment on every target, two networks.

Network one is the session's deployed example (read only: its ledger, its two explorers). Network
two is a chain of this module's own, a custom network on a second anvil with three targets (two
explorers' Etherscan-style APIs, one's Sourcify face), where a beacon is upgraded by a raw
transaction after the proxies were linked: one explorer is linked again, the other keeps the old
link (stale), and the new implementation is verified on one target only (not verified on two)."""

import shutil
from types import SimpleNamespace

import pytest
import requests
from eth_abi import encode
from eth_utils import keccak, to_checksum_address

from support import load_manifest
from support.e2e import ape_in_process, as_json, configure, copy_project, forget_connections, sourcify_base
from support.service import Anvil, ServerProcess

pytestmark = pytest.mark.timeout(900)

TWO = "ethereum:anvil-two:node"
ONE = "ethereum:local:foundry"


def _selector(signature: str) -> bytes:
    return keccak(text=signature)[:4]


def _record(project, anvil_url: str, network: str, entries: list[tuple[str, str]]) -> None:
    """What `ape run` records with auto off, for a chain this module deployed on by hand."""
    from ape import networks

    from ape_contract_verify.workflow.ledger import Ledger

    try:
        with networks.parse_network_choice("ethereum:local:foundry", provider_settings={"host": anvil_url}):
            ledger = Ledger.for_chain(SimpleNamespace(path=project), 31337)
            for name, address in entries:
                ledger.recorded(name, address, network)
    finally:
        forget_connections(networks)


def _cli(project, *args):
    """`ape verify ARGS` in this process. Ape caches the custom networks of the first project's
    config it reads: drop that before (so ours, anvil-two, is found) and after (so it is gone)."""
    from ape import networks

    networks._invalidate_cache()
    try:
        return ape_in_process(project, "verify", *args)
    finally:
        networks._invalidate_cache()


@pytest.fixture(scope="module")
def world(example_on_anvil, tmp_path_factory):
    root = tmp_path_factory.mktemp("status")
    project = copy_project(example_on_anvil.project, root / "example")
    shutil.copytree(example_on_anvil.project / ".build" / "contract_verify", project / ".build" / "contract_verify")
    anvil = Anvil()
    servers = []
    try:
        servers = [ServerProcess(anvil.url, root / f"{name}.sqlite") for name in ("first", "mirror")]
        first, mirror = servers
        config = {
            "networks": {
                "custom": [
                    {"name": "anvil-two", "chain_id": 31337, "ecosystem": "ethereum", "default_provider": "node"}
                ]
            },
            "node": {"ethereum": {"anvil-two": {"uri": anvil.url}}},
            "contract_verify": {
                "auto": False,
                "max_retries": 1,
                "poll_interval": 0.5,
                "calls_per_second": 50,
                "explorers": {
                    "ethereum": {
                        "local": {
                            "url": example_on_anvil.explorer.base_url,
                            "sourcify": {"url": sourcify_base(example_on_anvil.sourcify)},
                        },
                        "anvil-two": {
                            "url": first.base_url,
                            "mirror": {"url": mirror.base_url, "kind": "etherscan"},
                            "sourcify": {"url": sourcify_base(first)},
                        },
                    }
                },
            },
        }
        configure(project, **config)
        types = load_manifest(project)["contractTypes"]

        def creation(name: str) -> bytes:
            return bytes.fromhex(types[name]["deploymentBytecode"]["bytecode"].removeprefix("0x"))

        owner = anvil.accounts[0]
        box, box2 = anvil.deploy(creation("Box")), anvil.deploy(creation("Box"))
        beacon = anvil.deploy(creation("UpgradeableBeacon"), encode(["address", "address"], [box, owner]))
        init = _selector("initialize(uint256,address)") + encode(["uint256", "address"], [42, owner])
        proxy = anvil.deploy(creation("BeaconProxy"), encode(["address", "bytes"], [beacon, init]))
        _record(project, anvil.url, TWO, [("Box", box), ("UpgradeableBeacon", beacon), ("BeaconProxy", proxy)])
        proc = _cli(project, "all", "--network", TWO)
        assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]

        # The upgrade, made elsewhere: a raw transaction to the beacon. The proxy now runs box2.
        anvil.transact(_selector("upgradeTo(address)") + encode(["address"], [box2]), to=beacon)
        _record(project, anvil.url, TWO, [("Box", box2)])
        # Only the first explorer hears of it: box2 verified there and the proxy linked again.
        proc = _cli(project, "all", "--network", TWO, "--target", "etherscan")
        assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
        addresses = {
            name: to_checksum_address(a)
            for name, a in (("box", box), ("box2", box2), ("beacon", beacon), ("proxy", proxy))
        }
        yield SimpleNamespace(project=project, example=example_on_anvil, first=first, mirror=mirror, **addresses)
    finally:
        for server in servers:
            server.stop()
        anvil.stop()


def _getsourcecode(base_url: str, address: str) -> dict:
    answer = requests.get(
        base_url, params={"module": "contract", "action": "getsourcecode", "address": address}, timeout=30
    ).json()
    item = answer["result"][0]
    verified = bool(item.get("SourceCode")) and not str(item.get("ABI", "")).startswith(
        "Contract source code not verified"
    )
    return {"verified": verified, "implementation": item.get("Implementation") if item.get("Proxy") == "1" else ""}


def _lookup(base: str, address: str) -> dict:
    return requests.get(f"{base}v2/contract/31337/{address}", params={"fields": "proxyResolution"}, timeout=30).json()


def _explorers(world) -> dict:
    """network -> target -> (kind, base URL), as configured."""
    example = world.example
    return {
        "ethereum:local": {
            "etherscan": ("etherscan", example.explorer.base_url),
            "sourcify": ("sourcify", sourcify_base(example.sourcify)),
        },
        "ethereum:anvil-two": {
            "etherscan": ("etherscan", world.first.base_url),
            "mirror": ("etherscan", world.mirror.base_url),
            "sourcify": ("sourcify", sourcify_base(world.first)),
        },
    }


def test_every_row_on_both_networks_says_what_each_explorer_answers(world):
    configure(world.project, contract_verify={"required_targets": ["etherscan"]})
    proc = _cli(world.project, "status", "--all-networks", "--json")
    document = as_json(proc)
    rows = document["rows"]
    explorers = _explorers(world)
    assert {r["network"] for r in rows} == set(explorers), rows
    from ape_contract_verify.workflow.ledger import Ledger

    recorded = sum(
        len(Ledger(p).entries()) for p in (world.project / ".build" / "contract_verify").glob("deployments-*.sqlite")
    )
    assert len(rows) == recorded and recorded >= 20
    for row in rows:
        assert set(row["targets"]) == set(explorers[row["network"]]), row
        chain_impl = (row["proxy"] or {}).get("implementation")
        for name, status in row["targets"].items():
            kind, base = explorers[row["network"]][name]
            assert status["kind"] == kind
            if kind == "sourcify":
                said = _lookup(base, row["address"])
                unmatched = "no source" if (row["proxy"] or {}).get("stamped") else "not verified"  # a template
                assert status["state"] == ("verified" if said["match"] else unmatched), (row, said)
                assert status["match"] == {"exact_match": "full", "match": "partial", None: None}[said["match"]]
                continue
            said = _getsourcecode(base, row["address"])
            if not said["verified"]:
                assert status["state"] == "not verified", (row, said)
                continue
            linked = said["implementation"]
            expected = (
                "verified"
                if chain_impl is None
                else "not linked"
                if not linked
                else "linked"
                if linked.lower() == chain_impl.lower()
                else "stale link"
            )
            assert status["state"] == expected, (row, said)
            assert (status["implementation"] or "").lower() == (linked or "").lower()

    two = {r["address"]: r for r in rows if r["network"] == "ethereum:anvil-two"}
    proxy = two[world.proxy]
    assert proxy["proxy"] == {"kind": "EIP-1967 beacon", "implementation": world.box2, "stamped": False}
    assert (
        proxy["targets"]["etherscan"]["state"] == "linked"
        and proxy["targets"]["etherscan"]["implementation"] == world.box2
    )
    assert (
        proxy["targets"]["mirror"]["state"] == "stale link"
        and proxy["targets"]["mirror"]["implementation"] == world.box
    )
    assert (
        world.box2 in proxy["targets"]["mirror"]["reason"]
        and "ape verify proxy" in proxy["targets"]["mirror"]["reason"]
    )
    assert proxy["targets"]["sourcify"]["state"] == "verified"
    # (The local Sourcify face answers for box2 as it does for box, whose code it has: the loop above holds it to that.)
    assert [two[world.box2]["targets"][t]["state"] for t in ("etherscan", "mirror")] == ["verified", "not verified"]
    assert all(s["state"] == "verified" for a in (world.box, world.beacon) for s in two[a]["targets"].values())
    # Network one: the session's deploy, linked and verified on its Etherscan-style target.
    one = [r for r in rows if r["network"] == "ethereum:local"]
    assert sum(1 for r in one if r["targets"]["etherscan"]["state"] == "linked") >= 5, one
    # Only etherscan counts, and it holds everything: exit 0 though mirror and sourcify lack some.
    assert proc.returncode == 0 and document["ok"] is True, proc.stderr[-3000:]
    assert document["required_targets"] == ["etherscan"]


def test_the_table_and_the_exit_code_follow_required_targets(world):
    configure(world.project, contract_verify={"required_targets": ["etherscan"]})
    proc = _cli(world.project, "status", "--network", TWO)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    # (Ape's own INFO lines go to stdout too.)
    lines = {
        line.split()[1]: line
        for line in proc.stdout.splitlines()
        if len(line.split()) > 2 and line.split()[1].startswith("0x")
    }
    assert set(lines) == {world.box, world.box2, world.beacon, world.proxy}, proc.stdout
    head = next(line for line in proc.stdout.splitlines() if line.startswith("contract ")).split()
    assert head == ["contract", "address", "proxy", "etherscan", "mirror", "sourcify"], head
    short = lambda a: f"{a[:6]}…{a[-4:]}"  # noqa: E731
    assert f"linked {short(world.box2)}" in lines[world.proxy] and f"STALE {short(world.box)}" in lines[world.proxy]
    assert lines[world.box2].split()[2:5] == ["-", "verified", "NOT"]
    # What does not count is said, as a warning.
    assert f"WARNING: BeaconProxy {world.proxy} on mirror (ethereum:anvil-two): stale link" in proc.stderr

    # A required target lacking a verification: exit 1, the reason on stderr.
    configure(world.project, contract_verify={"required_targets": ["etherscan", "mirror"]})
    proc = _cli(world.project, "status", "--network", TWO, "--json")
    assert proc.returncode == 1 and as_json(proc)["ok"] is False
    assert f"ERROR: Box {world.box2} on mirror (ethereum:anvil-two): not verified" in proc.stderr
    assert f"ERROR: BeaconProxy {world.proxy} on mirror (ethereum:anvil-two): stale link" in proc.stderr
    # Unset: every target counts.
    configure(world.project, contract_verify={"required_targets": None})
    assert _cli(world.project, "status", "--network", TWO).returncode == 1
    # --target narrows the view to the targets named, and so what counts.
    proc = _cli(world.project, "status", "--network", TWO, "--target", "etherscan", "--json")
    assert proc.returncode == 0 and {t for r in as_json(proc)["rows"] for t in r["targets"]} == {"etherscan"}


def test_bad_input_is_named(world):
    proc = _cli(world.project, "status", "--wait")
    assert proc.returncode == 2 and "--wait" in proc.stderr and "GUID" in proc.stderr
    proc = _cli(world.project, "status", "--all-networks", "--network", TWO)
    assert proc.returncode == 2 and "--all-networks" in proc.stderr
    proc = _cli(world.project, "status", "not-a-guid", "--all-networks")
    assert proc.returncode == 2 and "--all-networks" in proc.stderr
    assert "Traceback" not in proc.stderr
