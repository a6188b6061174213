"""The verification engine: compile what was submitted and compare it with what is on chain.

It compares the creation code plus constructor arguments with the deployment's input, and the
runtime code with `eth_getCode`, ignoring only the CBOR metadata, immutables and library link
positions, as explorers do. A failure says *what* differs (constructor arguments, a library
address, the compiler, or the code at a byte offset), so users know what to fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional

from ape_contract_verify.evm import bytecode as bc
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.engine.compilers import (
    DEFAULT_TIMEOUT,
    CompileCache,
    CompilerError,
    compile_input,
    parse_compiler_version,
    single_file_input,
    with_output_selection,
)
from ape_contract_verify.evm.chain import ChainError, ChainReader, Creation
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.protocol.values import ADDRESS

_HEX = re.compile(r"^(0x)?[0-9a-fA-F]*$")
_DECLARATION = re.compile(r"\b(?:abstract\s+contract|contract|library|interface)\s+([A-Za-z_$][\w$]*)")
UNABLE_TO_LOCATE_NAME = "Unable to locate ContractName {name}, did you specify the correct Contract Name ?"
LIBRARY_REQUIRED = Texts.LIBRARY_NOT_FOUND
SETTINGS_HINT = "settings or source differ: compiler, optimizer runs, evmVersion, viaIR or a source line"
VYPER_SETTINGS_HINT = "settings or source differ: compiler version, optimize (gas, codesize, none), evmVersion or a source line"


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


@dataclass
class VerificationResult:
    """The outcome of one verification, with everything getsourcecode needs when it passed."""

    verified: bool
    match: Optional[str]  # "full", "partial", or None when not verified
    reason: str  # why it failed, or a note on a partial match; no "Fail - …" prefix
    address: str = ""
    failure: Optional[FailureKind] = None
    abi: list = field(default_factory=list)
    contract_name: str = ""  # as submitted (path/File.sol:Name or Name)
    compiler_version: str = ""
    code_format: str = ""
    settings: dict = field(default_factory=dict)  # the compiler settings used (no outputSelection)
    sources: dict = field(default_factory=dict)  # source unit name -> content
    source_code: str = ""  # the submission as sent
    constructor_arguments: str = ""  # hex without 0x, as the deployment used them
    libraries: dict = field(default_factory=dict)  # library name -> on-chain address
    license_type: Optional[int] = None
    optimization_used: bool = False
    runs: int = 200
    evm_version: str = "Default"
    via_ir: bool = False
    creation_tx: Optional[str] = None
    factory: bool = False
    offset: Optional[int] = None  # first differing byte, for bytecode failures

    @property
    def text(self) -> str:
        """The checkverifystatus result text."""
        if self.verified:
            return Texts.PASS
        if self.failure == FailureKind.NO_CODE:
            return Texts.UNABLE_TO_LOCATE.format(address=self.address)
        return f"{Texts.FAIL}. {self.reason}"


class _Failure(Exception):
    def __init__(self, kind: FailureKind, reason: str, offset: Optional[int] = None):
        super().__init__(reason)
        self.kind, self.reason, self.offset = kind, reason, offset


@dataclass
class _Prepared:
    input_json: dict
    file: str
    name: str
    language: str


class Verifier:
    """Verifies submissions against one chain. Thread-safe: the cache and the chain reader are."""

    def __init__(
        self,
        chain: ChainReader,
        cache: Optional[CompileCache] = None,
        compile_timeout: float = DEFAULT_TIMEOUT,
        diagnose_compiles: int = 4,
    ):
        """`diagnose_compiles`: on a code mismatch, how many single-setting variations (optimizer,
        runs, viaIR, evmVersion) to compile to tell the user which setting the deployment used."""
        self.chain = chain
        self.cache = cache if cache is not None else CompileCache()
        self.compile_timeout = compile_timeout
        self.diagnose_compiles = diagnose_compiles

    def verify(self, request: VerificationRequest) -> VerificationResult:
        result = VerificationResult(
            verified=False,
            match=None,
            reason="",
            address=request.address,
            contract_name=request.contract_name,
            compiler_version=request.compiler_version,
            code_format=_format_value(request.code_format),
            source_code=request.source_code,
            license_type=request.license_type,
        )
        try:
            self._verify(request, result)
        except _Failure as failure:
            result.verified, result.match = False, None
            result.failure, result.reason, result.offset = failure.kind, failure.reason, failure.offset
        except ChainError as err:
            result.verified, result.match = False, None
            result.failure, result.reason = FailureKind.CHAIN, f"The chain could not be read: {err}"
        return result

    # --- steps ----------------------------------------------------------------------------

    def _verify(self, request: VerificationRequest, result: VerificationResult) -> None:
        address = (request.address or "").strip()
        if not ADDRESS.match(address):
            raise _Failure(FailureKind.INVALID_INPUT, f"contractaddress {address!r} is not a 0x-prefixed 20-byte address")
        runtime_on_chain = self.chain.get_code(address)
        if not runtime_on_chain:
            raise _Failure(FailureKind.NO_CODE, Texts.UNABLE_TO_LOCATE.format(address=address))
        submitted_args = _clean_hex(request.constructor_arguments, "constructorArguements")

        prepared = self._prepare(request)
        result.sources = {path: src.get("content", "") for path, src in prepared.input_json.get("sources", {}).items()}
        result.settings = {k: v for k, v in prepared.input_json.get("settings", {}).items() if k != "outputSelection"}
        _fill_settings(result, result.settings, prepared.language)
        if result.license_type is None:
            from ape_contract_verify.protocol.licenses import code_from_source

            result.license_type = code_from_source(result.sources.get(prepared.file, ""))

        try:
            output = compile_input(
                request.compiler_version,
                with_output_selection(prepared.input_json, prepared.file, prepared.name),
                timeout=self.compile_timeout,
                cache=self.cache,
            )
        except CompilerError as err:
            raise _Failure(FailureKind.COMPILER, str(err)) from err
        contract = ((output.get("contracts") or {}).get(prepared.file) or {}).get(prepared.name)
        if not contract:
            raise _Failure(FailureKind.CONTRACT_NAME, self._name_reason(prepared))
        result.abi = contract.get("abi") or []
        evm = contract.get("evm") or {}
        if not (evm.get("bytecode") or {}).get("object"):
            raise _Failure(
                FailureKind.CONTRACT_NAME,
                f"{prepared.name} has no bytecode (an interface or abstract contract); submit a deployable contract",
            )

        creation = self.chain.find_creation(address)
        if creation is None:
            raise _Failure(
                FailureKind.NO_CREATION,
                f"Unable to find the transaction that created {address}: searched the recent blocks for a "
                "deployment, and factory deployments need a node that offers traces (debug_/trace_)",
            )
        result.creation_tx, result.factory = creation.tx_hash, creation.factory
        self._compare(request, prepared, evm, creation, runtime_on_chain, submitted_args, result)

    def _prepare(self, request: VerificationRequest) -> _Prepared:
        fmt = _format_value(request.code_format)
        try:
            version = parse_compiler_version(request.compiler_version, "vyper" if fmt == CodeFormat.VYPER_JSON.value else None)
        except CompilerError as err:
            raise _Failure(FailureKind.INVALID_INPUT, str(err)) from err
        if fmt == CodeFormat.SINGLE_FILE.value:
            if version.language != "solidity":
                raise _Failure(FailureKind.INVALID_INPUT, "solidity-single-file needs a Solidity compilerversion such as v0.8.26+commit.8a97fa7a")
            name = request.bare_name
            file = f"{name}.sol"
            if name not in _declared_names(file, request.source_code, "solidity"):
                found = ", ".join(_declared_names(file, request.source_code, "solidity")) or "none"
                raise _Failure(FailureKind.CONTRACT_NAME, UNABLE_TO_LOCATE_NAME.format(name=name) + f" The source declares: {found}")
            input_json = single_file_input(
                request.source_code,
                file_name=file,
                optimizer=request.optimization_used,
                runs=request.runs,
                evm_version=request.evm_version,
                via_ir=request.via_ir,
                libraries=request.libraries or None,
            )
            return _Prepared(input_json, file, name, "solidity")
        if fmt not in (CodeFormat.STANDARD_JSON.value, CodeFormat.VYPER_JSON.value):
            raise _Failure(FailureKind.INVALID_INPUT, f"codeformat {fmt!r} is not supported; use solidity-single-file, solidity-standard-json-input or vyper-json")
        input_json = parse_json_input(request.source_code)
        language = "vyper" if fmt == CodeFormat.VYPER_JSON.value else "solidity"
        input_json.setdefault("language", "Vyper" if language == "vyper" else "Solidity")
        if str(input_json["language"]).lower() != language:
            raise _Failure(FailureKind.INVALID_INPUT, f"codeformat {fmt} does not match the input's language {input_json['language']!r}")
        if language == "vyper" and version.language != "vyper":
            version_text = request.compiler_version
            raise _Failure(FailureKind.INVALID_INPUT, f"compilerversion {version_text!r} is not a Vyper version; use the form vyper:0.4.3")
        sources = input_json["sources"]
        file, _, name = request.contract_name.rpartition(":")
        if not file:  # a bare name: find the one source that declares it
            file = self._file_declaring(sources, name, language)
        if file not in sources:
            raise _Failure(
                FailureKind.CONTRACT_NAME,
                UNABLE_TO_LOCATE_NAME.format(name=request.contract_name)
                + f" The input has no source unit {file!r}; use path:Name with one of: {', '.join(sorted(sources)[:10])}",
            )
        prepared = _Prepared(input_json, file, name, language)
        if name not in _declared_names(file, sources[file].get("content", ""), language):
            raise _Failure(FailureKind.CONTRACT_NAME, self._name_reason(prepared))  # no compile needed
        return prepared

    def _file_declaring(self, sources: dict, name: str, language: str) -> str:
        matches = [path for path, src in sources.items() if name in _declared_names(path, src.get("content", ""), language)]
        if len(matches) == 1:
            return matches[0]
        where = f"it is declared in {', '.join(sorted(matches)[:5])}" if matches else "no source declares it"
        raise _Failure(
            FailureKind.CONTRACT_NAME,
            UNABLE_TO_LOCATE_NAME.format(name=name) + f" {where}; use path/File.sol:{name} (the source unit name in the input)",
        )

    def _name_reason(self, prepared: _Prepared) -> str:
        content = prepared.input_json["sources"][prepared.file].get("content", "")
        found = _declared_names(prepared.file, content, prepared.language)
        hint = f" {prepared.file} declares: {', '.join(found)}" if found else ""
        return UNABLE_TO_LOCATE_NAME.format(name=prepared.name) + hint

    def _diagnose(self, request: VerificationRequest, prepared: _Prepared, runtime_on_chain: bytes) -> str:
        """Which single setting change reproduces the deployed code, within a small compile budget."""
        if self.diagnose_compiles <= 0:
            return f"{VYPER_SETTINGS_HINT if prepared.language == 'vyper' else SETTINGS_HINT}."
        tried = []
        if prepared.language == "vyper":
            from ape_contract_verify.engine import vyper_settings

            # A setting may sit in a `# pragma` line: each variant changes it there too.
            variations = [
                (f"settings.{description.replace(': ', '=')}", variant)
                for _, description, variant in vyper_settings.variants(prepared.input_json, prepared.file)
            ]
            hint = VYPER_SETTINGS_HINT
        else:
            single_file = _format_value(request.code_format) == CodeFormat.SINGLE_FILE.value
            variations = [
                (label, {**prepared.input_json, "settings": settings})
                for label, settings in _setting_variations(prepared.input_json.get("settings") or {}, single_file)
            ]
            hint = SETTINGS_HINT
        for label, variant in variations[: self.diagnose_compiles]:
            tried.append(label)
            try:
                output = compile_input(
                    request.compiler_version,
                    with_output_selection(variant, prepared.file, prepared.name),
                    timeout=self.compile_timeout,
                    cache=self.cache,
                )
            except CompilerError:
                continue
            evm = (((output.get("contracts") or {}).get(prepared.file) or {}).get(prepared.name) or {}).get("evm") or {}
            deployed = evm.get("deployedBytecode") or {}
            if not deployed.get("object"):
                continue
            layout = bc.vyper_layout((evm.get("bytecode") or {}).get("object") or "") if prepared.language == "vyper" else None
            candidate = bc.compare(
                deployed["object"],
                runtime_on_chain,
                immutable_references=deployed.get("immutableReferences"),
                link_references=deployed.get("linkReferences"),
                trailing_immutables=layout.immutable_size if layout else 0,
            )
            if candidate.matches:
                return f"the deployed code was compiled with {label}: resubmit with that setting."
        return (
            f"{hint}. No single change among {', '.join(tried)} reproduces it, so the source "
            "or the compiler most likely differs."
        )

    def _compare(
        self,
        request: VerificationRequest,
        prepared: _Prepared,
        evm: dict,
        creation: Creation,
        runtime_on_chain: bytes,
        submitted_args: str,
        result: VerificationResult,
    ) -> None:
        creation_code = bc.to_bytes(evm["bytecode"]["object"])
        creation_links = evm["bytecode"].get("linkReferences") or {}
        runtime_code = bc.to_bytes(evm.get("deployedBytecode", {}).get("object") or "")
        runtime_links = evm.get("deployedBytecode", {}).get("linkReferences") or {}
        immutables = evm.get("deployedBytecode", {}).get("immutableReferences") or {}
        trailing = 0
        if prepared.language == "vyper":
            layout = bc.vyper_layout(creation_code)
            trailing = layout.immutable_size if layout else 0

        chain_init = creation.input[: len(creation_code)]
        deployed_args = creation.input[len(creation_code):].hex() if len(creation.input) >= len(creation_code) else ""
        creation_cmp = bc.compare(creation_code, chain_init, link_references=creation_links)
        runtime_cmp = bc.compare(
            runtime_code, runtime_on_chain, immutable_references=immutables, link_references=runtime_links, trailing_immutables=trailing
        )
        submitted_libraries = _submitted_libraries(request, prepared)

        if not creation_cmp.matches or not runtime_cmp.matches:
            # Explain the most specific cause first: a library address, the compiler, then the code.
            for compiled, on_chain in ((runtime_code, runtime_on_chain), (creation_code, creation.input)):
                library = _linked_library_difference(compiled, on_chain, submitted_libraries)
                if library:
                    raise _Failure(FailureKind.LIBRARY, library)
            version_reason = _compiler_version_difference(request.compiler_version, runtime_on_chain, creation.input)
            if version_reason:
                raise _Failure(FailureKind.COMPILER_VERSION, version_reason)
            which, cmp = ("runtime", runtime_cmp) if not runtime_cmp.matches else ("creation", creation_cmp)
            if which == "runtime" and not trailing and _only_tail_metadata_differs(runtime_code, runtime_on_chain, immutables, runtime_links):
                raise _Failure(
                    FailureKind.BYTECODE,
                    "Compiled bytecode differs from the deployed code only in the CBOR metadata's shape "
                    f"(compiled {len(runtime_code)} bytes, deployed {len(runtime_on_chain)}): the metadata "
                    "settings differ (metadata.bytecodeHash or appendCBOR).",
                    offset=cmp.offset,
                )
            deployed_length = len(runtime_on_chain) if which == "runtime" else len(creation.input)
            metadata_note = " (the metadata differs as well)" if cmp.metadata_differs else ""
            raise _Failure(
                FailureKind.BYTECODE,
                f"Compiled bytecode differs from the deployed code at byte {cmp.offset} of the {which} code "
                f"(compiled {cmp.expected_length} bytes, deployed {deployed_length}){metadata_note}; "
                f"{self._diagnose(request, prepared, runtime_on_chain)}",
                offset=cmp.offset,
            )

        # Unlinked placeholders: the chain's addresses there must be the submitted libraries.
        on_chain_libraries: dict[str, str] = {}
        for code, links in ((runtime_on_chain, runtime_links), (creation.input, creation_links)):
            for library, addresses in bc.link_addresses_all(code, links).items():
                for found in addresses:
                    known = on_chain_libraries.setdefault(library, found)
                    if known != found:
                        raise _Failure(FailureKind.LIBRARY, f"Library {library} is linked at two addresses on chain: {known} and {found}")
        for library, found in on_chain_libraries.items():
            submitted = _lookup_library(submitted_libraries, library)
            if submitted is None:
                raise _Failure(
                    FailureKind.LIBRARY,
                    f"{LIBRARY_REQUIRED}: {library} is linked at {found} on chain; "
                    f"submit libraryname1={library} and libraryaddress1={found}",
                )
            if submitted.lower() != found.lower():
                raise _Failure(FailureKind.LIBRARY, f"Library {library} address differs: submitted {submitted}, on chain {found}")
        # Libraries linked at compile time (settings.libraries) are checked by the code comparison.
        linked_by_settings = {
            name: address for name, address in submitted_libraries.items() if bc.find_address(runtime_code, address) or bc.find_address(creation_code, address)
        }
        result.libraries = {**linked_by_settings, **on_chain_libraries}

        version_reason = _compiler_version_difference(request.compiler_version, runtime_on_chain, creation.input)
        if version_reason:
            raise _Failure(FailureKind.COMPILER_VERSION, version_reason)

        if submitted_args != deployed_args:
            raise _Failure(FailureKind.CONSTRUCTOR_ARGUMENTS, constructor_arguments_reason(submitted_args, deployed_args))
        result.constructor_arguments = deployed_args
        result.verified = True
        if creation_cmp.match == "full" and runtime_cmp.match == "full":
            result.match = "full"
        else:
            result.match = "partial"
            result.reason = (
                "Partial match: only the metadata hash differs (comments, source unit names or metadata "
                "settings); the code is identical"
            )


# --- helpers ----------------------------------------------------------------------------------


def constructor_arguments_reason(submitted: str, deployed: str, limit: int = 1024) -> str:
    """Both argument blobs, and where they first differ (32-byte words are how ABI encodes)."""

    def shown(hex_text: str) -> str:
        if not hex_text:
            return "(none)"
        return "0x" + (hex_text if len(hex_text) <= limit else hex_text[:limit] + f"… ({len(hex_text) // 2} bytes)")

    index = next((i for i, (a, b) in enumerate(zip(submitted, deployed)) if a != b), min(len(submitted), len(deployed)))
    where = f" (first difference at byte {index // 2}, in 32-byte word {index // 64})" if submitted and deployed else ""
    return f"Constructor arguments differ: submitted {shown(submitted)} but the deployment used {shown(deployed)}{where}"


def _format_value(code_format: Any) -> str:
    return code_format.value if isinstance(code_format, CodeFormat) else str(code_format or "")


def _clean_hex(value: Optional[str], parameter: str) -> str:
    text = re.sub(r"\s+", "", value or "")
    if not _HEX.match(text) or len(text.removeprefix("0x").removeprefix("0X")) % 2:
        raise _Failure(
            FailureKind.INVALID_INPUT,
            f"{Texts.INVALID_CONSTRUCTOR_ARGUMENTS} ({parameter} must be ABI-encoded hex)",
        )
    return text.removeprefix("0x").removeprefix("0X").lower()


def parse_json_input(text: str) -> dict:
    """The standard-json / vyper-json input of a submission; accepts Etherscan's `{{…}}` wrapping."""
    raw = (text or "").strip()
    if raw.startswith("{{") and raw.endswith("}}"):
        raw = raw[1:-1]
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise _Failure(FailureKind.INVALID_INPUT, f"sourceCode is not valid JSON ({err.msg} at line {err.lineno} column {err.colno})") from err
    if not isinstance(data, dict) or not isinstance(data.get("sources"), dict) or not data["sources"]:
        raise _Failure(FailureKind.INVALID_INPUT, "sourceCode must be a standard-json input: an object with a non-empty \"sources\"")
    for path, source in data["sources"].items():
        if not isinstance(source, dict) or not isinstance(source.get("content"), str):
            raise _Failure(
                FailureKind.INVALID_INPUT,
                f"sources[{path!r}] has no \"content\"; include every source's text (urls are not fetched)",
            )
    if "settings" in data and not isinstance(data["settings"], dict):
        raise _Failure(FailureKind.INVALID_INPUT, "\"settings\" in the standard-json input must be an object")
    return data


