"""The Sourcify API v2 client and protocol/sourcify.py, against answers recorded from Sourcify's own
server (3.12.1, tests/data/sourcify-answers/), replayed by a real HTTP server on 127.0.0.1."""

import json
import logging
from pathlib import Path

import pytest
import requests

from ape_contract_verify.client import sourcify as client_mod
from ape_contract_verify.client.provider import ExplorerRecord
from ape_contract_verify.client.sourcify import SourcifyClient, job_answer
from ape_contract_verify.exceptions import (
    ActionNotSupported,
    BadEndpoint,
    ContractNotVerified,
    ExplorerError,
    InvalidRequest,
    RateLimited,
    VerificationRejected,
    VerificationTimeout,
)
from ape_contract_verify.protocol import sourcify as rules
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.request import CodeFormat, Receipt, VerificationRequest
from ape_contract_verify.retry import RateLimiter
from support.client import SOURCIFY_HTTP_STATUS
from support.stub_server import Drop, Http, StubExplorer

ANSWERS = Path(__file__).parents[2] / "data" / "sourcify-answers"
FIXTURE = json.loads((ANSWERS / "_fixture.json").read_text())
BOX, BOX_TX = FIXTURE["deployed"][0]
KEY = "SFYSECRETKEY0123456789"


def recorded(name: str) -> dict:
    return json.loads((ANSWERS / f"{name}.json").read_text())


def replay(name: str, **headers) -> Http:
    answer = recorded(name)
    return Http(answer["status"], json.dumps(answer["body"]), {"Content-Type": "application/json", **headers})


class FakeTime:
    """sleep() advances clock(): polling and backoff cost no real time."""

    def __init__(self):
        self.now, self.sleeps = 0.0, []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def server():
    with StubExplorer() as stub:
        yield stub


def make(stub: StubExplorer, chain_id: int = 31337, **kwargs) -> SourcifyClient:
    time = FakeTime()
    options = dict(
        timeout=(2.0, 2.0),
        max_retries=3,
        backoff=0.01,
        max_backoff=0.05,
        limiter=RateLimiter(1000.0),
        sleep=time.sleep,
        clock=time.clock,
    )
    options.update(kwargs)
    client = SourcifyClient(stub.url.removesuffix("api"), chain_id, **options)
    client.fake_time = time
    return client


def box_request(address: str = BOX, tx: str = BOX_TX, **extra_input) -> VerificationRequest:
    """The recorded standard-json input, with what forge's build info adds at the top level."""
    source = {**FIXTURE["stdJsonInput"], **extra_input}
    return VerificationRequest(
        address=address,
        contract_name=FIXTURE["contractIdentifier"],
        source_code=json.dumps(source),
        code_format=CodeFormat.STANDARD_JSON,
        compiler_version="v" + FIXTURE["compilerVersion"],
        optimization_used=True,
        runs=321,
        creation_tx_hash=tx,
    )


def sent(stub: StubExplorer, index: int = 0) -> dict:
    return json.loads(stub.seen[index].raw)


def paths(stub: StubExplorer) -> list[tuple[str, str]]:
    return [(s.method, s.path) for s in stub.seen]


def recorded_request(name: str) -> tuple[str, str]:
    request = recorded(name)["request"]
    return request["method"], request["url"].split("?", 1)[0]


# -- submit and poll ------------------------------------------------------------------------------


