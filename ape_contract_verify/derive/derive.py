"""Build artifacts + the chain -> a VerificationRequest, checked by the engine before it is sent.

Everything an explorer needs is derived, not asked for: the compiler version with its commit and
the exact settings come from the manifest Ape wrote; the sources from the compiler plugin's own
import resolution; library addresses and constructor arguments from the chain. The pre-check then
runs the local explorer's own `Verifier` on the very request about to be submitted, so a
submission that cannot pass is stopped here, with the reason the explorer would give.

What the chain holds for the address (`read_chain`) and the constructor arguments (the chain's,
or the user's checked against them) are read here too.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, cast

from ape_contract_verify.derive.artifacts import (
    Artifact,
    ArtifactNotFound,
    CompilerJson,
    Libraries,
    group_input,
    project_remappings,
    standard_input,
)
from ape_contract_verify.engine.verifier import constructor_arguments_reason, constructor_inputs
from ape_contract_verify.evm import blueprint, bytecode
from ape_contract_verify.evm.abi import abi_type
from ape_contract_verify.evm.reads import Creation, CreationRecord, MemoizingChain, attempts_of
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.json_types import JsonValue
from ape_contract_verify.protocol.licenses import code_from_source, license_code
from ape_contract_verify.protocol.values import checksum as _checksum
from ape_contract_verify.request import CodeFormat, VerificationRequest

if TYPE_CHECKING:
    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.evm.reads import ChainReader
    from ape_contract_verify.protocol.inputs import CompilerInput

# --- what the chain holds for an address: its runtime code and the input that created it ------------
# Read through the chain's reader or, when it cannot say (a factory's child on a node without
# traces), from an explorer's record of the creation.


@dataclass
class OnChain:
    runtime: bytes
    creation: Creation | None = None  # its source: transaction, trace, fork replay, explorer record, …
    tried: list[str] = field(default_factory=list)  # the sources that could not, in words


def chain_reader_or_provider(chain_reader: ChainReader | None = None) -> ChainReader:
    """The given reader, or one on the active Ape provider."""
    if chain_reader is not None:
        return chain_reader
    from ape import chain

    from ape_contract_verify.evm.chain import ApeProviderChain

    return ApeProviderChain(chain.provider)


def read_chain(
    address: str,
    chain_reader: ChainReader | None = None,
    creation_record: Callable[[str], CreationRecord | None] | None = None,
) -> OnChain:
    """Runtime code and the creation input, through the active Ape provider by default.

    The chain reader finds the creation (its transaction, the node's traces, or a replay on a
    fork); when it cannot, `creation_record(address)`, an explorer's record of the creation
    (`evm.reads.CreationRecord`), is asked."""
    reader = chain_reader_or_provider(chain_reader)
    runtime = bytes(reader.get_code(address))
    creation = reader.find_creation(address) if runtime else None
    if creation is not None:
        source = creation.source or ("trace" if creation.factory else "transaction")
        return OnChain(runtime, dataclasses.replace(creation, input=bytes(creation.input), source=source))
    tried = attempts_of(reader, address) if runtime else []
    if runtime and creation_record is not None:
        record = creation_record(address)
        if record is not None and record.input:
            known = Creation(record.tx_hash or "", bytes(record.input), factory=record.factory, source=record.source)
            return OnChain(runtime, known, tried)
        tried.append(record.note if record is not None else "the explorer's record (none)")
    return OnChain(runtime, None, tried)


def tx_hash_of(value: str | bytes | None) -> str | None:
    text = value if isinstance(value, str) else ("0x" + bytes(value).hex() if value else "")
    return text if len(text) == 66 and text[:2] == "0x" else None


# --- constructor arguments: the chain's, or the user's checked against them ------------------------
# A difference is explained (argument by argument) with the engine's own text, so the pre-check and
# the explorer word it the same way.


class PrecheckFailed(ContractVerifyError):
    """The derived request would not verify: `field` names the input that differs."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"Local pre-check failed ({field}): {reason}")


def _inputs(artifact: Artifact) -> list[CompilerJson]:
    return constructor_inputs(list(artifact.contract_type.abi))


def sources_tried(tried: list[str] | None = None) -> str:
    """What was tried for a creation, in words: only what the chain reader and the target tried on
    this network (an in-process chain has no trace API to name, the embedded explorer no record)."""
    return f"tried {', '.join(tried)}" if tried else "no source of it answered"


