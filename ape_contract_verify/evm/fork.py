"""Creation frames without the node's trace API: the transaction replayed on a local fork.

Hosted nodes refuse `debug_*` and `trace_*`, so a factory's child has no creation input there.
anvil (from the toolchain, or `anvil` on PATH) forks the node at the block before the
transaction, which needs only `eth_*` reads of that block's state (a non-archive node keeps recent
blocks' state: the deploy hook replays right after the deploy). There the transaction is traced
with a call (`debug_traceCall`) and, when that does not create the address (an earlier transaction
of the same block changed the factory's state), the block's transactions up to it are sent again
and the one asked for is traced (`debug_traceTransaction`).

Bounded: one anvil process per reader, forked at one block at a time (reused for every address of
that block, reset to the next block's); it starts within `startup_timeout`, each call ends within
`timeout`; it is killed on `close()` and at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ape_contract_verify.evm.reads import ChainError
from ape_contract_verify.json_types import JsonValue

ANVIL_ENV = "APE_CONTRACT_VERIFY_ANVIL"


class ForkUnavailable(ChainError):
    """No replay on a fork: why, in words for the summary (no URL, no secrets)."""


def find_anvil() -> str | None:
    """anvil: `$APE_CONTRACT_VERIFY_ANVIL`, else on PATH, else the project toolchain's."""
    explicit = os.environ.get(ANVIL_ENV)
    if explicit:
        return explicit if Path(explicit).is_file() else None
    found = shutil.which("anvil")
    if found:
        return found
    for base in (Path.cwd(), *Path(__file__).resolve().parents):
        candidate = base / "toolchain" / "node_modules" / ".bin" / "anvil"
        if candidate.is_file():
            return str(candidate)
    return None


# Every fork process still running, held strongly: a reader dropped without close() leaves its
# fork here, and exit kills it.
_running: set[subprocess.Popen[bytes]] = set()
_running_lock = threading.Lock()


@atexit.register
def _kill_all() -> None:
    with _running_lock:
        processes = list(_running)
        _running.clear()
    for proc in processes:
        if proc.poll() is None:
            proc.kill()


def _call_of(tx: Mapping[str, object]) -> dict[str, object]:
    """The transaction as a call: who, to whom, what, how much, with how much gas."""
    value = tx.get("value")
    call = {
        "from": tx.get("from"),
        "to": tx.get("to") or None,  # none for a deployment
        "data": tx.get("input") or tx.get("data") or "0x",
        "gas": tx.get("gas"),
        "value": None if value in ("0x0", 0) else value,
    }
    return {k: v for k, v in call.items() if v is not None}


