"""`ape verify abi | source | status` through click's CliRunner against a real local HTTP server;
and where requests go (URL, chain id, key precedence) without connecting to any node."""

import json

import click
import pytest

from ape_contract_verify.cli import ExplorerChoice, cli
from ape_contract_verify.client.targets import ETHERSCAN_V2_URL, normalize_url, resolve_api_key, resolve_target
from ape_contract_verify.config import ContractVerifyConfig, ExplorerConfig
from ape_contract_verify.exceptions import ExplorerNotConfigured, InvalidRequest
from support.cli import cli_runner, invoke
from support.client import ABI, Texts, source_item
from support.stub_server import ADDRESS, GUID, IMPL, Drop, Http, notok, ok


def invoke_real(stub, *args):
    """The same through the installed `ape` executable: one smoke test per command goes this way."""
    import subprocess
    from types import SimpleNamespace

    from support import BIN, tool_env

    proc = subprocess.run(
        [str(BIN / "ape"), "verify", *args, "--explorer-url", stub.url],
        capture_output=True,
        text=True,
        timeout=120,
        env=tool_env(),
    )
    return SimpleNamespace(exit_code=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)


def assert_clean_usage_error(result, *words):
    assert result.exit_code == 2, result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    for word in words:
        assert word in result.stderr


# -- abi ------------------------------------------------------------------------------------------


def test_abi_prints_json(stub):
    stub.answer(ok(json.dumps(ABI)))
    result = invoke(stub, "abi", ADDRESS)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == ABI
    assert stub.seen[0].query["action"] == "getabi" and stub.seen[0].query["address"] == ADDRESS


def test_abi_unverified_exits_1_with_reason(stub):
    stub.answer(notok(Texts.NOT_VERIFIED))
    result = invoke(stub, "abi", ADDRESS, "--json")
    assert result.exit_code == 1
    assert Texts.NOT_VERIFIED in result.stderr
    assert json.loads(result.stdout) == {
        "ok": False,
        "reason": f"{ADDRESS}: {Texts.NOT_VERIFIED}",
        "outcome": "not verified",
    }


def test_several_networks_or_targets_for_a_read_are_bad_input(stub):
    two = invoke(stub, "abi", ADDRESS, "--network", "ethereum:sepolia", "--network", "ethereum:mainnet")
    assert_clean_usage_error(two, "--network", "ape verify all")
    both = invoke(
        stub, "abi", ADDRESS, "--network", "ethereum:sepolia", "--target", "etherscan", "--target", "sourcify"
    )
    assert_clean_usage_error(both, "--target", "one target")
    either = invoke(stub, "all", "--all-networks", "--network", "ethereum:sepolia")
    assert_clean_usage_error(either, "--network", "network or --all-networks, not both")
    assert stub.seen == []


def test_abi_bad_address_is_exit_2_and_sends_nothing(stub):
    result = invoke(stub, "abi", "0x1234")
    assert_clean_usage_error(result, "address", "40 hex digits")
    assert stub.seen == []


# -- source ---------------------------------------------------------------------------------------


def test_source_writes_tree_and_settings(stub, tmp_path):
    std = {
        "language": "Solidity",
        "sources": {
            "src/Box.sol": {"content": "contract Box {}"},
            "lib/oz/Ownable.sol": {"content": "abstract contract O {}"},
        },
        "settings": {"optimizer": {"enabled": True, "runs": 10000}, "evmVersion": "cancun"},
    }
    item = source_item(
        SourceCode="{" + json.dumps(std) + "}",
        ContractName="Box",
        Proxy="1",
        Implementation=IMPL,
        LicenseType="MIT",
        OptimizationUsed="1",
        Runs="10000",
        EVMVersion="cancun",
    )
    stub.answer(ok([item]))
    out = tmp_path / "box"
    result = invoke(stub, "source", ADDRESS, "--out", str(out))
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    for expected in ("Box", "v0.8.26+commit.8a97fa7a", "enabled, 10000 runs", "cancun", "MIT", IMPL):
        assert expected in text
    assert (out / "src/Box.sol").read_text() == "contract Box {}"
    assert (out / "lib/oz/Ownable.sol").read_text() == "abstract contract O {}"
    settings = json.loads((out / "settings.json").read_text())
    assert settings["settings"] == std["settings"]
    assert settings["contractName"] == "Box" and settings["compilerVersion"] == "v0.8.26+commit.8a97fa7a"
    assert settings["implementation"] == IMPL and settings["proxy"] is True


