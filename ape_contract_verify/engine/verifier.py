"""The verification engine, `Verifier.verify(request)`: compile what was submitted and compare it with what is on chain.

The local explorer runs it on each submission, and the plugin's pre-check runs it on the request
it is about to submit, so both give the same reason. This module turns a request into compiler
input, compares the compiled code with the deployed code (`compare`) and makes the result; naming
the setting that differs is `diagnose`'s job.

The comparison, creation and runtime, is as explorers compare: only the CBOR metadata, immutables
and library link positions are ignored. A difference is explained by its most specific cause: a
library address, the compiler version (from the deployed metadata), the metadata settings, then
the code itself (whose setting `diagnose` finds). Equal code with other constructor arguments is
named argument by argument.

An ERC-5202 blueprint's body is the compiled creation code (constructor arguments, if any, follow
it), as explorers verify blueprints (`compare_blueprint`). Its code never runs, so no compiler
setting is searched for: a difference is said as a difference of the creation code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Literal, Protocol

from ape_contract_verify.engine.compilers import (
    DEFAULT_TIMEOUT,
    CompileCache,
    Compiled,
    CompilerError,
    CompilerNotInstalled,
    ContractInput,
    EvmOutput,
    InvalidCompilerVersion,
    code_objects,
    parse_compiler_version,
    single_file_input,
)
from ape_contract_verify.engine.diagnose import DEFAULT_COMPILES, MAX_ORDERS, diagnose, search_if_reordered
from ape_contract_verify.evm import bytecode as bc
from ape_contract_verify.evm.abi import abi_type
from ape_contract_verify.evm.blueprint import BLUEPRINT, Blueprint
from ape_contract_verify.evm.blueprint import parse as parse_blueprint
from ape_contract_verify.evm.reads import ChainError, ChainReader, Creation, attempts_of
from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.json_types import JsonObject, JsonValue
from ape_contract_verify.protocol import inputs as protocol_inputs
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.protocol.forms import compiler_language
from ape_contract_verify.protocol.inputs import CompilerSettings, SourceUnit
from ape_contract_verify.protocol.values import ADDRESS, HEX, strip_0x
from ape_contract_verify.request import CodeFormat, VerificationRequest

_DECLARATION = re.compile(r"\b(?:abstract\s+contract|contract|library|interface)\s+([A-Za-z_$][\w$]*)")
UNABLE_TO_LOCATE_NAME = "Unable to locate ContractName {name}, did you specify the correct Contract Name ?"

LIBRARY_REQUIRED = Texts.LIBRARY_NOT_FOUND  # Etherscan's words for every library failure, then which and where


class FailureKind(str, Enum):
    """Why a verification failed, for callers that map reasons to their own texts."""

    NO_CODE = "no code"  # -> `Unable to locate ContractCode at 0x…`
    INVALID_INPUT = "invalid input"
    COMPILER = "compiler"
    CONTRACT_NAME = "contract name"
    NO_CREATION = "creation not found"
    BYTECODE = "bytecode"
    COMPILER_VERSION = "compiler version"
    LIBRARY = "library"
    CONSTRUCTOR_ARGUMENTS = "constructor arguments"
    CHAIN = "chain"


# The input a failure of each kind points at, unless the failure names a setting itself; the
# kinds not here point at the input they are named after.
SETTING_OF = {
    FailureKind.NO_CODE: "address",
    FailureKind.INVALID_INPUT: "input",
    FailureKind.NO_CREATION: "creation transaction",
    FailureKind.BYTECODE: "source",
    FailureKind.COMPILER_VERSION: "compiler",
}


class Failure(Exception):
    """A verification that cannot pass: what kind, which input (`setting`), and why."""

    def __init__(self, kind: FailureKind, reason: str, offset: int | None = None, setting: str | None = None):
        super().__init__(reason)
        self.kind, self.reason, self.offset = kind, reason, offset
        self.setting = setting or SETTING_OF.get(kind, kind.value)


@dataclass
class VerificationResult:
    """The outcome of one verification, with everything getsourcecode needs when it passed."""

    verified: bool = False
    match: Literal["full", "partial"] | None = None  # None when not verified
    reason: str = ""  # why it failed, or a note on a partial match; no "Fail - …" prefix
    address: str = ""
    failure: FailureKind | None = None
    abi: list[JsonObject] = field(default_factory=list)
    contract_name: str = ""  # as submitted (path/File.sol:Name or Name)
    compiler_version: str = ""
    code_format: str = ""
    settings: CompilerSettings = field(default_factory=CompilerSettings)  # as used (no outputSelection)
    sources: dict[str, str] = field(default_factory=dict)  # source unit name -> content
    source_code: str = ""  # the submission as sent
    constructor_arguments: str = ""  # hex without 0x, as the deployment used them
    libraries: dict[str, str] = field(default_factory=dict)  # library name -> on-chain address
    license_type: int | None = None
    optimization_used: bool = False
    runs: int = 200
    evm_version: str = "Default"
    via_ir: bool = False
    creation_tx: str | None = None
    factory: bool = False
    offset: int | None = None  # first differing byte, for bytecode failures
    setting: str | None = None  # the input that differs: "optimizer runs", "library", "source", …
    hash_seed: str | None = None  # the compile that matched (Vyper 0.3.4-0.3.7): "internal functions in the order …"
    # What a Sourcify answer shows (hex without 0x; "" when not reached): both sides' code, the
    # creation's block and sender, and the compiler's metadata JSON text.
    recompiled_creation: str = ""
    recompiled_runtime: str = ""
    onchain_creation: str = ""
    onchain_runtime: str = ""
    creation_block: int | None = None
    deployer: str = ""
    metadata: str = ""
    blueprint: bool = False  # an ERC-5202 blueprint: its body verified as the creation code

    @property
    def text(self) -> str:
        """The checkverifystatus result text."""
        if self.verified:
            return Texts.PASS
        if self.failure == FailureKind.NO_CODE:
            return Texts.UNABLE_TO_LOCATE.format(address=self.address)
        return f"{Texts.FAIL}. {self.reason}"


@dataclass
class Verifier:
    """Verifies submissions against one chain. Thread-safe: the cache and the chain reader are."""

    chain: ChainReader
    cache: CompileCache | None = None  # None: one of its own, in memory
    compile_timeout: float = DEFAULT_TIMEOUT
    # On a code mismatch, how many single-setting variations (optimizer, runs, viaIR, evmVersion;
    # Vyper's optimize mode, evmVersion) to compile to tell the user which setting the deployment used.
    diagnose_compiles: int = DEFAULT_COMPILES
    # An explorer needs the creation transaction. The plugin's pre-check, on a node without
    # traces, may not find a factory's: it then compares the runtime code alone.
    require_creation: bool = True
    # Vyper 0.3.4-0.3.7: how many internal-function orders to compile at most when the deployed
    # code is the compiled instructions in another order (engine/diagnose.py's order search).
    callee_orders: int = MAX_ORDERS

    def __post_init__(self) -> None:
        self.cache = self.cache if self.cache is not None else CompileCache()

    def verify(
        self, request: VerificationRequest, args_from_creation: bool = False, diagnose_compiles: int | None = None
    ) -> VerificationResult:
        """`args_from_creation`: take the constructor arguments from the creation transaction (as
        Sourcify does: its submissions carry none) instead of comparing the submitted ones; they
        must still be an ABI encoding of the compiled constructor's inputs. `diagnose_compiles`
        overrides the Verifier's for this call (0: no search for the differing setting)."""
        result = VerificationResult(
            address=request.address,
            contract_name=request.contract_name,
            compiler_version=request.compiler_version,
            code_format=request.format_text,
            source_code=request.source_code,
            license_type=request.license_type,
        )
        try:
            compiles = self.diagnose_compiles if diagnose_compiles is None else diagnose_compiles
            self._verify(request, result, args_from_creation, compiles)
            return result
        except Failure as failed:
            failure = failed
        except ChainError as err:
            failure = Failure(FailureKind.CHAIN, f"The chain could not be read: {err}")
        result.verified, result.match, result.failure = False, None, failure.kind
        result.reason, result.offset, result.setting = failure.reason, failure.offset, failure.setting
        return result

    # --- steps ----------------------------------------------------------------------------

    def _verify(
        self, request: VerificationRequest, result: VerificationResult, args_from_creation: bool, compiles: int
    ) -> None:
        address = (request.address or "").strip()
        if not ADDRESS.match(address):
            raise Failure(
                FailureKind.INVALID_INPUT, f"contractaddress {address!r} is not a 0x-prefixed 20-byte address"
            )
        runtime_on_chain = self.chain.get_code(address)
        if not runtime_on_chain:
            raise Failure(FailureKind.NO_CODE, Texts.UNABLE_TO_LOCATE.format(address=address))
        result.onchain_runtime = runtime_on_chain.hex()
        submitted_args = strip_0x(re.sub(r"\s+", "", request.constructor_arguments or "")).lower()
        if not HEX.match(submitted_args) or len(submitted_args) % 2:
            raise Failure(
                FailureKind.INVALID_INPUT,
                f"{Texts.INVALID_CONSTRUCTOR_ARGUMENTS} (constructorArguements must be ABI-encoded hex)",
            )

        job = self._prepare(request)
        result.sources = {path: src.get("content", "") for path, src in job.input_json.get("sources", {}).items()}
        result.settings = settings = job.input_json.get("settings", {}).copy()
        settings.pop("outputSelection", None)
        optimizer, vyper = settings.get("optimizer") or {}, job.language == "vyper"
        result.optimization_used = settings.get("optimize") != "none" if vyper else bool(optimizer.get("enabled"))
        result.runs = 0 if vyper else int(optimizer.get("runs", 200))
        result.evm_version = settings.get("evmVersion") or "Default"
        result.via_ir = bool(settings.get("viaIR", False))
        if result.license_type is None:
            from ape_contract_verify.protocol.licenses import code_from_source

            result.license_type = code_from_source(result.sources.get(job.file, ""))

        try:
            contract = job.compile()
        except CompilerError as err:
            raise Failure(FailureKind.COMPILER, _compiler_reason(err, job.language)) from err
        if not contract:
            raise Failure(FailureKind.CONTRACT_NAME, self._name_reason(job, request))
        result.abi = contract.get("abi") or []
        result.metadata = contract.get("metadata") or ""
        compiled = _recompiled(result, contract.get("evm") or {}, job.language)
        if not result.recompiled_creation:
            raise Failure(
                FailureKind.CONTRACT_NAME,
                f"{job.name} has no bytecode (an interface or abstract contract); submit a deployable contract",
            )

        declared = parse_blueprint(runtime_on_chain)
        creation = self.chain.find_creation(address)
        # A blueprint's body is its creation code: its transaction is not needed to verify it.
        if creation is None and self.require_creation and declared is None:
            tried = ", ".join(attempts_of(self.chain, address))
            then = (
                f"then tried {tried}"
                if tried
                else "and factory deployments need a node that offers traces (debug_/trace_) or a replay on a fork"
            )
            raise Failure(
                FailureKind.NO_CREATION,
                f"Unable to find the transaction that created {address}: searched the recent blocks for a deployment, {then}",
            )
        if creation is not None:
            result.creation_tx, result.factory = creation.tx_hash, creation.factory
            result.creation_block, result.deployer = creation.block, creation.deployer or ""
            result.onchain_creation = bytes(creation.input).hex()
            given = (request.creation_tx_hash or "").lower()
            if given and given != str(creation.tx_hash).lower():
                raise Failure(
                    FailureKind.NO_CREATION,
                    f"creationTransactionHash {request.creation_tx_hash} did not create {address}: the transaction "
                    f"that created it is {creation.tx_hash}; send that one (its constructor arguments are the "
                    "deployment's), or leave creationTransactionHash out",
                )
        if declared is not None:  # a blueprint: its body is the creation code, no setting searched for
            matched = compare_blueprint(
                compiled,
                declared,
                compiler_version=request.compiler_version,
                submitted_args=submitted_args,
                abi=result.abi,
                args_from_chain=args_from_creation,
            )
            result.blueprint = True
        else:
            creation_input = bytes(creation.input) if creation is not None else None
            searched = job.language == "vyper" and search_if_reordered(
                job, compiled, runtime_on_chain, creation_input, max_orders=self.callee_orders
            )
            if searched and searched.evm is not None:  # the deployment is these instructions in another order
                result.hash_seed, result.reason = searched.order, searched.note()
                compiled = _recompiled(result, searched.evm, job.language)

            def explain() -> tuple[str, str]:
                if searched and searched.order is None:  # the order differs, and no order tried gave it
                    return "hash seed", searched.reason()
                single_file = request.format_text == CodeFormat.SINGLE_FILE.value
                return diagnose(job, runtime_on_chain, single_file=single_file, compiles=compiles)

            # Library name -> address: settings.libraries ({file: {name: address}}), then the form's.
            linked = (job.input_json.get("settings", {}).get("libraries") or {}).values()
            libraries = {name: str(address) for per_file in linked for name, address in per_file.items()}
            libraries.update({name.rsplit(":", 1)[-1]: address for name, address in request.libraries.items()})
            matched = compare(
                compiled,
                creation,
                runtime_on_chain,
                compiler_version=request.compiler_version,
                libraries={name: "0x" + strip_0x(address) for name, address in libraries.items()},
                submitted_args=submitted_args,
                abi=result.abi,
                diagnose=explain,
                args_from_chain=args_from_creation,
            )
        result.libraries = matched.libraries
        result.constructor_arguments = matched.constructor_arguments
        result.verified, result.match = True, matched.match
        if matched.match == "partial":
            result.reason = (
                "Partial match: only the metadata hash differs (comments, source unit names or metadata "
                "settings); the code is identical" + (f"; {result.reason}" if result.reason else "")
            )

    def _prepare(self, request: VerificationRequest) -> ContractInput:
        fmt = request.format_text
        if fmt != CodeFormat.SINGLE_FILE.value:  # the form's rule: a JSON input's compiler is its format's
            try:
                compiler_language(request.compiler_version, fmt)
            except InvalidRequest as err:
                raise Failure(FailureKind.INVALID_INPUT, f"{Texts.INVALID_COMPILER_VERSION}: {err}") from None
        try:
            version = parse_compiler_version(
                request.compiler_version, "vyper" if fmt == CodeFormat.VYPER_JSON.value else None
            )
        except CompilerError as err:
            raise Failure(FailureKind.INVALID_INPUT, _compiler_reason(err, "solidity")) from err
        if fmt == CodeFormat.SINGLE_FILE.value:
            if version.language != "solidity":
                raise Failure(
                    FailureKind.INVALID_INPUT,
                    "solidity-single-file needs a Solidity compilerversion such as v0.8.26+commit.8a97fa7a",
                )
            name = request.bare_name
            file, language = f"{name}.sol", "solidity"
            input_json = single_file_input(
                request.source_code,
                file_name=file,
                optimizer=request.optimization_used,
                runs=request.runs,
                evm_version=request.evm_version,
                via_ir=request.via_ir,
                libraries=request.libraries or None,
            )
        elif fmt in (CodeFormat.STANDARD_JSON.value, CodeFormat.VYPER_JSON.value):
            try:  # the protocol's one rule (Etherscan's `{{…}}` accepted)
                input_json = protocol_inputs.parse_json_input(request.source_code, fmt)
            except InvalidRequest as err:
                raise Failure(FailureKind.INVALID_INPUT, f"{err.param} {err.problem}; {err.fix}") from None
            language = "vyper" if fmt == CodeFormat.VYPER_JSON.value else "solidity"
            input_json.setdefault("language", language.capitalize())
            sources = input_json["sources"]
            file, _, name = request.contract_name.rpartition(":")
            if not file:  # a bare name: find the one source that declares it
                found = [path for path, src in sources.items() if name in _declared(path, src, language)]
                where = f"it is declared in {', '.join(sorted(found)[:5])}" if found else "no source declares it"
                if len(found) != 1:
                    raise Failure(
                        FailureKind.CONTRACT_NAME,
                        UNABLE_TO_LOCATE_NAME.format(name=name)
                        + f" {where}; use path/File.sol:{name} (the source unit name in the input)",
                    )
                file = found[0]
            if file not in sources:
                raise Failure(
                    FailureKind.CONTRACT_NAME,
                    UNABLE_TO_LOCATE_NAME.format(name=request.contract_name)
                    + f" The input has no source unit {file!r}; use path:Name with one of: {', '.join(sorted(sources)[:10])}",
                )
        else:
            raise Failure(
                FailureKind.INVALID_INPUT,
                f"codeformat {fmt!r} is not supported; use solidity-single-file, solidity-standard-json-input or vyper-json",
            )
        job = ContractInput(
            request.compiler_version, input_json, file, name, language, self.cache, self.compile_timeout
        )
        if name not in _declared(file, input_json["sources"][file], language):
            raise Failure(FailureKind.CONTRACT_NAME, self._name_reason(job, request))  # no compile needed
        return job

    def _name_reason(self, job: ContractInput, request: VerificationRequest) -> str:
        found = _declared(job.file, job.input_json["sources"][job.file], job.language)
        where = "The source" if request.format_text == CodeFormat.SINGLE_FILE.value else job.file
        return UNABLE_TO_LOCATE_NAME.format(name=job.name) + f" {where} declares: {', '.join(found) or 'none'}"


