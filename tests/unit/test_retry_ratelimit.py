"""Faults over real sockets: dropped connections, stalls past the timeout, 429, 502, rate-limit
answers, lost responses. Retries are bounded, end in success when the explorer recovers, and a
duplicate submission after a lost response is a success."""

import threading
import time

import pytest

from ape_contract_verify.exceptions import ExplorerUnavailable, RateLimited, VerificationTimeout
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.request import Receipt
from ape_contract_verify.retry import RateLimiter, limiter_for
from support.client import Texts, single_file_request
from support.stub_server import GUID, Drop, Http, Sleeps, Stall, make_client, notok, ok

PASS = ok(Texts.PASS)


@pytest.mark.parametrize(
    "fault",
    [
        Drop(),
        Stall(1.5),
        Http(408, "timeout"),
        Http(429, "slow down"),
        Http(502, "<html>Bad Gateway</html>"),
        Http(503),
        Http(200, "<html>cf</html>"),
    ],
    ids=["drop", "stall", "408", "429", "502", "503", "html-200"],
)
def test_faults_are_retried_until_success(stub, fault):
    stub.answer(fault, fault, PASS)
    sleeps = Sleeps()
    client = make_client(stub, timeout=(1.0, 0.5), sleep=sleeps)
    answer = client.job_status(GUID)
    assert answer.outcome == Outcome.VERIFIED
    assert len(stub.seen) == 3
    assert len(sleeps) == 2 and all(0 < s <= 0.05 for s in sleeps)  # bounded backoff


@pytest.mark.parametrize("fault", [Drop(), Http(502), Http(429)], ids=["drop", "502", "429"])
def test_retries_are_bounded(stub, fault):
    stub.default = lambda seen: fault
    sleeps = Sleeps()
    client = make_client(stub, max_retries=3, sleep=sleeps)
    with pytest.raises(ExplorerUnavailable) as info:
        client.get_abi("0x5FbDB2315678afecb367f032d93F642f64180aa3")
    assert not isinstance(info.value, RateLimited)
    assert len(stub.seen) == 4  # one try + 3 retries, then a typed error
    assert "gave up after 3 retries" in str(info.value)


def test_other_client_errors_are_not_retried(stub):
    from ape_contract_verify.exceptions import BadEndpoint

    stub.default = lambda seen: Http(404, "no such path")
    with pytest.raises(BadEndpoint) as info:
        make_client(stub).job_status(GUID)
    assert "HTTP 404" in str(info.value) and "base URL" in str(info.value)
    assert len(stub.seen) == 1


def test_backoff_grows_exponentially_with_jitter_and_a_cap(stub):
    stub.default = lambda seen: Http(503)
    sleeps = Sleeps()
    client = make_client(stub, max_retries=6, backoff=1.0, max_backoff=8.0, sleep=sleeps)
    with pytest.raises(ExplorerUnavailable):
        client.job_status(GUID)
    caps = [1, 2, 4, 8, 8, 8]
    assert len(sleeps) == 6
    for slept, cap in zip(sleeps, caps):
        assert cap / 2 <= slept <= cap


def test_retry_after_header_is_honoured(stub):
    stub.answer(Http(429, "", {"Retry-After": "0.03"}), PASS)
    sleeps = Sleeps()
    make_client(stub, sleep=sleeps).job_status(GUID)
    assert sleeps == [0.03]


def test_persistent_rate_limit_is_a_rate_limit_error_not_a_failure(stub):
    stub.default = lambda seen: notok(Texts.RATE_LIMIT_PER_SEC.format(n=3))
    client = make_client(stub, max_retries=2)
    with pytest.raises(RateLimited) as info:
        client.verify_source_code(single_file_request())
    assert info.value.answer.outcome == Outcome.RATE_LIMITED
    assert len(stub.seen) == 3


