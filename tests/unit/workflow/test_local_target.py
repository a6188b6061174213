"""workflow/local_target.py: the local explorer as a VerificationTarget in this process. Its
answers are the contract API's (the same texts and outcomes as over HTTP), it opens no socket,
and it waits for a job without polling; several threads share one."""

import socket
from concurrent.futures import ThreadPoolExecutor

import pytest

from ape_contract_verify.client.provider import VerificationTarget
from ape_contract_verify.exceptions import AddressNotFound, ContractNotVerified, VerificationRejected
from ape_contract_verify.explorer.contract_api import EmbeddedExplorer
from ape_contract_verify.protocol.answers import Outcome, Texts
from ape_contract_verify.protocol.forms import form_to_request
from ape_contract_verify.request import Receipt
from ape_contract_verify.workflow.local_target import LocalTarget
from support.service import ADDRESS_A, ADDRESS_B, EMPTY_ADDR, IMPL_ADDR, PROXY_ADDR, FakeChain, FakeEngine, form

pytestmark = pytest.mark.unit


@pytest.fixture
def no_sockets(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the in-process target opened a socket")

    monkeypatch.setattr(socket.socket, "bind", refuse)
    monkeypatch.setattr(socket.socket, "listen", refuse)


@pytest.fixture
def target(no_sockets):
    chain = FakeChain()
    explorer = EmbeddedExplorer(chain, engine=FakeEngine(chain)).start()
    yield LocalTarget(explorer)
    explorer.stop()


def request(address: str = ADDRESS_A, **extra: str):
    return form_to_request(form(address, **extra))


def test_it_is_a_verification_target_of_the_local_flavour(target):
    assert isinstance(target, VerificationTarget)
    assert (target.kind, target.flavour, target.kind.links_proxies) == ("etherscan", "local", True)
    assert target.link(ADDRESS_A) is None  # no pages without a server


def test_a_submission_verifies_and_the_record_is_getsourcecode_s(target):
    receipt = target.verify_source_code(request())
    assert receipt.guid and not receipt.already_verified
    progress = []
    answer = target.wait(receipt, interval=5, timeout=10, on_progress=progress.append)
    assert (answer.outcome, answer.reason) == (Outcome.VERIFIED, Texts.PASS)
    assert progress[-1] == answer
    record = target.contract_record(ADDRESS_A)
    assert record.verified and record.name == "Box" and record.compiler == "v0.8.26+commit.8a97fa7a"
    assert record.optimization_used and record.runs == 200 and "contract Box" in next(iter(record.files.values()))
    assert [entry["name"] for entry in target.get_abi(ADDRESS_A)] == ["value"]
    again = target.verify_source_code(request())
    assert again.already_verified and again.guid == "" and target.wait(again).outcome == Outcome.ALREADY_VERIFIED


def test_a_failed_verification_answers_the_engine_s_reason(target):
    receipt = target.verify_source_code(request(sourceCode="contract Box {}\n// FAIL: Bytecode does not match"))
    answer = target.wait(receipt, timeout=10)
    assert answer.outcome == Outcome.FAILED and answer.reason == f"{Texts.FAIL}. Bytecode does not match"


def test_refusals_are_the_client_s_errors(target):
    with pytest.raises(AddressNotFound) as found:
        target.verify_source_code(request(EMPTY_ADDR))
    assert found.value.answer.outcome == Outcome.NOT_FOUND
    with pytest.raises(ContractNotVerified):
        target.get_abi(ADDRESS_B)
    assert not target.contract_record(ADDRESS_B).verified
    with pytest.raises(AddressNotFound):
        target.verify_proxy(EMPTY_ADDR)
    target.explorer.proxy_daily_limit = 0
    with pytest.raises(VerificationRejected, match="Max daily proxy verification submissions reached") as refused:
        target.verify_proxy(PROXY_ADDR)
    assert refused.value.answer.status == "0"


def test_a_proxy_is_linked(target):
    receipt = target.verify_proxy(PROXY_ADDR, IMPL_ADDR)
    assert receipt.proxy and target.wait(receipt, timeout=10).outcome == Outcome.VERIFIED
    assert target.explorer.store.get_proxy(PROXY_ADDR).implementation == IMPL_ADDR


def test_a_job_still_pending_at_the_timeout_says_how_to_check_later(no_sockets):
    chain = FakeChain()
    engine = FakeEngine(chain)
    engine.gate.clear()  # the job never ends
    explorer = EmbeddedExplorer(chain, engine=engine).start()
    try:
        receipt = LocalTarget(explorer).verify_source_code(request())
        with pytest.raises(Exception, match="ape verify status") as timed_out:
            LocalTarget(explorer).wait(Receipt(receipt.guid, ADDRESS_A), interval=0.05, timeout=0.2)
        assert timed_out.value.answer.outcome == Outcome.PENDING
    finally:
        engine.gate.set()
        explorer.stop()


def test_worker_threads_share_one_target(target):
    addresses = [ADDRESS_A, ADDRESS_B]

    def verify(address):
        source = "contract Box { }" if address == ADDRESS_A else "contract Box { uint x; }"
        return target.wait(target.verify_source_code(request(address, sourceCode=source)), timeout=20).outcome

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(verify, addresses * 2)).count(Outcome.VERIFIED) >= 2
    assert all(target.contract_record(address).verified for address in addresses)
