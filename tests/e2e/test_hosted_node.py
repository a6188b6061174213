"""The example through a hosted node (issue 22): Ape's provider talks to a JSON-RPC proxy in front of
anvil that refuses `trace_*`, `debug_*`, `ots_*` and `parity_*` as hosted plans do, while the
explorer reads the anvil directly, as Etherscan reads its own indexer.

Two deploys: `ape run deploy` with auto on (the suite's shared one, `example_on_anvil`); and with auto off, then `ape verify all` through a
proxy that also answers 429 to one request in ten. Both verify every contract created on chain, the
ProxyAdmin that TransparentUpgradeableProxy's constructor makes and the factory's clone included,
and say where a factory child's constructor arguments came from."""

from __future__ import annotations

import pytest

from support.e2e import copy_project, deploy_example_on_anvil, stop, summary, verify_cli
from support.rpc_proxy import HostedNodeProxy

pytestmark = pytest.mark.timeout(900)

DONE = ("verified", "already verified")
ADMIN_SLOT = "0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103"  # EIP-1967's admin


@pytest.fixture(scope="module")
def auto_off(compiled_example, tmp_path_factory):
    # The 429s start with `ape verify all` (the test turns them on): Ape's own sends are not
    # retried by web3 on a 429, so a limited deploy would test Ape, not the plugin.
    example = deploy_example_on_anvil(
        compiled_example, tmp_path_factory.mktemp("hosted-later"), auto=False, node=HostedNodeProxy
    )
    yield example
    stop(example)


def created_on_chain(example) -> set[str]:
    """Every contract address the deploy's transactions created (anvil, which has traces, says);
    blocks later tests added to a shared chain are not the deploy's."""
    anvil = example.anvil
    created = set()
    for number in range(1, example.height + 1):  # bounded by the deploy's height
        for item in anvil.rpc("debug_traceBlockByNumber", hex(number), {"tracer": "callTracer"}):
            stack = [item.get("result", item)]
            while stack:  # bounded by the trace's size
                frame = stack.pop()
                if frame.get("type") in ("CREATE", "CREATE2") and "error" not in frame:
                    created.add(frame["to"].lower())
                stack.extend(frame.get("calls") or [])
    return created


def assert_every_creation_verified(example, rows: dict) -> None:
    created = created_on_chain(example)
    by_address = {address.lower(): (name, outcome, detail) for name, (address, outcome, detail) in rows.items()}
    missing = created - set(by_address)
    assert not missing, f"created on chain but not in the summary: {missing}\n{rows}"
    # A clone has no source of its own: on Sourcify, which resolves it, its one row says so.
    failed = {
        a: v
        for a, v in by_address.items()
        if a in created and v[1] not in DONE and not (v[1] == "nothing to verify" and "no source of its own" in v[2])
    }
    assert not failed, failed
    assert any(name.endswith("ProxyAdmin") for name, _, _ in by_address.values()), rows
    assert rows["EIP-1167 clone (proxy link)"][:2] == (example.deployed["Clone"], "verified"), rows


def test_auto_on_verifies_every_creation_through_a_node_without_traces(example_on_anvil):
    """The suite's shared deploy (tests/conftest.py) goes through the proxy."""
    auto_on = example_on_anvil
    proc = auto_on.proc
    rows = summary(proc.stdout)
    assert_every_creation_verified(auto_on, rows)
    assert auto_on.node.refused, "the proxy refused no trace call: the test proves nothing"
    assert sum(auto_on.node.calls[m] for m in auto_on.node.refused) == sum(auto_on.node.refused.values())
    # Where the ProxyAdmin's constructor arguments came from: the fork replay.
    assert "openzeppelin:ProxyAdmin: constructor arguments from fork replay" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_verify_all_later_through_a_rate_limited_node(auto_off):
    assert not summary(auto_off.proc.stdout), "auto is off: the deploy verifies nothing"
    node = auto_off.node
    node.rate_limit_every = 10
    proc = verify_cli(auto_off.project, "all", "-v", "INFO")
    rows = summary(proc.stdout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert_every_creation_verified(auto_off, rows)
    assert node.limited > 0 and node.refused
    assert "openzeppelin:ProxyAdmin: constructor arguments from fork replay" in proc.stdout + proc.stderr


def proxy_admin(example) -> str:
    """The ProxyAdmin TransparentUpgradeableProxy's constructor made: the proxy's admin slot."""
    from eth_utils import to_checksum_address

    word = example.anvil.rpc("eth_getStorageAt", example.deployed["TransparentProxy"], ADMIN_SLOT, "latest")
    return to_checksum_address("0x" + word[-40:])


def test_a_factory_child_by_address_and_its_dry_run_through_the_node(example_on_anvil, tmp_path):
    """`ape verify contract ADDRESS` and `--dry-run` take the same way to the creation code."""
    project = copy_project(example_on_anvil.project, tmp_path / "by-address")
    admin = proxy_admin(example_on_anvil)
    refused_before = sum(example_on_anvil.node.refused.values())
    dry = verify_cli(project, "contract", admin, "--dry-run", "--out", str(tmp_path / "out"))
    assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
    assert "(from fork replay)" in dry.stdout, dry.stdout
    assert any((tmp_path / "out").iterdir()), "the dry run wrote no request body"
    sent = verify_cli(project, "contract", admin, "--force", "-v", "INFO")
    assert sent.returncode == 0, sent.stdout[-3000:] + sent.stderr[-3000:]
    row = summary(sent.stdout)
    assert [outcome for address, outcome, _ in row.values() if address.lower() == admin.lower()] in (
        ["verified"],
        ["already verified"],
    ), sent.stdout
    assert "constructor arguments from fork replay" in sent.stdout + sent.stderr
    assert sum(example_on_anvil.node.refused.values()) > refused_before, "the node's traces were not even asked"
