"""The explorer clients' HTTP side of retrying: one request, its Retry-After, the error it ends with.

What both clients share on the wire: one HTTP request whose errors never carry the URL (and its
key), a Retry-After header read, and the error a call ends with once its retries ran out.

How they wait, retry, poll and give up is `ape_contract_verify.retry`'s one mechanism, which the
node readers use too; this module is its HTTP side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import requests

from ape_contract_verify.client.health import TargetHealth
from ape_contract_verify.exceptions import ExplorerUnavailable, RateLimited, VerificationTimeout
from ape_contract_verify.protocol.answers import ExplorerAnswer
from ape_contract_verify.protocol.secrets import redact
from ape_contract_verify.retry import Retry, RetryPolicy

if TYPE_CHECKING:
    from collections.abc import Mapping

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
        reason = redact(answer.reason) if answer is not None and answer.reason else ""
        return RateLimited(
            f"{call}: {limited} after {policy.max_retries} retries ({last.reason}){hint}", answer, reason=reason
        )
    return ExplorerUnavailable(
        f"{where}: {last.reason if last else 'no answer'} (gave up after {policy.max_retries} retries)"
    )


def send(
    session: requests.Session,
    method: str,
    url: str,
    base_url: str,
    label: str,
    health: TargetHealth | None = None,
    *,
    params: dict[str, str] | None = None,
    data: dict[str, str] | None = None,
    json: Mapping[str, object] | None = None,
    headers: dict[str, str] | None = None,
    timeout: float | tuple[float, float] | None = None,
) -> requests.Response:
    """One HTTP request. A connection fault is a `Retry`; any other requests error ends the call.
    Both are raised outside the except blocks: requests' messages hold the full URL, key included,
    and must not ride along as __context__. `health` hears whether the target answered."""
    failure: Exception | None = None
    try:
        response = session.request(method, url, params=params, data=data, json=json, headers=headers, timeout=timeout)
    except RETRYABLE_ERRORS as err:
        failure = Retry(
            f"{type(err).__name__} talking to {redact(base_url)}", unreachable=isinstance(err, UNREACHABLE_ERRORS)
        )
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


def retry_after(response: requests.Response, policy: RetryPolicy) -> float | None:
    return policy.retry_after(response.headers.get("Retry-After"))
