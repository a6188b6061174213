"""workflow/plan.py: the steps one contract's verification is planned in, which a run carries out
and the dry run prints: a data contract, a proxy's implementation, its own source (or why not),
its link. Identification is answered here (its own tests are derive's); no chain."""

from types import SimpleNamespace

import pytest

from ape_contract_verify.derive import artifacts
from ape_contract_verify.evm import proxies
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.workflow.plan import Derivations, Link, Skip, Source, plan_contract

pytestmark = pytest.mark.unit

A = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
IMPL = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"


class Reader:
    def __init__(self, code):
        self.code = code

    def get_code(self, address):
        return self.code.get(address, b"\x60\x01\x56")  # PUSH1 1 JUMP: code that runs


@pytest.fixture
def identified(monkeypatch):
    """identify knows the implementation only; find_artifact answers any name; `proxy` sets A's proxy."""
    asked = []

    def identify(address, project, runtime=None, cache=None, creation=None):
        asked.append(address)
        if address != IMPL:
            raise artifacts.ArtifactNotFound("no artifact has this code")
        return SimpleNamespace(label="Impl", resolved={})

    monkeypatch.setattr(artifacts, "identify", identify)
    monkeypatch.setattr(artifacts, "find_artifact", lambda name, project, **kw: SimpleNamespace(label=name))
    monkeypatch.setattr(artifacts, "has_code_of", lambda artifact, runtime: True)
    monkeypatch.setattr(proxies, "detect_proxy", lambda chain, address: None)

    def proxy(stamped):
        info = proxies.ProxyInfo("EIP-1967", IMPL.lower(), stamped=stamped)
        monkeypatch.setattr(proxies, "detect_proxy", lambda chain, address: info if address == A else None)

    return SimpleNamespace(asked=asked, proxy=proxy)


def steps(name=None, deployed_type=None, claim=lambda address: True, code=None):
    return plan_contract(Reader(code or {}), Derivations(None), A, name, "2a", deployed_type, claim)


def test_a_data_contract_is_one_step_with_nothing_to_verify_unless_named(identified):
    [step] = steps(code={A: b"\x00stored"})
    assert isinstance(step, Skip) and step.outcome == Outcome.NOTHING_TO_VERIFY and identified.asked == []
    [named] = steps("Box", code={A: b"\x00stored"})
    assert isinstance(named, Source) and (named.label, named.constructor_args) == ("Box", "2a")


def test_a_factory_s_template_gets_its_implementation_and_its_link_only(identified):
    identified.proxy(stamped=True)
    implementation, link = steps()
    assert (implementation.address, implementation.label, implementation.constructor_args) == (IMPL, "Impl", None)
    assert isinstance(link, Link) and (link.label, link.implementation) == ("EIP-1967 minimal proxy", IMPL)
    assert "resolves its implementation" in link.unlinked and identified.asked == [IMPL]
    # Deployed as a type (the ledger's record): its own source too, and the link carries its name.
    _, own, link = steps(deployed_type="contracts/Wallet.sol:Wallet")
    assert (own.label, link.label, link.unlinked) == ("contracts/Wallet.sol:Wallet", own.label, "")


def test_an_unnamed_proxy_no_artifact_answers_to_is_skipped_and_still_linked(identified):
    identified.proxy(stamped=False)
    _, skipped, link = steps()
    assert isinstance(skipped, Skip) and skipped.outcome == Outcome.SKIPPED
    assert skipped.reason == "proxy source: no artifact has this code" and link.label == A[:10]


def test_an_implementation_the_run_handled_already_is_not_planned_again(identified):
    identified.proxy(stamped=False)
    own, link = steps("Proxy", claim=lambda address: address != IMPL)
    assert (own.label, own.address, link.label, link.address) == ("Proxy", A, "Proxy", A)
