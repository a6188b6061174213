"""Etherscan's contract API at `<base>/api`, and the Starlette app that serves every face of the explorer.

The Sourcify face's routes (`sourcify_face.py`) and the pages' (`pages.py`) are mounted beside it.

Everything answers HTTP 200 with Etherscan's envelope and texts, errors included: the actions'
answers are `explorer/contract_api.py`'s; an unexpected exception is caught by `CatchAll` and
answered the same way, never as a 500.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ape_contract_verify.explorer import contract_api
from ape_contract_verify.explorer.contract_api import (
    MAX_BODY_BYTES,
    BadRequest,
    ExplorerService,
    envelope,
)
from ape_contract_verify.json_types import JsonReadable
from ape_contract_verify.logs import SERVER, get_logger
from ape_contract_verify.server import params as p

logger = get_logger(SERVER)

__all__ = ["MAX_BODY_BYTES", "ExplorerService", "create_app", "envelope", "envelope_response"]

SUBMISSIONS = ("verifysourcecode", "verifyproxycontract")
# Actions that read only the store: answered on the event loop.
STORE_ONLY = frozenset({"getabi", "getsourcecode", "checkverifystatus", "checkproxyverification"})
_JSON_HEADERS = [(b"content-type", b"application/json")]
_NOSNIFF = (b"x-content-type-options", b"nosniff")


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


def create_app(service: ExplorerService) -> Starlette:
    async def api(request: Request) -> Response:
        try:
            _refuse_a_wrong_query_key(service, request)
            params = await p.read_params(request, service.max_body)
        except BadRequest as err:
            return envelope_response("0", str(err))
        inline = params.get("action") in STORE_ONLY and (not params.get("chainid") or service.known_chain_id)
        if inline:  # the store only: no worker thread
            return envelope_response(*contract_api.answer(service, params, request.method))
        # A chain read or a form's parse: off the event loop, never holding up another client's request.
        return envelope_response(*await run_in_threadpool(contract_api.answer, service, params, request.method))

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
    if request.query_params.get("action", SUBMISSIONS[0]) in SUBMISSIONS:  # no action: the body's, likely one
        service.require_key(request.query_params)
