"""The local explorer as a `VerificationTarget` in this process: no HTTP server, no port.

`LocalTarget` is the contract API's client (`client/etherscan.ExplorerClient`) with its one
exchange answered in process: it asks `explorer/contract_api.py` what the HTTP face at /api would
answer (the same actions, store, job queue and engine), and every answer is read by the client's
own code, so its outcomes, texts, records and errors are the ones the explorer gives over HTTP.
A job is awaited by the client's own `wait`, its sleeps woken as the queue ends jobs. It links to no page (the seam's default):
there are no pages without a server (`ape verify serve` serves them). Safe from several threads.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ape_contract_verify.client.etherscan import ExplorerClient
from ape_contract_verify.client.provider import Flavour
from ape_contract_verify.explorer import contract_api
from ape_contract_verify.protocol.answers import ExplorerAnswer, classify

if TYPE_CHECKING:
    from ape_contract_verify.explorer.contract_api import EmbeddedExplorer


class LocalTarget(ExplorerClient):
    """The embedded local explorer of a chain, asked in process (kind etherscan, flavour local)."""

    _queued = False  # no check is pointless: each wait ends when a job does

    def __init__(self, explorer: EmbeddedExplorer, **_: object):
        # No URL (nothing listens), nothing to wait for to be indexed; the run's `health` is not
        # kept: an in-process target does not go down.
        super().__init__("", flavour=Flavour.LOCAL, not_indexed_timeout=0, sleep=self._until_a_job_ends)
        self.explorer = explorer
        self._seen = threading.local()  # getattr: a thread-local has `ended` only on threads that checked

    def __repr__(self) -> str:
        return f"LocalTarget({self.explorer!r})"

    def _call(self, method: str, action: str, params: Mapping[str, str]) -> ExplorerAnswer:
        fields = {"module": "contract", "action": action, **params}
        status, result = contract_api.answer(self.explorer, fields, method)
        envelope = json.loads(contract_api.envelope(status, result))  # as a client reads it, to the byte
        return classify(str(envelope["status"]), str(envelope["message"]), envelope["result"])

    def job_status(self, guid: str, proxy: bool = False) -> ExplorerAnswer:
        self._seen.ended = self.explorer.runner.jobs_ended  # what `_until_a_job_ends` waits past
        return super().job_status(guid, proxy)

    def _until_a_job_ends(self, seconds: float) -> None:
        """The client's `wait` sleeps until a job ends after this thread's last check (no polling);
        at once before its first check."""
        self.explorer.runner.wait_for_an_end(getattr(self._seen, "ended", -1), seconds)
