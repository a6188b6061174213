"""cli/__init__.py: what every `ape verify` command shares, run without a chain: warnings on stderr,
stdout kept for the JSON document, plain progress lines in a log, the summary and its exit code,
and the API's errors as usage errors (exit 2) on the option they name."""

import io
import json
import re
import sys

import click
import pytest
from click.testing import CliRunner

from ape_contract_verify import cli as common
from ape_contract_verify.exceptions import ContractVerifyError, InvalidRequest
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.workflow.report import Report

pytestmark = pytest.mark.unit

A = "0x" + "ab" * 20
B = "0x" + "cd" * 20
ANSI = re.compile(r"\x1b\[")


def test_a_warning_goes_to_stderr(capsys):
    common.warn("no key for sourcify")
    out, err = capsys.readouterr()
    assert out == "" and err == "WARNING: no key for sourcify\n"


def test_with_json_stdout_carries_nothing_but_the_document(capsys):
    with common.quiet_stdout(True):
        print("INFO: Installing openzeppelin")
    with common.quiet_stdout(False):
        print("shown")
    out, err = capsys.readouterr()
    assert out == "shown\n" and err == "INFO: Installing openzeppelin\n"


def test_progress_in_a_log_is_a_plain_line_each(capsys):
    with common.progress(False) as show:
        show(A, "deriving Token")
        show(A, "submitting")
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"{A[:10]}… deriving Token (0s)", f"{A[:10]}… submitting (0s)"]
    assert not ANSI.search(err)


def test_progress_with_json_says_nothing(capsys):
    with common.progress(True) as show:
        show(A, "submitting")
    assert capsys.readouterr() == ("", "")


def finished(reports, as_json=False):
    with pytest.raises(SystemExit) as ended:
        common.finish(reports, as_json)
    return ended.value.code


def test_the_summary_and_exit_0_when_every_row_verified(capsys):
    reports = [Report("Token", A, Outcome.VERIFIED, target="etherscan", link=f"https://x.example/address/{A}")]
    assert finished(reports) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split() == ["contract", "address", "outcome", "target", "link", "/", "reason"]
    assert re.split(r"\s{2,}", lines[1]) == ["Token", A, "verified", "etherscan", f"https://x.example/address/{A}"]
    assert not ANSI.search(out) and all(line == line.rstrip() for line in lines)
    assert "contract_verify: 1 row, 1 verified" in err


def test_a_failed_row_exits_1_and_says_why_on_stderr(capsys):
    long_reason = "Fail - Unable to verify [bytecode differs] " + "x" * 300  # never wrapped nor cut
    reports = [
        Report("Token", A, Outcome.VERIFIED, target="etherscan"),
        Report("Vault", B, Outcome.FAILED, long_reason, target="sourcify", warnings=["partial match: metadata"]),
    ]
    assert finished(reports) == 1
    out, err = capsys.readouterr()
    rows = out.splitlines()[1:]
    assert len(rows) == 2 and rows[1].endswith(long_reason)
    assert f"ERROR: Vault {B} on sourcify: failed: {long_reason}" in err.splitlines()
    assert "WARNING: Vault: partial match: metadata" in err.splitlines()
    assert "1 verified, 1 not verified" in err


def test_nothing_submitted_is_not_a_success(capsys):
    assert finished([]) == 1


def test_with_json_the_document_alone(capsys):
    reports = [Report("Token", A, Outcome.FAILED, "bytecode differs", target="etherscan")]
    assert finished(reports, as_json=True) == 1
    out, _ = capsys.readouterr()
    document = json.loads(out)
    assert document["ok"] is False
    assert [(r["contract"], r["outcome"], r["ok"]) for r in document["reports"]] == [("Token", "failed", False)]


def test_api_errors_are_usage_errors_on_the_option_they_name():
    with pytest.raises(click.BadParameter) as raised:
        common.api_error(InvalidRequest("network", "'nonet' is unknown", "give ecosystem:network"))
    assert raised.value.exit_code == 2 and raised.value.param_hint == "--network"
    assert "'nonet' is unknown. give ecosystem:network" in raised.value.format_message()

    with pytest.raises(click.UsageError) as raised:
        common.api_error(ContractVerifyError("No recorded deployment of Token on ethereum:local"))
    assert raised.value.exit_code == 2 and "No recorded deployment" in raised.value.format_message()
    answer = click.command()(common.explorer_options()(lambda cli_ctx, explorer, as_json: 7))
    assert CliRunner().invoke(answer, [], standalone_mode=False).return_value == 7


def test_an_error_that_is_not_the_apis_is_not_hidden():
    def broken(cli_ctx, explorer, as_json):
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        CliRunner().invoke(click.command()(common.explorer_options()(broken)), [], catch_exceptions=False)


def test_the_summary_is_plain_in_a_log_even_from_a_terminal_process(monkeypatch, capsys):
    """stdout redirected (a CI log) while stderr is a terminal: the table carries no colour codes."""
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with pytest.raises(SystemExit):
        common.finish([Report("Token", A, Outcome.VERIFIED, target="etherscan")], False)
    assert not ANSI.search(sys.stdout.getvalue())
