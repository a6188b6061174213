"""Sourcify API v2's rules, once, for the client that submits and the local explorer's face that receives.

The client builds its submissions with them and the local explorer's Sourcify face reads
submissions and answers errors with the same ones.

A submission is `POST {base}v2/verify/{chainId}/{address}` with the JSON body
`{stdJsonInput, compilerVersion, contractIdentifier, creationTransactionHash?}`; it answers 202
`{verificationId}`, or an error `{customCode, message, errorId}` whose codes are below (recorded
from Sourcify 3.12.1: see tests/data/sourcify-answers/).
"""

import json
import re
import uuid
from collections.abc import Mapping
from typing import TypedDict, TypeVar

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.json_types import JsonObject, JsonValue
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.protocol.compiler_version import CompilerVersion, InvalidCompilerVersion, Language
from ape_contract_verify.protocol.forms import clip, compiler_language, validate_address, validate_compiler_version
from ape_contract_verify.protocol.inputs import CompilerInput, CompilerSettings, parse_json_input
from ape_contract_verify.protocol.values import TX_HASH
from ape_contract_verify.request import CodeFormat, VerificationRequest

# -- error codes (`customCode`) ------------------------------------------------------------------
INVALID_PARAMETER = "invalid_parameter"
UNSUPPORTED_CHAIN = "unsupported_chain"
ALREADY_VERIFIED = "already_verified"
TOO_MANY_REQUESTS = "too_many_requests"
DUPLICATE_VERIFICATION_REQUEST = "duplicate_verification_request"
JOB_NOT_FOUND = "job_not_found"
INTERNAL_ERROR = "internal_error"
PROXY_RESOLUTION_ERROR = "proxy_resolution_error"
# A completed job's error codes (lib-sourcify's verification and compilation errors; others, such
# as compiled_bytecode_is_zero and extra_file_input_bug, are read as failures too: `outcome_for`).
NO_MATCH = "no_match"
BYTECODE_LENGTH_MISMATCH = "bytecode_length_mismatch"
COMPILER_ERROR = "compiler_error"
CONTRACT_NOT_FOUND_IN_COMPILER_OUTPUT = "contract_not_found_in_compiler_output"
CONTRACT_NOT_DEPLOYED = "contract_not_deployed"
CANT_FETCH_BYTECODE = "cant_fetch_bytecode"
CREATION_BYTECODE_MATCH_ERROR = "creation_bytecode_match_error"

# Match values: `exact_match` (metadata hash too) beats `match` (all but the metadata).
EXACT_MATCH = "exact_match"
MATCH = "match"
_MATCH_RANK = {None: 0, MATCH: 1, EXACT_MATCH: 2}

_OUTCOMES = {
    ALREADY_VERIFIED: Outcome.ALREADY_VERIFIED,
    UNSUPPORTED_CHAIN: Outcome.UNSUPPORTED_CHAIN,
    TOO_MANY_REQUESTS: Outcome.RATE_LIMITED,
    DUPLICATE_VERIFICATION_REQUEST: Outcome.RATE_LIMITED,  # the address is being verified: wait, look again
    JOB_NOT_FOUND: Outcome.UNKNOWN_GUID,
    INVALID_PARAMETER: Outcome.ERROR,
    INTERNAL_ERROR: Outcome.ERROR,
    PROXY_RESOLUTION_ERROR: Outcome.ERROR,
    CONTRACT_NOT_DEPLOYED: Outcome.NOT_FOUND,
    CANT_FETCH_BYTECODE: Outcome.NOT_FOUND,
}  # every other code (no_match, compiler_error, …) is FAILED: see outcome_for


def outcome_for(custom_code: str | None) -> Outcome:
    """The outcome of an error code. A code not listed is a completed job's failure (lib-sourcify
    adds codes over time; each is a reason the source did not verify)."""
    if not custom_code:
        return Outcome.ERROR
    return _OUTCOMES.get(str(custom_code), Outcome.FAILED)


def error_body(custom_code: str, message: str, **extra: JsonValue) -> JsonObject:
    """An error answer in Sourcify's shape (`errorId` is a fresh UUID, as Sourcify's are)."""
    return {"customCode": custom_code, "message": message, "errorId": str(uuid.uuid4()), **extra}


def overall_match(creation: str | None, runtime: str | None) -> str | None:
    """Sourcify's `match`: the better of the two (the recorded Vyper job answers
    creationMatch exact_match, runtimeMatch match, match exact_match)."""
    return max((creation, runtime), key=lambda m: _MATCH_RANK.get(m, 0)) or None


# -- versions -------------------------------------------------------------------------------------


def is_vyper(request: VerificationRequest) -> bool:
    """Whether `request` is Vyper's; its version and format checked against each other by the
    form's rule first (InvalidRequest naming compilerversion or codeformat), so a Solidity version
    in a vyper-json request is refused, not read as a Vyper that does not exist."""
    code_format = request.format_text
    compiler_language(request.compiler_version, code_format)
    return code_format == CodeFormat.VYPER_JSON.value or str(request.compiler_version).lower().startswith("vyper")