def test_source_paths_cannot_escape_the_out_dir(stub, tmp_path):
    files = {"../../evil.sol": {"content": "x"}, "/etc/abs.sol": {"content": "y"}}
    stub.answer(ok([source_item(SourceCode=json.dumps(files))]))
    out = tmp_path / "out"
    result = invoke(stub, "source", ADDRESS, "--out", str(out))
    assert result.exit_code == 0, result.stderr
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == ["etc/abs.sol", "evil.sol", "settings.json"]
    assert not (tmp_path / "evil.sol").exists()


def test_source_json_and_flat(stub):
    stub.answer(ok([source_item(OptimizationUsed="0")]))
    result = invoke_real(stub, "source", ADDRESS, "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] is True and document["contractName"] == "Box"
    assert document["sourceFormat"] == "flat" and document["files"] == ["Box.sol"]
    assert document["settings"]["optimizer"] == {"enabled": False, "runs": 200}


def test_source_unverified_exits_1(stub):
    stub.answer(ok([source_item(SourceCode="", ABI=Texts.NOT_VERIFIED, LicenseType="Unknown")]))
    result = invoke(stub, "source", ADDRESS)
    assert result.exit_code == 1
    assert Texts.NOT_VERIFIED in result.stderr


def test_source_refuses_a_non_empty_out_dir(stub, tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    stub.answer(ok([source_item()]))
    result = invoke(stub, "source", ADDRESS, "--out", str(tmp_path))
    assert_clean_usage_error(result, "--out", "not empty")
    assert (tmp_path / "keep.txt").read_text() == "mine"


# -- status ---------------------------------------------------------------------------------------


def test_status_wait_polls_to_success(stub):
    stub.answer(notok(Texts.PENDING), notok(Texts.PENDING), ok(Texts.PASS))
    result = invoke(stub, "status", GUID, "--wait", "--interval", "0.1", "--timeout", "10")
    assert result.exit_code == 0, result.stderr
    assert "verified: Pass - Verified" in result.stdout
    assert result.stderr.count("pending: Pending in queue") == 2
    assert stub.actions() == ["checkverifystatus"] * 3


def test_status_proxy_json(stub):
    found = Texts.PROXY_FOUND.format(proxy=ADDRESS, implementation=IMPL)
    stub.answer(ok(found))
    result = invoke(stub, "status", GUID, "--proxy", "--json")  # `status` runs real below (-v DEBUG)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "ok": True,
        "guid": GUID,
        "outcome": "verified",
        "status": "1",
        "reason": found,
    }
    assert stub.seen[0].query["action"] == "checkproxyverification"


def test_status_already_verified_is_success(stub):
    stub.answer(notok(Texts.ALREADY_VERIFIED))
    result = invoke(stub, "status", GUID)
    assert result.exit_code == 0
    assert "already verified" in result.stdout


@pytest.mark.parametrize(
    "text,outcome", [(Texts.FAIL_BYTECODE_MISMATCH, "failed"), (Texts.UNKNOWN_UID, "unknown guid")]
)
def test_status_failure_exit_1_with_reason_on_stderr(stub, text, outcome):
    stub.answer(notok(text))
    result = invoke(stub, "status", GUID, "--json")
    assert result.exit_code == 1
    assert text in result.stderr
    assert json.loads(result.stdout)["outcome"] == outcome


def test_status_wait_timeout_exit_1(stub):
    stub.default = lambda seen: notok(Texts.PENDING)
    result = invoke(stub, "status", GUID, "--wait", "--interval", "0.1", "--timeout", "0.35")
    assert result.exit_code == 1
    assert "still not final" in result.stderr
    assert 2 <= len(stub.seen) <= 5


def test_status_bad_guid_exit_2_nothing_sent(stub):
    result = invoke(stub, "status", "abc")
    assert_clean_usage_error(result, "guid", "50")
    assert stub.seen == []


def test_status_explorer_down_exit_1(stub, fast_cli):
    stub.default = lambda seen: Drop()
    result = invoke(stub, "status", GUID)
    assert result.exit_code == 1
    assert "gave up after 5 retries" in result.stderr
    assert len(stub.seen) == 6


def test_rate_limit_then_success_over_cli(stub, fast_cli):
    stub.answer(Http(429), notok(Texts.RATE_LIMIT_PER_SEC.format(n=3)), ok(Texts.PASS))
    result = invoke(stub, "status", GUID)
    assert result.exit_code == 0, result.stderr
    assert "verified" in result.stdout


# -- options: network, URL, key -------------------------------------------------------------------


def test_bad_explorer_url_and_network_are_usage_errors(stub):
    runner = cli_runner()
    result = runner.invoke(cli, ["abi", ADDRESS, "--explorer-url", "ftp://x"])
    assert_clean_usage_error(result, "--explorer-url", "http(s)")
    result = runner.invoke(cli, ["abi", ADDRESS, "--network", "nochain:nonet"])
    assert_clean_usage_error(result, "--network", "ecosystem:network")
    result = runner.invoke(cli, ["abi", ADDRESS, "--network", "ethereum:local"])
    assert_clean_usage_error(result, "ethereum:local", "--explorer-url")


def test_network_option_picks_etherscan_v2_without_connecting():
    from ape_contract_verify.cli import ExplorerChoice

    target = ExplorerChoice(network="ethereum:sepolia", api_key="k").read_target()
    assert target.url == ETHERSCAN_V2_URL and target.chain_id == 11155111 and target.sends_chain_id
    assert ExplorerChoice(network="base:mainnet").read_target().chain_id == 8453
    assert ExplorerChoice(network="sepolia").names() == ("ethereum", "sepolia", 11155111)


def test_real_ape_command_with_a_public_network_needs_no_node(stub, tmp_path):
    """`ape verify abi --network ethereum:sepolia` through the installed `ape` entry point: the
    network only picks the explorer; no provider connection is attempted (none could succeed here)."""
    import subprocess
    import sys
    from pathlib import Path

    stub.answer(ok(json.dumps(ABI)))
    ape = str(Path(sys.executable).parent / "ape")
    proc = subprocess.run(
        [ape, "verify", "abi", ADDRESS, "--network", "ethereum:sepolia", "--explorer-url", stub.url, "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ABI
    assert len(stub.seen) == 1


def test_url_precedence_and_local_network():
    config = ContractVerifyConfig(
        explorers={
            "ethereum": {
                "sepolia": ExplorerConfig(url="https://eth-sepolia.blockscout.com/api"),
                "local": ExplorerConfig(url="http://127.0.0.1:8765"),
            }
        }
    )
    assert resolve_target("ethereum", "mainnet", 1, config=config, environ={}).url == ETHERSCAN_V2_URL
    blockscout = resolve_target("ethereum", "sepolia", 11155111, config=config, environ={})
    assert blockscout.url == "https://eth-sepolia.blockscout.com/api" and not blockscout.sends_chain_id
    override = resolve_target(
        "ethereum", "sepolia", 11155111, explorer_url="http://127.0.0.1:9/api", config=config, environ={}
    )
    assert override.url == "http://127.0.0.1:9/api"
    # local: the configured URL (bare host gets /api), else None = the embedded local explorer
    assert resolve_target("ethereum", "local", config=config, environ={}).url == "http://127.0.0.1:8765/api"
    local = resolve_target("ethereum", "local", config=ContractVerifyConfig(), environ={})
    assert local.url is None and local.is_local
    with pytest.raises(ExplorerNotConfigured, match="explorers.ethereum.local.url|--explorer-url"):
        local.client()
    with pytest.raises(ExplorerNotConfigured, match="contract_verify.explorers.mychain.main.url"):
        resolve_target("mychain", "main", 999999, config=config, environ={})
    routescan = "https://api.routescan.io/v2/network/mainnet/evm/43114/etherscan/api"
    assert normalize_url(routescan) == routescan
    with pytest.raises(InvalidRequest, match="--explorer-url"):
        normalize_url("https://x/api?apikey=123")


def test_api_key_precedence():
    env = {"ETHERSCAN_API_KEY": "from-default-env", "BLOCKSCOUT_KEY": "from-explorer-env"}
    assert resolve_api_key("from-flag", "BLOCKSCOUT_KEY", "from-config", env).reveal() == "from-flag"
    assert resolve_api_key(None, "BLOCKSCOUT_KEY", "from-config", env).reveal() == "from-explorer-env"
    assert resolve_api_key(None, "MISSING", "from-config", env).reveal() == "from-default-env"
    assert resolve_api_key(None, None, "from-config", {}).reveal() == "from-config"
    assert resolve_api_key(None, None, None, {}) is None
    config = ContractVerifyConfig(
        explorers={"ethereum": {"sepolia": ExplorerConfig(api_key_env="BLOCKSCOUT_KEY", calls_per_second=1.5)}}
    )
    target = resolve_target("ethereum", "sepolia", 11155111, config=config, environ=env)
    assert target.api_key.reveal() == "from-explorer-env" and target.calls_per_second == 1.5


def test_links_of_an_explorer_on_this_machine_need_no_browser_url():
    """`ape verify serve` serves its pages beside `/api`; a public explorer's pages are elsewhere."""
    config = ContractVerifyConfig(
        explorers={
            "ethereum": {
                "local": ExplorerConfig(url="http://127.0.0.1:5005/api"),
                "sepolia": ExplorerConfig(url="https://eth-sepolia.blockscout.com/api"),
            }
        }
    )
    assert resolve_target("ethereum", "local", config=config, environ={}).browser_url == "http://127.0.0.1:5005"
    assert resolve_target("ethereum", "sepolia", 11155111, config=config, environ={}).browser_url is None
    config.explorers["ethereum"]["local"] = ExplorerConfig(
        url="http://127.0.0.1:5005/api", browser_url="http://pages.test"
    )
    assert resolve_target("ethereum", "local", config=config, environ={}).browser_url == "http://pages.test"


def test_every_command_has_the_shared_options():
    for name in ("abi", "source", "status"):
        command = cli.get_command(click.Context(cli), name)
        options = {opt for param in command.params for opt in param.opts}
        assert {"--network", "--explorer-url", "--api-key", "--verbosity", "-v", "--json"} <= options


def test_verbosity_debug_shows_the_retry_loop_in_apes_format(stub):
    """The plugin logs under Ape's `ape` logger: `-v DEBUG` shows the retry loop's debug line, in
    Ape's format; at the default level it is absent (the retry's warning is there in both)."""
    stub.answer(Http(429), ok(Texts.PASS))
    loud = invoke_real(stub, "status", GUID, "-v", "DEBUG")
    stub.answer(Http(429), ok(Texts.PASS))
    quiet = invoke(stub, "status", GUID)  # the default level, in this process: one `ape` start is enough
    assert quiet.exit_code == loud.exit_code == 0, (quiet.stderr, loud.stderr)
    assert "attempt 1 answered HTTP 429" in loud.stdout + loud.stderr, loud.stdout + loud.stderr
    assert "DEBUG: " in next(line for line in (loud.stdout + loud.stderr).splitlines() if "attempt 1 answered" in line)
    assert "attempt 1 answered" not in quiet.stdout + quiet.stderr
    assert "WARNING: " in next(line for line in (quiet.stdout + quiet.stderr).splitlines() if "retry 1/" in line)


def test_the_explorer_options_become_the_api_s_keywords():
    explorer = ExplorerChoice("n", "http://127.0.0.1:5000/api", "k", ("sourcify",))
    assert explorer.where() == {
        "targets": ("sourcify",),
        "explorer_url": "http://127.0.0.1:5000/api",
        "api_key": "k",
    }


def test_a_read_takes_one_target():
    """The API's reads take one `target`: the CLI refuses several before calling it."""
    with pytest.raises(click.BadParameter) as raised:
        ExplorerChoice("ethereum:sepolia", target_names=("etherscan", "sourcify")).read_from()
    assert raised.value.param_hint == "--target"