# --- helpers ----------------------------------------------------------------------------------


def _recompiled(result: VerificationResult, evm: EvmOutput, language: str) -> Compiled:
    """The compiled code, its hex kept in `result` as the compiler wrote it (placeholders and all)."""
    result.recompiled_creation, result.recompiled_runtime = code_objects(evm)
    return Compiled.from_evm(evm, language)


def _compiler_reason(err: CompilerError, language: str) -> str:
    """Etherscan's words for a compiler that cannot be had or that refused the sources, then ours."""
    if isinstance(err, (InvalidCompilerVersion, CompilerNotInstalled)):
        return f"{Texts.INVALID_COMPILER_VERSION}: {err}"
    return Texts.COMPILATION_ERROR.format(language="Vyper" if language == "vyper" else "Solidity", message=err)


def _declared(path: str, source: SourceUnit, language: str) -> list[str]:
    """The contracts a source unit declares (a Vyper file is its one contract, named by the file)."""
    if language == "vyper":
        return [path.rsplit("/", 1)[-1].rsplit(".", 1)[0]]
    content = re.sub(r"//[^\n]*|/\*.*?\*/", "", source.get("content", ""), flags=re.S)
    return list(dict.fromkeys(_DECLARATION.findall(content)))


# --- the comparison: compiled code against the deployed code ------------------------------


