"""Serve the local explorer on uvicorn: standalone (`ape verify serve`), or on a background thread (tests, benchmarks).

Both bind 127.0.0.1 unless told otherwise. The socket is bound here, before uvicorn starts, so
the URL (and a free port, with port 0) is known the moment it is printed or returned.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.explorer.contract_api import EmbeddedExplorer
from ape_contract_verify.explorer.store import StoreOpenError
from ape_contract_verify.json_types import as_object
from ape_contract_verify.logs import SERVER, get_logger
from ape_contract_verify.server.api import create_app

if TYPE_CHECKING:
    import asyncio

    import uvicorn
    from typing_extensions import Unpack

    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.evm.reads import ChainReader
    from ape_contract_verify.explorer.contract_api import ExplorerOptions

logger = get_logger(SERVER)
DEFAULT_HOST = "127.0.0.1"
START_TIMEOUT = 15.0
HEADER_TIMEOUT = 10.0  # seconds a client has to send a request's headers
BODY_TIMEOUT = 60.0  # seconds for its body: 20 MB at about 350 kB/s


class ExplorerStartError(ContractVerifyError, RuntimeError):
    pass


def default_db_path(chain_id: int, genesis_hash: str = "") -> Path:
    """One file per chain *instance*: a restarted anvil (chain id 31337 again, new genesis) reuses the
    same addresses for other code, so its verified sources must not be served for it."""
    suffix = f"-{genesis_hash.removeprefix('0x')[:12]}" if genesis_hash else ""
    # Ape's data folder, as Ape finds it ($APE_DATA_FOLDER, else ~/.ape), without loading Ape's config.
    data = Path(os.environ.get("APE_DATA_FOLDER") or Path.home() / ".ape")
    return data / "contract_verify" / f"explorer-{chain_id}{suffix}.sqlite"


def _genesis_hash(chain: JsonRpcChain) -> str:
    try:
        block = as_object(chain.request("eth_getBlockByNumber", ["0x0", False]))
        return str(block["hash"]) if block.get("hash") else ""
    except Exception:  # a node without block 0 (pruned) still gets an explorer, keyed by chain id
        return ""


def bind(host: str = DEFAULT_HOST, port: int = 0) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that say they are TCP,
    # and without it every response waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise ExplorerStartError(f"Cannot listen on {host}:{port}: {err.strerror or err}. Pick another --port.")
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def guarded_protocol(header_timeout: float, body_timeout: float) -> type:
    """uvicorn's h11 protocol with deadlines: a request's headers must arrive within `header_timeout`
    of the connection (or of the previous answer), its body within `body_timeout` of the headers.
    uvicorn alone holds a slow client forever (it has only an idle keep-alive timeout)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _phase: str | None = None
        _timer: asyncio.TimerHandle | None = None

        # As uvicorn's own override: asyncio hands a stream protocol a Transport, not any BaseTransport.
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm("headers")

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._follow()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._follow()

        def connection_lost(self, exc: Exception | None) -> None:
            self._arm(None)
            super().connection_lost(exc)

        def _follow(self) -> None:
            state = self.conn.their_state
            if state is h11.IDLE:  # waiting for the next request's headers
                self._arm("headers")
            elif state is h11.SEND_BODY:
                self._arm("body")
            else:  # the request is all in (or the connection is ending): nothing to wait for
                self._arm(None)

        def _arm(self, phase: str | None) -> None:
            if phase == self._phase:
                return  # a deadline runs from its phase's start, not from the last byte
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._phase = phase
            if phase is not None:
                delay = header_timeout if phase == "headers" else body_timeout
                self._timer = self.loop.call_later(delay, self._expired, phase, delay)

        def _expired(self, phase: str, delay: float) -> None:
            self._timer = None
            if self.transport.is_closing():
                return
            answered = self.cycle is not None and self.cycle.response_started and phase == "body"
            if not answered and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                text = f"Request timeout: the request's {phase} did not arrive within {delay:g} s.".encode()
                self.transport.write(_raw_response(408, "Request Timeout", text))
            self.transport.close()

        def send_400_response(self, msg: str) -> None:
            self.transport.write(_raw_response(400, "Bad Request", msg.encode("ascii", "replace")))
            self.transport.close()

    return GuardedH11Protocol


def _raw_response(status: int, reason: str, text: bytes) -> bytes:
    """An answer written past h11 (the request may be incomplete); the connection closes after it."""
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"x-content-type-options: nosniff\r\nconnection: close\r\ncontent-length: {len(text)}\r\n\r\n"
    )
    return head.encode("ascii") + text


