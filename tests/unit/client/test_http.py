"""client/http.py (the clients' HTTP base): one HTTP request whose errors never carry the URL or its key, a Retry-After
read, and the error a call gives up with. Real HTTP on loopback (tests/support/stub_server.py)."""

import socket

import pytest
import requests

from ape_contract_verify.client.etherscan import ExplorerClient
from ape_contract_verify.client.http import gave_up, reason_of, still_pending
from ape_contract_verify.exceptions import ExplorerUnavailable, RateLimited, VerificationTimeout
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome
from ape_contract_verify.protocol.secrets import REDACTED, register_secret
from ape_contract_verify.request import Receipt
from ape_contract_verify.retry import Retry, RetryPolicy, TargetHealth
from support.stub_server import Clock, Http, ok

pytestmark = pytest.mark.unit

SECRET = "retrying-unit-k3y-5ecret"
register_secret(SECRET)


def refused_url() -> str:
    """A loopback port nothing listens on: the connection is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/api"


def answer(reason: str, outcome: Outcome = Outcome.ERROR) -> ExplorerAnswer:
    return ExplorerAnswer(outcome, "0", "NOTOK", reason)


# -- send -------------------------------------------------------------------------------------------


def send(base_url, method, url, label, health=None, timeout=2.0, **request):
    """One request through a client of `base_url` (its session, health and timeout), as both clients send."""
    return ExplorerClient(base_url, health=health, timeout=timeout)._send(method, url, label, **request)


def test_send_returns_the_answer_and_sends_what_it_is_given(stub):
    stub.answer(ok("fine"))
    health = TargetHealth("stub", strikes=1, seconds=0.0)
    response, body = send(
        stub.url,
        "POST",
        stub.url,
        "verifysourcecode",
        health,
        timeout=5.0,
        params={"module": "contract"},
        data={"action": "verifysourcecode", "apikey": "k"},
        headers={"X-Test": "1"},
    )
    assert response.status_code == 200 and response.json()["result"] == "fine" == body["result"]
    (seen,) = stub.seen
    assert seen.method == "POST" and seen.query == {"module": "contract"}
    assert seen.form == {"action": "verifysourcecode", "apikey": "k"}
    assert not health.down


def test_an_http_error_status_is_an_answer_not_a_retry(stub):
    stub.answer(Http(503, "busy"))
    response, _ = send(stub.url, "GET", stub.url, "getabi")
    assert response.status_code == 503  # the client decides what a 503 means, not the transport


def test_a_refused_connection_is_a_retry_that_names_the_host_without_the_key():
    url = refused_url()
    health = TargetHealth("refuser", strikes=1, seconds=0.0)
    with pytest.raises(Retry) as info:
        send(url, "GET", url, "getabi", health, params={"apikey": SECRET})
    err = info.value
    assert err.unreachable and not err.rate_limited
    assert "127.0.0.1" in str(err) and SECRET not in str(err)
    assert err.__context__ is None  # requests' own message, which holds the full URL, is not chained
    assert health.down and "connection refused" in health.reason


def test_a_request_that_cannot_be_sent_ends_the_call_without_the_url():
    url = f"ftp://127.0.0.1/api?apikey={SECRET}"
    with pytest.raises(ExplorerUnavailable) as info:
        send(url, "GET", url, "getabi at the stub")
    assert str(info.value).startswith("getabi at the stub: InvalidSchema")
    assert SECRET not in str(info.value)
    assert not isinstance(info.value, Retry)


# -- Retry-After ------------------------------------------------------------------------------------


def response_with(header: str | None) -> requests.Response:
    response = requests.Response()
    response.status_code = 429
    if header is not None:
        response.headers["Retry-After"] = header
    return response


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("7", 7.0), ("0.5", 0.5), ("3600", 16.0), ("-3", 0.0), (None, None), ("soon", None), ("", None)],
)
def test_retry_after_is_read_in_seconds_and_bounded(header, seconds):
    assert RetryPolicy(max_delay=16.0).retry_after(response_with(header).headers.get("Retry-After")) == seconds


# -- giving up --------------------------------------------------------------------------------------


def test_reason_of_is_the_explorers_text_with_keys_scrubbed():
    assert reason_of(None) == ""
    assert reason_of(answer("")) == ""
    assert reason_of(answer(f"bad key {SECRET}")) == f"bad key {REDACTED}"


def test_still_pending_says_what_how_long_and_what_to_do():
    err = still_pending("0xabc", "still pending", 12.5, answer(f"Pending in queue {SECRET}"), "check later")
    assert isinstance(err, VerificationTimeout)
    assert str(err) == f"0xabc: still pending after 12.5s (Pending in queue {REDACTED}); check later"
    assert err.reason == f"Pending in queue {REDACTED}"
    assert "no answer" in str(still_pending("0xabc", "still pending", 1, None, "x"))


def test_gave_up_on_rate_limits_is_rate_limited_with_the_hint():
    last = Retry("HTTP 429", rate_limited=True, answer=answer(f"Max rate limit reached {SECRET}"))
    err = gave_up(last, RetryPolicy(max_retries=3), "getabi", "getabi at X", "still rate limited", "; slow down")
    assert isinstance(err, RateLimited)
    assert str(err) == "getabi: still rate limited after 3 retries (HTTP 429); slow down"
    assert err.reason == f"Max rate limit reached {REDACTED}"


def test_gave_up_otherwise_is_unavailable_naming_where():
    err = gave_up(Retry("HTTP 502"), RetryPolicy(max_retries=2), "getabi", "getabi at X", "still rate limited")
    assert type(err) is ExplorerUnavailable
    assert str(err) == "getabi at X: HTTP 502 (gave up after 2 retries)"
    assert str(gave_up(None, RetryPolicy(max_retries=0), "c", "w", "l")) == "w: no answer (gave up after 0 retries)"


def test_a_rate_limit_without_an_answer_has_its_message_for_reason():
    err = gave_up(Retry("HTTP 429", rate_limited=True), RetryPolicy(max_retries=1), "c", "w", "limited")
    assert isinstance(err, RateLimited) and err.answer is None
    assert err.reason == str(err) == "c: limited after 1 retries (HTTP 429)"


# -- polling ----------------------------------------------------------------------------------------


class Scripted(ExplorerClient):
    """A client whose job checks answer from a script (an exception in it is raised), counted."""

    def __init__(self, script, clock: Clock) -> None:
        super().__init__("http://127.0.0.1:1/api", sleep=clock.sleep, clock=clock)
        self.script, self.checks = iter(script), 0

    def job_status(self, guid: str, proxy: bool = False) -> ExplorerAnswer:
        self.checks += 1
        item = next(self.script)
        if isinstance(item, Exception):
            raise item
        return item


PENDING, PASS = answer("Pending in queue", Outcome.PENDING), answer("Pass - Verified", Outcome.VERIFIED)
RECEIPT = Receipt(guid="g" * 50, address="0xabc")


def test_poll_returns_the_final_answer_and_how_many_checks_it_took():
    clock, seen = Clock(), []
    client = Scripted([PENDING, PENDING, PASS], clock)
    assert client.wait(RECEIPT, interval=2.0, timeout=60.0, on_progress=seen.append) == PASS
    assert client.checks == 3 and seen == [PENDING, PENDING, PASS]
    assert clock.slept == [2.0, 2.0, 2.0]  # the first check waits too (no job here has ended yet)


def test_poll_times_out_with_the_last_answer():
    clock = Clock()
    with pytest.raises(VerificationTimeout, match="Pending in queue"):
        Scripted([PENDING] * 10, clock).wait(RECEIPT, interval=5.0, timeout=20.0, fresh=False)
    assert clock.now <= 20.0


def test_poll_waits_out_a_short_outage_and_ends_on_a_lasting_one():
    clock = Clock()
    script = [ExplorerUnavailable("blip"), PENDING, ExplorerUnavailable("blip"), PASS]
    assert Scripted(script, clock).wait(RECEIPT, interval=1.0, timeout=60.0) == PASS

    clock = Clock()
    with pytest.raises(ExplorerUnavailable, match="gone"):
        Scripted([ExplorerUnavailable("gone")] * 60, clock).wait(RECEIPT, interval=5.0, timeout=300.0)
    assert clock.now < 30.0  # three failed checks over 10 s, not the whole timeout
