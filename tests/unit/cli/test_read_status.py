"""cli/__init__.py: `ape verify status` without a GUID prints what `api.status` read, without a chain
(the API's answer is given): the table on stdout, one row per line, plain in a log; why each row
fails on stderr (ERROR where it counts, WARNING where not); the exit code; and its bad input."""

import json
import re

import pytest

from ape_contract_verify import api
from ape_contract_verify.cli import cli
from ape_contract_verify.workflow.status import (
    NOT_VERIFIED,
    VERIFIED,
    Row,
    StatusView,
    TargetStatus,
)
from support.cli import cli_runner

pytestmark = pytest.mark.unit

A = "0x" + "ab" * 20
B = "0x" + "cd" * 20
NET = "ethereum:sepolia"


def view(required=None) -> StatusView:
    token = Row(NET, "Token", A)
    token.targets = {
        "etherscan": TargetStatus("etherscan", "etherscan", VERIFIED, label="etherscan"),
        "sourcify": TargetStatus("sourcify", "sourcify", VERIFIED, match="partial", label="sourcify"),
    }
    vault = Row(NET, "Vault", B)
    vault.targets = {
        "etherscan": TargetStatus("etherscan", "etherscan", VERIFIED, label="etherscan"),
        "sourcify": TargetStatus("sourcify", "sourcify", NOT_VERIFIED, reason="no match", label="sourcify"),
    }
    return StatusView([token, vault], required)


@pytest.fixture
def answered(monkeypatch):
    """`api.status` answers with the view set here, and records what it was asked."""
    asked: dict = {}
    state = {"view": view()}

    def status(networks, **kwargs):
        asked.update(kwargs, networks=networks)
        return state["view"]

    monkeypatch.setattr(api, "status", status)
    return state, asked


def run(*args):
    runner = cli_runner()
    return runner.invoke(cli, ["status", *args], catch_exceptions=False)


def test_the_table_and_exit_1_when_a_target_that_counts_is_not_verified(answered):
    state, asked = answered
    result = run("--network", NET, "--target", "etherscan", "--target", "sourcify")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["contract", "address", "proxy", "etherscan", "sourcify"]
    assert [re.split(r"\s{2,}", line) for line in lines[1:]] == [
        ["Token", A, "-", "verified", "verified (partial)"],
        ["Vault", B, "-", "verified", "NOT VERIFIED"],
    ]
    assert "\x1b[" not in result.stdout
    assert f"ERROR: Vault {B} on sourcify ({NET}): not verified: no match" in result.stderr.splitlines()
    assert asked["networks"] == (NET,) and asked["targets"] == ("etherscan", "sourcify")


def test_a_target_that_does_not_count_warns_and_exits_0(answered):
    state, _ = answered
    state["view"] = view(required=["etherscan"])
    result = run("--network", NET)
    assert result.exit_code == 0
    assert f"WARNING: Vault {B} on sourcify ({NET}): not verified: no match" in result.stderr.splitlines()
    assert "ERROR" not in result.stderr


def test_json_is_the_document_and_the_reasons_still_go_to_stderr(answered):
    result = run("--network", NET, "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False and [r["contract"] for r in document["rows"]] == ["Token", "Vault"]
    assert document["rows"][1]["targets"]["sourcify"]["state"] == NOT_VERIFIED
    assert "ERROR: Vault" in result.stderr


def test_a_network_and_all_networks_together_are_bad_input(monkeypatch):
    def no_connection(network=None):  # the API's own check comes first: nothing is read
        raise AssertionError(f"connected to {network!r}: the input was not refused first")

    monkeypatch.setattr(api, "connected", no_connection)
    result = run("--network", NET, "--all-networks")
    assert result.exit_code == 2 and "--network" in result.stderr
    assert "network or --all-networks, not both" in result.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (["--proxy"], "--proxy go with a GUID"),
        (["--wait", "--timeout", "5"], "--wait, --timeout go with a GUID"),
        (["--workers", "11"], "--workers"),  # 1 to 10: a client keeps 10 connections
    ],
)
def test_options_of_a_guid_without_one_are_bad_input(answered, args, words):
    _, asked = answered
    result = run(*args)
    assert result.exit_code == 2 and words in result.stderr
    assert "Traceback" not in result.stderr and asked == {}


def test_the_status_table_keeps_long_cells_whole_and_styles_only_on_a_terminal():
    long_name = "VeryLongContractName" * 8
    row = Row(NET, long_name, A, proxy="EIP-1967", implementation=B)
    row.targets = {"etherscan": TargetStatus("etherscan", "etherscan", NOT_VERIFIED, label="etherscan")}
    plain = StatusView([row]).table()
    assert plain.splitlines()[1].startswith(long_name + "  " + A)
    assert "\x1b[" not in plain
    styled = StatusView([row]).table(styled=True)
    assert "\x1b[31mNOT VERIFIED" in styled  # red: it counts as not done
    assert re.sub(r"\x1b\[[0-9;]*m", "", styled).splitlines()[1].rstrip() == plain.splitlines()[1]