def test_exact_match_submit_pending_final_and_the_body_sent(server):
    server.answer(replay("01-exact-submit"), replay("01-exact-job-pending"), replay("01-exact-job-final"))
    client = make(server)
    receipt = client.verify_source_code(box_request(allowPaths=["/x"], basePath="/x", includePaths=[]))
    assert receipt.guid == "a4ae62c4-eb8e-4f7a-bfd5-8fe3d3bfa604" and receipt.address == BOX
    progress = []
    answer = client.wait(receipt, interval=2.0, timeout=60, on_progress=progress.append)
    assert answer.outcome == Outcome.VERIFIED and answer.match == "exact_match"
    assert "exact match" in answer.reason
    assert [a.outcome for a in progress] == [Outcome.PENDING, Outcome.VERIFIED]
    assert paths(server) == [
        recorded_request(n) for n in ("01-exact-submit", "01-exact-job-pending", "01-exact-job-final")
    ]
    body = sent(server)
    assert set(body) == {"stdJsonInput", "compilerVersion", "contractIdentifier", "creationTransactionHash"}
    assert body["stdJsonInput"] == FIXTURE["stdJsonInput"]  # allowPaths/basePath/includePaths stripped (05-*)
    assert body["compilerVersion"] == "0.8.26+commit.8a97fa7a"
    assert body["contractIdentifier"] == "src/Box.sol:Box"
    assert body["creationTransactionHash"] == BOX_TX


def test_no_creation_tx_hash_is_left_out(server):
    address = "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707"
    server.answer(replay("06-no-creation-tx-submit"), replay("06-no-creation-tx-job-final"))
    client = make(server)
    answer = client.wait(client.verify_source_code(box_request(address, tx=None)), timeout=30)
    assert "creationTransactionHash" not in sent(server)
    assert answer.outcome == Outcome.VERIFIED and answer.match == "exact_match"


def test_already_verified_409_is_a_success_without_polling(server):
    server.answer(replay("02-already-verified-submit"))
    client = make(server)
    receipt = client.verify_source_code(box_request())
    assert receipt.guid == "" and receipt.already_verified
    answer = client.wait(receipt)
    assert answer.outcome == Outcome.ALREADY_VERIFIED and answer.outcome.is_success
    assert answer.match == "exact_match" and "already verified" in answer.reason
    assert len(server.seen) == 1


def test_duplicate_request_429_waits_retry_after_then_goes_on(server):
    duplicate = rules.error_body(
        rules.DUPLICATE_VERIFICATION_REQUEST, f"Contract {BOX} on chain 31337 is already being verified"
    )
    server.answer(Http(429, json.dumps(duplicate), {"Retry-After": "3"}), replay("01-exact-submit"))
    client = make(server, max_backoff=10.0)
    receipt = client.verify_source_code(box_request())
    assert receipt.guid == "a4ae62c4-eb8e-4f7a-bfd5-8fe3d3bfa604"
    assert client.fake_time.sleeps == [3.0]
    assert [s.method for s in server.seen] == ["POST", "POST"] and sent(server, 0) == sent(server, 1)


def test_only_too_many_requests_holds_back_the_other_callers(server):
    """A duplicate request is about one address, `too_many_requests` about this client's rate: only
    its wait pauses every caller of the limiter."""
    for code, held in ((rules.DUPLICATE_VERIFICATION_REQUEST, False), (rules.TOO_MANY_REQUESTS, True)):
        time, others = FakeTime(), []
        limiter = RateLimiter(1000.0, clock=time.clock, sleep=time.sleep)

        def sleep(seconds, limiter=limiter, time=time, others=others):
            others.append(limiter.reserve())  # another caller, asking while this one waits
            time.sleep(seconds)

        busy = Http(429, json.dumps(rules.error_body(code, "wait")), {"Retry-After": "3"})
        server.answer(busy, replay("01-exact-submit"))
        client = make(server, max_backoff=10.0, limiter=limiter, clock=time.clock, sleep=sleep)
        assert client.verify_source_code(box_request()).guid == "a4ae62c4-eb8e-4f7a-bfd5-8fe3d3bfa604"
        assert (others[0] > 2.0) is held, (code, others)


def test_a_bare_429_is_a_rate_limit_too(server):
    server.answer(Http(429, "slow down", {"Retry-After": "2"}), replay("01-exact-submit"))
    client = make(server, max_backoff=10.0)
    assert client.verify_source_code(box_request()).guid == "a4ae62c4-eb8e-4f7a-bfd5-8fe3d3bfa604"
    assert client.fake_time.sleeps == [2.0]


