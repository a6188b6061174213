"""The plugin as Ape's explorer: `Contract(address)` in a project that never compiled the contract,
links that answer, `publish=True` on a live-like network through Ape's own `publish_contract`, the
embedded explorer within one `ape run`, and the choice between this explorer and ape-etherscan's.

The example is deployed once on anvil and verified on a standalone `ape verify serve`
(`example_on_anvil`); each `ape run` below checks several things, since each costs seconds."""

import json
import urllib.request
from pathlib import Path

import yaml

from support import BIN, run
from support.e2e import ROW, configure, copy_project, sourcify_base, summary, verify_cli

READER = """
import json, urllib.request
from ape import Contract, chain, networks
from ape.utils.basemodel import ManagerAccessMixin

ADDRESSES = {addresses!r}


def functions(contract_type):
    return sorted(abi.name for abi in contract_type.abi if abi.type == "function")


def main():
    registered = list(ManagerAccessMixin.plugin_manager.explorers)
    # Sepolia's explorer as Ape picks it by name: with a chain id (31337 here) Ape would also ask
    # each plugin's supports_chain, and ape-etherscan's fetches Etherscan's chain list online.
    connected, networks.active_provider = networks.active_provider, None
    try:
        sepolia = type(networks.ethereum.sepolia.explorer).__name__
    finally:
        networks.active_provider = connected
    out = {{
        "sepolia": sepolia,
        "registered": sorted({{name for name, _ in registered}}),
        "for_local": sorted({{name for name, (eco, net, _) in registered if (eco, net) == ("ethereum", "local")}}),
    }}
    if "contract-verify" not in out["registered"]:
        print("RESULT " + json.dumps(out))
        return
    explorer = networks.provider.network.explorer
    out["local"] = type(explorer).__name__ if explorer else None
    for name, address in ADDRESSES.items():
        contract = Contract(address)
        signatures = [abi.signature for abi in contract.contract_type.abi]
        out[name] = {{
            "type": contract.contract_type.name,
            "functions": functions(contract.contract_type),
            "duplicates": len(signatures) - len(set(signatures)),
        }}
    out["token_name"] = Contract(ADDRESSES["Token"]).name()
    out["proxy_value"] = Contract(ADDRESSES["SimpleProxy"]).value()
    out["proxy_version"] = Contract(ADDRESSES["SimpleProxy"]).version()
    out["clone_value"] = Contract(ADDRESSES["Clone"]).value()
    # A precompile has code no one verified: the explorer says so with None, not an error.
    out["unverified"] = explorer.get_contract_type("0x0000000000000000000000000000000000000004")
    url = explorer.get_address_url(ADDRESSES["Box"])
    with urllib.request.urlopen(url, timeout=30) as answer:
        out["page"] = {{"url": url, "status": answer.status, "body": answer.read().decode()}}
    # The first transaction on the chain (the example's first deploy): its page, over HTTP.
    first_tx = chain.blocks[1].transactions[0].txn_hash  # HexBytes: the link takes it as it comes
    tx_url = explorer.get_transaction_url(first_tx)
    first_tx = "0x" + bytes(first_tx).hex()
    with urllib.request.urlopen(tx_url, timeout=30) as answer:
        out["tx_page"] = {{"hash": first_tx, "url": tx_url, "status": answer.status, "body": answer.read().decode()}}
    # A network whose only target is a Sourcify server (the second explorer's Sourcify face).
    with networks.parse_network_choice("ethereum:anvil-sourcify:node"):
        only = networks.provider.network.explorer
        token = only.get_contract_type(ADDRESSES["Token"])
        out["sourcify_only"] = {{
            "explorer": type(only).__name__,
            "targets": [target.name for target in only._targets()],
            "type": token.name if token else None,
            "functions": functions(token) if token else [],
            "url": only.get_address_url(ADDRESSES["Token"]),
        }}
    print("RESULT " + json.dumps(out))
"""

PUBLISH = """
import json, urllib.request
from ape import Contract, accounts, chain, networks, project
from ape.api.networks import NetworkAPI


def main():
    out = {}
    owner = accounts.test_accounts[0]
    network = networks.provider.network
    box = owner.deploy(project.Box, publish=True)
    publish = NetworkAPI.publish_contract
    out["live"] = {
        "box": box.address,
        "is_dev": network.is_dev,
        "explorer": type(network.explorer).__name__,
        "publish_is_apes": (publish.__module__, publish.__qualname__),
    }
    # The embedded explorer, within this run: publish through Ape, forget the artifact, read it back.
    with networks.ethereum.local.use_provider("foundry"):
        network = networks.provider.network
        second = owner.deploy(project.Box)
        network.publish_contract(second.address)
        del chain.contracts[second.address]
        again = Contract(second.address)
        manifest = network.explorer.get_manifest(second.address)
        out["embedded"] = {
            "box": second.address,
            "type": again.contract_type.name,
            "version": again.version(),
            "url": network.explorer.get_address_url(second.address),
            "verified_sources": sorted(manifest.sources) if manifest else [],
        }
    print("RESULT " + json.dumps(out))
"""

