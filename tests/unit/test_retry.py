"""The one resilience mechanism (`ape_contract_verify.retry`), tested directly: the backoff's growth
and jitter, Retry-After, giving up after N, a dead target found out once for every caller (the poll
loop's deadline and outage are `HttpTarget.wait`'s: tests/unit/client/test_http.py). A fake clock: sleeping advances it, nothing waits."""

import random

import pytest

from ape_contract_verify.exceptions import ExplorerUnavailable, TargetDown
from ape_contract_verify.retry import Retry, RetryPolicy, TargetHealth, with_retries
from support.stub_server import Clock


class Limiter:
    def __init__(self) -> None:
        self.acquired = 0
        self.paused: list[float] = []

    def acquire(self) -> None:
        self.acquired += 1

    def pause(self, seconds: float) -> None:
        self.paused.append(seconds)


def test_backoff_doubles_up_to_its_cap_with_equal_jitter():
    policy = RetryPolicy(max_retries=8, base_delay=0.5, max_delay=6.0)
    rng = random.Random(7)
    for attempt in range(9):
        cap = min(6.0, 0.5 * 2**attempt)
        delays = [policy.delay(attempt, rng) for _ in range(200)]
        assert all(cap / 2 <= d <= cap for d in delays), (attempt, min(delays), max(delays))
        assert max(delays) - min(delays) > cap / 4  # jittered, not one fixed delay
    assert policy.delay(20, rng) <= 6.0


def test_retry_after_is_honoured_and_bounded():
    policy = RetryPolicy(max_retries=3, base_delay=1.0, max_delay=10.0)
    assert policy.retry_after("3") == 3.0
    assert policy.retry_after("120") == 10.0
    assert policy.retry_after("-4") == 0.0
    assert policy.retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is None and policy.retry_after(None) is None

    clock, limiter = Clock(), Limiter()
    answers = iter([Retry("HTTP 429", delay=2.5, rate_limited=True), Retry("HTTP 503"), "done"])

    def attempt():
        answer = next(answers)
        if isinstance(answer, Retry):
            raise answer
        return answer

    result = with_retries(
        attempt,
        policy=policy,
        gave_up=lambda last: AssertionError(last),
        label="t",
        sleep=clock.sleep,
        rng=random.Random(1),
        limiter=limiter,
    )
    assert result == "done" and limiter.acquired == 3
    assert clock.slept[0] == 2.5  # the server's word, not the backoff
    assert 1.0 <= clock.slept[1] <= 2.0  # the backoff's second step: cap 2 s, jittered
    assert limiter.paused == [2.5]  # only the rate limit holds every caller of the limiter back


def test_gives_up_after_n_retries_with_the_last_reason():
    clock, tries = Clock(), []
    policy = RetryPolicy(max_retries=4, base_delay=0.1, max_delay=1.0)

    def attempt():
        tries.append(clock.now)
        raise Retry(f"HTTP 502 #{len(tries)}")

    with pytest.raises(ExplorerUnavailable, match="HTTP 502 #5; gave up after 4"):
        with_retries(
            attempt,
            policy=policy,
            label="t",
            sleep=clock.sleep,
            gave_up=lambda last: ExplorerUnavailable(f"{last.reason}; gave up after {policy.max_retries}"),
        )
    assert len(tries) == 5 and len(clock.slept) == 4
    retried = []
    with pytest.raises(ExplorerUnavailable):
        with_retries(
            attempt,
            policy=policy,
            label="t",
            sleep=clock.sleep,
            on_retry=retried.append,
            gave_up=lambda last: ExplorerUnavailable(last.reason),
        )
    assert len(retried) == 4  # one per retry, never for the last try


def test_an_answer_that_is_not_a_retry_ends_the_call_at_once():
    clock, tries = Clock(), []

    def attempt():
        tries.append(1)
        raise ValueError("a final answer")

    with pytest.raises(ValueError):
        with_retries(attempt, policy=RetryPolicy(), label="t", sleep=clock.sleep, gave_up=lambda last: AssertionError())
    assert tries == [1] and clock.slept == []


def test_a_dead_target_is_found_out_once_and_every_later_call_ends_at_once():
    clock = Clock()
    health = TargetHealth("dead", strikes=3, seconds=2.0, clock=clock)
    policy = RetryPolicy(max_retries=1, base_delay=1.0, max_delay=2.0)
    sent = []

    def refused():
        sent.append(clock.now)
        health.unreachable("connection refused")
        raise Retry("ConnectionError", unreachable=True)

    # One retry allowed, but the call goes on while the strikes could still mark the target down.
    with pytest.raises(TargetDown, match="target dead is down: connection refused"):
        with_retries(
            refused,
            policy=policy,
            label="t",
            sleep=clock.sleep,
            health=health,
            gave_up=lambda last: ExplorerUnavailable(last.reason),
        )
    assert health.down and len(sent) >= 3
    before = len(sent)
    for _ in range(5):  # the other callers: nothing sent, no wait, the one reason
        with pytest.raises(TargetDown) as info:
            with_retries(
                refused,
                policy=policy,
                label="t",
                sleep=clock.sleep,
                health=health,
                gave_up=lambda last: AssertionError(),
            )
        assert str(info.value) == health.reason
    assert len(sent) == before


def test_an_answering_target_is_never_marked_down():
    clock = Clock()
    health = TargetHealth("slow", strikes=3, seconds=2.0, clock=clock)

    def busy():
        health.answered()
        raise Retry("HTTP 503")

    with pytest.raises(ExplorerUnavailable, match="gave up"):
        with_retries(
            busy,
            policy=RetryPolicy(max_retries=3, base_delay=1.0, max_delay=2.0),
            label="t",
            sleep=clock.sleep,
            health=health,
            gave_up=lambda last: ExplorerUnavailable("gave up"),
        )
    assert not health.down
