"""The explorer's SQLite store and job queue: durability, re-queue after a crash, quotas, GUIDs."""

import sqlite3
import string
import time

import pytest

from ape_contract_verify.explorer.jobs import JobRunner, request_to_payload
from ape_contract_verify.explorer.store import (
    DONE,
    PENDING,
    PROXY,
    RUNNING,
    SOURCE,
    Store,
    StoreOpenError,
    VerifiedContract,
    new_guid,
)
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.request import CodeFormat, VerificationRequest
from support.service import ADDRESS_A, ADDRESS_B, PROXY_ADDR, FakeChain, FakeEngine, wait_until
from support.service import SOURCE as BOX


def _payload(address, source=BOX, name="Box"):
    return request_to_payload(
        VerificationRequest(
            address=address,
            contract_name=name,
            source_code=source,
            code_format=CodeFormat.SINGLE_FILE,
            compiler_version="v0.8.26+commit.8a97fa7a",
        )
    )


def test_database_is_in_wal_mode(tmp_path):
    store = Store(tmp_path / "x.sqlite")
    mode = sqlite3.connect(tmp_path / "x.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    store.close()
    assert mode == "wal"


def test_guids_are_50_lowercase_alphanumerics_and_unique():
    guids = {new_guid() for _ in range(2000)}
    assert len(guids) == 2000
    assert all(len(g) == 50 and set(g) <= set(string.ascii_lowercase + string.digits) for g in guids)


def test_queue_is_first_in_first_out_and_claims_once(tmp_path):
    store = Store(tmp_path / "q.sqlite")
    first = store.add_submission(SOURCE, ADDRESS_A, _payload(ADDRESS_A))
    second = store.add_submission(SOURCE, ADDRESS_B, _payload(ADDRESS_B))
    a, b = store.claim_next(), store.claim_next()
    assert (a.guid, b.guid) == (first, second)
    assert a.state == RUNNING and a.attempts == 1
    assert store.claim_next() is None
    store.close()


def test_a_job_left_running_by_a_killed_process_is_finished_after_restart(tmp_path):
    path = tmp_path / "crash.sqlite"
    store = Store(path)
    guids = [
        store.add_submission(SOURCE, ADDRESS_A if n % 2 else ADDRESS_B, _payload(ADDRESS_A if n % 2 else ADDRESS_B))
        for n in range(4)
    ]
    claimed = store.claim_next()  # the "killed" worker had started this one
    assert claimed.guid == guids[0]
    # No close(): a killed process closes nothing. A new process opens the same file.
    reopened = Store(path)
    assert reopened.count(RUNNING) == 1 and reopened.count(PENDING) == 3
    chain = FakeChain()
    runner = JobRunner(reopened, FakeEngine(chain)).start()
    try:
        assert runner.requeued == 1
        assert wait_until(lambda: reopened.count(DONE) == 4, timeout=20)
    finally:
        runner.stop()
    answers = [reopened.get_submission(g) for g in guids]
    assert answers[0].attempts == 2  # the interrupted one ran again
    assert [a.result for a in answers] == [Texts.PASS, Texts.PASS, Texts.ALREADY_VERIFIED, Texts.ALREADY_VERIFIED]
    assert reopened.get_contract(ADDRESS_A).abi.startswith("[")
    reopened.close()
    store.close()


def test_a_worker_survives_an_engine_exception(tmp_path):
    store = Store(tmp_path / "w.sqlite")
    chain = FakeChain()
    bad = store.add_submission(SOURCE, ADDRESS_A, _payload(ADDRESS_A, BOX + "// CRASH\n"))
    good = store.add_submission(SOURCE, ADDRESS_B, _payload(ADDRESS_B))
    runner = JobRunner(store, FakeEngine(chain)).start()
    try:
        assert wait_until(lambda: store.count(DONE) == 2, timeout=20)
    finally:
        runner.stop()
    assert store.get_submission(bad).result.startswith("Fail - Unable to verify. The verifier stopped with an error")
    assert store.get_submission(good).result == Texts.PASS
    store.close()


def test_proxy_quota_is_per_key_and_per_day(tmp_path):
    store = Store(tmp_path / "quota.sqlite")
    assert all(store.take_proxy_quota("k1", day="2026-01-01") for _ in range(100))
    assert not store.take_proxy_quota("k1", day="2026-01-01")
    assert not store.take_proxy_quota("k1", day="2026-01-01")  # a refusal is not counted up
    assert store.take_proxy_quota("k2", day="2026-01-01")
    assert store.take_proxy_quota("k1", day="2026-01-02")
    assert store.take_proxy_quota(None, limit=1, day="2026-01-01")
    assert not store.take_proxy_quota(None, limit=1, day="2026-01-01")
    store.close()
    assert b"k1" not in (tmp_path / "quota.sqlite").read_bytes()


def test_finish_records_answer_and_contract_together_and_survives_reopen(tmp_path):
    path = tmp_path / "c.sqlite"
    store = Store(path)
    guid = store.add_submission(PROXY, PROXY_ADDR, {"expected_implementation": ""})
    contract = VerifiedContract(
        address=ADDRESS_A.upper().replace("0X", "0x"),
        contract_name="Box",
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-single-file",
        source_code=BOX,
        abi="[]",
        libraries={"MathLib": ADDRESS_B},
        match="partial",
    )
    store.finish(guid, "1", "done", contract=contract)
    store.close()
    again = Store(path)
    got = again.get_contract(ADDRESS_A)
    assert got.libraries == {"MathLib": ADDRESS_B} and got.match == "partial" and got.verified_at <= time.time()
    assert again.get_submission(guid).state == DONE and again.get_submission(guid).result == "done"
    again.close()


def test_a_store_an_earlier_version_made_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE contracts (address TEXT PRIMARY KEY, source_code TEXT)")
    with pytest.raises(StoreOpenError, match="an earlier version of the plugin made it: move it away"):
        Store(path)