@dataclass
class Matched:
    match: Literal["full", "partial"]
    libraries: dict[str, str]  # library name -> address on chain
    constructor_arguments: str  # hex without 0x, as the deployment used them


def compare(
    compiled: Compiled,
    creation: Creation | None,
    runtime_on_chain: bytes,
    *,
    compiler_version: str,
    libraries: dict[str, str],
    submitted_args: str,
    abi: Sequence[AbiEntry],
    diagnose: Callable[[], tuple[str, str]],
    args_from_chain: bool = False,
) -> Matched:
    """`Matched`, or `Failure` saying what differs. `diagnose()` -> (setting, text) is called only
    when the code differs for no reason found here. `args_from_chain`: the creation's input past the
    code is taken as the constructor arguments (Sourcify's submissions carry none), which must then
    be an ABI encoding of the constructor's inputs.

    `creation=None` compares the runtime code alone and takes the submitted constructor arguments
    as they are: the pre-check on a node without traces cannot see a factory's CREATE, while the
    explorer it submits to can."""
    creation_input = creation.input if creation is not None else b""
    creation_cmp = compiled.compare_creation(creation_input) if creation is not None else None
    # links are placeholders of the same length: the input past the code is the arguments
    deployed_args = (
        bc.split_constructor_args(creation_input, compiled.creation) if creation is not None else submitted_args
    )
    submitted_args = deployed_args if args_from_chain else submitted_args
    runtime_cmp = compiled.compare_runtime(runtime_on_chain)
    by_settings = _linked_at_compile_time(compiled, runtime_on_chain, creation_input, libraries)
    if version_reason := compiler_version_difference(compiler_version, runtime_on_chain, creation_input):
        raise Failure(FailureKind.COMPILER_VERSION, f"{Texts.BYTECODE_MISMATCH} {version_reason}")
    if (creation_cmp is not None and not creation_cmp.matches) or not runtime_cmp.matches:
        # When the runtime code matches, the creation code was compared and differs.
        which, cmp = (
            ("runtime", runtime_cmp) if not runtime_cmp.matches or creation_cmp is None else ("creation", creation_cmp)
        )
        if which == "runtime" and (trailing_reason := _trailing_difference(compiled, runtime_on_chain)):
            raise Failure(FailureKind.BYTECODE, f"{Texts.BYTECODE_MISMATCH} {trailing_reason}", offset=cmp.offset)
        if which == "runtime" and not compiled.trailing and _only_tail_metadata_differs(compiled, runtime_on_chain):
            raise Failure(
                FailureKind.BYTECODE,
                f"{Texts.BYTECODE_MISMATCH} {Texts.CHECK_BYTECODEHASH} "
                "Compiled bytecode differs from the deployed code only in the CBOR metadata's shape "
                f"(compiled {len(compiled.runtime)} bytes, deployed {len(runtime_on_chain)}): the metadata "
                "settings differ (metadata.bytecodeHash or appendCBOR).",
                offset=cmp.offset,
                setting="metadata",
            )
        deployed_length = len(runtime_on_chain) if which == "runtime" else len(creation_input)
        metadata_note = " (the metadata differs as well)" if cmp.metadata_differs else ""
        setting, explanation = diagnose()
        raise Failure(
            FailureKind.BYTECODE,
            f"{Texts.BYTECODE_MISMATCH} Compiled bytecode differs from the deployed code at byte {cmp.offset} of the {which} code "
            f"(compiled {cmp.expected_length} bytes, deployed {deployed_length}){metadata_note}; {explanation}",
            offset=cmp.offset,
            setting=setting,
        )

    found = _libraries_on_chain(compiled, runtime_on_chain, creation_input, libraries)
    if submitted_args != deployed_args:
        raise Failure(
            FailureKind.CONSTRUCTOR_ARGUMENTS,
            f"{Texts.CHECK_CONSTRUCTOR_ARGUMENTS} {constructor_arguments_reason(submitted_args, deployed_args, abi)}",
        )
    if args_from_chain and creation is not None and (deployed_args or constructor_inputs(abi)):
        _check_encoding(deployed_args, abi, creation.tx_hash)
    full = runtime_cmp.match == "full" and (creation_cmp is None or creation_cmp.match == "full")
    return Matched("full" if full else "partial", {**by_settings, **found}, deployed_args)


