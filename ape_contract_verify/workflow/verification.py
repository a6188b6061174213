"""One contract (or one proxy and what is behind it) verified on one target: derive, submit, poll, report.

`Verification` is one target's side of a run: its client, and what every contract shares (the
project, the chain reader, the options). Verifications of the same run on other targets share one
`Derivations`, so a contract is derived and pre-checked once however many targets it goes to.
Each call returns `Report`s, one per submission, so the CLI, the deploy hook and `ape verify all`
print the same summary.
"""

import contextlib
import dataclasses
import functools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, TypeVar, cast

from ape_contract_verify.exceptions import ContractVerifyError, ExplorerError, TargetDown
from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome
from ape_contract_verify.protocol.values import checksum as _checksum
from ape_contract_verify.request import CodeFormat
from ape_contract_verify.workflow.report import Report, proxy_row_label

if TYPE_CHECKING:  # the clients import requests, derive imports Ape: only when a run makes one
    from ape.api import ProviderAPI
    from ape.managers.project import ProjectManager
    from typing_extensions import Unpack

    from ape_contract_verify.client.health import TargetHealth
    from ape_contract_verify.client.provider import CreationRecord, VerificationTarget
    from ape_contract_verify.client.targets import ClientOptions, Target
    from ape_contract_verify.config import ContractVerifyConfig
    from ape_contract_verify.derive.artifacts import Artifact
    from ape_contract_verify.derive.derive import Derivation
    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.evm.reads import ChainReader
    from ape_contract_verify.explorer.embedded import EmbeddedExplorer
    from ape_contract_verify.request import VerificationRequest

logger = get_logger()

T = TypeVar("T")
# What `Derivations.once` keys a result by: its kind ("identify", "derive") and what it was made of.
Key = tuple[str | bool | None, ...]


@dataclass
class Options:
    code_format: CodeFormat = CodeFormat.STANDARD_JSON
    # The user asked for this format on the command line: no other is sent in its place.
    strict_format: bool = False
    check: bool = True
    force: bool = False
    # Ask the explorer first whether the address is verified. Off for what this run just
    # deployed: the submission itself answers "already verified" (Etherscan's similar-match case),
    # and the question would cost a rate-limited call per contract.
    ask_first: bool = True
    license: str | None = None
    poll_interval: float = 5.0
    timeout: float = 300.0

    @classmethod
    def from_config(
        cls,
        cfg: "ContractVerifyConfig",
        code_format: CodeFormat | None = None,
        check: bool | None = None,
        *,
        force: bool = False,
        ask_first: bool = True,
    ) -> "Options":
        """The `contract_verify:` config's options; a `code_format` given is strict (no other format is
        sent in its place), `check` None is the config's. The CLI, the API, the deploy hook and
        `publish=True` all start here."""
        return cls(
            code_format=code_format or cfg.codeformat,
            strict_format=bool(code_format),
            check=cfg.check if check is None else check,
            license=cfg.license,
            poll_interval=cfg.poll_interval,
            timeout=cfg.timeout,
            force=force,
            ask_first=ask_first,
        )


class Derivations:
    """What the targets of one run share per contract: the compile cache, which artifact an
    address is, and its derivation (or the error deriving it). Computed once, under a lock per key.

    `prepared` holds the artifact of each address the deploy hook resolved on the script's thread,
    with what deriving it needs of Ape (`derive.inputs.prepare`), so that workers need not call
    into Ape's managers while the script can (`derive.ape_gate`). A plain dict: the script's
    thread never waits on a worker's lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[Key, threading.Lock] = {}
        # Each key's value is what its `make` returned: `once` gives it back as that type.
        self._results: dict[Key, tuple[bool, object]] = {}
        self.prepared: dict[str, Artifact] = {}  # address (lower case) -> Artifact, resolved
        # address (lower case) -> the group input Ape built it from, as the ledger kept it at the
        # deploy: the one the pre-check widens to, whatever was recompiled or edited since.
        self.kept: dict[str, JsonObject] = {}

    @functools.cached_property
    def cache(self) -> "CompileCache":
        """The process's (shared with the local explorer), looked up on first use: the deploy hook
        makes its Derivations at the script's first deploy, where importing the engine would cost."""
        from ape_contract_verify.engine.compilers import process_cache

        return process_cache()

    def prepare(self, address: str, deployed_type: str, project: "ProjectManager", runtime: bytes) -> bool:
        """Resolve, on the caller's (the script's) thread, the artifact Ape deployed at `address`
        and what deriving it needs of Ape; False when the manifests alone cannot say (workers then
        resolve it once the script lets them)."""
        from ape_contract_verify.derive import artifacts, inputs

        try:
            artifact = artifacts.find_artifact(deployed_type, project, compile=False)
        except artifacts.ArtifactNotFound as err:
            logger.debug("%s: %s not resolved at the deploy: %s", address, deployed_type, err)
            return False
        if not artifacts.has_code_of(artifact, runtime):
            return False
        same = next((a for a in self.prepared.values() if a.reference == artifact.reference), None)
        if same is not None:
            artifact.resolved.update(same.resolved)  # the same type deployed again
        else:
            inputs.prepare(artifact)
        self.prepared[address.lower()] = artifact
        return True

    def once(self, key: Key, make: Callable[[], T]) -> T:
        with self._lock:
            key_lock = self._keys.setdefault(key, threading.Lock())
        with key_lock:
            if key not in self._results:
                try:
                    self._results[key] = (True, make())
                except Exception as err:  # every target reports the same error
                    self._results[key] = (False, err)
        ok, value = self._results[key]
        if not ok:
            raise cast(Exception, value)
        return cast(T, value)  # the key names what `make` built


