"""The ledger's transitions on its store: each one write, read back as typed entries."""

import pytest

from ape_contract_verify.workflow.ledger import Ledger

pytestmark = pytest.mark.unit

BOX = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
PROXY = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
IMPL = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"


def test_each_transition_is_one_write_and_a_new_entry_is_pending(tmp_path):
    ledger = Ledger(tmp_path / "deployments-1-abc.sqlite")
    ledger.recorded("Box", BOX, "ethereum:sepolia:node", "contracts/Box.sol:Box")
    ledger.change("Box", BOX, lambda e: e.ended("failed", "bytecode differs"))
    ledger.change(
        PROXY, PROXY, lambda e: e.upgraded(IMPL.lower(), "0x01", "ethereum:sepolia:node")
    )  # unknown: recorded too
    ledger.change("Proxy", PROXY, lambda e: e.admin_changed(BOX))  # renamed as the caller calls it
    box, proxy = ledger.deployments()
    assert (box.status, box.reason, box.network) == ("failed", "bytecode differs", "ethereum:sepolia:node")
    assert (proxy.contract, proxy.status, proxy.network, proxy.admin) == (
        "Proxy",
        "pending",
        "ethereum:sepolia:node",
        BOX,
    )
    ledger.change("Other name", PROXY, lambda e: e.linked("etherscan", IMPL), rename=False)  # a link never renames
    proxy = ledger.deployments()[1]
    assert proxy.contract == "Proxy" and proxy.link_on("etherscan", None) == IMPL.lower()
    assert proxy.upgrade is not None and proxy.upgrade.implementation == IMPL.lower()
    assert [e.address for e in ledger.deployments() if not e.done] == [BOX, PROXY]
