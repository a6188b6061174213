"""Faults: a node that cannot be read keeps a job pending and retried with backoff, up to a bound,
then one text; a job that keeps being interrupted (its process killed) ends with a reason.

The unit tests use a chain that fails on demand; the engine tests a real anvil stopped mid-job and
restarted with its state (`--state`), and a node that never comes back.

What a verified contract keeps for the Sourcify face's lookups."""

import time

import pytest

from ape_contract_verify.engine.verifier import FailureKind, VerificationResult
from ape_contract_verify.evm.reads import ChainError
from ape_contract_verify.explorer import jobs
from ape_contract_verify.explorer.jobs import JobRunner, request_to_payload
from ape_contract_verify.explorer.store import DONE, PENDING, PROXY, RUNNING, SOURCE, Store
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.retry import RetryPolicy
from support.service import (
    ADDRESS_A,
    PROXY_ADDR,
    FakeChain,
    FakeEngine,
    FakeResult,
    wait_until,
)
from support.service import (
    SOURCE as BOX,
)

FAST = RetryPolicy(max_retries=3, base_delay=0.05, max_delay=0.2, jitter=False)
CHAIN_TEXT_START = (
    "Fail - Unable to verify. This could be a temporary error, please retry or contact us (Error Code 10001): "
)


def _payload(address=ADDRESS_A, source=BOX):
    return request_to_payload(
        VerificationRequest(
            address=address,
            contract_name="Box",
            source_code=source,
            code_format=CodeFormat.SINGLE_FILE,
            compiler_version="v0.8.26+commit.8a97fa7a",
        )
    )


class FlakyChain(FakeChain):
    """A FakeChain whose node is down (ChainError, as JsonRpcChain raises it) while `down` is set."""

    def __init__(self):
        super().__init__()
        self.down = True
        self.failed = 0

    def get_code(self, address):
        if self.down:
            self.failed += 1
            raise ChainError("the node at http://127.0.0.1:1 did not answer eth_getCode: Connection refused")
        return super().get_code(address)


class ChainFailureEngine(FakeEngine):
    """The engine's own way to say it: a result whose failure is the chain (Verifier catches ChainError)."""

    def __init__(self, chain, failing: int):
        super().__init__(chain)
        self.failing = failing

    def verify(self, request):
        if self.failing > 0:
            self.failing -= 1
            result = FakeResult(False, reason="The chain could not be read: the node rejected eth_getTransactionByHash")
            result.failure = FailureKind.CHAIN
            return result
        return super().verify(request)


def _runner(store, engine, retry=FAST):
    return JobRunner(store, engine, idle_poll=0.02, chain_retry=retry).start()


def test_a_node_that_comes_back_finishes_the_job_verified(tmp_path):
    store, chain = Store(tmp_path / "q.sqlite"), FlakyChain()
    runner = _runner(
        store, FakeEngine(chain), RetryPolicy(max_retries=50, base_delay=0.02, max_delay=0.05, jitter=False)
    )
    try:
        guid = store.add_submission(SOURCE, ADDRESS_A, _payload())
        runner.notify()
        assert wait_until(lambda: chain.failed >= 2, timeout=10)
        pending = store.get_submission(guid)
        assert pending.state in (PENDING, RUNNING) and pending.result is None  # no Fail while it waits
        chain.down = False
        assert wait_until(lambda: store.get_submission(guid).state == DONE, timeout=10)
    finally:
        runner.stop()
    done = store.get_submission(guid)
    assert done.result == Texts.PASS and done.chain_failures >= 2
    assert store.get_contract(ADDRESS_A) is not None
    store.close()


@pytest.mark.parametrize("where", ["worker", "engine", "proxy"])
def test_a_node_that_never_comes_back_ends_with_one_text_within_the_bound(tmp_path, where):
    store, chain = Store(tmp_path / "q.sqlite"), FlakyChain()
    if where == "engine":  # the node answers get_code; the Verifier's own read fails
        chain.down = False
        engine = ChainFailureEngine(chain, failing=100)
    else:
        engine = FakeEngine(chain)
    if where == "proxy":
        engine.detect_proxy = lambda address: chain.get_code(address)  # a proxy job reads the node first
    runner = _runner(store, engine)
    started = time.monotonic()
    try:
        kind = PROXY if where == "proxy" else SOURCE
        guid = store.add_submission(kind, PROXY_ADDR if where == "proxy" else ADDRESS_A, _payload())
        runner.notify()
        assert wait_until(lambda: store.get_submission(guid).state == DONE, timeout=10)
    finally:
        runner.stop()
    elapsed = time.monotonic() - started
    done = store.get_submission(guid)
    # 1 run + 3 retries, waiting 0.05 + 0.1 + 0.2 s: one text, whichever read failed.
    assert done.attempts == 4 and done.chain_failures == 3
    assert elapsed < 5
    assert done.status == "0"
    assert done.result.startswith(CHAIN_TEXT_START), done.result
    assert "in 4 tries over 0 s" in done.result and done.result.endswith("submit again once the node answers")
    assert "ChainError" not in done.result and "verifier stopped" not in done.result
    assert store.get_contract(ADDRESS_A) is None and store.get_proxy(PROXY_ADDR) is None
    store.close()


