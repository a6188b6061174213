"""A compiler that hangs or crashes: the service answers `Fail - Unable to verify. <why>` (status "0")
within a bound, and the worker goes on to the next job. The solc here is a stand-in executable
that answers --version like solc 0.8.26 and then hangs or dies, found the way py-solc-x finds solc."""

import time

import pytest

from ape_contract_verify.evm.chain import JsonRpcChain
from ape_contract_verify.server.runner import start_embedded
from support.service import Anvil, json_form, poll, post, solc_compile, standard_input

VERSION_ANSWER = (
    'echo "solc, the solidity compiler commandline interface"; echo "Version: 0.8.26+commit.8a97fa7a.Linux.g++"'
)


def _fake_solc(folder, body):
    folder.mkdir()
    script = folder / "solc-v0.8.26"
    script.write_text(f'#!/bin/sh\nif [ "$1" = "--version" ]; then {VERSION_ANSWER}; exit 0; fi\n{body}\n')
    script.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def deployed():
    anvil = Anvil()
    try:
        input_json = standard_input(["proxy/Box.sol"])
        out = solc_compile(input_json)["contracts"]["contracts/proxy/Box.sol"]["Box"]
        yield anvil, anvil.deploy(out["evm"]["bytecode"]["object"]), input_json
    finally:
        anvil.stop()


@pytest.mark.parametrize(
    "body, expected",
    [
        ("sleep 300", "did not finish within 3 s and was stopped"),
        ("kill -SEGV $$", "crashed (signal 11)"),
        ("echo 'internal compiler error' >&2; exit 3", "failed (exit code 3)"),
    ],
)
def test_compiler_fault_is_a_clear_fail(deployed, tmp_path, monkeypatch, body, expected):
    anvil, address, input_json = deployed
    monkeypatch.setenv("SOLCX_BINARY_PATH", str(_fake_solc(tmp_path / "solc", body)))
    monkeypatch.delenv("APE_CONTRACT_VERIFY_COMPILE_CACHE")  # a cached Box would never reach the fake solc
    with start_embedded(JsonRpcChain(anvil.url), compile_timeout=3) as explorer:
        started = time.monotonic()
        answer = post(explorer.base_url, json_form(address, input_json, "contracts/proxy/Box.sol:Box"))
        assert answer["status"] == "1", answer
        result = poll(explorer.base_url, answer["result"], timeout=60)
        assert time.monotonic() - started < 30
        assert result["status"] == "0" and result["result"].startswith("Fail - Unable to verify. "), result
        assert expected in result["result"], result["result"]
        assert "Traceback" not in result["result"]