def compare_blueprint(
    compiled: Compiled,
    blueprint: Blueprint,
    *,
    compiler_version: str,
    submitted_args: str,
    abi: Sequence[AbiEntry],
    args_from_chain: bool = False,
) -> Matched:
    """`Matched`, or `Failure` saying what differs. `args_from_chain`: the body's bytes past the
    creation code are taken as the constructor arguments (Sourcify's submissions carry none)."""
    body, creation = blueprint.body, compiled.creation
    cmp = compiled.compare_creation(body)
    where = f"{BLUEPRINT}: its body ({len(body)} bytes after the {blueprint.preamble_length}-byte preamble)"
    if len(body) < len(creation) or not cmp.matches:
        if version_reason := compiler_version_difference(compiler_version, b"", body):
            raise Failure(FailureKind.COMPILER_VERSION, f"{Texts.BYTECODE_MISMATCH} {version_reason}")
        offset = cmp.offset if cmp.offset is not None else min(len(body), len(creation))
        raise Failure(
            FailureKind.BYTECODE,
            f"{Texts.BYTECODE_MISMATCH} The code is {where}, which must start with the compiled creation "
            f"code ({len(creation)} bytes); they differ at byte {offset} of the body: this source does not "
            "compile to the creation code the blueprint holds.",
            offset=offset,
            setting="source",
        )
    deployed_args = body[len(creation) :].hex()
    if args_from_chain:
        submitted_args = deployed_args
    if submitted_args != deployed_args:
        raise Failure(
            FailureKind.CONSTRUCTOR_ARGUMENTS,
            f"{Texts.CHECK_CONSTRUCTOR_ARGUMENTS} The code is {where}; "
            f"{constructor_arguments_reason(submitted_args, deployed_args, abi)}",
        )
    return Matched("full" if cmp.match == "full" else "partial", {}, deployed_args)


