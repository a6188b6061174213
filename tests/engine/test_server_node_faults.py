"""Faults of the local explorer's jobs on a real node (the fakes' cases: tests/unit/explorer/test_jobs.py):
an anvil stopped mid-job and restarted with its state (`--state`), and a node that never comes back."""

import time

from ape_contract_verify.engine.compilers import CompileCache
from ape_contract_verify.evm.chain import JsonRpcChain
from ape_contract_verify.explorer.jobs import RealEngine
from ape_contract_verify.explorer.store import RUNNING
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.retry import RetryPolicy
from ape_contract_verify.server.runner import LocalExplorer
from support.service import Anvil, get, json_form, poll, post, solc_compile, standard_input, wait_until

CHAIN_TEXT_START = (
    "Fail - Unable to verify. This could be a temporary error, please retry or contact us (Error Code 10001): "
)


MATH = ["math/MathLib.sol"]
TOKEN_FILES = ["token/Token.sol", "token/ERC20Base.sol", "access/Ownable.sol"]


def _explorer(anvil, tmp_path, retry):
    chain = JsonRpcChain(anvil.url)
    explorer = LocalExplorer(
        chain,
        db_path=tmp_path / "explorer.sqlite",
        engine=RealEngine(chain, cache=CompileCache(directory=tmp_path / "cache")),
    )
    explorer.runner.chain_retry = retry
    explorer.runner.idle_poll = 0.05
    return explorer.start()


def _deploy_token(anvil):
    from support.service import encode

    token_input = standard_input(TOKEN_FILES)
    out = solc_compile(token_input)["contracts"]["contracts/token/Token.sol"]["Token"]
    args = encode(
        ["string", "string", "uint256", "address", "address[]"],
        ["Demo", "DMO", 1000, anvil.accounts[0], [anvil.accounts[1]]],
    )
    return anvil.deploy(out["evm"]["bytecode"]["object"], args), token_input, args


def test_a_node_stopped_mid_job_and_restarted_with_its_state_ends_verified(tmp_path):
    state = tmp_path / "anvil-state.json"
    anvil = Anvil(extra=("--state", str(state)))
    restarted = explorer = None
    try:
        address, token_input, args = _deploy_token(anvil)
        # A fresh compile cache: the compile takes long enough for the node to go while it runs.
        explorer = _explorer(anvil, tmp_path, RetryPolicy(max_retries=40, base_delay=0.2, max_delay=0.5, jitter=False))
        form = json_form(address, token_input, "contracts/token/Token.sol:Token", args)
        guid = post(explorer.base_url, form)["result"]
        assert wait_until(lambda: explorer.store.get_submission(guid).state == RUNNING, timeout=30, interval=0.01)
        anvil.stop()  # SIGTERM: anvil writes its state and exits
        assert state.exists()
        assert wait_until(lambda: explorer.store.get_submission(guid).chain_failures >= 1, timeout=60)
        waiting = get(explorer.base_url, action="checkverifystatus", guid=guid)
        assert waiting["result"] == Texts.PENDING, waiting
        restarted = Anvil(port=anvil.port, extra=("--state", str(state)))
        answer = poll(explorer.base_url, guid, timeout=120)
        assert answer == {"status": "1", "message": "OK", "result": Texts.PASS}, answer
        source = get(explorer.base_url, action="getsourcecode", address=address)["result"][0]
        assert source["ContractName"] == "Token" and source["ConstructorArguments"] == args.hex()
    finally:
        if explorer is not None:
            explorer.stop()
        for node in (anvil, restarted):
            if node is not None:
                node.stop()


def test_a_node_that_never_comes_back_ends_the_job_with_one_text(tmp_path):
    from support.service import solc_compile as compile_

    anvil = Anvil()
    explorer = None
    try:
        lib_input = standard_input(MATH)
        out = compile_(lib_input)["contracts"]["contracts/math/MathLib.sol"]["MathLib"]
        address = anvil.deploy(out["evm"]["bytecode"]["object"])
        explorer = _explorer(anvil, tmp_path, RetryPolicy(max_retries=2, base_delay=0.2, max_delay=0.4, jitter=False))
        # Submitted while the node is up (a submission reads the address's code), then the node goes:
        # the first job mid-compile (a fresh cache), the second before its first read.
        guids = [
            post(explorer.base_url, json_form(address, lib_input, "contracts/math/MathLib.sol:MathLib"))["result"]
            for _ in range(2)
        ]
        anvil.stop()
        started = time.monotonic()
        answers = [poll(explorer.base_url, guid, timeout=30) for guid in guids]
        assert time.monotonic() - started < 20
    finally:
        if explorer is not None:
            explorer.stop()
        anvil.stop()
    texts = {answer["result"] for answer in answers}
    assert len(texts) == 1, texts  # one cause, one text
    text = texts.pop()
    assert text.startswith(CHAIN_TEXT_START) and "in 3 tries over 1 s" in text, text
    assert f"the node at http://127.0.0.1:{anvil.port} did not answer eth_getCode" in text
    assert all(answer["status"] == "0" for answer in answers)
