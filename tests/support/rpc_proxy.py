"""A hosted node's limits, in front of a real node: a JSON-RPC proxy on 127.0.0.1 (real HTTP).

It refuses the methods hosted plans refuse (`trace_*`, `debug_*`, `ots_*`, `parity_*`) with
-32601 "the method … does not exist/is not available", and, as `rate_limit_every=N`, answers HTTP
429 to one request in N (as providers do past their plan's rate). Everything else goes to the
node unchanged; batches are split so each call gets its own answer.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler
from typing import Any

import requests

from support.loopback import LoopbackServer, reply

REFUSED_PREFIXES = ("trace_", "debug_", "ots_", "parity_")
# web3 retries a 429 only for the methods of its allowlist; Ape's connect asks this one outside it,
# so a 429 there fails Ape's command before any plugin runs. The limit spares it, not the plugin's reads.
UNRETRIED_BY_WEB3 = ("web3_clientVersion",)
# Where each state method takes its block; a pruning node refuses those older than its kept state.
STATE_BLOCK_PARAM = {
    "eth_getCode": 1,
    "eth_getStorageAt": 2,
    "eth_getBalance": 1,
    "eth_getTransactionCount": 1,
    "eth_call": 1,
    "eth_getProof": 2,
}


def refusal(call: dict) -> dict:
    method = str(call.get("method", ""))
    return {
        "jsonrpc": "2.0",
        "id": call.get("id"),
        "error": {"code": -32601, "message": f"the method {method} does not exist/is not available"},
    }


class HostedNodeProxy:
    """`url` is the proxy's; `calls` counts every method asked, `refused` the refused ones, and
    `limited` how many requests got a 429."""

    def __init__(
        self,
        upstream: str,
        rate_limit_every: int | None = None,
        rate_limit_code: int | None = None,
        state_blocks: int | None = None,
    ):
        """`rate_limit_code` (-32005, -32029): the limit as a JSON-RPC error in a 200, not a 429.
        `state_blocks`: a node that prunes, keeping only the last N blocks' state (geth keeps 128):
        older state is refused as geth refuses it; `pruned` counts those refusals."""
        self.upstream = upstream
        self.state_blocks = state_blocks
        self.pruned = 0
        self.rate_limit_every = rate_limit_every
        self.rate_limit_code = rate_limit_code
        self.calls: Counter = Counter()
        self.refused: Counter = Counter()
        self.limited = 0
        self._requests = 0
        self._lock = threading.Lock()
        self._local = threading.local()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                status, body = proxy._answer(raw)
                reply(self, status, json.dumps(body).encode())

        self.server = LoopbackServer(Handler)
        self.url = f"http://127.0.0.1:{self.server.port}"
        self._thread = self.server.start("rpc-proxy")

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    def _answer(self, raw: bytes) -> tuple[int, Any]:
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
        calls = body if isinstance(body, list) else [body]
        with self._lock:
            self._requests += 1
            for call in calls:
                self.calls[str(call.get("method", ""))] += 1
            handshake = all(str(call.get("method", "")) in UNRETRIED_BY_WEB3 for call in calls)
            if self.rate_limit_every and not handshake and self._requests % self.rate_limit_every == 0:
                self.limited += 1
                code = self.rate_limit_code or 429
                error = {
                    "jsonrpc": "2.0",
                    "id": calls[0].get("id"),
                    "error": {"code": code, "message": "Too Many Requests"},
                }
                if isinstance(body, list):
                    error = [{**error, "id": call.get("id")} for call in calls]
                return (200 if self.rate_limit_code else 429), error
        answers: dict[int, Any] = {}
        forward = []
        for index, call in enumerate(calls):
            if str(call.get("method", "")).startswith(REFUSED_PREFIXES):
                with self._lock:
                    self.refused[call["method"]] += 1
                answers[index] = refusal(call)
            elif self._pruned(call):
                with self._lock:
                    self.pruned += 1
                error = {
                    "code": -32000,
                    "message": "missing trie node 0000000000000000000000000000000000000000000000000000000000000000 (path ) <nil>",
                }
                answers[index] = {"jsonrpc": "2.0", "id": call.get("id"), "error": error}
            else:
                forward.append((index, call))
        if forward:
            payload = [c for _, c in forward] if isinstance(body, list) else forward[0][1]
            result = self._session().post(self.upstream, json=payload, timeout=120).json()
            results = result if isinstance(result, list) else [result]
            by_id = {json.dumps(r.get("id")): r for r in results if isinstance(r, dict)}
            for (index, call), answer in zip(forward, results):  # a batch may come back in any order
                answers[index] = by_id.get(json.dumps(call.get("id")), answer)
        ordered = [answers[i] for i in range(len(calls))]
        return 200, ordered if isinstance(body, list) else ordered[0]

    def _pruned(self, call: dict) -> bool:
        """Whether a pruning node has dropped the state this call asks for."""
        index = STATE_BLOCK_PARAM.get(str(call.get("method", "")))
        params = call.get("params") or []
        if self.state_blocks is None or index is None or len(params) <= index:
            return False
        block = params[index]
        if not (isinstance(block, str) and block.startswith("0x")):
            return False  # "latest", "pending", a block hash object: current state
        latest = int(
            self._session()
            .post(
                self.upstream, json={"jsonrpc": "2.0", "id": 0, "method": "eth_blockNumber", "params": []}, timeout=30
            )
            .json()["result"],
            16,
        )
        return int(block, 16) < latest - self.state_blocks

    def stop(self) -> None:
        self.server.stop(self._thread)