def _check_encoding(args: str, abi: Sequence[AbiEntry], tx_hash: str) -> None:
    """Arguments taken from the chain must be what the constructor's ABI encoding produces: the
    bytes after the code decode as its inputs and encode back to the same bytes. Otherwise no
    call of this source's constructor could have sent them (wrong contract, or a hand-made input)."""
    inputs = constructor_inputs(abi)
    where = f"the creation transaction {tx_hash} carries {len(args) // 2} bytes after the code"
    if not inputs:  # and there are bytes after the code
        raise Failure(
            FailureKind.CONSTRUCTOR_ARGUMENTS,
            f"{Texts.CHECK_CONSTRUCTOR_ARGUMENTS} The constructor takes no arguments, but {where}",
        )
    from eth_abi.abi import decode, encode

    types = [abi_type(item) for item in inputs]
    signature = f"constructor({','.join(types)})"
    try:
        same = encode(types, decode(types, bytes.fromhex(args))).hex() == args
    except Exception:
        same = False
    if not same:
        raise Failure(
            FailureKind.CONSTRUCTOR_ARGUMENTS,
            f"{Texts.CHECK_CONSTRUCTOR_ARGUMENTS} Constructor arguments are not an ABI encoding of "
            f"{signature}: {where}, which do not decode as its inputs and encode back the same",
        )


