"""The verification engine, `Verifier.verify(request)`: compile what was submitted and compare it with what is on chain.

The local explorer runs it on each submission, and the plugin's pre-check runs it on the request
it is about to submit, so both give the same reason. Comparing is `compare`'s job, naming the
setting that differs `diagnose`'s; this module turns a request into compiler input and a result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from ape_contract_verify.engine.compare import (
    Compiled,
    Failure,
    FailureKind,
    compare,
    compare_blueprint,
)
from ape_contract_verify.engine.compilers import (
    DEFAULT_TIMEOUT,
    CompileCache,
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
from ape_contract_verify.evm.reads import ChainError, ChainReader, attempts_of
from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.protocol import inputs as protocol_inputs
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.protocol.forms import compiler_language
from ape_contract_verify.protocol.inputs import CompilerInput, CompilerSettings, SourceUnit
from ape_contract_verify.protocol.values import ADDRESS, HEX, strip_0x
from ape_contract_verify.request import CodeFormat, VerificationRequest

__all__ = ["FailureKind", "VerificationResult", "Verifier", "parse_json_input"]

_DECLARATION = re.compile(r"\b(?:abstract\s+contract|contract|library|interface)\s+([A-Za-z_$][\w$]*)")
UNABLE_TO_LOCATE_NAME = "Unable to locate ContractName {name}, did you specify the correct Contract Name ?"


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
        evm = contract.get("evm") or {}
        compiled = _recompiled(result, evm, job.language)
        if not result.recompiled_creation:
            raise Failure(
                FailureKind.CONTRACT_NAME,
                f"{job.name} has no bytecode (an interface or abstract contract); submit a deployable contract",
            )

        from ape_contract_verify.evm import blueprint

        declared = blueprint.parse(runtime_on_chain)
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
            input_json = parse_json_input(request.source_code, fmt)
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


def parse_json_input(text: str, code_format: str = CodeFormat.STANDARD_JSON.value) -> CompilerInput:
    """The submission's compiler input, by the protocol's one rule (Etherscan's `{{…}}` accepted)."""
    try:
        return protocol_inputs.parse_json_input(text, code_format)
    except InvalidRequest as err:
        raise Failure(FailureKind.INVALID_INPUT, f"{err.param} {err.problem}; {err.fix}") from None


def _declared(path: str, source: SourceUnit, language: str) -> list[str]:
    """The contracts a source unit declares (a Vyper file is its one contract, named by the file)."""
    if language == "vyper":
        return [path.rsplit("/", 1)[-1].rsplit(".", 1)[0]]
    content = re.sub(r"//[^\n]*|/\*.*?\*/", "", source.get("content", ""), flags=re.S)
    return list(dict.fromkeys(_DECLARATION.findall(content)))
