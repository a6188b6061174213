"""One contract's verification planned once: the steps a run carries out on each target, and the dry run that prints them.

`plan_contract` decides what `address` gets: nothing (a data contract), or a proxy's implementation,
its own source (none for a factory's template, skipped when no artifact answers to an unnamed
proxy) and its link. `Verification.contract` carries the steps out on its target; the dry run
derives the same steps and prints them. Both identify and derive through one `Derivations` (with
the run's `Options`), under the same keys, so a contract is identified and derived once however
many targets (or a dry run) ask.

The dry run: what each target would get, derived and pre-checked, with nothing sent
(`dry_run()` and `ape verify contract … --dry-run [--out DIR]`).

Per target it prints what would be sent (compiler, settings, libraries, constructor arguments,
licence; never the API key) and, with DIR, writes the request bodies a real run sends:

    DIR/<target>/<Contract>-<address>.json|.sol       the `sourceCode` field, byte for byte
    DIR/<target>/<Contract>-<address>.form.json       every form field but `apikey`, in sending order
    DIR/<target>/<Proxy>-<address>.proxy.form.json    the proxy link (verifyproxycontract)
    DIR/<target>/<Contract>-<address>.sourcify.json   a Sourcify target's whole POST body

The forms come from the same `protocol.forms` functions the client submits with, with the fields
`ExplorerClient._call` adds (module, action, chainid): a real run's body is
`urlencode(form)` plus the key. A Sourcify body is `client.sourcify.sourcify_body`, the function
`SourcifyClient.verify_source_code` sends, encoded by requests as its `json=` is: the file is
the HTTP body byte for byte (the key rides in a header, never in it). Sourcify gets no proxy link
(it resolves proxies itself) and standard-json input only, as a real run sends it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from ape_contract_verify.client.provider import Kind
from ape_contract_verify.exceptions import ContractVerifyError, InvalidRequest
from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.protocol.values import checksum
from ape_contract_verify.request import CodeFormat
from ape_contract_verify.workflow.choice import NetworkChoice, chain_id_of

if TYPE_CHECKING:
    from ape.api import ProviderAPI
    from ape.managers.project import ProjectManager

    from ape_contract_verify.client.targets import Target
    from ape_contract_verify.config import ContractVerifyConfig
    from ape_contract_verify.derive.artifacts import Artifact
    from ape_contract_verify.derive.derive import Derivation
    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.evm.reads import ChainReader, CreationRecord
    from ape_contract_verify.request import VerificationRequest

logger = get_logger()

T = TypeVar("T")
# What `Derivations.once` keys a result by: its kind ("identify", "derive") and what it was made of.
Key = tuple[object, ...]


@dataclass(frozen=True)
class Skip:
    """Nothing to submit for `address`: a data contract (nothing to verify), or an unnamed proxy's
    own source no artifact answers to (skipped)."""

    label: str
    address: str
    outcome: Outcome
    reason: str


@dataclass(frozen=True)
class Source:
    """A source submission: `address` as `artifact`, or why it has none (`error`)."""

    label: str  # the artifact's label (`(blueprint)` for one); else the name asked for, or the address
    address: str
    name: str | None = None
    constructor_args: str | None = None
    artifact: Artifact | None = None
    error: str = ""
    blueprint: bool = False


@dataclass(frozen=True)
class Link:
    """The proxy at `address` linked to `implementation`, once that is verified. `label`: its own
    row's; `unlinked`, for a factory's template, what a target that links no proxies says instead."""

    label: str
    address: str
    implementation: str
    unlinked: str = ""


Step = Skip | Source | Link


def plan_contract(
    reader: ChainReader,
    derivations: Derivations,
    address: str,
    name: str | None = None,
    constructor_args: str | None = None,
    deployed_type: str | None = None,
    claim: Callable[[str], bool] = lambda address: True,
) -> list[Step]:
    """What `address` gets, in order: a proxy's implementation (when `claim` says this run has not
    handled it yet), its own source, then its link. A factory's template (no compiler made it) gets
    only its link, unless it was deployed or named as a type. `deployed_type`: the type Ape deployed
    there (the ledger's record), trusted over the code, which several types may share."""
    from ape_contract_verify.evm import proxies
    from ape_contract_verify.evm.bytecode import DATA_CONTRACT, is_data_contract

    address = checksum(address)
    # No type compiles to code that never runs, whatever deployed it: say what it is.
    if name is None and is_data_contract(reader.get_code(address)):
        return [Skip("data contract", address, Outcome.NOTHING_TO_VERIFY, DATA_CONTRACT)]

    def source(at: str, name: str | None = None, args: str | None = None, deployed: str | None = None) -> Source:
        from ape_contract_verify.derive import artifacts
        from ape_contract_verify.evm.blueprint import is_blueprint

        try:
            artifact = (
                artifacts.find_artifact(name, derivations.project)
                if name
                else derivations.artifact(at, deployed, reader)
            )
        except ContractVerifyError as err:
            return Source(artifacts.short_name(name or deployed or "") or at[:10], at, name, args, error=str(err))
        try:
            blueprint = is_blueprint(reader.get_code(at))
        except Exception:  # the explorer's answer stands
            blueprint = False
        return Source(
            f"{artifact.label} (blueprint)" if blueprint else artifact.label, at, name, args, artifact, "", blueprint
        )

    proxy = proxies.detect_proxy(reader, address)
    if proxy is None:
        return [source(address, name, constructor_args, deployed_type)]
    implementation = checksum(proxy.implementation)
    steps: list[Step] = [source(implementation)] if claim(implementation) else []
    if proxy.stamped and name is None and not deployed_type:
        return [*steps, Link(proxy.label, address, implementation, proxies.stamped_reason(proxy))]
    own: Step = source(address, name, constructor_args, deployed_type)
    if name is None and isinstance(own, Source) and own.error:
        own = Skip(address[:10], address, Outcome.SKIPPED, f"proxy source: {own.error}")
    return [*steps, own, Link(own.label, address, implementation)]


class Derivations:
    """What the targets of one run share per contract: the project, the compile cache, which
    artifact an address is, and its derivation (or the error deriving it). Computed once, under a
    lock per key.

    `prepared` holds the artifact of each address the deploy hook resolved on the script's thread,
    with what deriving it needs of Ape (`derive.artifacts.prepare`), so that workers need not call
    into Ape's managers while the script can (`derive.ape_gate`). A plain dict: the script's
    thread never waits on a worker's lock."""

    def __init__(self, project: ProjectManager) -> None:
        self.project = project
        self._lock = threading.Lock()
        self._keys: dict[Key, threading.Lock] = {}
        # Each key's value is what its `make` returned (`once` gives it back as that type), or raised.
        self._results: dict[Key, object] = {}
        self.prepared: dict[str, Artifact] = {}  # address (lower case) -> Artifact, resolved
        # address (lower case) -> the group input Ape built it from, as the ledger kept it at the
        # deploy: the one the pre-check widens to, whatever was recompiled or edited since.
        self.kept: dict[str, JsonObject] = {}

    @functools.cached_property
    def cache(self) -> CompileCache:
        """The process's (shared with the local explorer), looked up on first use: the deploy hook
        makes its Derivations at the script's first deploy, where importing the engine would cost."""
        from ape_contract_verify.engine.compilers import process_cache

        return process_cache()

    def prepare(self, address: str, deployed_type: str, runtime: bytes) -> bool:
        """Resolve, on the caller's (the script's) thread, the artifact Ape deployed at `address`
        and what deriving it needs of Ape; False when the manifests alone cannot say (workers then
        resolve it once the script lets them)."""
        from ape_contract_verify.derive import artifacts

        try:
            artifact = artifacts.find_artifact(deployed_type, self.project, compile=False)
        except artifacts.ArtifactNotFound as err:
            logger.debug("%s: %s not resolved at the deploy: %s", address, deployed_type, err)
            return False
        if not artifacts.has_code_of(artifact, runtime):
            return False
        same = next((a for a in self.prepared.values() if a.reference == artifact.reference), None)
        if same is not None:
            artifact.resolved.update(same.resolved)  # the same type deployed again
        else:
            artifacts.prepare(artifact)
        self.prepared[address.lower()] = artifact
        return True

    def once(self, key: Key, make: Callable[[], T]) -> T:
        with self._lock:
            key_lock = self._keys.setdefault(key, threading.Lock())
        with key_lock:
            if key not in self._results:
                try:
                    self._results[key] = make()
                except Exception as err:  # every target reports the same error
                    self._results[key] = err
        value = self._results[key]
        if isinstance(value, Exception):  # no `make` builds an exception
            raise value
        return cast(T, value)  # the key names what `make` built

    def artifact(self, address: str, deployed_type: str | None, reader: ChainReader) -> Artifact:
        """The artifact `address` is: the one prepared at its deploy, else the type Ape deployed
        there if it has the code, else what the project's artifacts identify."""
        from ape_contract_verify.derive import artifacts
        from ape_contract_verify.evm.reads import creation_input

        prepared = self.prepared.get(address.lower())
        if prepared is not None:
            return prepared

        def find() -> Artifact:
            runtime = reader.get_code(address)
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
                    address, self.project, runtime, self.cache, creation=lambda: creation_input(reader, address)
                )
            except ContractVerifyError:
                if recorded is None:
                    raise
                # Recompiled since the deploy (`add_library` compiles a library alone): the type Ape
                # deployed stands, and the pre-check compiles the inputs it was built from.
                return recorded

        found = self.once(("identify", address.lower(), deployed_type), find)
        kept = self.kept.get(address.lower())
        return found if kept is None else dataclasses.replace(found, resolved={**found.resolved, "group": kept})


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
    # Send the contract's own sources, not the whole input Ape compiled it from (config's).
    minimal_input: bool = False
    poll_interval: float = 5.0
    timeout: float = 300.0

    @classmethod
    def from_config(
        cls,
        cfg: ContractVerifyConfig,
        code_format: CodeFormat | None = None,
        check: bool | None = None,
        *,
        force: bool = False,
        ask_first: bool = True,
    ) -> Options:
        """The `contract_verify:` config's options; a `code_format` given is strict (no other format is
        sent in its place), `check` None is the config's. The CLI, the API, the deploy hook and
        `publish=True` all start here."""
        return cls(
            code_format=code_format or cfg.codeformat,
            strict_format=bool(code_format),
            check=cfg.check if check is None else check,
            license=cfg.license,
            minimal_input=cfg.minimal_input,
            poll_interval=cfg.poll_interval,
            timeout=cfg.timeout,
            force=force,
            ask_first=ask_first,
        )

    def derive(
        self,
        derivations: Derivations,
        step: Source,
        chain: ChainReader | None,
        creation_record: Callable[[str], CreationRecord] | None,
    ) -> Derivation:
        """`step`'s request with these options, derived and pre-checked once per run (`derivations`,
        under what it was made of); the creation record is asked only where the chain cannot tell.
        A step with no artifact raises its error."""
        from ape_contract_verify.derive import derive

        artifact = step.artifact
        if artifact is None:
            raise ContractVerifyError(step.error)
        wanted = {key: getattr(self, key) for key in derive.DeriveOptions.__annotations__}  # what `derive` takes
        return derivations.once(
            ("derive", step.address.lower(), step.name, step.constructor_args, *sorted(wanted.items())),
            lambda: derive.derive(
                artifact,
                step.address,
                chain_reader=chain,
                constructor_args=step.constructor_args,
                cache=derivations.cache,
                creation_record=creation_record,
                **wanted,
            ),
        )


