"""The local explorer as a `VerificationTarget` in this process: no HTTP server, no port.

`LocalTarget` asks `explorer/contract_api.py` what the HTTP face at /api would answer (the same
actions, store, job queue and engine) and reads each answer as the contract API's client does
(`protocol.answers.classify`, getsourcecode's entry as a `SourceRecord`), so its outcomes, texts
and records are the ones the explorer gives over HTTP. Safe from several threads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NoReturn

from ape_contract_verify.client.http import reason_of, still_pending
from ape_contract_verify.client.provider import ExplorerRecord, Flavour, Kind, SubmissionReceipt, VerificationTarget
from ape_contract_verify.exceptions import AddressNotFound, ExplorerError
from ape_contract_verify.explorer import contract_api
from ape_contract_verify.json_types import JsonValue
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome, classify
from ape_contract_verify.protocol.forms import validate_proxy_form, validate_read_form, validate_request
from ape_contract_verify.request import Receipt, VerificationRequest

if TYPE_CHECKING:
    from ape_contract_verify.explorer.embedded import EmbeddedExplorer


class LocalTarget(VerificationTarget):
    """The embedded local explorer of a chain, asked in process (kind etherscan, flavour local)."""

    kind = Kind.ETHERSCAN
    flavour = Flavour.LOCAL
    base_url = ""  # no URL: nothing listens

    def __init__(self, explorer: EmbeddedExplorer, **_: object):
        self.explorer = explorer  # the run's `health` is not kept: an in-process target does not go down

    def __repr__(self) -> str:
        return f"LocalTarget({self.explorer!r})"

    def _call(self, method: str, action: str, fields: Mapping[str, str]) -> ExplorerAnswer:
        params = {"module": "contract", "action": action, **fields}
        status, result = contract_api.answer(self.explorer.service, params, method)
        envelope = json.loads(contract_api.envelope(status, result))  # as a client reads it, to the byte
        return classify(str(envelope["status"]), str(envelope["message"]), envelope["result"])

    # -- VerificationTarget ----------------------------------------------------------------------

    def verify_source_code(self, request: VerificationRequest) -> SubmissionReceipt:
        return self._submit("verifysourcecode", validate_request(request), request.address, proxy=False)

    def verify_proxy(self, address: str, expected_implementation: str | None = None) -> SubmissionReceipt:
        form = validate_proxy_form({"address": address, "expectedimplementation": expected_implementation})
        return self._submit("verifyproxycontract", form, form["address"], proxy=True)

    def wait(
        self,
        receipt: Receipt,
        interval: float = 5.0,
        timeout: float = 300.0,
        on_progress: Callable[[ExplorerAnswer], None] | None = None,
        fresh: bool = True,
    ) -> ExplorerAnswer:
        """Until the job's final answer, woken as jobs end (no polling); VerificationTimeout at `timeout`."""
        answer = receipt.answer if isinstance(receipt, SubmissionReceipt) else None
        if not receipt.guid:
            if answer is not None:
                return answer
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
                later = f"check later with `ape verify status {receipt.guid}{' --proxy' if receipt.proxy else ''}`"
                raise still_pending(receipt.address, "still not final", timeout, answer, later)
            runner.wait_for_an_end(seen, min(left, max(interval, 0.05)))

    def job_status(self, guid: str, proxy: bool = False) -> ExplorerAnswer:
        action = "checkproxyverification" if proxy else "checkverifystatus"
        answer = self._call("GET", action, {"guid": guid})
        if answer.outcome == Outcome.ERROR:
            self._raise_for(answer, action, guid)
        return answer

    def contract_record(self, address: str, full: bool = True) -> ExplorerRecord:
        from ape_contract_verify.client.etherscan import SourceRecord

        address = validate_read_form({"address": address})
        answer = self._call("GET", "getsourcecode", {"address": address})
        item = answer.result[0] if answer.status == "1" and isinstance(answer.result, list) else None
        if not isinstance(item, dict):
            self._raise_for(answer, "getsourcecode", address)
        return SourceRecord.from_result(address, item)

    def get_abi(self, address: str) -> list[JsonValue]:
        address = validate_read_form({"address": address})
        answer = self._call("GET", "getabi", {"address": address})
        if answer.outcome == Outcome.NOT_VERIFIED or answer.status != "1":
            self._raise_for(answer, "getabi", address)
        abi = json.loads(answer.reason)
        return abi if isinstance(abi, list) else []

    def link(self, address: str) -> str | None:
        return None  # no pages without a server: `ape verify serve` serves them

    # -- as the contract API's client reads answers ----------------------------------------------

    def _submit(self, action: str, form: dict[str, str], address: str, proxy: bool) -> SubmissionReceipt:
        answer = self._call("POST", action, form)
        if answer.outcome == Outcome.ALREADY_VERIFIED:
            return SubmissionReceipt(guid="", address=address, proxy=proxy, answer=answer)
        if answer.status == "1" and answer.reason.strip():
            return SubmissionReceipt(guid=answer.reason.strip(), address=address, proxy=proxy, answer=answer)
        if answer.outcome == Outcome.NOT_FOUND:  # in process: nothing to wait for to be indexed
            raise AddressNotFound(
                f"{address}: {answer.reason} (waited 0s for the explorer to index it)", answer, reason=reason_of(answer)
            )
        self._raise_for(answer, action, address)

    def _raise_for(self, answer: ExplorerAnswer, action: str, subject: str) -> NoReturn:
        from ape_contract_verify.client.etherscan import answer_error

        raise answer_error(answer, action, subject, answer.reason or f"status {answer.status} {answer.message}")
