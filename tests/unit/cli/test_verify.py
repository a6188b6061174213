"""cli/__init__.py's verifying commands: `ape verify contract | proxy | all` parse their options, call the API with them,
and print its reports; run without a chain (the API's answers given here). Bad input is exit 2
before anything is called."""

import json
import re
from types import SimpleNamespace

import pytest

from ape_contract_verify import api
from ape_contract_verify import cli as commands
from ape_contract_verify.cli import cli
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.request import CodeFormat
from ape_contract_verify.workflow.report import Report
from support.cli import cli_runner

pytestmark = pytest.mark.unit

A = "0x" + "ab" * 20
B = "0x" + "cd" * 20


@pytest.fixture
def calls(monkeypatch):
    """The API's verify, verify_proxy, verify_all and dry_run: each records its call and answers
    with `answers[name]`; verify says some progress on the way."""
    seen: list = []
    answers = {
        "verify": [Report("Token", A, Outcome.VERIFIED, target="etherscan", link=f"https://x.example/address/{A}")],
        "verify_proxy": [Report("Proxy (proxy link)", B, Outcome.FAILED, "no implementation", target="etherscan")],
        "verify_all": [Report("Token", A, Outcome.VERIFIED, target="sourcify")],
    }

    def recorder(name):
        def call(*args, **kwargs):
            seen.append((name, args, kwargs))
            if kwargs.get("on_progress"):
                kwargs["on_progress"](A, "submitting")
            return answers[name]

        return call

    for name in ("verify", "verify_proxy", "verify_all"):
        monkeypatch.setattr(api, name, recorder(name))
    plan = SimpleNamespace(ok=True, lines=lambda out: iter(["target etherscan (etherscan) at x, with no API key:"]))
    monkeypatch.setattr(api, "dry_run", lambda *a, **k: seen.append(("dry_run", a, k)) or plan)
    return SimpleNamespace(seen=seen, answers=answers)


@pytest.fixture
def nothing_sent(monkeypatch):
    """The API's own checks run: connecting to a network, which comes before anything is sent, fails the test."""

    def no_connection(network=None):
        raise AssertionError(f"connected to {network!r}: the input was not refused first")

    monkeypatch.setattr(api, "connected", no_connection)


def run(*args):
    runner = cli_runner()
    return runner.invoke(cli, list(args), catch_exceptions=False)


def test_contract_passes_its_options_and_prints_the_summary(calls):
    result = run("contract", "Token", A, "--flatten", "--no-check", "--force", "--network", "ethereum:sepolia")
    assert result.exit_code == 0, result.stderr
    [(name, args, kwargs)] = calls.seen
    assert name == "verify" and args == (("Token", A),)
    assert (kwargs["network"], kwargs["code_format"], kwargs["check"], kwargs["force"]) == (
        "ethereum:sepolia",
        CodeFormat.SINGLE_FILE,
        False,
        True,
    )
    assert kwargs["targets"] == () and kwargs["explorer_url"] is None and kwargs["api_key"] is None
    lines = result.stdout.splitlines()
    assert re.split(r"\s{2,}", lines[1]) == ["Token", A, "verified", "etherscan", f"https://x.example/address/{A}"]
    assert f"{A[:10]}… submitting (0s)" in result.stderr.splitlines()  # progress: a plain line in a log
    assert "\x1b[" not in result.stdout + result.stderr


def test_a_name_alone_or_an_address_alone(calls):
    assert run("contract", "Token").exit_code == 0
    assert run("contract", A).exit_code == 0
    assert [args for _, args, _ in calls.seen] == [("Token",), (A,)]
    assert calls.seen[0][2]["code_format"] is None and calls.seen[0][2]["check"] is None  # the config's


def test_a_failed_proxy_link_exits_1(calls):
    result = run("proxy", B, "--expected-implementation", A)
    assert result.exit_code == 1
    [(name, args, kwargs)] = calls.seen
    assert (name, args, kwargs["expected_implementation"]) == ("verify_proxy", (B,), A)
    assert f"ERROR: Proxy (proxy link) {B} on etherscan: failed: no implementation" in result.stderr