# --- the dry run -------------------------------------------------------------------------------


@dataclass
class Planned:
    """One submission a real run would make: a source (with its request) or a proxy link."""

    label: str
    address: str
    request: VerificationRequest | None = None  # None for a proxy link
    implementation: str | None = None  # for a proxy link
    match: str | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    creation_source: str = ""  # which source gave the creation code (the constructor arguments)
    nothing: str | None = None  # why there is nothing to submit (a data contract): no error, no request

    @property
    def sent(self) -> bool:
        """A real run would send this (a request or a proxy link)."""
        return not self.error and not self.nothing


def plan(
    address: str,
    name: str | None,
    chain_reader: ChainReader,
    derivations: Derivations,
    options: Options,
    constructor_args: str | None = None,
    creation_record: Callable[[str], CreationRecord] | None = None,
    deployed_type: str | None = None,
) -> list[Planned]:
    """What `Verification.contract` would submit for `address`: `plan_contract`'s steps, in its
    order, each source derived as a run derives it (through the same `derivations` and `options`)."""
    from ape_contract_verify.derive.derive import PrecheckFailed
    from ape_contract_verify.workflow.report import proxy_row_label

    planned = []
    for step in plan_contract(chain_reader, derivations, address, name, constructor_args, deployed_type):
        item = Planned(step.label, step.address)
        if isinstance(step, Link):
            item.label, item.implementation = proxy_row_label(step.label), step.implementation
        elif isinstance(step, Skip) and step.outcome.is_done:  # a data contract
            item.nothing = step.reason
        elif isinstance(step, Skip):  # a row that fails in a run: not sent
            item.error = step.reason
        else:
            try:
                derived = options.derive(derivations, step, chain_reader, creation_record)
            except PrecheckFailed as err:
                item.error = f"pre-check failed: {err.field}: {err.reason}"
            except ContractVerifyError as err:
                item.error = str(err)
            else:
                item.request, item.match, item.warnings = derived.request, derived.match, list(derived.warnings)
                item.creation_source = derived.creation_source
        planned.append(item)
    return planned


