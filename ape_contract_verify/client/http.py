"""The explorer clients' HTTP base, written once: transport options, one request, retries, polling.

`HttpTarget` is what `ExplorerClient` and `SourcifyClient` build on: the transport options
(`ClientOptions`: timeouts, retries, rate, health, key), one call (`_request`: the HTTP request,
whose errors never carry the URL and its key, under the limiter and the retries, the faults every
explorer has retried, the rest read by the client's `_read`), a Retry-After read, the error a call
ends with once its retries ran out, and `wait`, the one poll loop: a job to its final answer. How
they retry and give up is `ape_contract_verify.retry`'s one mechanism, which the node readers use too.
"""

from __future__ import annotations

import random
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Generic, TypedDict, TypeVar

import requests

from ape_contract_verify.client.provider import SubmissionReceipt, VerificationTarget
from ape_contract_verify.exceptions import (
    ExplorerError,
    ExplorerUnavailable,
    RateLimited,
    TargetDown,
    VerificationTimeout,
)
from ape_contract_verify.json_types import JsonValue
from ape_contract_verify.logs import CLIENT, get_logger
from ape_contract_verify.protocol.answers import ExplorerAnswer
from ape_contract_verify.protocol.secrets import ApiKey, redact, register_secret
from ape_contract_verify.retry import (
    RateLimiter,
    Retry,
    RetryPolicy,
    TargetHealth,
    limiter_for,
    with_retries,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ape_contract_verify.request import Receipt

Read = TypeVar("Read")  # what a client reads of one answer
logger = get_logger(CLIENT)

RETRYABLE_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)
# No answer at all (refused, reset, timed out): what counts toward a target being down.
UNREACHABLE_ERRORS = (requests.ConnectionError, requests.Timeout)


def reason_of(answer: ExplorerAnswer | None) -> str:
    """The explorer's own text for an error's `reason`, keys scrubbed."""
    return redact(answer.reason) if answer is not None and answer.reason else ""


def still_pending(address: str, what: str, timeout: float, last: ExplorerAnswer | None, advice: str) -> Exception:
    """A poll's deadline passed: `<address>: <what> after <timeout>s (<last answer>); <advice>`."""
    state = redact(last.reason) if last else "no answer"
    return VerificationTimeout(
        f"{address}: {what} after {timeout:g}s ({state}); {advice}", last, reason=reason_of(last)
    )


def gave_up(last: Retry | None, policy: RetryPolicy, call: str, where: str, limited: str, hint: str = "") -> Exception:
    """The error of a call whose retries ran out: RateLimited when the explorer kept saying we were
    too fast (`limited`: its words for it), else ExplorerUnavailable naming `where` it was sent."""
    if last is not None and last.rate_limited:
        answer = last.answer if isinstance(last.answer, ExplorerAnswer) else None
        return RateLimited(
            f"{call}: {limited} after {policy.max_retries} retries ({last.reason}){hint}",
            answer,
            reason=reason_of(answer),
        )
    return ExplorerUnavailable(
        f"{where}: {last.reason if last else 'no answer'} (gave up after {policy.max_retries} retries)"
    )


def _no_answer(err: Exception) -> str:
    if isinstance(err, requests.ConnectTimeout):
        return "connect timeout"
    if isinstance(err, requests.ReadTimeout):
        return "read timeout"
    return "connection refused" if "refused" in str(err).lower() else type(err).__name__


class ClientOptions(TypedDict, total=False):
    """The transport options callers set on a target's client (`Target.client`'s keywords), each
    with its default when left out: timeouts and retries, how long a submission waits for a fresh
    deployment to be indexed (an Etherscan-style answer; Sourcify has none)."""

    timeout: float | tuple[float, float]
    max_retries: int
    backoff: float
    max_backoff: float
    sleep: Callable[[float], None]
    not_indexed_timeout: float
    not_indexed_interval: float


class Transport(ClientOptions, total=False):
    """Every transport option of a client: the callers' (`ClientOptions`), the target's key, rate
    (or a shared `limiter`) and name, the run's `health` of it, what tests inject."""

    api_key: ApiKey | str | None
    calls_per_second: float
    name: str
    health: TargetHealth | None
    session: requests.Session
    limiter: RateLimiter
    clock: Callable[[], float]
    rng: random.Random


class _Request(TypedDict, total=False):
    """What one HTTP request sends besides its method and URL."""

    params: dict[str, str] | None
    data: dict[str, str] | None
    json: Mapping[str, object] | None
    headers: dict[str, str]


