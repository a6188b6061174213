"""evm/chain.py's fork replay (`ForkReplayer`): anvil found (env, PATH), and the fork driven against a stand-in anvil (a small
JSON-RPC server on loopback that records what it is asked): the node URL never in argv nor in an
error, a call traced once per transaction, a block replayed up to the transaction in a snapshot,
one process reset from block to block, and a process that will not start said in words."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from ape_contract_verify.evm.chain import ANVIL_ENV, ForkReplayer, ForkUnavailable, find_anvil

pytestmark = pytest.mark.unit

NODE = "https://eth-sepolia.example/v2/SECRET-KEY-1234"
FACTORY = "0x" + "fa" * 20
CHILD = "0x" + "c1" * 20

# The stand-in: answers what ForkReplayer asks; `test_asked` and `test_argv` report back.
STAND_IN = """
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer

port = int(sys.argv[sys.argv.index("--port") + 1])
asked = []
answers = {
    "eth_chainId": "0x539",
    "evm_snapshot": "0x1",
    "eth_sendTransaction": "0x" + "11" * 32,
}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, params = body["method"], body["params"]
        if not method.startswith("test_"):
            asked.append([method, params])
        reply = {"result": answers.get(method)}
        if method == "anvil_reset" and "refuse" in params[0]["forking"]["jsonRpcUrl"]:
            reply = {"error": {"code": -32603, "message": "could not fork " + params[0]["forking"]["jsonRpcUrl"]}}
        elif method == "test_asked":
            reply = {"result": asked}
        elif method == "test_argv":
            reply = {"result": sys.argv[1:]}
        elif method == "debug_traceCall":
            # the first transaction of a block creates; later ones only when replayed
            reply = {"result": {"type": "CALL", "from": params[0]["from"], "to": params[0].get("to")}}
        elif method == "debug_traceTransaction":
            reply = {"result": {"type": "CALL", "calls": [{"type": "CREATE", "to": "%CHILD%"}]}}
        data = json.dumps({"jsonrpc": "2.0", "id": body["id"], **reply}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def executable(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def stand_in(tmp_path) -> str:
    return executable(tmp_path / "anvil", f"#!{sys.executable}\n" + STAND_IN.replace("%CHILD%", CHILD))


def tx(n: int, **extra: object) -> dict[str, object]:
    return {
        "hash": f"0x{n:064x}",
        "from": "0x" + "ee" * 20,
        "to": FACTORY,
        "input": "0x12",
        "gas": "0x5208",
        "nonce": hex(n),
        **extra,
    }


def creates(frame: object) -> bool:
    return isinstance(frame, dict) and any(c.get("type") == "CREATE" for c in frame.get("calls", []))


def test_find_anvil_from_the_environment(tmp_path, monkeypatch):
    anvil = executable(tmp_path / "my-anvil", "#!/bin/sh\n")
    monkeypatch.setenv(ANVIL_ENV, anvil)
    assert find_anvil() == anvil
    monkeypatch.setenv(ANVIL_ENV, str(tmp_path / "missing"))
    assert find_anvil() is None  # a named anvil that is not there is not replaced by another


def test_find_anvil_on_path(tmp_path, monkeypatch):
    monkeypatch.delenv(ANVIL_ENV, raising=False)
    anvil = executable(tmp_path / "anvil", "#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    assert find_anvil() == anvil


def test_no_anvil_is_said_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv(ANVIL_ENV, str(tmp_path / "missing"))
    replayer = ForkReplayer(NODE)
    with pytest.raises(ForkUnavailable, match=f"anvil was not found.*{ANVIL_ENV}"):
        replayer.trace(5, [tx(0)], 0, creates)
    assert replayer.forks_started == 0 and repr(replayer) == "ForkReplayer()"


def test_an_anvil_that_cannot_run_or_start(tmp_path):
    not_executable = tmp_path / "anvil"
    not_executable.write_text("")
    with pytest.raises(ForkUnavailable, match="anvil could not run"):
        ForkReplayer(NODE, anvil=str(not_executable)).trace(5, [tx(0)], 0, creates)
    dying = executable(tmp_path / "dying", "#!/bin/sh\necho 'error: unexpected argument' >&2\nexit 2\n")
    with pytest.raises(ForkUnavailable) as info:
        ForkReplayer(NODE, anvil=dying, startup_timeout=20).trace(5, [tx(0)], 0, creates)
    assert str(info.value) == "anvil did not start: error: unexpected argument"


def test_the_node_url_is_never_in_argv_nor_in_errors(stand_in):
    replayer = ForkReplayer(NODE + "/refuse", anvil=stand_in, startup_timeout=20, timeout=10)
    try:
        with pytest.raises(ForkUnavailable) as info:
            replayer.trace(5, [tx(0)], 0, creates)
        assert str(info.value) == "anvil could not fork the node at block 4"
        assert "SECRET" not in str(info.value) and "SECRET" not in repr(replayer)
    finally:
        replayer.close()
    replayer = ForkReplayer(NODE, anvil=stand_in, startup_timeout=20, timeout=10)
    try:
        replayer.trace(5, [tx(0)], 0, creates)
        assert replayer.proc is not None
        argv = replayer.call("test_argv")
        assert isinstance(argv, list) and "--accounts" in argv and not any("SECRET" in str(a) for a in argv)
    finally:
        replayer.close()


def test_a_trace_a_replay_and_one_process_from_block_to_block(stand_in):
    replayer = ForkReplayer(NODE, anvil=stand_in, startup_timeout=20, timeout=10)
    try:
        first = replayer.trace(5, [tx(0)], 0, creates)
        assert first == {"type": "CALL", "from": "0x" + "ee" * 20, "to": FACTORY}
        assert replayer.trace(5, [tx(0)], 0, creates) is first  # kept: asked once
        # The second transaction's call does not create: the block is replayed up to it.
        txs = [tx(0), tx(1, value="0x5")]
        replayed = replayer.trace(5, txs, 1, creates)
        assert creates(replayed)
        process = replayer.proc
        assert process is not None
        asked = replayer.call("test_asked")
        assert isinstance(asked, list)
        methods = [m for m, _ in asked]
        assert methods == [
            "eth_chainId",
            "anvil_reset",
            "debug_traceCall",
            "debug_traceCall",
            "evm_snapshot",
            "anvil_impersonateAccount",
            "eth_sendTransaction",
            "anvil_impersonateAccount",
            "eth_sendTransaction",
            "evm_mine",
            "debug_traceTransaction",
            "evm_revert",
        ]
        reset = asked[1][1][0]["forking"]
        assert reset == {"jsonRpcUrl": NODE, "blockNumber": 4}  # the state before block 5
        sent = asked[8][1][0]
        assert sent["nonce"] == "0x1" and sent["value"] == "0x5" and sent["to"] == FACTORY
        assert "value" not in asked[6][1][0]  # a zero value is not sent
        # Another block: the same process, reset.
        replayer.trace(9, [tx(7)], 0, creates)
        assert replayer.proc is process
        assert replayer.forks_started == 2
    finally:
        replayer.close()
    assert process.poll() is not None and replayer.proc is None