def form_for(target: Target, item: Planned) -> dict[str, str]:
    """The POST body a real run sends for `item` to `target`, without `apikey`."""
    from ape_contract_verify.protocol.forms import validate_proxy_form, validate_request

    query = {"module": "contract", "action": "verifysourcecode" if item.request is not None else "verifyproxycontract"}
    if target.url and target.sends_chain_id:  # as Target.client() passes it to the client
        query["chainid"] = str(target.chain_id)
    if item.request is not None:
        return {**query, **validate_request(item.request)}
    return {**query, **validate_proxy_form({"address": item.address, "expectedimplementation": item.implementation})}


def describe(item: Planned, head: str | None = None, licence_sent: bool = True) -> list[str]:
    """What the explorer would get, as lines for a person. `head` replaces the first line's
    `verifysourcecode as <name>`; Sourcify gets no licence field (`licence_sent=False`)."""
    from ape_contract_verify.protocol.licenses import license_name

    if item.error:
        return [f"  {item.label} {item.address}: NOT SENT: {item.error}"]
    if item.nothing:
        return [f"  {item.label} {item.address}: {item.nothing}"]
    if item.request is None:
        return [f"  {item.label} {item.address}: verifyproxycontract, expected implementation {item.implementation}"]
    r = item.request
    settings = [
        f"optimizer {'on' if r.optimization_used else 'off'}" + (f", {r.runs} runs" if r.runs is not None else "")
    ]
    if r.evm_version:
        settings.append(f"evmVersion {r.evm_version}")
    if r.via_ir is not None:
        settings.append(f"viaIR {'on' if r.via_ir else 'off'}")
    licence = f"{license_name(r.license_type)} ({r.license_type})" if r.license_type is not None else "none"
    return [
        f"  {item.label} {item.address}: {head or f'verifysourcecode as {r.contract_name}'}",
        f"    compiler {r.compiler_version}, {r.code_format.value}, {len(r.source_code.encode())} bytes of source",
        f"    settings: {', '.join(settings)}",
        f"    libraries: {', '.join(f'{k}={v}' for k, v in sorted(r.libraries.items())) or 'none'}",
        f"    constructor arguments: {('0x' + r.constructor_arguments) if r.constructor_arguments else 'none'}"
        + (f" (from {item.creation_source})" if item.creation_source not in ("", "transaction", "trace") else ""),
        *([f"    licence: {licence}"] if licence_sent else []),
        f"    pre-check: {'skipped' if item.match is None else item.match + ' match'}",
        *(f"    warning: {w}" for w in item.warnings),
    ]