class Verification:
    def __init__(
        self,
        client: "VerificationTarget",
        project: "ProjectManager",
        chain_reader: "ChainReader | None",
        options: Options | None = None,
        browser_url: str | None = None,
        on_progress: Callable[[str, str], None] | None = None,
        target: Optional["Target"] = None,
        network: str = "",
        shared: Derivations | None = None,
    ):
        self.client = client
        self.project = project
        self.chain = chain_reader
        self.options = options or Options()
        self.target = target
        self.target_name = target.name if target is not None else ""
        # Sourcify takes standard-json only and links no proxies (it resolves them itself).
        self.sourcify = client.kind == "sourcify"
        if self.sourcify and self.options.code_format is not CodeFormat.STANDARD_JSON:
            # Sourcify takes standard-json only; a flattened file could never match in full there.
            self.options = dataclasses.replace(self.options, code_format=CodeFormat.STANDARD_JSON)
        self.network = network
        self.browser_url = browser_url.rstrip("/") if browser_url else None
        self.shared = shared or Derivations()
        self.cache = self.shared.cache
        self.on_progress = on_progress or (lambda address, text: None)
        self._lock = threading.Lock()
        self._done: dict[str, threading.Event] = {}  # source submissions of this run, by address

    @property
    def reader(self) -> "ChainReader":
        """The run's chain reader; without one, the active Ape provider's, as deriving reads it."""
        from ape_contract_verify.derive.onchain import chain_reader_or_provider

        return chain_reader_or_provider(self.chain)

    # -- entry points -------------------------------------------------------------------------

    def contract(
        self,
        address: str,
        name: str | None = None,
        constructor_args: str | None = None,
        deployed_type: str | None = None,
    ) -> list[Report]:
        """Verify `address` as `name` (or as whatever the project's artifacts identify), and,
        when it is a proxy, its implementation first and then the proxy link.

        `deployed_type` is the type Ape deployed there (`artifacts.type_reference`), as the deploy
        hook and the ledger know it: used instead of the code, which several types may share; the
        code decides only when no artifact answers to it."""
        return self._stamp(self._contract(address, name, constructor_args, deployed_type))

    def _stamp(self, reports: list[Report]) -> list[Report]:
        for report in reports:
            report.target = report.target or self.target_name
            report.target_label = report.target_label or (self.target.label if self.target is not None else "")
            report.network = report.network or self.network
        return reports

    def _identify(self, address: str, deployed_type: str | None = None) -> "Artifact":
        from ape_contract_verify.derive import artifacts
        from ape_contract_verify.evm.reads import creation_input

        prepared = self.shared.prepared.get(address.lower())
        if prepared is not None:
            return prepared

        def find() -> "Artifact":
            runtime = self.reader.get_code(address)
            recorded: Artifact | None = None
            if deployed_type:
                try:
                    recorded = artifacts.find_artifact(deployed_type, self.project)
                except artifacts.ArtifactNotFound as err:
                    logger.debug("%s: deployed as %s, which no artifact answers to (%s)", address, deployed_type, err)
                else:
                    if artifacts.has_code_of(recorded, runtime):
                        return recorded
                    logger.debug("%s: recorded as %s, whose code it does not have", address, deployed_type)
            try:
                return artifacts.identify(
                    address,
                    self.project,
                    runtime=runtime,
                    cache=self.cache,
                    creation=lambda: creation_input(self.reader, address),
                )
            except ContractVerifyError:
                if recorded is None:
                    raise
                # Recompiled since the deploy (`add_library` compiles a library alone): the type Ape
                # deployed stands, and the pre-check compiles the inputs it was built from.
                return recorded

        found = self.shared.once(("identify", address.lower(), deployed_type), find)
        kept = self.shared.kept.get(address.lower())
        return found if kept is None else dataclasses.replace(found, resolved={**found.resolved, "group": kept})

    def _contract(
        self, address: str, name: str | None, constructor_args: str | None, deployed_type: str | None = None
    ) -> list[Report]:
        from ape_contract_verify.evm.proxies import detect_proxy, stamped_reason

        address = _checksum(address)
        if not self._first_time(address):  # already handled in this run, e.g. as an implementation
            self._done[address.lower()].wait(self.options.timeout)
            return []
        if name is None:
            from ape_contract_verify.evm.bytecode import DATA_CONTRACT, is_data_contract

            # No type compiles to it, whatever deployed it: say what it is.
            if is_data_contract(self.reader.get_code(address)):
                self._finished(address)
                return [Report("data contract", address, Outcome.NOTHING_TO_VERIFY, DATA_CONTRACT)]
        proxy = detect_proxy(self.reader, address)
        reports: list[Report] = []
        if proxy is not None:
            # Several proxies share one implementation: it is submitted once per run.
            implementation = _checksum(proxy.implementation)
            if self._first_time(implementation):
                reports += self._source(implementation, None, None)
                self._finished(implementation)
        # A factory's template (no compiler made it): only its link, unless deployed or named as a type.
        stamped = proxy is not None and proxy.stamped and name is None and not deployed_type
        if not stamped:
            if name is None and proxy is not None:
                try:
                    self._identify(address, deployed_type)
                except ContractVerifyError as err:
                    reports.append(Report(address[:10], address, Outcome.SKIPPED, f"proxy source: {err}"))
                else:
                    reports += self._source(address, None, constructor_args, deployed_type)
            else:
                reports += self._source(address, name, constructor_args, deployed_type)
        self._finished(address)
        if proxy is not None and self.client.supports_proxy_link:
            # The link needs the implementation's verification to have ended (maybe on another worker).
            self._done[_checksum(proxy.implementation).lower()].wait(self.options.timeout)
            own = next((r.contract for r in reports if r.address == address and r.kind == "source"), None)
            own = own or (proxy.label if stamped else None)
            reports.append(self.proxy(address, _checksum(proxy.implementation), label=own))
        elif stamped and proxy is not None:  # Sourcify resolves proxies itself: there is no link to submit
            reports.append(Report(proxy.label, address, Outcome.NOTHING_TO_VERIFY, stamped_reason(proxy)))
        if proxy is not None:  # the ledger keeps, per target, which implementation was handled
            for report in reports:
                if report.address == address:
                    report.implementation = _checksum(proxy.implementation)
        return reports

    def _first_time(self, address: str) -> bool:
        with self._lock:
            if address.lower() in self._done:
                return False
            self._done[address.lower()] = threading.Event()
            return True

    def _finished(self, address: str) -> None:
        with self._lock:
            self._done.setdefault(address.lower(), threading.Event()).set()

    def proxy(self, address: str, expected_implementation: str | None = None, label: str | None = None) -> Report:
        report = self._stamp([self._proxy(address, expected_implementation, label)])[0]
        report.implementation = _checksum(expected_implementation) if expected_implementation else None
        return report

    def relink(self, address: str, implementation: str, label: str | None = None) -> list[Report]:
        """After an upgrade: the new implementation verified if it is not yet, then the proxy linked
        to it again (an Etherscan-style explorer keeps the old link until then; Sourcify reads the
        slot itself, so there only the implementation is verified)."""
        implementation = _checksum(implementation)
        reports = self.contract(implementation)
        if not self.client.supports_proxy_link:
            return reports
        report = self._stamp([self._proxy(address, implementation, label, what="proxy re-link")])[0]
        report.implementation = implementation
        report.kind = "relink"
        return reports + [report]

    def _proxy(
        self, address: str, expected_implementation: str | None, label: str | None, what: str = "proxy link"
    ) -> Report:
        started = time.monotonic()
        address = _checksum(address)
        label = proxy_row_label(label or address[:10], what)
        try:
            receipt = self.client.verify_proxy(address, expected_implementation)
            answer = self.client.wait(
                receipt,
                interval=self.options.poll_interval,
                timeout=self.options.timeout,
                on_progress=lambda a: self.on_progress(address, a.reason),
            )
        except ExplorerError as err:
            return Report(
                label, address, _failure(err, Outcome.FAILED), err.reason, kind="proxy", seconds=_since(started)
            )
        outcome = Outcome.VERIFIED if answer.outcome.is_success else Outcome.FAILED
        return Report(
            label,
            address,
            outcome,
            answer.reason,
            kind="proxy",
            guid=receipt.guid,
            link=self._link(address),
            seconds=_since(started),
        )

    # -- one source submission ----------------------------------------------------------------

    def _source(
        self, address: str, name: str | None, constructor_args: str | None, deployed_type: str | None = None
    ) -> list[Report]:
        from ape_contract_verify.derive import artifacts, derive

        started = time.monotonic()
        label = artifacts.short_name(name or deployed_type or "") or address[:10]
        try:
            artifact = artifacts.find_artifact(name, self.project) if name else self._identify(address, deployed_type)
            label = f"{artifact.label} (blueprint)" if self._is_blueprint(address) else artifact.label
            if self.options.ask_first and not self.options.force and self._already_verified(address):
                return [
                    Report(
                        label,
                        address,
                        Outcome.ALREADY_VERIFIED,
                        "the explorer holds its source",
                        link=self._link(address),
                    )
                ]
            self.on_progress(address, f"deriving {label}")
            options = self.options
            derivation = self.shared.once(
                (
                    "derive",
                    address.lower(),
                    name,
                    constructor_args,
                    options.code_format,
                    options.strict_format,
                    options.check,
                    options.license,
                ),
                lambda: derive.derive(
                    artifact,
                    address,
                    chain_reader=self.chain,
                    code_format=options.code_format,
                    license=options.license,
                    constructor_args=constructor_args,
                    check=options.check,
                    cache=self.cache,
                    strict_format=options.strict_format,
                    creation_record=self._creation_record(),
                ),
            )
        except derive.PrecheckFailed as err:
            return [
                Report(label, address, Outcome.PRECHECK_FAILED, f"{err.field}: {err.reason}", seconds=_since(started))
            ]
        except ContractVerifyError as err:
            return [Report(label, address, Outcome.ERROR, str(err), seconds=_since(started))]
        for warning in derivation.warnings:
            logger.warning("%s: %s", label, warning)
        if derivation.creation_source:
            # debug: a worker thread, whose lines would interleave with the script's own output
            logger.debug("%s: creation code (constructor arguments) from %s", label, derivation.creation_source)
        return [self._submit(label, derivation, started)]

    def _creation_record(self) -> "Callable[[str], CreationRecord] | None":
        """This target's record of creations, for contracts whose creation the chain cannot give.
        None for the embedded local explorer: it reads the same chain through the same reader, so
        it would only repeat the search (and the reason would name an explorer record there is not)."""
        if self.target is not None and self.target.is_local:
            return None
        return self.client.creation_records()

    def _submit(self, label: str, derivation: "Derivation", started: float) -> Report:
        report = self._submit_once(label, derivation.request, derivation, started)
        if report.outcome == Outcome.FAILED and derivation.request.code_format.value == "solidity-standard-json-input":
            # Some explorers want every source of the original compile. Retry once with the whole
            # project's input for this compiler, and say so.
            from ape_contract_verify.derive.derive import with_full_project_input

            try:
                request = with_full_project_input(derivation)
            except Exception as err:  # the first answer stands
                logger.debug("%s: no full-project input to retry with: %s", label, err)
                return report
            if request is not None:
                logger.warning(
                    "%s: the explorer rejected the minimal input (%s); retrying once with the full project input",
                    label,
                    report.reason,
                )
                retried = self._submit_once(label, request, derivation, started)
                retried.warnings = [
                    *retried.warnings,
                    f"minimal input rejected ({report.reason}); retried with the full project input",
                ]
                return retried
        return report

    def _submit_once(
        self, label: str, request: "VerificationRequest", derivation: "Derivation", started: float
    ) -> Report:
        address = request.address
        try:
            self.on_progress(address, "submitting")
            receipt = self.client.verify_source_code(request)
            answer = self.client.wait(
                receipt,
                interval=self.options.poll_interval,
                timeout=self.options.timeout,
                on_progress=lambda a: self.on_progress(address, a.reason),
            )
        except ExplorerError as err:
            return Report(
                label, address, _failure(err), err.reason, warnings=list(derivation.warnings), seconds=_since(started)
            )
        if answer.outcome.is_success:
            outcome = Outcome.ALREADY_VERIFIED if answer.outcome == Outcome.ALREADY_VERIFIED else Outcome.VERIFIED
        else:
            outcome = answer.outcome if answer.outcome in _OWN_OUTCOMES else Outcome.FAILED
        reason = answer.reason
        if outcome == Outcome.FAILED and self.sourcify and self._is_blueprint(address):
            from ape_contract_verify.evm.blueprint import SOURCIFY_UNSUPPORTED

            outcome, reason = Outcome.UNSUPPORTED, f"{SOURCIFY_UNSUPPORTED}; it answered: {answer.reason}"
        # Sourcify says which match it stored; an Etherscan-style explorer says nothing, so the pre-check's word stands.
        match = {"exact_match": "full", "match": "partial"}.get(answer.match or "", derivation.match)
        match = None if outcome == Outcome.UNSUPPORTED else match
        return Report(
            label,
            address,
            outcome,
            reason,
            guid=receipt.guid,
            match=match,
            link=self._link(address),
            warnings=list(derivation.warnings),
            seconds=_since(started),
        )

    def _is_blueprint(self, address: str) -> bool:
        from ape_contract_verify.evm.blueprint import is_blueprint

        try:
            return is_blueprint(self.reader.get_code(address))
        except Exception:  # the explorer's answer stands
            return False

    def _already_verified(self, address: str) -> bool:
        from ape_contract_verify.exceptions import ContractNotVerified

        try:
            record = self.client.contract_record(address)
        except ContractNotVerified:
            return False
        except TargetDown:
            raise  # nothing to submit to
        except ExplorerError as err:
            logger.info("%s: could not ask whether it is verified (%s); submitting", address, err.reason)
            return False
        return record.exact  # a partial match: submit, the exact one replaces it

    def _link(self, address: str) -> str | None:
        # The target knows its pages (Sourcify's repo has its own form); the embedded explorer's
        # pages are only known once it runs, as `browser_url`.
        if self.target is not None and self.target.browser_url:
            return self.target.contract_url(address)
        if self.browser_url:
            return f"{self.browser_url}/address/{address}"
        return self.client.link(address)


