"""Sourcify's API v2 (submit, job, lookup) served by the explorer, on the same store and job queue.

At the server's root, beside the Etherscan face at /api.

Shapes and status codes are Sourcify 3.12.1's (tests/data/sourcify-answers):
submit 202 `{verificationId}`, 409 `already_verified`, 400 `invalid_parameter`/`unsupported_chain`;
a job answer is always 200; an unknown job 404 `job_not_found`; a lookup of an unverified
contract 404 with null matches. Errors carry `customCode`, `message` and `errorId`. An unexpected
failure answers 503 `internal_error`, never a 500 or a traceback.
"""

from __future__ import annotations

import json
import time
import uuid
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import NamedTuple

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from ape_contract_verify.evm.proxies import (
    EIP1822_PROXIABLE_SLOT,
    EIP1967_BEACON_SLOT,
    EIP1967_IMPLEMENTATION_SLOT,
    OZ_LEGACY_SLOT,
)
from ape_contract_verify.evm.reads import MemoizingChain
from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.explorer import contract_api
from ape_contract_verify.explorer.contract_api import ChainUnreadable, ExplorerService
from ape_contract_verify.explorer.jobs import ALREADY_VERIFIED, request_to_payload
from ape_contract_verify.explorer.store import DONE, SOURCIFY, VerifiedContract
from ape_contract_verify.json_types import JsonObject, JsonValue, as_object
from ape_contract_verify.logs import SERVER, get_logger
from ape_contract_verify.protocol import forms
from ape_contract_verify.protocol import sourcify as sfy
from ape_contract_verify.protocol.values import checksum, hex_to_bytes
from ape_contract_verify.server import params as p
from ape_contract_verify.server.params import BadRequest
from ape_contract_verify.server.shared_reads import SharedReads

logger = get_logger(SERVER)

DEFAULT_FIELDS = ("matchId", "creationMatch", "runtimeMatch", "verifiedAt", "match", "chainId", "address")
# Every field a lookup knows, in Sourcify's order; the ones with parts can be asked for part by part.
ALL_FIELDS = (
    "matchId",
    "creationMatch",
    "runtimeMatch",
    "verifiedAt",
    "creationBytecode",
    "runtimeBytecode",
    "deployment",
    "sources",
    "compilation",
    "abi",
    "metadata",
    "storageLayout",
    "transientStorageLayout",
    "userdoc",
    "devdoc",
    "sourceIds",
    "stdJsonInput",
    "stdJsonOutput",
    "signatures",
    "proxyResolution",
    "match",
    "chainId",
    "address",
)
_BYTECODE_PARTS = (
    "onchainBytecode",
    "recompiledBytecode",
    "sourceMap",
    "linkReferences",
    "cborAuxdata",
    "immutableReferences",
    "transformations",
    "transformationValues",
)
SUBFIELDS = {
    "creationBytecode": _BYTECODE_PARTS,
    "runtimeBytecode": _BYTECODE_PARTS,
    "deployment": ("transactionHash", "blockNumber", "transactionIndex", "deployer"),
    "compilation": ("language", "compiler", "compilerVersion", "compilerSettings", "name", "fullyQualifiedName"),
    "proxyResolution": ("isProxy", "proxyType", "implementations"),
}
MAX_LIST = 200
# The slots proxy detection reads at every address that is not an EIP-1167 clone (evm/proxies.py).
PROXY_SLOTS = (EIP1967_IMPLEMENTATION_SLOT, EIP1967_BEACON_SLOT, EIP1822_PROXIABLE_SLOT, OZ_LEGACY_SLOT)
# Rendered lookup answers per explorer, by what they depend on (`lookup`); the oldest goes first.
_ANSWERS: weakref.WeakKeyDictionary[ExplorerService, dict[tuple[object, ...], bytes]] = weakref.WeakKeyDictionary()
_ANSWERS_KEPT = 64
# Per explorer: its lookups' chain reads, shared by the lookups waiting for the same ones.
_LIVE: weakref.WeakKeyDictionary[ExplorerService, SharedReads[tuple[str, bool, bool], _Live]] = (
    weakref.WeakKeyDictionary()
)
ROUTES_TEXT = (
    "POST /v2/verify/{chainId}/{address}, GET /v2/verify/{verificationId}, "
    "GET /v2/contract/{chainId}/{address}, GET /v2/contracts/{chainId}, GET /chains, GET /health"
)