def _libraries_on_chain(
    compiled: Compiled, runtime: bytes, creation_input: bytes, submitted: dict[str, str]
) -> dict[str, str]:
    """Unlinked placeholders: the chain's addresses there must be the submitted libraries."""
    found: dict[str, str] = {}
    for code, links in ((runtime, compiled.runtime_links), (creation_input, compiled.creation_links)):
        if not code:
            continue
        for library, addresses in bc.link_addresses_all(code, links).items():
            for address in addresses:
                known = found.setdefault(library, address)
                if known != address:
                    raise Failure(
                        FailureKind.LIBRARY,
                        f"{LIBRARY_REQUIRED}: Library {library} is linked at two addresses on chain: {known} and {address}",
                    )
    for library, address in found.items():
        given = lookup_library(submitted, library)
        if given is None:
            raise Failure(
                FailureKind.LIBRARY,
                f"{LIBRARY_REQUIRED}: {library} is linked at {address} on chain; "
                f"submit libraryname1={library} and libraryaddress1={address}",
            )
        if given.lower() != address.lower():
            raise Failure(
                FailureKind.LIBRARY,
                f"{LIBRARY_REQUIRED}: Library {library} address differs: submitted {given}, on chain {address}",
            )
    return found


# --- constructor arguments --------------------------------------------------------------------


