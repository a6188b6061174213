"""The client end to end: real anvil, real compiler, the project's real local explorer as a child
process (`python -m ape_contract_verify.server.runner`, what `ape verify serve` runs), real HTTP.
Submit, poll, re-submit, read back, proxy, a failing submission, the key, and the CLI."""

import json

import pytest
from click.testing import CliRunner

from ape_contract_verify.cli import cli
from ape_contract_verify.client.etherscan import ExplorerClient
from ape_contract_verify.exceptions import InvalidApiKey
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.retry import RateLimiter
from support.service import SOLC_0826, Anvil, ServerProcess, encode, solc_compile, standard_input

KEY = "E2EKEY0123456789ABCDEFGHIJKLMNOPQR"
BOX = "contracts/proxy/Box.sol:Box"
PROXY = "contracts/proxy/SimpleProxy.sol:SimpleProxy"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    anvil = Anvil()
    server = None
    try:
        server = ServerProcess(
            anvil.url, tmp_path_factory.mktemp("client-e2e") / "explorer.sqlite", extra=("--api-key", KEY)
        )
        source = standard_input(["proxy/Box.sol", "proxy/SimpleProxy.sol"])
        out = solc_compile(source)["contracts"]
        box_out = out["contracts/proxy/Box.sol"]["Box"]
        proxy_out = out["contracts/proxy/SimpleProxy.sol"]["SimpleProxy"]
        box = anvil.deploy(box_out["evm"]["bytecode"]["object"])
        proxy_args = encode(["address", "bytes"], [box, b""])
        proxy = anvil.deploy(proxy_out["evm"]["bytecode"]["object"], proxy_args)
        yield {
            "server": server,
            "source": source,
            "box": box,
            "box_abi": box_out["abi"],
            "proxy": proxy,
            "proxy_args": proxy_args,
        }
    finally:
        if server is not None:
            server.stop()
        anvil.stop()


def client_for(world, key=KEY) -> ExplorerClient:
    return ExplorerClient(world["server"].base_url, api_key=key, limiter=RateLimiter(50.0), not_indexed_timeout=0)


def request_for(world, address, name, args=b"") -> VerificationRequest:
    return VerificationRequest(
        address=address,
        contract_name=name,
        source_code=json.dumps(world["source"]),
        code_format=CodeFormat.STANDARD_JSON,
        compiler_version=SOLC_0826,
        constructor_arguments=args.hex(),
        license_type=3,
    )


@pytest.fixture(scope="module")
def box_verified(world):
    client = client_for(world)
    receipt = client.verify_source_code(request_for(world, world["box"], BOX))
    assert len(receipt.guid) == 50
    return client.wait(receipt, interval=0.2, timeout=120)


def test_submit_and_poll_to_verified(box_verified):
    assert box_verified.outcome == Outcome.VERIFIED, box_verified


def test_resubmission_is_a_success(world, box_verified):
    client = client_for(world)
    receipt = client.verify_source_code(request_for(world, world["box"], BOX))
    answer = client.wait(receipt, interval=0.2, timeout=120)
    assert answer.outcome.is_success, answer


def test_reads_round_trip(world, box_verified):
    client = client_for(world, key=None)  # reads need no key
    assert client.get_abi(world["box"]) == world["box_abi"]
    record = client.contract_record(world["box"])
    assert record.verified and record.source_format == "standard-json"
    assert record.files == {p: s["content"] for p, s in world["source"]["sources"].items()}
    assert record.settings["optimizer"] == {"enabled": True, "runs": 200}
    assert record.compiler == SOLC_0826 and record.name.endswith("Box")


def test_wrong_constructor_arguments_fail_with_a_reason(world, box_verified):
    client = client_for(world)
    wrong = encode(["address", "bytes"], ["0x" + "12" * 20, b""])
    receipt = client.verify_source_code(request_for(world, world["proxy"], PROXY, wrong))
    answer = client.wait(receipt, interval=0.2, timeout=120)
    assert answer.outcome == Outcome.FAILED and answer.reason


def test_proxy_verification(world, box_verified):
    client = client_for(world)
    receipt = client.verify_source_code(request_for(world, world["proxy"], PROXY, world["proxy_args"]))
    assert client.wait(receipt, interval=0.2, timeout=120).outcome == Outcome.VERIFIED
    proxy_receipt = client.verify_proxy(world["proxy"], expected_implementation=world["box"])
    answer = client.wait(proxy_receipt, interval=0.2, timeout=60)
    assert answer.outcome == Outcome.VERIFIED, answer
    assert world["box"].lower() in answer.reason.lower()
    record = client.contract_record(world["proxy"])
    assert record.proxy and record.implementation.lower() == world["box"].lower()


def test_wrong_key_is_refused(world):
    with pytest.raises(InvalidApiKey):
        client_for(world, key="not-the-key").verify_proxy(world["proxy"])


def test_cli_against_the_real_explorer(world, box_verified, tmp_path):
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    url = ["--explorer-url", world["server"].base_url]
    abi = runner.invoke(cli, ["abi", world["box"], *url])
    assert abi.exit_code == 0, abi.stderr
    assert json.loads(abi.stdout) == world["box_abi"]
    source = runner.invoke(cli, ["source", world["box"], "--out", str(tmp_path / "box"), *url])
    assert source.exit_code == 0, source.stderr
    assert "v0.8.26+commit.8a97fa7a" in source.stdout and "enabled, 200 runs" in source.stdout
    assert (tmp_path / "box" / "contracts/proxy/Box.sol").read_text() == world["source"]["sources"][
        "contracts/proxy/Box.sol"
    ]["content"]
    assert json.loads((tmp_path / "box" / "settings.json").read_text())["compilerVersion"] == SOLC_0826
    missing = runner.invoke(cli, ["status", "x" * 50, "--json", *url])
    assert missing.exit_code == 1
    assert json.loads(missing.stdout)["outcome"] == "unknown guid"