class ForkReplayer:
    """Replays a block's transactions on a local fork of `node_url` and traces them (callTracer):
    one anvil process (`proc`, at `url`), forked at one `block` at a time."""

    # Class defaults: __del__ reads `proc` even when __init__ did not run to the end.
    proc: subprocess.Popen[bytes] | None = None
    block: int | None = None

    def __init__(self, node_url: str, anvil: str | None = None, startup_timeout: float = 30.0, timeout: float = 60.0):
        self.node_url = node_url
        self.anvil = anvil
        self.startup_timeout = startup_timeout
        self.timeout = timeout
        self._lock = threading.Lock()
        self._traces: dict[str, JsonValue] = {}  # tx hash -> its call frame, replayed once
        self.forks_started = 0

    def __repr__(self) -> str:
        return "ForkReplayer()"

    def trace(
        self, block: int, txs: list[Mapping[str, object]], index: int, creates: Callable[[JsonValue], bool]
    ) -> JsonValue:
        """The callTracer frame of `txs[index]` (full transaction objects of `block`, in order):
        traced as a call on the state before the block; when that frame does not satisfy
        `creates`, and earlier transactions of the block may have changed the state it ran on,
        the block is replayed up to it. The frame is as the fork answered it: callers check its shape."""
        tx_hash = str(txs[index].get("hash", "")).lower()
        with self._lock:
            if tx_hash and tx_hash in self._traces:
                return self._traces[tx_hash]
            self._fork_at(max(block - 1, 0))
            frame = self.call("debug_traceCall", _call_of(txs[index]), "latest", {"tracer": "callTracer"})
            if index and not creates(frame):
                frame = self._replay(txs, index)
            if tx_hash:
                self._traces[tx_hash] = frame
            return frame

    def _replay(self, txs: list[Mapping[str, object]], index: int) -> JsonValue:
        snapshot = self.call("evm_snapshot")
        try:
            local: JsonValue = None
            for tx in txs[: index + 1]:
                self.call("anvil_impersonateAccount", tx.get("from"))
                call = _call_of(tx)
                call["nonce"] = tx.get("nonce")
                local = self.call("eth_sendTransaction", call)
            self.call("evm_mine")
            return self.call("debug_traceTransaction", local, {"tracer": "callTracer"})
        finally:
            self.call("evm_revert", snapshot)

    def _fork_at(self, block: int) -> None:
        """The process forked at `block`: the running one reset, else a new one started."""
        if self.proc is not None and self.proc.poll() is not None:
            self._stop()
        if self.proc is None:
            self._start()
        if self.block != block:
            try:
                self.call("anvil_reset", {"forking": {"jsonRpcUrl": self.node_url, "blockNumber": block}})
            except ForkUnavailable as err:
                # anvil's error may quote the URL: say what failed without it.
                detail = "" if self.node_url in str(err) else f" ({err})"
                raise ForkUnavailable(f"anvil could not fork the node at block {block}{detail}") from None
            self.block = block
            self.forks_started += 1

    def _start(self) -> None:
        import requests

        anvil = self.anvil or find_anvil()
        if not anvil:
            raise ForkUnavailable(f"anvil was not found (install Foundry, or set {ANVIL_ENV})")
        with socket.socket() as sock:  # a free port
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        self.url, self.block, self.session = f"http://127.0.0.1:{port}", None, requests.Session()
        # The node URL goes by JSON-RPC (anvil_reset), not argv: hosted URLs carry the API key, and
        # anyone on the machine can read a process's arguments. No dev accounts: a fork reads each
        # one's state from the node at every reset (four reads each, ten accounts), and the replay
        # impersonates the real senders.
        try:
            proc = self.proc = subprocess.Popen(
                [anvil, "--host", "127.0.0.1", "--port", str(port), "--silent", "--no-mining", "--accounts", "0"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except OSError as err:
            raise ForkUnavailable(f"anvil could not run ({anvil}: {err.strerror or type(err).__name__})") from None
        with _running_lock:
            _running.add(proc)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                self.call("eth_chainId")
                return
            except ForkUnavailable:
                if proc.poll() is not None:
                    said = proc.stderr.read() if proc.stderr else b""
                    detail = said.decode(errors="replace").strip().splitlines()
                    self._stop()
                    raise ForkUnavailable("anvil did not start" + (f": {detail[-1][:200]}" if detail else ""))
                if time.monotonic() > deadline:
                    self._stop()
                    raise ForkUnavailable(f"anvil did not start within {self.startup_timeout:g} s")
                time.sleep(0.05)

    def call(self, method: str, *params: object) -> JsonValue:
        """One JSON-RPC call to the fork; ForkUnavailable when it fails."""
        import requests

        try:
            body: JsonValue = self.session.post(
                self.url,
                json={"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)},
                timeout=self.timeout,
            ).json()
        except (requests.RequestException, ValueError) as err:
            raise ForkUnavailable(f"the fork did not answer {method}: {type(err).__name__}") from None
        if not isinstance(body, dict):
            raise ForkUnavailable(f"the fork answered {method} with an unexpected body")
        if error := body.get("error"):
            raise ForkUnavailable(
                f"the fork refused {method}: {error.get('message') if isinstance(error, dict) else error}"
            )
        return body.get("result")

    def _stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with _running_lock:
            _running.discard(proc)
        self.session.close()
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()

    def __del__(self) -> None:  # a reader dropped without close(): its fork ends with it
        self._stop()

    def close(self) -> None:
        with self._lock:
            self._stop()
