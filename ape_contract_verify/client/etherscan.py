"""One typed client for the contract API: six actions, envelope parsing, retries, polling.

Everything that reads from or submits to an explorer goes through `ExplorerClient`.

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
"""

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode

import requests

from ape_contract_verify.client.health import TargetHealth, lost_job
from ape_contract_verify.client.provider import ETHERSCAN, ExplorerRecord, SubmissionReceipt
from ape_contract_verify.client.ratelimit import RateLimiter, limiter_for
from ape_contract_verify.client.retrying import gave_up, reason_of, retry_after, send, still_pending
from ape_contract_verify.exceptions import (
    AddressNotFound,
    BadEndpoint,
    ContractNotVerified,
    ExplorerError,
    ExplorerRefused,
    InvalidApiKey,
    TargetDown,
    VerificationRejected,
)
from ape_contract_verify.json_types import JsonMapping, JsonObject, JsonValue
from ape_contract_verify.logs import CLIENT, get_logger
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome, classify, is_bad_endpoint
from ape_contract_verify.protocol.forms import (
    validate_check_form,
    validate_proxy_form,
    validate_read_form,
    validate_request,
)
from ape_contract_verify.protocol.secrets import ApiKey, redact, register_secret
from ape_contract_verify.request import Receipt, VerificationRequest
from ape_contract_verify.retry import JobTimes, Retry, RetryPolicy, poll_until_final, with_retries

logger = get_logger(CLIENT)


# ---------------------------------------------------------------------------------------------
# Typed results


@dataclass
class SourceRecord:
    """getsourcecode's result, every field typed, with SourceCode unpacked into files + settings."""

    address: str
    source_code: str
    abi: str
    contract_name: str
    compiler_version: str
    optimization_used: bool
    runs: int
    constructor_arguments: str
    evm_version: str
    library: str
    license_type: str
    proxy: bool
    implementation: str
    swarm_source: str
    files: dict[str, str] = field(default_factory=dict)
    settings: JsonObject = field(default_factory=dict)
    source_format: str = "flat"  # flat | files | standard-json
    language: str = "Solidity"
    raw: JsonObject = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return bool(self.source_code.strip()) and not self.abi.strip().lower().startswith(
            "contract source code not verified"
        )

    @property
    def abi_list(self) -> list[JsonValue]:
        """The ABI; raises JSONDecodeError for text that is not JSON, returns [] for JSON that is no list."""
        abi: JsonValue = json.loads(self.abi) if self.verified else []
        return abi if isinstance(abi, list) else []

    def explorer_record(self) -> ExplorerRecord:
        """This getsourcecode entry as what the explorer holds, the type every target answers with."""
        if not self.verified:
            return ExplorerRecord(self.address, verified=False)
        try:
            abi = self.abi_list
        except json.JSONDecodeError:
            abi = []
        return ExplorerRecord(
            self.address,
            verified=True,
            name=self.contract_name,
            compiler=self.compiler_version,
            language=self.language,
            abi=abi if isinstance(abi, list) else [],
            files=dict(self.files),
            settings=dict(self.settings),
            source_format=self.source_format,
            constructor_arguments=self.constructor_arguments,
            license=self.license_type,
            optimization_used=self.optimization_used,
            runs=self.runs,
            evm_version=self.evm_version,
            proxy=self.proxy,
            implementation=self.implementation.strip() if self.proxy else "",
        )

    @classmethod
    def from_result(cls, address: str, item: Mapping[str, JsonValue]) -> "SourceRecord":
        def text(key: str) -> str:
            value = item.get(key)
            return "" if value is None else str(value)

        runs = text("Runs").strip()
        record = cls(
            address=address,
            source_code=text("SourceCode"),
            abi=text("ABI"),
            contract_name=text("ContractName"),
            compiler_version=text("CompilerVersion"),
            optimization_used=text("OptimizationUsed").strip() in ("1", "true", "True"),
            runs=int(runs) if runs.isdigit() else 0,
            constructor_arguments=text("ConstructorArguments"),
            evm_version=text("EVMVersion"),
            library=text("Library"),
            license_type=text("LicenseType"),
            proxy=text("Proxy").strip() == "1",
            implementation=text("Implementation"),
            swarm_source=text("SwarmSource"),
            raw=dict(item),
        )
        record.language = "Vyper" if record.compiler_version.lower().startswith("vyper") else "Solidity"
        record.source_format, record.files, record.settings = unpack_source(record)
        return record