def not_found_reason(tried: list[str] | None = None) -> str:
    """The one answer when no source gave the creation code: what was tried, and the way out."""
    return (
        f"the creation code of this contract was not found ({sources_tried(tried)}). "
        "Pass them with --constructor-args, as values or ABI-encoded hex"
    )


def resolve_constructor_args(
    artifact: Artifact, given: str | None, derived: str | None, tried: list[str] | None = None
) -> str:
    """The arguments to submit: the chain's (`derived`), or `given` when it agrees with them.
    `tried` names the creation sources that could not answer, for the reason when none did."""
    if given is None:
        if derived is None and _inputs(artifact):
            raise PrecheckFailed("constructor arguments", not_found_reason(tried))
        return derived or ""
    encoded = encode_constructor_args(artifact, given)
    if derived is not None and encoded.lower() != derived.lower():
        raise PrecheckFailed(
            "constructor arguments",
            f"--constructor-args: {constructor_arguments_reason(encoded.lower(), derived.lower(), list(artifact.contract_type.abi))}; "
            "drop --constructor-args to use the chain's",
        )
    return encoded


def encode_constructor_args(artifact: Artifact, given: str) -> str:
    """Raw hex (with or without 0x) as is, or comma-separated / JSON-list values encoded with the ABI."""
    text = given.strip()
    hex_text = text.removeprefix("0x")
    inputs = _inputs(artifact)
    is_hex = all(c in "0123456789abcdefABCDEF" for c in hex_text)
    # Raw hex: 0x and hex digits only ("0x10, true" is a list of values), or whole ABI words.
    if (text.startswith("0x") and is_hex) or (hex_text and is_hex and len(hex_text) % 64 == 0):
        if len(hex_text) % 2:
            raise PrecheckFailed("constructor arguments", "hex constructor arguments must have an even length")
        return hex_text.lower()
    from eth_abi.abi import encode

    values: list[JsonValue]
    try:
        values = json.loads(text if text.startswith("[") else f"[{text}]")
    except json.JSONDecodeError:
        values = [v.strip() for v in text.split(",")] if text else []
    if len(values) != len(inputs):
        signature = ", ".join(f"{i.get('type')} {i.get('name')}" for i in inputs) or "none"
        raise PrecheckFailed(
            "constructor arguments",
            f"{len(values)} value(s) given, the constructor takes {len(inputs)} ({signature})",
        )
    types = [abi_type(i) for i in inputs]
    try:
        return encode(types, [_coerce(t, v) for t, v in zip(types, values)]).hex()
    except Exception as err:
        raise PrecheckFailed("constructor arguments", f"cannot encode {values} as ({', '.join(types)}): {err}")


def _coerce(abi_type: str, value: JsonValue) -> object:
    """The value eth_abi encodes as `abi_type` (it takes any Python value it can encode)."""
    if abi_type.endswith("]") and isinstance(value, list):
        inner = abi_type[: abi_type.rindex("[")]
        return [_coerce(inner, v) for v in value]
    if abi_type.startswith(("uint", "int")) and isinstance(value, str):
        return int(value, 0)
    if abi_type == "bool" and isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    if abi_type.startswith("bytes") and isinstance(value, str):
        return bytes.fromhex(value.removeprefix("0x"))
    if abi_type == "address" and isinstance(value, str):
        return _checksum(value)
    return value


def license_of(artifact: Artifact, override: str | None = None) -> int:
    if override:
        return license_code(override)
    source = artifact.source_path.read_text(encoding="utf8") if artifact.source_path.is_file() else ""
    if artifact.is_vyper:  # Vyper's NatSpec says `@license`
        source = source.replace("@license", "SPDX-License-Identifier:")
    return code_from_source(source)


# --- the pre-check -----------------------------------------------------------------------------


def precheck(
    request: VerificationRequest,
    chain_reader: ChainReader,
    cache: CompileCache | None = None,
    diagnose: bool = True,
    notes: list[str] | None = None,
) -> str:
    """Verify `request` with the local explorer's engine, on `chain_reader` (the run's: its
    creation search is cached) and `cache` (the run's: derive's compile is then a hit).
    "full" or "partial", or PrecheckFailed naming the input that differs, in the engine's words.
    Without `diagnose`, a mismatch is not searched for the setting that differs. `notes` gets
    what the summary should say of a match (the hash seed that reproduced a Vyper 0.3.7 code)."""
    from ape_contract_verify.engine.verifier import Verifier

    # Without the creation transaction (a factory's, on a node without traces) the runtime code
    # is what can be checked here; the explorer, which has the transaction, checks the rest.
    result = Verifier(chain_reader, cache, require_creation=False).verify(
        request, diagnose_compiles=None if diagnose else 0
    )
    if not result.verified:
        raise PrecheckFailed(result.setting or "source", result.reason)
    if result.hash_seed is not None and notes is not None:
        notes.append(f"hash seed: {result.reason}")  # as the summary finds it
    return result.match or "full"