def test_too_many_requests_every_time_ends_rate_limited_not_failed(server):
    busy = Http(429, json.dumps(rules.error_body(rules.TOO_MANY_REQUESTS, "Too many requests, try later")))
    server.default = lambda seen: busy
    client = make(server, max_retries=2)
    with pytest.raises(RateLimited) as caught:
        client.verify_source_code(box_request())
    assert caught.value.answer.outcome == Outcome.RATE_LIMITED
    assert len(server.seen) == 3 and "Too many requests" in str(caught.value)


@pytest.mark.parametrize(
    "case, code, words",
    [
        ("03b-wrong-source-same-length", "no_match", "don't match"),
        ("03-wrong-source", "bytecode_length_mismatch", "length doesn't match"),
        ("05-compiler-error-unknown-key", "compiler_error", 'Unknown key "allowPaths"'),
        ("07-bad-identifier", "contract_not_found_in_compiler_output", "Contract not found in compiler output"),
    ],
)
def test_failed_jobs_carry_sourcifys_reason(server, case, code, words):
    address = recorded(f"{case}-submit")["request"]["url"].rsplit("/", 1)[-1]
    server.answer(replay(f"{case}-submit"), replay(f"{case}-job-pending"), replay(f"{case}-job-final"))
    client = make(server)
    answer = client.wait(client.verify_source_code(box_request(address)), interval=1.0, timeout=30)
    assert answer.outcome == Outcome.FAILED and not answer.outcome.is_success
    assert answer.message == code and answer.error["customCode"] == code and answer.match is None
    assert words in answer.reason


def test_no_match_reason_compares_the_bytecodes():
    error = recorded("03b-wrong-source-same-length-job-final")["body"]["error"]
    answer = job_answer(recorded("03b-wrong-source-same-length-job-final")["body"])
    on, re = len(error["onchainRuntimeCode"]) // 2 - 1, len(error["recompiledRuntimeCode"]) // 2 - 1
    assert f"runtime bytecode: on-chain {on} bytes, recompiled {re} bytes, first difference at byte" in answer.reason
    assert "creation bytecode: on-chain" in answer.reason
    assert answer.error["recompiledRuntimeCode"] == error["recompiledRuntimeCode"]  # kept whole for the caller
    lengths = job_answer(recorded("03-wrong-source-job-final")["body"])
    assert "runtime bytecode: on-chain" in lengths.reason and lengths.outcome == Outcome.FAILED


def test_nothing_deployed_is_not_found(server):
    server.answer(replay("08-no-code-at-address-submit"), replay("08-no-code-at-address-job-final"))
    client = make(server)
    answer = client.wait(
        client.verify_source_code(box_request("0x000000000000000000000000000000000000dEaD")), timeout=30
    )
    assert answer.outcome == Outcome.NOT_FOUND and "does not have a contract deployed" in answer.reason


def test_unsupported_chain_is_refused_with_its_own_outcome(server):
    server.answer(replay("09-unsupported-chain-submit"))
    client = make(server, chain_id=1)
    with pytest.raises(VerificationRejected) as caught:
        client.verify_source_code(box_request("0x0165878A594ca255338adfa4d48449f69242Eb8F"))
    assert caught.value.answer.outcome == Outcome.UNSUPPORTED_CHAIN
    assert caught.value.reason == "Chain 1 not found"
    assert paths(server) == [recorded_request("09-unsupported-chain-submit")]


def test_job_not_found_is_unknown_guid(server):
    server.answer(replay("12-job-not-found"))
    client = make(server)
    answer = client.wait(Receipt(guid="00000000-0000-4000-8000-000000000000", address=BOX), fresh=False)
    assert answer.outcome == Outcome.UNKNOWN_GUID and "No verification job found" in answer.reason
    assert client.fake_time.sleeps == []  # fresh=False: checked at once


