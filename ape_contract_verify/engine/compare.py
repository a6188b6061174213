"""Compiled code against deployed code, creation and runtime, as explorers compare them: what differs.

Only the CBOR metadata, immutables and library link positions are ignored. A difference is
explained by its most specific cause: a library address, the compiler version (from the
deployed metadata), the metadata settings, then the code itself (whose setting `diagnose`
finds). Equal code with other constructor arguments is named argument by argument.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Literal, Protocol

from ape_contract_verify.engine.compiler_output import EvmOutput, ImmutableReferences, LinkReferences
from ape_contract_verify.engine.versions import CompilerError, parse_compiler_version
from ape_contract_verify.evm import bytecode as bc
from ape_contract_verify.evm.abi import abi_type
from ape_contract_verify.evm.reads import Creation
from ape_contract_verify.json_types import JsonObject, JsonValue
from ape_contract_verify.protocol.answers import Texts

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


# The input a failure of each kind points at, unless the failure names a setting itself.
SETTING_OF = {
    FailureKind.NO_CODE: "address",
    FailureKind.INVALID_INPUT: "input",
    FailureKind.COMPILER: "compiler",
    FailureKind.CONTRACT_NAME: "contract name",
    FailureKind.NO_CREATION: "creation transaction",
    FailureKind.BYTECODE: "source",
    FailureKind.COMPILER_VERSION: "compiler",
    FailureKind.LIBRARY: "library",
    FailureKind.CONSTRUCTOR_ARGUMENTS: "constructor arguments",
    FailureKind.CHAIN: "chain",
}


class Failure(Exception):
    """A verification that cannot pass: what kind, which input (`setting`), and why."""

    def __init__(self, kind: FailureKind, reason: str, offset: int | None = None, setting: str | None = None):
        super().__init__(reason)
        self.kind, self.reason, self.offset = kind, reason, offset
        self.setting = setting or SETTING_OF[kind]


@dataclass
class Compiled:
    """The compiler's code for one contract, with what the comparison must ignore."""

    creation: bytes
    creation_links: LinkReferences
    runtime: bytes
    runtime_links: LinkReferences
    immutables: ImmutableReferences
    trailing: int  # Vyper appends immutables after the runtime code

    @classmethod
    def from_evm(cls, evm: EvmOutput, language: str) -> Compiled:
        creation = bc.to_bytes((evm.get("bytecode") or {}).get("object") or "")
        deployed = evm.get("deployedBytecode") or {}
        runtime = bc.to_bytes(deployed.get("object") or "")  # placeholders zeroed
        return cls(
            creation=creation,
            creation_links=(evm.get("bytecode") or {}).get("linkReferences") or {},
            runtime=runtime,
            runtime_links=deployed.get("linkReferences") or {},
            immutables=deployed.get("immutableReferences") or {},
            trailing=bc.vyper_immutables(creation, runtime) if language == "vyper" else 0,
        )

    def compare_runtime(self, on_chain: bytes) -> bc.Comparison:
        return bc.compare(
            self.runtime,
            on_chain,
            immutable_references=self.immutables,
            link_references=self.runtime_links,
            trailing_immutables=self.trailing,
        )


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
) -> Matched:
    """`Matched`, or `Failure` saying what differs. `diagnose()` -> (setting, text) is called only
    when the code differs for no reason found here.

    `creation=None` compares the runtime code alone and takes the submitted constructor arguments
    as they are: the pre-check on a node without traces cannot see a factory's CREATE, while the
    explorer it submits to can."""
    creation_input = creation.input if creation is not None else b""
    creation_cmp = None
    deployed_args = submitted_args
    if creation is not None:
        chain_init = creation_input[: len(compiled.creation)]
        deployed_args = bc.split_constructor_args(creation_input, compiled.creation)
        creation_cmp = bc.compare(compiled.creation, chain_init, link_references=compiled.creation_links)
    runtime_cmp = compiled.compare_runtime(runtime_on_chain)
    version_reason = compiler_version_difference(compiler_version, runtime_on_chain, creation_input)

    if (creation_cmp is not None and not creation_cmp.matches) or not runtime_cmp.matches:
        for code, on_chain in ((compiled.runtime, runtime_on_chain), (compiled.creation, creation_input)):
            library = _linked_library_difference(code, on_chain, libraries)
            if library:
                raise Failure(FailureKind.LIBRARY, f"{LIBRARY_REQUIRED}: {library}")
        if version_reason:
            raise Failure(FailureKind.COMPILER_VERSION, f"{Texts.BYTECODE_MISMATCH} {version_reason}")
        # When the runtime code matches, the creation code was compared and differs.
        which, cmp = (
            ("runtime", runtime_cmp) if not runtime_cmp.matches or creation_cmp is None else ("creation", creation_cmp)
        )
        trailing_reason = _trailing_difference(compiled, runtime_on_chain) if which == "runtime" else None
        if trailing_reason:
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
    # Libraries linked at compile time (settings.libraries) were checked by the code comparison.
    by_settings = {
        name: address
        for name, address in libraries.items()
        if bc.find_address(compiled.runtime, address) or bc.find_address(compiled.creation, address)
    }
    if version_reason:
        raise Failure(FailureKind.COMPILER_VERSION, f"{Texts.BYTECODE_MISMATCH} {version_reason}")
    if submitted_args != deployed_args:
        raise Failure(
            FailureKind.CONSTRUCTOR_ARGUMENTS,
            f"{Texts.CHECK_CONSTRUCTOR_ARGUMENTS} {constructor_arguments_reason(submitted_args, deployed_args, abi)}",
        )
    full = runtime_cmp.match == "full" and (creation_cmp is None or creation_cmp.match == "full")
    return Matched("full" if full else "partial", {**by_settings, **found}, deployed_args)


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