def sourcify_submission(target: Target, request: VerificationRequest) -> tuple[str, bytes]:
    """The URL and the exact HTTP body `SourcifyClient.verify_source_code` sends for `request` to
    `target`. Raises InvalidRequest (naming the field) for a request Sourcify's rules refuse."""
    import requests

    from ape_contract_verify.client.sourcify import sourcify_body
    from ape_contract_verify.protocol.forms import validate_read_form

    if target.chain_id is None or not target.url:
        raise InvalidRequest("target", f"{target.name} has no chain id or no URL", "resolve it on a connected network")
    address = validate_read_form({"address": request.address})
    url = f"{target.url.rstrip('/')}/v2/verify/{int(target.chain_id)}/{address}"  # the client's base_url + path
    # requests' own encoding: a json= body is bytes
    return url, cast(bytes, requests.Request("POST", url, json=sourcify_body(request)).prepare().body)


def sent(target: Target, item: Planned) -> tuple[list[str], dict[str, bytes], bool]:
    """What `target` gets of `item` in a real run: the lines saying it, each body sent by the
    suffix of its file (none: nothing is sent), and whether that is as a run wants it (False: NOT
    SENT, an error or a request Sourcify's rules refuse)."""
    if Kind(target.kind) is not Kind.SOURCIFY:
        if not item.sent:
            return describe(item), {}, not item.error
        form = (json.dumps(form_for(target, item), indent=2) + "\n").encode("utf-8")
        if item.request is None:
            return describe(item), {".proxy.form.json": form}, True
        suffix = ".sol" if item.request.code_format == CodeFormat.SINGLE_FILE else ".json"
        return describe(item), {suffix: item.request.source_code.encode("utf-8"), ".form.json": form}, True
    refusal, url, body = item.error, "", b""
    if not refusal and item.request is not None and target.chain_id is None:
        refusal = "Sourcify needs the chain id, and the node did not say it"
    elif not refusal and item.request is not None:
        try:
            url, body = sourcify_submission(target, item.request)
        except InvalidRequest as err:
            refusal = str(err)
    if refusal:
        return [f"  {item.label} {item.address}: NOT SENT: {refusal}"], {}, False
    if item.nothing or item.request is None:
        lines = describe(item) if item.nothing else [f"  {item.label} {item.address}: {NO_PROXY_LINK}"]
        return lines, {}, True
    fields = json.loads(body)
    tx = fields.get("creationTransactionHash")
    return (
        [
            *describe(item, head=f"POST {url}", licence_sent=False),
            f"    compilerVersion {fields['compilerVersion']}, contractIdentifier {fields['contractIdentifier']}",
            f"    creationTransactionHash {tx}" if tx else "    creationTransactionHash: none (Sourcify looks for it)",
        ],
        {".sourcify.json": body},
        True,
    )


