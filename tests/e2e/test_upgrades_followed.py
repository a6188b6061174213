"""Issue 23: upgrades followed to every explorer. One deploy of the example on anvil, verified on
two Etherscan-style explorers at once (`ape verify serve` twice), then three upgrades of every
kind of proxy (UUPS through upgradeToAndCall, transparent through its ProxyAdmin, a beacon moving
two beacon proxies):
1. in `ape run` with auto on: each proxy linked again, on both targets, to its new implementation;
2. in `ape run` with auto off: the ledger marks them, `ape verify all` links them again;
3. by a raw transaction outside Ape: `ape verify all` links it again, and a second one sends
   nothing for it (requests counted by a forwarding proxy in front of both explorers).
The steps share the deployment, so they run in order in one test."""

import json
from http.server import BaseHTTPRequestHandler

import pytest
import requests

from support import BIN, run
from support.e2e import DEPLOYED, anvil_project, configure, verify_cli
from support.loopback import LoopbackServer, reply
from support.service import Anvil, ServerProcess

PROXIES = ("UUPSProxy", "TransparentProxy", "BeaconProxy", "BeaconProxy2")
ADMIN_SLOT = 0xB53127684A568B3173AE13B9F8A6016E243E63B6E8EE1178D6A717850B5D6103

# The upgrade script: no word of verification in it. It reads the addresses the test wrote.
UPGRADE = """
import json
from pathlib import Path

from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    known = json.loads(Path("upgrade-input.json").read_text())
    oz = project.dependencies["openzeppelin"]["5.7.0"]
    uups = deployer.deploy(project.BoxUUPS)
    box = deployer.deploy(project.Box)
    if "BeaconProxy2" not in known:  # a second proxy on the same beacon, for the beacon to move
        known["BeaconProxy2"] = deployer.deploy(
            project.BeaconProxy, known["UpgradeableBeacon"], box.initialize.encode_input(9, deployer.address)
        ).address
    project.BoxUUPS.at(known["UUPSProxy"]).upgradeToAndCall(uups.address, b"", sender=deployer)
    oz.ProxyAdmin.at(known["ProxyAdmin"]).upgradeAndCall(known["TransparentProxy"], box.address, b"", sender=deployer)
    project.UpgradeableBeacon.at(known["UpgradeableBeacon"]).upgradeTo(box.address, sender=deployer)
    print(f"NewBoxUUPS {uups.address}")
    print(f"NewBox {box.address}")
    print(f"BeaconProxy2 {known['BeaconProxy2']}")
"""


class CountingProxy:
    """Forwards every request to one explorer and keeps each request's text (query and body)."""

    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self.seen: list[str] = []
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                counter.seen.append(f"{self.path} {body.decode(errors='replace')}")
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type",)}
                answer = requests.request(
                    self.command, counter.root + self.path, data=body, headers=headers, timeout=120
                )
                reply(
                    self,
                    answer.status_code,
                    answer.content,
                    {"Content-Type": answer.headers.get("Content-Type", "application/json")},
                )

            do_GET = do_POST = _forward

            def log_message(self, *args):
                pass

        from urllib.parse import urlsplit

        parts = urlsplit(self.upstream)
        self.root = f"{parts.scheme}://{parts.netloc}"
        self.server = LoopbackServer(Handler)
        self.url = f"http://127.0.0.1:{self.server.port}{parts.path}"
        self.server.start()

    def mentioning(self, address: str) -> list[str]:
        return [text for text in self.seen if address.lower()[2:] in text.lower()]

    def stop(self) -> None:
        self.server.stop()


def implementation_on(explorer_url: str, address: str) -> str:
    answer = requests.get(
        explorer_url, params={"module": "contract", "action": "getsourcecode", "address": address}, timeout=30
    ).json()
    return answer["result"][0]["Implementation"].lower()


def page_of(server, address: str) -> str:
    return f"{server.base_url.removesuffix('/api')}/address/{address}"


def use_targets(project, first: str, second: str, auto) -> None:
    configure(
        project,
        contract_verify={
            "auto": auto,
            "explorers": {"ethereum": {"local": {"url": first, "mirror": {"url": second, "kind": "etherscan"}}}},
        },
    )


