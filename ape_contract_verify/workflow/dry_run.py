"""The dry run: what each target would get, derived and pre-checked, with nothing sent.

`dry_run()` and `ape verify contract … --dry-run [--out DIR]`.

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
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ape_contract_verify.client.provider import Kind
from ape_contract_verify.exceptions import ContractVerifyError, InvalidRequest
from ape_contract_verify.request import CodeFormat
from ape_contract_verify.workflow.choice import NetworkChoice, chain_id_of
from ape_contract_verify.workflow.plan import Derivations, Link, Skip, plan_contract
from ape_contract_verify.workflow.verification import Options

if TYPE_CHECKING:
    from ape.api import ProviderAPI
    from ape.managers.project import ProjectManager

    from ape_contract_verify.client.provider import CreationRecord
    from ape_contract_verify.client.targets import Target
    from ape_contract_verify.evm.reads import ChainReader
    from ape_contract_verify.request import VerificationRequest
    from ape_contract_verify.workflow.run import Item


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
    project: ProjectManager,
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
    for step in plan_contract(chain_reader, project, derivations, address, name, constructor_args, deployed_type):
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


def write(out: Path, target: Target, item: Planned, form: dict[str, str]) -> list[Path]:
    """The request body's files for one submission to one target."""
    written: list[Path] = []
    if item.request is not None:
        suffix = ".sol" if item.request.code_format == CodeFormat.SINGLE_FILE else ".json"
        _write(out, target, item, suffix, item.request.source_code.encode("utf-8"), written)
    form_suffix = ".form.json" if item.request is not None else ".proxy.form.json"
    _write(out, target, item, form_suffix, (json.dumps(form, indent=2) + "\n").encode("utf-8"), written)
    return written


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
    body = requests.Request("POST", url, json=sourcify_body(request)).prepare().body  # requests' own encoding
    if not isinstance(body, bytes):  # requests encodes a json= body to bytes
        raise TypeError(f"requests prepared a {type(body).__name__} body for {url}, not bytes")
    return url, body


def sourcify_lines(target: Target, planned: list[Planned], out: str | None, files: list[Path]) -> Iterator[str]:
    """What a Sourcify target would get, as lines (with `out`, the bodies written and added to
    `files`). Each submission that would not be sent has a line with NOT SENT."""
    for item in planned:
        if refusal := _sourcify_refusal(target, item):
            yield f"  {item.label} {item.address}: NOT SENT: {refusal}"
        elif item.nothing:
            yield from describe(item)
        elif item.request is None:
            yield f"  {item.label} {item.address}: no proxy link is sent to Sourcify (it resolves proxies itself)"
        else:
            url, body = sourcify_submission(target, item.request)
            fields = json.loads(body)
            yield from describe(item, head=f"POST {url}", licence_sent=False)
            yield f"    compilerVersion {fields['compilerVersion']}, contractIdentifier {fields['contractIdentifier']}"
            tx = fields.get("creationTransactionHash")
            yield (
                f"    creationTransactionHash {tx}"
                if tx
                else "    creationTransactionHash: none (Sourcify looks for it)"
            )
            if out:
                yield _write(out, target, item, ".sourcify.json", body, files)


def _sourcify_refusal(target: Target, item: Planned) -> str | None:
    """Why Sourcify would not be sent `item` (None: it would be, or it is no request)."""
    if item.error or item.request is None:
        return item.error
    if target.chain_id is None:
        return "Sourcify needs the chain id, and the node did not say it"
    try:
        sourcify_submission(target, item.request)
    except InvalidRequest as err:
        return str(err)
    return None


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
        return not any(
            item.error or (Kind(target.kind) is Kind.SOURCIFY and _sourcify_refusal(target, item))
            for target in self.targets
            for item in self.submissions[target.name]
        )

    def lines(self, out: str | None = None) -> Iterator[str]:
        """The plan for a person, target by target; with `out`, the exact request bodies written there."""
        yield f"Dry run on {self.network}: nothing is sent."
        for target in self.targets:
            where = target.url or "the embedded local explorer"
            key = "an API key (not shown)" if target.api_key else "no API key"
            yield f"target {target.name} ({target.kind}) at {where}, with {key}:"
            planned = self.submissions[target.name]
            if Kind(target.kind) is Kind.SOURCIFY:
                yield from sourcify_lines(target, planned, out, self.files)
                continue
            for item in planned:
                yield from describe(item)
                if out and item.sent:
                    for path in write(Path(out), target, item, form_for(target, item)):
                        self.files.append(path)
                        yield f"    wrote {path}"

    def write(self, out: str) -> list[Path]:
        """Write every request body under `out` (see the module's layout); returns the files."""
        for _ in self.lines(out):
            pass
        return self.files


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
    reader, derivations = ApeProviderChain(provider), Derivations()
    derivations.kept.update({i.address.lower(): i.kept_input for i in items if i.kept_input is not None})
    # Sourcify takes standard-json input only: a real run sends that to it whatever the format.
    format_of = {t.name: CodeFormat(Kind(t.kind).format_for(options.code_format)) for t in targets}
    # Where the chain cannot give a factory child's creation, the first explorer's record can.
    record = next((_record_of(t) for t in targets if t.kind is Kind.ETHERSCAN and t.url), None)
    plans: dict[CodeFormat, list[Planned]] = {}
    for fmt in sorted(set(format_of.values()), key=lambda f: f is not options.code_format):
        with_fmt = dataclasses.replace(options, code_format=fmt)
        plans[fmt] = []
        for i in items:
            plans[fmt] += plan(
                i.address, i.name, reader, project, derivations, with_fmt, i.constructor_args, record, i.deployed_type
            )
    return DryRunPlan(choice.label(), list(targets), {t.name: plans[format_of[t.name]] for t in targets})


def _record_of(target: Target) -> Callable[[str], CreationRecord] | None:
    try:
        return target.client().creation_records()
    except Exception:  # a target whose client cannot be made reads nothing here; the run says why
        return None


def _write(out: str | Path, target: Target, item: Planned, suffix: str, body: bytes, files: list[Path]) -> str:
    """The one writer of a body file, `<out>/<target>/<Contract>-<address><suffix>`, byte for byte
    (no newline translation); added to `files`, and the line that says so."""
    folder = Path(out) / _safe(target.name)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_safe(item.label.split(' (')[0].split(':')[-1])}-{item.address}{suffix}"
    path.write_bytes(body)
    files.append(path)
    return f"    wrote {path}"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text) or "contract"
