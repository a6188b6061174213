"""The API key never appears in logs (ours or urllib3's, at DEBUG), exception text, tracebacks,
reprs, CLI output or written files, whatever the failure. Each scenario also proves the key really
was sent, so the absence is not vacuous."""

import json
import logging
import socket
import traceback

import pytest

from ape_contract_verify.client.etherscan import ExplorerClient
from ape_contract_verify.client.targets import resolve_target
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.protocol.secrets import ApiKey, redact
from ape_contract_verify.request import Receipt
from support.client import Texts, single_file_request, source_item
from support.stub_server import ADDRESS, GUID, Drop, Http, Stall, make_client, notok, ok

KEY = "S3CRETK3Y9QW8ER7TY6UI5OP4AS3DF2GH1"
ODD_KEY = "k3y+with/odd=chars&more"  # needs URL-encoding: the encoded form must be scrubbed too


@pytest.fixture
def debug_logs(caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("ape", "urllib3", "urllib3.connectionpool", "ape.contract_verify.client"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def everything_said(caplog, capsys, error=None) -> str:
    parts = [caplog.text] + [r.getMessage() for r in caplog.records]
    out = capsys.readouterr()
    parts += [out.out, out.err]
    if error is not None:
        parts += [str(error), repr(error), repr(error.args), "".join(traceback.format_exception(error))]
        parts += [str(getattr(error, "reason", ""))]
    return "\n".join(parts)


def key_forms(key):
    from urllib.parse import quote, quote_plus

    return {key, quote_plus(key), quote(key, safe="")}


SCENARIOS = {
    "success-get": (ok(json.dumps([])),),
    "dropped": (Drop(),) * 3,
    "stalled": (Stall(1.0),) * 3,
    "http-502": (Http(502, "bad gateway"),) * 3,
    "http-429": (Http(429, "slow"),) * 3,
    "http-404": (Http(404, "not here"),),
    "not-json": (Http(200, "<html>oops</html>"),) * 3,
    "rate-limited": (notok(Texts.RATE_LIMIT),) * 3,
    "invalid-key": (notok(Texts.INVALID_API_KEY),),
    "key-echoed": (notok(f"Invalid API Key {KEY}"),),
    "not-verified": (notok(Texts.NOT_VERIFIED),),
    "bad-chainid": (notok(Texts.MISSING_CHAINID),),
}


@pytest.mark.parametrize("key", [KEY, ODD_KEY], ids=["plain", "needs-encoding"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
@pytest.mark.parametrize("action", ["getabi", "verifysourcecode"])
def test_key_never_leaks(stub, debug_logs, capsys, scenario, action, key):
    if scenario == "key-echoed":
        stub.answer(notok(f"Invalid API Key {key}"))
    else:
        stub.answer(*SCENARIOS[scenario])
    client = make_client(stub, api_key=key, chain_id=1, max_retries=2, timeout=(1.0, 0.3))
    error = None
    try:
        if action == "getabi":
            client.get_abi(ADDRESS)
        else:
            client.verify_source_code(single_file_request())
    except ContractVerifyError as err:
        error = err
    assert (error is None) == (scenario == "success-get")
    assert stub.seen and all(s.params.get("apikey") == key for s in stub.seen)  # it was sent
    said = everything_said(debug_logs, capsys, error)
    for form in key_forms(key):
        assert form not in said
    # Where the key was logged, it shows redacted: a GET's query string, a POST's logged form.
    assert ("apikey=***" if action == "getabi" else "'apikey': '***'") in said
    if action == "getabi" and scenario not in ("dropped", "stalled"):
        # urllib3 logged the request line (once answered) with the query string: redacted, not dropped
        assert any(
            r.name == "urllib3.connectionpool" and "GET /api?" in r.getMessage() and "apikey=***" in r.getMessage()
            for r in debug_logs.records
        )


def test_connection_refused_does_not_leak(debug_logs, capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    client = ExplorerClient(
        f"http://127.0.0.1:{port}/api", api_key=KEY, max_retries=1, backoff=0.01, sleep=lambda s: None
    )
    with pytest.raises(ContractVerifyError) as info:
        client.get_abi(ADDRESS)
    assert KEY not in everything_said(debug_logs, capsys, info.value)


def test_polling_timeout_and_progress_do_not_leak(stub, debug_logs, capsys):
    stub.default = lambda seen: notok(Texts.PENDING)
    clock = [0.0]
    client = make_client(stub, api_key=KEY, sleep=lambda s: clock.__setitem__(0, clock[0] + s), clock=lambda: clock[0])
    with pytest.raises(ContractVerifyError) as info:
        client.wait(Receipt(GUID, ADDRESS), interval=1, timeout=3)
    assert KEY not in everything_said(debug_logs, capsys, info.value)
    assert len(stub.seen) == 3  # t = 1, 2, 3


def test_reprs_are_redacted(stub):
    key = ApiKey(KEY)
    client = make_client(stub, api_key=key)
    target = resolve_target("ethereum", "sepolia", api_key=KEY, environ={})
    for text in (repr(key), str(key), f"{key}", repr(client), repr(target), str(target), repr(target.client())):
        assert KEY not in text
    assert target.api_key.reveal() == KEY and target.chain_id == 11155111
    assert redact(f"https://x/api?apikey={KEY}") == "https://x/api?apikey=***"


def test_cli_debug_output_and_files_do_not_leak(stub, tmp_path, fast_cli):
    from click.testing import CliRunner

    from ape_contract_verify.cli import cli

    stub.answer(notok(Texts.RATE_LIMIT), ok([source_item()]), Drop(), Drop(), Drop(), Drop(), Drop(), Drop())
    runner = CliRunner()
    out = tmp_path / "out"
    common = ["--explorer-url", stub.url, "--api-key", KEY, "-v", "DEBUG"]
    try:
        first = runner.invoke(cli, ["source", ADDRESS, "--out", str(out), *common], catch_exceptions=False)
        second = runner.invoke(cli, ["status", GUID, "--json", *common], catch_exceptions=False)
    finally:
        logging.getLogger("ape").setLevel(logging.INFO)
    assert first.exit_code == 0, first.output
    assert second.exit_code == 1  # the explorer kept dropping the connection
    assert all(s.params.get("apikey") == KEY for s in stub.seen)
    for result in (first, second):
        assert KEY not in result.output
    for path in out.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text()