def test_partial_match_then_upgrade_to_exact(server):
    address = FIXTURE["deployed"][2][0]
    server.answer(
        replay("04-partial-submit"),
        replay("04-partial-job-final"),
        replay("04b-upgrade-partial-to-exact-submit"),
        replay("04b-upgrade-partial-to-exact-job-final"),
    )
    client = make(server)
    first = client.wait(client.verify_source_code(box_request(address)), timeout=30)
    assert first.outcome == Outcome.VERIFIED and first.match == "match" and "partial match" in first.reason
    assert (
        rules.overall_match(first.match, "exact_match") == "exact_match" != first.match
    )  # a better match to submit for
    second = client.wait(client.verify_source_code(box_request(address)), timeout=30)
    assert second.outcome == Outcome.VERIFIED and second.match == "exact_match"
    assert [p for p in paths(server) if p[0] == "POST"] == [recorded_request("04-partial-submit")] * 2


def test_polling_stops_at_the_timeout(server):
    server.default = lambda seen: replay("01-exact-job-pending")
    client = make(server)
    with pytest.raises(VerificationTimeout) as caught:
        client.wait(Receipt(guid="a4ae62c4-eb8e-4f7a-bfd5-8fe3d3bfa604", address=BOX), interval=5.0, timeout=20.0)
    assert "verify-ui/jobs/a4ae62c4" in str(caught.value) and 3 <= len(server.seen) <= 5


def test_server_errors_and_dropped_connections_are_retried(server):
    server.answer(Http(503, "<html>busy</html>"), Drop(), replay("01-exact-submit"))
    client = make(server)
    assert client.verify_source_code(box_request()).guid == "a4ae62c4-eb8e-4f7a-bfd5-8fe3d3bfa604"
    assert len(server.seen) == 3 and len(client.fake_time.sleeps) == 2


def test_not_a_sourcify_server(server):
    server.answer(Http(404, "<html>Not Found</html>"))
    with pytest.raises(BadEndpoint, match="Sourcify server base URL"):
        make(server).verify_source_code(box_request())


# -- lookups ------------------------------------------------------------------------------------------


def test_contract_record_from_the_full_lookup(server):
    server.answer(replay("01-exact-lookup-all"))
    record = make(server).contract_record(BOX)
    assert server.seen[0].path == recorded_request("01-exact-lookup-all")[1] and server.seen[0].query == {
        "fields": "all"
    }
    assert isinstance(record, ExplorerRecord) and record.exact
    assert record.verified and record.match == "exact_match" and record.name == "Box"
    assert record.compiler == "v0.8.26+commit.8a97fa7a" and record.optimization_used and record.runs == 321
    assert record.evm_version == "cancun" and record.source_format == "standard-json"
    assert "contract Box" in record.files["src/Box.sol"]
    assert [e["name"] for e in record.abi if e["type"] == "function"] == ["label", "owner", "set", "value"]
    assert record.constructor_arguments.startswith("0000") and not record.proxy and record.implementation == ""


@pytest.mark.parametrize(
    "language, version, compiler",
    [
        ("Solidity", "0.8.26+commit.8a97fa7a", "v0.8.26+commit.8a97fa7a"),
        ("Solidity", "v0.8.26+commit.8A97FA7A", "v0.8.26+commit.8a97fa7a"),  # was kept with its capitals
        ("Vyper", "0.4.3+commit.bff19ea2", "vyper:0.4.3"),
        ("Vyper", "0.4.0rc6+commit.33719560", "vyper:0.4.0rc6"),
        ("Vyper", "", ""),  # was `vyper:`, a version of nothing
        ("Vyper", "0.4.x", "0.4.x"),  # no version: shown as Sourcify holds it
    ],
)
def test_a_record_s_compiler_is_the_contract_api_s_spelling(language, version, compiler):
    data = {"match": "exact_match", "compilation": {"language": language, "compilerVersion": version}}
    assert client_mod.record_of(BOX, data).compiler == compiler


