"""The local explorer as a `VerificationTarget` in this process: no HTTP server, no port.

`LocalTarget` is the contract API's client (`client/etherscan.ExplorerClient`) with its one
exchange answered in process: it asks `explorer/contract_api.py` what the HTTP face at /api would
answer (the same actions, store, job queue and engine), and every answer is read by the client's
own code, so its outcomes, texts, records and errors are the ones the explorer gives over HTTP.
A job is awaited as the queue ends jobs, not polled. It links to no page (the seam's default):
there are no pages without a server (`ape verify serve` serves them). Safe from several threads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ape_contract_verify.client.etherscan import ExplorerClient
from ape_contract_verify.client.http import still_pending
from ape_contract_verify.client.provider import Flavour, SubmissionReceipt
from ape_contract_verify.exceptions import ExplorerError
from ape_contract_verify.explorer import contract_api
from ape_contract_verify.protocol.answers import ExplorerAnswer, classify

if TYPE_CHECKING:
    from ape_contract_verify.explorer.contract_api import EmbeddedExplorer
    from ape_contract_verify.request import Receipt


class LocalTarget(ExplorerClient):
    """The embedded local explorer of a chain, asked in process (kind etherscan, flavour local)."""

    def __init__(self, explorer: EmbeddedExplorer, **_: object):
        # No URL (nothing listens), nothing to wait for to be indexed; the run's `health` is not
        # kept: an in-process target does not go down.
        super().__init__("", flavour=Flavour.LOCAL, not_indexed_timeout=0)
        self.explorer = explorer

    def __repr__(self) -> str:
        return f"LocalTarget({self.explorer!r})"

    def _call(self, method: str, action: str, params: Mapping[str, str]) -> ExplorerAnswer:
        fields = {"module": "contract", "action": action, **params}
        status, result = contract_api.answer(self.explorer, fields, method)
        envelope = json.loads(contract_api.envelope(status, result))  # as a client reads it, to the byte
        return classify(str(envelope["status"]), str(envelope["message"]), envelope["result"])

    def wait(
        self,
        receipt: Receipt,
        interval: float = 5.0,
        timeout: float = 300.0,
        on_progress: Callable[[ExplorerAnswer], None] | None = None,
        fresh: bool = True,
    ) -> ExplorerAnswer:
        """Until the job's final answer, woken as jobs end (no polling); VerificationTimeout at `timeout`."""
        if not receipt.guid:
            if isinstance(receipt, SubmissionReceipt) and receipt.answer is not None:
                return receipt.answer
            raise ExplorerError(f"{receipt.address}: the receipt has no GUID to poll")
        runner = self.explorer.runner
        deadline = time.monotonic() + timeout
        while True:
            seen = runner.jobs_ended
            answer = self.job_status(receipt.guid, receipt.proxy)
            if on_progress is not None:
                on_progress(answer)
            if answer.outcome.is_final:
                return answer
            left = deadline - time.monotonic()
            if left <= 0:
                _, what, later = self._pending(receipt)
                raise still_pending(receipt.address, what, timeout, answer, later)
            runner.wait_for_an_end(seen, min(left, max(interval, 0.05)))