@pytest.fixture(scope="module")
def world(compiled_example, tmp_path_factory):
    root = tmp_path_factory.mktemp("upgrades")
    anvil = Anvil()
    servers: list = []
    counters: list = []
    try:
        for name in ("etherscan", "mirror"):
            servers.append(ServerProcess(anvil.url, root / f"{name}.sqlite", use_ape=True))
        # Every request of the plugin goes through a counter; the test reads the explorers directly.
        counters = [CountingProxy(server.base_url) for server in servers]
        project = anvil_project(compiled_example, root / "example", anvil, counters[0].url)
        use_targets(project, counters[0].url, counters[1].url, True)
        proc = run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"], cwd=project, timeout=900)
        deployed = dict(DEPLOYED.findall(proc.stdout))
        admin = anvil.rpc("eth_getStorageAt", deployed["TransparentProxy"], hex(ADMIN_SLOT), "latest")
        deployed["ProxyAdmin"] = "0x" + admin[-40:]
        (project / "scripts" / "upgrade.py").write_text(UPGRADE)
        yield anvil, servers, counters, project, deployed
    finally:
        for counter in counters:
            counter.stop()
        for server in servers:
            server.stop()
        anvil.stop()


def not_ok(proc) -> str:
    """The reports that failed a `--json` command, first: its output's tail may not hold them."""
    try:
        bad = [r for r in json.loads(proc.stdout)["reports"] if not r["ok"]]
    except (ValueError, KeyError, TypeError):
        bad = []
    return f"not ok: {json.dumps(bad, indent=1)[:4000]}\n--- tail\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"


def upgrade(project, deployed: dict) -> dict:
    (project / "upgrade-input.json").write_text(json.dumps(deployed))
    proc = run([BIN / "ape", "run", "upgrade", "--network", "ethereum:local:foundry"], cwd=project, timeout=600)
    return proc, dict(DEPLOYED.findall(proc.stdout))


def expected(deployed: dict, new: dict) -> dict:
    box = new["NewBox"].lower()
    return {"UUPSProxy": new["NewBoxUUPS"].lower(), "TransparentProxy": box, "BeaconProxy": box, "BeaconProxy2": box}


def links(servers, deployed: dict) -> dict:
    return {
        (name, i): implementation_on(server.base_url, deployed[name])
        for name in PROXIES
        for i, server in enumerate(servers)
    }


def ledger_entries(project) -> dict:
    from ape_contract_verify.workflow.ledger import Ledger

    paths = list((project / ".build" / "contract_verify").glob("deployments-*.sqlite"))
    assert len(paths) == 1, paths
    return {e["address"].lower(): e for e in Ledger(paths[0]).entries()}