# Answers that end a target's submission with a reason of their own, not a verification failure.
_OWN_OUTCOMES = (Outcome.REFUSED, Outcome.UNSUPPORTED_CHAIN, Outcome.INVALID_KEY, Outcome.NOT_FOUND)


def _failure(err: ExplorerError, default: Outcome = Outcome.ERROR) -> Outcome:
    if isinstance(err, TargetDown):  # not the contract's failure
        return Outcome.ERROR
    outcome = err.answer.outcome if isinstance(err.answer, ExplorerAnswer) else None
    if outcome == Outcome.FAILED or outcome in _OWN_OUTCOMES:
        return outcome
    return default


def _since(started: float) -> float:
    return round(time.monotonic() - started, 2)


# --- where to verify -------------------------------------------------------------------------


@contextlib.contextmanager
def explorer_for(
    target: "Target",
    provider: "ProviderAPI | None" = None,
    chain_reader: "ChainReader | None" = None,
    shared: bool = False,
    health: "TargetHealth | None" = None,
    **client_options: "Unpack[ClientOptions]",
) -> Iterator[tuple["VerificationTarget", str | None]]:
    """(client, browser URL) for a resolved ExplorerTarget. A local network with no explorer
    configured gets a local explorer in this process (no server: no browser URL), reading the
    chain through `chain_reader` (default: the Ape provider): its own, stopped on exit, or with
    `shared` the process's one for the chain (`workflow.local_explorers`), which outlives this context."""
    if not target.is_local:
        yield target.client(health=health, **client_options), target.browser_url
        return
    from ape_contract_verify.engine.compilers import process_cache
    from ape_contract_verify.evm.chain import ApeProviderChain
    from ape_contract_verify.explorer.embedded import start_in_process

    if provider is None:
        from ape import chain

        provider = chain.provider
    if shared:
        from ape_contract_verify.workflow import local_explorers

        explorer = local_explorers.shared(provider, chain_reader)
        if explorer is None:  # `shared` starts one when there is none
            raise ContractVerifyError("the local explorer of this chain could not be started")
    else:
        explorer = start_in_process(chain_reader or ApeProviderChain(provider), cache=process_cache())
    try:
        yield local_client(explorer, health=health), None
    finally:
        if not shared:
            explorer.stop()


def local_client(
    explorer: "EmbeddedExplorer", health: "TargetHealth | None" = None, **options: "Unpack[ClientOptions]"
) -> "VerificationTarget":
    """The target of a local explorer in this process: its answers without HTTP (`LocalTarget`)."""
    from ape_contract_verify.workflow.local_target import LocalTarget

    return LocalTarget(explorer, health=health)