# --- helpers ----------------------------------------------------------------------------------


def lookup_library(libraries: dict[str, str], name: str) -> str | None:
    return libraries.get(name) or libraries.get(name.rsplit(":", 1)[-1])


def _linked_library_difference(compiled: bytes, on_chain: bytes, libraries: dict[str, str]) -> str | None:
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


def _trailing_difference(compiled: Compiled, on_chain: bytes) -> str | None:
    """The deployed code is the compiled runtime followed by more or fewer bytes than the
    immutables' size: said as such, since no setting explains it (nothing is masked then)."""
    size = len(compiled.runtime)
    if not compiled.trailing or len(on_chain) <= size or len(on_chain) == size + compiled.trailing:
        return None
    prefix = bc.compare(
        compiled.runtime,
        on_chain[:size],
        immutable_references=compiled.immutables,
        link_references=compiled.runtime_links,
    )
    if not prefix.matches:
        return None
    return (
        f"The deployed code is the compiled runtime code ({size} bytes) followed by {len(on_chain) - size} bytes, "
        f"but the contract's immutables take {compiled.trailing} bytes (as its creation code says): "
        "the deployed code is not what this contract's creation code deploys."
    )


def _only_tail_metadata_differs(compiled: Compiled, on_chain: bytes) -> bool:
    """Equal code once both CBOR tails are cut off (one may have none): only metadata settings differ."""
    ranges = bc.masked_ranges(compiled.immutables, compiled.runtime_links)
    body = bc.zero_ranges(bc.strip_metadata(compiled.runtime), ranges)
    return bool(body) and body == bc.zero_ranges(bc.strip_metadata(on_chain), ranges)


def compiler_version_difference(requested: str, runtime: bytes, creation_input: bytes) -> str | None:
    """When the deployed code's metadata names another compiler version than the submitted one."""
    try:
        version = parse_compiler_version(requested)
    except CompilerError:
        return None
    segment = bc.tail_metadata(runtime) or bc.tail_metadata(creation_input)
    if segment is None:
        # Vyper keeps its metadata in the initcode only: the last blob before the arguments.
        for candidate in bc.metadata_segments(creation_input):
            segment = candidate
    recorded = segment.compiler if segment else None
    # The metadata records the release (0.4.0 for 0.4.0rc6; a nightly's as text, and so differing).
    if recorded and recorded[1] != ".".join(str(part) for part in version.release):
        return (
            f"Compiler version differs: the deployed code's metadata says {recorded[0]} {recorded[1]}, "
            f"but {requested} was submitted"
        )
    return None