def test_upgrades_in_a_run_outside_and_with_auto_off_are_linked_again_on_both_targets(world):
    anvil, servers, counters, project, deployed = world

    # 1. auto on: the run's upgrades are followed on both targets, each with a "(proxy re-link)" row.
    proc, new = upgrade(project, deployed)
    deployed["BeaconProxy2"] = new["BeaconProxy2"]
    want = expected(deployed, new)
    assert links(servers, deployed) == {(name, i): want[name] for name in PROXIES for i in (0, 1)}, proc.stdout[-5000:]
    relinked = [line for line in proc.stdout.splitlines() if "(proxy re-link)" in line]
    for name in ("UUPSProxy", "TransparentProxy", "BeaconProxy"):
        rows = [line for line in relinked if deployed[name] in line]
        assert len(rows) == 2 and all(" verified " in r and want[name] in r.lower() for r in rows), (
            name,
            proc.stdout[-5000:],
        )
    # The proxy deployed in this run on the beacon is linked once the script has ended, so after the
    # upgrade: to the new implementation at once (the links above), with nothing to link again.
    linked = [line for line in proc.stdout.splitlines() if "(proxy link)" in line and deployed["BeaconProxy2"] in line]
    assert len(linked) == 2 and all(" verified " in r for r in linked), proc.stdout[-5000:]
    assert not [line for line in relinked if deployed["BeaconProxy2"] in line], proc.stdout[-5000:]
    # The untouched proxies were not linked again.
    for name in ("SimpleProxy", "OZBeaconProxy"):
        assert not [line for line in relinked if deployed[name] in line]

    # 2. auto off: the run leaves the links as they were and marks the upgrades; `ape verify all` finishes.
    use_targets(project, counters[0].url, counters[1].url, False)
    before = links(servers, deployed)
    proc, newer = upgrade(project, deployed)
    assert "(proxy re-link)" not in proc.stdout
    assert links(servers, deployed) == before, "auto off sent links during the run"
    want = expected(deployed, newer)
    entries = ledger_entries(project)
    for name in PROXIES:
        assert entries[deployed[name].lower()]["upgraded"]["implementation"] == want[name], entries[
            deployed[name].lower()
        ]
    # The explorer's page keeps the link (as Etherscan does) and says that the chain moved on.
    page = requests.get(page_of(servers[0], deployed["UUPSProxy"]), timeout=60).text
    assert "id='stale-link-note'" in page and want["UUPSProxy"] in page.lower(), page[:3000]
    done = verify_cli(project, "all", "--json")
    assert done.returncode == 0, not_ok(done)
    assert links(servers, deployed) == {(name, i): want[name] for name in PROXIES for i in (0, 1)}
    assert "stale-link-note" not in requests.get(page_of(servers[0], deployed["UUPSProxy"]), timeout=60).text
    rows = json.loads(done.stdout)["reports"]
    assert {(r["address"], r["target"]) for r in rows if r["kind"] == "relink" and r["ok"]} == {
        (deployed[name], target) for name in PROXIES for target in ("etherscan", "mirror")
    }

    # 3. a raw transaction outside Ape moves the UUPS proxy back to the first run's implementation.
    for counter in counters:
        counter.seen.clear()
    from eth_abi import encode
    from eth_utils import keccak

    call = keccak(text="upgradeToAndCall(address,bytes)")[:4] + encode(["address", "bytes"], [new["NewBoxUUPS"], b""])
    anvil.transact(call, to=deployed["UUPSProxy"])
    caught = verify_cli(project, "all", "--json")
    assert caught.returncode == 0, not_ok(caught)
    assert {i: implementation_on(s.base_url, deployed["UUPSProxy"]) for i, s in enumerate(servers)} == {
        0: new["NewBoxUUPS"].lower(),
        1: new["NewBoxUUPS"].lower(),
    }
    for counter in counters:
        actions = [t for t in counter.mentioning(deployed["UUPSProxy"]) if "verifyproxycontract" in t]
        assert len(actions) == 1, counter.mentioning(deployed["UUPSProxy"])
        # The proxies that did not move cost no explorer call.
        for name in ("TransparentProxy", "BeaconProxy", "SimpleProxy"):
            assert counter.mentioning(deployed[name]) == [], (name, counter.mentioning(deployed[name]))
    for counter in counters:
        counter.seen.clear()
    again = verify_cli(project, "all", "--json")
    assert again.returncode == 0, not_ok(again)
    for counter in counters:
        assert counter.mentioning(deployed["UUPSProxy"]) == [], counter.mentioning(deployed["UUPSProxy"])
        assert counter.seen, "the explorer was asked nothing at all: the counter is not in the path"
    row = next(r for r in json.loads(again.stdout)["reports"] if r["address"] == deployed["UUPSProxy"])
    assert row["ok"] and row["implementation"].lower() == new["NewBoxUUPS"].lower()


# A script that deploys nothing itself: it only calls the factory an earlier run deployed.
CLONE_MORE = """
import json
from pathlib import Path

from ape import accounts, project


def main():
    known = json.loads(Path("upgrade-input.json").read_text())
    factory = project.CloneFactory.at(known["CloneFactory"])
    receipt = factory.clone(7, sender=accounts.test_accounts[0])
    print(f"Clone2 {receipt.events.filter(factory.CloneCreated)[0].clone}")
"""


def test_a_run_that_only_calls_a_factory_verifies_records_and_summarises_its_children(world):
    """Issue 27: with auto on, the children a run's calls make are verified like deploys, though
    the run deployed nothing itself; the ledger keeps them for `ape verify all` and `status`."""
    _, servers, _, project, deployed = world
    use_targets(project, servers[0].base_url, servers[1].base_url, True)
    (project / "upgrade-input.json").write_text(json.dumps(deployed))
    (project / "scripts" / "clone_more.py").write_text(CLONE_MORE)
    proc = run([BIN / "ape", "run", "clone_more", "--network", "ethereum:local:foundry"], cwd=project, timeout=600)
    clone = dict(DEPLOYED.findall(proc.stdout))["Clone2"]
    rows = [line for line in proc.stdout.splitlines() if clone in line and "(proxy link)" in line]
    assert len(rows) == 2 and all(" verified " in row for row in rows), proc.stdout[-5000:] + proc.stderr[-3000:]
    assert {i: implementation_on(server.base_url, clone) for i, server in enumerate(servers)} == {
        0: deployed["Box"].lower(),
        1: deployed["Box"].lower(),
    }
    assert ledger_entries(project)[clone.lower()]["status"] == "verified"


# -- the parts, without a chain -----------------------------------------------------------------


def _word(address: str) -> bytes:
    return bytes(12) + bytes.fromhex(address[2:])


class _Slots:
    """A chain of storage slots only, counting reads."""

    def __init__(self, slots: dict):
        self.slots, self.reads = slots, 0

    def get_code(self, address):
        return b"\x60\x00" if address.lower() in {a for a, _ in self.slots} else b""

    def get_storage_at(self, address, slot):
        self.reads += 1
        return self.slots.get((address.lower(), slot), bytes(32))

    def call(self, to, data):
        return self.slots.get((to.lower(), "implementation()"), bytes(32))


