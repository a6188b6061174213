"""The one resilience mechanism: how every remote call of the plugin waits, retries and gives up.

Explorer clients (`client/`) and node readers (`evm/chain.py`) both use it: a `RetryPolicy`
(bounded exponential backoff with jitter, the server's Retry-After honoured), `with_retries`
(attempts under an optional `RateLimiter`, one per explorer, and an optional `TargetHealth`, a
dead target found out once for every caller); `client/http.HttpTarget.wait` polls a job to its
final answer on them. It knows nothing of HTTP: callers turn their faults into `Retry`.
"""

import itertools
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ape_contract_verify.exceptions import TargetDown
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


class RateLimiter:
    """Hands out evenly spaced call slots: at most `calls_per_second`, across threads; one per
    explorer, shared by every thread that talks to it.

    Explorers count calls per second per key (Etherscan's free tier: about 3/s) and answer
    `Max calls per sec rate limit reached` beyond it. Spacing calls evenly at 1/rate never lets a
    one-second window hold more than `rate` calls, whatever the number of threads.

    Two details keep that true at the explorer's end, not only on paper: a thread that wakes late
    must not squeeze the next one closer (send times are re-checked after sleeping), and a margin
    absorbs the jitter between leaving the client and arriving at the server. With spacing
    (1 + margin) / rate, `rate` + 1 calls span 1 + margin seconds, so a window at the server holds
    more than `rate` only if arrivals shift by more than `margin` seconds. 2 % (20 ms) was exceeded
    at loopback servers sharing a busy process (41 ms seen); 50 ms costs under 5 % at 5 calls/s.
    """

    def __init__(
        self,
        calls_per_second: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        margin: float = 0.05,
    ):
        self.calls_per_second = calls_per_second  # as configured (the spacing adds the margin on top)
        self._margin = margin
        self._interval = (1.0 + margin) / calls_per_second
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next = float("-inf")
        self._last_sent = float("-inf")

    def slow_down_to(self, calls_per_second: float) -> None:
        """Never speed up a shared limiter: the slowest configured rate wins."""
        with self._lock:
            if calls_per_second < self.calls_per_second:
                self.calls_per_second = calls_per_second
                self._interval = (1.0 + self._margin) / calls_per_second

    def reserve(self) -> float:
        """Book the next slot and return how long the caller must wait for it."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self._interval
            return slot - now

    def acquire(self) -> None:
        """Block until this caller may send one request."""
        delay = self.reserve()
        while True:
            if delay > 0:
                self._sleep(delay)
            with self._lock:
                now = self._clock()
                # A late wake-up of the previous sender must not shrink our gap to it.
                delay = self._last_sent + self._interval - now
                if delay <= 0:
                    self._last_sent = now
                    return

    def pause(self, seconds: float) -> None:
        """Hold back every thread for a while (the explorer said we were too fast)."""
        with self._lock:
            self._next = max(self._next, self._clock() + seconds)


_registry: dict[str, RateLimiter] = {}
_registry_lock = threading.Lock()


def limiter_for(base_url: str, calls_per_second: float | None = None) -> RateLimiter:
    """The one limiter for an explorer base URL, shared by every client in the process."""
    key = base_url.rstrip("/").lower()
    rate = calls_per_second or 3.0
    with _registry_lock:
        limiter = _registry.setdefault(key, RateLimiter(rate))
        limiter.slow_down_to(rate)
        return limiter


class TargetHealth:
    """Whether a target still answers, for one run: one record shared by every worker talking to it.

    A refused connection or a timeout is a strike; any HTTP answer clears the strikes (a 429 or a 5xx
    too: the explorer is there, and the limiter and backoff deal with it). Three strikes in a row,
    spread over a few seconds, mark the target down for the rest of the run. From then on no request
    goes to it and every call ends at once with one reason: a dead explorer costs the run seconds,
    not each contract's full backoff. The spread keeps a blip (a restart, a load balancer swap), which
    may fail many workers' requests at the same instant, from ending the run's work on a live target.
    """

    def __init__(self, name: str, strikes: int = 3, seconds: float = 5.0, clock: Callable[[], float] = time.monotonic):
        self.name = name
        self.strikes = strikes
        self.seconds = seconds
        self.others = False  # the run has other targets for this network (the reason says they went on)
        self._clock = clock
        self._lock = threading.Lock()
        self._count = 0
        self._first: float | None = None
        self._down = threading.Event()
        self._reason = ""

    @property
    def down(self) -> bool:
        return self._down.is_set()

    @property
    def reason(self) -> str:
        return self._reason + ("; the other targets went on" if self.others else "")

    def answered(self) -> None:
        """The target sent an HTTP answer, whatever it said."""
        with self._lock:
            self._count, self._first = 0, None

    def unreachable(self, what: str) -> None:
        """A refused connection or a timeout; the strike that completes the streak marks it down."""
        with self._lock:
            if self.down:
                return
            now = self._clock()
            if self._first is None:
                self._first = now
            self._count += 1
            span = now - self._first
            if self._count < self.strikes or span < self.seconds:
                return
            self._reason = f"target {self.name} is down: {what} ({self._count} tries in {span:.0f} s)"
            self._down.set()
        logger.warning("%s; nothing more is sent to it in this run", self._reason)

    def now(self) -> float:
        return self._clock()

    def deciding(self, since: float, grace: float) -> bool:
        """Strikes are being counted and could still mark the target down: true for a streak not
        yet `seconds` (plus `grace`, one backoff) older than `since`, a caller's first strike."""
        with self._lock:
            return not self.down and self._count > 0 and self._clock() - since < self.seconds + grace

    def check(self) -> None:
        """Raise TargetDown once the target is down: no request is sent after that."""
        if self.down:
            raise TargetDown(self.reason)

    def sleeper(self, sleep: Callable[[float], None]) -> Callable[[float], None]:
        """`sleep`, woken when the target goes down so no worker waits out a backoff for nothing.
        An injected sleep (tests' fake clocks) is kept as it is."""
        if sleep is not time.sleep:
            return sleep

        def sleep_unless_down(seconds: float) -> None:
            self._down.wait(max(0.0, seconds))

        return sleep_unless_down


