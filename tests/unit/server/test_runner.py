"""server/runner.py: where the explorer keeps its data, binding its socket (a busy port named),
the explorer object's URLs and clean-up, `serve`'s start-up lines and refusals (the node faked),
the command line, and the request deadlines of its HTTP protocol (driven with a fake transport)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ape_contract_verify.explorer.store import SOURCE, Store, StoreOpenError
from ape_contract_verify.server import runner
from ape_contract_verify.server.runner import ExplorerStartError, LocalExplorer
from support.service import ADDRESS_A, FakeChain, FakeEngine

pytestmark = pytest.mark.unit


def explorer(**options) -> LocalExplorer:
    chain = FakeChain()
    return LocalExplorer(chain, engine=FakeEngine(chain), **options)


# -- places ----------------------------------------------------------------------------------------


def test_each_chain_instance_has_its_own_database(monkeypatch, tmp_path):
    monkeypatch.setattr(Path, "home", lambda: tmp_path)
    monkeypatch.delenv("APE_DATA_FOLDER", raising=False)
    assert runner.default_db_path(31337) == tmp_path / ".ape" / "contract_verify" / "explorer-31337.sqlite"
    monkeypatch.setenv("APE_DATA_FOLDER", str(tmp_path / "elsewhere"))  # Ape's own setting moves it
    assert runner.default_db_path(31337) == tmp_path / "elsewhere" / "contract_verify" / "explorer-31337.sqlite"
    genesis = "0x" + "ab12" * 16
    assert runner.default_db_path(31337, genesis).name == "explorer-31337-ab12ab12ab12.sqlite"
    assert runner.default_db_path(31337, genesis) != runner.default_db_path(31337, "0x" + "cd" * 32)


def test_bind_listens_on_loopback_and_names_a_busy_port():
    first = runner.bind()
    try:
        host, port = first.getsockname()
        assert host == "127.0.0.1" and port > 0 and not first.getblocking()
        with pytest.raises(
            ExplorerStartError, match=rf"^Cannot listen on 127\.0\.0\.1:{port}: .+\. Pick another --port\.$"
        ):
            runner.bind("127.0.0.1", port)
    finally:
        first.close()


def test_bind_refuses_a_host_it_cannot_have():
    with pytest.raises(ExplorerStartError, match=r"Cannot listen on 192\.0\.2\.1:0"):
        runner.bind("192.0.2.1", 0)  # TEST-NET-1: not an address of this machine


# -- the explorer object ---------------------------------------------------------------------------


def test_an_explorer_knows_its_urls_before_it_starts_and_cleans_up():
    local = explorer(api_keys=["k"])
    try:
        assert local.url == f"http://127.0.0.1:{local.port}"
        assert local.base_url == local.url + "/api"
        assert local.sourcify_url == local.url + "/"  # Sourcify clients want the trailing slash
        assert local.requires_key and repr(local) == f"<LocalExplorer {local.base_url} db={str(local.db_path)!r}>"
        assert local.db_path.exists() and local.db_path.parent.name.startswith("ape-verify-explorer-")
        temporary = local.db_path.parent
    finally:
        local.stop()
    assert not temporary.exists()  # a temporary database goes with the explorer
    runner.bind("127.0.0.1", local.port).close()  # and so does its socket


def test_a_given_database_is_kept(tmp_path):
    local = explorer(db_path=tmp_path / "kept.sqlite")
    assert not local.requires_key
    local.stop()
    assert (tmp_path / "kept.sqlite").exists()


def test_a_database_that_cannot_be_opened_releases_the_port(tmp_path):
    probe = runner.bind()
    port = probe.getsockname()[1]  # a free port to ask for
    probe.close()
    with pytest.raises(StoreOpenError):
        explorer(db_path=tmp_path, port=port)  # a directory, not a database file
    runner.bind("127.0.0.1", port).close()


# -- serve -----------------------------------------------------------------------------------------


class FakeNode:
    """Stands in for JsonRpcChain: a URL with a key in its path, a chain id, block 0."""

    fail = False
    genesis = "0x" + "77" * 32

    def __init__(self, url: str):
        self.url = url
        self.safe_url = "https://node.example:8545"

    def chain_id(self) -> int:
        if FakeNode.fail:
            raise ConnectionError(f"cannot reach {self.url}")
        return 5

    def request(self, method: str, params: list) -> dict:
        assert method == "eth_getBlockByNumber" and params == ["0x0", False]
        return {"hash": FakeNode.genesis}

    def get_code(self, address: str) -> bytes:
        return b""


@pytest.fixture
def node(monkeypatch, tmp_path):
    from ape_contract_verify.evm import chain

    FakeNode.fail = False
    monkeypatch.setattr(chain, "JsonRpcChain", FakeNode)
    monkeypatch.setattr(Path, "home", lambda: tmp_path)
    monkeypatch.delenv("APE_DATA_FOLDER", raising=False)  # the default database under that home
    served: list[LocalExplorer] = []

    def serve_forever(self) -> None:  # no uvicorn: record, then clean up as serve_forever does
        served.append(self)
        self.stop()

    monkeypatch.setattr(LocalExplorer, "serve_forever", serve_forever)
    return served


SECRET_URL = "https://node.example:8545/v2/SECRET-KEY"


def test_serve_prints_where_everything_is_and_never_the_node_s_key(node, tmp_path):
    lines: list[str] = []
    runner.serve(SECRET_URL, echo=lines.append)
    assert len(node) == 1
    text = "\n".join(lines)
    assert "SECRET-KEY" not in text
    assert lines[0] == "Local explorer for chain 5 at https://node.example:8545"
    database = tmp_path / ".ape" / "contract_verify" / "explorer-5-777777777777.sqlite"
    assert f"Database: {database}" in lines
    assert "No API key configured: submissions are accepted without a key (as Blockscout does)." in lines
    assert lines[-2] == f"Sourcify API: {node[0].sourcify_url}" and lines[-1] == f"Base URL: {node[0].base_url}"
    assert not any(line.startswith("Warning") for line in lines)


def test_serve_says_how_many_keys_and_queued_submissions_and_warns_off_loopback(node, tmp_path):
    db = tmp_path / "given.sqlite"
    store = Store(db)
    store.add_submission(SOURCE, ADDRESS_A, {})
    store.close()
    lines: list[str] = []
    runner.serve(SECRET_URL, host="127.0.0.2", db_path=db, api_keys=["a", "", "b"], echo=lines.append)
    assert "2 API key(s) configured: submissions need one of them; reads need none." in lines
    assert "1 submission(s) from an earlier run are queued again." in lines
    assert "Warning: listening on 127.0.0.2, not only on this machine's loopback." in lines
    assert f"Database: {db}" in lines and not any("a, b" in line for line in lines)


def test_serve_refuses_a_node_it_cannot_read_without_showing_its_url(node):
    FakeNode.fail = True
    with pytest.raises(ExplorerStartError) as info:
        runner.serve(SECRET_URL, echo=lambda line: None)
    assert str(info.value) == "Cannot read the chain id from --rpc https://node.example:8545: ConnectionError"
    assert "SECRET" not in str(info.value) and node == []


def test_serve_refuses_a_database_it_cannot_open(node, tmp_path):
    with pytest.raises(ExplorerStartError, match=rf"^Cannot use the database {tmp_path} \(--db\): it .+\.$"):
        runner.serve(SECRET_URL, db_path=tmp_path, echo=lambda line: None)
    assert node == []


def test_main_answers_a_start_error_with_exit_code_2(node, capsys):
    FakeNode.fail = True
    assert runner.main(["--rpc", SECRET_URL]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ERROR: Cannot read the chain id from --rpc https://node.example:8545")
    assert "SECRET" not in err


def test_main_runs_serve_and_refuses_bad_arguments(node, capsys):
    assert runner.main(["--rpc", SECRET_URL, "--workers", "2"]) == 0
    assert node[0].runner is not None and "Base URL: " in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        runner.main([])
    assert info.value.code == 2 and "--rpc" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        runner.main(["--rpc", "x", "--port", "eighty"])
    assert "invalid int value: 'eighty'" in capsys.readouterr().err


# -- request deadlines -----------------------------------------------------------------------------


class Transport(asyncio.Transport):
    def __init__(self):
        super().__init__()
        self.written = b""
        self.closed = False
        self.protocol: asyncio.Protocol | None = None

    def get_extra_info(self, name, default=None):
        return default

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:  # as a real transport: the protocol hears of it on the next turn
        if not self.closed:
            self.closed = True
            asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def ok_app(scope, receive, send):
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def connect(header_timeout: float, body_timeout: float, data: bytes = b"") -> Transport:
    """A connection to the guarded protocol that sends `data`, then nothing, for 0.3 s."""
    import uvicorn
    from uvicorn.server import ServerState

    async def scenario() -> Transport:
        protocol_class = runner.guarded_protocol(header_timeout, body_timeout)
        config = uvicorn.Config(ok_app, lifespan="off", log_level="warning", access_log=False)
        protocol = protocol_class(config, ServerState(), {}, asyncio.get_running_loop())
        transport = Transport()
        transport.protocol = protocol
        protocol.connection_made(transport)
        if data:
            protocol.data_received(data)
        await asyncio.sleep(0.3)
        return transport

    return asyncio.run(asyncio.wait_for(scenario(), 10))


def test_headers_that_do_not_arrive_in_time_get_a_408():
    transport = connect(0.05, 10)
    assert transport.closed
    assert transport.written.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"x-content-type-options: nosniff\r\nconnection: close\r\n" in transport.written
    assert transport.written.endswith(b"\r\n\r\nRequest timeout: the request's headers did not arrive within 0.05 s.")


def test_a_body_that_does_not_arrive_in_time_gets_a_408():
    head = b"POST /api HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc"
    transport = connect(10, 0.05, head)
    assert transport.closed and transport.written.startswith(b"HTTP/1.1 408 ")
    assert transport.written.endswith(b"the request's body did not arrive within 0.05 s.")
    assert transport.written.count(b"HTTP/1.1") == 1  # the app, told of the disconnect, adds nothing


def test_a_request_in_time_is_answered_and_not_cut():
    transport = connect(10, 10, b"GET /api HTTP/1.1\r\nHost: x\r\n\r\n")
    assert transport.written.startswith(b"HTTP/1.1 200 OK\r\n") and transport.written.endswith(b"ok")
    assert b"408" not in transport.written and not transport.closed  # kept alive for the next request


def test_a_malformed_request_gets_a_plain_400_and_the_connection_closes():
    transport = connect(10, 10, b"NOT HTTP AT ALL\r\n\r\n")
    assert transport.closed and transport.written.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert b"content-type: text/plain; charset=utf-8" in transport.written