# --- derivation --------------------------------------------------------------------------------


@dataclass
class Derivation:
    """A request ready to submit, and what was learnt on the way."""

    request: VerificationRequest
    artifact: Artifact
    match: str | None = None  # the pre-check's "full"/"partial"; None when skipped
    warnings: list[str] = field(default_factory=list)
    compile_input: CompilerJson = field(default_factory=dict)
    creation_source: str = ""  # which source gave the creation code (and so the constructor arguments)


def _compile(
    artifact: Artifact, input_json: CompilerJson, cache: CompileCache | None, warnings: list[str]
) -> CompilerJson:
    """The artifact's compiler output for `input_json`, asked for exactly as the engine asks for it
    (same version text, same output selection), so the pre-check's compile is a cache hit."""
    from ape_contract_verify.engine.compilers import WIDENED, compile_input, with_output_selection

    output = compile_input(
        artifact.explorer_compiler_version,
        # The artifact's compiler input: solc's or vyper's standard JSON, as Ape builds it.
        with_output_selection(cast("CompilerInput", input_json), artifact.source_id, artifact.name),
        cache=cache,
    )
    if output.get(WIDENED) and output[WIDENED] not in warnings:
        warnings.append(output[WIDENED])  # the engine's narrowing crashed solc: say so in the report
    try:
        # Read on by key by the pre-check's callers, as the compiler's JSON.
        return cast(CompilerJson, output["contracts"][artifact.source_id][artifact.name])
    except KeyError:
        raise ArtifactNotFound(f"{artifact.label}: the compiler output has no {artifact.qualified_name}") from None


def _libraries_from_chain(compiled: CompilerJson, runtime: bytes, creation: bytes | None) -> Libraries:
    """{file: {library: address}} read at the link positions of the deployed code."""
    libraries: Libraries = {}
    for which, code in (("deployedBytecode", runtime), ("bytecode", creation)):
        refs = (compiled["evm"].get(which) or {}).get("linkReferences") or {}
        if not code:
            continue
        for pos in bytecode.link_positions(refs):
            chunk = code[pos.start : pos.start + pos.length]
            if len(chunk) == pos.length:
                libraries.setdefault(pos.file, {}).setdefault(pos.library, "0x" + chunk.hex())
    return libraries


class DeriveOptions(TypedDict, total=False):
    """What the user asks of a derivation (`derive`'s keywords that a run passes on as they came)."""

    code_format: str
    strict_format: bool
    check: bool
    license: str | None
    minimal_input: bool