def test_lookup_of_an_unverified_contract(server):
    address = "0x0165878A594ca255338adfa4d48449f69242Eb8F"
    server.answer(
        replay("13-lookup-not-verified"), replay("13-lookup-not-verified"), replay("03-wrong-source-lookup-404")
    )
    client = make(server)
    assert client.lookup(address)["match"] is None
    assert not client.contract_record(address).verified
    with pytest.raises(
        ContractNotVerified,
        match=r"^0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512: not verified on Sourcify \(chain 31337\)$",
    ):
        client.get_abi("0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512")


def test_lookup_default_fields_and_partial(server):
    server.answer(replay("04-partial-lookup-default"))
    data = make(server).lookup(FIXTURE["deployed"][2][0], fields="")
    assert data["match"] == "match" and server.seen[0].query == {}


def test_bad_address_is_refused_before_sending_and_sourcifys_400_is_reported(server):
    client = make(server)
    with pytest.raises(InvalidRequest) as caught:
        client.lookup("0x1234")
    assert caught.value.param == "address" and server.seen == []
    server.answer(replay("14-lookup-invalid-address"))  # what Sourcify says to 0x1234
    with pytest.raises(ExplorerError) as caught:
        client.lookup(BOX)
    assert caught.value.answer.outcome == Outcome.ERROR
    assert caught.value.reason == "request/params/address must NOT have fewer than 42 characters"


def test_proxy_links_are_not_a_sourcify_action(server):
    with pytest.raises(ActionNotSupported, match="resolves proxies itself"):
        make(server).verify_proxy(BOX)
    assert server.seen == []


def test_links(server):
    client = make(server)
    base = server.url.removesuffix("api")
    assert client.link(BOX) == f"{base}repo-ui/31337/{BOX}"
    assert client.job_url("a4ae62c4") == f"{base}verify-ui/jobs/a4ae62c4"
    assert SourcifyClient("https://sourcify.dev/server", 1).base_url == "https://sourcify.dev/server/"


def test_api_key_rides_in_a_header_and_never_shows(server, caplog):
    seen_headers = []
    session = requests.Session()
    session.hooks["response"].append(lambda r, *a, **k: seen_headers.append(dict(r.request.headers)))
    server.answer(Http(500, "oops"), Http(400, json.dumps(rules.error_body(rules.INVALID_PARAMETER, f"bad key {KEY}"))))
    client = make(server, api_key=KEY, session=session)
    with (
        caplog.at_level(logging.DEBUG, logger="ape.contract_verify.client"),
        pytest.raises(VerificationRejected) as caught,
    ):
        client.verify_source_code(box_request())
    assert seen_headers[0]["Authorization"] == f"Bearer {KEY}"
    for text in (repr(client), str(caught.value), caught.value.reason, caplog.text):
        assert KEY not in text


# -- Vyper ----------------------------------------------------------------------------------------------


VYPER_INPUT = json.loads(recorded("17-vyper-submit")["note"].split("input: ", 1)[1])


def test_vyper_submission_uses_the_long_version(server, monkeypatch):
    monkeypatch.setattr(client_mod, "vyper_long_version", lambda version: "0.4.3+commit.bff19ea2")
    address = "0x8a791620dd6260079bf849dc5567adc3f2fdc318"
    request = VerificationRequest(
        address=address,
        contract_name="src/Counter.vy:Counter",
        source_code=json.dumps(VYPER_INPUT),
        code_format=CodeFormat.VYPER_JSON,
        compiler_version="vyper:0.4.3",
    )
    server.answer(replay("17-vyper-submit"), replay("17-vyper-job-pending"), replay("17-vyper-job-final"))
    client = make(server)
    answer = client.wait(client.verify_source_code(request), timeout=30)
    body = sent(server)
    assert body == {
        "stdJsonInput": VYPER_INPUT,
        "compilerVersion": "0.4.3+commit.bff19ea2",
        "contractIdentifier": "src/Counter.vy:Counter",
    }
    assert answer.outcome == Outcome.VERIFIED and answer.match == "exact_match"  # creation exact, runtime match