def _parse_libraries(text: str) -> dict[str, str]:
    """`Name:0xaddr;Other:0xaddr` (Etherscan's Library field) as a mapping."""
    libraries = {}
    for part in text.replace(",", ";").split(";"):
        if ":" in part:
            name, address = part.rsplit(":", 1)
            libraries[name.strip()] = address.strip() if address.strip().startswith("0x") else "0x" + address.strip()
    return libraries


def unpack_source(record: SourceRecord) -> tuple[str, dict[str, str], JsonObject]:
    """The three SourceCode shapes: flat text, a JSON object of files, `{{standard-json}}`."""
    text = record.source_code.strip()
    settings: JsonObject = {
        "optimizer": {"enabled": record.optimization_used, "runs": record.runs},
    }
    if record.evm_version and record.evm_version.lower() != "default":
        settings["evmVersion"] = record.evm_version
    if libraries := _parse_libraries(record.library):
        settings["libraries"] = {"": dict[str, JsonValue](libraries)}
    if not text:
        return "flat", {}, settings

    candidate = text[1:-1].strip() if text.startswith("{{") and text.endswith("}}") else text
    if candidate.startswith("{"):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("sources"), dict):
            files = {path: str((src or {}).get("content", "")) for path, src in data["sources"].items()}
            return "standard-json", files, dict(data.get("settings") or {})
        if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
            files = {path: str(src.get("content", "")) for path, src in data.items()}
            return "files", files, settings
    suffix = ".vy" if record.language == "Vyper" else ".sol"
    name = record.contract_name.rsplit(":", 1)[-1] or "Contract"
    # Blockscout names the main file and lists the others under AdditionalSources.
    main = str(record.raw.get("FileName") or "").strip() or f"{name}{suffix}"
    files = {main: record.source_code}
    extras = record.raw.get("AdditionalSources")
    for extra in extras if isinstance(extras, list) else []:
        if isinstance(extra, dict) and extra.get("Filename"):
            files[str(extra["Filename"])] = str(extra.get("SourceCode") or "")
    return "flat" if len(files) == 1 else "files", files, settings


# ---------------------------------------------------------------------------------------------