class LocalExplorer(EmbeddedExplorer):
    """An explorer served over HTTP: `.base_url` is `http://127.0.0.1:<port>/api` (Etherscan's API),
    `.sourcify_url` `http://127.0.0.1:<port>/` (Sourcify's API v2). Use as a context manager."""

    def __init__(
        self,
        chain: ChainReader,
        db_path: str | Path | None = None,
        api_keys: Iterable[str] = (),
        host: str = DEFAULT_HOST,
        port: int = 0,
        header_timeout: float = HEADER_TIMEOUT,
        body_timeout: float = BODY_TIMEOUT,
        **options: Unpack[ExplorerOptions],
    ):
        self.host = host
        self._timeouts = (header_timeout, body_timeout)
        self._sock = bind(host, port)  # first: a busy port must fail before anything is created
        self.port = self._sock.getsockname()[1]
        try:
            super().__init__(chain, db_path, api_keys, **options)
        except StoreOpenError:
            self._sock.close()
            raise
        self.app = create_app(self)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"<LocalExplorer {self.base_url} db={str(self.db_path)!r}>"

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/api"

    @property
    def sourcify_url(self) -> str:
        """The base URL Sourcify clients take (`forge --verifier sourcify --verifier-url`): it ends with /."""
        return f"{self.url}/"

    def _start_server(self) -> uvicorn.Server:
        """The job queue's workers started, and the uvicorn server that is to serve the app."""
        import uvicorn

        self.runner.start()
        # No access log: a query string can carry an apikey, and keys never go to logs.
        config = uvicorn.Config(
            self.app,
            host=self.host,
            port=self.port,
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
            http=guarded_protocol(*self._timeouts),
        )
        self._server = uvicorn.Server(config)
        return self._server

    def start(self) -> LocalExplorer:
        """Serve on a background thread; returns once the server accepts connections."""
        server = self._start_server()
        thread = self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [self._sock]}, name="local-explorer", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not server.started:
            self.stop()
            raise ExplorerStartError(f"The local explorer did not start within {START_TIMEOUT:.0f} s.")
        return self

    def serve_forever(self) -> None:
        """Serve on this thread until SIGINT/SIGTERM (standalone use)."""
        server = self._start_server()
        try:
            server.run(sockets=[self._sock])
        finally:
            self._shutdown()

    def stop(self, timeout: float = 10.0) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self._shutdown()

    def _shutdown(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass
        super().stop()

    def __enter__(self) -> LocalExplorer:  # `with start_embedded(…)`: started already
        if self._server is None:
            self.start()
        return self


def start_embedded(
    chain: ChainReader,
    db_path: str | Path | None = None,
    api_keys: Iterable[str] = (),
    **options: Unpack[ExplorerOptions],
) -> LocalExplorer:
    """Start an explorer for `chain` (a ChainReader) on 127.0.0.1 and a free port, on a background
    thread. Without `db_path` its data lives in a temporary file removed by `.stop()`."""
    return LocalExplorer(chain, db_path=db_path, api_keys=api_keys, **options).start()


def serve(
    rpc_url: str,
    host: str = DEFAULT_HOST,
    port: int = 0,
    db_path: str | Path | None = None,
    api_keys: Iterable[str] = (),
    workers: int = 1,
    echo: Callable[[str], None] = print,
    compile_timeout: float | None = None,
) -> None:
    """Standalone: an explorer for the JSON-RPC node at `rpc_url`, until interrupted."""
    from ape_contract_verify.evm.chain import JsonRpcChain

    chain = JsonRpcChain(rpc_url)
    shown_url = chain.safe_url  # hosted RPC URLs can carry a key in their path
    try:
        chain_id = int(chain.chain_id())
    except Exception as err:
        from ape_contract_verify.evm.reads import ChainError

        detail = str(err) if isinstance(err, ChainError) else type(err).__name__  # ChainError hides URL secrets
        raise ExplorerStartError(f"Cannot read the chain id from --rpc {shown_url}: {detail}")
    keys = tuple(k for k in api_keys if k)
    try:
        explorer = LocalExplorer(
            chain,
            db_path=db_path or default_db_path(chain_id, _genesis_hash(chain)),
            api_keys=keys,
            host=host,
            port=port,
            workers=workers,
            compile_timeout=compile_timeout,
        )
    except StoreOpenError as err:
        raise ExplorerStartError(f"Cannot use the database {err.path} (--db): it {err.problem}.") from None
    echo(f"Local explorer for chain {chain_id} at {shown_url}")
    if host not in ("127.0.0.1", "localhost", "::1"):
        echo(f"Warning: listening on {host}, not only on this machine's loopback.")
    echo(f"Database: {explorer.db_path}")
    if keys:
        echo(f"{len(keys)} API key(s) configured: submissions need one of them; reads need none.")
    else:
        echo("No API key configured: submissions are accepted without a key (as Blockscout does).")
    pending = explorer.store.count("pending") + explorer.store.count("running")
    if pending:
        echo(f"{pending} submission(s) from an earlier run are queued again.")
    echo(f"Sourcify API: {explorer.sourcify_url}")
    echo(f"Base URL: {explorer.base_url}")
    sys.stdout.flush()
    explorer.serve_forever()


def main(argv: list[str] | None = None) -> int:
    """`python -m ape_contract_verify.server.runner --rpc URL …`, the same as `ape verify serve`."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ape_contract_verify.server.runner")
    # Each option's dest is `serve`'s parameter.
    parser.add_argument(
        "--rpc", dest="rpc_url", required=True, help="JSON-RPC URL of the node, e.g. http://127.0.0.1:8545"
    )
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--db", dest="db_path", default=None)
    parser.add_argument("--api-key", dest="api_keys", action="append", default=[])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--compile-timeout", type=float, default=None, help="seconds per compile (default 120)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        serve(**vars(args), echo=lambda s: print(s, flush=True))
    except ExplorerStartError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