def constructor_arguments_reason(
    submitted: str, deployed: str, abi: Sequence[AbiEntry] | None = None, limit: int = 1024
) -> str:
    """Which argument differs, decoded with the compiled ABI when both sides decode; else both
    blobs. Either way, where they first differ (ABI encodes in 32-byte words)."""
    index = next((i for i, (a, b) in enumerate(zip(submitted, deployed)) if a != b), min(len(submitted), len(deployed)))
    where = f" (first difference at byte {index // 2}, in 32-byte word {index // 64})" if submitted and deployed else ""
    decoded = argument_differences(submitted, deployed, constructor_inputs(abi or []))
    if decoded:
        return f"Constructor arguments differ: {decoded}{where}"

    def shown(hex_text: str) -> str:
        if not hex_text:
            return "(none)"
        return "0x" + (hex_text if len(hex_text) <= limit else hex_text[:limit] + f"… ({len(hex_text) // 2} bytes)")

    return (
        f"Constructor arguments differ: submitted {shown(submitted)} but the deployment used {shown(deployed)}{where}"
    )


class AbiModel(Protocol):
    """An ABI entry as a model (ethpm-types' `ABI` members: pydantic models)."""

    def model_dump(self, *, mode: str, by_alias: bool) -> dict[str, JsonValue]: ...


# An ABI entry from compiler output (JSON), or from an Ape contract type.
AbiEntry = JsonObject | AbiModel


def constructor_inputs(abi: Sequence[AbiEntry]) -> list[JsonObject]:
    """The constructor's inputs as ABI JSON dicts (from compiler output or an ethpm-types ABI)."""
    for entry in abi:
        item = entry if isinstance(entry, dict) else entry.model_dump(mode="json", by_alias=True)
        if item.get("type") == "constructor":
            inputs = item.get("inputs")
            return [i for i in inputs if isinstance(i, dict)] if isinstance(inputs, list) else []
    return []


