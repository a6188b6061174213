"""A target that stops answering is found out once per run (issue 23): refused connections and
timeouts are strikes shared by every worker on the target; an answer, even a 429 or a 503, clears
them; once down, no request goes to it and every row ends with one reason."""

import threading
import time
from types import SimpleNamespace

import pytest

from ape_contract_verify.client.etherscan import SubmissionReceipt
from ape_contract_verify.client.provider import ExplorerRecord
from ape_contract_verify.derive import artifacts, derive
from ape_contract_verify.evm import proxies
from ape_contract_verify.exceptions import ExplorerUnavailable, TargetDown
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome, Texts
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.retry import TargetHealth
from ape_contract_verify.workflow import verification as run_module
from ape_contract_verify.workflow.plan import Item, Options
from ape_contract_verify.workflow.verification import VerificationRun
from support.client import single_file_request
from support.stub_server import ADDRESS, GUID, Drop, Http, make_client, ok

PASS = ok(Texts.PASS)


def test_strikes_in_a_row_over_a_few_seconds_mark_it_down_and_an_answer_clears_them():
    now = [0.0]
    health = TargetHealth("sourcify", strikes=3, seconds=5.0, clock=lambda: now[0])
    for _ in range(10):  # a burst at one instant (a restart) is not "down"
        health.unreachable("connection refused at http://x")
    now[0] = 4.0
    health.unreachable("connection refused at http://x")
    health.answered()  # any answer starts the streak again
    now[0] = 9.5
    health.unreachable("connection refused at http://x")
    health.unreachable("connection refused at http://x")
    assert not health.down
    now[0] = 15.0
    health.unreachable("connection refused at http://x")
    assert health.down
    health.others = True
    assert (
        health.reason
        == "target sourcify is down: connection refused at http://x (3 tries in 6 s); the other targets went on"
    )
    with pytest.raises(TargetDown, match="target sourcify is down"):
        health.check()


def test_the_health_is_shared_by_every_worker_and_then_nothing_is_sent(stub):
    """Three workers (a client each; the run's workers share one) get no answer: the target is down
    for all of them, each ends with the one reason, and a later call sends nothing."""
    stub.default = lambda seen: Drop()
    health = TargetHealth("etherscan", seconds=0)
    clients = [make_client(stub, max_retries=0, health=health) for _ in range(3)]
    errors: list = []

    def worker(client):
        try:
            client.get_abi(ADDRESS)
        except ExplorerUnavailable as err:
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert health.down and len(errors) == 3
    assert {type(e) for e in errors} == {TargetDown} and len({str(e) for e in errors}) == 1, errors
    sent = len(stub.seen)
    assert sent <= 3 + 2, "the strikes, and what the other workers had in flight"
    with pytest.raises(
        TargetDown, match=r"target etherscan is down: ConnectionError at http://127\.0\.0\.1:\d+/api \(3 tries in 0 s\)"
    ):
        clients[0].verify_source_code(single_file_request())
    assert len(stub.seen) == sent


def test_a_success_between_failures_keeps_the_target_up(stub):
    stub.answer(Drop(), Drop(), PASS, Drop(), Drop(), PASS, Drop(), Drop(), PASS)
    health = TargetHealth("etherscan", seconds=0)
    client = make_client(stub, max_retries=2, health=health)
    for _ in range(3):
        assert client.job_status(GUID).outcome == Outcome.VERIFIED
    assert not health.down and len(stub.seen) == 9


@pytest.mark.parametrize(
    "fault", [Http(429, "slow down"), Http(503), Http(502, "<html>Bad Gateway</html>")], ids=["429", "503", "502"]
)
def test_answers_that_refuse_never_mark_a_target_down(stub, fault):
    """The explorer answered: the existing backoff (and rate-limit pause) deals with it."""
    stub.default = lambda seen: fault
    health = TargetHealth("etherscan", seconds=0)
    clients = [make_client(stub, max_retries=3, health=health) for _ in range(4)]
    for client in clients:
        with pytest.raises(ExplorerUnavailable) as info:
            client.get_abi(ADDRESS)
        assert not isinstance(info.value, TargetDown)
    assert not health.down and len(stub.seen) == 16