def sourcify_compiler_version(request: VerificationRequest, compiler_long_version: str | None = None) -> str:
    """`0.8.26+commit.8a97fa7a` (no leading v), or Vyper's `0.4.3+commit.bff19ea2`: Sourcify wants
    the commit for both. A Vyper request carries only `vyper:0.4.3`, so the caller passes the long
    version (`vyper --version` prints it)."""
    given = (compiler_long_version or request.compiler_version or "").strip()
    vyper = is_vyper(request)
    try:
        return _long_version(given, "vyper" if vyper else "solidity").plain
    except InvalidRequest:
        if not vyper:
            raise
    raise InvalidRequest(
        "compilerVersion",
        f"{clip(given)!r} has no commit; Sourcify needs the long form, e.g. 0.4.3+commit.bff19ea2",
        "pass the version `vyper --version` prints (the client finds it for installed Vypers)",
    )


def _long_version(text: str, language: Language) -> CompilerVersion:
    """The version `text` names with its commit (Sourcify's long form); InvalidRequest if it names none."""
    try:
        version: CompilerVersion | None = CompilerVersion.parse(text, language)
    except InvalidCompilerVersion:
        version = None
    if version is None or not version.commit:
        raise InvalidRequest(
            "compilerVersion",
            f"{clip(text)!r} is not a long compiler version",
            "give <major>.<minor>.<patch>+commit.<hash>, e.g. 0.8.26+commit.8a97fa7a",
        )
    return version


def _identifier(text: str | None) -> str:
    """`path:Name`, stripped; InvalidRequest naming contractIdentifier otherwise."""
    identifier = (text or "").strip()
    path, _, name = identifier.rpartition(":")
    if not path or not name:
        raise InvalidRequest(
            "contractIdentifier",
            f"{clip(identifier)!r} is not <path>:<Name>",
            "give the contract as in the JSON input, e.g. src/Box.sol:Box",
        )
    return identifier


# -- request -> body (the client) ---------------------------------------------------------------


class _BodyFields(TypedDict):
    stdJsonInput: CompilerInput
    compilerVersion: str
    contractIdentifier: str


class SubmissionBody(_BodyFields, total=False):
    """The JSON body of a submission."""

    creationTransactionHash: str


def _flat_input(request: VerificationRequest) -> tuple[CompilerInput, str]:
    """A single-file request as a standard-json input with one source. Its metadata names that
    file, not the deployment's files, so Sourcify can give it a `match` at best, never an
    `exact_match`: submit the standard-json input for that."""
    name = request.bare_name or "Contract"
    path = f"{name}.sol"
    settings: CompilerSettings = {}
    if request.optimization_used is not None or request.runs is not None:
        settings["optimizer"] = {
            "enabled": bool(request.optimization_used),
            "runs": 200 if request.runs is None else request.runs,
        }
    if request.evm_version and request.evm_version.lower() != "default":
        settings["evmVersion"] = request.evm_version
    if request.via_ir is not None:
        settings["viaIR"] = bool(request.via_ir)
    if request.libraries:
        settings["libraries"] = {path: dict(sorted(request.libraries.items()))}
    source: CompilerInput = {
        "language": "Solidity",
        "sources": {path: {"content": request.source_code}},
        "settings": settings,
    }
    return source, f"{path}:{name}"


def request_to_body(request: VerificationRequest, compiler_long_version: str | None = None) -> SubmissionBody:
    """The JSON body of `POST {base}v2/verify/{chainId}/{address}` for `request`.

    - `stdJsonInput` holds only `language`, `sources` and `settings`: solc refuses other top-level
      keys (forge's build info carries allowPaths/basePath/includePaths), and Sourcify answers
      those with `compiler_error`.
    - A single-file (flattened) request becomes an input with one source, `<Name>.sol`, and the
      request's optimizer, runs, evmVersion, viaIR and libraries. That gives at best a `match`
      (the metadata names other files than the deployment's), never an `exact_match`.
    - `compilerVersion` is the long form without `v`; for Vyper pass `compiler_long_version`.
    - `creationTransactionHash` is sent when the request knows it (Sourcify otherwise searches).

    Raises InvalidRequest naming the field for a request that cannot be sent."""
    if request.code_format == CodeFormat.SINGLE_FILE:
        if not (request.source_code or "").strip():
            raise InvalidRequest("sourceCode", "is empty", "send the flat source, or the JSON input")
        std_input, identifier = _flat_input(request)
    else:
        std_input, identifier = _json_input(request)
    body: SubmissionBody = {
        "stdJsonInput": std_input,
        "compilerVersion": sourcify_compiler_version(request, compiler_long_version),
        "contractIdentifier": identifier,
    }
    if request.creation_tx_hash:
        body["creationTransactionHash"] = validate_tx_hash(request.creation_tx_hash)
    return body


