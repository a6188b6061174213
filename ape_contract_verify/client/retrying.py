"""What every explorer client shares on the wire: retries with backoff under the rate limiter, one
HTTP request whose errors never carry the URL (and its key), and the timing of job polls.

The Etherscan-style client and the Sourcify client differ in what they send and how they read an
answer; how they wait, retry and give up is this one mechanism.
"""

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional, TypeVar

import requests

from ape_contract_verify.client.health import TargetHealth
from ape_contract_verify.exceptions import ExplorerUnavailable
from ape_contract_verify.protocol.secrets import redact
from ape_contract_verify.logs import get_logger

logger = get_logger()
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with "equal jitter": a delay in [cap/2, cap]."""

    max_retries: int = 5
    base_delay: float = 1.0
    max_delay: float = 16.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        cap = min(self.max_delay, self.base_delay * (2**attempt))
        return cap / 2 + rng.random() * cap / 2


class Retry(Exception):
    """One attempt failed in a way worth retrying. `unreachable`: no answer at all (refused, timed out)."""

    def __init__(self, reason: str, delay: Optional[float] = None, rate_limited: bool = False, answer=None, unreachable: bool = False):
        self.reason, self.delay, self.rate_limited, self.answer = reason, delay, rate_limited, answer
        self.unreachable = unreachable
        super().__init__(reason)


RETRYABLE_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)
# No answer at all (refused, reset, timed out): what counts toward a target being down.
UNREACHABLE_ERRORS = (requests.ConnectionError, requests.Timeout)


def with_retries(
    attempt: Callable[[], T],
    *,
    policy: RetryPolicy,
    limiter: Any,
    rng: random.Random,
    sleep: Callable[[float], None],
    label: str,
    pauses_limiter: Callable[[Retry], bool],
    gave_up: Callable[[Optional[Retry]], Exception],
    health: Optional[TargetHealth] = None,
) -> T:
    """`attempt()` under the limiter until it returns, at most `policy.max_retries` retries after a
    `Retry`. A retry the server asked for (Retry-After) waits that long; one that `pauses_limiter`
    holds every thread of this explorer back too. `gave_up(last)` is raised at the end.

    With `health`, TargetDown is raised at once when the target is down. A call whose retries ran
    out with no answer from the target goes on while the target's strikes are still being counted
    (for `health.seconds` and one backoff more): so it ends as every other call there does, down
    or answered, not with a reason of its own."""
    last: Optional[Retry] = None
    unreachable_since: Optional[float] = None
    number = 0
    while True:
        if health is not None:
            health.check()
        if number:
            delay = last.delay if last and last.delay is not None else policy.delay(min(number, policy.max_retries + 1) - 1, rng)
            if number <= policy.max_retries:
                logger.warning("%s: %s; retry %d/%d in %.1fs", label, last.reason if last else "", number, policy.max_retries, delay)
            else:
                logger.warning("%s: %s; retry %d in %.1fs, until it is known whether %s is down", label, last.reason if last else "", number, delay, health.name if health else "")
            if last and pauses_limiter(last):
                limiter.pause(delay)
            sleep(delay)
            if health is not None:
                health.check()
        limiter.acquire()
        try:
            return attempt()
        except Retry as retry:
            last = retry
            logger.debug("%s: attempt %d answered %s%s", label, number + 1, retry.reason,
                         f" (Retry-After {retry.delay:g}s)" if retry.delay is not None else "")
        number += 1
        if health is not None and last.unreachable and unreachable_since is None:
            unreachable_since = health.now()
        if number > policy.max_retries and not (
            health is not None and last.unreachable and health.deciding(unreachable_since, policy.max_delay)
        ):
            break
    if health is not None:
        health.check()
    raise gave_up(last)


def send(
    session: requests.Session, method: str, url: str, base_url: str, label: str,
    health: Optional[TargetHealth] = None, **kwargs: Any,
) -> requests.Response:
    """One HTTP request. A connection fault is a `Retry`; any other requests error ends the call.
    Both are raised outside the except blocks: requests' messages hold the full URL, key included,
    and must not ride along as __context__. `health` hears whether the target answered."""
    failure: Optional[Exception] = None
    try:
        response = session.request(method, url, **kwargs)
    except RETRYABLE_ERRORS as err:
        failure = Retry(f"{type(err).__name__} talking to {redact(base_url)}", unreachable=isinstance(err, UNREACHABLE_ERRORS))
        if health is not None and failure.unreachable:
            health.unreachable(f"{_no_answer(err)} at {redact(base_url)}")
    except requests.RequestException as err:
        failure = ExplorerUnavailable(f"{label}: {type(err).__name__}: {redact(err)}")
    else:
        if health is not None:
            health.answered()
        return response
    raise failure


def _no_answer(err: Exception) -> str:
    if isinstance(err, requests.ConnectTimeout):
        return "connect timeout"
    if isinstance(err, requests.ReadTimeout):
        return "read timeout"
    return "connection refused" if "refused" in str(err).lower() else type(err).__name__


def retry_after(response: requests.Response, policy: RetryPolicy) -> Optional[float]:
    value = response.headers.get("Retry-After", "")
    try:
        return min(policy.max_delay, max(0.0, float(value)))
    except ValueError:
        return None


class JobTimes:
    """How long recent jobs at one explorer took, per action. Every check costs a slot under the
    rate limit, and a check right after a submission only ever hears "pending": so a job's first
    check waits about as long as jobs took. A job already final at its first check counts a little
    shorter, so the wait shrinks again when the explorer speeds up."""

    SAMPLES = 16

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seconds: dict[str, list[float]] = {}

    def typical(self, action: str = "") -> Optional[float]:
        with self._lock:
            samples = sorted(self._seconds.get(action, ()))
        return samples[len(samples) // 2] if samples else None

    def learn(self, action: str, seconds: float, at_first_check: bool) -> None:
        with self._lock:
            samples = self._seconds.setdefault(action, [])
            samples.append(max(0.0, seconds * (0.9 if at_first_check else 1.0)))
            del samples[: -self.SAMPLES]


class Outage:
    """Checks of one job that failed in a row (each after its own retries). A short outage while
    polling is waited out; a server gone for good, three failed checks over `seconds`, ends the job
    with its error instead of the whole polling timeout."""

    def __init__(self, clock: Callable[[], float], seconds: float = 10.0):
        self._clock = clock
        self.seconds = seconds
        self._failed: list[float] = []

    def failed(self) -> bool:
        """Count one failed check; True when it is time to give up."""
        self._failed.append(self._clock())
        return len(self._failed) >= 3 and self._failed[-1] - self._failed[0] >= self.seconds

    def clear(self) -> None:
        self._failed.clear()
