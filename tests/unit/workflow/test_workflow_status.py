"""workflow/status.py without a chain or explorers: one call per address and target, the verdicts
on proxy links, a target that cannot be opened, what `required_targets` counts."""

import threading

import pytest

from ape_contract_verify.client.etherscan import SourceRecord
from ape_contract_verify.client.sourcify import SourcifyClient
from ape_contract_verify.client.targets import Target
from ape_contract_verify.exceptions import ContractNotVerified
from ape_contract_verify.workflow import status
from support.service import ADDRESS_A, ADDRESS_B, FakeChain

pytestmark = pytest.mark.timeout(60)

IMPL = "0x" + "1a" * 20
MOVED = "0x" + "2b" * 20
CLONE = "0x" + "c1" * 20
CLONE_CODE = bytes.fromhex("363d3d373d3d3d363d73" + IMPL[2:] + "5af43d82803e903d91602b57fd5bf3")


class Etherscan:
    def __init__(self, links: dict, unverified: tuple = ()):
        self.links, self.unverified = links, unverified
        self.asked: list[str] = []
        self._lock = threading.Lock()

    def contract_record(self, address, full=True):
        with self._lock:
            self.asked.append(address.lower())
        if address.lower() in self.unverified:
            raise ContractNotVerified(f"{address}: not verified")
        link = self.links.get(address.lower(), "")
        return SourceRecord.from_result(
            address, {"SourceCode": "contract C {}", "ABI": "[]", "Proxy": "1" if link else "0", "Implementation": link}
        )


class Sourcify(SourcifyClient):
    """The real client's mapping of a lookup; the lookup itself scripted."""

    def __init__(self):
        super().__init__("http://127.0.0.1:1/", 31337)
        self.asked: list[tuple[str, str]] = []

    def lookup(self, address, fields="all"):
        self.asked.append((address.lower(), fields))
        return {
            "match": "match" if address.lower() == CLONE else None,
            "proxyResolution": {"implementations": [{"address": IMPL}]} if address.lower() == CLONE else {},
        }


def _target(name: str, kind: str = "etherscan") -> Target:
    return Target("ethereum", "local", "http://127.0.0.1:1/api", 31337, None, name=name, kind=kind)


def test_one_call_per_address_and_target_and_the_links_judged_on_chain():
    chain = FakeChain(
        {
            ADDRESS_A: bytes.fromhex("6080604052600080fd"),
            ADDRESS_B: bytes.fromhex("6080604052348015600f57"),
            CLONE: CLONE_CODE,
        }
    )
    clients = {
        "etherscan": Etherscan({CLONE: IMPL}),
        "mirror": Etherscan({CLONE: MOVED}, unverified=(ADDRESS_B,)),
        "bare": Etherscan({}),
        "sourcify": Sourcify(),
    }
    targets = [_target(n) for n in ("etherscan", "mirror", "bare")] + [
        _target("sourcify", "sourcify"),
        _target("broken"),
    ]

    def open_client(target, health):
        if target.name == "broken":
            raise RuntimeError("no key for broken")
        return clients[target.name]

    deployments = [("A", ADDRESS_A), ("B", ADDRESS_B), ("Clone", CLONE)]
    rows = status.read_status(
        [status.NetworkStatus("ethereum:local", targets, deployments, chain, open_client)], workers=3
    )
    for name, client in clients.items():
        asked = sorted(a if isinstance(a, str) else a[0] for a in client.asked)
        assert asked == sorted(a.lower() for _, a in deployments), name
    assert {fields for _, fields in clients["sourcify"].asked} == {"proxyResolution"}
    by = {r.contract: r for r in rows}
    clone = by["Clone"]
    assert (clone.proxy, clone.implementation.lower()) == ("EIP-1167", IMPL)
    assert [clone.targets[n].state for n in ("etherscan", "mirror", "bare")] == ["linked", "stale link", "not linked"]
    assert (
        MOVED in clone.targets["mirror"].implementation.lower() and "ape verify proxy" in clone.targets["mirror"].reason
    )
    assert (clone.targets["sourcify"].state, clone.targets["sourcify"].match) == ("verified", "partial")
    assert by["B"].targets["mirror"].state == "not verified" and by["A"].targets["mirror"].state == "verified"
    assert by["A"].targets["sourcify"].state == "not verified"
    assert all(r.targets["broken"].state == "error" and "no key for broken" in r.targets["broken"].reason for r in rows)

    # What counts: every target by default; only the required ones when named.
    assert status.StatusView(rows, ["etherscan"]).failing() == []
    assert {(r.contract, t.target) for r, t in status.StatusView(rows, ["mirror"]).failing()} == {
        ("B", "mirror"),
        ("Clone", "mirror"),
    }
    assert (
        len(status.StatusView(rows).failing()) == 3 + 2 + 1 + 2
    )  # broken everywhere, mirror twice, bare once, sourcify A and B
    table = status.StatusView(rows).table().splitlines()
    assert table[0].split() == ["contract", "address", "proxy", "etherscan", "mirror", "bare", "sourcify", "broken"]
    assert "stale 0x2b2b…2b2b" in next(line for line in table if line.startswith("Clone")).lower()


def test_a_factorys_template_is_linked_or_resolved_never_missing_a_source():
    """Solady's 44-byte clone: no compiler made it, so Sourcify's "no match" is no failure (it
    resolves the proxy itself); an Etherscan-style explorer without its link says how to link it."""
    stamped = "0x" + "5e" * 20
    code = bytes.fromhex("3d3d3d3d363d3d37363d73" + IMPL[2:] + "5af43d3d93803e602a57fd5bf3")
    clients = {
        "etherscan": Etherscan({stamped: IMPL}),
        "bare": Etherscan({}, unverified=(stamped,)),
        "sourcify": Sourcify(),
    }
    targets = [_target("etherscan"), _target("bare"), _target("sourcify", "sourcify")]
    [row] = status.read_status(
        [
            status.NetworkStatus(
                "ethereum:local",
                targets,
                [("Wallet", stamped)],
                FakeChain({stamped: code}),
                lambda t, h: clients[t.name],
            )
        ]
    )
    assert (row.proxy, row.stamped, row.as_dict()["proxy"]["stamped"]) == ("minimal proxy", True, True)
    states = {name: t.state for name, t in row.targets.items()}
    assert states == {"etherscan": "linked", "bare": "not verified", "sourcify": "no source"}, states
    assert "ape verify proxy" in row.targets["bare"].reason and IMPL in row.targets["sourcify"].reason.lower()
    assert [s.target for _, s in status.StatusView([row]).failing()] == ["bare"]
