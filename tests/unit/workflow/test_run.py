"""A run on several targets, with scripted clients: targets side by side, one derivation per
contract, one target down never stops the others, what counts for the exit code, Sourcify's
differences (no proxy link, its match level), and the summary's rows."""

import threading
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from ape_contract_verify.client.etherscan import SubmissionReceipt
from ape_contract_verify.client.provider import ExplorerRecord
from ape_contract_verify.derive import artifacts, derive
from ape_contract_verify.evm import proxies
from ape_contract_verify.exceptions import ExplorerError
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.workflow import verification as run_module
from ape_contract_verify.workflow.plan import Item, Options
from ape_contract_verify.workflow.report import summary_table
from ape_contract_verify.workflow.verification import VerificationRun, failed

A = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
B = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"


def passed(match=None) -> ExplorerAnswer:
    return ExplorerAnswer(Outcome.VERIFIED, "1", "OK", "Pass - Verified", match=match)


@dataclass
class Client:
    name: str
    answer: object = None
    barrier: object = None
    record: object = None
    submitted: list = field(default_factory=list)

    # A VerificationTarget: the one named sourcify speaks Sourcify's API, the others Etherscan's.
    @property
    def kind(self):
        return "sourcify" if self.name == "sourcify" else "etherscan"

    @property
    def flavour(self):
        return self.name if self.name in ("sourcify", "blockscout") else "etherscan"

    @property
    def supports_proxy_link(self):
        return self.kind != "sourcify"

    base_url = "https://fake.example/api"

    def link(self, address):
        return None

    def creation_records(self):
        return None

    def verify_source_code(self, request):
        self.submitted.append(request)
        return SubmissionReceipt(guid=f"{self.name}-{len(self.submitted)}".ljust(50, "x"), address=request.address)

    def wait(self, receipt, interval, timeout, on_progress=None):
        if self.barrier is not None:
            self.barrier.wait()  # raises BrokenBarrierError unless the other target is waiting too
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer or passed()

    def verify_proxy(self, address, expected=None):
        self.submitted.append(("proxy", address))
        return SubmissionReceipt(guid="p".ljust(50, "x"), address=address, proxy=True)

    def contract_record(self, address):
        if self.record is None:
            raise ExplorerError("not asked in this test")
        return self.record


def target(name, kind="etherscan"):
    return SimpleNamespace(
        name=name, kind=kind, is_local=False, url=f"https://{name}.example/api", browser_url=None, label=name
    )


# The run's chain reader: proxy detection is scripted, so only a blueprint check reads code (none).
NO_CHAIN = SimpleNamespace(get_code=lambda address: b"")


@pytest.fixture
def world(monkeypatch):
    """Derivation, identification and proxy detection scripted; clients per target name."""
    derived = []
    clients: dict = {}

    def fake_derive(artifact, address, **kwargs):
        derived.append((address, kwargs["code_format"]))
        request = VerificationRequest(address, "a.sol:A", "{}", CodeFormat.STANDARD_JSON, "v0.8.26+commit.8a97fa7a")
        return SimpleNamespace(
            request=request, match="full", warnings=[], artifact=artifact, creation_source="transaction"
        )

    monkeypatch.setattr(derive, "derive", fake_derive)
    monkeypatch.setattr(artifacts, "find_artifact", lambda name, project: SimpleNamespace(label=name))
    monkeypatch.setattr(proxies, "detect_proxy", lambda chain, address: None)

    def fake_explorer_for(t, provider=None, chain_reader=None, **options):
        return clients[t.name]

    monkeypatch.setattr(run_module, "explorer_for", fake_explorer_for)
    return SimpleNamespace(derived=derived, clients=clients)


def verify(world, targets, items, **options):
    run = VerificationRun(None, Options(poll_interval=0, **options), workers=4)
    for network, names in targets.items():
        run.add_network(
            network,
            [target(*n) if isinstance(n, tuple) else target(n) for n in names],
            chain_reader=NO_CHAIN,
        )
    return run.verify(items)


def test_targets_run_side_by_side_on_one_derivation(world):
    barrier = threading.Barrier(2, timeout=10)
    world.clients.update(
        etherscan=Client("etherscan", barrier=barrier), blockscout=Client("blockscout", barrier=barrier)
    )
    reports = verify(world, {"ethereum:sepolia": ["etherscan", "blockscout"]}, [Item("ethereum:sepolia", A, "Box")])
    assert [(r.target, r.outcome) for r in reports] == [("etherscan", "verified"), ("blockscout", "verified")], [
        r.reason for r in reports
    ]
    assert world.derived == [(A, CodeFormat.STANDARD_JSON)], "one derivation serves every target"
    assert all(r.network == "ethereum:sepolia" for r in reports)


def test_one_target_down_never_stops_the_others_and_required_targets_decide(world):
    world.clients.update(
        etherscan=Client("etherscan", answer=ExplorerError("connection refused: etherscan is down")),
        sourcify=Client("sourcify"),
    )
    items = [Item("ethereum:sepolia", A, "Box"), Item("ethereum:sepolia", B, "Token")]
    reports = verify(world, {"ethereum:sepolia": ["etherscan", ("sourcify", "sourcify")]}, items)
    by = {(r.contract, r.target): r for r in reports}
    assert {k: str(r.outcome) for k, r in by.items()} == {
        ("Box", "etherscan"): "error",
        ("Token", "etherscan"): "error",
        ("Box", "sourcify"): "verified",
        ("Token", "sourcify"): "verified",
    }
    assert "etherscan is down" in by[("Box", "etherscan")].reason
    assert len(failed(reports)) == 2
    assert failed(reports, required=["sourcify"]) == []
    assert len(failed(reports, required=["etherscan"])) == 2


