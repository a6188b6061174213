"""A client for Sourcify API v2 servers: submit, poll the job, look up verified contracts.

A `VerificationTarget` (`client/provider.py`) on `client/http.py`'s `HttpTarget`, as
`ExplorerClient` is: `verify_source_code`, `wait`, `job_status`, `contract_record` (Sourcify's own
lookup as an `ExplorerRecord`, whose ABI `get_abi` reads); it has no proxy-link action (its kind does not link
proxies: Sourcify resolves them itself). The request bodies and error codes are
`protocol/sourcify.py`'s, which the local explorer's Sourcify face answers with too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from ape_contract_verify.client.http import HttpTarget, reason_of
from ape_contract_verify.client.provider import ExplorerRecord, Flavour, Kind, SubmissionReceipt
from ape_contract_verify.exceptions import (
    BadEndpoint,
    ExplorerError,
    InvalidRequest,
    VerificationRejected,
)
from ape_contract_verify.json_types import JsonObject, JsonValue, as_object, as_text
from ape_contract_verify.logs import CLIENT, get_logger
from ape_contract_verify.protocol import sourcify as rules
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome
from ape_contract_verify.protocol.compiler_version import CompilerVersion, InvalidCompilerVersion
from ape_contract_verify.protocol.forms import validate_address
from ape_contract_verify.protocol.secrets import redact
from ape_contract_verify.retry import Retry

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ape_contract_verify.client.http import Transport
    from ape_contract_verify.request import Receipt, VerificationRequest

logger = get_logger(CLIENT)


@dataclass(frozen=True)
class SourcifyAnswer(ExplorerAnswer):
    """An ExplorerAnswer with Sourcify's own `error` (customCode, message, the bytecodes for
    no_match, compiler errors), kept whole for the caller. `status` is the HTTP status, `message`
    the customCode (or `pending`/`completed`)."""

    error: JsonObject = field(default_factory=dict)


# -- Vyper's long version ---------------------------------------------------------------------------
# Sourcify fetches `vyper.<long version>.linux` from Vyper's GitHub releases, whose names carry 8
# hex digits; the PyPI packages of older releases print 7 (0.3.10: 9136169). Their full names:
_VYPER_RELEASE_COMMITS = {"0.3.3": "48e326f0", "0.3.9": "66b96705", "0.3.10": "91361694", "0.4.0": "e9db8d9f"}


def vyper_long_version(compiler_version: str) -> str:
    """`vyper:0.4.3` -> `0.4.3+commit.bff19ea2`: what `vyper --version` of that installed Vyper
    prints (the engine finds it: the venv's or a side venv's), with the release's 8-digit commit
    where the package prints fewer (`vyper --version` is asked once per file: the engine caches it)."""
    from ape_contract_verify.engine import compilers
    from ape_contract_verify.engine.compilers import CompilerFailed, parse_compiler_version

    parsed = parse_compiler_version(compiler_version, "vyper")
    if parsed.commit:
        return parsed.plain
    # The `vyper` beside that version's vyper-json (CompilerNotInstalled names the installed ones).
    command = [str(Path(compilers.vyper_json_command(parsed)[0]).with_name("vyper"))]
    found = compilers.printed_version(command, "vyper")
    if not found or not found.commit or found.number != parsed.number:
        printed = found.plain if found else "nothing"
        raise CompilerFailed(f"`{' '.join(command)} --version` printed {printed}, not {parsed.version}+commit.<hash>")
    long, commit = found.plain, found.commit or ""
    release = _VYPER_RELEASE_COMMITS.get(parsed.number, "")
    if len(commit) < 8 and release.startswith(commit):
        long = found.with_commit(release).plain
    elif len(commit) < 8:
        logger.warning(
            "vyper %s prints a %d-digit commit (%s); Sourcify may not find that release",
            parsed.version,
            len(commit),
            long,
        )
    return long


def sourcify_body(request: VerificationRequest) -> rules.SubmissionBody:
    """The JSON body `verify_source_code` POSTs for `request` (the dry run writes it too): the
    protocol's body, with Vyper's long version found here. Raises InvalidRequest naming the field."""
    long_version = None
    if rules.is_vyper(request):
        try:
            long_version = vyper_long_version(request.compiler_version)
        except Exception as err:  # the engine's CompilerError: not installed, no answer
            raise InvalidRequest(
                "compilerVersion",
                f"the commit of {request.compiler_version} is unknown ({err})",
                "install that Vyper (Sourcify needs <version>+commit.<hash>)",
            ) from None
    return rules.request_to_body(request, long_version)


class SourcifyClient(HttpTarget[tuple[int, JsonValue]]):
    """A client for one Sourcify API v2 server (`base_url`, e.g. https://sourcify.dev/server/) and chain.

    - `verify_source_code` POSTs `v2/verify/{chainId}/{address}` and returns a receipt whose
      `guid` is the verificationId. A 409 `already_verified` (creation and runtime both already
      `exact_match`) is a success: `guid == ""` and `answer.outcome == ALREADY_VERIFIED`.
    - `wait` polls `v2/verify/{id}` until `isJobCompleted`; the answer's `match` is `exact_match`
      or `match`. A `match` (the metadata differs) can be upgraded: submitting the exact
      standard-json input again ends `exact_match` (a job that would be no better ends
      `already_verified`). So a caller holding an input that gives an exact match submits again
      when `answer.match == "match"`; a flattened single-file request gives `match` at best.
    - 429 `too_many_requests` and `duplicate_verification_request` (the address is being
      verified) wait (Retry-After when sent) and go on; 5xx and connection errors are retried with
      backoff; any other 4xx ends the call with Sourcify's own reason, its `customCode`'s outcome
      in `err.answer.outcome` (e.g. UNSUPPORTED_CHAIN).
    - An API key, when given, rides in the `Authorization: Bearer` header; it never shows in
      reprs, logs or errors.
    """

    kind = Kind.SOURCIFY
    flavour = Flavour.SOURCIFY
    _limited = "still refused"

    def __init__(self, base_url: str, chain_id: int, **options: Unpack[Transport]):
        super().__init__(base_url.rstrip("/") + "/", **options)
        self.chain_id = int(rules.validate_chain_id(chain_id))
        self._not_sourcify = (
            f"is {redact(self.base_url)} a Sourcify server base URL (e.g. https://sourcify.dev/server/)?"
        )

    # -- links -------------------------------------------------------------------------------------

    def link(self, address: str) -> str:
        """The contract's page, as hardhat-verify links it: `{base}repo-ui/{chainId}/{address}`."""
        return f"{self.base_url}repo-ui/{self.chain_id}/{address}"

    def job_url(self, guid: str) -> str:
        """The job's page, as Foundry prints it: `{base}verify-ui/jobs/{verificationId}`."""
        return f"{self.base_url}verify-ui/jobs/{quote(guid, safe='')}"

    # -- submit --------------------------------------------------------------------------------------

    def verify_source_code(self, request: VerificationRequest) -> SubmissionReceipt:
        """Submit `request`; checked and turned into Sourcify's body before anything is sent."""
        address = validate_address(request.address)
        body = sourcify_body(request)
        path = f"v2/verify/{self.chain_id}/{address}"
        status, data = self._call("POST", path, json_body=body)
        guid = str(as_object(data).get("verificationId") or "").strip() if status == 202 else ""
        if guid:
            answer = SourcifyAnswer(Outcome.PENDING, str(status), "pending", guid)
            logger.info("%s: submitted to Sourcify, job %s", address, guid)
            return SubmissionReceipt(guid=guid, address=address, proxy=False, answer=answer)
        answer = self._error_answer(status, data)
        if answer.outcome == Outcome.ALREADY_VERIFIED:
            logger.info("%s: %s", address, answer.reason)
            # 409 only when creation and runtime are both exact_match.
            answer = replace(answer, match=rules.EXACT_MATCH)
            return SubmissionReceipt(guid="", address=address, proxy=False, answer=answer)
        if status == 202:
            raise BadEndpoint(
                f"POST {redact(self.base_url)}{path}: 202 without a verificationId", answer, reason=answer.reason
            )
        raise VerificationRejected(f"{address}: {answer.reason}", answer, reason=reason_of(answer))

    # -- poll ------------------------------------------------------------------------------------------

    def job_status(self, guid: str, proxy: bool = False) -> ExplorerAnswer:
        """The job's state now; a final one, PENDING, or UNKNOWN_GUID for `job_not_found`."""
        if proxy:
            return super().job_status(guid, proxy)
        guid = (guid or "").strip()
        if not guid:
            raise InvalidRequest("verificationId", "is empty", "pass the verificationId the submission answered")
        status, data = self._call("GET", f"v2/verify/{quote(guid, safe='')}")
        if status == 200 and isinstance(data, Mapping) and "isJobCompleted" in data:
            return job_answer(data)
        answer = self._error_answer(status, data)
        if answer.outcome == Outcome.UNKNOWN_GUID:
            return answer
        raise ExplorerError(f"job {guid}: {answer.reason}", answer, reason=reason_of(answer))

    def _pending(self, receipt: Receipt) -> tuple[str, str, str]:
        label = f"job {receipt.guid} for {receipt.address}"
        return label, "the Sourcify job is still not completed", f"see {self.job_url(receipt.guid)}"

    # -- read ----------------------------------------------------------------------------------------

    def lookup(self, address: str, fields: str = "all") -> JsonObject:
        """`GET v2/contract/{chainId}/{address}?fields=…`: the body, also for an unverified
        contract (404 with `match: null`)."""
        address = validate_address(address)
        params = {"fields": fields} if fields else None
        status, data = self._call("GET", f"v2/contract/{self.chain_id}/{address}", params=params)
        if status in (200, 404) and isinstance(data, Mapping) and "match" in data:
            return dict(data)
        answer = self._error_answer(status, data)
        raise ExplorerError(f"lookup {address}: {answer.reason}", answer, reason=reason_of(answer))

    def contract_record(self, address: str, full: bool = True) -> ExplorerRecord:
        """What Sourcify holds for `address` (`fields=all`); `verified` False when nothing. Not
        `full`: its match and how it resolves a proxy (`fields=proxyResolution`), and a 404 without
        Sourcify's body is "not verified" too."""
        address = validate_address(address)
        try:
            return record_of(address, self.lookup(address, "all" if full else "proxyResolution"))
        except ExplorerError as err:
            outcome = err.answer.outcome if isinstance(err.answer, ExplorerAnswer) else None
            if full or outcome not in (Outcome.NOT_FOUND, Outcome.NOT_VERIFIED):
                raise
            return ExplorerRecord(address, verified=False)

    # -- internals ---------------------------------------------------------------------------------------

    def _error_answer(self, status: int, data: JsonValue) -> SourcifyAnswer:
        if isinstance(data, Mapping) and data.get("customCode"):
            return error_answer(status, dict(data))
        what = f"HTTP {status} without a Sourcify error body; {self._not_sourcify}"
        return SourcifyAnswer(Outcome.NOT_FOUND if status == 404 else Outcome.ERROR, str(status), "", what)

    def _call(
        self,
        method: str,
        path: str,
        params: dict[str, str] | None = None,
        json_body: Mapping[str, object] | None = None,
    ) -> tuple[int, JsonValue]:
        """One call with retries: (HTTP status, parsed JSON) of the first answer that is not a
        rate limit, a 5xx or a connection fault."""
        url = self.base_url + path
        headers = {"Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key.reveal()}"
        where = f"{method} {redact(url)}"
        return self._request(method, url, f"{method} {path}", where, params=params, json=json_body, headers=headers)

    def _read(self, code: int, body: JsonValue, delay: float | None, where: str) -> tuple[int, JsonValue]:
        """(HTTP status, parsed JSON) of an answer that is not a rate limit."""
        answer = self._error_answer(code, body)  # its customCode may say rate limit (`rules.outcome_for`)
        if code == 429 or answer.outcome == Outcome.RATE_LIMITED:
            reason = f"HTTP {code} {answer.message}: {answer.reason}".strip()
            # Only `too_many_requests` speaks of this client's rate; a duplicate request is about one address.
            pauses = answer.message == rules.TOO_MANY_REQUESTS
            raise Retry(reason, delay=delay, rate_limited=True, answer=answer, pauses=pauses)
        if body is None:
            raise BadEndpoint(f"{where}: HTTP {code} with a body that is not JSON; {self._not_sourcify}")
        return code, body


# -- answers ---------------------------------------------------------------------------------------


def _first_difference(x: str, y: str) -> int | None:
    for index in range(0, min(len(x), len(y)), 2):
        if x[index : index + 2] != y[index : index + 2]:
            return index // 2
    return None if len(x) == len(y) else min(len(x), len(y)) // 2


def failure_reason(error: JsonObject) -> str:
    """Sourcify's message, made readable: compiler errors in solc's words, and for a mismatch the
    two bytecodes' lengths and where they first differ."""
    message = str(error.get("message") or error.get("customCode") or "failed")
    compiler_errors = as_object(error.get("errorData")).get("compilerErrors")
    if isinstance(compiler_errors, list) and compiler_errors:
        texts = [
            str(e.get("formattedMessage") or e.get("message") or e).strip()
            for e in compiler_errors
            if isinstance(e, dict) and e.get("severity", "error") == "error"
        ]
        if texts:
            message = "Compiler error: " + "; ".join(texts)
    parts = []
    for kind, recompiled, onchain in (
        ("runtime", "recompiledRuntimeCode", "onchainRuntimeCode"),
        ("creation", "recompiledCreationCode", "onchainCreationCode"),
    ):
        if error.get(recompiled) and error.get(onchain):
            chain, ours = (str(error[key]).lower().removeprefix("0x") for key in (onchain, recompiled))
            detail = f"{kind} bytecode: on-chain {len(chain) // 2} bytes, recompiled {len(ours) // 2} bytes"
            where = _first_difference(chain, ours)
            parts.append(detail + (f", first difference at byte {where}" if where is not None else ""))
    return redact(message + (f" ({'; '.join(parts)})" if parts else ""))


def error_answer(status: int, error: JsonObject) -> SourcifyAnswer:
    """Sourcify's error body (an answer's, or a completed job's `error`) as an outcome: its
    `customCode`'s; a job's error without one failed."""
    code = str(error.get("customCode") or "")
    outcome = rules.outcome_for(code) if code else Outcome.FAILED
    return SourcifyAnswer(outcome, str(status), code, failure_reason(error), error=error)


def job_answer(data: JsonObject) -> SourcifyAnswer:
    """A job's answer (`GET v2/verify/{id}`, always 200) as an outcome."""
    contract = as_object(data.get("contract"))
    error = dict(as_object(data.get("error")))
    if not data.get("isJobCompleted"):
        return SourcifyAnswer(Outcome.PENDING, "200", "pending", "Pending: the Sourcify job is running")
    if error:
        return error_answer(200, error)
    match = as_text(contract.get("match")) or rules.overall_match(
        as_text(contract.get("creationMatch")), as_text(contract.get("runtimeMatch"))
    )
    if not match:
        return SourcifyAnswer(Outcome.FAILED, "200", "completed", "The Sourcify job completed without a match")
    kind = "exact match" if match == rules.EXACT_MATCH else "partial match (the metadata differs)"
    reason = f"Verified: {kind} (creation: {contract.get('creationMatch')}, runtime: {contract.get('runtimeMatch')})"
    return SourcifyAnswer(Outcome.VERIFIED, "200", "completed", reason, match=match)


def record_of(address: str, data: JsonObject) -> ExplorerRecord:
    """A `fields=all` lookup as what Sourcify holds: its own fields, named."""
    if not data.get("match"):
        return ExplorerRecord(address, verified=False)
    compilation = as_object(data.get("compilation"))
    std_input = as_object(data.get("stdJsonInput"))  # else the record's own sources and settings
    sources = as_object(std_input.get("sources") if std_input else data.get("sources"))
    settings = dict(as_object(std_input.get("settings") if std_input else compilation.get("compilerSettings")))
    language = str(compilation.get("language") or std_input.get("language") or "Solidity")
    version = str(compilation.get("compilerVersion") or "")
    vyper = language.lower() == "vyper"
    try:
        compiler = CompilerVersion.parse(version, "vyper" if vyper else "solidity").form
    except InvalidCompilerVersion:
        compiler = version  # shown as Sourcify holds it: a record is read, not checked
    optimizer = as_object(settings.get("optimizer"))
    transformation = as_object(as_object(data.get("creationBytecode")).get("transformationValues"))
    args = transformation.get("constructorArguments") or ""
    proxy = as_object(data.get("proxyResolution"))
    implementations = proxy.get("implementations")
    first = as_object(implementations[0]) if isinstance(implementations, list) and implementations else {}
    abi = data.get("abi")
    runs = optimizer.get("runs")
    return ExplorerRecord(
        address,
        verified=True,
        name=str(compilation.get("name") or str(compilation.get("fullyQualifiedName") or "").rsplit(":", 1)[-1]),
        compiler=compiler,
        language="Vyper" if vyper else "Solidity",
        abi=abi if isinstance(abi, list) else [],
        files={path: str(as_object(src).get("content", "")) for path, src in sources.items()},
        settings=settings,
        source_format="standard-json",
        constructor_arguments=str(args).removeprefix("0x"),
        optimization_used=bool(optimizer.get("enabled")) if not vyper else settings.get("optimize", "gas") != "none",
        runs=int(runs or 0) if isinstance(runs, (int, float, str)) else 0,
        evm_version=str(settings.get("evmVersion") or "default"),
        proxy=bool(proxy.get("isProxy")),
        implementation=str(first.get("address") or ""),
        match=str(data.get("match")),
    )