def _declared_names(path: str, content: str, language: str) -> list[str]:
    if language == "vyper":
        return [path.rsplit("/", 1)[-1].rsplit(".", 1)[0]]
    return list(dict.fromkeys(_DECLARATION.findall(re.sub(r"//[^\n]*|/\*.*?\*/", "", content, flags=re.S))))


def _fill_settings(result: VerificationResult, settings: dict, language: str) -> None:
    optimizer = settings.get("optimizer") or {}
    if language == "vyper":
        result.optimization_used = settings.get("optimize", "gas") != "none"
        result.runs = 0
    else:
        result.optimization_used = bool(optimizer.get("enabled", False))
        result.runs = int(optimizer.get("runs", 200))
    result.evm_version = settings.get("evmVersion") or "Default"
    result.via_ir = bool(settings.get("viaIR", False))


def _submitted_libraries(request: VerificationRequest, prepared: _Prepared) -> dict[str, str]:
    """Library name -> address from the form and from settings.libraries ({file: {name: addr}})."""
    libraries: dict[str, str] = {}
    for per_file in (prepared.input_json.get("settings", {}).get("libraries") or {}).values():
        if isinstance(per_file, dict):
            libraries.update({name: str(address) for name, address in per_file.items()})
    for name, address in (request.libraries or {}).items():
        libraries[name.rsplit(":", 1)[-1]] = address
    return {name: address if address.startswith("0x") else "0x" + address for name, address in libraries.items()}