def derive(
    artifact: Artifact,
    address: str,
    *,
    chain_reader: ChainReader | None = None,
    code_format: str = "standard-json",
    license: str | None = None,
    constructor_args: str | None = None,
    check: bool = True,
    cache: CompileCache | None = None,
    manifest_libraries: Libraries | None = None,
    strict_format: bool = False,
    creation_record: Callable[[str], CreationRecord | None] | None = None,
    minimal_input: bool = False,
) -> Derivation:
    """Everything verifysourcecode needs for `artifact` at `address`, checked against the chain.

    A flat file the flattener refuses, or one that does not compile to the deployed code where
    standard-json does, is sent as standard-json with a warning, or with `strict_format` (the user
    asked for a flat file) fails with that reason. `creation_record` is an explorer's record of the
    creation, asked when the chain cannot give it (see `read_chain`). Standard-json is the input Ape compiled
    the contract from when its build is at hand (`_as_built`), unless `minimal_input`."""
    address = _checksum(address)
    reader = chain_reader_or_provider(chain_reader)
    chain_state = read_chain(address, reader, creation_record)
    if not chain_state.runtime:
        raise PrecheckFailed("address", f"no contract code at {address} on this network")

    own = standard_input(artifact)
    wider = None if minimal_input or code_format != CodeFormat.STANDARD_JSON else _wider_input(artifact, own)
    candidates = [own] if wider is None else [wider, own]  # inputs Ape may have built it from, the widest first
    input_json = _as_built(candidates, artifact, cache, {})
    warnings: list[str] = []

    compiled = _compile(artifact, input_json, cache, warnings)

    creation = chain_state.creation
    source = creation.source if creation else ""
    libraries = _libraries_from_chain(
        compiled, chain_state.runtime, creation.input if creation else None
    )  # none in Vyper
    stale = manifest_libraries if manifest_libraries is not None else artifact.settings.get("libraries") or {}
    for file, libs in libraries.items():
        for lib, addr in libs.items():
            recorded = (stale.get(file) or {}).get(lib)
            if recorded and recorded.lower() != addr.lower():
                warnings.append(
                    f"library {lib}: the manifest records {recorded}, the chain uses {addr}; using the chain's"
                )
            libs[lib] = _checksum(addr)
    if libraries:  # compile as the submission will: linked through settings.libraries (part of the metadata)
        input_json = _as_built(candidates, artifact, cache, libraries)
        compiled = _compile(artifact, input_json, cache, warnings)

    checked: ChainReader = reader
    if check and creation is not None and source.endswith(("record", "(REST API)")):
        # The explorer's record: the pre-check compares the creation code with it too.
        checked = MemoizingChain(reader)
        checked.remember_creation(address, creation)
    requests = _Requests(
        artifact, address, chain_state, checked, cache, code_format, license, constructor_args, libraries, warnings
    )
    derived_args = requests.split_args(compiled)
    requests.args = resolve_constructor_args(artifact, constructor_args, derived_args, chain_state.tried)
    # A replay in the very chain that ran the transaction is as good as its traces: nothing to say.
    if source not in ("", "transaction", "trace", "in-process replay") and derived_args is not None:
        warnings.append(f"constructor arguments from {source}: the node has no trace API")
    request = requests.flat_or_json(input_json, strict_format)

    match = None
    if check:
        input_json, request, match = requests.checked(request, input_json, strict_format)
        if creation is None and requests.declared is None:
            warnings.append(
                f"the creation code was not found ({sources_tried(chain_state.tried)}): the pre-check compared the runtime code only"
            )
        if match == "partial" and request.code_format == CodeFormat.STANDARD_JSON:
            library_options = _library_options(libraries, stale, address, reader)
            upgraded = requests.upgrade_partial(input_json, library_options, reader)
            if upgraded is not None:
                input_json, request, match = *upgraded, "full"
            else:
                warnings.append(_partial_reason(libraries, library_options))

    return Derivation(request, artifact, match, warnings, input_json, source)