def test_all_writes_the_report_for_ci(calls, tmp_path):
    path = tmp_path / "report.json"
    result = run(
        "all", "--network", "ethereum:sepolia", "--network", "ethereum:mainnet", "--workers", "4", "--report", str(path)
    )
    assert result.exit_code == 0, result.stderr
    [(name, args, kwargs)] = calls.seen
    assert args == (("ethereum:sepolia", "ethereum:mainnet"),) and kwargs["workers"] == 4
    document = json.loads(path.read_text())
    assert document["ok"] is True and [r["contract"] for r in document["reports"]] == ["Token"]


def test_json_prints_only_the_document(calls):
    result = run("contract", "Token", A, "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["reports"][0]["address"] == A
    assert "submitting" not in result.stderr  # no progress with --json


def test_dry_run_prints_the_plan_and_submits_nothing(calls):
    result = run("contract", "Token", A, "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert [name for name, _, _ in calls.seen] == ["dry_run"]
    assert result.stdout.splitlines() == ["target etherscan (etherscan) at x, with no API key:"]


@pytest.mark.parametrize(
    "args, words",
    [
        (["contract", "Token", "0x12"], "'0x12' is not an address"),
        (["contract", "0x12"], "NAME_OR_ADDRESS"),
        (["proxy", "0xzz"], "ADDRESS"),
        (["proxy", A, "--expected-implementation", "nope"], "--expected-implementation"),
        (["contract", "Token", "--network", "ethereum:sepolia", "--network", "ethereum:mainnet"], "one network"),
        (["all", "--network", "ethereum:sepolia", "--all-networks"], "not both"),
        (["all", "--workers", "0"], "--workers"),
        (["all", "--workers", "65"], "--workers"),
    ],
)
def test_bad_input_is_exit_2_and_nothing_is_sent(nothing_sent, args, words):
    result = run(*args)
    assert result.exit_code == 2, result.stdout
    assert words in result.stderr and "Traceback" not in result.stderr


def test_the_group_s_commands_are_this_module_s():
    assert cli.commands["contract"] is commands.contract and cli.commands["proxy"] is commands.proxy
    assert cli.commands["all"] is commands.all_deployments


def test_an_address_is_checked_and_a_bad_one_names_its_parameter(nothing_sent):
    result = run("proxy", A, "--expected-implementation", "0x" + "ab" * 19)
    assert result.exit_code == 2 and "--expected-implementation" in result.stderr
    assert "is not an address. give 0x followed by 40 hex digits" in result.stderr


def test_a_dry_run_that_cannot_send_everything_exits_1_and_writes_where_asked(calls, monkeypatch, tmp_path):
    asked = []
    plan = SimpleNamespace(
        ok=False, lines=lambda out: asked.append(out) or iter(["  Token: NOT SENT: pre-check failed"])
    )
    monkeypatch.setattr(api, "dry_run", lambda *a, **k: calls.seen.append(("dry_run", a, k)) or plan)
    result = run("contract", A, "--dry-run", "--out", str(tmp_path / "bodies"), "--constructor-args", "1, 2")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == ["  Token: NOT SENT: pre-check failed"] and asked == [str(tmp_path / "bodies")]
    [(name, args, kwargs)] = calls.seen
    assert (name, args, kwargs["constructor_args"], kwargs["check"]) == ("dry_run", (A,), "1, 2", None)


def test_all_over_every_network_passes_none_and_a_failed_row_makes_the_report_not_ok(calls, tmp_path):
    calls.answers["verify_all"] = [Report("Token", A, Outcome.FAILED, "bytecode differs", target="etherscan")]
    path = tmp_path / "report.json"
    result = run("all", "--all-networks", "--flatten", "--no-check", "--report", str(path))
    assert result.exit_code == 1
    [(name, args, kwargs)] = calls.seen
    assert args == (None,) and kwargs["all_networks"] is True
    assert (kwargs["code_format"], kwargs["check"], kwargs["workers"]) == (CodeFormat.SINGLE_FILE, False, None)
    document = json.loads(path.read_text())
    assert document["ok"] is False and document["reports"][0]["reason"] == "bytecode differs"