def test_vyper_long_version_comes_from_vyper_version(tmp_path, monkeypatch):
    """The `vyper` beside the engine's vyper-json of that version answers --version (a stand-in
    script here: unit tests run no compiler); asked once, then cached."""
    from ape_contract_verify.engine import compilers

    bin_dir = tmp_path / "9.8.7" / "bin"
    bin_dir.mkdir(parents=True)
    calls = tmp_path / "calls"
    (bin_dir / "vyper").write_text(f"#!/bin/sh\necho x >> {calls}\necho 9.8.7+commit.abcdef12\n")
    (bin_dir / "vyper").chmod(0o755)
    monkeypatch.setattr(compilers, "vyper_json_command", lambda version: [str(bin_dir / "vyper-json")])
    assert client_mod.vyper_long_version("vyper:9.8.7") == "9.8.7+commit.abcdef12"
    assert client_mod.vyper_long_version("vyper:9.8.7") == "9.8.7+commit.abcdef12"
    assert calls.read_text().count("x") == 1
    (bin_dir / "vyper").write_text("#!/bin/sh\necho 9.8.6+commit.abcdef12\n")
    with pytest.raises(compilers.CompilerFailed, match="9.8.7"):
        client_mod.vyper_long_version("vyper:9.8.7")


def test_vyper_short_commits_become_the_release_names(tmp_path, monkeypatch):
    """Vyper 0.3.10's package prints 9136169; its release (what Sourcify downloads) is 91361694."""
    from ape_contract_verify.engine import compilers

    bin_dir = tmp_path / "0.3.10" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "vyper").write_text("#!/bin/sh\necho 0.3.10+commit.9136169\n")
    (bin_dir / "vyper").chmod(0o755)
    monkeypatch.setattr(compilers, "vyper_json_command", lambda version: [str(bin_dir / "vyper-json")])
    assert client_mod.vyper_long_version("vyper:0.3.10") == "0.3.10+commit.91361694"


@pytest.mark.parametrize("version", ["v0.8.26+commit.8a97fa7a", "v0.8.26"])
def test_a_vyper_json_request_naming_solc_is_refused_before_vyper_is_looked_for(server, monkeypatch, version):
    """It was read as Vyper 0.8.26: sent as such, or, without a commit, "not installed"."""
    from ape_contract_verify.engine import compilers

    looked_for = []
    monkeypatch.setattr(compilers, "vyper_json_command", lambda version: looked_for.append(version) or ["vyper-json"])
    request = VerificationRequest(
        address=BOX,
        contract_name="V.vy:V",
        source_code=json.dumps({"language": "Vyper", "sources": {"V.vy": {"content": "x: uint256"}}}),
        code_format=CodeFormat.VYPER_JSON,
        compiler_version=version,
    )
    with pytest.raises(InvalidRequest) as caught:
        make(server).verify_source_code(request)
    assert caught.value.param == "compilerversion" and "reads as a Solidity version" in caught.value.problem
    assert "vyper:0.4.3" in caught.value.fix and looked_for == [] and server.seen == []


def test_vyper_without_a_long_version_names_compiler_version(server, monkeypatch):
    from ape_contract_verify.engine import compilers

    def missing(version):
        raise compilers.CompilerNotInstalled("Compiler vyper:0.1.0 is not installed")

    monkeypatch.setattr(compilers, "vyper_json_command", missing)
    request = VerificationRequest(
        address=BOX,
        contract_name="a.vy:a",
        source_code=json.dumps(VYPER_INPUT),
        code_format=CodeFormat.VYPER_JSON,
        compiler_version="vyper:0.1.0",
    )
    with pytest.raises(InvalidRequest) as caught:
        make(server).verify_source_code(request)
    assert caught.value.param == "compilerVersion" and "not installed" in caught.value.problem and server.seen == []


