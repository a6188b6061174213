"""The job queue's workers: each queued submission verified by the engine, and its answer recorded.

The queue lives in SQLite, not in memory: a submission is claimed (running), verified, and
finished in one transaction with what it verified. A process killed in between leaves it
running; `JobRunner.start()` puts such jobs back in the queue first, so they finish after a restart.
A job of the Sourcify face records what its answer is made of (the match, or the engine's failure
and both bytecodes: `FAILURE`); the face (`server/sourcify_face.py`) answers it in Sourcify's shapes.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ape_contract_verify.evm.reads import ChainError
from ape_contract_verify.explorer.store import (
    PROXY,
    SOURCIFY,
    ProxyRecord,
    Store,
    Submission,
    VerifiedContract,
)
from ape_contract_verify.json_types import JsonObject, JsonValue, to_json
from ape_contract_verify.logs import SERVER, get_logger
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.protocol.values import checksum, hex_to_bytes
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.retry import RetryPolicy

if TYPE_CHECKING:
    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.engine.verifier import VerificationResult, Verifier
    from ape_contract_verify.evm.proxies import ProxyInfo
    from ape_contract_verify.evm.reads import ChainReader

logger = get_logger(SERVER)
ALREADY_VERIFIED = "already verified"  # a Sourcify job's failure beside the engine's kinds
# How often a job found running at start (its process was killed mid-job) is run again.
MAX_INTERRUPTIONS = 3


class RealEngine:
    """What the workers need of the verification engine: `ape_contract_verify.engine.verifier`
    and `.proxies`, imported on first use (the embedded explorer starts inside `ape run`; its start
    must stay cheap). Tests hand the workers a fake with these three methods."""

    def __init__(self, chain: ChainReader, cache: CompileCache | None = None, compile_timeout: float | None = None):
        self.chain = chain
        self._cache = cache
        self._compile_timeout = compile_timeout

    @cached_property
    def verifier(self) -> Verifier:
        from ape_contract_verify.engine.compilers import DEFAULT_TIMEOUT
        from ape_contract_verify.engine.verifier import Verifier

        timeout = DEFAULT_TIMEOUT if self._compile_timeout is None else self._compile_timeout
        return Verifier(self.chain, cache=self._cache, compile_timeout=timeout)

    def verify(self, request: VerificationRequest, **options: Any) -> VerificationResult:  # Verifier.verify's
        return self.verifier.verify(request, **options)

    def detect_proxy(self, address: str) -> ProxyInfo | None:
        from ape_contract_verify.evm.proxies import detect_proxy

        return detect_proxy(self.chain, address)

    def get_code(self, address: str) -> bytes:
        return hex_to_bytes(self.chain.get_code(address))


def code_hash(code: bytes) -> str:
    return hashlib.sha256(code).hexdigest()


def request_to_payload(request: VerificationRequest) -> JsonObject:
    return {**asdict(request), "code_format": request.code_format.value}


def request_from_payload(payload: Mapping[str, Any]) -> VerificationRequest:  # Any: request_to_payload's fields
    return VerificationRequest(**{**payload, "code_format": CodeFormat(payload["code_format"])})


def current_contract(store: Store, address: str, code: bytes) -> VerifiedContract | None:
    """What the store holds for `address`, unless it was verified against other code (the chain
    was reset): that stale record is forgotten."""
    existing = store.get_contract(address)
    if existing is not None and existing.code_hash and existing.code_hash != code_hash(code):
        store.forget_contract(address)
        return None
    return existing


# How long a job waits for a node that cannot be read: 6 more runs, about 2 minutes in all.
CHAIN_RETRY = RetryPolicy(max_retries=6, base_delay=2.0, max_delay=60.0, jitter=False)


class _ChainDown(Exception):
    """A run stopped because the node could not be read: the job waits and runs again."""


class JobRunner:
    """`workers` threads pulling from the store's queue until `stop()`."""

    def __init__(
        self,
        store: Store,
        engine: RealEngine,
        workers: int = 1,
        idle_poll: float = 0.5,
        chain_retry: RetryPolicy = CHAIN_RETRY,
    ):
        self.store = store
        self.engine = engine
        self.workers = max(1, workers)
        self.idle_poll = idle_poll
        self.chain_retry = chain_retry
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.requeued = 0
        self._ended = threading.Condition()  # notified as each job ends: in-process waiters need no polling
        self.jobs_ended = 0

    def start(self) -> JobRunner:
        reason = Texts.JOB_INTERRUPTED.format(times=MAX_INTERRUPTIONS)
        self.requeued, ended = self.store.requeue_interrupted(MAX_INTERRUPTIONS, reason)
        if self.requeued:
            logger.info("Re-queued %d submission(s) left unfinished by an earlier run.", self.requeued)
        if ended:
            logger.warning("%d submission(s) interrupted %d times ended failed.", ended, MAX_INTERRUPTIONS)
        for number in range(self.workers):
            thread = threading.Thread(target=self._run, name=f"explorer-worker-{number}", daemon=True)
            thread.start()
            self._threads.append(thread)
        self._wake.set()
        return self

    def notify(self) -> None:
        """A new submission is in the store: wake a worker now rather than at the next poll."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                submission = self.store.claim_next()
            except Exception as err:  # a locked or closed database must not kill the worker
                if self._stop.is_set():
                    return
                logger.warning("Explorer queue unavailable: %s", err)
                self._stop.wait(self.idle_poll)
                continue
            if submission is None:
                self._wake.wait(self.idle_poll)
                self._wake.clear()
                continue
            self.process(submission)

    def wait_for_an_end(self, seen: int, timeout: float) -> None:
        """Until a job ends after `seen` (`jobs_ended` then), at most `timeout` seconds."""
        with self._ended:
            self._ended.wait_for(lambda: self.jobs_ended != seen, timeout)

    def process(self, submission: Submission) -> None:
        """One job, to its recorded answer (or back to the queue while the node cannot be read);
        `jobs_ended` counts it and in-process waiters are woken, however it went."""
        try:
            if submission.kind == PROXY:
                self._verify_proxy(submission)
            else:
                self._verify_source(submission)
        except (ChainError, _ChainDown) as err:  # the node, not the submission: wait for it
            self._chain_down(submission, err)
        except Exception as err:  # never leave a job running forever because of one bad input
            error = f"{type(err).__name__}: {err}"
            logger.warning("Submission %s failed: %s", submission.guid, error)
            stopped = f"The verifier stopped with an error: {error}"
            if submission.kind == PROXY:
                text = f"Proxy verification failed: {error}"
            elif submission.kind == SOURCIFY:
                text = stopped  # a plain text reads as its internal_error (`read_sourcify`)
            else:
                text = f"{Texts.FAIL}. {stopped}"
            try:
                self.store.finish(submission.guid, "0", text)
            except Exception:
                logger.exception("Could not record the failure of %s", submission.guid)
        finally:
            with self._ended:
                self.jobs_ended += 1
                self._ended.notify_all()

    def _chain_down(self, sub: Submission, err: Exception) -> None:
        failures = sub.chain_failures + 1
        try:
            if failures <= self.chain_retry.max_retries:
                delay = self.chain_retry.delay(failures - 1)
                logger.warning(
                    "Submission %s: the node could not be read (%s); retry %d of %d in %.1f s.",
                    sub.guid,
                    err,
                    failures,
                    self.chain_retry.max_retries,
                    delay,
                )
                self.store.retry_later(sub.guid, delay)
            else:
                prefix = "The chain could not be read: "  # the engine's words, said again by the text
                detail = str(err).strip().removeprefix(prefix) or type(err).__name__
                seconds = self.chain_retry.total(failures - 1)
                text = Texts.CHAIN_UNREADABLE.format(tries=failures, seconds=seconds, error=detail)
                self.store.finish(sub.guid, "0", text)  # a Sourcify job's internal_error too
        except Exception:
            logger.exception("Could not record the chain failure of %s", sub.guid)

    # -- source code -------------------------------------------------------------------------

    def _verify_source(self, sub: Submission) -> None:
        """A source submission of either face; the Sourcify face's takes the constructor arguments
        from the creation transaction, and records what its answer is made of (JSON: the match and
        compile time, or the failure's `FAILURE` fields), which the face answers in Sourcify's shapes."""
        sourcify = sub.kind == SOURCIFY
        request = request_from_payload(sub.payload)
        code = self.engine.get_code(sub.address)
        existing = current_contract(self.store, sub.address, code)
        if existing is not None and existing.match == "full":
            self._fail(sub, Texts.ALREADY_VERIFIED, failure=ALREADY_VERIFIED)
            return
        started = time.monotonic()
        if sourcify:  # Sourcify answers no_match with both bytecodes; no search for the setting that differs
            result = self.engine.verify(request, args_from_creation=True, diagnose_compiles=0)
        else:
            result = self.engine.verify(request)
        elapsed_ms = (time.monotonic() - started) * 1000
        if result.failure == "chain":  # FailureKind.CHAIN, a str enum (engine/ imported only by RealEngine)
            raise _ChainDown(result.reason or "the chain could not be read")
        if sourcify and result.blueprint:  # as Sourcify answers an ERC-5202 blueprint today: no_match
            self._fail(sub, "", failure="blueprint")
            return
        if not result.verified:
            self._fail(sub, result.text, **result_fields(result, FAILURE))  # the engine's checkverifystatus text
            return
        match = result.match or "full"
        if existing is not None and match != "full":
            # A partial match does not replace an earlier partial one; only a full match upgrades it.
            self._fail(sub, Texts.ALREADY_VERIFIED, failure=ALREADY_VERIFIED)
            return
        contract = VerifiedContract(
            address=sub.address,
            contract_name=result.contract_name or request.contract_name,
            compiler_version=result.compiler_version or request.compiler_version,
            code_format=request.code_format.value,
            source_code=request.source_code,
            abi=json.dumps(result.abi, separators=(",", ":")),
            settings={key: to_json(value) for key, value in result.settings.items()},  # as compiled
            constructor_arguments=result.constructor_arguments or request.constructor_arguments or "",
            libraries={str(k): str(v) for k, v in (result.libraries or dict(request.libraries)).items()},
            license_type=result.license_type or request.license_type,
            match=match,
            code_hash=code_hash(code),
            guid=sub.guid,
            details={
                **result_fields(result, KEPT),
                **({"blueprint": True} if result.blueprint else {}),
            },
        )
        text = json.dumps({"match": match, "milliseconds": int(elapsed_ms)}) if sourcify else Texts.PASS
        self.store.finish(sub.guid, "1", text, contract=contract)

    def _fail(self, sub: Submission, text: str, **record: JsonValue) -> None:
        """A source job that verified nothing: Etherscan's `text`, or the Sourcify face's `record` (as JSON)."""
        self.store.finish(sub.guid, "0", json.dumps(record) if sub.kind == SOURCIFY else text)

    # -- proxies -------------------------------------------------------------------------------

    def _verify_proxy(self, sub: Submission) -> None:
        expected = str(sub.payload.get("expected_implementation") or "").lower()
        info = self.engine.detect_proxy(sub.address)
        implementation = info.implementation if info is not None else None
        if info is None or not implementation or int(implementation, 16) == 0:
            from ape_contract_verify.evm.proxies import has_delegatecall  # as the engine: imported on first use

            code = self.engine.get_code(sub.address)
            text = Texts.PROXY_NOT_DETECTED if has_delegatecall(code) else Texts.PROXY_NO_DELEGATECALL
            self.store.finish(sub.guid, "0", text)
            return
        implementation = implementation.lower()
        if expected and expected != implementation:
            self.store.finish(sub.guid, "0", Texts.PROXY_EXPECTED_MISMATCH)
            return
        record = ProxyRecord(
            address=sub.address,
            implementation=implementation,
            kind=str(info.kind) if info.kind is not None else None,
            beacon=info.beacon.lower() if info.beacon else None,
        )
        text = Texts.PROXY_FOUND.format(proxy=checksum(sub.address), implementation=checksum(implementation))
        self.store.finish(sub.guid, "1", text, proxy=record)


# -- an engine result's fields, kept for the Sourcify face ------------------------------------

# What a verified contract keeps for Sourcify lookups (`creationBytecode`, `deployment`, …).
KEPT = "recompiled_creation recompiled_runtime onchain_creation creation_tx creation_block deployer factory metadata"
# What a failed job of the Sourcify face records: its answer's code and bytecodes (`server/sourcify_face.job_error`).
FAILURE = "failure reason recompiled_creation recompiled_runtime onchain_creation onchain_runtime creation_tx"


def result_fields(result: VerificationResult, names: str) -> JsonObject:
    """The result's fields `names` that have a value (failure: the engine's FailureKind value)."""
    values = {name: to_json(getattr(result, name)) for name in names.split()}
    return {name: value for name, value in values.items() if value not in (None, "")}