@dataclass
class _Requests:
    """One derivation's requests: each candidate input built into the request to submit (`build`),
    and pre-checked on the chain (`reader`, `cache`: the run's)."""

    artifact: Artifact
    address: str
    chain: OnChain
    reader: ChainReader
    cache: CompileCache | None
    code_format: str
    license: str | None
    given_args: str | None  # the user's constructor arguments
    libraries: Libraries
    warnings: list[str]
    args: str = ""  # the constructor arguments the requests carry
    declared: blueprint.Blueprint | None = field(init=False)  # the chain's code, if an ERC-5202 blueprint

    def __post_init__(self) -> None:
        self.declared = blueprint.parse(self.chain.runtime)

    def split_args(self, output: CompilerJson) -> str | None:
        """What follows `output`'s creation code on chain; None when no creation code was found."""
        creation_code = bytecode.to_bytes(output["evm"]["bytecode"]["object"])
        if self.declared is not None:  # the arguments, if any, follow the creation code in the blueprint's body
            return blueprint.arguments_after(self.declared, creation_code)
        if self.chain.creation is not None and self.chain.creation.input:
            return bytecode.split_constructor_args(self.chain.creation.input, creation_code)
        return None

    def build(
        self, candidate: CompilerJson, fmt: str = "", layout: str = "imports", arguments: str | None = None
    ) -> VerificationRequest:
        """`candidate` as the request to submit, in format `fmt` (else the one asked for), with the
        requests' constructor arguments (else `arguments`)."""
        settings, vyper = candidate["settings"], self.artifact.is_vyper
        submitted = json.loads(json.dumps(candidate))
        if vyper:
            from ape_contract_verify.engine.compilers import VYPER_OUTPUTS

            submitted["settings"]["outputSelection"] = {self.artifact.source_id: VYPER_OUTPUTS}
        else:
            # Explorers compile what they are given; ask only for what they compare.
            outputs = ["abi", "evm.bytecode", "evm.deployedBytecode", "metadata"]
            submitted["settings"]["outputSelection"] = {"*": {"*": outputs}}
            if self.libraries and not settings.get("libraries"):  # never narrow the input's: it may hold unlinked ones
                submitted["settings"]["libraries"] = self.libraries
        optimizer = settings.get("optimizer") or {}
        request = VerificationRequest(
            address=self.address,
            contract_name=self.artifact.qualified_name,
            source_code=json.dumps(submitted),
            code_format=CodeFormat.VYPER_JSON if vyper else CodeFormat.STANDARD_JSON,
            compiler_version=self.artifact.explorer_compiler_version,
            optimization_used=settings.get("optimize", "gas") != "none" if vyper else bool(optimizer.get("enabled")),
            runs=None if vyper else int(optimizer.get("runs", 200)),
            evm_version=settings.get("evmVersion"),
            via_ir=bool(settings["viaIR"]) if "viaIR" in settings else None,
            constructor_arguments=self.args if arguments is None else arguments,
            license_type=license_of(self.artifact, self.license),
            libraries={lib: addr for libs in self.libraries.values() for lib, addr in libs.items()},
            # Sourcify reads constructor arguments from the creation transaction: tell it which one.
            creation_tx_hash=tx_hash_of(self.chain.creation.tx_hash if self.chain.creation else None),
        )
        if vyper or CodeFormat(fmt or self.code_format) is not CodeFormat.SINGLE_FILE:
            return request
        from ape_contract_verify.derive.flatten import flatten

        sources = {k: v["content"] for k, v in candidate["sources"].items()}
        flat = flatten(self.artifact.source_id, sources, settings.get("remappings") or (), layout=layout)
        for key in ("metadata", "debug"):
            if settings.get(key) and layout == "imports":  # said once, not per layout tried
                self.warnings.append(f"settings.{key} cannot be expressed in a single-file submission")
        return dataclasses.replace(
            request, contract_name=self.artifact.name, source_code=flat.source, code_format=CodeFormat.SINGLE_FILE
        )

    def flat_or_json(self, input_json: CompilerJson, strict: bool) -> VerificationRequest:
        """The request in the format asked for; when that is a flat file the flattener refuses
        (mixed ABI coders, a name declared twice, …), standard-json with the reason, or with
        `strict` (the flat file was asked for on the command line) PrecheckFailed with it. Whether
        or not a pre-check runs."""
        from ape_contract_verify.derive.flatten import FlattenError

        try:
            return self.build(input_json)
        except FlattenError as err:
            reason = f"cannot flatten: {err}"
        if strict:
            raise PrecheckFailed("codeformat", reason)
        self.warnings.append(f"{reason} (so standard-json was submitted instead)")
        return self.build(input_json, "standard-json")

    def checked(
        self, request: VerificationRequest, input_json: CompilerJson, strict: bool
    ) -> tuple[CompilerJson, VerificationRequest, str]:
        """(input, request, match) as pre-checked: the contract's own sources, else its whole
        compile group's (standard-json: a flat file holds the imports alone), whose constructor
        arguments the requests carry from then on. The setting that differs is searched for only
        then: no reason blames the source or the compiler while the group reproduces it."""

        def own(diagnose: bool) -> tuple[CompilerJson, VerificationRequest, str]:
            if request.code_format == CodeFormat.SINGLE_FILE:
                return input_json, *self.precheck_flat(request, input_json, strict, diagnose)
            return input_json, request, precheck(request, self.reader, self.cache, diagnose, self.warnings)

        try:
            return own(diagnose=False)
        except PrecheckFailed as err:
            if err.field != "source":  # not a code difference: nothing wider would change it
                raise
        group = _wider_input(self.artifact, input_json)
        if group is None:
            return own(diagnose=True)
        together = f"the whole compile group's input ({len(group['sources'])} sources, as Ape compiled them together)"
        try:
            # Its creation code splits off other constructor arguments.
            split = self.split_args(_compile(self.artifact, group, self.cache, self.warnings))
            group_args = resolve_constructor_args(self.artifact, self.given_args, split, self.chain.tried)
            as_json = self.build(group, "standard-json", arguments=group_args)
            match = precheck(as_json, self.reader, self.cache, diagnose=False)
        except ContractVerifyError:  # it does not compile, or differs too: the contract's own diagnosis
            try:
                return own(diagnose=True)
            except PrecheckFailed as diagnosed:
                raise PrecheckFailed(diagnosed.field, f"{diagnosed.reason} Nor does {together}.") from None
        if request.code_format == CodeFormat.SINGLE_FILE:
            said = "no flat file reproduces this contract's code"
            if strict:
                raise PrecheckFailed("codeformat", f"{said}; {together} reproduces it in standard-json")
        else:
            said = f"its own sources ({len(json.loads(request.source_code)['sources'])}) compile to other code"
        self.warnings.append(
            f"{said}; {together} reproduces it, so that was submitted: solc's code can depend on the files compiled with it"
        )
        self.args = group_args
        return group, as_json, match

    def precheck_flat(
        self, request: VerificationRequest, input_json: CompilerJson, strict: bool, diagnose: bool
    ) -> tuple[VerificationRequest, str]:
        """The flat request and its match, when a layout of the flat file compiles to the deployed
        code. Under via-IR the output can depend on how the sources are laid out (the compiler's
        node ids order its Yul), so one file can differ where standard-json does not. The
        standard-json compile is the judge: when it fails too, the flat file's diagnosis stands;
        when it passes, no setting is to blame and the answer says so."""
        from ape_contract_verify.derive.flatten import FlattenError

        as_json = self.build(input_json, "standard-json")
        try:
            json_match = precheck(as_json, self.reader, self.cache, diagnose=False)  # its reason is never given
        except PrecheckFailed:
            json_match = None
        try:
            return request, precheck(request, self.reader, self.cache, diagnose=diagnose and json_match is None)
        except PrecheckFailed:
            if json_match is None:
                raise
        try:  # the other layout, by source unit name
            by_name = self.build(input_json, "flatten", "names")
            if by_name.source_code != request.source_code:
                match = precheck(by_name, self.reader, self.cache, diagnose=False)
                self.warnings.append(
                    "the flat file's sources are laid out by name (names): the import order changes the compiled code"
                )
                return by_name, match
        except (FlattenError, PrecheckFailed):
            pass
        output = "via-IR output" if input_json["settings"].get("viaIR") else "compiled output"
        reason = f"flattening changes this contract's {output}; standard-json reproduces it"
        if strict:
            raise PrecheckFailed("codeformat", reason)
        self.warnings.append(f"{reason}, so standard-json was submitted instead")
        return as_json, json_match

    def upgrade_partial(
        self, input_json: CompilerJson, library_options: list[Libraries], reader: ChainReader
    ) -> tuple[CompilerJson, VerificationRequest] | None:
        """Settings that change only the metadata, which the minimal input may lack: ape-solidity
        compiles a whole group at once, so every contract of it carries the group's remappings and,
        after `add_library`, every library added so far, even those it does not link. Try them (the
        engine judges); (input, request) of the first that makes the match full, else None."""
        sent = sorted(input_json["settings"].get("remappings") or [])
        group = project_remappings(self.artifact)
        # The whole group's remappings, or none at all; the libraries options; both.
        remappings: list[CompilerJson] = [{"remappings": o} for o in ([group] if group else []) + [[]] if o != sent]
        current = input_json["settings"].get("libraries") or {}
        libraries: list[CompilerJson] = [{"libraries": option} for option in library_options if option != current]
        patches = remappings + libraries + [{**option, **lib} for option in remappings for lib in libraries]
        for patch in patches:
            candidate = json.loads(json.dumps(input_json))
            candidate["settings"].update(patch)
            request = self.build(candidate, "standard-json")  # as sent: a flat request may have fallen back to it
            try:
                if precheck(request, reader, self.cache) == "full":
                    return candidate, request
            except PrecheckFailed:
                continue
        return None