class HttpTarget(VerificationTarget, Generic[Read]):
    """A target over HTTP: its transport options, `_request` and `wait`, for both clients. A subclass
    says what an answer means (`_read`, of type `Read`) and what a job still pending says (`_pending`)."""

    # The first check of a fresh job waits about as long as jobs here took, at most this many
    # intervals; `_queued`: the explorer works through its queue in order (`_seconds_until_due`).
    _first_wait_cap = 1.0
    _queued = False
    _limited, _hint = "still rate limited", ""  # what a call that gave up on rate limits says

    def __init__(self, base_url: str, **options: Unpack[Transport]) -> None:
        self.base_url = base_url
        key = options.get("api_key")
        self._key = key if isinstance(key, ApiKey) else (ApiKey(key) if key else None)
        if self._key:
            register_secret(self._key.reveal())
        self.name = options.get("name", "")
        self.timeout = options.get("timeout", (10.0, 30.0))
        self.retry = RetryPolicy(
            max_retries=options.get("max_retries", 5),
            base_delay=options.get("backoff", 1.0),
            max_delay=options.get("max_backoff", 16.0),
        )
        self.not_indexed_timeout = options.get("not_indexed_timeout", 90.0)
        self.not_indexed_interval = options.get("not_indexed_interval", 5.0)
        self.session = options.get("session") or requests.Session()
        self.limiter = options.get("limiter") or limiter_for(self.base_url, options.get("calls_per_second", 3.0))
        self.health = options.get("health")  # the run's record of whether this target answers (shared by its workers)
        sleep = options.get("sleep", time.sleep)
        self._sleep = self.health.sleeper(sleep) if self.health is not None else sleep
        self._clock = options.get("clock", time.monotonic)
        self._rng = options.get("rng") or random.Random()
        self._jobs_lock = threading.Lock()
        self._took: dict[str, list[float]] = {}  # how long recent jobs here took, per action
        self._in_flight: dict[str, dict[object, float]] = {}

    def __repr__(self) -> str:
        key = repr(self._key) if self._key else "None"
        return f"{type(self).__name__}({redact(self.base_url)!r}, chain_id={self.chain_id}, api_key={key})"

    @abstractmethod
    def _pending(self, receipt: Receipt) -> tuple[str, str, str]:
        """(the poll's label, what a job still pending is, what to do about it)."""

    def wait(
        self,
        receipt: Receipt,
        interval: float = 5.0,
        timeout: float = 300.0,
        on_progress: Callable[[ExplorerAnswer], None] | None = None,
        fresh: bool = True,
    ) -> ExplorerAnswer:
        """Poll until a final answer, checking every `interval` seconds, at most `timeout` seconds:
        VerificationTimeout then. `on_progress` hears every answer.

        `fresh`: the receipt was just submitted (the first check waits about as long as jobs here
        take); False for a receipt from earlier, checked at once. An `ExplorerUnavailable` (a check
        whose retries ran out) is waited out unless the outage lasts (three failed checks over 10 s);
        TargetDown ends the poll at once."""
        if not receipt.guid:
            if isinstance(receipt, SubmissionReceipt) and receipt.answer is not None:
                return receipt.answer
            raise ExplorerError(f"{receipt.address}: the receipt has no job id to poll")
        action = "proxy" if receipt.proxy else "source"
        label, what, advice = self._pending(receipt)
        started = self._clock()
        ticket = object()
        with self._jobs_lock:
            self._in_flight.setdefault(action, {})[ticket] = started
        last: ExplorerAnswer | None = None
        checks, failed = 0, []  # failed: the times of checks that failed in a row, each after its own retries
        try:
            if fresh:
                self._sleep(min(self._first_wait(action, interval), timeout))
            while True:
                if self.health is not None:
                    self.health.check()  # the health's sleeps end at once when the target is down
                due = self._seconds_until_due(action, ticket, started, interval) if fresh and self._queued else 0.0
                if due > 0 and self._clock() + interval <= started + timeout:  # near the deadline, always ask
                    self._sleep(min(due, interval))
                    continue
                checks += 1
                try:
                    last = self.job_status(receipt.guid, receipt.proxy)
                except TargetDown:
                    raise  # said once, by the health record
                except ExplorerUnavailable as err:
                    logger.warning("%s: %s", label, err)
                    failed.append(self._clock())
                    if len(failed) >= 3 and failed[-1] - failed[0] >= 10.0:  # a server gone for good, not a blip
                        raise
                else:
                    failed.clear()
                    if on_progress is not None:
                        on_progress(last)
                    if last.outcome.is_final:
                        if fresh:  # a job final at its first check counts shorter: waits shrink as a target speeds up
                            self._took_job(action, (self._clock() - started) * (0.9 if checks == 1 else 1.0))
                        return last
                if self._clock() + interval > started + timeout:
                    raise still_pending(receipt.address, what, timeout, last, advice)
                self._sleep(interval)
        except TargetDown as err:  # down while a job it accepted was being checked: say how to ask later
            proxy, target = " --proxy" if receipt.proxy else "", self.health.name if self.health else ""
            later = f"`ape verify status {receipt.guid}{proxy} --target {target}`"
            raise TargetDown(f"{err}; submitted as {receipt.guid} before that: check it later with {later}") from None
        finally:
            with self._jobs_lock:
                self._in_flight[action].pop(ticket, None)

    def _first_wait(self, action: str, interval: float) -> float:
        """How long a fresh job's first check waits: about as long as jobs here took (the median of
        the last 16), at most `_first_wait_cap` intervals; one interval before any has ended. Every
        check costs a slot under the rate limit, and a check right after a submission only ever
        hears "pending"."""
        with self._jobs_lock:
            took = sorted(self._took.get(action, ()))
        return min(took[len(took) // 2], interval * self._first_wait_cap) if took else interval

    def _took_job(self, action: str, seconds: float) -> None:
        with self._jobs_lock:
            took = self._took.setdefault(action, [])
            took.append(max(0.0, seconds))
            del took[:-16]

    def _seconds_until_due(self, action: str, ticket: object, started: float, interval: float) -> float:
        """How long a check of this job is still pointless. Before any job here has ended, a job
        submitted after one that is still pending is taken to be pending too (explorers work
        through their queue in order), so a batch polls its oldest job, not every job."""
        with self._jobs_lock:
            ended = bool(self._took.get(action))
            older = any(t < started for k, t in self._in_flight.get(action, {}).items() if k is not ticket)
        if ended:
            return started + self._first_wait(action, interval) - self._clock()
        return interval if older else 0.0

    @abstractmethod
    def _read(self, code: int, body: JsonValue, delay: float | None, where: str) -> Read:
        """What an answer the base did not retry says (its HTTP status, its JSON body or None, its
        Retry-After): the client's own reading, or a `Retry` (a rate limit), or the error it is."""

    def _request(self, method: str, url: str, label: str, where: str, **request: Unpack[_Request]) -> Read:
        """One call under this target's limiter, retried by its policy: a 408 or 5xx, or a success
        whose body is not JSON (gateways and CDNs answer HTML pages with 200 during outages), is
        retried; any other answer is `_read`. `where`, and `_limited` (the explorer's words for a rate
        limit) and its `_hint`, name it in the error a call gives up with."""

        def attempt() -> Read:
            response, body = self._send(method, url, where, **request)
            code, delay = response.status_code, self.retry.retry_after(response.headers.get("Retry-After"))
            if code == 408 or code >= 500:
                raise Retry(f"HTTP {code}", delay=delay)
            if body is None and code < 400:
                raise Retry(f"HTTP {code} with a body that is not JSON")
            return self._read(code, body, delay, where)

        return with_retries(
            attempt,
            policy=self.retry,
            limiter=self.limiter,
            rng=self._rng,
            sleep=self._sleep,
            label=label,
            health=self.health,
            gave_up=lambda last: gave_up(last, self.retry, label, where, self._limited, self._hint),
        )

    def _send(
        self, method: str, url: str, label: str, **request: Unpack[_Request]
    ) -> tuple[requests.Response, JsonValue]:
        """One HTTP request and its body as JSON (None when it is not JSON). A connection fault is a
        `Retry`; any other requests error ends the call. Both are raised outside the except blocks:
        requests' messages hold the full URL, key included, and must not ride along as __context__.
        The run's health hears whether the target answered."""
        failure: Exception | None = None
        try:
            response = self.session.request(method, url, timeout=self.timeout, **request)
        except RETRYABLE_ERRORS as err:
            unreachable = isinstance(err, UNREACHABLE_ERRORS)
            failure = Retry(f"{type(err).__name__} talking to {redact(self.base_url)}", unreachable=unreachable)
            if self.health is not None and unreachable:
                self.health.unreachable(f"{_no_answer(err)} at {redact(self.base_url)}")
        except requests.RequestException as err:
            failure = ExplorerUnavailable(f"{label}: {type(err).__name__}: {redact(err)}")
        else:
            if self.health is not None:
                self.health.answered()
            logger.debug("%s -> HTTP %d %s", label, response.status_code, redact(response.text[:300]))
            try:
                body: JsonValue = response.json()
            except ValueError:  # not JSON: an HTML error page
                body = None
            return response, body
        raise failure
