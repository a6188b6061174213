"""Etherscan's contract API at `<base>/api`, and the Starlette app that serves every face of the explorer.

The Sourcify face's routes (`sourcify_face.py`) and the pages' (`pages.py`) are mounted beside it.

Everything answers HTTP 200 with Etherscan's envelope and texts (`answers.Texts`), errors
included. Bad input gets status "0" and a text that names the parameter and the fix; an
unexpected exception is caught by `CatchAll` and answered the same way, never as a 500.
No engine module is imported here: the embedded explorer starts inside `ape run`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.json_types import JsonReadable
from ape_contract_verify.logs import SERVER, get_logger
from ape_contract_verify.protocol import forms
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.protocol.values import checksum, hex_to_bytes
from ape_contract_verify.server import params as p
from ape_contract_verify.server.jobs import code_hash, request_to_payload
from ape_contract_verify.server.params import MAX_BODY_BYTES, BadRequest
from ape_contract_verify.server.service import ExplorerService
from ape_contract_verify.server.sources import source_result
from ape_contract_verify.server.store import PROXY, SOURCE

if TYPE_CHECKING:
    from ape_contract_verify.evm.reads import Creation

logger = get_logger(SERVER)

__all__ = ["MAX_BODY_BYTES", "ExplorerService", "create_app", "envelope", "envelope_response"]

_JSON_HEADERS = [(b"content-type", b"application/json")]
_NOSNIFF = (b"x-content-type-options", b"nosniff")
_SUBMISSIONS = ("verifysourcecode", "verifyproxycontract")


def envelope(status: str, result: JsonReadable, message: str | None = None) -> bytes:
    body = {"status": status, "message": message or ("OK" if status == "1" else "NOTOK"), "result": result}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def envelope_response(status: str, result: JsonReadable, message: str | None = None) -> Response:
    return Response(envelope(status, result, message), media_type="application/json")


class CatchAll:
    """Outermost own layer: any exception becomes status "0" with its type and text, HTTP 200.
    It also marks every answer (API, pages, static files, errors) nosniff."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers") or ())
                if not any(name.lower() == _NOSNIFF[0] for name, _ in headers):
                    message = {**message, "headers": headers + [_NOSNIFF]}
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as err:  # the point of this layer
            logger.warning("Explorer request failed: %s: %s", type(err).__name__, err)
            if started:
                return
            text = f"Internal error while handling the request ({type(err).__name__}: {err}). Nothing was recorded."
            try:
                await send({"type": "http.response.start", "status": 200, "headers": [*_JSON_HEADERS, _NOSNIFF]})
                await send({"type": "http.response.body", "body": envelope("0", text)})
            except Exception:  # the client is gone (e.g. it disconnected mid-body): nobody to answer
                pass


# -- actions ---------------------------------------------------------------------------------


async def _code_at(service: ExplorerService, address: str) -> bytes:
    try:
        return hex_to_bytes(await run_in_threadpool(service.chain.get_code, address))
    except Exception as err:
        raise BadRequest(f"The explorer could not read the chain: {type(err).__name__}: {err}")


def _require_key(service: ExplorerService, params: dict[str, str]) -> None:
    if not service.key_ok(params.get("apikey", "")):
        raise BadRequest(Texts.INVALID_API_KEY)


