"""Compiled code against deployed code, creation and runtime, as explorers compare them: what differs.

Only the CBOR metadata, immutables and library link positions are ignored. A difference is
explained by its most specific cause: a library address, the compiler version (from the
deployed metadata), the metadata settings, then the code itself (whose setting `diagnose`
finds). Equal code with other constructor arguments is named argument by argument.

An ERC-5202 blueprint's body is the compiled creation code (constructor arguments, if any, follow
it), as explorers verify blueprints (`compare_blueprint`). Its code never runs, so no compiler
setting is searched for: a difference is said as a difference of the creation code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Literal, Protocol

from ape_contract_verify.engine.compilers import (
    CompilerError,
    EvmOutput,
    ImmutableReferences,
    LinkReferences,
    code_objects,
    parse_compiler_version,
)
from ape_contract_verify.evm import bytecode as bc
from ape_contract_verify.evm.abi import abi_type
from ape_contract_verify.evm.blueprint import BLUEPRINT, Blueprint
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
        made, deployed = evm.get("bytecode") or {}, evm.get("deployedBytecode") or {}
        creation, runtime = (bc.to_bytes(code) for code in code_objects(evm))  # placeholders zeroed
        trailing = 0
        if language == "vyper":  # the size in the initcode's metadata (>= 0.3.10), else what its deploy
            # sequence returns beyond the runtime (0.3.x has no such metadata)
            layout = bc.vyper_layout(creation)
            trailing = layout.immutable_size if layout else bc.vyper_deploy_immutables(creation, runtime) or 0
        return cls(
            creation=creation,
            creation_links=made.get("linkReferences") or {},
            runtime=runtime,
            runtime_links=deployed.get("linkReferences") or {},
            immutables=deployed.get("immutableReferences") or {},
            trailing=trailing,
        )

    def compare_creation(self, on_chain: bytes) -> bc.Comparison:
        """Against the code a creation's input (or a blueprint's body) starts with."""
        return bc.compare(self.creation, on_chain[: len(self.creation)], link_references=self.creation_links)

    def reproduces(self, runtime: bytes, creation_input: bytes | None = None) -> bool:
        """Whether this is the deployment's code: its runtime, and its creation code when known."""
        matches = self.compare_runtime(runtime).matches
        return matches and (not creation_input or self.compare_creation(creation_input).matches)

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
    creation_cmp = None
    deployed_args = submitted_args
    if creation is not None:
        # links are placeholders of the same length: the input past the code is the arguments
        deployed_args = bc.split_constructor_args(creation_input, compiled.creation)
        creation_cmp = compiled.compare_creation(creation_input)
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


# --- helpers ----------------------------------------------------------------------------------


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
