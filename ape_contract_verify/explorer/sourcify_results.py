"""An engine result as the Sourcify face's job records it: match levels, or an error with the bytecodes.

The error has Sourcify's `customCode`, message and both sides' bytecodes, in the JSON text the job answer serves.

The job runner writes these; `sourcify_face` reads them. The rules of the protocol itself
(codes, error shape, which match is better) are `protocol/sourcify.py`'s.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ape_contract_verify.json_types import JsonObject, JsonValue
from ape_contract_verify.protocol import sourcify as sfy

if TYPE_CHECKING:
    from ape_contract_verify.engine.verifier import VerificationResult

# The engine's failure kinds (FailureKind values) as Sourcify's customCodes.
_CODES = {
    "no code": sfy.CONTRACT_NOT_DEPLOYED,
    "compiler": sfy.COMPILER_ERROR,
    "invalid input": sfy.COMPILER_ERROR,
    "contract name": sfy.CONTRACT_NOT_FOUND_IN_COMPILER_OUTPUT,
    "creation not found": sfy.CREATION_BYTECODE_MATCH_ERROR,
    "constructor arguments": sfy.CREATION_BYTECODE_MATCH_ERROR,
    "compiler version": sfy.NO_MATCH,
    "library": sfy.NO_MATCH,
    "bytecode": sfy.NO_MATCH,
    "chain": sfy.INTERNAL_ERROR,
}
# The result's fields a verified contract keeps for lookups.
_KEPT = "recompiled_creation recompiled_runtime onchain_creation creation_tx creation_block deployer factory metadata"
MISMATCH = "The deployed and recompiled bytecode don't match."  # Sourcify's no_match text
# Engine match levels as Sourcify's.
LEVELS = {"full": sfy.EXACT_MATCH, "partial": sfy.MATCH}


def hex_or_none(text: JsonValue) -> str | None:
    """Code as Sourcify shows it: 0x-prefixed hex, or null when there is none."""
    return "0x" + str(text).removeprefix("0x") if text else None


def details(result: VerificationResult) -> JsonObject:
    """What a verified contract keeps for Sourcify lookups (`creationBytecode`, `deployment`, …)."""
    kept = {name: getattr(result, name) for name in _KEPT.split()}
    return {name: value for name, value in kept.items() if value not in (None, "")}


def success(match: str, milliseconds: float) -> str:
    level = LEVELS.get(match, sfy.MATCH)
    return json.dumps(
        {"creationMatch": level, "runtimeMatch": level, "match": level, "compilationTime": str(int(milliseconds))}
    )


def failure(result: VerificationResult) -> str:
    """A failed verification as Sourcify's job error, with the bytecodes its no_match carries."""
    kind = result.failure.value if result.failure is not None else ""
    code = _CODES.get(kind, sfy.NO_MATCH)
    reason = result.reason or MISMATCH
    runtime, onchain_runtime = result.recompiled_runtime, result.onchain_runtime
    extra: dict[str, JsonValue] = {}
    if kind == "bytecode" and runtime and onchain_runtime and len(runtime) != len(onchain_runtime):
        code = sfy.BYTECODE_LENGTH_MISMATCH
    if code in (sfy.NO_MATCH, sfy.BYTECODE_LENGTH_MISMATCH, sfy.CREATION_BYTECODE_MATCH_ERROR):
        extra["recompiledCreationCode"] = hex_or_none(result.recompiled_creation)
        extra["recompiledRuntimeCode"] = hex_or_none(runtime)
        if code != sfy.BYTECODE_LENGTH_MISMATCH:  # as Sourcify: a length mismatch stops before the creation code
            extra["onchainCreationCode"] = hex_or_none(result.onchain_creation)
    if code != sfy.CONTRACT_NOT_DEPLOYED:
        extra["onchainRuntimeCode"] = hex_or_none(onchain_runtime)
        extra["creationTransactionHash"] = result.creation_tx
    if code == sfy.COMPILER_ERROR:
        error: JsonObject = dict(
            component="general", formattedMessage=reason, message=reason, severity="error", type="CompilerError"
        )
        extra["errorData"] = {"compilerErrors": [error]}
    extra = {key: value for key, value in extra.items() if value}
    return json.dumps({"error": sfy.error_body(code, reason, **extra)})


def error(code: str, message: str) -> str:
    """A job that ended without a verification result (already verified, an internal error)."""
    return json.dumps({"error": sfy.error_body(code, message)})


def read(result_text: str | None) -> dict[str, JsonValue]:
    """A finished job's recorded answer. A plain text (a job ended by the queue itself, e.g.
    interrupted too often) reads as an internal error with that text."""
    try:
        data = json.loads(result_text or "")
        if isinstance(data, dict):
            return data
    except ValueError:
        pass
    return {"error": sfy.error_body(sfy.INTERNAL_ERROR, result_text or "The job ended without an answer.")}
