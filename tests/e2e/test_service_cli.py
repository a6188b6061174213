"""`ape verify serve` as a user runs it: keys, start-up texts, clean Ctrl-C, and clear errors."""

import os
import socket
import subprocess
import time

from ape_contract_verify.protocol.answers import Texts
from support.service import ADDRESS_A, REPO, VENV_BIN, Anvil, ServerProcess, free_port, get, post

KEYS = ("serve-key-one-7Qx", "serve-key-two-9Lp")


def _run_serve(*args, timeout=60):
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))
    return subprocess.run(
        [str(VENV_BIN / "ape"), "verify", "serve", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_serve_with_keys_needs_them_for_submissions_and_never_prints_them(tmp_path):
    anvil = Anvil()
    server = None
    try:
        extra = ("--api-key", KEYS[0], "--api-key", KEYS[1])
        server = ServerProcess(anvil.url, tmp_path / "db.sqlite", use_ape=True, extra=extra)
        assert "2 API key(s) configured: submissions need one of them; reads need none." in server.lines
        base = server.base_url
        proxy = {"module": "contract", "action": "verifyproxycontract", "address": ADDRESS_A}
        assert post(base, proxy)["result"] == Texts.INVALID_API_KEY
        assert post(base + "?apikey=nope", proxy)["result"] == Texts.INVALID_API_KEY
        # The key in the query string (where access logs would show it) and in the form.
        assert post(f"{base}?apikey={KEYS[1]}", proxy)["result"] == Texts.UNABLE_TO_LOCATE.format(address=ADDRESS_A)
        assert post(base, {**proxy, "apikey": KEYS[0]})["result"] == Texts.UNABLE_TO_LOCATE.format(address=ADDRESS_A)
        assert get(base, action="getabi", address=ADDRESS_A)["result"] == Texts.NOT_VERIFIED  # reads: no key
        server.stop()  # SIGINT, as Ctrl-C
        assert server.proc.returncode in (0, 130), server.lines  # 130: the conventional exit after Ctrl-C
        output = "\n".join(server.lines)
        assert "Traceback" not in output
        for key in KEYS:
            assert key not in output
            for path in tmp_path.iterdir():
                assert key.encode() not in path.read_bytes()
    finally:
        if server is not None:
            server.stop()
        anvil.stop()


def test_serve_explains_an_unreachable_node_without_showing_the_url_path():
    port = free_port()
    out = _run_serve("--rpc", f"http://127.0.0.1:{port}/v2/secret-rpc-key-123")
    text = out.stdout + out.stderr
    assert out.returncode != 0
    assert f"Cannot read the chain id from --rpc http://127.0.0.1:{port}: the node at" in text
    assert "secret-rpc-key-123" not in text
    assert "Traceback" not in text


def test_default_database_is_per_chain_instance(tmp_path, monkeypatch):
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.server.runner import _genesis_hash, default_db_path

    hashes = set()
    for _ in range(2):  # anvil's genesis carries its start time (whole seconds): a restart is a new chain
        anvil = Anvil()
        try:
            hashes.add(_genesis_hash(JsonRpcChain(anvil.url)))
        finally:
            anvil.stop()
        time.sleep(1.1)
    assert len(hashes) == 2 and all(h.startswith("0x") for h in hashes)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("APE_DATA_FOLDER", raising=False)
    paths = {default_db_path(31337, h) for h in hashes}
    assert len(paths) == 2 and all(p.parent == tmp_path / ".ape" / "contract_verify" for p in paths)


def test_serve_explains_a_busy_port(tmp_path):
    anvil = Anvil()
    try:
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen()
            port = busy.getsockname()[1]
            out = _run_serve("--rpc", anvil.url, "--port", str(port), "--db", str(tmp_path / "db.sqlite"))
        assert out.returncode != 0
        assert f"Cannot listen on 127.0.0.1:{port}" in out.stdout + out.stderr
        assert "Traceback" not in out.stdout + out.stderr
    finally:
        anvil.stop()