def with_retries(
    attempt: Callable[[], T],
    *,
    policy: RetryPolicy,
    gave_up: Callable[[Retry | None], Exception],
    label: str,
    sleep: Callable[[float], None],
    rng: random.Random | None = None,
    limiter: RateLimiter | None = None,
    health: TargetHealth | None = None,
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
    say = logger.debug if quiet else logger.warning
    unreachable_since: float | None = None
    for number in itertools.count():
        if health is not None:
            health.check()  # before every try, after every wait: a target found down ends the call
        if limiter is not None:
            limiter.acquire()
        try:
            return attempt()
        except Retry as retry:
            last = retry
            asked = f" (Retry-After {retry.delay:g}s)" if retry.delay is not None else ""
            logger.debug("%s: attempt %d answered %s%s", label, number + 1, retry.reason, asked)
        deciding = False  # past the retries too, while the target's strikes are still counted
        if health is not None and last.unreachable:
            unreachable_since = health.now() if unreachable_since is None else unreachable_since
            deciding = health.deciding(unreachable_since, policy.max_delay)
        if number >= policy.max_retries and not deciding:
            break
        delay = last.delay if last.delay is not None else policy.delay(min(number, policy.max_retries), rng)
        over = number >= policy.max_retries
        count = str(number + 1) if over else f"{number + 1}/{policy.max_retries}"
        until = f", until it is known whether {health.name if health else ''} is down" if over else ""
        say("%s: %s; retry %s in %.1fs%s", label, last.reason, count, delay, until)
        if on_retry is not None:
            on_retry(last)
        if limiter is not None and last.pauses:
            limiter.pause(delay)
        sleep(delay)
    if health is not None:
        health.check()
    raise gave_up(last)