def _as_built(
    candidates: list[CompilerJson], artifact: Artifact, cache: CompileCache | None, libraries: Libraries
) -> CompilerJson:
    """The first of `candidates` (linked with `libraries`) that `cache` holds Ape's build of
    (`workflow/ape_builds.py`), else the last (the contract's own): Ape's output is the compiler's
    answer to it, so nothing is compiled again, and the code is reproduced whatever solc's output owes
    to the files compiled with it (the whole group's input first: what Ape compiled at once; a
    contract's own, as `add_library` recompiles it with its libraries)."""
    from ape_contract_verify.engine.compilers import with_output_selection

    linked = [{**c, "settings": {**c["settings"], "libraries": libraries}} if libraries else c for c in candidates]

    def built(candidate: CompilerJson) -> bool:
        selected = with_output_selection(cast("CompilerInput", candidate), artifact.source_id, artifact.name)
        return cache is not None and cache.holds_build(artifact.explorer_compiler_version, selected)

    return next((candidate for candidate in linked if built(candidate)), linked[-1])


def _wider_input(artifact: Artifact, input_json: CompilerJson) -> CompilerJson | None:
    """`input_json` with every source of its compile group (what ape-solidity compiled together, kept
    at the deploy) and the group's remappings (its other sources may import through them), or None:
    nothing wider. With the optimizer, solc's code can depend on the other files compiled: its Yul
    functions are named after AST ids, and its inlining follows the names (0.6's FullInliner visits
    them in their hashes' order; solidity#9573, and #14829 for later versions)."""
    group = group_input(artifact)
    if group is None or set(group["sources"]) <= set(input_json["sources"]):
        return None
    wider: CompilerJson = json.loads(json.dumps(input_json))
    wider["sources"].update(group["sources"])  # the group's as compiled, when kept
    if remappings := (group.get("settings") or {}).get("remappings"):
        wider["settings"]["remappings"] = remappings
    return wider