class _Live(NamedTuple):
    """What one read of the chain gave a wave of lookups, and its text: part of the rendered
    answer's key, written once per read (on the worker thread) instead of once per lookup."""

    values: JsonObject
    text: str


class _Refusal(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_response(status: int, code: str, message: str) -> Response:
    return JSONResponse(sfy.error_body(code, message), status_code=status)


def iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


Handler = Callable[[ExplorerService, Request], Awaitable[Response]]


def _guarded(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Every refusal in Sourcify's error shape; an unexpected failure is a 503, never a 500."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request.app.state.service, request)
        except _Refusal as err:
            return error_response(err.status, err.code, err.message)
        except ChainUnreadable as err:
            return error_response(503, sfy.INTERNAL_ERROR, str(err))
        except (InvalidRequest, BadRequest) as err:
            return error_response(400, sfy.INVALID_PARAMETER, str(err))
        except Exception as err:  # the point of this layer
            logger.warning("Sourcify request failed: %s: %s", type(err).__name__, err)
            return error_response(
                503,
                sfy.INTERNAL_ERROR,
                f"Internal error while handling the request ({type(err).__name__}: {err}). Nothing was recorded.",
            )

    return run


async def _served_chain(service: ExplorerService, chain_id: str) -> str:
    """The path's chainId, when it is the chain this explorer serves."""
    chain = sfy.validate_chain_id(chain_id)
    served = await _chain_id(service)
    if int(chain) != served:
        raise _Refusal(
            400,
            sfy.UNSUPPORTED_CHAIN,
            f"Chain {forms.clip(chain)} not found: this explorer serves chain {served}; "
            f"send requests for chain {served}",
        )
    return chain


async def _chain_id(service: ExplorerService) -> int:
    known = service.known_chain_id  # read once, then remembered by the service: no worker thread per request
    return known if known is not None else await run_in_threadpool(service.chain_id)


# -- submit -----------------------------------------------------------------------------------


async def submit(service: ExplorerService, request: Request) -> Response:
    chain_text, address = request.path_params["chain_id"], request.path_params["address"]
    sfy.validate_chain_id(chain_text)
    forms.validate_address(address, "address")
    raw = await p.read_body(request, service.max_body)
    try:
        body = json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (UnicodeDecodeError, ValueError) as err:
        raise InvalidRequest(
            "body",
            f"is not valid JSON ({err})",
            "send a JSON object with stdJsonInput, compilerVersion and contractIdentifier",
        ) from None
    if body is None:
        raise InvalidRequest(
            "body", "is empty", "send a JSON object with stdJsonInput, compilerVersion and contractIdentifier"
        )
    verification = await run_in_threadpool(sfy.body_to_request, chain_text, address, body)  # parses the input
    chain = await _served_chain(service, chain_text)
    if contract_api.verified_in_full(service, address, await run_in_threadpool(contract_api.code_at, service, address)):
        raise _Refusal(
            409,
            sfy.ALREADY_VERIFIED,
            f"Contract {checksum(address)} on chain {chain} is already verified "
            "with runtimeMatch and creationMatch both being exact matches.",
        )
    verification_id = service.store.add_submission(
        SOURCIFY, address, request_to_payload(verification), new_id=lambda: str(uuid.uuid4())
    )
    service.notify()
    return JSONResponse({"verificationId": verification_id}, status_code=202)


# -- job --------------------------------------------------------------------------------------


async def job(service: ExplorerService, request: Request) -> Response:
    verification_id = request.path_params["verification_id"]
    submission = service.store.get_submission(verification_id) if len(verification_id) <= 100 else None
    if submission is None or submission.kind != SOURCIFY:
        raise _Refusal(404, sfy.JOB_NOT_FOUND, f"No verification job found for id {forms.clip(verification_id)}")
    done = submission.state == DONE
    answer: JsonObject = {
        "isJobCompleted": done,
        "verificationId": submission.guid,
        "jobStartTime": iso(submission.created_at),
    }
    contract: JsonObject = {
        "match": None,
        "creationMatch": None,
        "runtimeMatch": None,
        "chainId": str(await _chain_id(service)),
        "address": checksum(submission.address),
    }
    error = None
    if done:
        answer["jobFinishTime"] = iso(submission.updated_at)
        if submission.status == "1" and (matched := job_match(submission.result)):
            answer["compilationTime"] = matched.pop("compilationTime")
            contract.update(matched)
            stored = service.store.get_contract(submission.address)
            if stored is not None:
                contract["verifiedAt"] = iso(stored.verified_at)
                contract["matchId"] = str(service.store.match_id(submission.address))
        else:
            error = job_error(submission.address, submission.result)
    answer["contract"] = contract
    if error is not None:
        answer["error"] = error
    return JSONResponse(answer)


# The engine's failure kinds (FailureKind values), and the job's own, as Sourcify's customCodes.
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
    ALREADY_VERIFIED: sfy.ALREADY_VERIFIED,
}  # any other (an ERC-5202 blueprint's, as Sourcify answers it today) is no_match
SOURCIFY_MISMATCH = "The deployed and recompiled bytecode don't match."  # Sourcify's no_match text
NO_ANSWER = "The job ended without an answer."
# Engine match levels as Sourcify's.
LEVELS = {"full": sfy.EXACT_MATCH, "partial": sfy.MATCH}


def hex_or_none(text: JsonValue) -> str | None:
    """Code as Sourcify shows it: 0x-prefixed hex, or null when there is none."""
    return "0x" + str(text).removeprefix("0x") if text else None


def _recorded(result_text: str | None) -> JsonObject:
    """A finished job's record (`explorer/jobs.py`'s JSON); {} for a plain text (a job ended by
    the queue itself, e.g. interrupted too often)."""
    try:
        return as_object(json.loads(result_text or ""))
    except ValueError:
        return {}


def job_match(result_text: str | None) -> dict[str, str]:
    """A verified job's match levels and compile time, as Sourcify's job answer has them; {} for none."""
    recorded = _recorded(result_text)
    if not recorded.get("match"):
        return {}
    level = LEVELS.get(str(recorded["match"]), sfy.MATCH)
    milliseconds = str(recorded.get("milliseconds", 0))
    return {"creationMatch": level, "runtimeMatch": level, "match": level, "compilationTime": milliseconds}


def job_error(address: str, result_text: str | None) -> JsonObject:
    """A failed job's error in Sourcify's shape, with the bytecodes its no_match carries; a
    plain text reads as an internal error with that text."""
    recorded = _recorded(result_text)
    if not recorded:
        return sfy.error_body(sfy.INTERNAL_ERROR, result_text or NO_ANSWER)
    kind = str(recorded.get("failure") or "")
    code = _CODES.get(kind, sfy.NO_MATCH)
    if code == sfy.ALREADY_VERIFIED:
        as_good = "with a match at least as good as this submission's"
        return sfy.error_body(code, f"Contract {checksum(address)} is already verified {as_good}.")
    reason = str(recorded.get("reason") or SOURCIFY_MISMATCH)
    runtime, onchain_runtime = recorded.get("recompiled_runtime"), recorded.get("onchain_runtime")
    extra: JsonObject = {}
    if kind == "bytecode" and runtime and onchain_runtime and len(str(runtime)) != len(str(onchain_runtime)):
        code = sfy.BYTECODE_LENGTH_MISMATCH
    if code in (sfy.NO_MATCH, sfy.BYTECODE_LENGTH_MISMATCH, sfy.CREATION_BYTECODE_MATCH_ERROR):
        extra["recompiledCreationCode"] = hex_or_none(recorded.get("recompiled_creation"))
        extra["recompiledRuntimeCode"] = hex_or_none(runtime)
        if code != sfy.BYTECODE_LENGTH_MISMATCH:  # as Sourcify: a length mismatch stops before the creation code
            extra["onchainCreationCode"] = hex_or_none(recorded.get("onchain_creation"))
    if code != sfy.CONTRACT_NOT_DEPLOYED:
        extra["onchainRuntimeCode"] = hex_or_none(onchain_runtime)
        extra["creationTransactionHash"] = recorded.get("creation_tx")
    if code == sfy.COMPILER_ERROR:
        error: JsonObject = dict(
            component="general", formattedMessage=reason, message=reason, severity="error", type="CompilerError"
        )
        extra["errorData"] = {"compilerErrors": [error]}
    return sfy.error_body(code, reason, **{key: value for key, value in extra.items() if value})


# -- lookups ----------------------------------------------------------------------------------


def _summary(service: ExplorerService, contract: VerifiedContract, chain: str) -> dict[str, str]:
    level = LEVELS.get(contract.match, sfy.MATCH)
    return {
        "matchId": str(service.store.match_id(contract.address)),
        "creationMatch": level,
        "runtimeMatch": level,
        "verifiedAt": iso(contract.verified_at),
        "match": level,
        "chainId": chain,
        "address": checksum(contract.address),
    }


def requested_fields(query: Mapping[str, str]) -> list[str] | None:
    """The `fields` (or every field but `omit`) a lookup asks for; None for the default ones."""
    fields, omit = query.get("fields"), query.get("omit")
    if fields is not None and omit is not None:
        raise InvalidRequest("fields", "and omit are both given", "use one of them")
    if fields is None and omit is None:
        return None
    given = fields if fields is not None else (omit or "")
    names = [name.strip() for name in given.split(",") if name.strip()]
    if fields is not None and names == ["all"]:
        return list(ALL_FIELDS)
    for name in names:
        top, _, part = name.partition(".")
        if top not in ALL_FIELDS or (part and part not in SUBFIELDS.get(top, ())):
            known = ", ".join(SUBFIELDS[top]) if part and top in SUBFIELDS else "all, " + ", ".join(ALL_FIELDS)
            raise InvalidRequest(
                "fields" if fields is not None else "omit",
                f"names an unknown field {forms.clip(name)!r}",
                f"use one of: {known}",
            )
    if omit is not None:
        return [name for name in ALL_FIELDS if name not in names]
    return names


async def lookup(service: ExplorerService, request: Request) -> Response:
    chain_text, address = request.path_params["chain_id"], request.path_params["address"]
    sfy.validate_chain_id(chain_text)
    forms.validate_address(address, "address")
    wanted = requested_fields(request.query_params)
    chain = await _served_chain(service, chain_text)
    contract = service.store.get_contract(address)
    if contract is None:
        return JSONResponse(
            {"match": None, "creationMatch": None, "runtimeMatch": None, "chainId": chain, "address": address},
            status_code=404,
        )
    summary = _summary(service, contract, chain)
    if wanted is None:
        return JSONResponse(summary)
    tops = {w.partition(".")[0] for w in wanted}
    # What a lookup takes from the store (sources, compilation, the creation transaction, its
    # block and deployer, the creation code) cannot change while the stored verification stands:
    # it is never read from the chain. What can change under it is read for every wave of lookups
    # (`SharedReads`: none older than its request): the code at the address (a chain reset, a
    # selfdestruct, anvil_setCode) and the proxy slots (an upgrade). Sourcify serves its database's
    # copy of the code and reads the slots live; a local chain is reset often, so we read both.
    live = await _live_reads(service).get((contract.address, "runtimeBytecode" in tops, "proxyResolution" in tops))
    # The answer changes only with the stored verification, the fields asked for and what the chain
    # says now: one rendering serves every lookup of those (getsourcecode's speed, issue 31).
    key = (
        contract.address,
        contract.updated_at,  # every save sets it (verified_at stays the first)
        contract.match,
        contract.code_hash,
        tuple(wanted),
        live.text,
        tuple(summary.items()),
    )
    answers = _ANSWERS.setdefault(service, {})
    body = answers.get(key)
    if body is None:
        body = await run_in_threadpool(_render_lookup, contract, tops, live.values, summary, wanted)
        if len(answers) >= _ANSWERS_KEPT:
            answers.pop(next(iter(answers)))  # the oldest rendering
        answers[key] = body
    return Response(body, media_type="application/json")


def _render_lookup(
    contract: VerifiedContract, tops: set[str], live: JsonObject, summary: dict[str, str], wanted: list[str]
) -> bytes:
    full = {**_details(contract, tops, live), **summary}
    answer: JsonObject = {}
    for name in wanted:
        top, _, part = name.partition(".")
        if part:
            section = answer.setdefault(top, {})
            if isinstance(section, dict):  # always: a part's section is made here
                section[part] = as_object(full.get(top)).get(part)
        else:
            answer[top] = full.get(top)
    for name in DEFAULT_FIELDS:  # always there, as Sourcify's
        answer.setdefault(name, summary[name])
    return bytes(JSONResponse(answer).body)  # bytes already: Response.body is typed bytes | memoryview


def _live_reads(service: ExplorerService) -> SharedReads[tuple[str, bool, bool], _Live]:
    reads = _LIVE.get(service)
    if reads is None:
        owner = weakref.ref(service)  # the entry must not keep its own key alive

        def read(key: tuple[str, bool, bool]) -> _Live:
            explorer = owner()
            if explorer is None:
                raise RuntimeError("the explorer has stopped")
            live = _read_chain(explorer, *key)
            return _Live(live, json.dumps(live))

        reads = _LIVE[service] = SharedReads(read)
    return reads


def _read_chain(service: ExplorerService, address: str, runtime: bool, proxy: bool) -> JsonObject:
    """What a lookup reads live from the chain: the runtime code and the proxy resolution, the code
    read once for both (proxy detection starts with it)."""
    memo = MemoizingChain(service.chain)
    chain: MemoizingChain | _ReadAhead = memo
    if proxy:  # proxy detection's first reads in one round trip, where the reader can
        # getattr: only JsonRpcChain reads code and slots in one batch; other readers, one by one
        batch = getattr(service.chain, "code_and_slots", None)
        try:
            chain = _ReadAhead(memo, address, *batch(address, PROXY_SLOTS)) if callable(batch) else memo
        except Exception:  # the reads one by one say what failed, where the answer has room for it
            pass
    live: JsonObject = {}
    if runtime:
        live["runtime"] = "0x" + hex_to_bytes(chain.get_code(address)).hex()
    if proxy:
        live["proxy"] = _proxy(service, chain, address)
    return live


class _ReadAhead:
    """A reader with the code and some slots of one address already read."""

    def __init__(self, base: MemoizingChain, address: str, code: bytes, words: list[bytes]):
        self._base, self._address = base, address.lower()
        self._code, self._words = code, dict(zip(PROXY_SLOTS, words))

    def get_code(self, address: str) -> bytes:
        return self._code if address.lower() == self._address else self._base.get_code(address)

    def get_storage_at(self, address: str, slot: int) -> bytes:
        if address.lower() == self._address and slot in self._words:
            return self._words[slot]
        return self._base.get_storage_at(address, slot)

    def call(self, to: str, data: bytes) -> bytes:
        return self._base.call(to, data)


def _details(contract: VerifiedContract, tops: set[str], live: JsonObject) -> JsonObject:
    """The fields beyond the summary, from the store (and `live`, the chain's runtime code and proxy
    resolution). Fields this explorer does not keep are null (storage layouts, compiler output)."""
    kept = contract.details or {}
    std_input = _std_input(contract)
    settings: JsonObject = {k: v for k, v in as_object(std_input.get("settings")).items() if k != "outputSelection"}
    args = contract.constructor_arguments or ""
    metadata = _json(kept.get("metadata"))
    out: JsonObject = {name: None for name in ALL_FIELDS}
    out["creationBytecode"] = {
        **{part: None for part in _BYTECODE_PARTS if part != "immutableReferences"},
        "onchainBytecode": hex_or_none(kept.get("onchain_creation")),
        "recompiledBytecode": hex_or_none(kept.get("recompiled_creation")),
        "transformationValues": {"constructorArguments": "0x" + args} if args else {},
    }
    if "runtimeBytecode" in tops:
        out["runtimeBytecode"] = {
            **{part: None for part in _BYTECODE_PARTS},
            "onchainBytecode": live["runtime"],
            "recompiledBytecode": hex_or_none(kept.get("recompiled_runtime")),
        }
    block = kept.get("creation_block")
    out["deployment"] = {
        "transactionHash": kept.get("creation_tx"),
        "blockNumber": None if block is None else str(block),
        "transactionIndex": None,
        "deployer": checksum(str(kept["deployer"])) if kept.get("deployer") else None,
    }
    sources: JsonObject = {
        path: {"content": as_object(source).get("content", "")}
        for path, source in as_object(std_input.get("sources")).items()
    }
    out["sources"] = sources
    language = std_input.get("language", "Solidity")
    path, _, name = contract.contract_name.rpartition(":")
    if not path:
        path = next(iter(sources), f"{name}.sol")
    out["compilation"] = {
        "language": language,
        "compiler": "vyper" if language == "Vyper" else "solc",
        "compilerVersion": sfy.sourcify_version(contract.compiler_version),
        "compilerSettings": settings,
        "name": name,
        "fullyQualifiedName": f"{path}:{name}",
    }
    out["abi"] = _json(contract.abi) or []
    out["metadata"] = metadata
    output = as_object(as_object(metadata).get("output"))
    out["userdoc"], out["devdoc"] = output.get("userdoc"), output.get("devdoc")
    out["stdJsonInput"] = {"language": language, "sources": out["sources"], "settings": settings}
    if "proxyResolution" in tops:
        out["proxyResolution"] = live["proxy"]
    return out


def _std_input(contract: VerifiedContract) -> JsonObject:
    data = contract.json_input()
    if "sources" in data:
        return data
    name = contract.contract_name.rsplit(":", 1)[-1]
    return {
        "language": "Solidity",
        "sources": {f"{name}.sol": {"content": contract.source_code}},
        "settings": dict(contract.settings or {}),
    }


def _proxy(service: ExplorerService, chain: MemoizingChain | _ReadAhead, address: str) -> JsonObject:
    from ape_contract_verify.evm.proxies import detect_proxy

    try:
        info = detect_proxy(chain, address)
    except Exception as err:
        return {
            "isProxy": None,
            "proxyType": None,
            "implementations": [],
            "proxyResolutionError": {
                "customCode": sfy.PROXY_RESOLUTION_ERROR,
                "message": f"{type(err).__name__}: {err}",
            },
        }
    if info is None or not info.implementation or int(str(info.implementation), 16) == 0:
        return {"isProxy": False, "proxyType": None, "implementations": []}
    implementation = service.store.get_contract(info.implementation)
    entry: JsonObject = {"address": checksum(info.implementation)}
    if implementation is not None:
        entry["name"] = implementation.contract_name.rsplit(":", 1)[-1]
    return {"isProxy": True, "proxyType": info.kind, "implementations": [entry]}


def _json(text: JsonValue) -> JsonValue:
    if not isinstance(text, str) or not text:
        return text if isinstance(text, (dict, list)) else None
    try:
        value: JsonValue = json.loads(text)
    except ValueError:
        return None
    return value


async def contracts(service: ExplorerService, request: Request) -> Response:
    chain = await _served_chain(service, request.path_params["chain_id"])
    limit_text = request.query_params.get("limit", str(MAX_LIST))
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_LIST:
        raise InvalidRequest(
            "limit", f"{forms.clip(limit_text)!r} is not a number from 1 to {MAX_LIST}", f"give 1 to {MAX_LIST}"
        )
    _, found = service.store.search_contracts(limit=int(limit_text))
    return JSONResponse({"results": [_summary(service, contract, chain) for contract in found]})


async def chains(service: ExplorerService, request: Request) -> Response:
    served = await _chain_id(service)
    # getattr: a JsonRpcChain names its node (key-free); an in-process chain has no URL to give
    rpc = getattr(service.chain, "safe_url", None)
    return JSONResponse(
        [
            {
                "name": f"Local chain {served}",
                "chainId": served,
                "rpc": [rpc] if isinstance(rpc, str) else [],
                "supported": True,
                "etherscanAPI": False,
            }
        ]
    )


async def health(service: ExplorerService, request: Request) -> Response:
    return PlainTextResponse("Alive and kicking!")


def is_sourcify_path(path: str) -> bool:
    return path.startswith(("/v2/verify", "/v2/contract", "/chains", "/health"))


def not_found(request: Request, status: int) -> Response:
    if status == 405:
        return error_response(
            405,
            "method_not_allowed",
            f"{request.method} is not supported on {request.url.path}; the Sourcify API's routes are: {ROUTES_TEXT}",
        )
    return error_response(
        404, "route_not_found", f"Not found: {request.url.path}. The Sourcify API's routes are: {ROUTES_TEXT}"
    )


def routes() -> list[BaseRoute]:
    return [
        Route("/v2/verify/{chain_id}/{address}", _guarded(submit), methods=["POST"]),
        Route("/v2/verify/{verification_id}", _guarded(job), methods=["GET"]),
        Route("/v2/contract/{chain_id}/{address}", _guarded(lookup), methods=["GET"]),
        Route("/v2/contracts/{chain_id}", _guarded(contracts), methods=["GET"]),
        Route("/chains", _guarded(chains), methods=["GET"]),
        Route("/health", _guarded(health), methods=["GET"]),
    ]