def test_rate_limit_answer_pauses_every_thread_sharing_the_limiter(stub):
    limiter = RateLimiter(1000.0)
    stub.answer(notok(Texts.RATE_LIMIT), PASS)
    other_waits = []
    # While the rate-limited caller backs off, any other caller of the same limiter is held too.
    client = make_client(
        stub, limiter=limiter, backoff=0.2, max_backoff=0.2, sleep=lambda s: other_waits.append(limiter.reserve())
    )
    assert client.job_status(GUID).outcome == Outcome.VERIFIED
    assert len(other_waits) == 1 and other_waits[0] > 0.05


def test_lost_response_then_duplicate_submission_is_a_success(stub):
    """The explorer accepted the first POST but the answer was lost; the retry hears "already verified"."""
    stub.answer(Drop(), notok(Texts.SOURCE_ALREADY_VERIFIED))
    client = make_client(stub)
    receipt = client.verify_source_code(single_file_request())
    assert receipt.already_verified and receipt.guid == ""
    assert client.wait(receipt).outcome.is_success
    assert stub.actions() == ["verifysourcecode", "verifysourcecode"]


def test_stalled_submission_then_new_guid_is_polled_to_success(stub):
    stub.answer(Stall(1.0, then=ok("x" * 50)), ok(GUID), notok(Texts.PENDING), PASS)
    client = make_client(stub, timeout=(1.0, 0.3))
    receipt = client.verify_source_code(single_file_request())
    assert receipt.guid == GUID
    assert client.wait(receipt, interval=0.01, timeout=5).outcome == Outcome.VERIFIED


def test_polling_is_bounded_by_its_timeout(stub):
    stub.default = lambda seen: notok(Texts.PENDING)
    clock = [0.0]

    def sleep(seconds):
        clock[0] += seconds

    client = make_client(stub, sleep=sleep, clock=lambda: clock[0])
    with pytest.raises(VerificationTimeout) as info:
        client.wait(Receipt(guid=GUID, address="0x" + "1" * 40), interval=5, timeout=30)
    assert info.value.answer.outcome == Outcome.PENDING
    assert len(stub.seen) == 6  # t = 5, 10, ..., 30: a check at t = 0 would only hear "Pending"
    assert "ape verify status" in str(info.value)


def test_later_jobs_are_first_checked_when_earlier_ones_had_finished(stub):
    """A check right after a submission only hears "Pending": the first job's first check waits
    one interval; once jobs at this explorer have ended, the next first check waits about as long
    as they took (fewer rate-limited calls)."""
    clock = [0.0]
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        clock[0] += seconds

    client = make_client(stub, sleep=sleep, clock=lambda: clock[0])
    receipt = Receipt(guid=GUID, address="0x" + "1" * 40)
    stub.answer(notok(Texts.PENDING), notok(Texts.PENDING), PASS)  # checked at t = 1, 2, 3
    assert client.wait(receipt, interval=1, timeout=30).outcome == Outcome.VERIFIED
    assert len(stub.seen) == 3 and slept == [1, 1, 1]
    stub.answer(PASS)
    slept.clear()
    assert client.wait(receipt, interval=1, timeout=30).outcome == Outcome.VERIFIED
    assert len(stub.seen) == 4 and slept == [3]  # one check, after the 3 s the first job took
    # Final at the first check counts as 0.9 x the time taken, so the wait shrinks when it can.
    stub.answer(PASS, PASS)
    slept.clear()
    client.wait(receipt, interval=1, timeout=30)
    client.wait(receipt, interval=1, timeout=30)
    assert len(stub.seen) == 6 and slept == [3, pytest.approx(2.7)]
    stub.answer(PASS)
    slept.clear()
    client.wait(receipt, interval=1, timeout=30, fresh=False)
    assert len(stub.seen) == 7 and slept == []  # a GUID from earlier is checked at once