class ExplorerClient:
    """A client for one explorer base URL (e.g. `https://api.etherscan.io/v2/api` + chain id): a
    `VerificationTarget` of kind `etherscan`. `flavour` (etherscan, blockscout, routescan, local)
    is whose server it is, as the target's configuration says."""

    kind = "etherscan"
    supports_proxy_link = True

    def __init__(
        self,
        base_url: str,
        api_key: ApiKey | str | None = None,
        chain_id: int | None = None,
        calls_per_second: float = 3.0,
        timeout: float | tuple[float, float] = (10.0, 30.0),
        max_retries: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 16.0,
        not_indexed_timeout: float = 90.0,
        not_indexed_interval: float = 5.0,
        session: requests.Session | None = None,
        limiter: RateLimiter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        health: TargetHealth | None = None,
        chain_id_param: str = "chainid",
        flavour: str = ETHERSCAN,
    ):
        self.base_url = base_url.rstrip("/")
        self.flavour = flavour
        self._key = api_key if isinstance(api_key, ApiKey) else (ApiKey(api_key) if api_key else None)
        if self._key:
            register_secret(self._key.reveal())
        self.chain_id = chain_id
        # Etherscan V2 names it `chainid`; Blockscout's Pro API `chain_id`.
        self.chain_id_param = chain_id_param
        self.timeout = timeout
        self.retry = RetryPolicy(max_retries=max_retries, base_delay=backoff, max_delay=max_backoff)
        self.not_indexed_timeout = not_indexed_timeout
        self.not_indexed_interval = not_indexed_interval
        self.session = session or requests.Session()
        self.limiter = limiter or limiter_for(self.base_url, calls_per_second)
        self.health = health  # the run's record of whether this target answers (shared by its workers)
        self._sleep = health.sleeper(sleep) if health is not None else sleep
        self._clock = clock
        self._rng = rng or random.Random()
        self._jobs_lock = threading.Lock()
        self._job_times = JobTimes()
        self._in_flight: dict[str, dict[object, float]] = {}

    def __repr__(self) -> str:
        key = repr(self._key) if self._key else "None"
        return f"ExplorerClient({redact(self.base_url)!r}, chain_id={self.chain_id}, api_key={key})"

    # -- the six actions ----------------------------------------------------------------------

    def get_abi(self, address: str) -> list[JsonValue]:
        """The contract's ABI. Raises ContractNotVerified for an unverified address."""
        address = validate_read_form({"address": address})
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
            raise ExplorerError(
                f"getabi: the result is not ABI JSON: {redact(answer.reason[:80])!r}", answer, reason=reason_of(answer)
            ) from None
        if not isinstance(abi, list):
            raise ExplorerError("getabi: the result is not a JSON list", answer, reason=reason_of(answer))
        return abi

    def get_source_code(self, address: str) -> SourceRecord:
        """Every getsourcecode field. An unverified address gives a record with `verified == False`
        (the explorer answers it with status "1")."""
        address = validate_read_form({"address": address})
        answer = self._call("GET", "getsourcecode", {"address": address})
        if answer.status != "1":
            if answer.outcome == Outcome.NOT_VERIFIED:
                raise ContractNotVerified(f"{address}: {redact(answer.reason)}", answer, reason=reason_of(answer))
            self._raise_for(answer, "getsourcecode", address)
        result = answer.result
        item = result[0] if isinstance(result, list) and result else result
        if not isinstance(item, Mapping):
            raise ExplorerError(
                "getsourcecode: the result is not a list with one object", answer, reason=reason_of(answer)
            )
        return SourceRecord.from_result(address, item)

    def contract_record(self, address: str) -> ExplorerRecord:
        """What the explorer holds for `address` (getsourcecode); `verified` False when nothing."""
        try:
            return self.get_source_code(address).explorer_record()
        except ContractNotVerified:
            return ExplorerRecord(validate_read_form({"address": address}), verified=False)

    def link(self, address: str) -> str | None:
        """None: an Etherscan-style API's pages are the target's (`Target.contract_url`)."""
        return None

    def get_contract_creation(self, address: str) -> JsonMapping | None:
        """getcontractcreation's entry for `address` (contractCreator, txHash, and, in Etherscan
        API V2 and Blockscout, creationBytecode), or None when the explorer has no record of it."""
        address = validate_read_form({"address": address})
        answer = self._call("GET", "getcontractcreation", {"contractaddresses": address})
        if answer.status != "1":
            if "no data found" in answer.reason.lower() or answer.outcome == Outcome.NOT_VERIFIED:
                return None
            self._raise_for(answer, "getcontractcreation", address)
        entries = answer.result if isinstance(answer.result, list) else []
        return next(
            (
                e
                for e in entries
                if isinstance(e, Mapping) and str(e.get("contractAddress", "")).lower() == address.lower()
            ),
            None,
        )

    def verify_source_code(self, request: VerificationRequest) -> SubmissionReceipt:
        """Submit sources. Every parameter is validated before anything is sent."""
        form = validate_request(request)
        return self._submit("verifysourcecode", form, request.address, proxy=False)

    def check_verify_status(self, guid: str) -> ExplorerAnswer:
        return self._check("checkverifystatus", validate_check_form({"guid": guid}))

    def verify_proxy(self, address: str, expected_implementation: str | None = None) -> SubmissionReceipt:
        form = validate_proxy_form({"address": address, "expectedimplementation": expected_implementation})
        return self._submit("verifyproxycontract", form, form["address"], proxy=True)

    def check_proxy_verification(self, guid: str) -> ExplorerAnswer:
        return self._check("checkproxyverification", validate_check_form({"guid": guid}))

    def wait(
        self,
        receipt: Receipt,
        interval: float = 5.0,
        timeout: float = 300.0,
        on_progress: Callable[[ExplorerAnswer], None] | None = None,
        fresh: bool = True,
    ) -> ExplorerAnswer:
        """Poll until a final answer, at most `timeout` seconds. Raises VerificationTimeout.

        `fresh`: the receipt was just submitted (the first check waits, see below); False for a
        GUID from earlier, checked at once."""
        answer = receipt.answer if isinstance(receipt, SubmissionReceipt) else None
        if not receipt.guid:
            if answer is not None:
                return answer
            raise ExplorerError(f"{receipt.address}: the receipt has no GUID to poll")
        action = "checkproxyverification" if receipt.proxy else "checkverifystatus"
        started = self._clock()
        ticket = object()
        with self._jobs_lock:
            self._in_flight.setdefault(action, {})[ticket] = started
        try:
            return self._poll(receipt, action, started, interval, timeout, on_progress, fresh, ticket)
        except TargetDown as err:
            raise lost_job(err, receipt.guid, receipt.proxy, self.health.name if self.health else "") from None
        finally:
            with self._jobs_lock:
                self._in_flight[action].pop(ticket, None)

    def _poll(
        self,
        receipt: Receipt,
        action: str,
        started: float,
        interval: float,
        timeout: float,
        on_progress: Callable[[ExplorerAnswer], None] | None,
        fresh: bool,
        ticket: object,
    ) -> ExplorerAnswer:
        def timed_out(last: ExplorerAnswer | None) -> Exception:
            later = f"check later with `ape verify status {receipt.guid}{' --proxy' if receipt.proxy else ''}`"
            return still_pending(receipt.address, "still not final", timeout, last, later)

        typical = self._job_times.typical(action)
        answer, checks = poll_until_final(
            lambda: self._check(action, receipt.guid),
            is_final=lambda answer: answer.outcome.is_final,
            timed_out=timed_out,
            label=f"{action} for {receipt.address}",
            started=started,
            interval=interval,
            timeout=timeout,
            clock=self._clock,
            sleep=self._sleep,
            first_wait=(interval if typical is None else min(typical, interval * 4)) if fresh else None,
            not_yet=(lambda: self._seconds_until_due(action, ticket, started, interval)) if fresh else None,
            on_progress=on_progress,
            health=self.health,
        )
        if fresh:
            self._job_times.learn(action, self._clock() - started, checks == 1)
        return answer

    # -- internals ----------------------------------------------------------------------------

    def _seconds_until_due(self, action: str, ticket: object, started: float, interval: float) -> float:
        """How long a check of this job is still pointless. Before any job here has ended, a job
        submitted after one that is still pending is taken to be pending too (explorers work
        through their queue in order), so a batch polls its oldest job, not every job."""
        typical = self._job_times.typical(action)
        if typical is not None:
            return started + min(typical, interval * 4) - self._clock()
        with self._jobs_lock:
            older = any(t < started for k, t in self._in_flight.get(action, {}).items() if k is not ticket)
        return interval if older else 0.0

    def _check(self, action: str, guid: str) -> ExplorerAnswer:
        answer = self._call("GET", action, {"guid": guid})
        if answer.outcome == Outcome.ERROR:
            self._raise_for(answer, action, guid)
        return answer

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
                raise AddressNotFound(
                    f"{address}: {redact(answer.reason)} (waited {waited:.0f}s for the explorer to index it)",
                    answer,
                    reason=reason_of(answer),
                )
            self._raise_for(answer, action, address)

    def _raise_for(self, answer: ExplorerAnswer, action: str, subject: str) -> None:
        reason = redact(answer.reason or f"status {answer.status} {answer.message}")
        if answer.outcome == Outcome.INVALID_KEY:
            raise InvalidApiKey(
                f"{action}: {reason}. Fix: pass --api-key, or set ETHERSCAN_API_KEY (or the explorer's api_key_env)",
                answer,
                reason=reason_of(answer),
            )
        if answer.outcome == Outcome.REFUSED:
            raise ExplorerRefused(
                f"{action} at {redact(self.base_url)}: {reason} (this key's plan does not cover the chain; the "
                "other targets go on)",
                answer,
                reason=reason_of(answer),
            )
        if answer.outcome == Outcome.NOT_FOUND:
            raise AddressNotFound(f"{subject}: {reason}", answer, reason=reason_of(answer))
        if answer.outcome == Outcome.NOT_VERIFIED:
            raise ContractNotVerified(f"{subject}: {reason}", answer, reason=reason_of(answer))
        if answer.outcome == Outcome.ERROR and reason and (is_bad_endpoint(reason) or "chainid" in reason.lower()):
            raise BadEndpoint(f"{action} at {redact(self.base_url)}: {reason}", answer, reason=reason_of(answer))
        if action in ("verifysourcecode", "verifyproxycontract"):
            raise VerificationRejected(f"{subject}: {reason}", answer, reason=reason_of(answer))
        raise ExplorerError(f"{action} {subject}: {reason}", answer, reason=reason_of(answer))

    def _call(self, method: str, action: str, params: Mapping[str, str]) -> ExplorerAnswer:
        """One action, with retries. Returns the classified envelope (never a rate-limit answer)."""
        query: dict[str, str] = {"module": "contract", "action": action}
        if self.chain_id is not None:
            query[self.chain_id_param] = str(self.chain_id)
        body: dict[str, str] | None = None
        if method == "GET":
            query.update(params)
            if self._key:
                query["apikey"] = self._key.reveal()
        else:
            body = {**query, **params}
            if self._key:
                body["apikey"] = self._key.reveal()

        return with_retries(
            lambda: self._attempt(method, action, query, body),
            policy=self.retry,
            limiter=self.limiter,
            rng=self._rng,
            sleep=self._sleep,
            label=action,
            health=self.health,
            gave_up=lambda last: gave_up(
                last,
                self.retry,
                action,
                f"{action} at {redact(self.base_url)}",
                "still rate limited",
                "; lower contract_verify.calls_per_second or use an API key",
            ),
        )

    def _attempt(self, method: str, action: str, query: dict[str, str], body: dict[str, str] | None) -> ExplorerAnswer:
        if logger.isEnabledFor(logging.DEBUG):
            shown = {k: v for k, v in (body or {}).items() if k != "sourceCode"}
            logger.debug("%s %s?%s %s", method, self.base_url, urlencode(query), redact(shown) if body else "")
        response = send(
            self.session,
            method,
            self.base_url,
            self.base_url,
            f"{action} at {redact(self.base_url)}",
            params=query,
            data=body,
            timeout=self.timeout,
            health=self.health,
        )

        code = response.status_code
        logger.debug("%s -> HTTP %d %s", action, code, redact(response.text[:300]))
        if code in (408, 429) or code >= 500:
            raise Retry(f"HTTP {code}", delay=retry_after(response, self.retry))
        if code >= 400:
            raise BadEndpoint(
                f"{action} at {redact(self.base_url)}: HTTP {code}; is this the explorer's contract API base URL "
                "(e.g. https://api.etherscan.io/v2/api or https://<blockscout>/api)?"
            )
        try:
            envelope = response.json()
        except ValueError:
            envelope = None  # gateways and CDNs answer HTML error pages with 200 during outages
        if envelope is None:
            raise Retry(f"HTTP {code} with a body that is not JSON")
        if not isinstance(envelope, dict) or "status" not in envelope or "result" not in envelope:
            raise BadEndpoint(
                f"{action} at {redact(self.base_url)}: the answer is not a status/message/result envelope"
            )
        answer = classify(str(envelope.get("status")), str(envelope.get("message", "")), envelope.get("result"))
        if answer.outcome == Outcome.RATE_LIMITED:
            raise Retry(f"rate limited: {redact(answer.reason)}", rate_limited=True, answer=answer)
        return answer