def test_the_engine_s_chain_failure_is_retried_not_a_fail(tmp_path):
    store, chain = Store(tmp_path / "q.sqlite"), FakeChain()
    runner = _runner(store, ChainFailureEngine(chain, failing=2))
    try:
        guid = store.add_submission(SOURCE, ADDRESS_A, _payload())
        runner.notify()
        assert wait_until(lambda: store.get_submission(guid).state == DONE, timeout=10)
    finally:
        runner.stop()
    assert store.get_submission(guid).result == Texts.PASS
    store.close()


def test_a_retry_waits_its_backoff_before_it_is_claimed(tmp_path):
    store = Store(tmp_path / "q.sqlite")
    guid = store.add_submission(SOURCE, ADDRESS_A, _payload())
    assert store.claim_next().guid == guid
    store.retry_later(guid, 0.5)
    assert store.get_submission(guid).state == PENDING
    assert store.claim_next() is None  # not before its time
    assert wait_until(lambda: store.get_submission(guid).retry_at <= time.time(), timeout=2)
    again = store.claim_next()
    assert again.guid == guid and again.attempts == 2 and again.chain_failures == 1
    store.close()


def test_the_backoff_doubles_up_to_its_cap():
    retry = RetryPolicy(max_retries=6, base_delay=2, max_delay=60, jitter=False)
    assert [retry.delay(n) for n in range(6)] == [2, 4, 8, 16, 32, 60]
    assert retry.total(6) == 122


def test_an_interrupted_job_is_requeued_a_few_times_then_fails_with_a_reason(tmp_path):
    path = tmp_path / "crash.sqlite"
    first = Store(path)
    guid = first.add_submission(SOURCE, ADDRESS_A, _payload())
    stores = [first]
    for n in (1, 2):
        stores.append(Store(path))  # a process claims the job and is killed (it closes nothing)
        assert stores[-1].claim_next().attempts == n
        stores.append(Store(path))  # the next process puts it back
        assert stores[-1].requeue_interrupted(3, "reason") == (1, 0)
    stores.append(Store(path))
    stores[-1].claim_next()  # the third run is killed too
    store, chain = Store(path), FakeChain()
    runner = JobRunner(store, FakeEngine(chain), idle_poll=0.02).start()  # MAX_INTERRUPTIONS: 3
    try:
        assert runner.requeued == 0
        done = store.get_submission(guid)
    finally:
        runner.stop()
    assert done.state == DONE and done.status == "0"
    assert done.result == Texts.JOB_INTERRUPTED.format(times=3)
    assert done.result.startswith("Fail - Unable to verify. This could be a temporary error")
    assert chain.calls == 0  # not run a fourth time
    for other in (store, *stores):
        other.close()


def test_details_keep_what_a_lookup_serves_and_drop_what_is_empty():
    result = VerificationResult(
        True, "full", "", recompiled_creation="6080", onchain_creation="", creation_tx="0x" + "aa" * 32, deployer=""
    )
    kept = jobs.result_fields(result, jobs.KEPT)
    assert kept == {"recompiled_creation": "6080", "creation_tx": "0x" + "aa" * 32, "factory": False}


def test_chain_retries_are_not_counted_as_interruptions(tmp_path):
    path = tmp_path / "q.sqlite"
    store = Store(path)
    guid = store.add_submission(SOURCE, ADDRESS_A, _payload())
    for _ in range(5):  # five runs that each found the node down
        assert store.claim_next().guid == guid
        store.retry_later(guid, 0)
    store.claim_next()  # then the process is killed mid-run: one interruption
    reopened = Store(path)
    assert reopened.requeue_interrupted(2, "reason") == (1, 0)
    assert reopened.get_submission(guid).state == PENDING
    store.close()
    reopened.close()