def test_a_batch_polls_its_oldest_job_until_one_has_ended(stub):
    """Before any job has ended, a job submitted after a still-pending one is not checked: the
    explorer works in order. Once the oldest ends, the others are checked when they are due."""
    done_at = {"a" * 50: 4, "b" * 50: 1}  # the check that says it ended, counted per job (not by the clock:
    checked = {"a": 0, "b": 0}  # a loaded machine stretches every sleep)

    def answer(seen):
        guid = seen.params.get("guid", "")
        checked[guid[0]] += 1
        return PASS if checked[guid[0]] >= done_at[guid] else notok(Texts.PENDING)

    stub.default = answer
    client = make_client(stub, sleep=time.sleep)
    results = {}

    def wait(guid):
        results[guid] = client.wait(Receipt(guid=guid, address="0x" + "1" * 40), interval=0.1, timeout=10)

    older = threading.Thread(target=wait, args=("a" * 50,))
    older.start()
    time.sleep(0.03)
    wait("b" * 50)
    older.join(10)
    assert {g: r.outcome for g, r in results.items()} == {g: Outcome.VERIFIED for g in done_at}
    checks = [s.params["guid"][0] for s in stub.seen]
    assert checks.count("a") == 4 and checks.count("b") == 1, checks
    assert checks.index("b") > checks.index("a") + 2, checks  # not checked while "a" was pending


def test_polling_rides_out_an_outage(stub):
    stub.answer(notok(Texts.PENDING), *[Http(502)] * 3, PASS)  # one poll exhausts max_retries=2
    client = make_client(stub, max_retries=2)
    answer = client.wait(Receipt(guid=GUID, address="0x" + "1" * 40), interval=0.01, timeout=5)
    assert answer.outcome == Outcome.VERIFIED


def test_polling_gives_up_on_an_explorer_gone_for_good_long_before_the_timeout(stub):
    """Three failed checks in a row over 10 s end the job with the outage, not 300 s of polling."""
    stub.answer(notok(Texts.PENDING), *[Http(502)] * 400)
    now = [0.0]
    sleeps = Sleeps()

    def sleep(seconds):
        sleeps(seconds)
        now[0] += seconds

    client = make_client(stub, max_retries=1, sleep=sleep, clock=lambda: now[0])
    with pytest.raises(ExplorerUnavailable, match="HTTP 502"):
        client.wait(Receipt(guid=GUID, address="0x" + "1" * 40), interval=1.0, timeout=300)
    assert 10 <= now[0] < 30, now[0]


# -- the limiter ---------------------------------------------------------------------------------


def test_limiter_spaces_slots_evenly_under_a_fake_clock():
    limiter = RateLimiter(4.0, clock=lambda: 10.0, sleep=lambda s: None, margin=0.0)
    waits = [limiter.reserve() for _ in range(5)]
    assert waits == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_limiter_keeps_the_gap_when_a_sender_wakes_late():
    clock = [0.0]
    overshoot = [0.05]

    def sleep(seconds):  # the first sleep wakes 50 ms late, as a busy machine does
        clock[0] += seconds + overshoot.pop() if overshoot else seconds

    limiter = RateLimiter(10.0, clock=lambda: clock[0], sleep=sleep, margin=0.0)
    sent = []
    for _ in range(4):
        limiter.acquire()
        sent.append(round(clock[0], 6))
    assert sent == [0.0, 0.15, 0.25, 0.35]  # never closer than 0.1 s, even after the late wake-up


def test_limiter_is_shared_per_base_url_and_never_speeds_up():
    a = limiter_for("http://127.0.0.1:9/api", 3.0)
    assert limiter_for("http://127.0.0.1:9/api/", 10.0) is a
    assert a.calls_per_second == pytest.approx(3.0)
    limiter_for("http://127.0.0.1:9/api", 2.0)
    assert a.calls_per_second == pytest.approx(2.0)
    assert limiter_for("http://127.0.0.1:10/api", 3.0) is not a


def test_limiter_holds_the_rate_across_threads_over_http(stub):
    stub.default = lambda seen: PASS
    rate = 20.0
    limiter = RateLimiter(rate)
    client = make_client(stub, limiter=limiter)
    times, lock = [], threading.Lock()

    def worker():
        for _ in range(5):
            client.job_status(GUID)
            with lock:
                times.append(time.monotonic())

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(times) == 20
    times.sort()
    # no one-second window ever holds more than `rate` calls (small slack for scheduling)
    window = max(sum(1 for t in times if start <= t < start + 1.0) for start in times)
    assert window <= rate + 1
    assert (times[-1] - times[0]) >= 19 / rate * 0.9