# auto: true on a local network with no explorer configured: the deploy hook verifies on the
# process's embedded explorer, the one Ape's explorer (started here first, for a link) reads from.
SHARED = """
import json, time
from ape import Contract, accounts, chain, networks, project


def main():
    explorer = networks.provider.network.explorer
    owner = accounts.test_accounts[0]
    before = explorer.get_address_url(owner.address)  # in process: no server, no pages to link
    box = owner.deploy(project.Box)  # the deploy hook verifies it, beside the script
    found, deadline, asked = None, time.monotonic() + 90, 0
    while found is None and time.monotonic() < deadline:
        asked += 1
        found = explorer.get_contract_type(box.address)
        if found is None:
            time.sleep(0.5)
    del chain.contracts[box.address]
    out = {"before": before, "box": box.address, "found": found.name if found else None, "asked": asked}
    if found is not None:
        out["version"] = Contract(box.address).version()
    out["tx_url"] = explorer.get_transaction_url(box.txn_hash)
    print("RESULT " + json.dumps(out))
"""


def _result(proc) -> dict:
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (
        f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    )
    return json.loads(lines[-1][len("RESULT ") :])


def _reader(root: Path, example, explorer_setting: bool) -> Path:
    """A project with no contracts at all, on the example's anvil and explorer."""
    project = root / f"reader-{explorer_setting}"
    (project / "scripts").mkdir(parents=True)
    config = {
        "name": "reader",
        "foundry": {"host": example.anvil.url},
        # The same anvil as a live-like network whose one target is Sourcify.
        "networks": {
            "custom": [
                {"name": "anvil-sourcify", "chain_id": 31337, "ecosystem": "ethereum", "default_provider": "node"}
            ]
        },
        "node": {"ethereum": {"anvil-sourcify": {"uri": example.anvil.url}}},
        "contract_verify": {
            "explorer": explorer_setting,
            "max_retries": 1,
            "explorers": {
                "ethereum": {
                    "local": {"url": example.explorer.base_url},
                    "anvil-sourcify": {"sourcify": {"url": sourcify_base(example.sourcify)}},
                }
            },
        },
    }
    (project / "ape-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    wanted = {name: example.deployed[name] for name in ("Token", "Box", "SimpleProxy", "Clone")}
    (project / "scripts" / "inspect.py").write_text(READER.format(addresses=wanted))
    return project


def _ape_run(project: Path, script: str, network: str = "ethereum:local:foundry"):
    return run([BIN / "ape", "run", script, "--network", network], cwd=project, timeout=600, check=False)


def test_contract_at_an_address_from_a_project_without_its_artifacts(example_on_anvil, tmp_path):
    out = _result(_ape_run(_reader(tmp_path, example_on_anvil, True), "inspect"))
    # Chosen over ape-etherscan, which is installed and registers ethereum:sepolia too.
    assert out["local"] == "ContractVerifyExplorer" and out["for_local"] == ["contract-verify"]
    assert out["sepolia"] == "ContractVerifyExplorer"
    assert {"contract-verify", "etherscan"} <= set(out["registered"])
    assert out["Token"]["type"] == "Token" and {"name", "transfer", "totalSupply"} <= set(out["Token"]["functions"])
    assert out["token_name"] == "Example Token"
    # The EIP-1967 proxy and the EIP-1167 clone answer with Box's ABI, with no function twice.
    for proxy in ("SimpleProxy", "Clone"):
        assert {"value", "version", "setValue", "initialize"} <= set(out[proxy]["functions"]), out[proxy]
        assert out[proxy]["duplicates"] == 0
    assert out["proxy_value"] == 42 and out["proxy_version"] == "Box v1"
    assert out["clone_value"] == 99
    assert out["unverified"] is None
    page = out["page"]
    box = example_on_anvil.deployed["Box"]
    assert page["status"] == 200 and page["url"] == f"{example_on_anvil.explorer.base_url[:-4]}/address/{box}"
    assert box in page["body"] and "Contract Source Code Verified" in page["body"]
    tx = out["tx_page"]
    assert tx["status"] == 200 and tx["url"] == f"{example_on_anvil.explorer.base_url[:-4]}/tx/{tx['hash']}"
    assert tx["hash"] in tx["body"] and "Contract Creation" in tx["body"]
    # Sourcify as the network's one target: the contract's ABI from it, links to its pages.
    only = out["sourcify_only"]
    assert only["explorer"] == "ContractVerifyExplorer" and only["targets"] == ["sourcify"]
    assert only["type"] == "Token" and {"name", "transfer", "totalSupply"} <= set(only["functions"])
    sourcify_pages = sourcify_base(example_on_anvil.sourcify).rstrip("/")
    assert only["url"] == f"{sourcify_pages}/address/{example_on_anvil.deployed['Token']}"


def test_explorer_false_leaves_the_networks_to_ape_etherscan_and_ape_verify_still_works(example_on_anvil, tmp_path):
    out = _result(_ape_run(_reader(tmp_path, example_on_anvil, False), "inspect"))
    assert out["for_local"] == []  # ape-etherscan names no local network, and ours stepped aside
    assert out["sepolia"] == "Etherscan"
    assert "contract-verify" not in out["registered"] and "etherscan" in out["registered"]

    project = copy_project(example_on_anvil.project, tmp_path / "verify-still-works")
    configure(
        project,
        contract_verify={
            **yaml.safe_load((project / "ape-config.yaml").read_text())["contract_verify"],
            "explorer": False,
        },
    )
    proc = verify_cli(project, "contract", example_on_anvil.deployed["Box"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert summary(proc.stdout)["Box"][1] in ("verified", "already verified")


def test_publish_true_on_a_live_like_network_and_the_embedded_explorer_in_one_run(example_on_anvil, tmp_path):
    project = copy_project(example_on_anvil.project, tmp_path / "publisher")
    config = yaml.safe_load((project / "ape-config.yaml").read_text())
    config["networks"] = {
        "custom": [{"name": "anvil-live", "chain_id": 31337, "ecosystem": "ethereum", "default_provider": "node"}]
    }
    config["node"] = {"ethereum": {"anvil-live": {"uri": example_on_anvil.anvil.url}}}
    config["contract_verify"] = {
        "auto": False,
        "max_retries": 1,
        "poll_interval": 0.5,
        # The live-like network's explorer is the standalone one; ethereum:local has none: embedded.
        "explorers": {"ethereum": {"anvil-live": {"url": example_on_anvil.explorer.base_url}}},
    }
    (project / "ape-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (project / "scripts" / "publish.py").write_text(PUBLISH)
    proc = _ape_run(project, "publish", "ethereum:anvil-live:node")
    out = _result(proc)
    live = out["live"]
    assert live["is_dev"] is False and live["explorer"] == "ContractVerifyExplorer"
    assert live["publish_is_apes"] == ["ape.api.networks", "NetworkAPI.publish_contract"]
    assert "explorer verification failed" not in proc.stdout + proc.stderr
    rows = [m.group(3) for m in ROW.finditer(proc.stdout) if m.group(2) == live["box"]]
    assert rows == ["verified"], proc.stdout
    # The standalone explorer holds it now, as getsourcecode says over HTTP.
    query = f"{example_on_anvil.explorer.base_url}?module=contract&action=getsourcecode&address={live['box']}"
    with urllib.request.urlopen(query, timeout=30) as answer:
        record = json.loads(answer.read())["result"][0]
    assert record["ContractName"].endswith("Box") and record["ABI"].startswith("[")

    embedded = out["embedded"]
    assert embedded["type"] == "Box" and embedded["version"] == "Box v1"
    # The local network's explorer runs in the process: no server, so no page to link to.
    assert embedded["url"] == ""
    assert embedded["verified_sources"], "the embedded explorer holds no verified source for the Box"


def test_the_deploy_hook_and_apes_explorer_share_the_embedded_explorer_in_one_run(example_on_anvil, tmp_path):
    project = copy_project(example_on_anvil.project, tmp_path / "shared")
    config = yaml.safe_load((project / "ape-config.yaml").read_text())
    config["contract_verify"] = {"auto": True, "max_retries": 1, "poll_interval": 0.5}  # no explorer: embedded
    (project / "ape-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (project / "scripts" / "shared.py").write_text(SHARED)
    proc = _ape_run(project, "shared")
    out = _result(proc)
    box = out["box"]
    # What the hook verified is what Contract(address) reads, in the same run, on the same explorer.
    assert out["found"] == "Box" and out["version"] == "Box v1", out
    # In process: no server, so no links (and no port: nothing listens).
    assert out["before"] == "" and out["tx_url"] == ""
    rows = {m.group(2): (m.group(3), m.group(0)) for m in ROW.finditer(proc.stdout)}
    assert rows[box][0] == "verified" and "http://" not in rows[box][1], proc.stdout
    assert rows[box][1].rstrip().endswith("local explorer"), proc.stdout