def test_a_submission_being_polled_when_the_target_goes_down_names_its_guid(stub):
    stub.answer(ok(GUID))  # accepted; then nothing answers
    stub.default = lambda seen: Drop()
    health = TargetHealth("blockscout", seconds=0)
    client = make_client(stub, max_retries=5, health=health)
    receipt = client.verify_source_code(single_file_request())
    with pytest.raises(TargetDown) as info:
        client.wait(receipt, interval=0.01, timeout=300)
    assert f"submitted as {GUID}" in str(info.value)
    assert f"`ape verify status {GUID} --target blockscout`" in str(info.value)
    assert len(stub.seen) == 1 + 3  # the submission, then three strikes


def test_a_worker_in_a_long_backoff_wakes_when_the_target_goes_down():
    health = TargetHealth("etherscan", seconds=0)
    sleep = health.sleeper(time.sleep)
    started = time.monotonic()
    sleeper = threading.Thread(target=sleep, args=(30.0,))
    sleeper.start()
    for _ in range(3):
        health.unreachable("connection refused at http://x")
    sleeper.join(5)
    assert not sleeper.is_alive() and time.monotonic() - started < 5


# -- a run: one target down, the other on ----------------------------------------------------------


class Dead:
    """A fake client of a target that refuses every connection: it tells the run's health, as the
    real clients' `send` does."""

    def __init__(self, health):
        self.health, self.calls = health, 0

    def _call(self):
        while True:  # as `with_retries`: no answer, so on until the target's verdict
            self.health.check()
            self.calls += 1
            self.health.unreachable("connection refused at https://dead.example/api")

    kind, flavour, supports_proxy_link, base_url = "etherscan", "etherscan", True, "https://dead.example/api"

    def contract_record(self, address):
        self._call()

    def verify_source_code(self, request):
        self._call()


class Alive:
    kind, flavour, supports_proxy_link, base_url = "etherscan", "etherscan", True, "https://alive.example/api"

    def contract_record(self, address):
        return ExplorerRecord(address, verified=False)

    def link(self, address):
        return None

    def creation_records(self):
        return None

    def verify_source_code(self, request):
        return SubmissionReceipt(guid="g".ljust(50, "x"), address=request.address)

    def wait(self, receipt, interval, timeout, on_progress=None):
        return ExplorerAnswer(Outcome.VERIFIED, "1", "OK", "Pass - Verified")


def test_a_run_marks_a_dead_target_down_once_and_the_other_verifies_everything(monkeypatch):
    def fake_derive(artifact, address, **kwargs):
        request = VerificationRequest(address, "a.sol:A", "{}", CodeFormat.STANDARD_JSON, "v0.8.26+commit.8a97fa7a")
        return SimpleNamespace(
            request=request, match="full", warnings=[], artifact=artifact, creation_source="transaction"
        )

    monkeypatch.setattr(derive, "derive", fake_derive)
    monkeypatch.setattr(artifacts, "find_artifact", lambda name, project: SimpleNamespace(label=name))
    monkeypatch.setattr(proxies, "detect_proxy", lambda chain, address: None)
    monkeypatch.setattr(run_module, "TargetHealth", lambda name: TargetHealth(name, seconds=0))
    dead: list = []

    def fake_explorer_for(t, provider=None, chain_reader=None, health=None, **options):
        if t.name == "dead":
            dead.append(Dead(health))
            return dead[-1]
        return Alive()

    monkeypatch.setattr(run_module, "explorer_for", fake_explorer_for)
    items = [Item("ethereum:sepolia", "0x" + f"{i + 1:040x}", f"C{i}") for i in range(20)]
    targets = [
        SimpleNamespace(
            name=n, kind="etherscan", is_local=False, url=f"https://{n}.example/api", browser_url=None, label=n
        )
        for n in ("dead", "alive")
    ]
    run = VerificationRun(None, Options(poll_interval=0), workers=4)
    # Proxy detection is scripted; only a blueprint check reads code (none here).
    run.add_network("ethereum:sepolia", targets, chain_reader=SimpleNamespace(get_code=lambda address: b""))
    reports = run.verify(items)
    by_target = {name: [r for r in reports if r.target == name] for name in ("dead", "alive")}
    assert [r.outcome for r in by_target["alive"]] == [Outcome.VERIFIED] * 20
    assert [r.outcome for r in by_target["dead"]] == [Outcome.ERROR] * 20
    assert {r.reason for r in by_target["dead"]} == {
        "target dead is down: connection refused at https://dead.example/api (3 tries in 0 s); the other targets went on"
    }
    assert dead[0].calls <= 3 + 4, "at most the strikes, and what the other workers had in flight"