def _json_input(request: VerificationRequest) -> tuple[CompilerInput, str]:
    """A JSON-format request's input, only what the compiler takes, and its `path:Name`."""
    code_format = CodeFormat(request.code_format).value
    data = parse_json_input(request.source_code, code_format)
    language = "Vyper" if request.code_format == CodeFormat.VYPER_JSON else "Solidity"
    std_input: CompilerInput = {
        "language": language,
        "sources": data["sources"],
        "settings": (data.get("settings") or {}).copy(),
    }
    return std_input, _identifier(request.contract_name)


# -- body -> request (the local explorer's Sourcify face) ---------------------------------------


def validate_tx_hash(value: object, param: str = "creationTransactionHash") -> str:
    text = "" if value is None else str(value).strip()
    if not isinstance(value, str) or not TX_HASH.fullmatch(text):
        raise InvalidRequest(
            param, f"{clip(text)!r} is not a transaction hash", "give 0x followed by 64 hex digits, or leave it out"
        )
    return text


def validate_chain_id(value: object, param: str = "chainId") -> str:
    text = "" if value is None else str(value).strip()
    if not re.fullmatch(r"[0-9]{1,20}", text) or int(text) == 0:
        raise InvalidRequest(param, f"{clip(text)!r} is not a chain id", "give the chain's decimal id, e.g. 11155111")
    return str(int(text))


_Field = TypeVar("_Field", str, dict[str, JsonValue])
# The contract API's fields a body's are checked as.
_BODY_FIELDS = {"sourceCode": "stdJsonInput", "compilerversion": "compilerVersion", "codeformat": "compilerVersion"}


def _required(body: Mapping[str, JsonValue], name: str, kind: type[_Field], fix: str) -> _Field:
    if name not in body or body[name] is None:
        raise InvalidRequest(name, "is a required property and is missing", fix)
    value = body[name]
    if not isinstance(value, kind):
        raise InvalidRequest(
            name, f"must be a JSON {'object' if kind is dict else 'string'}, not {type(value).__name__}", fix
        )
    return value


def body_to_request(chain_id: object, address: object, body: JsonValue) -> VerificationRequest:
    """A submission's path parameters and JSON body as a VerificationRequest, by Sourcify's rules;
    raises InvalidRequest naming the field (the face answers 400 `invalid_parameter`).

    The request carries no constructor arguments: Sourcify reads them from the creation
    transaction. A contractIdentifier whose path is not among the sources is not refused here:
    Sourcify accepts it and the job ends `contract_not_found_in_compiler_output`."""
    validate_chain_id(chain_id)
    address = validate_address(address, "address")
    if not isinstance(body, Mapping):
        raise InvalidRequest(
            "body",
            f"is JSON {type(body).__name__}, not an object",
            "send a JSON object with stdJsonInput, compilerVersion and contractIdentifier",
        )
    std_input = _required(body, "stdJsonInput", dict, "send the compiler's standard JSON input as an object")
    version = _required(body, "compilerVersion", str, "give the long version, e.g. 0.8.26+commit.8a97fa7a")
    identifier = _required(
        body, "contractIdentifier", str, "give <path>:<Name> as in stdJsonInput, e.g. src/Box.sol:Box"
    )

    language = str(std_input.get("language", "")).lower()
    if language not in ("solidity", "vyper"):
        raise InvalidRequest(
            "stdJsonInput.language",
            f"{clip(std_input.get('language'))!r} is not Solidity or Vyper",
            'set "language" to "Solidity" or "Vyper"',
        )
    code_format = CodeFormat.VYPER_JSON if language == "vyper" else CodeFormat.STANDARD_JSON
    try:  # the contract API's rules, named as Sourcify names the fields
        parse_json_input(json.dumps(std_input), code_format.value)
        long = _long_version(version, "vyper" if language == "vyper" else "solidity")
        compiler_version = validate_compiler_version(long.form, code_format.value)  # Vyper's without its commit
    except InvalidRequest as err:
        raise InvalidRequest(_BODY_FIELDS.get(err.param, err.param), err.problem, err.fix) from None
    # Only what the compiler takes: other top-level keys make solc refuse the input (05-*).
    cleaned = {key: std_input[key] for key in ("language", "sources", "settings") if key in std_input}

    tx_hash = body.get("creationTransactionHash")
    return VerificationRequest(
        address=address,
        contract_name=_identifier(identifier),
        source_code=json.dumps(cleaned),
        code_format=code_format,
        compiler_version=compiler_version,
        creation_tx_hash=None if tx_hash in (None, "") else validate_tx_hash(tx_hash),
    )


def sourcify_version(stored: str) -> str:
    """The stored form's version as Sourcify spells it (`0.8.26+commit.8a97fa7a`, `0.4.3`); the
    form checked it before it was stored, so anything else is shown as kept."""
    try:
        return CompilerVersion.parse(stored).plain
    except InvalidCompilerVersion:
        return stored