PROXY, BEACON_ADDR, OLD, NEW = ("0x" + c * 40 for c in "abcd")


def test_the_three_events_are_decoded_and_nothing_else():
    from ape_contract_verify.workflow import upgrades

    upgraded = {"address": PROXY, "topics": [upgrades.UPGRADED, _word(NEW)], "data": b""}
    beacon = {
        "address": PROXY,
        "topics": ["0x" + upgrades.BEACON_UPGRADED.hex(), "0x" + _word(BEACON_ADDR).hex()],
        "data": "0x",
    }
    admin = {"address": PROXY, "topics": [upgrades.ADMIN_CHANGED], "data": _word(OLD) + _word(NEW)}
    assert upgrades.decode_log(upgraded, "0x1") == upgrades.UpgradeEvent("implementation", PROXY, NEW, "0x1")
    assert upgrades.decode_log(beacon).kind == "beacon" and upgrades.decode_log(beacon).address == BEACON_ADDR
    assert upgrades.decode_log(admin).kind == "admin" and upgrades.decode_log(admin).address == NEW
    transfer = {"address": PROXY, "topics": [bytes(32), _word(NEW)], "data": b""}
    assert upgrades.decode_log(transfer) is None
    # An Upgraded whose word is not an address is not an upgrade.
    assert upgrades.decode_log({"address": PROXY, "topics": [upgrades.UPGRADED, b"\xff" * 32], "data": b""}) is None


def test_a_beacon_moves_its_known_proxies_and_a_linked_proxy_that_did_not_move_costs_nothing():
    from ape_contract_verify.evm.proxies import EIP1967_BEACON_SLOT, EIP1967_IMPLEMENTATION_SLOT
    from ape_contract_verify.workflow import upgrades
    from ape_contract_verify.workflow.ledger import LedgerEntry
    from ape_contract_verify.workflow.upgrades import UpgradeEvent

    other = "0x" + "e" * 40
    chain = _Slots(
        {
            (PROXY, EIP1967_BEACON_SLOT): _word(BEACON_ADDR),
            (other, EIP1967_BEACON_SLOT): _word("0x" + "f" * 40),
            (BEACON_ADDR, "implementation()"): _word(NEW),
        }
    )
    moved = upgrades.affected([UpgradeEvent("implementation", BEACON_ADDR, NEW)], chain, [PROXY, other])
    assert list(moved) == [PROXY]
    # plan: linked to what the chain holds on both targets -> no work; moved on one -> a relink there only.
    urls = {"etherscan": "http://a/api", "mirror": "http://b/api"}
    link = lambda impl, url: {"implementation": impl, "url": url}  # noqa: E731
    entry = {
        "address": PROXY,
        "status": "verified",
        "links": {"etherscan": link(NEW, urls["etherscan"]), "mirror": link(OLD, urls["mirror"])},
    }
    todo = upgrades.plan(LedgerEntry.from_json(entry), urls, chain, PROXY)
    assert (todo.verify, todo.relink, todo.current, todo.implementation) == (set(), {"mirror"}, {"etherscan"}, NEW)
    entry["links"]["mirror"] = link(NEW, urls["mirror"])
    assert upgrades.plan(LedgerEntry.from_json(entry), urls, chain, PROXY).current == {"etherscan", "mirror"}
    # A link made at another URL (a fresh explorer of the same name) is no link there: verified as before.
    assert upgrades.plan(LedgerEntry.from_json(entry), {**urls, "mirror": "http://c/api"}, chain, PROXY).verify == {
        "mirror"
    }
    # The embedded explorer (no URL) is new in each process: verified as before.
    assert upgrades.plan(LedgerEntry.from_json(entry), {"etherscan": None}, chain, PROXY).verify == {"etherscan"}
    # A target that did not end well is verified as before; an entry with no links, everywhere.
    entry["targets"] = {"mirror": {"status": "failed"}}
    assert upgrades.plan(LedgerEntry.from_json(entry), urls, chain, PROXY).verify == {"mirror"}
    assert upgrades.plan(LedgerEntry(other), {"etherscan": "http://a/api"}, chain, other).verify == {"etherscan"}
    # A proxy emitting Upgraded is not a beacon: its own slot says so.
    chain.slots[(PROXY, EIP1967_IMPLEMENTATION_SLOT)] = _word(NEW)
    assert list(upgrades.affected([UpgradeEvent("implementation", PROXY, NEW)], chain, [])) == [PROXY]
