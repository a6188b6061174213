"""An ERC-5202 blueprint's body against the compiled creation code, as explorers verify blueprints.

The body after the preamble is the compiled creation code (constructor arguments, if any, follow
it). Its code never runs, so no compiler setting is searched for: a difference is said as a difference of
the creation code, never blamed on a setting."""

from __future__ import annotations

from collections.abc import Sequence

from ape_contract_verify.engine.compare import (
    AbiEntry,
    Compiled,
    Failure,
    FailureKind,
    Matched,
    compiler_version_difference,
    constructor_arguments_reason,
)
from ape_contract_verify.evm import bytecode as bc
from ape_contract_verify.evm.blueprint import BLUEPRINT, Blueprint
from ape_contract_verify.protocol.answers import Texts


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
    cmp = bc.compare(creation, body[: len(creation)], link_references=compiled.creation_links)
    where = f"{BLUEPRINT}: its body ({len(body)} bytes after the {blueprint.preamble_length}-byte preamble)"
    if len(body) < len(creation) or not cmp.matches:
        version_reason = compiler_version_difference(compiler_version, b"", body)
        if version_reason:
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