async def getabi(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    address = p.read_address(params)
    abi = service.store.get_abi(address)
    if abi is None:
        return envelope_response("0", Texts.NOT_VERIFIED)
    return envelope_response("1", abi)


async def getsourcecode(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    address = p.read_address(params)
    return envelope_response("1", [source_result(service.store, address)])


def _post_only(action: str, method: str) -> None:
    if method != "POST":
        raise BadRequest(f"{action} must be sent as a POST with form fields; GET is not supported for submissions.")


async def verifysourcecode(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    _post_only("verifysourcecode", method)
    _require_key(service, params)
    request = await run_in_threadpool(p.verification_request, params)  # parses sourceCode: off the loop
    existing = service.store.get_contract(request.address)
    code = await _code_at(service, request.address)
    if not code:
        raise BadRequest(Texts.UNABLE_TO_LOCATE.format(address=request.address))
    if existing is not None and existing.match == "full":
        if not existing.code_hash or existing.code_hash == code_hash(code):
            raise BadRequest(Texts.SOURCE_ALREADY_VERIFIED)
    guid = service.store.add_submission(SOURCE, request.address, request_to_payload(request))
    service.notify()
    return envelope_response("1", guid)


def _status(service: ExplorerService, params: dict[str, str], kind: str) -> Response:
    """checkverifystatus and checkproxyverification: one lookup, each with its own texts."""
    submission = service.store.get_submission(p.guid_param(params))
    if submission is None:
        return envelope_response("0", Texts.UNKNOWN_UID)
    if submission.kind != kind:
        other = (
            "a proxy submission; use checkproxyverification"
            if kind == SOURCE
            else "a source code submission; use checkverifystatus"
        )
        return envelope_response("0", f"{Texts.UNKNOWN_UID} (this guid is {other})")
    if submission.state != "done":
        return envelope_response("0", Texts.PENDING if kind == SOURCE else Texts.PROXY_IN_PROGRESS)
    return envelope_response(submission.status or "0", submission.result or "")


async def checkverifystatus(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    return _status(service, params, SOURCE)


async def verifyproxycontract(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    _post_only("verifyproxycontract", method)
    _require_key(service, params)
    address, expected = p.proxy_params(params)
    code = await _code_at(service, address)
    if not code:
        raise BadRequest(Texts.UNABLE_TO_LOCATE.format(address=address))
    if not service.store.take_proxy_quota(params.get("apikey") or None, limit=service.proxy_daily_limit):
        raise BadRequest(
            f"Max daily proxy verification submissions reached ({service.proxy_daily_limit} a day per API key); "
            "try again after 00:00 UTC."
        )
    guid = service.store.add_submission(PROXY, address, {"expected_implementation": expected})
    service.notify()
    return envelope_response("1", guid)


async def checkproxyverification(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    return _status(service, params, PROXY)


async def getcontractcreation(service: ExplorerService, params: dict[str, str], method: str) -> Response:
    found = []
    for address in p.creation_addresses(params):
        try:
            creation = await run_in_threadpool(service.chain.find_creation, address)
        except Exception as err:
            raise BadRequest(f"The explorer could not find the creation of {address}: {type(err).__name__}: {err}")
        if creation is None:
            continue
        factory = bool(_creation_field(creation, "factory"))
        found.append(
            {
                "contractAddress": checksum(address),
                "contractCreator": _creation_field(creation, "deployer", "sender", "from"),
                "txHash": _creation_field(creation, "tx_hash", "transaction_hash", "txHash", "hash"),
                "blockNumber": _creation_field(creation, "block", "block_number"),
                "contractFactory": _creation_field(creation, "creator") if factory else "",
                # Etherscan API V2 gives the creation input (init code + constructor arguments):
                # what a verifier without traces needs for a factory's child.
                "creationBytecode": _creation_field(creation, "input"),
            }
        )
    if not found:
        return envelope_response("0", "No data found")
    return envelope_response("1", found)


def _creation_field(creation: Creation | Mapping[str, object], *names: str) -> str:
    """The first of `names` the creation has, as getcontractcreation's text (a mapping: a reader's older form)."""
    fields = creation if isinstance(creation, Mapping) else asdict(creation)
    for name in names:
        value = fields.get(name)
        if value is True:
            return "1"
        if value:
            return "0x" + bytes(value).hex() if isinstance(value, (bytes, bytearray)) else str(value)
    return ""


HANDLERS = {
    "getabi": getabi,
    "getsourcecode": getsourcecode,
    "verifysourcecode": verifysourcecode,
    "checkverifystatus": checkverifystatus,
    "verifyproxycontract": verifyproxycontract,
    "checkproxyverification": checkproxyverification,
    "getcontractcreation": getcontractcreation,
}


def create_app(service: ExplorerService) -> Starlette:
    async def api(request: Request) -> Response:
        try:
            _refuse_a_wrong_query_key(service, request)
            params = await p.read_params(request, service.max_body)
            forms.validate_module(params.get("module"))
            handler = HANDLERS[forms.validate_action(params.get("action"))]
            chain_id = (params.get("chainid") or "").strip()
            if chain_id and chain_id != str(await _chain_id(service)):
                served = await _chain_id(service)
                raise InvalidRequest(
                    "chainid",
                    f"this explorer serves chainid {served}, got {forms.clip(chain_id)!r}",
                    f"send chainid={served}, or leave it out",
                )
            return await handler(service, params, request.method)
        except InvalidRequest as err:  # a parameter's value: the protocol's own words, then param and fix
            return envelope_response("0", forms.refusal_text(err))
        except BadRequest as err:
            return envelope_response("0", str(err))

    async def not_found(request: Request, exc: Exception) -> Response:
        code = exc.status_code if isinstance(exc, HTTPException) else 404
        if sourcify_face.is_sourcify_path(request.url.path):
            return sourcify_face.not_found(request, code)
        if code == 405:
            text = f"Method {request.method} is not supported; use GET or POST on /api."
        else:
            text = f"Not found: {request.url.path}. The API is at /api (module=contract&action=…)."
        return Response(envelope("0", text), status_code=code, media_type="application/json")

    from ape_contract_verify.server import pages, sourcify_face

    routes = [
        Route("/api", api, methods=["GET", "POST"]),
        Route("/v2/api", api, methods=["GET", "POST"]),
        *sourcify_face.routes(),  # Sourcify API v2 at the root: /v2/verify, /v2/contract, …
        *pages.routes(),
    ]
    app = Starlette(
        routes=routes, middleware=[Middleware(CatchAll)], exception_handlers={404: not_found, 405: not_found}
    )
    app.state.service = service
    return app


def _refuse_a_wrong_query_key(service: ExplorerService, request: Request) -> None:
    """A submission whose query string carries a wrong key is refused before its body is read."""
    if request.method != "POST" or not service.requires_key or "apikey" not in request.query_params:
        return
    if request.query_params.get("action", _SUBMISSIONS[0]) in _SUBMISSIONS:  # no action: the body's, likely one
        _require_key(service, dict(request.query_params))


async def _chain_id(service: ExplorerService) -> int:
    if service.known_chain_id is None:
        try:
            await run_in_threadpool(service.chain_id)
        except Exception as err:
            raise BadRequest(f"The explorer could not read the chain id: {type(err).__name__}: {err}")
    return service.chain_id()
