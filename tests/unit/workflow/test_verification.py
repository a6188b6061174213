"""The orchestration's own decisions, with a scripted client: the one retry with the full project
input after a rejection, its bound, and the per-run de-duplication of implementations."""

from dataclasses import dataclass, field

import pytest

from ape_contract_verify.client.etherscan import SubmissionReceipt
from ape_contract_verify.client.targets import Target
from ape_contract_verify.derive import derive
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.workflow import report, verification
from ape_contract_verify.workflow.plan import Derivations, Options

ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
TARGET = Target("ethereum", "sepolia", "https://scripted.example/api", 11155111, None)


def answer(outcome: Outcome, text: str) -> ExplorerAnswer:
    return ExplorerAnswer(outcome=outcome, status="1" if outcome.is_success else "0", message="", result=text)


@dataclass
class ScriptedClient:
    """A VerificationTarget of kind etherscan whose answers are scripted."""

    kind = "etherscan"
    flavour = "etherscan"
    supports_proxy_link = True
    base_url = "https://scripted.example/api"

    def link(self, address):
        return None

    answers: list
    submitted: list = field(default_factory=list)

    def verify_source_code(self, request):
        self.submitted.append(request)
        return SubmissionReceipt(guid=f"g{len(self.submitted)}".ljust(50, "x"), address=request.address)

    def wait(self, receipt, interval, timeout, on_progress=None):
        return self.answers.pop(0)


@dataclass
class FakeDerivation:
    request: VerificationRequest
    match: str = "full"
    warnings: list = field(default_factory=list)
    artifact: object = None


def request(sources: str = '{"sources": {"a.sol": {}}}') -> VerificationRequest:
    return VerificationRequest(ADDRESS, "a.sol:A", sources, CodeFormat.STANDARD_JSON, "v0.8.26+commit.8a97fa7a")


def make(client) -> verification.Verification:
    return verification.Verification(
        client, chain_reader=None, options=Options(poll_interval=0), target=TARGET, shared=Derivations(None)
    )


def test_a_rejected_minimal_input_is_retried_once_with_the_full_project_input(monkeypatch):
    full = request('{"sources": {"a.sol": {}, "b.sol": {}}}')
    monkeypatch.setattr(derive, "with_full_project_input", lambda d: full)
    client = ScriptedClient(
        [answer(Outcome.FAILED, "Fail - Unable to verify"), answer(Outcome.VERIFIED, "Pass - Verified")]
    )
    report = make(client)._submit("A", FakeDerivation(request()))
    assert [r.source_code for r in client.submitted] == [request().source_code, full.source_code]
    assert report.outcome == "verified"
    assert any("retried with the full project input" in w for w in report.warnings)


def test_the_retry_happens_once_and_the_second_reason_is_reported(monkeypatch):
    monkeypatch.setattr(derive, "with_full_project_input", lambda d: request('{"sources": {"a.sol": {}, "b.sol": {}}}'))
    client = ScriptedClient([answer(Outcome.FAILED, "Fail - first"), answer(Outcome.FAILED, "Fail - second")])
    report = make(client)._submit("A", FakeDerivation(request()))
    assert len(client.submitted) == 2
    assert report.outcome == "failed" and report.reason == "Fail - second"


def test_no_retry_when_there_is_nothing_more_to_send(monkeypatch):
    monkeypatch.setattr(derive, "with_full_project_input", lambda d: None)
    client = ScriptedClient([answer(Outcome.FAILED, "Fail - Unable to verify")])
    report = make(client)._submit("A", FakeDerivation(request()))
    assert len(client.submitted) == 1 and report.outcome == "failed"


def test_a_single_file_rejection_is_not_retried(monkeypatch):
    monkeypatch.setattr(derive, "with_full_project_input", lambda d: pytest.fail("must not be called"))
    flat = VerificationRequest(ADDRESS, "A", "contract A {}", CodeFormat.SINGLE_FILE, "v0.8.26+commit.8a97fa7a")
    client = ScriptedClient([answer(Outcome.FAILED, "Fail - Unable to verify")])
    assert make(client)._submit("A", FakeDerivation(flat)).outcome == "failed"


def test_an_address_handled_earlier_in_the_run_is_not_submitted_again():
    run = make(ScriptedClient([]))
    assert run._first_time(ADDRESS) is True
    run._finished(ADDRESS)
    assert run.contract(ADDRESS) == []  # returns at once: its event is set


def test_outcome_for_prefers_the_source_report_and_falls_back_to_the_proxy_link():
    source = report.Report("Box", ADDRESS, "verified")
    link = report.Report("clone", ADDRESS, "failed", kind="proxy")
    assert report.outcome_for(ADDRESS, [link, source]) is source
    assert report.outcome_for(ADDRESS.lower(), [link]) is link
    assert report.outcome_for(ADDRESS, []) is None


class DataChain:
    """A chain whose every address holds a data contract (code that starts with STOP)."""

    def get_code(self, address):
        return b"\x00stored bytes"


def test_without_a_chain_reader_it_reads_the_active_provider_as_deriving_does(monkeypatch):
    """`chain_reader=None` means the active Ape provider's reader (derive's rule), for
    identifying too: not an AttributeError on None."""
    from ape_contract_verify.derive import derive

    asked = []

    def provider_reader(chain_reader=None):
        asked.append(chain_reader)
        return chain_reader or DataChain()

    monkeypatch.setattr(derive, "chain_reader_or_provider", provider_reader)
    reports = make(ScriptedClient([])).contract(ADDRESS)
    assert [r.outcome for r in reports] == [Outcome.NOTHING_TO_VERIFY] and asked == [None]
    given = DataChain()
    assert (
        verification.Verification(ScriptedClient([]), given, target=TARGET, shared=Derivations(None)).reader is given
    )  # a run's own reader stands