def argument_differences(submitted: str, deployed: str, inputs: list[JsonObject]) -> str:
    """`name (type): submitted X, deployed Y` for each differing argument; "" when either side
    does not decode as the constructor's arguments (or when there are none)."""
    if not inputs or not submitted or not deployed:
        return ""
    from eth_abi.abi import decode

    types = [abi_type(i) for i in inputs]
    try:
        ours = decode(types, bytes.fromhex(submitted))
        theirs = decode(types, bytes.fromhex(deployed))
    except Exception:  # not the constructor's encoding: the caller shows the blobs
        return ""
    diffs = [
        f"{item.get('name') or f'#{n}'} ({kind}): submitted {_show(a)}, deployed {_show(b)}"
        for n, (item, kind, a, b) in enumerate(zip(inputs, types, ours, theirs))
        if a != b
    ]
    return "; ".join(diffs) or "the same values, encoded differently"


def _show(value: object) -> str:
    if isinstance(value, (bytes, bytearray)):
        text = "0x" + bytes(value).hex()
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(_show(v) for v in value) + "]"
    else:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# --- the comparison's helpers ------------------------------------------------------------------


def lookup_library(libraries: dict[str, str], name: str) -> str | None:
    return libraries.get(name) or libraries.get(name.rsplit(":", 1)[-1])


def _linked_at_compile_time(
    compiled: Compiled, runtime: bytes, creation_input: bytes, libraries: dict[str, str]
) -> dict[str, str]:
    """The submitted libraries linked at compile time (settings.libraries): their address is in the
    compiled code; `Failure` when the chain holds another address there."""
    linked: dict[str, str] = {}
    for name, address in libraries.items():
        for code, on_chain in ((compiled.runtime, runtime), (compiled.creation, creation_input)):
            try:
                positions = bc.find_address(code, address)
            except ValueError:
                continue
            for position in positions:
                linked[name] = address
                found = on_chain[position : position + 20]
                if len(found) == 20 and found != code[position : position + 20]:
                    raise Failure(
                        FailureKind.LIBRARY,
                        f"{LIBRARY_REQUIRED}: Library {name} address differs: submitted {address}, on chain 0x{found.hex()}",
                    )
    return linked


def _trailing_difference(compiled: Compiled, on_chain: bytes) -> str | None:
    """The deployed code is the compiled runtime followed by more or fewer bytes than the
    immutables' size: said as such, since no setting explains it (nothing is masked then)."""
    size = len(compiled.runtime)
    if not compiled.trailing or len(on_chain) <= size or len(on_chain) == size + compiled.trailing:
        return None
    if not compiled.compare_runtime(on_chain[:size]).matches:  # shorter than runtime and immutables
        return None
    return (
        f"The deployed code is the compiled runtime code ({size} bytes) followed by {len(on_chain) - size} bytes, "
        f"but the contract's immutables take {compiled.trailing} bytes (as its creation code says): "
        "the deployed code is not what this contract's creation code deploys."
    )


def _only_tail_metadata_differs(compiled: Compiled, on_chain: bytes) -> bool:
    """Equal code once both CBOR tails are cut off (one may have none): only metadata settings differ."""
    body = replace(compiled, runtime=bc.strip_metadata(compiled.runtime))
    return bool(body.runtime) and body.compare_runtime(bc.strip_metadata(on_chain)).match == "full"


def compiler_version_difference(requested: str, runtime: bytes, creation_input: bytes) -> str | None:
    """When the deployed code's metadata names another compiler version than the submitted one."""
    try:
        version = parse_compiler_version(requested)
    except CompilerError:
        return None
    # Vyper keeps its metadata in the initcode only: the last blob before the arguments.
    initcode = bc.metadata_segments(creation_input)
    segment = bc.tail_metadata(runtime) or bc.tail_metadata(creation_input) or (initcode[-1] if initcode else None)
    recorded = segment.compiler if segment else None
    # The metadata records the release (0.4.0 for 0.4.0rc6; a nightly's as text, and so differing).
    if recorded and recorded[1] != ".".join(str(part) for part in version.release):
        return (
            f"Compiler version differs: the deployed code's metadata says {recorded[0]} {recorded[1]}, "
            f"but {requested} was submitted"
        )
    return None