NO_PROXY_LINK = "no proxy link is sent to Sourcify (it resolves proxies itself)"


@dataclass
class DryRunPlan:
    """What a real run would send: per target, its submissions (`Planned`: the request, or why not)."""

    network: str
    targets: list[Target]  # in run order
    submissions: dict[str, list[Planned]]  # target name -> what it would get
    files: list[Path] = field(default_factory=list)  # the bodies written by `lines(out)`

    @property
    def ok(self) -> bool:
        """Every submission of every target derived (and, for Sourcify, sendable)."""
        return all(sent(target, item)[2] for target in self.targets for item in self.submissions[target.name])

    def lines(self, out: str | None = None) -> Iterator[str]:
        """The plan for a person, target by target; with `out`, the exact request bodies written
        there, byte for byte (no newline translation), as `<out>/<target>/<Contract>-<address><suffix>`."""
        yield f"Dry run on {self.network}: nothing is sent."
        for target in self.targets:
            where = target.url or "the embedded local explorer"
            key = "an API key (not shown)" if target.api_key else "no API key"
            yield f"target {target.name} ({target.kind}) at {where}, with {key}:"
            for item in self.submissions[target.name]:
                lines, bodies, _ = sent(target, item)
                yield from lines
                for suffix, body in bodies.items() if out else ():
                    folder = Path(str(out)) / _safe(target.name)
                    folder.mkdir(parents=True, exist_ok=True)
                    path = folder / f"{_safe(item.label.split(' (')[0].split(':')[-1])}-{item.address}{suffix}"
                    path.write_bytes(body)
                    self.files.append(path)
                    yield f"    wrote {path}"

    def write(self, out: str | Path) -> list[Path]:
        """Write every request body under `out` (see the module's layout); returns the files."""
        for _ in self.lines(str(out)):
            pass
        return self.files


