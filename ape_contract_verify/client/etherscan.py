"""One typed client for the contract API: six actions, envelope parsing, and the explorer's creation records.

Everything that reads from or submits to an Etherscan-style explorer goes through `ExplorerClient`,
a `VerificationTarget` on `client/http.py`'s `HttpTarget` (retries, polling, transport options).

- Reads and checks are GET; submissions are POST form bodies (module/action/chainid also ride in
  the query, as Etherscan V2 clients do; the key only in the body for POSTs).
- Faults (connection errors, timeouts, HTTP 429/5xx, non-JSON bodies, rate-limit answers) are retried
  with bounded exponential backoff and jitter; a rate-limit answer also pauses every thread sharing
  the explorer's limiter. Rate limits are never reported as verification failures.
- A submission the explorer answers with "already verified" is a success: it returns a
  `SubmissionReceipt` with `guid == ""` and `answer.outcome == Outcome.ALREADY_VERIFIED`, and
  `wait()` returns that answer at once. So re-submitting after a lost response never fails.
- `Unable to locate ContractCode` on a submission is retried for `not_indexed_timeout` seconds:
  a fresh deployment may not be indexed yet.
- The API key is held in an `ApiKey` and redacted from every log line (ours and urllib3's),
  exception and repr.
- `creation_records`: an explorer's record of a contract's creation, where the node has none.
  Explorers index every creation with their own tracers, so they know a factory's child's creation
  code when a hosted node refuses traces: `getcontractcreation`'s `creationBytecode` (Etherscan API
  V2, recent Blockscouts), and Blockscout's REST API's `creation_bytecode`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlencode, urlsplit, urlunsplit

from ape_contract_verify.client.http import HttpTarget, reason_of
from ape_contract_verify.client.provider import ExplorerRecord, Flavour, Kind, SubmissionReceipt
from ape_contract_verify.evm.reads import CreationRecord
from ape_contract_verify.exceptions import (
    AddressNotFound,
    BadEndpoint,
    ContractNotVerified,
    ExplorerError,
    ExplorerRefused,
    InvalidApiKey,
    VerificationRejected,
)
from ape_contract_verify.json_types import JsonMapping, JsonObject, JsonValue, as_object
from ape_contract_verify.logs import CLIENT, get_logger
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome, classify, is_bad_endpoint
from ape_contract_verify.protocol.forms import validate_address, validate_guid, validate_proxy_form, validate_request
from ape_contract_verify.protocol.inputs import unwrap_json_source
from ape_contract_verify.protocol.secrets import redact
from ape_contract_verify.protocol.values import hex_to_bytes
from ape_contract_verify.retry import Retry

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ape_contract_verify.client.http import Transport
    from ape_contract_verify.request import Receipt, VerificationRequest

logger = get_logger(CLIENT)
CHECKS = {False: "checkverifystatus", True: "checkproxyverification"}


# ---------------------------------------------------------------------------------------------
# Typed results


@dataclass(frozen=True)
class SourceRecord(ExplorerRecord):
    """getsourcecode's entry as what the explorer holds (the type every target answers with), with
    SourceCode unpacked into files + settings, and the raw fields no other target has."""

    source_code: str = ""
    library: str = ""
    swarm_source: str = ""

    @classmethod
    def from_result(cls, address: str, item: Mapping[str, JsonValue]) -> SourceRecord:
        def text(key: str) -> str:
            value = item.get(key)
            return "" if value is None else str(value)

        source, abi_text, runs, proxy = (
            text("SourceCode"),
            text("ABI"),
            text("Runs").strip(),
            text("Proxy").strip() == "1",
        )
        verified = bool(source.strip()) and not abi_text.strip().lower().startswith("contract source code not verified")
        try:
            abi: JsonValue = json.loads(abi_text) if verified else []
        except json.JSONDecodeError:
            abi = []
        record = cls(
            address,
            verified,
            name=text("ContractName"),
            compiler=text("CompilerVersion"),
            language="Vyper" if text("CompilerVersion").lower().startswith("vyper") else "Solidity",
            abi=abi if isinstance(abi, list) else [],
            constructor_arguments=text("ConstructorArguments"),
            license=text("LicenseType"),
            optimization_used=text("OptimizationUsed").strip() in ("1", "true", "True"),
            runs=int(runs) if runs.isdigit() else 0,
            evm_version=text("EVMVersion"),
            proxy=proxy,
            implementation=text("Implementation").strip() if proxy else "",
            source_code=source,
            library=text("Library"),
            swarm_source=text("SwarmSource"),
        )
        source_format, files, settings = unpack_source(record, item)
        return dataclasses.replace(record, source_format=source_format, files=files, settings=settings)


def unpack_source(record: SourceRecord, item: Mapping[str, JsonValue]) -> tuple[str, dict[str, str], JsonObject]:
    """The three SourceCode shapes: flat text, a JSON object of files, `{{standard-json}}`."""
    text = record.source_code.strip()
    settings: JsonObject = {"optimizer": {"enabled": record.optimization_used, "runs": record.runs}}
    if record.evm_version and record.evm_version.lower() != "default":
        settings["evmVersion"] = record.evm_version
    libraries: dict[str, JsonValue] = {}
    for name, colon, address in (part.rpartition(":") for part in record.library.replace(",", ";").split(";")):
        if colon:  # the Library field: `Name:0xaddr;Other:0xaddr`
            libraries[name.strip()] = "0x" + address.strip().removeprefix("0x")
    if libraries:
        settings["libraries"] = {"": libraries}
    if not text:
        return "flat", {}, settings

    candidate = unwrap_json_source(text).strip()
    if candidate.startswith("{"):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("sources"), dict):
            files = {path: str(as_object(src).get("content", "")) for path, src in data["sources"].items()}
            return "standard-json", files, dict(as_object(data.get("settings")))
        if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
            files = {path: str(src.get("content", "")) for path, src in data.items()}
            return "files", files, settings
    suffix = ".vy" if record.language == "Vyper" else ".sol"
    name = record.name.rsplit(":", 1)[-1] or "Contract"
    # Blockscout names the main file and lists the others under AdditionalSources.
    main = str(item.get("FileName") or "").strip() or f"{name}{suffix}"
    files = {main: record.source_code}
    extras = item.get("AdditionalSources")
    for extra in extras if isinstance(extras, list) else []:
        if isinstance(extra, dict) and extra.get("Filename"):
            files[str(extra["Filename"])] = str(extra.get("SourceCode") or "")
    return "flat" if len(files) == 1 else "files", files, settings


class ExplorerClient(HttpTarget[ExplorerAnswer]):
    """A client for one explorer base URL (e.g. `https://api.etherscan.io/v2/api` + chain id): a
    `VerificationTarget` of kind etherscan. `flavour` (etherscan, blockscout, routescan, local)
    is whose server it is, as the target's configuration says."""

    kind = Kind.ETHERSCAN
    _first_wait_cap = 4.0
    _queued = True
    _hint = "; lower contract_verify.calls_per_second or use an API key"

    def __init__(
        self,
        base_url: str,
        *,
        chain_id: int | None = None,
        chain_id_param: str = "chainid",  # Etherscan V2 names it `chainid`; Blockscout's Pro API `chain_id`
        flavour: Flavour | str = Flavour.ETHERSCAN,
        **options: Unpack[Transport],
    ):
        super().__init__(base_url.rstrip("/"), **options)
        self.chain_id, self.chain_id_param, self.flavour = chain_id, chain_id_param, Flavour(flavour)

    # -- the six actions ----------------------------------------------------------------------

    def get_abi(self, address: str) -> list[JsonValue]:
        """The contract's ABI. Raises ContractNotVerified for an unverified address."""
        address = validate_address(address)
        answer = self._call("GET", "getabi", {"address": address})
        if answer.outcome == Outcome.NOT_VERIFIED or (answer.status == "1" and not answer.reason.strip()):
            raise ContractNotVerified(
                f"{address}: {redact(answer.reason) or 'no ABI returned'}", answer, reason=reason_of(answer)
            )
        if answer.status != "1":
            self._raise_for(answer, "getabi", address)
        try:
            abi = json.loads(answer.reason)
        except json.JSONDecodeError:
            abi = None
        if not isinstance(abi, list):
            what = f"getabi: the result is not ABI JSON (a list): {redact(answer.reason[:80])!r}"
            raise ExplorerError(what, answer, reason=reason_of(answer))
        return abi

    def contract_record(self, address: str, full: bool = True) -> ExplorerRecord:
        """What the explorer holds for `address`, whatever `full`: every getsourcecode field, as a
        `SourceRecord`; `verified` False when nothing (an unverified address is answered with
        status "1", or with status "0" and the not-verified text)."""
        address = validate_address(address)
        answer = self._call("GET", "getsourcecode", {"address": address})
        if answer.status != "1" and answer.outcome == Outcome.NOT_VERIFIED:
            return ExplorerRecord(address, verified=False)
        if answer.status != "1":
            self._raise_for(answer, "getsourcecode", address)
        result = answer.result
        item = result[0] if isinstance(result, list) and result else result
        if not isinstance(item, Mapping):
            raise ExplorerError(
                "getsourcecode: the result is not a list with one object", answer, reason=reason_of(answer)
            )
        return SourceRecord.from_result(address, item)

    def get_contract_creation(self, address: str) -> JsonMapping | None:
        """getcontractcreation's entry for `address` (contractCreator, txHash, and, in Etherscan
        API V2 and Blockscout, creationBytecode), or None when the explorer has no record of it."""
        address = validate_address(address)
        answer = self._call("GET", "getcontractcreation", {"contractaddresses": address})
        if answer.status != "1":
            if "no data found" in answer.reason.lower() or answer.outcome == Outcome.NOT_VERIFIED:
                return None
            self._raise_for(answer, "getcontractcreation", address)
        for entry in answer.result if isinstance(answer.result, list) else []:
            if isinstance(entry, Mapping) and str(entry.get("contractAddress", "")).lower() == address.lower():
                return entry
        return None

    def verify_source_code(self, request: VerificationRequest) -> SubmissionReceipt:
        """Submit sources. Every parameter is validated before anything is sent."""
        form = validate_request(request)
        return self._submit("verifysourcecode", form, request.address, proxy=False)

    def verify_proxy(self, address: str, expected_implementation: str | None = None) -> SubmissionReceipt:
        form = validate_proxy_form({"address": address, "expectedimplementation": expected_implementation})
        return self._submit("verifyproxycontract", form, form["address"], proxy=True)

    def job_status(self, guid: str, proxy: bool = False) -> ExplorerAnswer:
        action, guid = CHECKS[proxy], validate_guid(guid)
        answer = self._call("GET", action, {"guid": guid})
        if answer.outcome == Outcome.ERROR:
            self._raise_for(answer, action, guid)
        return answer

    # -- creation records ----------------------------------------------------------------------

    def creation_records(self) -> Callable[[str], CreationRecord]:
        return self.creation_record

    def creation_record(self, address: str) -> CreationRecord:
        """The explorer's record of `address`'s creation; a Blockscout's REST API is also asked when
        the Etherscan-style answer has no creation bytecode."""
        name = self.name or "the explorer"
        source = f"{name}'s creation record"
        try:
            entry = self.get_contract_creation(address)
        except ExplorerError as err:
            return CreationRecord(source=source, note=f"{source} ({err.reason or err})")
        if entry is not None and (code := _code(entry.get("creationBytecode"))):
            factory = bool(str(entry.get("contractFactory") or "").strip())
            return CreationRecord(code, str(entry.get("txHash") or "") or None, factory, source)
        if self.flavour == Flavour.BLOCKSCOUT and (code := self._blockscout_creation(address)):
            return CreationRecord(code, None, True, f"{name}'s creation bytecode (REST API)")
        what = "no record of it" if entry is None else "a record without creationBytecode"
        return CreationRecord(source=source, note=f"{source} ({what})")

    def _blockscout_creation(self, address: str) -> bytes | None:
        url = blockscout_rest_url(self.base_url, address)
        if url is None:
            return None
        try:
            response = self.session.get(url, timeout=self.timeout)
            body = response.json() if response.status_code == 200 else {}
        except Exception:  # a REST API this instance may not have: the record stays unknown
            return None
        return _code(body.get("creation_bytecode")) if isinstance(body, dict) else None

    # -- internals ----------------------------------------------------------------------------

    def _pending(self, receipt: Receipt) -> tuple[str, str, str]:
        later = f"check later with `ape verify status {receipt.guid}{' --proxy' if receipt.proxy else ''}`"
        return f"{CHECKS[receipt.proxy]} for {receipt.address}", "still not final", later

    def _submit(self, action: str, form: dict[str, str], address: str, proxy: bool) -> SubmissionReceipt:
        started = self._clock()
        while True:
            answer = self._call("POST", action, form)
            if answer.outcome == Outcome.ALREADY_VERIFIED:
                logger.info("%s: %s", address, answer.reason)
                return SubmissionReceipt(guid="", address=address, proxy=proxy, answer=answer)
            if answer.status == "1" and answer.reason.strip():
                return SubmissionReceipt(guid=answer.reason.strip(), address=address, proxy=proxy, answer=answer)
            if answer.outcome == Outcome.NOT_FOUND:
                waited = self._clock() - started
                if waited + self.not_indexed_interval <= self.not_indexed_timeout:
                    logger.info(
                        "%s: not indexed yet (%s); retrying in %gs", address, answer.reason, self.not_indexed_interval
                    )
                    self._sleep(self.not_indexed_interval)
                    continue
                waited_for = f"waited {waited:.0f}s for the explorer to index it"
                raise AddressNotFound(
                    f"{address}: {redact(answer.reason)} ({waited_for})", answer, reason=reason_of(answer)
                )
            self._raise_for(answer, action, address)

    def _raise_for(self, answer: ExplorerAnswer, action: str, subject: str) -> None:
        reason = redact(answer.reason or f"status {answer.status} {answer.message}")
        at = f"{action} at {redact(self.base_url)}"
        if answer.outcome == Outcome.INVALID_KEY:
            fix = "Fix: pass --api-key, or set ETHERSCAN_API_KEY (or the explorer's api_key_env)"
            raise InvalidApiKey(f"{action}: {reason}. {fix}", answer, reason=reason_of(answer))
        if answer.outcome == Outcome.REFUSED:
            why = "this key's plan does not cover the chain; the other targets go on"
            raise ExplorerRefused(f"{at}: {reason} ({why})", answer, reason=reason_of(answer))
        if answer.outcome == Outcome.ERROR and reason and (is_bad_endpoint(reason) or "chainid" in reason.lower()):
            raise BadEndpoint(f"{at}: {reason}", answer, reason=reason_of(answer))
        raise answer_error(answer, action, subject, reason)

    def _call(self, method: str, action: str, params: Mapping[str, str]) -> ExplorerAnswer:
        """One action, with retries. Returns the classified envelope (never a rate-limit answer).
        GET sends everything in the query; POST a form, module, action and chain id also in the query."""
        query: dict[str, str] = {"module": "contract", "action": action}
        if self.chain_id is not None:
            query[self.chain_id_param] = str(self.chain_id)
        form = {**query, **params, **({"apikey": self._key.reveal()} if self._key else {})}
        query, body = (form, None) if method == "GET" else (query, form)
        if logger.isEnabledFor(logging.DEBUG):  # the form's text is built only to be shown
            shown = {k: v for k, v in (body or {}).items() if k != "sourceCode"}
            logger.debug("%s %s?%s %s", method, self.base_url, urlencode(query), redact(shown) if body else "")
        where = f"{action} at {redact(self.base_url)}"
        return self._request(method, self.base_url, action, where, params=query, data=body)

    def _read(self, code: int, body: JsonValue, delay: float | None, where: str) -> ExplorerAnswer:
        """The classified envelope (never a rate-limit answer)."""
        if code == 429:
            raise Retry(f"HTTP {code}", delay=delay)
        if code >= 400:
            raise BadEndpoint(
                f"{where}: HTTP {code}; is this the explorer's contract API base URL "
                "(e.g. https://api.etherscan.io/v2/api or https://<blockscout>/api)?"
            )
        if not isinstance(body, dict) or "status" not in body or "result" not in body:
            raise BadEndpoint(f"{where}: the answer is not a status/message/result envelope")
        answer = classify(str(body.get("status")), str(body.get("message", "")), body.get("result"))
        if answer.outcome == Outcome.RATE_LIMITED:
            raise Retry(f"rate limited: {redact(answer.reason)}", rate_limited=True, answer=answer)
        return answer