def _lookup_library(libraries: dict[str, str], name: str) -> Optional[str]:
    return libraries.get(name) or libraries.get(name.rsplit(":", 1)[-1])


def _linked_library_difference(compiled: bytes, on_chain: bytes, libraries: dict[str, str]) -> Optional[str]:
    """A submitted library linked at compile time whose position holds another address on chain."""
    for name, address in libraries.items():
        try:
            positions = bc.find_address(compiled, address)
        except ValueError:
            continue
        for position in positions:
            found = on_chain[position : position + 20]
            if len(found) == 20 and found != compiled[position : position + 20]:
                return f"Library {name} address differs: submitted {address}, on chain 0x{found.hex()}"
    return None


def _setting_variations(settings: dict, single_file: bool) -> list[tuple[str, dict]]:
    """The usual mistakes, most common first, as (label, settings) with one setting changed."""
    optimizer = dict(settings.get("optimizer") or {})
    enabled, runs = bool(optimizer.get("enabled", False)), int(optimizer.get("runs", 200))
    name = {"optimizer": "optimizationUsed", "runs": "runs", "viaIR": "viaIR", "evmVersion": "evmversion"} if single_file else {
        "optimizer": "optimizer.enabled", "runs": "optimizer.runs", "viaIR": "viaIR", "evmVersion": "evmVersion"}

    def changed(**updates: Any) -> dict:
        return {**settings, **updates}

    variations = []
    if enabled:
        off = "0" if single_file else "false"
        variations.append((f"the optimizer disabled ({name['optimizer']}={off})", changed(optimizer={**optimizer, "enabled": False})))
        if runs != 200:
            variations.append((f"{name['runs']}=200", changed(optimizer={**optimizer, "runs": 200})))
    else:
        on = "1" if single_file else "true"
        variations.append((f"the optimizer enabled with {runs} runs ({name['optimizer']}={on})", changed(optimizer={**optimizer, "enabled": True, "runs": runs})))
    via_ir = bool(settings.get("viaIR", False))
    variations.append((f"{name['viaIR']}={'false' if via_ir else 'true'}", changed(viaIR=not via_ir)))
    if settings.get("evmVersion"):
        variations.append((f"the compiler's default {name['evmVersion']}", {k: v for k, v in settings.items() if k != "evmVersion"}))
    for evm in ("paris", "shanghai", "london"):
        if evm != settings.get("evmVersion"):
            variations.append((f"{name['evmVersion']}={evm}", changed(evmVersion=evm)))
    if enabled:
        for other in (1, 1000, 10000, 999999):
            if other not in (runs, 200):
                variations.append((f"{name['runs']}={other}", changed(optimizer={**optimizer, "runs": other})))
    return variations


def _only_tail_metadata_differs(compiled: bytes, on_chain: bytes, immutables: dict, links: dict) -> bool:
    """Equal code once both CBOR tails are cut off (one may have none): only metadata settings differ."""
    ranges = bc.immutable_ranges(immutables) + [(p.start, p.length) for p in bc.link_positions(links)]
    body = bc.zero_ranges(bc.strip_metadata(compiled), ranges)
    return bool(body) and body == bc.zero_ranges(bc.strip_metadata(on_chain), ranges)


def _compiler_version_difference(requested: str, runtime: bytes, creation_input: bytes) -> Optional[str]:
    """When the deployed code's metadata names another compiler version than the submitted one."""
    try:
        version = parse_compiler_version(requested)
    except CompilerError:
        return None
    segment = bc.tail_metadata(runtime) or bc.tail_metadata(creation_input)
    if segment is None:
        for candidate in bc.metadata_segments(creation_input):
            segment = candidate
    recorded = segment.compiler if segment else None
    if recorded and recorded[1] != version.version:
        return (
            f"Compiler version differs: the deployed code's metadata says {recorded[0]} {recorded[1]}, "
            f"but {requested} was submitted"
        )
    return None