# -- the rules: request <-> body --------------------------------------------------------------------------


def test_single_file_request_becomes_one_source():
    request = VerificationRequest(
        address=BOX,
        contract_name="Box",
        source_code="contract Box {}",
        code_format=CodeFormat.SINGLE_FILE,
        compiler_version="v0.8.26+commit.8a97fa7a",
        optimization_used=True,
        runs=321,
        evm_version="cancun",
        via_ir=False,
        libraries={"Lib": "0x0165878A594ca255338adfa4d48449f69242Eb8F"},
    )
    body = rules.request_to_body(request)
    assert body["contractIdentifier"] == "Box.sol:Box" and body["compilerVersion"] == "0.8.26+commit.8a97fa7a"
    assert body["stdJsonInput"] == {
        "language": "Solidity",
        "sources": {"Box.sol": {"content": "contract Box {}"}},
        "settings": {
            "optimizer": {"enabled": True, "runs": 321},
            "evmVersion": "cancun",
            "viaIR": False,
            "libraries": {"Box.sol": {"Lib": "0x0165878A594ca255338adfa4d48449f69242Eb8F"}},
        },
    }


@pytest.mark.parametrize("kind", ["solidity", "vyper", "flat"])
def test_round_trip(kind):
    if kind == "solidity":
        request, long = box_request(), None
    elif kind == "vyper":
        request = VerificationRequest(
            address=BOX,
            contract_name="src/Counter.vy:Counter",
            source_code=json.dumps(VYPER_INPUT),
            code_format=CodeFormat.VYPER_JSON,
            compiler_version="vyper:0.4.3",
        )
        long = "0.4.3+commit.bff19ea2"
    else:
        request = VerificationRequest(
            address=BOX,
            contract_name="Box",
            source_code="contract Box {}",
            code_format=CodeFormat.SINGLE_FILE,
            compiler_version="v0.8.26+commit.8a97fa7a",
            optimization_used=True,
            runs=200,
            creation_tx_hash=BOX_TX,
        )
        long = None
    body = rules.request_to_body(request, long)
    back = rules.body_to_request("31337", BOX, json.loads(json.dumps(body)))
    assert back.address == BOX and back.creation_tx_hash == request.creation_tx_hash
    assert back.contract_name == body["contractIdentifier"]
    assert back.compiler_version == ("vyper:0.4.3" if kind == "vyper" else "v0.8.26+commit.8a97fa7a")
    assert back.code_format == (CodeFormat.VYPER_JSON if kind == "vyper" else CodeFormat.STANDARD_JSON)
    assert rules.request_to_body(back, long) == body


def test_recorded_missing_fields_answer_names_the_same_field():
    answer = recorded("11-missing-fields")
    with pytest.raises(InvalidRequest) as caught:
        rules.body_to_request("31337", "0x0165878A594ca255338adfa4d48449f69242Eb8F", answer["request"]["body"])
    assert caught.value.param == "stdJsonInput" and "'stdJsonInput'" in answer["body"]["message"]
    assert answer["status"] == SOURCIFY_HTTP_STATUS[answer["body"]["customCode"]] == 400
    with pytest.raises(InvalidRequest) as caught:  # 10-*: request/params/address
        rules.body_to_request("31337", "0x1234", _good_body())
    assert (
        caught.value.param == "address"
        and "request/params/address" in recorded("10-invalid-address-submit")["body"]["message"]
    )


def _good_body(**changes) -> dict:
    body = {
        "stdJsonInput": FIXTURE["stdJsonInput"],
        "compilerVersion": FIXTURE["compilerVersion"],
        "contractIdentifier": FIXTURE["contractIdentifier"],
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not ...}


