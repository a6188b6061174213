"""cli/__init__.py's reads: `ape verify abi | source | status GUID` through click's CliRunner against a scripted
explorer on loopback (real HTTP, canned answers): what each prints, and its bad input (exit 2,
nothing sent) and the explorer's refusals (exit 1, the reason on stderr, a JSON result with --json)."""

import json

import pytest

from ape_contract_verify import cli as commands
from ape_contract_verify.cli import cli
from ape_contract_verify.protocol.answers import Texts
from support.cli import cli_runner, invoke
from support.client import ABI, source_item
from support.stub_server import ADDRESS, GUID, ok

pytestmark = pytest.mark.unit


def test_the_commands_are_the_modules():
    assert {name: cli.commands[name] for name in ("abi", "source", "status")} == {
        "abi": commands.abi,
        "source": commands.source,
        "status": commands.status,
    }


def test_abi_with_json_is_one_line(stub):
    stub.answer(ok(json.dumps(ABI)))
    result = invoke(stub, "abi", ADDRESS, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("\n") == 1 and json.loads(result.stdout) == ABI


def test_source_prints_its_settings_as_lines(stub):
    stub.answer(ok([source_item(OptimizationUsed="0", EVMVersion="Default", LicenseType="")]))
    result = invoke(stub, "source", ADDRESS)
    assert result.exit_code == 0, result.stderr
    lines = dict(line.split(":", 1) for line in result.stdout.splitlines())
    assert {key: value.strip() for key, value in lines.items()} == {
        "Contract": "Box",
        "Compiler": "v0.8.26+commit.8a97fa7a",
        "Optimizer": "disabled",
        "EVM version": "Default",
        "Licence": "Unknown",
        "Proxy": "no",
        "Source files": "1 (flat)",
    }


def test_source_paths_are_made_safe_under_the_out_dir(stub, tmp_path):
    files = {"C:\\src\\Win.sol": {"content": "w"}, "a/./b/../c.sol": {"content": "c"}, "..": {"content": "d"}}
    stub.answer(ok([source_item(SourceCode=json.dumps(files))]))
    out = tmp_path / "out"
    result = invoke(stub, "source", ADDRESS, "--out", str(out), "--json")
    assert result.exit_code == 0, result.stderr
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == ["C_/src/Win.sol", "a/b/c.sol", "settings.json", "source.sol"]
    assert json.loads(result.stdout)["written"] == [
        str(out / w) for w in ("C_/src/Win.sol", "a/b/c.sol", "source.sol")
    ] + [str(out / "settings.json")]


def test_source_of_an_unverified_contract_with_json(stub):
    stub.answer(ok([source_item(SourceCode="", ABI=Texts.NOT_VERIFIED)]))
    result = invoke(stub, "source", ADDRESS, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "ok": False,
        "reason": f"{ADDRESS}: {Texts.NOT_VERIFIED}",
        "outcome": "not verified",
    }
    assert result.stderr.startswith("ERROR: ")


@pytest.mark.parametrize(
    "args, words",
    [
        (["status", GUID, "--all-networks"], "--all-networks and --workers go without a GUID"),
        (["status", GUID, "--workers", "2"], "--all-networks and --workers go without a GUID"),
        (["status", GUID, "--interval", "0"], "--interval"),
        (["status", "not-a-guid"], "guid"),
        (["abi", "0x1234"], "address"),
    ],
)
def test_bad_input_is_exit_2_and_nothing_is_sent(stub, args, words):
    result = invoke(stub, *args)
    assert result.exit_code == 2, result.stdout
    assert words in result.stderr and "Traceback" not in result.stderr
    assert stub.seen == []


def test_status_of_a_guid_prints_the_outcome(stub):
    stub.answer(ok(Texts.PASS))
    result = invoke(stub, "status", GUID, "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert (document["ok"], document["guid"], document["outcome"]) == (True, GUID, "verified")
    assert stub.seen[0].params["action"] == "checkverifystatus" and stub.seen[0].params["guid"] == GUID


def test_status_proxy_on_sourcify_is_the_explorer_saying_no_not_a_traceback():
    """Sourcify links no proxies, so it has no proxy-link outcome to ask: exit 1 with the reason
    (as `ape verify proxy` there), and a JSON result with --json."""
    runner = cli_runner()
    where = ["--target", "sourcify", "--network", "ethereum:sepolia"]
    result = runner.invoke(cli, ["status", GUID, "--proxy", *where, "--json"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception  # no AttributeError
    assert json.loads(result.stdout) == {
        "ok": False,
        "reason": f"{GUID}: sourcify has no proxy-link action, so no proxy-link outcome; ask without --proxy",
        "error": "ActionNotSupported",
    }
    assert result.stderr.startswith(f"ERROR: {GUID}: sourcify has no proxy-link action")
