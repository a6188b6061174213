"""The one resilience mechanism: how every remote call of the plugin waits, retries and gives up,
and how a submitted job is polled to its final answer.

Explorer clients (`client/`) and node readers (`evm/chain.py`) both use it: a `RetryPolicy`
(bounded exponential backoff with jitter, the server's Retry-After honoured), `with_retries`
(attempts under an optional rate limiter and an optional `Health`, a dead target found out once
for every caller), and `poll_until_final` (a job checked until its answer is final, a lasting
outage ending it early). It knows nothing of HTTP: callers turn their faults into `Retry`.
"""

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ape_contract_verify.exceptions import ExplorerUnavailable, TargetDown
from ape_contract_verify.logs import get_logger

logger = get_logger()
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with "equal jitter": retry `attempt` (0-based) waits a delay in
    [cap/2, cap], cap = min(max_delay, base_delay * 2**attempt) (exactly cap without `jitter`: the
    local explorer's queue, whose texts say how long a job waited); a server's Retry-After instead,
    at most `max_delay`."""

    max_retries: int = 5
    base_delay: float = 1.0
    max_delay: float = 16.0
    jitter: bool = True

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        cap = min(self.max_delay, self.base_delay * (2.0**attempt))
        if not self.jitter:
            return cap
        return cap / 2 + (rng or random.Random()).random() * cap / 2

    def total(self, retries: int) -> float:
        """The waits of the first `retries` retries (exact without jitter)."""
        return sum(self.delay(attempt) for attempt in range(retries))

    def retry_after(self, header: str | None) -> float | None:
        """A Retry-After header's seconds, bounded by `max_delay`; None when absent or not a number."""
        try:
            return min(self.max_delay, max(0.0, float(header or "")))
        except ValueError:
            return None


class Retry(Exception):
    """One attempt failed in a way worth retrying. `delay`: what the server asked for (Retry-After);
    `rate_limited`: the server said we were too fast; `unreachable`: no answer at all (refused,
    timed out), what counts toward a target being down; `pauses`: its wait holds back every caller
    of the limiter too (by default a rate limit does)."""

    def __init__(
        self,
        reason: str,
        delay: float | None = None,
        rate_limited: bool = False,
        answer: object = None,
        unreachable: bool = False,
        pauses: bool | None = None,
    ):
        self.reason, self.delay, self.rate_limited, self.answer = reason, delay, rate_limited, answer
        self.unreachable, self.pauses = unreachable, rate_limited if pauses is None else pauses
        super().__init__(reason)


class Limiter(Protocol):
    """A rate limiter shared by every caller of one target (`client/ratelimit.RateLimiter`)."""

    def acquire(self) -> None: ...

    def pause(self, seconds: float) -> None: ...


class Health(Protocol):
    """Whether a target still answers, shared by every caller of it (`client/health.TargetHealth`)."""

    name: str

    def check(self) -> None: ...

    def now(self) -> float: ...

    def deciding(self, since: float, grace: float) -> bool: ...


def with_retries(
    attempt: Callable[[], T],
    *,
    policy: RetryPolicy,
    gave_up: Callable[[Retry | None], Exception],
    label: str,
    sleep: Callable[[float], None],
    rng: random.Random | None = None,
    limiter: Limiter | None = None,
    health: Health | None = None,
    on_retry: Callable[[Retry], None] | None = None,
    quiet: bool = False,
) -> T:
    """`attempt()` (under the limiter) until it returns, at most `policy.max_retries` retries after
    a `Retry`. A retry the server asked for (Retry-After) waits that long; one that `pauses`
    holds every caller of the limiter back too. `on_retry` hears each retry before its wait;
    `quiet` logs the retries at debug (a node's rate limit, waited out as a matter of course).
    `gave_up(last)` is raised at the end.

    With `health`, TargetDown is raised at once when the target is down. A call whose retries ran
    out with no answer from the target goes on while the target's strikes are still being counted
    (for the health's `seconds` and one backoff more): so it ends as every other call there does, down
    or answered, not with a reason of its own."""
    rng = rng or random.Random()
    say = logger.debug if quiet else logger.warning
    last: Retry | None = None
    unreachable_since: float | None = None
    for number in itertools.count():
        if health is not None:
            health.check()
        if last is not None:
            delay = last.delay if last.delay is not None else policy.delay(min(number, policy.max_retries + 1) - 1, rng)
            over = number > policy.max_retries
            count = str(number) if over else f"{number}/{policy.max_retries}"
            until = f", until it is known whether {health.name if health else ''} is down" if over else ""
            say("%s: %s; retry %s in %.1fs%s", label, last.reason, count, delay, until)
            if on_retry is not None:
                on_retry(last)
            if limiter is not None and last.pauses:
                limiter.pause(delay)
            sleep(delay)
            if health is not None:
                health.check()
        if limiter is not None:
            limiter.acquire()
        try:
            return attempt()
        except Retry as retry:
            last = retry
            asked = f" (Retry-After {retry.delay:g}s)" if retry.delay is not None else ""
            logger.debug("%s: attempt %d answered %s%s", label, number + 1, retry.reason, asked)
        if health is not None and last.unreachable:
            unreachable_since = health.now() if unreachable_since is None else unreachable_since
            if health.deciding(unreachable_since, policy.max_delay):
                continue  # past the retries too, while the target's strikes are still counted
        if number >= policy.max_retries:
            break
    if health is not None:
        health.check()
    raise gave_up(last)


A = TypeVar("A")


def poll_until_final(
    check: Callable[[], A],
    *,
    is_final: Callable[[A], bool],
    timed_out: Callable[[A | None], Exception],
    label: str,
    started: float,
    interval: float,
    timeout: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    first_wait: float | None = None,
    not_yet: Callable[[], float] | None = None,
    on_progress: Callable[[A], None] | None = None,
    health: Health | None = None,
) -> tuple[A, int]:
    """`check()` every `interval` seconds until `is_final`, at most `timeout` seconds from
    `started`: the final answer and how many checks it took. `first_wait` before the first check;
    `not_yet()`, seconds a check is still pointless (asked while the deadline is not near).
    An `ExplorerUnavailable` (a check whose retries ran out) is waited out unless the outage lasts
    (three failed checks over 10 s); TargetDown ends the poll at once. `timed_out(last)` is raised at the deadline."""
    deadline = started + timeout
    if first_wait is not None:
        sleep(min(first_wait, timeout))
    last: A | None = None
    checks = 0
    failed: list[float] = []  # checks that failed in a row, each after its own retries
    while True:
        if health is not None:
            health.check()  # the health's sleeps end at once when the target is down
        if not_yet is not None and clock() + interval <= deadline:  # near the deadline, always ask
            wait = not_yet()
            if wait > 0:
                sleep(min(wait, interval))
                continue
        checks += 1
        try:
            last = check()
        except TargetDown:
            raise  # said once, by the health record
        except ExplorerUnavailable as err:
            logger.warning("%s: %s", label, err)
            failed.append(clock())
            if len(failed) >= 3 and failed[-1] - failed[0] >= 10.0:  # a server gone for good, not a blip
                raise
        else:
            failed.clear()
            if on_progress is not None:
                on_progress(last)
            if is_final(last):
                return last, checks
        if clock() + interval > deadline:
            raise timed_out(last)
        sleep(interval)