def _code(value: object) -> bytes | None:  # object: any JSON value; only a hex string is code
    if not isinstance(value, str) or not value.strip() or value.strip().lower() == "0x":
        return None
    try:
        return hex_to_bytes(value.strip())
    except ValueError:
        return None


def blockscout_rest_url(base_url: str, address: str) -> str | None:
    """`https://<instance>/api/v2/smart-contracts/{address}` for an instance's `…/api` base URL."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if not path.endswith("/api"):
        return None
    return urlunsplit((parts.scheme, parts.netloc, f"{path}/v2/smart-contracts/{address}", "", ""))


_ERRORS = {Outcome.NOT_FOUND: AddressNotFound, Outcome.NOT_VERIFIED: ContractNotVerified}


def answer_error(answer: ExplorerAnswer, action: str, subject: str, reason: str) -> ExplorerError:
    """The error for a contract-API answer that is no success, by its outcome: what every
    Etherscan-style target (over HTTP or in process) raises once its own cases are out."""
    submitted = action in ("verifysourcecode", "verifyproxycontract")
    kind = _ERRORS.get(answer.outcome, VerificationRejected if submitted else ExplorerError)
    said = subject if kind is not ExplorerError else f"{action} {subject}"
    return kind(f"{said}: {reason}", answer, reason=reason_of(answer))