@dataclass(frozen=True)
class Item:
    """One contract to verify on every target of its network."""

    network: str
    address: str
    name: str | None = None
    constructor_args: str | None = None
    deployed_type: str | None = None  # what Ape deployed there (the ledger's record), see Verification.contract
    targets: frozenset[str] | None = None  # the target names to verify it on; None: every one of its network
    relink: str | None = None  # a proxy that moved: link it to this implementation (Verification.relink)
    # The compile group's input Ape built it from, as the ledger kept it at the deploy.
    kept_input: JsonObject | None = field(default=None, compare=False, hash=False)

    @property
    def label(self) -> str:
        from ape_contract_verify.derive.artifacts import short_name

        return short_name(self.name or self.deployed_type or "") or self.address[:10]


def plan_dry_run(
    choice: NetworkChoice,
    provider: ProviderAPI,
    items: list[Item],
    code_format: CodeFormat | None,
    check: bool | None,
) -> DryRunPlan:
    """The dry run of a verification: every target's submissions derived and pre-checked, nothing
    sent, with a real run's options (`Options.from_config`: the config's, the call's over them), for
    the items `api.verify` would run (an unnamed address's: what the ledger recorded at its deploy)."""
    from ape import config, project

    from ape_contract_verify.evm.chain import ApeProviderChain

    options = Options.from_config(config.get_config("contract_verify"), code_format, check)
    # The same targets a real run resolves: the names, explorer URL and key given, then config.
    targets = choice.targets(chain_id_of(provider))
    reader, derivations = ApeProviderChain(provider), Derivations(project)
    derivations.kept.update({i.address.lower(): i.kept_input for i in items if i.kept_input is not None})
    # Where the chain cannot give a factory child's creation, the first explorer's record can.
    record = next((_record_of(t) for t in targets if t.kind is Kind.ETHERSCAN and t.url), None)
    plans: dict[str, list[Planned]] = {}  # code format -> every contract planned in it
    submissions: dict[str, list[Planned]] = {}
    for target in targets:
        # Sourcify takes standard-json input only: a real run sends that to it whatever the format.
        fmt = Kind(target.kind).format_for(options.code_format)
        if fmt not in plans:
            with_fmt = dataclasses.replace(options, code_format=CodeFormat(fmt))
            plans[fmt] = [
                planned
                for i in items
                for planned in plan(
                    i.address, i.name, reader, derivations, with_fmt, i.constructor_args, record, i.deployed_type
                )
            ]
        submissions[target.name] = plans[fmt]
    return DryRunPlan(choice.label(), list(targets), submissions)


def _record_of(target: Target) -> Callable[[str], CreationRecord] | None:
    try:
        return target.client().creation_records()
    except Exception:  # a target whose client cannot be made reads nothing here; the run says why
        return None


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text) or "contract"