@pytest.mark.parametrize(
    "chain, body, param",
    [
        ("31337", [], "body"),
        ("31337", _good_body(compilerVersion=...), "compilerVersion"),
        ("31337", _good_body(contractIdentifier=...), "contractIdentifier"),
        ("31337", _good_body(compilerVersion="0.8.26"), "compilerVersion"),
        ("31337", _good_body(compilerVersion=826), "compilerVersion"),
        ("31337", _good_body(contractIdentifier="Box"), "contractIdentifier"),
        ("31337", _good_body(stdJsonInput="{}"), "stdJsonInput"),
        ("31337", _good_body(stdJsonInput={"language": "Solidity", "sources": {}}), "stdJsonInput"),
        ("31337", _good_body(stdJsonInput={**FIXTURE["stdJsonInput"], "language": "Fe"}), "stdJsonInput.language"),
        ("31337", _good_body(creationTransactionHash="0x12"), "creationTransactionHash"),
        ("main", _good_body(), "chainId"),
    ],
)
def test_body_to_request_names_the_bad_field(chain, body, param):
    with pytest.raises(InvalidRequest) as caught:
        rules.body_to_request(chain, BOX, body)
    assert caught.value.param == param and caught.value.fix


def test_body_to_request_drops_what_solc_refuses():
    request = rules.body_to_request(
        "31337", BOX, _good_body(stdJsonInput={**FIXTURE["stdJsonInput"], "allowPaths": ["/"]})
    )
    assert set(json.loads(request.source_code)) == {"language", "sources", "settings"}
    assert request.constructor_arguments == "" and request.creation_tx_hash is None


def test_request_to_body_refusals():
    with pytest.raises(InvalidRequest) as caught:
        rules.request_to_body(
            VerificationRequest(
                BOX, "src/Counter.vy:Counter", json.dumps(VYPER_INPUT), CodeFormat.VYPER_JSON, "vyper:0.4.3"
            )
        )
    assert caught.value.param == "compilerVersion" and "commit" in caught.value.problem
    with pytest.raises(InvalidRequest) as caught:
        rules.request_to_body(box_request(tx="0xnothash"))
    assert caught.value.param == "creationTransactionHash"


def test_outcomes_of_the_error_codes():
    expected = {
        "already_verified": Outcome.ALREADY_VERIFIED,
        "unsupported_chain": Outcome.UNSUPPORTED_CHAIN,
        "too_many_requests": Outcome.RATE_LIMITED,
        "duplicate_verification_request": Outcome.RATE_LIMITED,
        "job_not_found": Outcome.UNKNOWN_GUID,
        "invalid_parameter": Outcome.ERROR,
        "internal_error": Outcome.ERROR,
        "no_match": Outcome.FAILED,
        "bytecode_length_mismatch": Outcome.FAILED,
        "compiler_error": Outcome.FAILED,
        "contract_not_found_in_compiler_output": Outcome.FAILED,
        "contract_not_deployed": Outcome.NOT_FOUND,
        "some_future_code": Outcome.FAILED,
        None: Outcome.ERROR,
    }
    assert {code: rules.outcome_for(code) for code in expected} == expected
    for name in (
        "02-already-verified-submit",
        "09-unsupported-chain-submit",
        "12-job-not-found",
        "14-lookup-invalid-address",
    ):
        answer = recorded(name)
        assert SOURCIFY_HTTP_STATUS[answer["body"]["customCode"]] == answer["status"]
    assert rules.overall_match("exact_match", "match") == "exact_match" and rules.overall_match(None, None) is None


def test_derive_passes_the_creation_transaction():
    from ape_contract_verify.derive.derive import tx_hash_of as _tx_hash

    assert _tx_hash(BOX_TX) == BOX_TX
    assert _tx_hash(bytes.fromhex(BOX_TX[2:])) == BOX_TX
    assert _tx_hash("") is None and _tx_hash(None) is None