def _library_options(linked: Libraries, recorded: Libraries, address: str, reader: ChainReader) -> list[Libraries]:
    """settings.libraries that may have built the contract, most likely first.

    ape-solidity compiles with every library added so far (add_library), linked or not, and solc
    hashes them all into the metadata; the manifest records only the latest set. So the set a
    contract was built with is its linked libraries (their chain addresses) plus a prefix, in the
    order they were added, of the others recorded: taken as their deployment order, the ones
    deployed before the contract first. The contract's own address too: a script run again on a
    new dev chain deploys a library at the address the last run added it at, and Ape compiled it
    with that entry."""
    mine = {(file, name) for file, libs in linked.items() for name in libs}
    extras = [
        (file, name, str(addr))
        for file, libs in (recorded or {}).items()
        for name, addr in (libs or {}).items()
        if (file, name) not in mine
    ]
    if not extras:
        return []

    def block(addr: str) -> int | None:
        try:
            creation = reader.find_creation(addr)
            return creation.block if creation is not None else None
        except Exception:  # not an address, no code, a node that cannot say: order unknown
            return None

    own = block(address)
    blocks = {addr: block(addr) for _, _, addr in extras}
    extras.sort(key=lambda e: (blocks[e[2]] is None, blocks[e[2]] or 0))

    # Those deployed before the contract (a prefix of that order) first, then every prefix, the longest first.
    before = sum(own is not None and (made := blocks[addr]) is not None and made < own for _, _, addr in extras)
    options: list[Libraries] = []
    for count in dict.fromkeys(([before] if before else []) + list(range(len(extras), 0, -1))):
        merged: Libraries = json.loads(json.dumps(linked))
        for file, name, addr in extras[:count]:
            merged.setdefault(file, {})[name] = addr
        options.append(merged)
    return options


def _partial_reason(linked: Libraries, library_options: list[Libraries]) -> str:
    """Why the pre-check's match stays partial, for the summary."""
    if not library_options:
        return (
            "partial match: the code matches, its metadata hash does not; no recorded setting that changes "
            "only the metadata (libraries, remappings) reproduces it"
        )
    mine = {name for libs in linked.values() for name in libs}
    others = sorted({name for option in library_options for libs in option.values() for name in libs} - mine)
    return (
        "partial match: the code matches, its metadata hash does not. ape-solidity compiles with every library "
        "added so far (add_library), linked or not, and solc hashes them all into the metadata; none of the "
        f"{len(library_options) + 1} libraries settings tried (the linked ones plus those of {', '.join(others)} "
        "at the addresses the manifest records) reproduces it: it was compiled with other libraries or addresses "
        "(a library deployed and added again since?), or a source changed in comments only"
    )


# --- the request -------------------------------------------------------------------------------


def with_full_project_input(derivation: Derivation) -> VerificationRequest | None:
    """The same request with every source of the artifact's compile group (what ape-solidity
    compiled together), or None when that is what was sent already."""
    sent = json.loads(derivation.request.source_code)
    full = _wider_input(derivation.artifact, sent)
    if full is None:
        return None
    return dataclasses.replace(derivation.request, source_code=json.dumps({**full, "settings": sent["settings"]}))
