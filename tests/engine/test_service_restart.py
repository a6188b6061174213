"""Kill -9 the standalone explorer (`ape verify serve`) with jobs queued; restart it on the same
database; every job completes and nothing is lost."""

import re

from ape_contract_verify.protocol.answers import Texts
from support import SOLC_CACHE_ENV
from support.service import Anvil, ServerProcess, encode, get, json_form, poll, post, solc_compile, standard_input

FILES = ["proxy/Box.sol", "proxy/SimpleProxy.sol"]
COPIES = 6


def test_jobs_queued_at_sigkill_complete_after_restart(tmp_path, monkeypatch):
    # The explorer's first job must compile (a second or so), so that the others are still queued
    # when it dies: not a hit in the run's compile cache, which another test may have filled.
    monkeypatch.delenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", raising=False)
    monkeypatch.delenv(SOLC_CACHE_ENV, raising=False)  # nor the shims' (the test's own compile fills it)
    anvil = Anvil()
    first = second = None
    try:
        input_json = standard_input(FILES)
        out = solc_compile(input_json)["contracts"]["contracts/proxy/SimpleProxy.sol"]["SimpleProxy"]
        implementation = "0x" + "12" * 20
        args = encode(["address", "bytes"], [implementation, b""])
        addresses = [anvil.deploy(out["evm"]["bytecode"]["object"], args) for _ in range(COPIES)]
        db = tmp_path / "explorer.sqlite"

        first = ServerProcess(anvil.url, db, use_ape=True)
        assert "No API key configured" in "\n".join(first.lines)
        assert re.match(r"^http://127\.0\.0\.1:\d+/api$", first.base_url)
        guids = []
        for address in addresses:
            answer = post(
                first.base_url, json_form(address, input_json, "contracts/proxy/SimpleProxy.sol:SimpleProxy", args)
            )
            assert answer["status"] == "1", answer
            guids.append(answer["result"])
        # The first job compiles (about a second); the last ones are still queued when the process dies.
        assert get(first.base_url, action="checkverifystatus", guid=guids[-1])["result"] == Texts.PENDING
        first.kill()  # SIGKILL: no shutdown code runs
        assert first.proc.returncode == -9

        second = ServerProcess(anvil.url, db, use_ape=True)
        requeued = [line for line in second.lines if "queued again" in line]
        assert requeued, second.lines
        assert int(requeued[0].split()[0]) >= 1
        for guid in guids:
            assert poll(second.base_url, guid, timeout=180) == {"status": "1", "message": "OK", "result": Texts.PASS}
        for address in addresses:
            assert get(second.base_url, action="getabi", address=address)["status"] == "1"
        # A submission accepted before the kill is known after it, by the same GUID.
        assert get(second.base_url, action="checkverifystatus", guid=guids[0])["result"] == Texts.PASS
    finally:
        for server in (first, second):
            if server is not None:
                server.stop()
        anvil.stop()