def test_a_refusal_is_its_own_outcome(world):
    refusal = ExplorerError("Free API access is not supported for this chain")
    refusal.answer = ExplorerAnswer(Outcome.REFUSED, "0", "NOTOK", "Free API access is not supported for this chain")
    world.clients.update(etherscan=Client("etherscan", answer=refusal), blockscout=Client("blockscout"))
    reports = verify(world, {"base:mainnet": ["etherscan", "blockscout"]}, [Item("base:mainnet", A, "Box")])
    assert [str(r.outcome) for r in reports] == ["refused", "verified"]


def test_sourcify_gets_standard_json_its_match_level_and_no_proxy_link(world, monkeypatch):
    monkeypatch.setattr(
        proxies,
        "detect_proxy",
        lambda chain, address: (
            SimpleNamespace(kind="EIP-1967", implementation=B, stamped=False) if address == A else None
        ),
    )
    monkeypatch.setattr(
        artifacts, "identify", lambda address, project, runtime=None, cache=None, **kw: SimpleNamespace(label="Impl")
    )
    chain = SimpleNamespace(get_code=lambda address: b"\x60")
    world.clients.update(
        etherscan=Client(
            "etherscan",
            answer=ExplorerAnswer(
                Outcome.VERIFIED,
                "1",
                "OK",
                "The proxy's (0x) implementation contract is found at 0x and is successfully updated.",
            ),
        ),
        sourcify=Client("sourcify", answer=passed(match="match")),
    )
    run = VerificationRun(None, Options(poll_interval=0, code_format=CodeFormat.SINGLE_FILE), workers=4)
    run.add_network("ethereum:local", [target("etherscan"), target("sourcify", "sourcify")], chain_reader=chain)
    reports = run.verify([Item("ethereum:local", A, "Proxy")])
    sourcify = [r for r in reports if r.target == "sourcify"]
    assert [r.kind for r in sourcify] == ["source", "source"], "no proxy link on Sourcify"
    assert all(r.match == "partial" for r in sourcify)
    assert any(r.kind == "proxy" and r.target == "etherscan" for r in reports)
    assert ("proxy", A) not in world.clients["sourcify"].submitted
    assert {fmt for _, fmt in world.derived} == {CodeFormat.SINGLE_FILE, CodeFormat.STANDARD_JSON}, (
        "Sourcify is sent standard-json"
    )


def test_a_factorys_template_gets_its_link_or_says_sourcify_resolves_it(world, monkeypatch):
    """A stamped proxy (no compiler made its code): no source step and no "name the contract
    type"; its link where links are sent, and on Sourcify one row saying it resolves it itself."""
    monkeypatch.setattr(
        proxies,
        "detect_proxy",
        lambda chain, address: proxies.ProxyInfo("EIP-1967", B.lower(), stamped=True) if address == A else None,
    )
    identified = []
    monkeypatch.setattr(
        artifacts,
        "identify",
        lambda address, project, runtime=None, cache=None, **kw: (
            identified.append(address) or SimpleNamespace(label="Impl")
        ),
    )
    world.clients.update(etherscan=Client("etherscan"), sourcify=Client("sourcify", answer=passed(match="match")))
    chain = SimpleNamespace(get_code=lambda address: b"\x60\x01\x56")
    run = VerificationRun(None, Options(poll_interval=0), workers=2)
    run.add_network("ethereum:local", [target("etherscan"), target("sourcify", "sourcify")], chain_reader=chain)
    reports = run.verify([Item("ethereum:local", A)])
    assert identified and all(a.lower() == B.lower() for a in identified), "only the implementation is identified"
    mine = {(r.target, r.kind, r.contract, str(r.outcome)) for r in reports if r.address == A}
    assert mine == {
        ("etherscan", "proxy", "EIP-1967 minimal proxy (proxy link)", "verified"),
        ("sourcify", "source", "EIP-1967 minimal proxy", "nothing to verify"),
    }, mine
    sourcify_row = next(r for r in reports if r.address == A and r.target == "sourcify")
    assert sourcify_row.ok and "resolves its implementation" in sourcify_row.reason
    assert (
        not any(r.outcome == Outcome.SKIPPED for r in reports)
        and ("proxy", A) not in world.clients["sourcify"].submitted
    )


def test_a_partial_match_on_sourcify_is_submitted_again(world):
    world.clients.update(sourcify=Client("sourcify", record=ExplorerRecord(A, verified=True, match="match")))
    world.clients["etherscan"] = Client("etherscan", record=ExplorerRecord(A, verified=True))
    reports = verify(
        world, {"ethereum:sepolia": ["etherscan", ("sourcify", "sourcify")]}, [Item("ethereum:sepolia", A, "Box")]
    )
    by = {r.target: str(r.outcome) for r in reports}
    assert by == {"etherscan": "already verified", "sourcify": "verified"}
    assert len(world.clients["sourcify"].submitted) == 1 and not world.clients["etherscan"].submitted


def test_the_summary_has_a_row_per_contract_and_target_and_names_networks():
    from ape_contract_verify.workflow.report import Report

    one = [
        Report("Box", A, Outcome.VERIFIED, target="etherscan", network="ethereum:local"),
        Report("Box", A, Outcome.FAILED, "no_match", target="sourcify", network="ethereum:local"),
    ]
    table = summary_table(one).splitlines()
    assert table[0].split() == ["contract", "address", "outcome", "target", "link", "/", "reason"]
    assert table[2].split()[2:5] == ["failed", "sourcify", "no_match"]
    two = one + [Report("Box", B, Outcome.VERIFIED, target="etherscan", network="ethereum:second")]
    lines = summary_table(two).splitlines()
    assert "network" in lines[0].split() and "ethereum:second" in lines[3]
